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
from transforms.stages.filters.segmenters import word_splitter
from transforms.stages.filters.verdict import Drop, Empty, first_drop
from transforms.stages.filters.words import count_words, split_words

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


# The rules whose signals C4's page decision reads (`c4.decide`), and every value its scan measures.
C4_DECIDING = (*c4_rules.PAGE_RULES, c4_rules.MIN_NUM_SENTENCES.name)
C4_MEASURED = tuple(c4_rules.Scan().values())


def _steps(rule_sets: tuple[str, ...], thresholds: dict) -> tuple:
    """The steps of `rule_sets` as (step, family, limits, each rule's signal name by rule, those of the rules that
    decide) at `thresholds`: the same for every page a build measures or a selection decides, so found once per
    set of thresholds (`_steps_at`; their values are numbers, and a language pack's frozensets and names)."""
    return _steps_at(rule_sets, tuple(thresholds.items()))


@functools.lru_cache(maxsize=64)
def _steps_at(rule_sets: tuple[str, ...], thresholds: tuple[tuple[str, object], ...]) -> tuple:
    steps = []
    for step in steps_of(rule_sets):
        family = STEP_FAMILY[step]
        measured, deciding = (C4_MEASURED, C4_DECIDING) if step in C4_STEPS else (MEASURES[family][1],) * 2
        names = {rule: f"{family}/{rule}" for rule in measured}
        steps.append((step, family, _limits(family, dict(thresholds)), names, {rule: names[rule] for rule in deciding}))
    return tuple(steps)


def measure_rule_sets(text: str, rule_sets: tuple[str, ...], thresholds: dict, language: str = "") -> Measured:
    """Every rule of `rule_sets` measured on `text` (see the module's docstring); raises ValueError for rule sets
    that have a family twice (`repeated_family`)."""
    family = repeated_family(rule_sets)
    if family is not None:
        raise ValueError(f"the rule sets {','.join(rule_sets)} have the step {family} twice: "
                         "their signals would have the same names")
    signals: dict[str, float] = {}
    removed_lines: dict[str, list[int]] = {}
    # The text a Gopher step split into words (`split_words` keeps its last few texts' words), and the words of what
    # C4's line rules kept of it, for FineWeb's newlines per word.
    split, kept_words = None, None
    for step, family, limits, names, _ in _steps(rule_sets, thresholds):
        if step in C4_STEPS:
            scan = c4_rules.scan(text, limits, C4_STEPS[step], until_page_rule=False)
            values = scan.values().items()
            removed_lines = scan.removed
            kept_words = words_kept(text, scan) if split is text else None
            text = scan.text
        elif family == fineweb_rules.RULE_SET:
            values = fineweb_rules.measures(text, limits, language, kept_words)
        else:
            values = MEASURES[family][0](text, limits, language)
            if word_splitter(language, limits.get("word_segmenter")) is split_words:
                split = text
        signals.update({names[rule]: float(value) for rule, value in values})
    return Measured(signals, text, removed_lines)


def words_kept(text: str, scan: c4_rules.Scan) -> int:
    """`count_words(scan.text)`, the words of what C4's line rules kept of `text`, from `text`'s words (its
    `split_words`, kept from the step before), less those of the lines the rules removed and of the citations they
    removed from the lines kept: a whitespace-separated chunk, and so a word, is never across lines."""
    lines = text.splitlines()
    removed = {index for indexes in scan.removed.values() for index in indexes}
    count = len(split_words(text)) - count_words("\n".join(lines[index] for index in sorted(removed)))
    if "[" in text:
        count -= sum(count_words(line) - count_words(c4_rules.remove_citations(line))
                     for index, line in enumerate(lines) if "[" in line and index not in removed)
    return count


def decide(signals: dict[str, float], rule_sets: tuple[str, ...], thresholds: dict) -> Drop | None:
    """The first rule of `rule_sets` (in the order they apply) that drops the page `signals` measure, at
    `thresholds`, or None: `apply_rule_sets(...).drop` of the text measured."""
    for step, family, limits, _, named in _steps(rule_sets, thresholds):
        # (Each rule's signal looked up by its name: a page has dozens the step does not read.)
        values = ((rule, signals[name]) for rule, name in named.items() if name in signals)
        if step in C4_STEPS:
            drop = c4_rules.decide(dict(values), limits)
        else:
            drop = first_drop(family, MEASURES[family][1], values, limits)
        if drop is not None:
            return drop
    return None
