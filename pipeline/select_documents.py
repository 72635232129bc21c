"""What a selection keeps of an annotated corpus (`pipeline.select`), document by document, without Beam.

A `Selection` is the options of `python -m pipeline.select`: those of a build (`--languages`, `--quality`,
`--quality-threshold`), decided from the signals an annotated build stored (`signals.decide`), and those that only
stored signals allow (`--min-signal`, `--max-signal`, `--sample`). `select_document` applies them to one
document read back from the corpus (`document_of`) in a build's order: the language, then the rule sets (a
`filtered` skip whose detail is a build's), then the bounds, then the sample; a document kept gets the text C4's
line rules leave of its readable text, minimized again where they removed lines, as a filtering build's is
(`filters.with_text`), so that its bytes and content hash are that build's.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Callable

from transforms.corpus.corpus_format import content_hash
from transforms.document import Document, Skip
from transforms.stages.filters import c4 as c4_rules
from transforms.stages.filters.filters import dropped, with_text
from transforms.stages.filters.rule_sets import C4_STEPS, parse_thresholds, steps_of, thresholds_of
from transforms.stages.filters.signals import decide
from transforms.stages.filters.verdict import Drop
from transforms.stages.hash_dedup import has_text
from transforms.stages.language import other_language_skip
from transforms.stages.tokens import HASHED_TOKENS, OTHER_LANGUAGE_TOKENS, tokens_of
from transforms.vocabulary import Capture

# The fields of a document that a record of the corpus gives back (the others are emptied stages' forms of the
# page). Its duplicate lists are not: the selection deduplicates again, and a survivor without duplicates has none.
RECORD_FIELDS = frozenset(field.name for field in dataclasses.fields(Document)) - {
    "capture", "duplicate_count", "duplicate_urls", "duplicate_record_ids"}
# The capture's fields a record gives back: all but the byte range it was read in, which no record holds (the
# reader of a source shard gives its documents their unit's, `select_units.record_document`).
CAPTURE_FIELDS = tuple(field.name for field in dataclasses.fields(Capture) if field.name != "source_range")
# What a selection's own skips name as their rule set (`filtered` skips: `select: min/NAME: VALUE (threshold X)`).
SELECTION = "select"
# A `--sample` keeps a document whose content hash, as a fraction of 2**64 (its first 16 hex digits), is below it.
HASH_SPACE = float(1 << 64)


@dataclasses.dataclass(frozen=True)
class Selection:
    """What a selection keeps: the rule sets and thresholds (all of them, as `NAME=VALUE` changes of the defaults),
    the languages (all when empty), lower and upper bounds of signals (`(name, value)` pairs) and the fraction of
    contents sampled (None: all)."""

    quality: tuple[str, ...] = ()
    quality_thresholds: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    min_signals: tuple[tuple[str, float], ...] = ()
    max_signals: tuple[tuple[str, float], ...] = ()
    sample: float | None = None
    # The tokens kept at most, and the signal that orders documents for them (`pipeline.select_budget`).
    token_budget: int | None = None
    budget_by: str = ""

    def __post_init__(self):
        if self.sample is not None and not 0 < self.sample <= 1:
            raise ValueError(f"--sample {self.sample:g}: a fraction of the documents, over 0 and at most 1")
        if (self.token_budget is None) != (not self.budget_by):
            raise ValueError("--token-budget N and --budget-by SIGNAL go together: the budget is filled best-first "
                             "by the signal")
        if self.token_budget is not None and self.token_budget <= 0:
            raise ValueError(f"--token-budget {self.token_budget}: a number of tokens, over 0")

    def thresholds(self) -> dict:
        return parse_thresholds(self.quality_thresholds)

    def named_signals(self) -> set[str]:
        """The signals the selection reads by name: those bounded, and the budget's."""
        return {name for name, _ in self.min_signals + self.max_signals} | ({self.budget_by} if self.budget_by else set())

    def recorded(self) -> dict:
        """What the manifest records of the selection beside a build's options (which hold `quality`, its
        thresholds and `languages`)."""
        described = {"min_signals": dict(self.min_signals), "max_signals": dict(self.max_signals),
                     "sample": self.sample, "token_budget": self.token_budget, "budget_by": self.budget_by}
        return {name: value for name, value in described.items() if value}


def parse_bounds(assignments, flag: str) -> tuple[tuple[str, float], ...]:
    """`NAME=VALUE` assignments of `flag` (`--min-signal`) as (name, value) pairs, by name; ValueError otherwise."""
    bounds = {}
    for assignment in assignments:
        name, equals, number = assignment.partition("=")
        try:
            value = float(number)
        except ValueError:
            value = math.nan
        if not equals or not name.strip() or not math.isfinite(value):
            raise ValueError(f"{flag} {assignment!r}: give NAME=VALUE, a signal's name and a finite number "
                             "(e.g. fineweb/line_punct_ratio=0.2)")
        bounds[name.strip()] = value
    return tuple(sorted(bounds.items()))


def document_of(record: dict, source_range: int = 0, duplicate_count: int = 0) -> Document:
    """The document a corpus record holds, as a build had it before deduplication: read in the unit `source_range`,
    followed by `duplicate_count` captures (made at once: a selection makes one for every record it reads)."""
    return Document(Capture(**{name: record[name] for name in CAPTURE_FIELDS}, source_range=source_range),
                    duplicate_count=duplicate_count,
                    **{name: value for name, value in record.items() if name in RECORD_FIELDS})


def kept_text(text: str, rule_sets: tuple[str, ...], thresholds: dict) -> str:
    """What the line rules of `rule_sets` (C4's steps; the others edit no text) leave of a text they keep."""
    for step in steps_of(rule_sets):
        if step in C4_STEPS:
            text = c4_rules.scan(text, thresholds_of(c4_rules.RULE_SET, thresholds), C4_STEPS[step],
                                 sentences=False).text
    return text


def out_of_bounds(signals: dict[str, float], selection: Selection) -> Drop | None:
    """The first bound (lower ones first, by name) that `signals` do not meet; a signal a document lacks meets
    none (its value is NaN in the skip)."""
    for kind, bounds, meets in (("min", selection.min_signals, lambda value, bound: value >= bound),
                                ("max", selection.max_signals, lambda value, bound: value <= bound)):
        for name, bound in bounds:
            value = signals.get(name, math.nan)
            if not meets(value, bound):
                return Drop(kind, name, value, bound)
    return None


def sample_position(doc: Document) -> float:
    """Where a document's content falls in [0, 1): from the content hash of its `html`, the same for every capture
    of a content, on every run."""
    return int(content_hash(doc.html)[:16], 16) / HASH_SPACE


def counted(doc: Document) -> Callable[[str], int]:
    """The token count of `doc`'s readable text, as the source counted it (or the selection, where C4 edited it):
    what `filters.dropped` counts a page's tokens with, the text not tokenized again."""
    return lambda text: doc.token_count


def select_document(doc: Document, selection: Selection, thresholds: dict,
                    reminimize: Callable[[Document, str], Document],
                    count_tokens: Callable[[str], int] | None = None,
                    stored_minimized: bool = True) -> tuple[Document | Skip, Counter]:
    """`doc` (read back from an annotated corpus: `document_of`) kept, with the text a filtering build keeps, or its
    skip (`other-language`, or `filtered` with the rule, value and threshold), and the filter counts of a build.
    `count_tokens` (the source's --tokenizer) counts the tokens of a text whose lines C4 removed, as CountTokens
    does after a filtering build's rules (a text unedited keeps the source's count); with it, the counts give each
    outcome's tokens, as a filtering build's stages do (`transforms.stages.tokens`). Without `stored_minimized`
    (the corpus holds no `html` and `text`), a document kept is minimized from the text kept, edited or not."""
    tokens = count_tokens is not None
    if selection.languages and doc.language not in selection.languages:
        return other_language_skip(doc), Counter(
            tokens_of(OTHER_LANGUAGE_TOKENS, doc.language, doc.token_count) if tokens else {})
    counts = Counter()
    # A page without readable text is kept by a build's rule sets too: HashDedup skips it.
    if selection.quality and doc.clean_text.strip():
        drop = decide(doc.signals, selection.quality, thresholds)
        if drop is not None:
            return dropped(doc, selection.quality, drop, counts, counted(doc) if tokens else None)
        text = kept_text(doc.clean_text, selection.quality, thresholds)
        edited = text != doc.clean_text
        doc = with_text(doc, text, reminimize) if stored_minimized else reminimize(doc, text)
        if edited and tokens:
            doc = doc.replace(token_count=count_tokens(doc.clean_text))
    elif not stored_minimized:
        doc = reminimize(doc, doc.clean_text)
    drop = out_of_bounds(doc.signals, selection)
    if drop is None and selection.sample is not None:
        position = sample_position(doc)
        if position >= selection.sample:
            drop = Drop("sample", "content_hash", position, selection.sample)
    if drop is not None:
        return dropped(doc, (SELECTION,), drop, counts, counted(doc) if tokens else None)
    if tokens and has_text(doc):
        counts.update(tokens_of(HASHED_TOKENS, doc.language, doc.token_count))
    # With its signals: a token budget after the content hash orders by one (the selected corpus writes none).
    return doc, counts


def select_record(doc: Document, selection: Selection, thresholds: dict,
                  reminimize: Callable[[Document, str], Document], count_tokens: Callable[[str], int] | None = None,
                  stored_minimized: bool = True) -> tuple[Document | Skip, Counter]:
    """`select_document` of a record's document whose `duplicate_count` is of the captures that follow it (its
    duplicates in the source, `select_graph.FollowRecords`): the same page, so the counts are the record's times
    its captures."""
    if not doc.duplicate_count:
        return select_document(doc, selection, thresholds, reminimize, count_tokens, stored_minimized)
    result, counts = select_document(doc.replace(duplicate_count=0), selection, thresholds, reminimize, count_tokens,
                                     stored_minimized)
    return result, Counter({name: amount * (1 + doc.duplicate_count) for name, amount in counts.items()})
