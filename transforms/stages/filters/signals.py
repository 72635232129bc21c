"""Every quality rule measured (`--annotate`), and the decision the rule sets take from what was measured.

`measure_rule_sets` runs the steps of the rule sets as `apply_rule_sets` does, on the same texts (a step gets the
text C4's line rules left), but measures every rule of every step, none left out because an earlier one failed,
and drops nothing. `decide` gives, from those values alone, the `Drop` that `apply_rule_sets` gives, for any
thresholds whose `MEASURING_THRESHOLDS` are the ones measured with: a selection moves the other thresholds without
reading the text again.

A signal is named `FAMILY/RULE`: the family of its step (the prefix of its thresholds: `gopher_repetition`,
`gopher_quality`, `c4`, `fineweb`) and the rule as a `filtered` skip names it. Its value is what the rule compares
with its threshold, except:
- `FAMILY/empty` (gopher_repetition, fineweb): how much there is to measure (characters; non-blank lines); 0
  drops the page, and leaves the family's other rules unmeasured (absent);
- `c4/lorem_ipsum`, `c4/curly_bracket`: the line (counted from 1) the page rule is first met on, 0 when never;
- `c4/lines_removed/RULE`: how many lines C4's line rule RULE removes (`Measured.removed_lines` says which).
A rule measured only when what it divides by is there (a mean word length needs a word, a top n-gram n words,
word rules a language written with spaces, the stop words English) is absent otherwise, and decides nothing.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

from transforms.stages.filters import c4 as c4_rules
from transforms.stages.filters import fineweb as fineweb_rules
from transforms.stages.filters import gopher
from transforms.stages.filters.rule_sets import C4_STEPS, DEFAULT_THRESHOLDS, STEP_FAMILY, steps_of, thresholds_of
from transforms.stages.filters.verdict import Drop, Empty, first_drop

# The families whose rules measure the text as it is, each rule by itself: their values, and their rules.
MEASURES = {
    gopher.REPETITION: (gopher.repetition_measures, gopher.REPETITION_RULES),
    gopher.QUALITY: (gopher.quality_measures, gopher.QUALITY_RULES),
    fineweb_rules.RULE_SET: (fineweb_rules.measures, fineweb_rules.RULES),
}
# The rule that compares a signal with its threshold, by the signal's name (`Rule.dropped_side`: which side drops).
THRESHOLD_RULES = {
    **{f"{family}/{name}": rule for family, (_, rules) in MEASURES.items() for name, rule in rules.items()
       if not isinstance(rule, Empty)},
    f"{c4_rules.RULE_SET}/{c4_rules.MIN_NUM_SENTENCES.name}": c4_rules.MIN_NUM_SENTENCES,
}
# The thresholds that change what is measured: C4's line thresholds change the lines kept (and so the text the
# steps after it measure), FineWeb's short-line length the share of short lines. Moving one means measuring again.
MEASURING_THRESHOLDS = frozenset({f"{c4_rules.RULE_SET}.max_word_length", f"{c4_rules.RULE_SET}.min_words_per_line",
                                  f"{fineweb_rules.RULE_SET}.short_line_length"})


@dataclass
class Measured:
    """A text measured by rule sets: `signals` by name, `text` after C4's line rules (the text a build filtering with
    them keeps, if it keeps it), and the lines C4's line rules removed, by rule, as indexes of the text's lines."""

    signals: dict[str, float]
    text: str
    removed_lines: dict[str, list[int]] = field(default_factory=dict)


@functools.lru_cache(maxsize=None)
def repeated_family(rule_sets: tuple[str, ...]) -> str | None:
    """A family that two steps of `rule_sets` have (their signals would have the same names), or None."""
    families = Counter(STEP_FAMILY[step] for step in steps_of(rule_sets))
    return next((family for family, count in families.items() if count > 1), None)


def _limits(family: str, thresholds: dict) -> dict:
    return thresholds_of(family, {**DEFAULT_THRESHOLDS, **thresholds})


def measure_rule_sets(text: str, rule_sets: tuple[str, ...], thresholds: dict, language: str = "") -> Measured:
    """Every rule of `rule_sets` measured on `text` (see the module's docstring); raises ValueError for rule sets
    that have a family twice (`repeated_family`)."""
    family = repeated_family(rule_sets)
    if family is not None:
        raise ValueError(f"the rule sets {','.join(rule_sets)} have the step {family} twice: "
                         "their signals would have the same names")
    signals: dict[str, float] = {}
    removed_lines: dict[str, list[int]] = {}
    for step in steps_of(rule_sets):
        family = STEP_FAMILY[step]
        limits = _limits(family, thresholds)
        if step in C4_STEPS:
            scan = c4_rules.scan(text, limits, C4_STEPS[step], until_page_rule=False)
            values = scan.values().items()
            removed_lines = scan.removed
            text = scan.text
        else:
            measures, _ = MEASURES[family]
            values = measures(text, limits, language)
        signals.update({f"{family}/{rule}": float(value) for rule, value in values})
    return Measured(signals, text, removed_lines)


# The rules whose signals C4's page decision reads (`c4.decide`).
C4_DECIDING = (*c4_rules.PAGE_RULES, c4_rules.MIN_NUM_SENTENCES.name)


@functools.lru_cache(maxsize=64)
def _steps_limits(rule_sets: tuple[str, ...], thresholds: tuple[tuple[str, float], ...]) -> tuple:
    """The steps of `rule_sets` as (step, family, limits, the signal of each rule deciding, by rule), for
    `thresholds` (as sorted items): a selection decides every document with the same ones."""
    steps = []
    for step in steps_of(rule_sets):
        family = STEP_FAMILY[step]
        rules = C4_DECIDING if step in C4_STEPS else MEASURES[family][1]
        steps.append((step, family, _limits(family, dict(thresholds)), {rule: f"{family}/{rule}" for rule in rules}))
    return tuple(steps)


def decide(signals: dict[str, float], rule_sets: tuple[str, ...], thresholds: dict) -> Drop | None:
    """The first rule of `rule_sets` (in the order they apply) that drops the page `signals` measure, at
    `thresholds`, or None: `apply_rule_sets(...).drop` of the text measured."""
    for step, family, limits, named in _steps_limits(rule_sets, tuple(sorted(thresholds.items()))):
        # (Each rule's signal looked up by its name: a page has dozens the step does not read.)
        values = ((rule, signals[name]) for rule, name in named.items() if name in signals)
        if step in C4_STEPS:
            drop = c4_rules.decide(dict(values), limits)
        else:
            drop = first_drop(family, MEASURES[family][1], values, limits)
        if drop is not None:
            return drop
    return None
