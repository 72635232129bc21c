"""Gopher's repetition and quality rules (Rae et al. 2021, "Scaling Language Models", appendix A, table A1),
at datatrove 0.10's defaults.

Repetition: the shares of duplicated paragraphs and lines (by count and by characters), of the characters in the
most common 2-, 3- and 4-gram, and of the characters in repeated 5- to 10-grams. Quality: the word count, the mean
word length, `#` and ellipses per word, the share of lines that start with a bullet or end with an ellipsis, the
share of words with a letter, and at least two of the English stop words "the be to of and that have with".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from transforms.stages.filters.verdict import Drop, ratio
from transforms.stages.filters.words import duplicates, is_spaced, is_symbol_word, split_words

REPETITION = "gopher_repetition"
QUALITY = "gopher_quality"

REPETITION_DEFAULTS = {
    "dup_para_frac": 0.3, "dup_para_char_frac": 0.2, "dup_line_frac": 0.3, "dup_line_char_frac": 0.2,
    "top_2_gram": 0.2, "top_3_gram": 0.18, "top_4_gram": 0.16,
    "dup_5_gram": 0.15, "dup_6_gram": 0.14, "dup_7_gram": 0.13, "dup_8_gram": 0.12, "dup_9_gram": 0.11,
    "dup_10_gram": 0.10,
}
QUALITY_DEFAULTS = {
    "min_doc_words": 50, "max_doc_words": 100_000, "min_avg_word_length": 3, "max_avg_word_length": 10,
    "max_symbol_word_ratio": 0.1, "max_bullet_lines_ratio": 0.9, "max_ellipsis_lines_ratio": 0.3,
    "max_non_alpha_words_ratio": 0.8, "min_stop_words": 2,
}
STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})
BULLETS = ("•", "-")
ELLIPSES = ("...", "…")

_PARAGRAPH_BREAK = re.compile(r"\n{2,}")
_LINE_BREAKS = re.compile(r"\n+")


def top_ngram_characters(words: Sequence[str], n: int) -> int:
    """The characters of the most common n-gram (words joined by spaces) times its count; the first seen on a tie."""
    counts = Counter(" ".join(words[start:start + n]) for start in range(len(words) - n + 1))
    if not counts:
        return 0
    # max() keeps the first of equal counts: the order n-grams were first seen.
    ngram, count = max(counts.items(), key=lambda item: item[1])
    return len(ngram) * count


def repeated_ngram_characters(words: Sequence[str], n: int) -> int:
    """The characters (words joined without spaces) of n-grams that repeat an earlier one, a repeat skipping its
    n words so that overlapping repeats are counted once."""
    seen: set[str] = set()
    characters, start = 0, 0
    while start <= len(words) - n:
        ngram = "".join(words[start:start + n])
        if ngram in seen:
            characters += len(ngram)
            start += n
        else:
            seen.add(ngram)
            start += 1
    return characters



def repetition(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first repetition rule `text` fails, or None. Word n-grams only count on languages written with
    spaces (`is_spaced`)."""
    limits = dict(REPETITION_DEFAULTS, **thresholds)

    def over(rule: str, value: float) -> Drop | None:
        return Drop(REPETITION, rule, value, limits[rule]) if value > limits[rule] else None

    if not text:
        return Drop(REPETITION, "empty", 0, 0)
    length = len(text)
    for unit, parts in (("para", _PARAGRAPH_BREAK.split(text.strip())), ("line", _LINE_BREAKS.split(text))):
        count, characters = duplicates(parts)
        drop = over(f"dup_{unit}_frac", count / len(parts)) or over(f"dup_{unit}_char_frac", characters / length)
        if drop:
            return drop
    if not is_spaced(language):
        return None
    words = split_words(text)
    for n in (2, 3, 4):
        if len(words) >= n:
            drop = over(f"top_{n}_gram", top_ngram_characters(words, n) / length)
            if drop:
                return drop
    for n in range(5, 11):
        drop = over(f"dup_{n}_gram", repeated_ngram_characters(words, n) / length)
        if drop:
            return drop
    return None


def quality(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first quality rule `text` fails, or None. The stop-word rule only applies to English pages (and pages
    whose language was not identified); the word rules only to languages written with spaces (`is_spaced`)."""
    limits = dict(QUALITY_DEFAULTS, **thresholds)

    def drop(rule: str, value: float) -> Drop:
        return Drop(QUALITY, rule, value, limits[rule])

    lines = text.splitlines()
    if is_spaced(language):
        words = split_words(text)
        content_words = [word for word in words if not is_symbol_word(word)]
        if len(content_words) < limits["min_doc_words"]:
            return drop("min_doc_words", len(content_words))
        if len(content_words) > limits["max_doc_words"]:
            return drop("max_doc_words", len(content_words))
        mean_length = sum(map(len, content_words)) / len(content_words)
        if mean_length < limits["min_avg_word_length"]:
            return drop("min_avg_word_length", mean_length)
        if mean_length > limits["max_avg_word_length"]:
            return drop("max_avg_word_length", mean_length)
        hashes = ratio(text.count("#"), len(words))
        if hashes > limits["max_symbol_word_ratio"]:
            return Drop(QUALITY, "max_symbol_word_ratio (#)", hashes, limits["max_symbol_word_ratio"])
        ellipses = ratio(sum(map(text.count, ELLIPSES)), len(words))
        if ellipses > limits["max_symbol_word_ratio"]:
            return Drop(QUALITY, "max_symbol_word_ratio (...)", ellipses, limits["max_symbol_word_ratio"])
    else:
        words = []
    bullets = ratio(sum(line.lstrip().startswith(BULLETS) for line in lines), len(lines))
    if bullets > limits["max_bullet_lines_ratio"]:
        return drop("max_bullet_lines_ratio", bullets)
    ellipsis_lines = ratio(sum(line.rstrip().endswith(ELLIPSES) for line in lines), len(lines))
    if ellipsis_lines > limits["max_ellipsis_lines_ratio"]:
        return drop("max_ellipsis_lines_ratio", ellipsis_lines)
    if words:
        alphabetic = sum(any(character.isalpha() for character in word) for word in words) / len(words)
        # Named as the reference names it: the share of words with a letter must reach this.
        if alphabetic < limits["max_non_alpha_words_ratio"]:
            return drop("max_non_alpha_words_ratio", alphabetic)
        if language in ("", "en"):
            stop_words = len(STOP_WORDS.intersection(words))
            if stop_words < limits["min_stop_words"]:
                return drop("min_stop_words", stop_words)
    return None
