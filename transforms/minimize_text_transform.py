"""MinimizeText, the stage: `minimize_text.minimize_document` applied to every document, in Beam."""

from __future__ import annotations

import functools

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from transforms.document import Document
from transforms.minimize_text import DEFAULT_SCRIPTS, is_mostly_dropped, minimize_document, parse_scripts
from transforms.stage import DocumentStage
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, MINIMIZE_TEXT, MOSTLY_DROPPED, MostlyDropped


class MinimizeDocuments(DocumentStage):
    """`DocumentStage` of `minimize_document` that also outputs, per bundle, the `MostlyDropped` count."""

    def start_bundle(self):
        self._mostly_dropped = 0

    def process(self, doc: Document):
        for output in super().process(doc):
            if isinstance(output, Document) and is_mostly_dropped(output):
                self._mostly_dropped += 1
            yield output

    def finish_bundle(self):
        if self._mostly_dropped:
            yield beam.pvalue.TaggedOutput(
                MOSTLY_DROPPED, GlobalWindows.windowed_value(MostlyDropped(self._mostly_dropped)))


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
