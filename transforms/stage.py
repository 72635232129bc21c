"""What every per-document stage shares: dead-letter routing and counters.

A stage is a pure function `Document -> Document`. `DocumentStage` applies it
in Beam; an exception sends the record to the `dead_letter` output with the
stage's name and the reason, and the run goes on.
"""

from __future__ import annotations

from typing import Callable

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.document import DeadLetter, Document
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS

COUNTER_NAMESPACE = "webcorpus"


def counter(stage: str, name: str):
    return Metrics.counter(f"{COUNTER_NAMESPACE}.{stage}", name)


class DocumentStage(beam.DoFn):
    def __init__(self, stage: str, function: Callable[[Document], Document]):
        self._stage = stage
        self._function = function

    def setup(self):
        self._passed = counter(self._stage, "passed")
        self._failed = counter(self._stage, "dead_letter")

    def process(self, doc: Document):
        try:
            result = self._function(doc)
        except Exception as error:  # noqa: BLE001 - every failure is routed, none is fatal
            self._failed.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(self._stage, doc, error))
            return
        self._passed.inc()
        yield result


def apply_stage(docs, stage: str, function: Callable[[Document], Document]):
    """Returns the outputs `documents` and `dead_letter` of `function` applied to `docs`."""
    return docs | beam.ParDo(DocumentStage(stage, function)).with_outputs(DEAD_LETTER, main=DOCUMENTS)
