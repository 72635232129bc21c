"""QualityFilter, ScrubPersonalData and RespectOptOut, the stages: `documents.filter_document`,
`documents.scrub_document` and `opt_out.opt_out_document` applied to every document, in Beam."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Callable

import apache_beam as beam

from transforms.stages.clean_html.guard import DEFAULT_PAGE_TIMEOUT
from transforms.document import DeadLetter, Document, Skip
from transforms.stages.filters.filters import annotate_document, filter_document, scrub_document
from transforms.stages.filters.opt_out import opt_out_document
from transforms.stages.clean_html.isolation import ChildProcess
from transforms.stage import CountsPerUnit, counter
from transforms.vocabulary import (DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, FILTERED, OPT_OUT, PII_SCRUB, QUALITY_FILTER,
                                   SKIPPED, FilterCounts)


# A page with more characters than this (in `html` and `clean_text`) is filtered in a child process, within
# `--page-timeout`: the rules and the replacement are linear in the text, so a page below it takes well under a
# second, and no other page pays for the child.
ISOLATE_ABOVE_CHARS = 1 << 20


def filter_counts(counts: Counter, *unit_part) -> FilterCounts:
    return FilterCounts(tuple(sorted(counts.items())), *unit_part)


class FilterDocuments(beam.DoFn):
    """Applies `function` (a document to a document or a skip, and counts) to every document; outputs the counts
    of each unit of reading in a bundle as one `FilterCounts` (`CountsPerUnit`).

    A page over `isolate_above_chars` goes to a child process (`transforms.stages.clean_html.isolation`, started at the first
    such page), at most `page_timeout` seconds: a page over it is a dead letter (`PageTimeout`), the rest go on.
    """

    def __init__(self, stage: str, function: Callable[[Document], tuple[Document | Skip, Counter]],
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT, isolate_above_chars: int = ISOLATE_ABOVE_CHARS):
        self._stage = stage
        self._function = function
        self._page_timeout = page_timeout
        self._isolate_above_chars = isolate_above_chars

    def setup(self):
        self._filtered = counter(self._stage, FILTERED)
        self._child = None

    def teardown(self):
        if self._child is not None:
            self._child.close()

    def _apply(self, doc: Document) -> tuple[Document | Skip, Counter]:
        if len(doc.html) + len(doc.clean_text) <= self._isolate_above_chars:
            return self._function(doc)
        if self._child is None:
            self._child = ChildProcess(self._function, self._page_timeout)
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


class QualityFilter(beam.PTransform):
    """Applies the quality rule sets (`rule_sets.RULE_SETS`) to every document's `clean_text`; outputs
    `documents`, `skipped` (`filtered`), `filter_counts` (`FilterCounts`) and dead letters.

    `thresholds`: every threshold (`rule_sets.parse_thresholds`). `reminimize`: MinimizeText's function of a
    document (from its `cleaned_html`), for pages whose lines a rule removed. `annotate` (--annotate): measure
    instead (`filters.annotate_document`, which `annotate` gives its other arguments: `language`,
    `main_content`), keeping every page as it is.
    """

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, rule_sets: tuple[str, ...], thresholds: dict, reminimize: Callable[[Document], Document],
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT, annotate: dict | None = None):
        super().__init__()
        self._rule_sets = tuple(rule_sets)
        self._thresholds = dict(thresholds)
        self._reminimize = reminimize
        self._page_timeout = page_timeout
        self._annotate = annotate

    def expand(self, docs):
        if self._annotate is not None:
            apply = functools.partial(annotate_document, rule_sets=self._rule_sets, thresholds=self._thresholds,
                                      **self._annotate)
        else:
            apply = functools.partial(filter_document, rule_sets=self._rule_sets, thresholds=self._thresholds,
                                      reminimize=self._reminimize)
        return docs | beam.ParDo(FilterDocuments(QUALITY_FILTER, apply, self._page_timeout)).with_outputs(
            *self.OUTPUTS, main=DOCUMENTS)


class ScrubPersonalData(beam.PTransform):
    """Replaces e-mail and public IP addresses in every document's `html`, `text` and `clean_text`
    (`pii.scrub`); outputs `documents`, `filter_counts` (`replaced:KIND`) and dead letters. `annotate`
    (--annotate): the counts go in each document's `signals` too."""

    OUTPUTS = (FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, page_timeout: float = DEFAULT_PAGE_TIMEOUT, annotate: bool = False):
        super().__init__()
        self._page_timeout = page_timeout
        self._annotate = annotate

    def expand(self, docs):
        scrub = functools.partial(scrub_document, annotate=self._annotate)
        return docs | beam.ParDo(FilterDocuments(PII_SCRUB, scrub, self._page_timeout)).with_outputs(
            *self.OUTPUTS, main=DOCUMENTS)


class RespectOptOut(beam.PTransform):
    """Skips every document (as Charset left it) whose `<meta>` tags reserve text and data mining
    (`opt_out.meta_opt_out`); outputs `documents`, `skipped` (`opted-out`) and dead letters."""

    OUTPUTS = (SKIPPED, DEAD_LETTER)

    def expand(self, docs):
        return docs | beam.ParDo(FilterDocuments(OPT_OUT, opt_out_document)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
