"""`transforms.native._words`: the quality rules' word split in C gives the pure path's tokens
(`words.python_split_words`) and counts the same words and sentences (`words.python_count_sentences`), on
generated texts and on the developer corpus's pages; and the Gopher quality measures that count words a class at a
time give the values of counting them one by one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.stages.filters import gopher, words
from transforms.stages.filters.words import (ABBREVIATIONS, SENTENCE_TERMINALS, count_sentences, count_words,
                                             is_symbol_word, python_count_sentences, python_split_words, split_words)

needs_c = pytest.mark.skipif(words._words is None, reason="transforms.native._words is not built (or "
                                                          "WEBCORPUS_PURE_PYTHON=1)")

# The shapes the C path splits itself, their neighbours that it must leave to split_chunk, and the rest: letters of
# several scripts and cases (the period splits after a lower-case Latin or Cyrillic letter, or two capitals),
# words that split run together, abbreviations, digits (ASCII and others), every suffix and prefix mark, the
# whitespace str.split() splits at (and the characters it does not).
PIECES = ["word", "Word", "WORD", "a", "A", "dont", "cannot", "Ive", "слово", "СЛОВО", "ё", "λόγος", "ΛΌΓΟΣ",
          "straße", "ÉTÉ", "日本", "x²", "42", "٤٢", "3.14", "1,000", "10km", "co", "etc", "Mr", "U.S", "www",
          "and/or", "'s", "n't", "http://a.b/c", "-", "well-known", "a-", "-a", *ABBREVIATIONS,
          *"…,:;!?()[]{}<>_#*&'\"”“`‘´’‚„»«。？！，、；：%=—–$£€¥+-./@~^",
          " ", "  ", "\n", "\t", "\u00a0", "\u2003", "\u200b", "\x1c"]


@needs_c
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=40))
def test_c_and_python_split_alike(pieces):
    text = "".join(pieces)
    assert words._words.split_words(text, *words._C_RULES) == python_split_words(text)


@needs_c
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=40))
def test_c_and_python_count_sentences_and_words_alike(pieces):
    text = "".join(pieces)
    assert count_sentences(text) == python_count_sentences(text)
    assert count_words(text) == len(python_split_words(text))


@needs_c
@pytest.mark.parametrize("text, tokens", [
    ("cat, dog: Mr. Smith's hat. Jan. UK. λόγος. dont. x.", ("cat", ",", "dog", ":", "Mr.", "Smith", "'s", "hat", ".",
                                                            "Jan.", "UK", ".", "λόγος.", "do", "nt", ".", "x.")),
    ("слово, 2024 ok…", ("слово", ",", "2024", "ok", "…")),
    # (A hyphen first or last stays with its word.)
    ("well-known dont-cannot a-b-c -x y- a--b", ("well", "-", "known", "dont", "-", "cannot", "a", "-", "b", "-", "c",
                                               "-x", "y-", "a", "--", "b")),
])
def test_the_shapes_c_splits_itself(text, tokens):
    assert split_words(text) == python_split_words(text) == tokens and count_words(text) == len(tokens)
    assert count_sentences(text) == python_count_sentences(text) == 1 + sum(
        before in SENTENCE_TERMINALS and token not in SENTENCE_TERMINALS for before, token in zip(tokens, tokens[1:]))


@needs_c
@pytest.mark.parametrize("run_together", [
    {"ёлка": ["ё", "лка"], "x": ["x", "x"], "abcdefghijkl": ["abc", "defghijkl"]},
    {"Ångström": ["Å", "ngström"]},
    {},
])
def test_count_words_looks_up_every_run_together_word(run_together):
    # Counting, C looks a chunk of letters up in run_together only where one of its words could be: that of any
    # first letter and any length, as it is given.
    rules = (words._split_chunk, run_together, *words._C_RULES[2:])
    text = "ёлка x abcdefghijkl Ångström ёлки xx abcdefghijk dont y"
    expected = len(words._words.split_words(text, *rules))
    assert expected == len(text.split()) + len(run_together)
    assert words._words.count_words(text, *rules) == expected


@needs_c
def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="split_words"):
        words._words.split_words("a b", words._split_chunk, [], words._SUFFIX_CHARACTERS, words._PERIOD_AFTER,
                                 ABBREVIATIONS)
    with pytest.raises(TypeError, match="tuple or a list"):
        words._words.split_words("a, b", lambda chunk: chunk, {}, frozenset(), frozenset(), frozenset())
    with pytest.raises(TypeError, match="count_sentences"):
        words._words.count_sentences("a b", words._split_chunk, {}, frozenset(), frozenset(), frozenset(), ".")


def counted_one_by_one(text: str) -> dict:
    """The word-counting quality measures as the rules define them, a word at a time."""
    tokens = split_words(text)
    content = [word for word in tokens if not is_symbol_word(word)]
    measured = {"min_doc_words": len(content),
                "max_non_alpha_words_ratio": sum(any(c.isalpha() for c in word) for word in tokens) / len(tokens)}
    if content:
        measured["min_avg_word_length"] = sum(map(len, content)) / len(content)
    return measured


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), min_size=1, max_size=40))
def test_quality_measures_count_words_as_one_by_one(pieces):
    text = "".join(pieces)
    if not split_words(text):
        return
    measured = dict(gopher.quality_measures(text, dict(gopher.QUALITY_DEFAULTS)))
    assert {name: measured[name] for name in counted_one_by_one(text)} == counted_one_by_one(text)


@needs_c
@pytest.mark.slow
def test_the_dev_corpus_pages_split_alike(corpus_dir):
    texts = [json.loads(line)["text"] for line in (corpus_dir / "gold" / "gold.jsonl").read_text().splitlines()]
    assert [split_words.__wrapped__(text) for text in texts] == [python_split_words(text) for text in texts]
    lines = [line.strip() for text in texts for line in text.splitlines()]
    assert list(map(count_sentences, lines)) == list(map(python_count_sentences, lines))
    assert list(map(count_words, texts)) == [len(python_split_words(text)) for text in texts]
    assert sum(map(len, map(python_split_words, texts))) > 100_000
