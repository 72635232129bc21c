"""MinimizeText, the stage: `minimize_text.minimize_document` applied to every document, in Beam."""

from __future__ import annotations

import functools

import apache_beam as beam

from transforms.document import Document
from transforms.stages.minimize_text import DEFAULT_SCRIPTS, is_mostly_dropped, minimize_document, parse_scripts
from transforms.stage import CountsPerUnit, DocumentStage
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, MINIMIZE_TEXT, MOSTLY_DROPPED, MostlyDropped


def mostly_dropped(counts, *unit_part) -> MostlyDropped:
    return MostlyDropped(counts[MOSTLY_DROPPED], *unit_part)


class MinimizeDocuments(DocumentStage):
    """`DocumentStage` of `minimize_document` that also outputs, per unit of reading and bundle, the
    `MostlyDropped` count (`CountsPerUnit`)."""

    def start_bundle(self):
        self._counts = CountsPerUnit(MOSTLY_DROPPED, mostly_dropped)

    def process(self, doc: Document):
        dropped = 0
        for output in super().process(doc):
            if isinstance(output, Document) and is_mostly_dropped(output):
                dropped = 1
            yield output
        yield from self._counts.add(doc, {MOSTLY_DROPPED: dropped})

    def finish_bundle(self):
        yield from self._counts.finish()


class MinimizeText(beam.PTransform):
    """Applies `minimize_document` to every document; failures go to `dead_letter`, and `mostly_dropped` gets
    `MostlyDropped` counts.

    `scripts`: the scripts whose letters are kept (see `parse_scripts`; default Latin and Cyrillic).
    `clean_text`: also keep the text before minimizing, in `clean_text`.
    """

    OUTPUTS = (DEAD_LETTER, MOSTLY_DROPPED)

    def __init__(self, scripts=None, clean_text: bool = False):
        super().__init__()
        self._scripts = parse_scripts(scripts) if scripts is not None else DEFAULT_SCRIPTS
        self._clean_text = clean_text

    def expand(self, docs):
        scripts = None if self._scripts == DEFAULT_SCRIPTS else self._scripts
        minimize = functools.partial(minimize_document, scripts=scripts, clean_text=self._clean_text)
        return docs | beam.ParDo(MinimizeDocuments(MINIMIZE_TEXT, minimize)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
