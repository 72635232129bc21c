"""ReadIndexed: a build's reader of the records a capture index selects (`pipeline.index_select`), as Beam stages.

The launcher reads each index file's footer (`plan_selection`) and hands
over its units of row groups; from there on the work is the pipeline's:

    units of row groups -> matching rows (`MatchingRows`) -> [the first N: `--index-limit`]
      -> by WARC file and `--range-size` window -> a unit of the runs of each window (`UnitsOfWindows`)
      -> spread over the workers -> read (`ReadAllWarc.read_units`: one request a run)

A window's records are the most one step holds (those of `--range-size`
bytes of one WARC file); `--index-limit N` holds N rows where they are
chosen. Each window's unit gives the report its counts (`index_tally`):
the records chosen, their bytes, the requests that read them, their WARC
file and their part of the records' digest, which needs no order (a sum);
a rebuild checks the sum against its manifest's (`check_recorded`).
"""

from __future__ import annotations

from collections import Counter

import apache_beam as beam

from pipeline.index_select import (IndexChoice, IndexPlan, IndexRow, check_recorded, matching_rows, record_digest,
                                   window_unit)
from transforms.report.report import (INDEX_DIGEST, INDEX_MATCHED, INDEX_MATCHED_BYTES, INDEX_REQUESTS,
                                      INDEX_WARC_FILE, records_digest)
from transforms.stages.read_warc.read_warc_transform import ReadAllWarc
from transforms.state.unit_ledger import RECORDED
from transforms.vocabulary import (BUILD_COUNTS, DEAD_LETTER, DOCUMENTS, INPUT_FILES, NOTES, RECORDS_READ, SKIPPED,
                                   UNITS_READ)

READ_OUTPUTS = (DOCUMENTS, SKIPPED, DEAD_LETTER, NOTES, RECORDS_READ, INPUT_FILES, UNITS_READ, RECORDED)


def index_tally(name: str, records: list[tuple[int, int]], runs: int) -> Counter:
    """What a window's chosen records add to the report (`report.index_section`)."""
    return Counter({("total", INDEX_MATCHED): len(records),
                    ("total", INDEX_MATCHED_BYTES): sum(max(length, 0) for _, length in records),
                    ("total", INDEX_REQUESTS): runs, (INDEX_WARC_FILE, name): 1,
                    ("total", INDEX_DIGEST): sum(record_digest(name, *record) for record in records)})


class MatchingRows(beam.DoFn):
    """The matching rows of a unit of row groups (`index_select.matching_rows`)."""

    def __init__(self, choice: IndexChoice):
        self._choice = choice

    def process(self, unit):
        yield from matching_rows(self._choice, unit)


class UnitsOfWindows(beam.DoFn):
    """A window's chosen records (((file, window), rows)) as its unit of reading, and their tally on
    `BUILD_COUNTS`."""

    def __init__(self, base: str):
        self._base = base

    def process(self, window_rows):
        (name, _), rows = window_rows
        records = sorted({(row.offset, row.length) for row in rows})
        unit = window_unit(self._base, name, records)
        yield beam.pvalue.TaggedOutput(BUILD_COUNTS, index_tally(name, records, len(unit.runs)))
        yield unit


class ReadIndexed(beam.PTransform):
    """Reads the records `choice` selects of the index `plan` describes (see the module's docstring), each window of
    a file's records a unit of `range_bytes`; outputs those of `ReadAllWarc` (by tag, a dict) and `BUILD_COUNTS`."""

    def __init__(self, choice: IndexChoice, plan: IndexPlan, range_bytes: int, read_all: ReadAllWarc):
        super().__init__()
        self._choice = choice
        self._plan = plan
        self._range_bytes = range_bytes
        self._read_all = read_all

    def expand(self, pbegin):
        rows = (pbegin | "RowGroups" >> beam.Create(self._plan.units) | "SpreadRowGroups" >> beam.Reshuffle()
                | "MatchingRows" >> beam.ParDo(MatchingRows(self._choice)))
        if self._choice.limit is not None:
            # (The first N in the index's order: N rows held, the limit's, not the index's.)
            rows = (rows | "FirstRows" >> beam.combiners.Top.Smallest(self._choice.limit, key=lambda row: row.order)
                    | "Rows" >> beam.FlatMap(lambda first: first))
        range_bytes = self._range_bytes
        units = (rows
                 | "ByWindow" >> beam.Map(lambda row: ((row.warc_filename, max(row.offset, 0) // range_bytes), row))
                 .with_input_types(IndexRow)
                 | "Windows" >> beam.GroupByKey()
                 | "Units" >> beam.ParDo(UnitsOfWindows(self._choice.base)).with_outputs(BUILD_COUNTS, main="units"))
        if self._choice.recorded_digest:
            choice = self._choice
            _ = (units[BUILD_COUNTS] | "Digests" >> beam.Map(lambda tally: tally[("total", INDEX_DIGEST)])
                 | "Digest" >> beam.CombineGlobally(sum)
                 | "CheckRecorded" >> beam.Map(lambda total: check_recorded(choice, records_digest(total))))
        # (Spread over the workers: each reads one unit at a time, so the requests in flight are at most theirs.)
        read = units.units | "SpreadUnits" >> beam.Reshuffle() | "Read" >> self._read_all.read_units()
        return {**{tag: read[tag] for tag in READ_OUTPUTS}, BUILD_COUNTS: units[BUILD_COUNTS]}
