"""Resuming a build, its stages: `Tap`s hand each stage's outcomes to the worker's `UnitLedger`
(`transforms.state.unit_ledger`), and `Replay` gives a later run of the same build the outcomes of the units
whose completion records it finds."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.document import DeadLetter, Skip
from transforms.state.unit_ledger import CANDIDATES, FINGERPRINTS, STAGED, LedgerPlan, decode, ledger_for
from transforms.vocabulary import (COUNTS, DEAD_LETTER, FILTER_COUNTS, MOSTLY_DROPPED, NOTES, RECORDS_READ,
                                   SKIPPED, Candidate, FilterCounts, Fingerprint, MostlyDropped, RecordsRead)


class Tap(beam.DoFn):
    """Hands each outcome of the stage at `position` to this process's `UnitLedger`; outputs nothing."""

    def __init__(self, plan: LedgerPlan, position: int):
        self._plan = plan
        self._position = position

    def setup(self):
        self._ledger = ledger_for(self._plan)

    def process(self, outcome):
        self._ledger.add(self._position, outcome)
        return ()


def tap(collections: dict, plan: LedgerPlan, position: int) -> None:
    """Taps each named PCollection (of the stage at `position`)."""
    for name, collection in collections.items():
        _ = collection | f"Tap-{name}" >> beam.ParDo(Tap(plan, position))


# --- Replaying ---------------------------------------------------------------

# Where each kind of recorded outcome goes.
TAG_OF_KIND = {Skip: SKIPPED, DeadLetter: DEAD_LETTER, Fingerprint: FINGERPRINTS, MostlyDropped: MOSTLY_DROPPED,
               FilterCounts: FILTER_COUNTS, Candidate: CANDIDATES}
REPLAYED = (SKIPPED, DEAD_LETTER, NOTES, RECORDS_READ, *COUNTS, CANDIDATES, STAGED)


class ReplayUnit(beam.DoFn):
    """A completion record's outcomes (of a record its reader checked: `transforms.state.unit_check`), each on the output
    its stage gives it (main: fingerprints), and the unit's staging files on `staged`, as (unit, path)."""

    def __init__(self, units_dir: str):
        self._units_dir = units_dir

    def process(self, record: dict):
        source_file, start = record["unit"]
        unit = (source_file, start)
        for name, *_ in record["runs"]:
            yield beam.pvalue.TaggedOutput(STAGED, (unit, FileSystems.join(self._units_dir, name)))
        for note in record["notes"]:
            yield beam.pvalue.TaggedOutput(NOTES, decode(note))
        if record["records"]:
            yield beam.pvalue.TaggedOutput(RECORDS_READ, RecordsRead(source_file, record["records"],
                                                                           *record.get("fetched", (0, 0)),
                                                                           record.get("extracted_text", 0),
                                                                           record.get("non_response", 0)))
        for encoded in record["outcomes"]:
            outcome = decode(encoded)
            tag = TAG_OF_KIND[type(outcome)]
            yield outcome if tag == FINGERPRINTS else beam.pvalue.TaggedOutput(tag, outcome)


class Replay(beam.PTransform):
    """The outcomes of the units that checked completion records hold (`ReplayUnit`)."""

    def __init__(self, units_dir: str):
        super().__init__()
        self._units_dir = units_dir

    def expand(self, paths):
        return paths | beam.ParDo(ReplayUnit(self._units_dir)).with_outputs(*REPLAYED, main=FINGERPRINTS)
