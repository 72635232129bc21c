"""Gopher's repetition and quality rules (Rae et al. 2021, "Scaling Language Models", appendix A, table A1),
at datatrove 0.10's defaults.

Repetition: the shares of duplicated paragraphs and lines (by count and by characters), of the characters in the
most common 2-, 3- and 4-gram, and of the characters in repeated 5- to 10-grams. Quality: the word count, the mean
word length, `#` and ellipses per word, the share of lines that start with a bullet or end with an ellipsis, the
share of words with a letter, and at least two of the English stop words "the be to of and that have with".
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from transforms import native
from transforms.stages.filters.verdict import Drop, Empty, Rule, first_drop, ratio, rule_table
from transforms.stages.filters.segmenters import word_splitter
from transforms.stages.filters.words import duplicates, is_symbol_word

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


class JoinedNGrams:
    """A text's words joined without spaces, and where each word starts in it: its n-grams are slices of it, cheaper
    than joining their words again for every start. The pure path of `transforms.native._gopher.NGrams`, which
    gives the same values of `top_characters` and `repeated_characters` (tests/test_gopher_native.py)."""

    def __init__(self, words: Sequence[str]):
        self._words = words
        self._text = "".join(words)
        self._starts = list(itertools.accumulate(map(len, words), initial=0))

    def of(self, n: int) -> list[str]:
        """Every n-gram, from each start in order."""
        return list(map(self._text.__getitem__, map(slice, self._starts, self._starts[n:])))

    def top_characters(self, n: int) -> int:
        return top_ngram_characters(self._words, n)

    def repeated_characters(self, n: int) -> int:
        return repeated_ngram_characters(self.of(n), n)


def top_ngram_characters(words: Sequence[str], n: int) -> int:
    """The characters of the most common n-gram (words joined by spaces) times its count; the first seen on a tie."""
    # As tuples of words: no word holds a space, so two n-grams joined by spaces are equal when their words are.
    counts = Counter(zip(*(words[start:] for start in range(n))))
    if not counts:
        return 0
    # max() keeps the first of equal counts: the order n-grams were first seen.
    ngram, count = max(counts.items(), key=lambda item: item[1])
    return (sum(map(len, ngram)) + n - 1) * count


def repeated_ngram_characters(ngrams: list[str], n: int) -> int:
    """The characters of the n-grams (words joined without spaces) that repeat an earlier one, a repeat skipping its
    n words so that overlapping repeats are counted once."""
    counts = Counter(ngrams)
    if len(counts) == len(ngrams):
        return 0
    seen: set[str] = set()
    characters, start = 0, 0
    # Only an n-gram met more than once can repeat: the scan passes the others one word at a time, so it steps
    # from one such start to the next.
    for position in itertools.compress(itertools.count(), map((1).__lt__, map(counts.__getitem__, ngrams))):
        if position < start:
            continue
        ngram = ngrams[position]
        if ngram in seen:
            characters += len(ngram)
            start = position + n
        else:
            seen.add(ngram)
            start = position + 1
    return characters


# The n-gram measures in C where it is built (transforms/native/), the same values.
_gopher = native.load("_gopher")
NGrams = JoinedNGrams if _gopher is None else _gopher.NGrams

REPETITION_RULES = rule_table(
    Empty("empty"), *(Rule(name) for name in REPETITION_DEFAULTS))
QUALITY_RULES = rule_table(
    Rule("min_doc_words", minimum=True), Rule("max_doc_words"), Rule("min_avg_word_length", minimum=True),
    Rule("max_avg_word_length"), Rule("max_symbol_word_ratio (#)", threshold="max_symbol_word_ratio"),
    Rule("max_symbol_word_ratio (...)", threshold="max_symbol_word_ratio"), Rule("max_bullet_lines_ratio"),
    Rule("max_ellipsis_lines_ratio"), Rule("max_non_alpha_words_ratio", minimum=True),
    Rule("min_stop_words", minimum=True))


def repetition_measures(text: str, limits: dict, language: str = "") -> Iterator[tuple[str, float]]:
    """The repetition rules' values of `text`, as (rule, value) in `REPETITION_RULES`' order, each computed when
    asked for. `empty` is the text's characters: none leaves the others unmeasured. Word n-grams only count where
    the text has words (`segmenters.word_splitter`: a language written with spaces, or the `word_segmenter` a
    language pack names), and a top n-gram on a text of n words or more."""
    yield "empty", len(text)
    if not text:
        return
    length = len(text)
    for unit, parts in (("para", _PARAGRAPH_BREAK.split(text.strip())), ("line", _LINE_BREAKS.split(text))):
        count, characters = duplicates(parts)
        yield f"dup_{unit}_frac", count / len(parts)
        yield f"dup_{unit}_char_frac", characters / length
    split = word_splitter(language, limits.get("word_segmenter"))
    if split is None:
        return
    words = split(text)
    ngrams = NGrams(words)
    for n in (2, 3, 4):
        if len(words) >= n:
            yield f"top_{n}_gram", ngrams.top_characters(n) / length
    for n in range(5, 11):
        yield f"dup_{n}_gram", ngrams.repeated_characters(n) / length


def repetition(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first repetition rule `text` fails, or None."""
    limits = dict(REPETITION_DEFAULTS, **thresholds)
    return first_drop(REPETITION, REPETITION_RULES, repetition_measures(text, limits, language), limits)


def quality_measures(text: str, limits: dict, language: str = "") -> Iterator[tuple[str, float]]:
    """The quality rules' values of `text`, as (rule, value) in `QUALITY_RULES`' order, each computed when asked
    for. The stop-word rule only applies to English pages (and pages whose language was not identified), unless
    `limits` gives the page's language's `stop_words`; the word rules only where the text has words
    (`segmenters.word_splitter`), the mean word length to a text with a word."""
    lines = text.splitlines()
    words: tuple[str, ...] = ()
    split = word_splitter(language, limits.get("word_segmenter"))
    if split is not None:
        words = split(text)
        # Most words are letters alone: counted in C; the others (punctuation, numbers, ...) once each distinct one.
        others = Counter(itertools.filterfalse(str.isalpha, words))
        # (`--quality fineweb2` gives datatrove's punctuation as `symbol_characters`.)
        symbols = limits.get("symbol_characters")
        if symbols:
            content_words = [word for word in words if not symbols.issuperset(word)]
            content, characters = len(content_words), sum(map(len, content_words))
        else:
            # A word of letters is no symbol word (`is_symbol_word`: punctuation, symbols and controls alone).
            content_others = [(word, count) for word, count in others.items() if not is_symbol_word(word)]
            content = len(words) - others.total() + sum(count for _, count in content_others)
            characters = (sum(map(len, words)) - sum(len(word) * count for word, count in others.items())
                          + sum(len(word) * count for word, count in content_others))
        yield "min_doc_words", content
        yield "max_doc_words", content
        if content:
            mean_length = characters / content
            yield "min_avg_word_length", mean_length
            yield "max_avg_word_length", mean_length
        yield "max_symbol_word_ratio (#)", ratio(text.count("#"), len(words))
        yield "max_symbol_word_ratio (...)", ratio(sum(map(text.count, ELLIPSES)), len(words))
    yield "max_bullet_lines_ratio", ratio(sum(line.lstrip().startswith(BULLETS) for line in lines), len(lines))
    yield "max_ellipsis_lines_ratio", ratio(sum(line.rstrip().endswith(ELLIPSES) for line in lines), len(lines))
    if words:
        # Named as the reference names it: the share of words with a letter must reach this.
        yield "max_non_alpha_words_ratio", (len(words) - others.total() + sum(
            count for word, count in others.items() if any(map(str.isalpha, word)))) / len(words)
        # (`--quality fineweb2` gives each language's own stop words as `stop_words`, None for a language without.)
        stop_words = limits.get("stop_words", STOP_WORDS if language in ("", "en") else None)
        if stop_words is not None:
            yield "min_stop_words", len(stop_words.intersection(words))


def quality(text: str, thresholds: dict, language: str = "") -> Drop | None:
    """The first quality rule `text` fails, or None."""
    limits = dict(QUALITY_DEFAULTS, **thresholds)
    return first_drop(QUALITY, QUALITY_RULES, quality_measures(text, limits, language), limits)
