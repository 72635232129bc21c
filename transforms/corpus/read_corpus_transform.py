"""`ReadCorpus`: a corpus's records in a Beam pipeline, checked as `transforms.corpus.read_corpus` checks them.

Apart from `read_corpus` so that reading a corpus outside Beam does not import Beam.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus.corpus_format import FILE_PREFIX
from transforms.corpus.read_corpus import Problem, corpus_files, record_problem, scan_shard
from transforms.stage import counter
from transforms.vocabulary import DEAD_LETTER, READ_CORPUS


class VerifyRecord(beam.DoFn):
    """Records through, a damaged part or a record that does not match its digests (`verify_records`) out as a
    dead letter."""

    def __init__(self, verify_records: bool = True):
        self._verify_records = verify_records

    def setup(self):
        self._bad = counter(READ_CORPUS, "corrupt")

    def process(self, record: dict | Problem):
        # A damaged part of a Parquet or JSON Lines shard (`shard_records`) comes as its Problem.
        problem = str(record) if isinstance(record, Problem) else (
            record_problem(record) if self._verify_records else None)
        if problem:
            self._bad.inc()
            url = "" if isinstance(record, Problem) else record.get("url", "")
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, {"url": url, "reason": problem})
        else:
            yield record


def shard_records(path: str):
    """The records of a Parquet or JSON Lines shard, and a `Problem` for each damaged part (`scan_shard`)."""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        data = handle.read()
    return scan_shard(data, path.rsplit("/", 1)[-1], verify=False)


class ReadCorpus(beam.PTransform):
    """Reads a corpus's records in a Beam pipeline; outputs `records` and `dead_letter` (hash mismatches, and a
    Parquet or JSON Lines shard's damaged parts).

    An Avro corpus (or pattern of `.avro` files) is read by Beam's splittable Avro source; Parquet and JSON Lines
    corpora (`--format`) shard by shard, a shard being one unit of a build's input already. `verify_records` False:
    the records are not checked against their digests (a corpus whose files were checked against its manifest's
    digests holds the records its build wrote), only damaged parts are dead letters.
    """

    def __init__(self, location: str, verify_records: bool = True):
        super().__init__()
        self._location = location
        self._verify_records = verify_records
        self._pattern = location if location.endswith(".avro") else FileSystems.join(location, f"{FILE_PREFIX}-*.avro")

    def expand(self, pbegin):
        shards = [] if self._location.endswith(".avro") else [
            path for path in corpus_files(self._location) if not path.endswith(".avro")]
        if shards:
            records = pbegin | "Shards" >> beam.Create(shards) | "ReadShards" >> beam.FlatMap(shard_records)
        else:
            records = pbegin | "ReadAvro" >> beam.io.ReadFromAvro(self._pattern)
        return records | "Verify" >> beam.ParDo(VerifyRecord(self._verify_records)).with_outputs(DEAD_LETTER,
                                                                                              main="records")
