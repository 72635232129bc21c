"""--page-timeout bounds the filters too: a page whose rules or replacement take longer is a dead letter alone."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from pipeline.sample import Capture, warc_bytes
from tests.helpers import outcomes_by_kind, page, read_bytes
from transforms.stages.charset import decode_document
from transforms.document import DeadLetter
from transforms.stage import FilterDocuments
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import minimize_document


def slow_on_long_pages(doc):
    """A filter that never ends on a page with 'forever' in it."""
    while "forever" in doc.html:
        time.sleep(0.05)
    return doc, Counter({"kept": 1})


PREPARED_IN_THIS_PROCESS = []


def prepare_table():
    PREPARED_IN_THIS_PROCESS.append("table")


def says_whether_prepared(doc):
    """A filter that counts whether what it loads once was loaded in its process before this page."""
    return doc, Counter({"prepared" if PREPARED_IN_THIS_PROCESS else "not prepared": 1})


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
    assert dead.value.stage == "QualityFilter" and kept.capture.url == ordinary.capture.url


def test_a_page_within_the_bound_is_filtered_in_place_and_a_larger_one_in_the_child(monkeypatch):
    """Ordinary pages pay nothing for the bound: no child process is started for them; the first page over the
    bound starts the one child, which then takes every such page."""
    from transforms import stage as stage_module

    started = []

    class CountedChild:
        def __init__(self, function, page_timeout, prepare=None):
            started.append(page_timeout)

        def __call__(self, doc):
            return doc, Counter({"in the child": 1})

        def close(self):
            pass

    monkeypatch.setattr(stage_module, "ChildProcess", CountedChild)
    small, large, larger = documents("A short page.", "word " * 200, "word " * 300)
    stage = FilterDocuments("QualityFilter", lambda doc: (doc, Counter({"in place": 1})), page_timeout=7,
                            isolate_above_chars=500)
    stage.setup()
    stage.start_bundle()
    outputs = [output for doc in (small, large, larger) for output in stage.process(doc)]
    assert [doc.capture for doc in outputs] == [small.capture, large.capture, larger.capture] and started == [7]
    [counts] = [part.value.value for part in stage.finish_bundle()]
    assert dict(counts.counts) == {"in place": 1, "in the child": 2}


@pytest.mark.slow
def test_a_filters_child_process_is_prepared_before_its_first_page():
    """A model or table a filter loads once is loaded in the child as it starts (within its start-up time), not
    within the first large page's time limit."""
    [large] = documents("word " * 200)
    stage = FilterDocuments("QualityModel", says_whether_prepared, page_timeout=30, isolate_above_chars=500,
                            prepare=prepare_table)
    stage.setup()
    stage.start_bundle()
    try:
        [kept] = list(stage.process(large))
    finally:
        stage.teardown()
    [counts] = [part.value.value for part in stage.finish_bundle()]
    assert kept.capture == large.capture and dict(counts.counts) == {"prepared": 1}
