"""CleanHtml: every document's page reduced to the text a reader sees, in `<div>` blocks.

The cleaner is `transforms/stages/clean_html/clean_html.py`, its rule `transforms/stages/clean_html/rules.py`, modules without Beam.
"""

from __future__ import annotations

import apache_beam as beam

from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.stages.clean_html.guard import DEFAULT_PAGE_MEMORY_MIB, GuardedCleaner
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stage import APPLIED_OUTPUTS, apply_stage
from transforms.vocabulary import CLEAN_HTML


class CleanHtml(beam.PTransform):
    """Applies `HtmlCleaner` to every document; failures go to `dead_letter`."""

    OUTPUTS = APPLIED_OUTPUTS

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = (),
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT, page_memory_mib: int = DEFAULT_PAGE_MEMORY_MIB,
                 main_content: bool = False):
        super().__init__()
        self._cleaner = GuardedCleaner(HtmlCleaner(drop_selectors, main_content), page_timeout, page_memory_mib)

    def expand(self, docs):
        return apply_stage(docs, CLEAN_HTML, self._cleaner)
