"""Benchmark decontamination (`--decontaminate`): a page that shares an n-gram of words (13 by default) with an item
of a benchmark the corpus will be evaluated on is marked (the signal `decontamination/NAME`, the number of its
n-grams found in benchmark NAME) and dropped, as a `filtered` skip.

Text is normalised as datatrove 0.10's n-gram decontamination normalises it (its `simplify_text` with the default
`TextNormConfig`): lower case, white space runs made one space, its punctuation characters removed, diacritics
removed (NFD, combining marks dropped), every run of digits made `0`; then split into words on white space
(datatrove splits with NLTK's `word_tokenize`, which on text without punctuation differs in a few contractions, e.g.
`cannot`). An item shorter than n words has no n-gram, and matches nothing, as in datatrove.

An n-gram is its words' 64-bit hashes mixed as a polynomial: a page costs one hash per word and one lookup per n-gram
in a table built once per worker process (`benchmark_table`), whatever the number of items. The C module
`transforms.native._ngrams` normalises, splits and hashes a page in one pass (a table of what the normalisation makes
of each BMP character, `_character_classes`, built once per process; a word with a character it cannot map alone,
e.g. a Hangul syllable or an emoji, is normalised by the pure path); its words are the pure path's, and its hashes
(FNV-1a) are its own, so a process builds its table and checks its pages by the same path.
"""

from __future__ import annotations

import array
import functools
import json
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

import numpy as np
from xxhash import xxh3_64_intdigest

from transforms import native
from transforms.document import Document, Skip, filtered

DEFAULT_NGRAM = 13
DEFAULT_FIELDS = ("text",)
SIGNAL_PREFIX = "decontamination"
# The characters datatrove's normalisation removes: ASCII and CJK punctuation, typographic quotes and dashes, a
# fullwidth digit one, and the control characters other than tab and line feed (C0 and C1).
REMOVED = ("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" "«»´–—“”„’…►∶"
           "、。〈〉《》「」【】━！％（），．：；？～１"
           + "".join(map(chr, (*range(0, 9), *range(11, 32), *range(127, 160)))))
_REMOVE = re.compile(f"[{re.escape(REMOVED)}]+")
_DIGITS = re.compile(r"\d+")
# The polynomial's multiplier (odd, so every word's place in the n-gram changes its hash).
_MIX = np.uint64(0x9E3779B97F4A7C15)
_ngrams = native.load("_ngrams")


class BenchmarkError(ValueError):
    """A `--decontaminate` file that cannot be read as benchmark items, in one line."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark file: its name (the file's name without its extension), path (absolute) and the JSON fields
    holding an item's text (a `.jsonl` file; any other file is one item a line)."""

    name: str
    path: str
    fields: tuple[str, ...] = DEFAULT_FIELDS

    @property
    def signal(self) -> str:
        return f"{SIGNAL_PREFIX}/{self.name}"


@functools.lru_cache(maxsize=1 << 16)
def _unmarked(word: str) -> str:
    """`word` decomposed (NFD) without its nonspacing marks: for the words that are not ASCII, each once per worker
    while it is frequent (a bounded cache)."""
    return "".join(char for char in unicodedata.normalize("NFD", word) if unicodedata.category(char) != "Mn")


def _lowered_words(text: str) -> list[bytes]:
    """The words of `text`, lower-cased already, normalised by the pure path."""
    text = _REMOVE.sub("", " ".join(text.split()))
    if not text.isascii():
        # Removing marks never adds nor removes a space: word by word is the same.
        text = " ".join(word if word.isascii() else _unmarked(word) for word in text.split(" "))
    return _DIGITS.sub("0", text).encode("utf-8").split()


@functools.lru_cache(maxsize=1)
def _character_classes() -> array.array:
    """For `_ngrams`, what the normalisation makes of each BMP character, alone in a word: SPACE (a word ends),
    DELETED (punctuation removed, or nothing but marks), DIGIT (one `0` a run), a code point (the character itself,
    or the one character its marks come off), or PYTHON (any other: the word is normalised by the pure path)."""
    classes = array.array("I", bytes(4 << 16))
    for code in range(1 << 16):
        char = chr(code)
        decomposed = unicodedata.normalize("NFD", char)
        unmarked = _unmarked(char)
        if char.isspace():
            classes[code] = _ngrams.SPACE
        elif char in REMOVED or not unmarked:
            classes[code] = _ngrams.DELETED
        elif char.isdecimal() and decomposed == char and not unicodedata.combining(char):
            classes[code] = _ngrams.DIGIT
        elif (len(unmarked) == 1 and not unicodedata.combining(char) and not unicodedata.combining(unmarked)
              and not unmarked.isspace() and not unmarked.isdecimal() and not 0xD800 <= code < 0xE000):
            # Its marks, and only marks, come off (a mark of another character's is never reordered past it).
            classes[code] = ord(unmarked)
        else:
            classes[code] = _ngrams.PYTHON
    return classes


def normalized_words(text: str) -> list[bytes]:
    """`text`'s words (UTF-8) as datatrove's decontamination normalises it (the module's docstring)."""
    if _ngrams is not None:
        return _ngrams.words(text.lower(), _character_classes(), _lowered_words)
    return _lowered_words(text.lower())


def ngram_hashes(text: str, n: int) -> list[int]:
    """The hash of every n-gram of `text`'s normalised words, in order (none for fewer than n words)."""
    if _ngrams is not None:
        return np.frombuffer(_ngrams.ngram_hashes(text.lower(), n, _character_classes(), _lowered_words),
                             dtype=np.uint64).tolist()
    words = _lowered_words(text.lower())
    if len(words) < n:
        return []
    hashes = np.fromiter(map(xxh3_64_intdigest, words), dtype=np.uint64, count=len(words))
    mixed = hashes[:len(words) - n + 1].copy()
    for offset in range(1, n):
        # uint64 arithmetic wraps around: the polynomial modulo 2**64.
        mixed = mixed * _MIX + hashes[offset:len(words) - n + 1 + offset]
    return mixed.tolist()


def benchmarks(paths: tuple[str, ...], fields: tuple[str, ...] = DEFAULT_FIELDS) -> tuple[Benchmark, ...]:
    names = [os.path.splitext(os.path.basename(path))[0] for path in paths]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise BenchmarkError(f"--decontaminate: two benchmarks are named {repeated[0]} (their file names without the "
                             "extension name their signals): rename one")
    return tuple(Benchmark(name, os.path.abspath(path), tuple(fields)) for name, path in zip(names, paths))


def benchmark_items(benchmark: Benchmark):
    """The texts of a benchmark's items: each line of a text file, or the named fields of each JSON line (joined
    by a line break). Raises `BenchmarkError` on a JSON line without them."""
    with open(benchmark.path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not benchmark.path.endswith(".jsonl"):
                yield line
            elif line.strip():
                try:
                    item = json.loads(line)
                    yield "\n".join(str(item[field]) for field in benchmark.fields)
                except (ValueError, KeyError, TypeError) as error:
                    raise BenchmarkError(
                        f"--decontaminate {benchmark.path} line {number}: no field {error} in a JSON object (name the "
                        "fields holding an item's text with --decontaminate-fields)"
                        if isinstance(error, KeyError) else
                        f"--decontaminate {benchmark.path} line {number}: not a JSON object") from None


def check_benchmark(benchmark: Benchmark) -> None:
    """Reads every item of `benchmark` once, so that a bad file is refused before the build starts."""
    for _ in benchmark_items(benchmark):
        pass


@functools.lru_cache(maxsize=None)
def benchmark_table(benchmarks_: tuple[Benchmark, ...], n: int) -> dict[int, int]:
    """Each n-gram hash of the benchmarks' items and the benchmarks that have it (bit i: the i-th), built once per
    worker process."""
    table: dict[int, int] = {}
    for index, benchmark in enumerate(benchmarks_):
        for item in benchmark_items(benchmark):
            for value in ngram_hashes(item, n):
                table[value] = table.get(value, 0) | 1 << index
    return table


@functools.lru_cache(maxsize=None)
def _slots(benchmarks_: tuple[Benchmark, ...], n: int) -> bytes:
    """The benchmarks' n-gram hashes in `_ngrams`'s own table, built once per worker process."""
    table = benchmark_table(benchmarks_, n)
    return _ngrams.slots(np.fromiter(table, dtype=np.uint64, count=len(table)).tobytes())


def _candidates(text: str, benchmarks_: tuple[Benchmark, ...], n: int) -> list[int]:
    """The hashes of `text`'s n-grams that may be the benchmarks': in C, those its table holds; in the pure path,
    every one, unless none is."""
    if _ngrams is not None:
        return np.frombuffer(_ngrams.ngram_hashes(text.lower(), n, _character_classes(), _lowered_words,
                                                  _slots(benchmarks_, n)), dtype=np.uint64).tolist()
    hashes = ngram_hashes(text, n)
    return [] if benchmark_table(benchmarks_, n).keys().isdisjoint(hashes) else hashes


def matches(text: str, benchmarks_: tuple[Benchmark, ...], n: int) -> Counter:
    """The number of `text`'s n-grams (by position) found in each benchmark, by its signal's name."""
    table = benchmark_table(benchmarks_, n)
    found = Counter()
    for value in _candidates(text, benchmarks_, n):
        bits = table.get(value)
        if bits:
            found.update(benchmark.signal for index, benchmark in enumerate(benchmarks_) if bits >> index & 1)
    return found


def decontaminate_document(doc: Document, benchmarks_: tuple[Benchmark, ...], n: int = DEFAULT_NGRAM,
                           annotate: bool = False) -> tuple[Document | Skip, Counter]:
    """`doc` checked against the benchmarks on its readable text: with `annotate`, the matches per benchmark are its
    signals (0 for none) and nothing is dropped; otherwise a page with a match is a `filtered` skip naming the first
    benchmark it matches and how often (counted as `documents:decontamination/NAME`)."""
    if not doc.clean_text.strip():
        return doc, Counter()
    found = matches(doc.clean_text, benchmarks_, n)
    if annotate:
        return doc.replace(signals=dict(doc.signals, **{benchmark.signal: float(found[benchmark.signal])
                                                         for benchmark in benchmarks_})), Counter()
    for benchmark in benchmarks_:
        if found[benchmark.signal]:
            detail = f"{benchmark.signal}: {found[benchmark.signal]} {n}-grams of its items"
            return filtered(doc, benchmark.signal, detail)
    return doc, Counter()
