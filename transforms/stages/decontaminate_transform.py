"""Decontaminate, the stage: `decontaminate.decontaminate_document` applied to every document, in Beam
(`--decontaminate`)."""

from __future__ import annotations

import functools

import apache_beam as beam

from transforms.stage import FilterDocuments
from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.stages.decontaminate import Benchmark, benchmark_table, decontaminate_document
from transforms.vocabulary import DEAD_LETTER, DECONTAMINATE, DOCUMENTS, FILTER_COUNTS, SKIPPED


class Decontaminate(beam.PTransform):
    """Checks every document's `clean_text` against `benchmarks` (`decontaminate.Benchmark`s) by `n`-grams;
    outputs `documents`, `skipped` (`filtered`, a page sharing an n-gram with an item), `filter_counts` and dead
    letters. `annotate` (--annotate): the matches go in `signals`, and nothing is dropped."""

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, benchmarks: tuple[Benchmark, ...], n: int, annotate: bool = False,
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT):
        super().__init__()
        self._benchmarks = tuple(benchmarks)
        self._n = n
        self._annotate = annotate
        self._page_timeout = page_timeout

    def expand(self, docs):
        apply = functools.partial(decontaminate_document, benchmarks_=self._benchmarks, n=self._n,
                                  annotate=self._annotate)
        stage = FilterDocuments(DECONTAMINATE, apply, self._page_timeout,
                                prepare=functools.partial(benchmark_table, self._benchmarks, self._n))
        return docs | beam.ParDo(stage).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
