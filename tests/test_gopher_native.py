"""`transforms.native._gopher`: Gopher's n-gram measures in C give the pure path's values (`gopher.JoinedNGrams`),
on generated word lists and on the developer corpus's pages."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.stages.filters import gopher
from transforms.stages.filters.segmenters import word_splitter

if gopher._gopher is None:
    pytest.skip("transforms.native._gopher is not built (or WEBCORPUS_PURE_PYTHON=1)", allow_module_level=True)

NS = range(1, 13)


def both_ways(words) -> tuple[list[int], list[int]]:
    """Every top and repeated n-gram measure of `words`, in C and in Python."""
    def measures(ngrams):
        return [ngrams.top_characters(n) for n in NS] + [ngrams.repeated_characters(n) for n in NS]
    return measures(gopher._gopher.NGrams(words)), measures(gopher.JoinedNGrams(words))


# Words that join into the same text at other boundaries ("ab" "c" and "a" "bc"), the empty word, words whose code
# points differ but not their UTF-8 length or their letters (a combining accent, an astral character, NUL).
AMBIGUOUS = ["a", "b", "ab", "c", "bc", "abc", "", "é", "e\u0301", "e", "\u0301", "😀", "\x00", "ß", "ss"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(AMBIGUOUS), st.text(max_size=4)), max_size=60))
def test_c_and_python_give_the_same_ngram_measures(words):
    c, python = both_ways(words)
    assert c == python


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat"]), min_size=20, max_size=200), st.booleans())
def test_c_and_python_agree_on_long_repetitive_pages(words, as_tuple):
    # The repetitive pages Gopher's rules are for: most n-grams repeat, many overlap.
    c, python = both_ways(tuple(words) if as_tuple else words)
    assert c == python


def test_ties_go_to_the_first_seen_and_joined_ngrams_ignore_boundaries():
    ngrams = gopher._gopher.NGrams(["xx", "y", "a", "b", "xx", "y", "a", "b"])
    # ("xx", "y") and ("a", "b") twice each, ("y", "a") too: ("xx", "y") was seen first.
    assert ngrams.top_characters(2) == (2 + 1 + 1) * 2
    # "ab" "c" and "a" "bc" join the same: the second repeats the first.
    assert gopher._gopher.NGrams(["ab", "c", "a", "bc"]).repeated_characters(2) == 3
    assert gopher._gopher.NGrams(["ab", "c", "a", "bc"]).top_characters(2) == 4
    assert gopher._gopher.NGrams([]).top_characters(2) == gopher._gopher.NGrams(["a"]).repeated_characters(5) == 0


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="sequence of str"):
        gopher._gopher.NGrams(["a", b"b"])
    with pytest.raises(ValueError, match="1 or more"):
        gopher._gopher.NGrams(["a"]).top_characters(0)


@pytest.mark.slow
def test_the_repetition_rules_measure_the_dev_corpus_pages_the_same_both_ways(corpus_dir, monkeypatch):
    # The gold's texts: real pages (in 20 languages), read without a build.
    pages = [json.loads(line) for line in (corpus_dir / "gold" / "gold.jsonl").read_text().splitlines()]
    limits = dict(gopher.REPETITION_DEFAULTS)
    pages = [(page["text"], page["lang"] or "") for page in pages]
    measured = {}
    for path, ngrams in (("c", gopher._gopher.NGrams), ("python", gopher.JoinedNGrams)):
        monkeypatch.setattr(gopher, "NGrams", ngrams)
        measured[path] = [list(gopher.repetition_measures(text, limits, language)) for text, language in pages]
    assert measured["c"] == measured["python"]
    # The pages have repeats to measure, and words to split.
    assert sum(value for page in measured["c"] for rule, value in page if rule.startswith("dup_5")) > 0
    assert sum(word_splitter(language, None) is not None for _, language in pages) > 800
