"""FineWeb's own quality rules (Penedo et al. 2024, "The FineWeb Datasets"), at datatrove 0.10's defaults.

On the page's non-blank lines: the share ending in a sentence terminal (at least 0.12), the share of lines of at
most 30 characters (at most 0.67), the share of characters in lines that repeat an earlier line (at most 0.01),
and newlines per word (at most 0.3: a list, not prose).
"""

from __future__ import annotations

from transforms.stages.filters.verdict import Drop, ratio
from transforms.stages.filters.words import duplicates, ends_sentence, is_spaced, split_words

RULE_SET = "fineweb"
DEFAULTS = {"line_punct_thr": 0.12, "short_line_thr": 0.67, "short_line_length": 30, "char_duplicates_ratio": 0.01,
            "new_line_ratio": 0.3}


def fineweb(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first FineWeb rule `text` fails, or None. Newlines per word only counts on languages written with
    spaces (`is_spaced`)."""
    limits = dict(DEFAULTS, **thresholds)
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return Drop(RULE_SET, "empty", 0, 0)
    punctuated = sum(map(ends_sentence, lines)) / len(lines)
    if punctuated < limits["line_punct_thr"]:
        return Drop(RULE_SET, "line_punct_thr", punctuated, limits["line_punct_thr"])
    short = sum(len(line) <= limits["short_line_length"] for line in lines) / len(lines)
    if short > limits["short_line_thr"]:
        return Drop(RULE_SET, "short_line_thr", short, limits["short_line_thr"])
    repeated = ratio(duplicates(lines)[1], len(text.replace("\n", "")))
    if repeated > limits["char_duplicates_ratio"]:
        return Drop(RULE_SET, "char_duplicates_ratio", repeated, limits["char_duplicates_ratio"])
    if is_spaced(language):
        newlines = ratio(text.count("\n"), len(split_words(text)))
        if newlines > limits["new_line_ratio"]:
            return Drop(RULE_SET, "new_line_ratio", newlines, limits["new_line_ratio"])
    return None
