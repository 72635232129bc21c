"""`--token-budget N --budget-by SIGNAL`: the documents with the highest SIGNAL, best first, until their tokens
(`token_count`) would pass N.

Where the budget cuts is found without holding the documents, nor their values, in one place: each document's
value is an unsigned 64-bit key that rises as the value falls (`order_key`), and the cut is the smallest key
whose documents, with all those of smaller keys, have more than N tokens. It is found digit by digit
(`DIGIT_BITS` bits, `LEVELS` rounds, each a sum of tokens per digit: at most 2**16 numbers): the documents whose
key starts with a smaller digit are all in, those with a greater one all out, and the next round looks only
inside the digit where the budget runs out (`next_cut`). Documents of equal value are in or out together, so
the tokens kept are at most N, and a tie at the cut leaves the whole tie out. A content's tokens count once
(one per content hash and value), whatever its captures: what the corpus holds of it after deduplication.
A document without SIGNAL is left out.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from dataclasses import dataclass

import apache_beam as beam

from pipeline.select_documents import SELECTION
from transforms.document import Document
from transforms.stage import counter
from transforms.stages.filters.filters import dropped
from transforms.stages.filters.verdict import Drop
from transforms.vocabulary import DOCUMENTS, FILTERED, SELECT, SKIPPED

DIGIT_BITS = 16
LEVELS = 64 // DIGIT_BITS
ALL_KEYS = 1 << 64
SIGN = 1 << 63


def order_key(value: float) -> int:
    """A 64-bit key that rises as `value` falls (the best first): IEEE 754's bits, made to sort as the numbers do,
    reversed."""
    bits = struct.unpack(">Q", struct.pack(">d", value))[0]
    rising = (ALL_KEYS - 1) ^ bits if bits & SIGN else bits | SIGN
    return ALL_KEYS - 1 - rising


def value_of(key: int) -> float:
    """The value whose `order_key` is `key`."""
    rising = ALL_KEYS - 1 - key
    bits = rising ^ SIGN if rising & SIGN else (ALL_KEYS - 1) ^ rising
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


@dataclass(frozen=True)
class Cut:
    """Where the budget cuts, as known after `level` digits: every key whose first `level` digits are below
    `prefix` is in (their tokens: `before`), every key above out, and those of `prefix` are looked into next;
    `everything`: all the documents fit."""

    level: int = 0
    prefix: int = 0
    before: int = 0
    everything: bool = False

    def keeps(self, key: int) -> bool:
        """Whether a document of `key` is in, once every level is done."""
        return self.everything or key < self.prefix

    def digit_of(self, key: int) -> int | None:
        """`key`'s next digit if it starts with `prefix` (it is looked into), else None."""
        shift = 64 - self.level * DIGIT_BITS
        if self.everything or (self.level and key >> shift != self.prefix):
            return None
        return (key >> (shift - DIGIT_BITS)) & ((1 << DIGIT_BITS) - 1)


def next_cut(cut: Cut, tokens_per_digit: list[tuple[int, int]], budget: int) -> Cut:
    """The cut one digit further: the digits in rising order fill the budget left until one would pass it."""
    if cut.everything:
        return cut
    before = cut.before
    for digit, tokens in sorted(tokens_per_digit):
        if before + tokens > budget:
            return Cut(cut.level + 1, (cut.prefix << DIGIT_BITS) | digit, before)
        before += tokens
    # Every document looked into fits: only possible at the first level (below it, the prefix was where the budget
    # ran out).
    return Cut(everything=True, before=before)


def budget_key(doc: Document, signal: str) -> int | None:
    value = doc.signals.get(signal)
    return None if value is None or math.isnan(value) else order_key(value)


class DropOverBudget(beam.DoFn):
    """The documents the cut keeps (main), and a `filtered` skip for each other, with its value and the value of
    the cut (a document without the signal: NaN against the budget)."""

    def __init__(self, signal: str):
        self._signal = signal

    def setup(self):
        self._filtered = counter(SELECT, FILTERED)

    def process(self, doc: Document, cut: Cut):
        key = budget_key(doc, self._signal)
        if key is not None and cut.keeps(key):
            yield doc
            return
        threshold = math.inf if cut.everything else value_of(cut.prefix)
        skip, counts = dropped(doc, (SELECTION,), Drop("budget", self._signal, doc.signals.get(self._signal, math.nan),
                                                        threshold), Counter())
        self._filtered.inc()
        yield beam.pvalue.TaggedOutput(SKIPPED, skip)


class TokenBudget(beam.PTransform):
    """Keeps the documents with the highest `signal` whose tokens fit in `budget` (see the module); outputs
    `documents` and `skipped` (`filtered`), and no counts or dead letters."""

    OUTPUTS = (SKIPPED,)

    def __init__(self, budget: int, signal: str):
        super().__init__()
        self._budget = budget
        self._signal = signal

    def expand(self, docs):
        signal, budget = self._signal, self._budget
        # One (content, key) each, with its tokens: a content's captures count once.
        contents = (docs
                    | "Keyed" >> beam.FlatMap(lambda doc: [] if (key := budget_key(doc, signal)) is None else [
                        ((doc.content_hash, key), doc.token_count)])
                    | "OncePerContent" >> beam.CombinePerKey(max)
                    | "Keys" >> beam.MapTuple(lambda content_and_key, tokens: (content_and_key[1], tokens)))
        cut = docs.pipeline | "FirstCut" >> beam.Create([Cut()])
        for level in range(LEVELS):
            tokens_per_digit = (
                contents
                | f"Digits{level}" >> beam.FlatMap(
                    lambda key_tokens, cut: [] if (digit := cut.digit_of(key_tokens[0])) is None else [
                        (digit, key_tokens[1])], beam.pvalue.AsSingleton(cut))
                | f"TokensPerDigit{level}" >> beam.CombinePerKey(sum)
                | f"AllDigits{level}" >> beam.combiners.ToList())
            cut = cut | f"Cut{level}" >> beam.Map(next_cut, beam.pvalue.AsSingleton(tokens_per_digit), budget)
        return docs | "Keep" >> beam.ParDo(DropOverBudget(signal), beam.pvalue.AsSingleton(cut)).with_outputs(
            SKIPPED, main=DOCUMENTS)
