"""--page-timeout bounds the filters too: a page whose rules or replacement take longer is a dead letter alone."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from pipeline.sample import Capture, warc_bytes
from tests.helpers import outcomes_by_kind, page, read_bytes
from transforms.stages.charset import decode_document
from transforms.document import DeadLetter
from transforms.stages.filters.filters_transform import FilterDocuments
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import minimize_document


def slow_on_long_pages(doc):
    """A filter that never ends on a page with 'forever' in it."""
    while "forever" in doc.html:
        time.sleep(0.05)
    return doc, Counter({"kept": 1})


def documents(*bodies: str) -> list:
    data = warc_bytes([Capture(f"https://example.org/{n}", page(f"<p>{body}</p>").encode()) for n, body in
                       enumerate(bodies)])
    docs, _, _ = outcomes_by_kind(read_bytes(data))
    return [minimize_document(HtmlCleaner()(decode_document(doc)), clean_text=True) for doc in docs]


@pytest.mark.slow
def test_a_page_over_the_time_limit_in_a_filter_is_a_dead_letter_and_the_rest_go_on():
    slow, ordinary = documents("forever " * 100, "An ordinary page.")
    stage = FilterDocuments("QualityFilter", slow_on_long_pages, page_timeout=1, isolate_above_chars=500)
    stage.setup()
    stage.start_bundle()
    try:
        dead, kept = next(stage.process(slow)), next(stage.process(ordinary))
    finally:
        stage.teardown()
    assert isinstance(dead.value, DeadLetter) and "took longer than 1 s" in dead.value.reason
    assert dead.value.stage == "QualityFilter" and kept.url == ordinary.url
