"""FineWeb's own quality rules (Penedo et al. 2024, "The FineWeb Datasets"), at datatrove 0.10's defaults.

On the page's non-blank lines: the share ending in a sentence terminal (at least 0.12), the share of lines of at
most 30 characters (at most 0.67), the share of characters in lines that repeat an earlier line (at most 0.01),
and newlines per word (at most 0.3: a list, not prose).
"""

from __future__ import annotations

from collections.abc import Iterator

from transforms.stages.filters.verdict import Drop, Empty, Rule, first_drop, ratio, rule_table
from transforms.stages.filters.segmenters import word_counter
from transforms.stages.filters.words import count_words, duplicates, ends_sentence

RULE_SET = "fineweb"
DEFAULTS = {"line_punct_thr": 0.12, "short_line_thr": 0.67, "short_line_length": 30, "char_duplicates_ratio": 0.01,
            "new_line_ratio": 0.3}


RULES = rule_table(Empty("empty"), Rule("line_punct_thr", minimum=True), Rule("short_line_thr"),
                   Rule("char_duplicates_ratio"), Rule("new_line_ratio"))


def measures(text: str, limits: dict, language: str = "", words: int | None = None) -> Iterator[tuple[str, float]]:
    """FineWeb's rules' values of `text`, as (rule, value) in `RULES`' order, each computed when asked for. `empty`
    is the count of non-blank lines: none leaves the others unmeasured. Newlines per word only counts where the text
    has words (`segmenters.word_counter`: a language written with spaces, or a language pack's segmenter); `words`:
    `words.count_words(text)` where the caller has it (used where that is the language's count)."""
    lines = [line for line in text.split("\n") if line.strip()]
    yield "empty", len(lines)
    if not lines:
        return
    # (`--quality fineweb2` gives datatrove's terminal punctuation as `terminal_punctuation`.)
    terminals = limits.get("terminal_punctuation")
    ends = (lambda line: line[-1] in terminals) if terminals else ends_sentence
    yield "line_punct_thr", sum(map(ends, lines)) / len(lines)
    yield "short_line_thr", sum(len(line) <= limits["short_line_length"] for line in lines) / len(lines)
    yield "char_duplicates_ratio", ratio(duplicates(lines)[1], len(text.replace("\n", "")))
    count = word_counter(language, limits.get("word_segmenter"))
    if count is not None:
        yield "new_line_ratio", ratio(text.count("\n"), words if words is not None and count is count_words
                                      else count(text))


def fineweb(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first FineWeb rule `text` fails, or None."""
    limits = dict(DEFAULTS, **thresholds)
    return first_drop(RULE_SET, RULES, measures(text, limits, language), limits)
