"""The rule sets `--quality` names, their thresholds (`--quality-threshold`), and applying them to a text.

A rule set is a chain of steps, each a rule family of `gopher`, `c4` or `fineweb`:
- `gopher`: Gopher repetition, then Gopher quality;
- `c4`: C4's line and page rules;
- `fineweb`: FineWeb's own rules;
- `fineweb-recipe`: FineWeb's chain: Gopher repetition, Gopher quality, C4 without its terminal-punctuation line
  rule, FineWeb;
- `fineweb2`: FineWeb-2's chain: Gopher repetition, FineWeb, Gopher quality, at each page's language's thresholds
  (`fineweb2.py`: its language pack replaces the thresholds given).
Rule sets apply in the order given; a step that removes lines (C4) hands the edited text to the next.
Thresholds are named `STEP.NAME` (`gopher_quality.min_doc_words`); the C4 step of `fineweb-recipe` takes `c4.*`.
"""

from __future__ import annotations

import difflib
import math
from collections import Counter

from transforms.stages.filters import c4 as c4_rules
from transforms.stages.filters import fineweb as fineweb_rules
from transforms.stages.filters import gopher
from transforms.stages.filters.verdict import Outcome

# C4's steps, and whether each applies the terminal-punctuation line rule.
C4_STEPS = {c4_rules.RULE_SET: True, "c4_without_terminal_punctuation": False}
STEPS = {
    gopher.REPETITION: lambda text, limits, language: Outcome(text, gopher.repetition(text, limits, language)),
    gopher.QUALITY: lambda text, limits, language: Outcome(text, gopher.quality(text, limits, language)),
    c4_rules.RULE_SET: lambda text, limits, language: c4_rules.c4(text, limits),
    "c4_without_terminal_punctuation": lambda text, limits, language: c4_rules.c4(text, limits, False),
    fineweb_rules.RULE_SET: lambda text, limits, language: Outcome(text, fineweb_rules.fineweb(text, limits, language)),
}
# The thresholds each step reads: its own family's.
STEP_FAMILY = {gopher.REPETITION: gopher.REPETITION, gopher.QUALITY: gopher.QUALITY, c4_rules.RULE_SET: c4_rules.RULE_SET,
               "c4_without_terminal_punctuation": c4_rules.RULE_SET, fineweb_rules.RULE_SET: fineweb_rules.RULE_SET}
RULE_SETS = {
    "gopher": (gopher.REPETITION, gopher.QUALITY),
    "c4": (c4_rules.RULE_SET,),
    "fineweb": (fineweb_rules.RULE_SET,),
    "fineweb-recipe": (gopher.REPETITION, gopher.QUALITY, "c4_without_terminal_punctuation", fineweb_rules.RULE_SET),
    "fineweb2": (gopher.REPETITION, fineweb_rules.RULE_SET, gopher.QUALITY),
}
# The rule set whose thresholds are each page's language's (`fineweb2.py`), which applies alone.
PER_LANGUAGE = "fineweb2"
DEFAULT_THRESHOLDS = {
    f"{family}.{name}": value
    for family, defaults in ((gopher.REPETITION, gopher.REPETITION_DEFAULTS), (gopher.QUALITY, gopher.QUALITY_DEFAULTS),
                             (c4_rules.RULE_SET, c4_rules.DEFAULTS), (fineweb_rules.RULE_SET, fineweb_rules.DEFAULTS))
    for name, value in defaults.items()
}
# Thresholds of a measure that is a ratio but no share (symbols per word, newlines per word): 0 or more. Every other
# one of a float default is a share of a text's lines, words or characters (0 to 1), and one of an int default a
# count or a length (0 or more).
UNBOUNDED_RATIOS = frozenset({f"{gopher.QUALITY}.max_symbol_word_ratio", f"{fineweb_rules.RULE_SET}.new_line_ratio"})


def parse_quality(value) -> tuple[str, ...]:
    """A `--quality` list (`gopher,c4` or a sequence) in the order given; raises ValueError for an unknown name."""
    given = value if isinstance(value, str) else ",".join(value)
    names = [name.strip() for name in given.split(",") if name.strip()]
    if not names:
        raise ValueError(f"--quality takes a list of {', '.join(RULE_SETS)}, not {given!r}")
    for name in names:
        if name not in RULE_SETS:
            nearest = difflib.get_close_matches(name, RULE_SETS, n=1, cutoff=0.7)
            raise ValueError(f"--quality {given}: no rule set {name!r}" + (f"; did you mean {nearest[0]}?" if nearest
                             else f" (rule sets: {', '.join(RULE_SETS)})"))
    if PER_LANGUAGE in names and len(names) > 1:
        raise ValueError(f"--quality {given}: {PER_LANGUAGE} applies alone (its language packs set the thresholds "
                         "of the rules the others share)")
    return tuple(names)


def threshold_problem(name: str, value: float) -> str | None:
    """Why `value` cannot be the threshold `name` (what it measures bounds it), or None."""
    if isinstance(DEFAULT_THRESHOLDS[name], int):
        kind, high = "a count or a length", math.inf
    elif name in UNBOUNDED_RATIOS:
        kind, high = "a ratio", math.inf
    else:
        kind, high = "a share", 1
    if math.isfinite(value) and 0 <= value <= high:
        return None
    return f"{name} is {kind}: a finite number, " + ("from 0 to 1" if high == 1 else "0 or more")


def parse_thresholds(assignments) -> dict[str, float]:
    """Every threshold: the defaults, changed by `NAME=VALUE` assignments; raises ValueError for an unknown name
    or a value that is not a number in the threshold's range (`threshold_problem`)."""
    thresholds = dict(DEFAULT_THRESHOLDS)
    for assignment in assignments:
        name, _, number = assignment.partition("=")
        name = name.strip()
        if name not in thresholds:
            raise ValueError(f"--quality-threshold {assignment!r}: unknown threshold (names: STEP.NAME, e.g. "
                             "gopher_quality.min_doc_words; see docs/options.md)")
        try:
            value = float(number)
        except ValueError:
            raise ValueError(f"--quality-threshold {assignment!r}: the value must be a number") from None
        problem = threshold_problem(name, value)
        if problem:
            raise ValueError(f"--quality-threshold {assignment!r}: {problem}")
        thresholds[name] = int(value) if isinstance(DEFAULT_THRESHOLDS[name], int) else value
    return thresholds


def thresholds_of(family: str, thresholds: dict) -> dict:
    prefix = f"{family}."
    return {name[len(prefix):]: value for name, value in thresholds.items() if name.startswith(prefix)}


def steps_of(rule_sets: tuple[str, ...]) -> list[str]:
    """The steps of `rule_sets`, in the order they apply."""
    return [step for name in rule_sets for step in RULE_SETS[name]]


def apply_rule_sets(text: str, rule_sets: tuple[str, ...], thresholds: dict, language: str = "") -> Outcome:
    """`text` through the steps of `rule_sets` in order: the first drop stops it; lines removed add up."""
    removed: Counter = Counter()
    for step in steps_of(rule_sets):
        family = STEP_FAMILY[step]
        outcome = STEPS[step](text, thresholds_of(family, thresholds), language)
        removed.update({f"{family}/{rule}": count for rule, count in outcome.lines_removed.items()})
        if outcome.drop is not None:
            return Outcome(text, outcome.drop, removed)
        text = outcome.text
    return Outcome(text, None, removed)
