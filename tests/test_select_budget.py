"""`--token-budget N --budget-by SIGNAL` (`pipeline.select_budget`): best first until N tokens, found digit by
digit in bounded state, is what sorting every document would keep."""

from __future__ import annotations

import math
import random

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, strategies as st

from pipeline.select_budget import TokenBudget, order_key, value_of
from tests import helpers
from transforms.document import Document
from transforms.vocabulary import DOCUMENTS, SKIPPED

VALUES = st.floats(allow_nan=False, width=64)


@given(VALUES, VALUES)
def test_keys_fall_as_values_rise_and_give_them_back(first, second):
    if first < second:
        assert order_key(first) > order_key(second)
    assert value_of(order_key(first)) == first or first == 0 == value_of(order_key(first))


def sorted_budget(docs: list[Document], budget: int, signal: str) -> set[str]:
    """The reference: the contents by value, best first, taken while the budget holds; a tie at the cut stays out."""
    contents = {}
    for doc in docs:
        if signal in doc.signals:
            contents[(doc.content_hash, doc.signals[signal])] = doc.token_count
    by_value = {}
    for (_, value), tokens in contents.items():
        by_value[value] = by_value.get(value, 0) + tokens
    kept_values, used = set(), 0
    for value in sorted(by_value, reverse=True):
        if used + by_value[value] > budget:
            break
        used += by_value[value]
        kept_values.add(value)
    return {doc.capture.url for doc in docs if doc.signals.get(signal) in kept_values}


def document(number: int, value: float | None, tokens: int, content: int) -> Document:
    return helpers.document(f"https://example.com/{number}", f"<urn:{number}>", "d", "a.warc", number,
                            content_hash=f"{content:064x}", token_count=tokens,
                            signals={} if value is None else {"s": value})


@pytest.mark.slow
def test_the_budget_keeps_what_sorting_keeps():
    generator = random.Random(45)
    values = [None, -1.5, 0.0, 0.25, 0.5, 1e-300, 7.0, math.inf]
    docs, contents = [], {}
    for number in range(60):
        # Captures of one content have its signals and tokens.
        content = generator.randrange(40)
        value, tokens = contents.setdefault(content, (generator.choice(values), generator.randrange(50)))
        docs.append(document(number, value, tokens, content))
    budgets = (30, 500, 10 ** 9)
    with TestPipeline() as pipeline:
        created = pipeline | beam.Create(docs)
        for budget in budgets:
            out = created | f"Budget{budget}" >> TokenBudget(budget, "s")
            assert_that(out[DOCUMENTS] | f"Kept{budget}" >> beam.Map(lambda doc: doc.capture.url),
                        equal_to(sorted(sorted_budget(docs, budget, "s"))), label=f"KeptAre{budget}")
            assert_that(out[SKIPPED] | f"Skipped{budget}" >> beam.Map(
                lambda skip: (skip.url, skip.detail.startswith("select: budget/s: "))),
                equal_to([(doc.capture.url, True) for doc in docs if doc.capture.url not in sorted_budget(docs, budget, "s")]),
                label=f"SkippedAre{budget}")
    assert 0 < len(sorted_budget(docs, 500, "s")) < len(sorted_budget(docs, 10 ** 9, "s"))
