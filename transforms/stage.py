"""What every per-document stage shares: dead-letter routing and counters.

A stage is a pure function `Document -> Document`. `DocumentStage` applies it
in Beam; an exception sends the record to the `dead_letter` output with the
stage's name and the reason, and the run goes on.

A stage's PTransform declares, in `OUTPUTS`, the outputs it gives beside `documents`: dead letters
(`DEAD_LETTER`), skips (`SKIPPED`), counts per unit of reading (`COUNTS`: `MOSTLY_DROPPED`,
`FILTER_COUNTS`). The graph (`pipeline.graph.DOCUMENT_STAGES`) takes them by name: dead letters and
skips into their side files, counts into the report, and all of them into the resume ledger.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindows

from transforms.document import DeadLetter, Document, Skip
from transforms.isolation import DEFAULT_PAGE_TIMEOUT, ChildProcess
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, FILTERED, SKIPPED, FilterCounts

COUNTER_NAMESPACE = "webcorpus"


def counter(stage: str, name: str):
    return Metrics.counter(f"{COUNTER_NAMESPACE}.{stage}", name)


class SumCounters(beam.CombineFn):
    """`Counter`s (or maps of counts) summed: the report's tallies, a site's lines' pages."""

    def create_accumulator(self):
        return Counter()

    def add_input(self, accumulator, counts):
        accumulator.update(counts)
        return accumulator

    def merge_accumulators(self, accumulators):
        merged = Counter()
        for accumulator in accumulators:
            merged.update(accumulator)
        return merged

    def extract_output(self, accumulator):
        return accumulator


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


# The outputs of a stage applied by `apply_stage`, beside `documents`.
APPLIED_OUTPUTS = (DEAD_LETTER,)


def apply_stage(docs, stage: str, function: Callable[[Document], Document]):
    """Returns the outputs `documents` and `dead_letter` of `function` applied to `docs`."""
    return docs | beam.ParDo(DocumentStage(stage, function)).with_outputs(*APPLIED_OUTPUTS, main=DOCUMENTS)


class CountsPerUnit:
    """A stage's counts, per unit of reading (`source_file`, `source_range`) in the order documents come.

    Where a stage is fused with reading, a unit's documents come one after
    another: its counts are given once, when the next unit begins (or the
    bundle ends); otherwise they come in several parts, as they did per
    bundle. Each part says its unit, its first document's offset and how many
    documents it saw, so that a unit's completion record (`transforms.state.unit_ledger`)
    knows it has them all.

    A part goes out on the output `tag`, as `make(counts, source_file,
    source_range, first_offset, seen)` makes it.
    """

    def __init__(self, tag: str, make: Callable[[Counter, str, int, int, int], object]):
        self._tag = tag
        self._make = make
        self._unit: tuple[str, int] | None = None
        self._counts = Counter()
        self._first = 0
        self._seen = 0

    def add(self, doc: Document, counts) -> Iterator[beam.pvalue.TaggedOutput]:
        """Adds a document's counts (from `process`); yields the part of the unit before if this one begins
        another."""
        capture = doc.capture
        unit = (capture.source_file, capture.source_range)
        if unit != self._unit:
            yield from self._ended(lambda part: part)
            self._unit, self._first = unit, capture.source_offset
        self._counts.update(counts)
        self._seen += 1

    def finish(self) -> Iterator[beam.pvalue.TaggedOutput]:
        """Yields the part being counted (from `finish_bundle`: in the global window)."""
        yield from self._ended(GlobalWindows.windowed_value)

    def _ended(self, output: Callable) -> Iterator[beam.pvalue.TaggedOutput]:
        if self._unit is not None:
            part = self._make(self._counts, *self._unit, self._first, self._seen)
            self._unit, self._counts, self._seen = None, Counter(), 0
            yield beam.pvalue.TaggedOutput(self._tag, output(part))


# A page with more characters than this (in `html` and `clean_text`) is filtered in a child process, within
# `--page-timeout`: the rules and the replacement are linear in the text, so a page below it takes well under a
# second, and no other page pays for the child.
ISOLATE_ABOVE_CHARS = 1 << 20


def filter_counts(counts: Counter, *unit_part) -> FilterCounts:
    """A unit's part of counts by name (`CountsPerUnit`'s `make`) as `FilterCounts`: the filters' counts, and the
    token counts of --tokenizer."""
    return FilterCounts(tuple(sorted(counts.items())), *unit_part)


class FilterDocuments(beam.DoFn):
    """Applies `function` (a document to a document or a skip, and counts) to every document; outputs the counts
    of each unit of reading in a bundle as one `FilterCounts` (`CountsPerUnit`).

    A page over `isolate_above_chars` goes to a child process (`transforms.isolation`, started at the first
    such page), at most `page_timeout` seconds: a page over it is a dead letter (`PageTimeout`), the rest go on.
    `prepare` (no arguments) loads what `function` uses in every process that runs it (a model, a table): once in
    the worker's setup, and once as a child starts, so that no page's time limit pays for it.
    """

    def __init__(self, stage: str, function: Callable[[Document], tuple[Document | Skip, Counter]],
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT, isolate_above_chars: int = ISOLATE_ABOVE_CHARS,
                 prepare: Callable[[], object] | None = None):
        self._stage = stage
        self._function = function
        self._page_timeout = page_timeout
        self._isolate_above_chars = isolate_above_chars
        self._prepare = prepare

    def setup(self):
        self._filtered = counter(self._stage, FILTERED)
        self._child = None
        if self._prepare is not None:
            self._prepare()

    def teardown(self):
        if self._child is not None:
            self._child.close()

    def _apply(self, doc: Document) -> tuple[Document | Skip, Counter]:
        if len(doc.html) + len(doc.clean_text) <= self._isolate_above_chars:
            return self._function(doc)
        if self._child is None:
            self._child = ChildProcess(self._function, self._page_timeout, prepare=self._prepare)
        return self._child(doc)

    def start_bundle(self):
        self._counts = CountsPerUnit(FILTER_COUNTS, filter_counts)

    def process(self, doc: Document):
        try:
            result, counts = self._apply(doc)
        except Exception as error:  # noqa: BLE001 - a page a rule fails on is a dead letter, not a crash
            result, counts = DeadLetter.for_document(self._stage, doc, error), Counter()
        if isinstance(result, DeadLetter):
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, result)
        elif isinstance(result, Skip):
            self._filtered.inc()
            yield beam.pvalue.TaggedOutput(SKIPPED, result)
        else:
            yield result
        yield from self._counts.add(doc, counts)

    def finish_bundle(self):
        yield from self._counts.finish()
