"""A selection's units: each shard of its source corpus, read whole by one reader (`ReadSourceShard`), as a build
reads a byte range of a WARC file.

A source shard holds the documents of one unit of the build that wrote it (`source_file`, `source_range`); its
records say which file, and the range is the one `split_warc` reads the shard's first record in (the source's
`--range-size`, its files' sizes from its manifest). A selection's documents keep that unit, so that its shards are
those of a build filtering with the same options, one a range, and its units are recorded for resume
(`transforms.state.unit_ledger`) under the same names as a build's. A unit's completion record names the shard's
size and SHA-256 as its manifest lists them (checked against the shard's bytes before the selection began); a
rerun of the same selection replays the record of each shard whose record checks out instead of reading it.

Only the shard's records are a unit's: the captures that follow a record (its duplicates in the source) and the
source's listed skips and dead letters are read again on every run, and the followers' outcomes are given by
their records' outcomes, replayed or made anew (`select_graph.FollowRecords`).
"""

from __future__ import annotations

import dataclasses
import itertools

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from pipeline.select_documents import document_of
from transforms.corpus.corpus_format import SHARD_NAME
from transforms.corpus.read_corpus import Problem
from transforms.corpus.read_corpus_transform import shard_records
from transforms.document import DeadLetter, Document
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.stages.compress_write.avro_encoding import RecordLayout
from transforms.stages.read_warc.ranges import range_start
from transforms.state.unit_check import reusable
from transforms.state.unit_ledger import RECORDED
from transforms.vocabulary import DEAD_LETTER, READ_CORPUS, UNITS_READ, UnitRead

# What a selection's units are, in the line that says how many a rerun reuses (`pipeline.resumable.prepare`).
SHARD_UNITS = "shards of the source"


@dataclasses.dataclass(frozen=True)
class SourceShard:
    """A corpus shard of the source as its manifest lists it: path, size and SHA-256."""

    path: str
    size: int
    sha256: str

    def input_problem(self, record: dict) -> str | None:
        """Why a unit's completion record was not read from this shard, or None (`unit_check.checked_record`)."""
        if record["read"] != [self.size, self.sha256]:
            return "its source shard is not the one it was read from"
        return None


def source_shards(source: str, manifest: dict) -> tuple[SourceShard, ...]:
    """The corpus shards of the source in `source`, as its `manifest` lists them, but those it lists as empty."""
    return tuple(SourceShard(FileSystems.join(source, entry["path"]), entry["size"], entry["sha256"])
                 for entry in manifest["outputs"] if SHARD_NAME.fullmatch(entry["path"]) and entry.get("records") != 0)


def record_document(record: dict, source_range: int) -> Document:
    """A record's document in its unit (`source_range`), with the count of its captures that follow it (its
    duplicates in the source)."""
    return document_of(record, source_range, record.get("duplicate_count") or 0)


class ReadSourceShard(beam.DoFn):
    """Reads a `SourceShard` whole: its documents (main), a dead letter for each damaged part, and, with a
    `units_dir`, its `UnitRead` (none for a damaged shard, which is then not recorded) or, where its unit's record
    checks out (`transforms.state.unit_check`), the record on `recorded` in place of its documents.

    `file_sizes`: the source's input files' sizes by name; `range_bytes`: its `--range-size`; `staged_fields`: the
    fields the selection stages (its records' layout)."""

    def __init__(self, file_sizes: dict[str, int], range_bytes: int, units_dir: str | None = None,
                 staged_fields: tuple[str, ...] = ()):
        self._file_sizes = file_sizes
        self._range_bytes = range_bytes
        self._units_dir = units_dir
        self._staged_fields = staged_fields

    def setup(self):
        self._layout = RecordLayout(self._staged_fields) if self._units_dir else None

    def _unit_of(self, record: dict) -> tuple[str, int]:
        source_file = record["source_file"]
        return source_file, range_start(record["source_offset"], self._file_sizes.get(source_file, 0),
                                        self._range_bytes)

    def process(self, shard: SourceShard):
        items = iter(shard_records(shard.path))
        first = next(items, None)
        if first is None:
            return
        unit = None if isinstance(first, Problem) else self._unit_of(first)
        if unit is not None and self._units_dir:
            record = reusable(self._units_dir, *unit, self._layout, shard.input_problem)
            if record:
                yield beam.pvalue.TaggedOutput(RECORDED, record)
                return
        read = damaged = 0
        last_offset = -1
        for item in itertools.chain((first,), items):
            if isinstance(item, Problem):
                damaged += 1
                yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter(READ_CORPUS, str(item), "", 0, "", ""))
                continue
            unit = unit or self._unit_of(item)
            read += 1
            last_offset = max(last_offset, item["source_offset"])
            yield record_document(item, unit[1])
        if self._units_dir and read and not damaged:
            # (Its end, past its last record: the ledger places the unit's skips and dead letters by offset.)
            yield beam.pvalue.TaggedOutput(UNITS_READ, UnitRead(*unit, last_offset + 1, read, (), True, shard.size,
                                                                shard.sha256))
