"""What a rule set decides about a text: keep it (perhaps with lines removed) or drop it, by which rule."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Drop:
    """A text dropped: by `rule` of `rule_set`, which measured `value` against `threshold`."""

    rule_set: str
    rule: str
    value: float
    threshold: float

    @property
    def name(self) -> str:
        return f"{self.rule_set}/{self.rule}"

    def detail(self) -> str:
        return f"{self.name}: {self.value:.4g} (threshold {self.threshold:g})"


@dataclass
class Outcome:
    """A text after rule sets: `drop` (None: kept), the text (lines may be removed), lines removed per line rule."""

    text: str
    drop: Drop | None = None
    lines_removed: Counter = field(default_factory=Counter)


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, 0 for an empty denominator."""
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True)
class Rule:
    """How a rule decides on the value it measures: over its threshold drops (a maximum), or under it (`minimum`).
    `threshold`: the threshold's name when it is not the rule's own."""

    name: str
    minimum: bool = False
    threshold: str = ""

    @property
    def dropped_side(self) -> str:
        """The side of its threshold that the rule drops: "below" (a minimum) or "above"; a value at it is kept."""
        return "below" if self.minimum else "above"

    def drop(self, rule_set: str, value: float, limits: dict) -> Drop | None:
        limit = limits[self.threshold or self.name]
        return Drop(rule_set, self.name, value, limit) if (value < limit if self.minimum else value > limit) else None


@dataclass(frozen=True)
class Empty(Rule):
    """The rule that there is something to measure: its value is how much (characters, lines); none drops, reported
    as 0 against 0, and the family's other rules are left unmeasured."""

    def drop(self, rule_set: str, value: float, limits: dict) -> Drop | None:
        return Drop(rule_set, self.name, 0, 0) if value <= 0 else None


def rule_table(*rules: Rule) -> dict[str, Rule]:
    """A family's rules by name, in the order they apply."""
    return {rule.name: rule for rule in rules}


def first_drop(rule_set: str, rules: dict[str, Rule], measures, limits: dict) -> Drop | None:
    """The first of `measures` ((rule, value) pairs, in the order the rules apply, measured as needed) that its rule
    drops, or None."""
    for name, value in measures:
        drop = rules[name].drop(rule_set, value, limits)
        if drop is not None:
            return drop
    return None
