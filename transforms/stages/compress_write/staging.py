"""Staging: each document's record, encoded, in a staging file of its unit of reading, until WriteShard
merges a unit's files back by offset."""

from __future__ import annotations

import contextlib
import heapq
import uuid

import fastavro
from apache_beam.io.filesystems import FileSystems

from transforms.report.manifest import DigestingHandle, FileDigest
from transforms.state.unit_ledger import unit_name
from transforms.stages.compress_write.avro_encoding import RecordLayout
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it

STAGING_DIR = ".webcorpus-staging"
STAGED = "staged"
FINGERPRINTS = "fingerprints"


# Staging files WriteShard reads at once; a unit with more runs has them merged in groups of this many first.
MAX_OPEN_RUNS = 256


def staging_path(staging_dir: str, unit: tuple[str, int], attempt: str, run: int) -> str:
    return FileSystems.join(staging_dir, f"staged-{unit_name(*unit)}-{attempt}-{run:05d}.avro")


# The metadata key of a staging file's `RecordLayout.identity`.
STAGED_LAYOUT = "webcorpus.staged_layout"


class StagingRun:
    """A staging file being written: the staging records (`RecordLayout.staged`) of one unit in rising
    offset, by one bundle attempt (`attempt`); with `digesting`, digested as it is written (`digest`, once closed),
    for the unit's completion record (a build without resume records has none, and hashes nothing)."""

    def __init__(self, path: str, layout: RecordLayout, attempt: str = "", digesting: bool = False):
        self.path = path
        self.attempt = attempt
        self._handle = DigestingHandle(FileSystems.create(path)) if digesting else FileSystems.create(path)
        self._writer = fastavro.write.Writer(self._handle, layout.staging_schema, codec="null",
                                             metadata={STAGED_LAYOUT: layout.identity})
        self.last_offset = -1
        self.records = 0
        self._closed = False

    def write(self, record: dict) -> None:
        self._writer.write(record)
        self.last_offset = record["source_offset"]
        self.records += 1

    def close(self) -> str:
        """Closes the file (once: the run's unit's completion record may have closed it before its bundle ends)."""
        if not self._closed:
            self._closed = True
            self._writer.flush()
            self._handle.close()
        return self.path

    def digest(self) -> FileDigest:
        """The closed file's size, SHA-256 and records (of a run `digesting`)."""
        if not isinstance(self._handle, DigestingHandle):
            raise ValueError(f"{self.path} was staged without a digest (StagingRun(digesting=False))")
        return self._handle.digest(self.path, self.records)


def _merged(paths: list[str], layout: RecordLayout):
    """The records of staging files in offset order, each offset once (a record read twice is the same record)."""
    paths = sorted(paths)
    with contextlib.ExitStack() as stack:
        runs = [fastavro.reader(stack.enter_context(FileSystems.open(path))) for path in paths]
        for path, run in zip(paths, runs):
            if run.metadata.get(STAGED_LAYOUT) != layout.identity:
                raise ValueError(f"{path} was staged for records of other fields "
                                 f"({run.metadata.get(STAGED_LAYOUT)!r}, not {layout.identity!r})")
        last_offset = None
        for record in heapq.merge(*runs, key=lambda record: record["source_offset"]):
            if record["source_offset"] != last_offset:
                last_offset = record["source_offset"]
                yield record


def staged_records(paths: list[str], staging_dir: str, layout: RecordLayout):
    """A unit's staging records (of `layout`) in offset order, each once, from any number of staging files
    (runs).

    Runs past `MAX_OPEN_RUNS` are merged in groups into new runs first, so that few files are open at once.
    """
    while len(paths) > MAX_OPEN_RUNS:
        merged = []
        for start in range(0, len(paths), MAX_OPEN_RUNS):
            run = StagingRun(FileSystems.join(staging_dir, f"merged-{uuid.uuid4().hex}.avro"), layout)
            for record in _merged(paths[start:start + MAX_OPEN_RUNS], layout):
                run.write(record)
            merged.append(run.close())
        paths = merged
    yield from _merged(paths, layout)
