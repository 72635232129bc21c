"""`transforms.native._words.c4_scan`: C4's line scan in C gives the pure path's scan (`c4.python_scan`), line for
line, on generated texts with every trouble a line can hold and on the developer corpus's pages; and what it
assumes of Python's lower case holds for this Python's Unicode."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.stages.filters import c4
from transforms.stages.filters.words import count_sentences, python_count_sentences

needs_c = pytest.mark.skipif(c4._words is None, reason="transforms.native._words is not built (or "
                                                       "WEBCORPUS_PURE_PYTHON=1)")

# What a line can hold for each rule: the phrases in any case (KELVIN SIGN lowers to "k", DOTTED CAPITAL I to "i"
# and a combining dot), citations and brackets that are none, line ends and the ellipsis, words long and short,
# digits a citation's `\d` takes (Arabic-Indic), every line break str.splitlines knows and the whitespace
# str.strip and str.split know.
PIECES = ["lorem ipsum", "Lorem Ipsum", "LOREM IPSUM", "javascript", "JavaScript", "JAVASCR\u0130PT",
          "privacy policy", "Privacy Policy", "coo\u212aie policy", "uses cookies", "use of cookies", "use cookies",
          "terms of use", "Terms Of Use", "policy", "cookie", "[1]", "[23]", "[٣]", "[]", "[edit]", "[citation needed]",
          "[x]", "[", "]", "{", "}", ".", "?", "!", '"', "'", "...", "…", "word", "Word", "слово", "\u0130", "\u212a",
          "straße", "a", "averyveryverylongword", "x" * 30, "1", "3.14", " ", "  ", "\t", "\u00a0", "\u3000",
          "\u200b", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\n\n"]

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=60).map("".join)
limits = st.fixed_dictionaries({
    "max_word_length": st.one_of(st.integers(0, 40), st.floats(0, 40), st.just(1000)),
    "min_words_per_line": st.one_of(st.integers(0, 6), st.floats(0, 6)),
    "min_num_sentences": st.just(5)})


@needs_c
@settings(max_examples=800, deadline=None)
@given(texts, limits, st.booleans(), st.booleans(), st.booleans())
def test_c_and_python_scan_alike(text, limit, terminal_punctuation, until_page_rule, sentences):
    assert c4.scan(text, limit, terminal_punctuation, until_page_rule, sentences) == c4.python_scan(
        text, limit, terminal_punctuation, until_page_rule, sentences)


@needs_c
@pytest.mark.parametrize("text, kept, removed, met", [
    # FineWeb's recipe's C4 (no terminal punctuation): a line of too few words, a policy line, a citation removed.
    ("Read the privacy policy here.\nshort line\nWe use cookies to serve you. [1]\nA line of words [edit] kept",
     ["A line of words  kept"], {"min_words_per_line": [1], "policy": [0, 2]}, {}),
    # Page rules: where they are first met, their lines kept, the scan going on past them.
    ("first line of words\nsome lorem ipsum dolor\nwith a { bracket here\nLOREM IPSUM again here",
     ["first line of words", "some lorem ipsum dolor", "with a { bracket here", "LOREM IPSUM again here"], {},
     {"lorem_ipsum": 2, "curly_bracket": 3}),
    # Lower case as Python's: KELVIN SIGN is "k"; DOTTED CAPITAL I lowers to "i" and a combining dot.
    ("we use coo\u212aies here\nthe JAVASCR\u0130PT line stays", ["the JAVASCR\u0130PT line stays"],
     {"policy": [0]}, {}),
])
def test_what_the_c_scan_keeps_and_removes(text, kept, removed, met):
    scanned = c4.scan(text, dict(c4.DEFAULTS), terminal_punctuation=False, until_page_rule=False)
    assert scanned == c4.python_scan(text, dict(c4.DEFAULTS), terminal_punctuation=False, until_page_rule=False)
    assert scanned.kept == kept
    assert {rule: lines for rule, lines in scanned.removed.items() if lines} == removed
    assert {rule: line for rule, line in scanned.met.items() if line} == met


def test_only_two_characters_outside_ascii_lower_to_ascii():
    """The C scan lowers a line to bytes, every character outside ASCII as one that no phrase holds, but these two,
    as str.lower() does; a Python whose Unicode lowers another into ASCII fails here."""
    into_ascii = {code: chr(code).lower() for code in range(128, sys.maxunicode + 1)
                  if any(character.isascii() for character in chr(code).lower())}
    assert into_ascii == {0x130: "i\u0307", 0x212A: "k"}


@needs_c
def test_sentences_are_counted_with_a_set_of_terminals_that_changes():
    """The C count marks the ASCII terminals of a frozenset once; a set that can change is read on every call."""
    terminals = {"."}
    arguments = list(c4.SENTENCE_ARGUMENTS)
    arguments[-1] = terminals
    assert c4._words.count_sentences("one. two! three", *arguments) == 2
    terminals.add("!")
    assert c4._words.count_sentences("one. two! three", *arguments) == 3
    assert count_sentences("one. two! three") == python_count_sentences("one. two! three") == 3


@needs_c
def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="c4_scan"):
        c4._words.c4_scan("a b", 1000.0, 3.0, 3, 0, c4.remove_citations, c4._C_MARKS[:5], c4.SENTENCE_ARGUMENTS)
    with pytest.raises(TypeError, match="gives a str"):
        c4._words.c4_scan("one two three [1]", 1000.0, 3.0, 3, 0, lambda line: None, c4._C_MARKS,
                          c4.SENTENCE_ARGUMENTS)


@needs_c
@pytest.mark.slow
def test_the_dev_corpus_pages_scan_alike(corpus_dir):
    texts = [json.loads(line)["text"] for line in (corpus_dir / "gold" / "gold.jsonl").read_text().splitlines()]
    for terminal_punctuation in (True, False):
        for text in texts:
            assert c4.scan(text, dict(c4.DEFAULTS), terminal_punctuation, False) == c4.python_scan(
                text, dict(c4.DEFAULTS), terminal_punctuation, False)
    assert sum(len(c4.scan(text, dict(c4.DEFAULTS), False, False).kept) for text in texts) > 5_000
