"""QualityFilter, ScrubPersonalData and RespectOptOut, the stages: `documents.filter_document`,
`documents.scrub_document` and `opt_out.opt_out_document` applied to every document, in Beam."""

from __future__ import annotations

import functools
from typing import Callable

import apache_beam as beam

from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.document import Document
from transforms.stages.filters.filters import annotate_document, filter_document, scrub_document
from transforms.stages.filters.opt_out import opt_out_document
from transforms.stage import FilterDocuments
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, OPT_OUT, PII_SCRUB, QUALITY_FILTER, SKIPPED


class QualityFilter(beam.PTransform):
    """Applies the quality rule sets (`rule_sets.RULE_SETS`) to every document's `clean_text`; outputs
    `documents`, `skipped` (`filtered`), `filter_counts` (`FilterCounts`) and dead letters.

    `thresholds`: every threshold (`rule_sets.parse_thresholds`). `reminimize`: MinimizeText's function of a
    document and the text kept of it (`minimize_text.minimize_lines`), for pages whose lines a rule removed.
    `annotate` (--annotate): measure instead (`filters.annotate_document`, which `annotate` gives its other
    arguments: `language`, `main_content`, `site_boilerplate`), keeping every page as it is. `count_tokens`
    (--tokenizer): counts the tokens of a text, for the pages dropped (`filter_document`). `packs` (`--quality
    fineweb2`): the language packs (`fineweb2.read_packs`), whose thresholds each page is judged and measured by.
    """

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, rule_sets: tuple[str, ...], thresholds: dict, reminimize: Callable[[Document, str], Document],
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT, annotate: dict | None = None,
                 count_tokens: Callable[[str], int] | None = None, packs: dict | None = None):
        super().__init__()
        self._count_tokens = count_tokens
        self._packs = packs
        self._rule_sets = tuple(rule_sets)
        self._thresholds = dict(thresholds)
        self._reminimize = reminimize
        self._page_timeout = page_timeout
        self._annotate = annotate

    def expand(self, docs):
        if self._annotate is not None:
            apply = functools.partial(annotate_document, rule_sets=self._rule_sets, thresholds=self._thresholds,
                                      packs=self._packs, **self._annotate)
        else:
            apply = functools.partial(filter_document, rule_sets=self._rule_sets, thresholds=self._thresholds,
                                      reminimize=self._reminimize, count_tokens=self._count_tokens,
                                      packs=self._packs)
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
