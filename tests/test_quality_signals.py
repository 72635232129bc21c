"""`signals.measure_rule_sets` and `signals.decide`: every rule measured, and the decision taken from the values
alone the one `apply_rule_sets` takes, for every rule set, text and thresholds."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from transforms.stages.filters import c4, gopher
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, RULE_SETS, apply_rule_sets
from transforms.stages.filters.signals import MEASURING_THRESHOLDS, decide, measure_rule_sets, words_kept
from transforms.stages.filters.verdict import ratio
from transforms.stages.filters.words import count_words

# Pieces of lines that reach every rule: sentences, short lines, bullets, ellipses, hashes, citations, C4's page
# and phrase rules, long words, repeats.
PIECES = ["The cat sat on the mat and looked at the door.", "It was a fine day to be out with the dog.",
          "Home", "- item one", "• item two", "Read more...", "#tag #news", "Cited fact [1].", "[edit]",
          "Lorem ipsum dolor sit amet.", "function f() { return 1; }.", "Enable JavaScript to see it.",
          "Read our privacy policy here.", "x" * 40 + ".", "and that have with to of be the.", "1 2 3 4 5",
          "Why not? It is so!", "", "Сегодня хорошая погода и мы гуляем.", "今天天气很好。"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=14).map("\n".join)


@st.composite
def thresholds(draw):
    """Every threshold, drawn across its range: ints as small counts and lengths, ratios as shares."""
    drawn = {}
    for name, default in DEFAULT_THRESHOLDS.items():
        if isinstance(default, int):
            drawn[name] = draw(st.integers(0, 2 * default if default < 100 else 60))
        else:
            drawn[name] = draw(st.floats(0, 1))
    return drawn


def with_measuring(decision: dict, measured: dict) -> dict:
    """`decision`'s thresholds, with `measured`'s measuring thresholds."""
    return {**decision, **{name: measured[name] for name in MEASURING_THRESHOLDS}}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXTS, st.sampled_from(sorted(RULE_SETS)), thresholds(), thresholds(), st.sampled_from(["", "en", "ru", "zh"]))
def test_the_decision_from_the_signals_is_the_filters(text, rule_set, measuring, deciding, language):
    measured = measure_rule_sets(text, (rule_set,), measuring, language)
    for chosen in (measuring, with_measuring(deciding, measuring)):
        outcome = apply_rule_sets(text, (rule_set,), chosen, language)
        assert decide(measured.signals, (rule_set,), chosen) == outcome.drop
        if outcome.drop is None:
            assert measured.text == outcome.text


def test_every_rule_is_measured_even_after_one_fails():
    text = "\n".join(["Lorem ipsum dolor sit amet, it is said.", "Enable javascript { here }.", "Short",
                      "The cat sat on the mat. It was fine."] * 2)
    measured = measure_rule_sets(text, ("fineweb-recipe",), DEFAULT_THRESHOLDS, "en")
    assert decide(measured.signals, ("fineweb-recipe",), DEFAULT_THRESHOLDS).name == "gopher_repetition/dup_line_frac"
    families = {name.split("/")[0] for name in measured.signals}
    assert families == {"gopher_repetition", "gopher_quality", "c4", "fineweb"}
    # The lorem-ipsum line is met first (line 1); the curly bracket is on a line the javascript rule removes.
    assert measured.signals["c4/lorem_ipsum"] == 1 and measured.signals["c4/curly_bracket"] == 0
    assert measured.removed_lines["javascript"] == [1, 5] and measured.signals["c4/lines_removed/javascript"] == 2
    assert measured.signals["c4/min_num_sentences"] > 0 and "fineweb/short_line_thr" in measured.signals


def test_the_page_rule_met_on_the_earlier_line_decides():
    curly_first = "A { sign in a fine line.\nLorem ipsum dolor sit amet here."
    signals = measure_rule_sets(curly_first, ("c4",), {}).signals
    assert (signals["c4/curly_bracket"], signals["c4/lorem_ipsum"]) == (1, 2)
    assert decide(signals, ("c4",), {}) == c4.c4(curly_first, {}).drop and decide(signals, ("c4",), {}).rule == "curly_bracket"


def test_a_rule_of_no_words_is_not_measured_and_a_zero_threshold_does_not_fail():
    # No content word: the mean word length is undefined, so absent (the filter divided by zero here).
    text = "!!! ??? ..."
    thresholds = {**DEFAULT_THRESHOLDS, "gopher_quality.min_doc_words": 0}
    measured = measure_rule_sets(text, ("gopher",), thresholds)
    assert "gopher_quality/min_avg_word_length" not in measured.signals
    assert decide(measured.signals, ("gopher",), thresholds) == apply_rule_sets(text, ("gopher",), thresholds).drop


def test_a_family_twice_cannot_be_measured():
    with pytest.raises(ValueError, match="the step c4 twice"):
        measure_rule_sets("Text.", ("c4", "fineweb-recipe"), {})


def plain_top_ngram_characters(words, n):
    """Gopher's top n-gram share's numerator as the reference computes it: n-grams joined by spaces."""
    counts = Counter(" ".join(words[start:start + n]) for start in range(len(words) - n + 1))
    ngram, count = max(counts.items(), key=lambda item: item[1]) if counts else ("", 0)
    return len(ngram) * count


def plain_repeated_ngram_characters(words, n):
    """Gopher's repeated n-gram share's numerator as the reference computes it: each n-gram joined anew."""
    seen, characters, start = set(), 0, 0
    while start <= len(words) - n:
        ngram = "".join(words[start:start + n])
        if ngram in seen:
            characters, start = characters + len(ngram), start + n
        else:
            seen.add(ngram)
            start += 1
    return characters


# Words that join into the same text at other boundaries ("ab" "c" and "a" "bc"), and repeat.
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "ab", "c", "bc", "abc", "the", "cat"]), max_size=40))
def test_the_ngram_measures_are_the_references(words):
    words = tuple(words)
    joined = gopher.JoinedNGrams(words)
    for n in (2, 3, 4):
        assert gopher.top_ngram_characters(words, n) == plain_top_ngram_characters(words, n)
    for n in range(5, 11):
        assert gopher.repeated_ngram_characters(joined.of(n), n) == plain_repeated_ngram_characters(words, n)


LINE_BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", " \n ", "\n\n"]
CITED = ["Cited fact [1].", "A word[2] cited [edit] twice.", "[citation needed] at the start of it all.",
         "An open [ bracket and [12] then [edit].", "x[1]y [ ] [3", "it cannot be, dont go."]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES + CITED), st.sampled_from(LINE_BREAKS)), min_size=1, max_size=14),
       st.sampled_from(["", "en", "zh"]))
def test_finewebs_words_after_c4_are_counted_from_the_words_before_it(pieces, language):
    # Annotating, FineWeb's newlines per word counts the words C4 kept from the page's words (split by Gopher's
    # steps before it) less the removed lines' and citations' (`signals.words_kept`): the count of the kept text.
    text = "".join(piece + line_break for piece, line_break in pieces)
    scan = c4.scan(text, dict(c4.DEFAULTS), False, until_page_rule=False)
    assert words_kept(text, scan) == count_words(scan.text)
    measured = measure_rule_sets(text, ("fineweb-recipe",), DEFAULT_THRESHOLDS, language)
    kept = measured.text
    if language != "zh" and any(line.strip() for line in kept.split("\n")):
        assert measured.signals["fineweb/new_line_ratio"] == ratio(kept.count("\n"), count_words(kept))
