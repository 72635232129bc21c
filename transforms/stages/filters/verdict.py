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
