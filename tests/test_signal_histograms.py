"""report.html's "look before choosing": each signal's histogram over the corpus, the rule's threshold marked,
documents and tokens each side of it (`transforms.report.signal_histograms`, `report_page_signals`)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, strategies as st

from transforms.report.report import build_report, tally_record
from transforms.report.report_page_signals import signals_html
from transforms.report.signal_histograms import (ALL_LANGUAGES, BIN_KEY, BINS, EDGES, SIDE_KEY, SignalTally, bin_of,
                                                dropped_side, signals_section, threshold_name)
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, thresholds_of
from transforms.stages.filters.signals import THRESHOLD_RULES

NON_ALPHA = "gopher_quality/max_non_alpha_words_ratio"
THRESHOLDS = dict(DEFAULT_THRESHOLDS, **{"gopher_quality.max_non_alpha_words_ratio": 0.8})


def staged(signals: dict, language: str = "en", tokens: int = 10) -> dict:
    """A staging record as CompressWrite tallies it, with the fields --annotate and --tokenizer write."""
    return {"source_file": "a.warc.gz", "charset": "utf-8", "charset_source": "meta", "raw_bytes": 100,
            "cleaned_bytes": 50, "minimized_bytes": 40, "truncated": "", "boilerplate_bytes": 0,
            "language": language, "token_count": tokens, "signals": signals}


def section_of(records: list[dict]) -> dict:
    tally = Counter()
    for record in records:
        tally.update(tally_record(record, THRESHOLDS))
    return signals_section(tally, THRESHOLDS)


def test_a_signal_is_named_after_its_rule_and_the_threshold_after_the_rules_family_and_name():
    assert threshold_name(NON_ALPHA) == "gopher_quality.max_non_alpha_words_ratio"
    # One threshold for a rule measured twice.
    assert threshold_name("gopher_quality/max_symbol_word_ratio (#)") == "gopher_quality.max_symbol_word_ratio"
    assert threshold_name("fineweb/line_punct_thr") == "fineweb.line_punct_thr"
    assert threshold_name("c4/lorem_ipsum") is None and threshold_name("language/score") is None


def test_the_bins_are_shares_then_powers_of_two_and_hold_every_value():
    assert (bin_of(0.0), bin_of(0.049), bin_of(0.05), bin_of(0.99), bin_of(1.0), bin_of(1.5), bin_of(3.0)) == (
        0, 0, 1, 19, 19, 20, 21)
    assert bin_of(-1.0) == 0 and bin_of(1e30) == BINS - 1


@given(st.lists(st.tuples(st.floats(0, 1e6, allow_nan=False), st.sampled_from(["en", "de", ""]),
                          st.integers(0, 10_000)), min_size=1, max_size=40),
       st.floats(0, 1, allow_nan=False))
def test_each_side_of_the_threshold_is_counted_exactly_and_the_bins_sum_to_the_documents(pages, threshold):
    thresholds = dict(THRESHOLDS, **{"gopher_quality.max_non_alpha_words_ratio": threshold})
    tally = Counter()
    for value, language, tokens in pages:
        tally.update(tally_record(staged({NON_ALPHA: value}, language, tokens), thresholds))
    counts = signals_section(tally, thresholds)["by_signal"][NON_ALPHA]["languages"]
    everything = counts[ALL_LANGUAGES]
    assert sum(everything["documents"].values()) == len(pages)
    assert sum(everything["tokens"].values()) == sum(tokens for *_, tokens in pages)
    assert everything["below"]["documents"] == sum(value < threshold for value, *_ in pages)
    assert everything["at"]["documents"] == sum(value == threshold for value, *_ in pages)
    assert everything["above"]["tokens"] == sum(tokens for value, _, tokens in pages if value > threshold)
    # Gopher's rules depend on the language: each language has its own.
    for language in {language or "none" for _, language, _ in pages}:
        assert sum(counts[language]["documents"].values()) == sum(
            (page_language or "none") == language for _, page_language, _ in pages)


def test_a_signal_of_no_rule_has_its_histogram_and_no_sides_and_no_languages():
    section = section_of([staged({"language/score": 0.91}), staged({"language/score": 0.42}, "de")])
    signal = section["by_signal"]["language/score"]
    assert signal["threshold"] is None and list(signal["languages"]) == [ALL_LANGUAGES]
    assert signal["languages"][ALL_LANGUAGES]["documents"] == {str(bin_of(0.42)): 1, str(bin_of(0.91)): 1}
    assert "below" not in signal["languages"][ALL_LANGUAGES]


def test_the_report_has_signals_only_where_documents_have_them():
    options = {"inputs": [], "quality": ["gopher"], "quality_thresholds": THRESHOLDS}
    with_signals = build_report(tally_record(staged({NON_ALPHA: 0.5}), THRESHOLDS), options)
    assert with_signals["signals"]["edges"] == list(EDGES)
    assert with_signals["signals"]["by_signal"][NON_ALPHA]["threshold"] == 0.8
    assert "signals" not in build_report(tally_record(staged({})), options)


def test_the_page_draws_a_histogram_per_signal_with_its_threshold_and_the_counts_each_side():
    records = [staged({NON_ALPHA: value, "language/score": 0.9}, language, 7)
               for value, language in ((0.5, "en"), (0.85, "en"), (0.95, "de"), (0.8, "de"))]
    page = signals_html({"signals": section_of(records), "options": {}})
    assert page.count('class="histogram"') == 2 + 2  # each signal for all documents, Gopher's per language too
    assert page.count('class="threshold"') == 3 and "threshold 0.8" in page
    assert '<td class="n side-documents">1</td>' in page and '<td class="n side-documents">2</td>' in page
    assert signals_html({"options": {}}) == ""


def test_the_side_a_signal_drops_is_its_rules_definition_not_its_name():
    assert dropped_side("gopher_quality/min_doc_words") == "below"
    assert dropped_side("gopher_repetition/dup_line_frac") == "above"
    # Named "max_", the rule drops a page whose share of words with a letter is under the threshold.
    assert dropped_side(NON_ALPHA) == "below"
    assert dropped_side("fineweb/line_punct_thr") == "below" and dropped_side("fineweb/short_line_thr") == "above"
    assert dropped_side("c4/min_num_sentences") == "below"
    assert dropped_side("gopher_quality/max_symbol_word_ratio (...)") == "above"
    assert dropped_side("language/confidence") is None and dropped_side("c4/lorem_ipsum") is None
    # Whatever the side said, the rule itself drops a value past its threshold on that side, and keeps one at it.
    for name, rule in THRESHOLD_RULES.items():
        family, _, rule_name = name.partition("/")
        limits = thresholds_of(family, DEFAULT_THRESHOLDS)
        threshold = limits[rule.threshold or rule.name]
        past = threshold - 0.5 if dropped_side(name) == "below" else threshold + 0.5
        assert rule.drop(family, past, limits) is not None and rule.drop(family, threshold, limits) is None, name


def test_the_page_shades_the_side_each_rule_drops_and_counts_what_it_drops_and_keeps():
    records = [staged({NON_ALPHA: value, "gopher_quality/max_avg_word_length": length}, "en", tokens)
               for value, length, tokens in ((0.5, 4, 7), (0.85, 12, 5), (0.8, 5, 3))]
    page = signals_html({"signals": section_of(records), "options": {}})
    assert 'data-drops="below"' in page and "dropped: below 0.8" in page
    assert 'data-drops="above"' in page and "dropped: above 10" in page
    # max_non_alpha_words_ratio drops 0.5 (7 tokens), keeps 0.8 and 0.85 (8 tokens).
    assert ('<tr class="dropped" style="background:#fdecea"><th>dropped: below 0.8</th><td class="n">1</td>'
            '<td class="n">7</td></tr><tr class="kept"><th>kept: at or above 0.8</th><td class="n">2</td>'
            '<td class="n">8</td></tr>') in page


@given(st.lists(st.tuples(st.dictionaries(st.sampled_from([NON_ALPHA, "c4/lorem_ipsum", "language/score",
                                                           "fineweb/line_punct_thr", "dedup/exact_cluster"]),
                                          st.floats(-1, 1e6, allow_nan=False), min_size=1),
                          st.sampled_from(["en", "de", ""]), st.integers(0, 10_000)), max_size=30))
def test_a_shards_documents_added_up_at_once_tally_as_each_alone(pages):
    # CompressWrite adds a shard's documents to one SignalTally, made into the report's keys at the shard's end.
    shard, alone, at_once = SignalTally(THRESHOLDS), Counter(), Counter()
    for signals, language, tokens in pages:
        alone.update(tally_record(staged(signals, language, tokens), THRESHOLDS))
        tally_record(staged(signals, language, tokens), THRESHOLDS, at_once, shard)
    # Key for key, those of no tokens too (the report lists their bins).
    assert dict(shard.add_to(at_once)) == dict(alone)


def one_at_a_time(pages: list[tuple[dict, str, int]], thresholds: dict) -> Counter:
    """The histograms' keys as the rules define them, a document and a signal at a time (`bin_of`, and the side
    of the threshold as compared), for the shard's arrays to be checked against."""
    tally = Counter()
    for signals, language, tokens in pages:
        for name, value in signals.items():
            named = threshold_name(name)
            threshold = thresholds.get(named) if named is not None else None
            per_language = name.partition("/")[0] in ("gopher_repetition", "gopher_quality", "fineweb")
            side = None if threshold is None else ("above" if value > threshold else "at" if value >= threshold
                                                   else "below")
            for where in dict.fromkeys((ALL_LANGUAGES, (language or "none") if per_language else ALL_LANGUAGES)):
                tally[(BIN_KEY, name, where, "documents", bin_of(value))] += 1
                tally[(BIN_KEY, name, where, "tokens", bin_of(value))] += tokens
                if side is not None:
                    tally[(SIDE_KEY, name, where, "documents", side)] += 1
                    tally[(SIDE_KEY, name, where, "tokens", side)] += tokens
    return tally


EDGE_VALUES = [*EDGES, -0.0, -1.0, 0.8, 10.0, float("inf"), float("-inf"), float("nan"), 2.0 ** 41, 1e-300]


@given(st.lists(st.tuples(st.dictionaries(st.sampled_from([NON_ALPHA, "c4/lorem_ipsum", "language/score",
                                                           "fineweb/line_punct_thr", "gopher_quality/min_doc_words",
                                                           "dedup/exact_cluster"]),
                                          st.one_of(st.sampled_from(EDGE_VALUES), st.floats(),
                                                    st.integers(-5, 10 ** 6)),
                                          min_size=1),
                          st.sampled_from(["en", "de", "", "*", "none"]), st.integers(0, 2 ** 40)), max_size=30))
def test_a_shards_bins_and_sides_are_each_documents_as_the_rules_define_them(pages):
    shard = SignalTally(THRESHOLDS)
    for signals, language, tokens in pages:
        shard.add(signals, language, tokens)
    assert dict(shard.add_to(Counter())) == dict(one_at_a_time(pages, THRESHOLDS))
