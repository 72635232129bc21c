"""Resuming a build: each unit of reading, once all its work is staged, gets a completion record; a later run of
the same build replays the record instead of reading the unit again.

A unit is a `WarcRange` (`--range-size`, 64 MiB: about a minute of one
worker's work on a Common Crawl file). Its outcomes leave the stages that
make them on many outputs (skips and dead letters of every stage, counts,
fingerprints, staging files); `Tap`s beside those stages hand each to the
`UnitLedger` of their worker process, and the ledger writes a unit's
record (`units/NAME.json`, written then renamed) only once they balance:

- the reader's `UnitRead` came, once, for the whole unit (a runner that
  splits a range while it is read leaves it unrecorded);
- its records are as many as the outcomes that end a record (skips, dead
  letters, fingerprints: every record ends in one), each counted once, and
  the reader's count of non-response skips (`UnitRead.non_response`);
- each counting stage saw every document that reached it (`CountsPerUnit`);
- its staging files hold as many records as it has fingerprints, all from
  one attempt, and are closed (and synced, on a local disk) first;
- with near-dedup, every fingerprint was signed (or found without words).

So a record never depends on how a runner fuses or bundles the stages:
where they are not in one process, or a unit was split, nothing balances
and the unit is read again. Outcomes are counted as values, so a retried
bundle's repeats are counted once; a zombie's staging files are never named
by a record unless they hold the whole unit. Nothing lists the staging
directory: only files that a record names are read, and only once the record
and they check out (`transforms.state.unit_check`).
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import os
import threading
import time
from collections import defaultdict

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.document import DeadLetter, Skip
from transforms.filesystems.exact_paths import is_local
from transforms.report.manifest import FileDigest
from transforms.vocabulary import (Candidate, Capture, FilterCounts, Fingerprint, MostlyDropped, ReadNote, UnitRead,
                                   field_names, flat_fields)

UNITS = "units"
# A completion record: JSON and its SHA-256, gzipped (its outcomes repeat their field names: about a tenth of the
# JSON).
RECORD_SUFFIX = ".json.gz"
RECORDED = "recorded"
FINGERPRINTS = "fingerprints"
STAGED = "staged"
CANDIDATES = "candidates"
# A test's hook: the ledger stops (sleeps) once it wrote this many records, so that a test kills a build
# part-way at a known point.
HOLD_AFTER_UNITS = "WEBCORPUS_TEST_HOLD_AFTER_UNITS"
# Units a ledger holds outcomes of at once, and outcomes it holds before their unit's range is known; past
# them the oldest are given up (read again by a later run). Where a unit's stages are fused (the local runner),
# a worker thread has one or two units pending; a runner that never brings a unit's outcomes together in one
# process holds no worker's memory with them.
MAX_PENDING_UNITS = 256
MAX_UNPLACED = 500_000


def unit_name(source_file: str, start: int) -> str:
    """The file name (without extension) of a unit's records and staging files."""
    return hashlib.sha256(f"{source_file}@{start}".encode("utf-8")).hexdigest()[:24]


def record_path(units_dir: str, source_file: str, start: int) -> str:
    return FileSystems.join(units_dir, UNITS, f"{unit_name(source_file, start)}{RECORD_SUFFIX}")


# --- Records as JSON ---------------------------------------------------------

KINDS = {cls.__name__: cls for cls in (Skip, DeadLetter, Fingerprint, ReadNote, MostlyDropped, FilterCounts,
                                        Candidate)}


def encode(outcome) -> list:
    if isinstance(outcome, Candidate):
        fields = {"rank": list(outcome.rank), "signature": base64.b64encode(outcome.signature).decode("ascii")}
    elif isinstance(outcome, Fingerprint):
        # Flat, as every kind's fields are: the capture's, then the content's.
        fields = {**vars(outcome.capture), "content_hash": outcome.content_hash, "content_check": outcome.content_check}
    else:
        # (The kinds' fields are flat: strings, numbers, FilterCounts' pairs.)
        fields = flat_fields(outcome)
    return [type(outcome).__name__, fields]


def decode(encoded: list):
    kind, fields = encoded
    if kind == "Candidate":
        return Candidate(tuple(fields["rank"]), base64.b64decode(fields["signature"]))
    if kind == "Fingerprint":
        return Fingerprint(Capture(**{name: fields[name] for name in field_names(Capture)}), fields["content_hash"],
                           fields["content_check"])
    if kind == "FilterCounts":
        fields = dict(fields, counts=tuple(tuple(pair) for pair in fields["counts"]))
    return KINDS[kind](**fields)


def _sync(path: str) -> None:
    """Makes what was written to a local file durable (an object store's file is, once closed)."""
    if is_local(path):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_record(units_dir: str, unit: tuple[str, int], read: UnitRead, outcomes: list,
                 runs: list[FileDigest]) -> str:
    """Writes a unit's completion record whole, or not at all (written beside, synced, renamed): its outcomes,
    its staging files (name, size, SHA-256, records) and the digest of the input bytes it was read from, as JSON,
    then a line of that JSON's SHA-256 (`transforms.state.unit_check` checks each before the record is used)."""
    path = record_path(units_dir, *unit)
    written = f"{path}.{os.getpid()}-{threading.get_ident()}.new"
    record = {"unit": list(unit), "records": read.records, "read": [read.read_to, read.read_sha256],
              "notes": [encode(note) for note in read.notes],
              "runs": [[run.path.rsplit("/", 1)[-1], run.size, run.sha256, run.records] for run in runs],
              "outcomes": sorted(map(encode, outcomes), key=json.dumps)}
    if read.fetched_bytes:
        record["fetched"] = [read.fetched_bytes, read.file_size]
    if read.runs_sha256:
        record["index_runs"] = read.runs_sha256
    if read.extracted_text:
        record["extracted_text"] = read.extracted_text
    if read.non_response:
        record["non_response"] = read.non_response
    body = json.dumps(record, sort_keys=True).encode("utf-8")
    with FileSystems.create(written, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        handle.write(gzip.compress(body + b"\n" + hashlib.sha256(body).hexdigest().encode("ascii"), compresslevel=1,
                                   mtime=0))
    _sync(written)
    FileSystems.rename([written], [path])
    if is_local(path):
        _sync(os.path.dirname(path))
    return path


# --- The ledger --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LedgerPlan:
    """Where records go, and what a unit's outcomes are: the positions (in stage order) of the stages that count
    per unit (`CountsPerUnit`), the position of the fingerprints, and whether documents are signed too."""

    units_dir: str
    count_positions: tuple[int, ...]
    fingerprint_position: int
    near_dedup: bool = False


@dataclasses.dataclass
class _Unit:
    reads: set = dataclasses.field(default_factory=set)
    # (position, outcome): the outcomes that end a record.
    ends: set = dataclasses.field(default_factory=set)
    counts: dict = dataclasses.field(default_factory=lambda: defaultdict(set))
    runs: list = dataclasses.field(default_factory=list)
    signed: set = dataclasses.field(default_factory=set)
    unsigned: set = dataclasses.field(default_factory=set)


class UnitLedger:
    """A worker process's outcomes per unit, until a unit balances and its record is written (module docstring)."""

    def __init__(self, plan: LedgerPlan):
        self._plan = plan
        self._lock = threading.Lock()
        self._units: dict[tuple[str, int], _Unit] = {}
        # The range of each pending unit read, by file: {start: end}.
        self._ranges: dict[str, dict[int, int | None]] = defaultdict(dict)
        # Outcomes known by file and offset alone (skips, dead letters), until their unit's range is known.
        self._unplaced: dict[str, set] = defaultdict(set)
        self._unplaced_count = 0
        self.written = 0

    def _unit_of(self, source_file: str, offset: int) -> tuple[str, int] | None:
        for start, end in self._ranges.get(source_file, {}).items():
            if start <= offset and (end is None or offset < end):
                return source_file, start
        return None

    def _forget(self, unit: tuple[str, int]) -> None:
        del self._units[unit]
        ranges = self._ranges.get(unit[0], {})
        ranges.pop(unit[1], None)
        if not ranges:
            self._ranges.pop(unit[0], None)

    def _entry(self, unit: tuple[str, int]) -> _Unit:
        entry = self._units.get(unit)
        if entry is None:
            while len(self._units) >= MAX_PENDING_UNITS:
                self._forget(next(iter(self._units)))
            entry = self._units[unit] = _Unit()
        return entry

    def add(self, position: int, outcome) -> None:
        with self._lock:
            unit = self._place(position, outcome)
            if unit is not None:
                self._check(unit)

    def add_run(self, unit: tuple[str, int], run) -> None:
        with self._lock:
            self._entry(unit).runs.append(run)

    def _place(self, position: int, outcome) -> tuple[str, int] | None:
        if isinstance(outcome, UnitRead):
            unit = (outcome.source_file, outcome.start)
            entry = self._entry(unit)
            entry.reads.add(outcome)
            self._ranges[outcome.source_file][outcome.start] = outcome.end
            unplaced = self._unplaced.get(outcome.source_file, set())
            placed = {(at, end) for at, end in unplaced if outcome.start <= end.source_offset
                      and (outcome.end is None or end.source_offset < outcome.end)}
            unplaced -= placed
            self._unplaced_count -= len(placed)
            entry.ends |= placed
            return unit
        if isinstance(outcome, Fingerprint):
            unit = outcome.identity[:2]
            self._entry(unit).ends.add((position, outcome))
            return unit
        if isinstance(outcome, (MostlyDropped, FilterCounts)):
            unit = (outcome.source_file, outcome.source_range)
            self._entry(unit).counts[position].add(outcome)
            return unit
        if isinstance(outcome, Candidate):
            unit = outcome.identity[:2]
            self._entry(unit).signed.add(outcome)
            return unit
        if isinstance(outcome, tuple):  # a capture without words, (source_file, source_range, source_offset)
            unit = outcome[:2]
            self._entry(unit).unsigned.add(outcome)
            return unit
        unit = self._unit_of(outcome.source_file, outcome.source_offset)
        if unit is None:
            unplaced = self._unplaced[outcome.source_file]
            if (position, outcome) not in unplaced:
                unplaced.add((position, outcome))
                self._unplaced_count += 1
            while self._unplaced_count > MAX_UNPLACED:
                self._unplaced_count -= len(self._unplaced.pop(next(iter(self._unplaced))))
            return None
        self._units[unit].ends.add((position, outcome))
        return unit

    def _balances(self, entry: _Unit) -> bool:
        if len(entry.reads) != 1:
            return False
        (read,) = entry.reads
        # (The reader's non-response skips end their records, counted, not as outcomes.)
        ended = read.records - read.non_response
        if not read.whole or len(entry.ends) != ended:
            return False
        for position in self._plan.count_positions:
            reached = ended - sum(1 for at, _ in entry.ends if at < position)
            if sum(part.seen for part in entry.counts.get(position, ())) != reached:
                return False
        fingerprints = sum(1 for at, _ in entry.ends if at == self._plan.fingerprint_position)
        if sum(run.records for run in entry.runs) != fingerprints or len({run.attempt for run in entry.runs}) > 1:
            return False
        return not self._plan.near_dedup or len(entry.signed) + len(entry.unsigned) == fingerprints

    def _check(self, unit: tuple[str, int]) -> None:
        entry = self._units[unit]
        if not self._balances(entry):
            return
        self._forget(unit)
        (read,) = entry.reads
        for run in entry.runs:
            _sync(run.close())
        outcomes = [outcome for _, outcome in entry.ends]
        outcomes += [part for parts in entry.counts.values() for part in parts] + list(entry.signed)
        write_record(self._plan.units_dir, unit, read, outcomes, [run.digest() for run in entry.runs])
        self.written += 1
        hold = os.environ.get(HOLD_AFTER_UNITS)
        if hold and self.written >= int(hold):
            while True:
                time.sleep(60)


_LEDGERS: dict[LedgerPlan, UnitLedger] = {}
_LEDGERS_LOCK = threading.Lock()


def ledger_for(plan: LedgerPlan) -> UnitLedger:
    """This process's ledger of `plan` (one, whatever DoFn instances use it)."""
    with _LEDGERS_LOCK:
        ledger = _LEDGERS.get(plan)
        if ledger is None:
            ledger = _LEDGERS[plan] = UnitLedger(plan)
        return ledger
