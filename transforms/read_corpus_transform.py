"""`ReadCorpus`: a corpus's records in a Beam pipeline, checked as `transforms.read_corpus` checks them.

Apart from `read_corpus` so that reading a corpus outside Beam does not import Beam.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus_format import FILE_PREFIX
from transforms.read_corpus import record_problem
from transforms.stage import counter
from transforms.vocabulary import DEAD_LETTER, READ_CORPUS


class VerifyRecord(beam.DoFn):
    def setup(self):
        self._bad = counter(READ_CORPUS, "corrupt")

    def process(self, record: dict):
        problem = record_problem(record)
        if problem:
            self._bad.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, {"url": record.get("url", ""), "reason": problem})
        else:
            yield record


class ReadCorpus(beam.PTransform):
    """Reads a corpus's records in a Beam pipeline; outputs `records` and `dead_letter` (hash mismatches)."""

    def __init__(self, location: str):
        super().__init__()
        self._pattern = location if location.endswith(".avro") else FileSystems.join(location, f"{FILE_PREFIX}-*.avro")

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadAvro" >> beam.io.ReadFromAvro(self._pattern)
            | "Verify" >> beam.ParDo(VerifyRecord()).with_outputs(DEAD_LETTER, main="records")
        )
