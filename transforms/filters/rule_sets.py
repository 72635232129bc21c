"""The rule sets `--quality` names, their thresholds (`--quality-threshold`), and applying them to a text.

A rule set is a chain of steps, each a rule family of `gopher`, `c4` or `fineweb`:
- `gopher`: Gopher repetition, then Gopher quality;
- `c4`: C4's line and page rules;
- `fineweb`: FineWeb's own rules;
- `fineweb-recipe`: FineWeb's chain: Gopher repetition, Gopher quality, C4 without its terminal-punctuation line
  rule, FineWeb.
Rule sets apply in the order given; a step that removes lines (C4) hands the edited text to the next.
Thresholds are named `STEP.NAME` (`gopher_quality.min_doc_words`); the C4 step of `fineweb-recipe` takes `c4.*`.
"""

from __future__ import annotations

from collections import Counter

from transforms.filters import c4 as c4_rules
from transforms.filters import fineweb as fineweb_rules
from transforms.filters import gopher
from transforms.filters.verdict import Outcome

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
}
DEFAULT_THRESHOLDS = {
    f"{family}.{name}": value
    for family, defaults in ((gopher.REPETITION, gopher.REPETITION_DEFAULTS), (gopher.QUALITY, gopher.QUALITY_DEFAULTS),
                             (c4_rules.RULE_SET, c4_rules.DEFAULTS), (fineweb_rules.RULE_SET, fineweb_rules.DEFAULTS))
    for name, value in defaults.items()
}


def parse_quality(value) -> tuple[str, ...]:
    """A `--quality` list (`gopher,c4` or a sequence) in the order given; raises ValueError for an unknown name."""
    names = [name.strip() for name in (value.split(",") if isinstance(value, str) else value) if name.strip()]
    unknown = [name for name in names if name not in RULE_SETS]
    if unknown or not names:
        raise ValueError(f"--quality takes a list of {', '.join(RULE_SETS)}, not {value!r}")
    return tuple(names)


def parse_thresholds(assignments) -> dict[str, float]:
    """Every threshold: the defaults, changed by `NAME=VALUE` assignments; raises ValueError for an unknown name
    or a value that is not a number."""
    thresholds = dict(DEFAULT_THRESHOLDS)
    for assignment in assignments:
        name, _, number = assignment.partition("=")
        name = name.strip()
        if name not in thresholds:
            raise ValueError(f"--quality-threshold {assignment!r}: unknown threshold (names: STEP.NAME, e.g. "
                             "gopher_quality.min_doc_words; see docs/options.md)")
        try:
            thresholds[name] = type(thresholds[name])(float(number)) if isinstance(thresholds[name], int) \
                else float(number)
        except ValueError:
            raise ValueError(f"--quality-threshold {assignment!r}: the value must be a number") from None
    return thresholds


def thresholds_of(family: str, thresholds: dict) -> dict:
    prefix = f"{family}."
    return {name[len(prefix):]: value for name, value in thresholds.items() if name.startswith(prefix)}


def apply_rule_sets(text: str, rule_sets: tuple[str, ...], thresholds: dict, language: str = "") -> Outcome:
    """`text` through the steps of `rule_sets` in order: the first drop stops it; lines removed add up."""
    removed: Counter = Counter()
    for step in (step for name in rule_sets for step in RULE_SETS[name]):
        family = STEP_FAMILY[step]
        outcome = STEPS[step](text, thresholds_of(family, thresholds), language)
        removed.update({f"{family}/{rule}": count for rule, count in outcome.lines_removed.items()})
        if outcome.drop is not None:
            return Outcome(text, outcome.drop, removed)
        text = outcome.text
    return Outcome(text, None, removed)
