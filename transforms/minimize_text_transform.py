"""MinimizeText, the stage: `minimize_text.minimize_document` applied to every document, in Beam."""

from __future__ import annotations

import functools

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from transforms.document import Document
from transforms.minimize_text import DEFAULT_SCRIPTS, is_mostly_dropped, minimize_document, parse_scripts
from transforms.stage import CountsPerUnit, DocumentStage
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, MINIMIZE_TEXT, MOSTLY_DROPPED, MostlyDropped


def mostly_dropped(part: tuple) -> MostlyDropped:
    (source_file, source_range), first_offset, seen, counts = part
    return MostlyDropped(counts[MOSTLY_DROPPED], source_file, source_range, first_offset, seen)


class MinimizeDocuments(DocumentStage):
    """`DocumentStage` of `minimize_document` that also outputs, per unit of reading and bundle, the
    `MostlyDropped` count (`CountsPerUnit`)."""

    def start_bundle(self):
        self._counts = CountsPerUnit()

    def process(self, doc: Document):
        dropped = 0
        for output in super().process(doc):
            if isinstance(output, Document) and is_mostly_dropped(output):
                dropped = 1
            yield output
        ended = self._counts.add(doc, {MOSTLY_DROPPED: dropped})
        if ended:
            yield beam.pvalue.TaggedOutput(MOSTLY_DROPPED, mostly_dropped(ended))

    def finish_bundle(self):
        ended = self._counts.flush()
        if ended:
            yield beam.pvalue.TaggedOutput(MOSTLY_DROPPED, GlobalWindows.windowed_value(mostly_dropped(ended)))


class MinimizeText(beam.PTransform):
    """Applies `minimize_document` to every document; failures go to `dead_letter`, and `mostly_dropped` gets
    `MostlyDropped` counts.

    `scripts`: the scripts whose letters are kept (see `parse_scripts`; default Latin and Cyrillic).
    `clean_text`: also keep the text before minimizing, in `clean_text`.
    """

    def __init__(self, scripts=None, clean_text: bool = False):
        super().__init__()
        self._scripts = parse_scripts(scripts) if scripts is not None else DEFAULT_SCRIPTS
        self._clean_text = clean_text

    def expand(self, docs):
        scripts = None if self._scripts == DEFAULT_SCRIPTS else self._scripts
        minimize = functools.partial(minimize_document, scripts=scripts, clean_text=self._clean_text)
        return docs | beam.ParDo(MinimizeDocuments(MINIMIZE_TEXT, minimize)).with_outputs(
            DEAD_LETTER, MOSTLY_DROPPED, main=DOCUMENTS)
