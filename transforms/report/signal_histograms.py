"""The distribution of each signal over the corpus (`doc.signals`, --annotate), for report.html's "look before
choosing": a histogram of documents and tokens, and exact counts each side of the rule's threshold.

Every signal has the same fixed bins (`EDGES`): 20 of 0.05 from 0 to 1 (shares, scores; the last holds 1), then
one per power of two from 1 (exclusive) to 2**40 (counts, lengths, ratios over 1); a value below 0 is counted in the
first bin, one from the last edge on in the last. So a histogram is a few dozen numbers whatever the corpus, summed
like every tally of the report (`SignalTally`, per written shard; `stage.SumCounters`).

A signal named after a rule, `FAMILY/RULE` (`gopher_quality/max_non_alpha_words_ratio`), has the threshold
`FAMILY.RULE` of the build's `--quality-threshold` values (a rule measured twice, `max_symbol_word_ratio (#)`
and `(...)`, has its one threshold): the documents and tokens below it, at it and above it are counted exactly,
not read off the bins. Which side a rule drops is the rule's (`dropped_side`, from its definition: the `min_*` rules
and `max_non_alpha_words_ratio` and `line_punct_thr` drop below, the others above; a value at the threshold is
kept). The rules of Gopher and FineWeb depend on the page's language (words only count in languages written with
spaces, stop words only in English): their signals are counted per language too.
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np

from transforms.stages.filters import fineweb, gopher
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS
from transforms.stages.filters.signals import THRESHOLD_RULES

SHARE_BINS = 20
EDGES = tuple(step / SHARE_BINS for step in range(SHARE_BINS + 1)) + tuple(float(2 ** power) for power in range(1, 41))
BINS = len(EDGES) - 1
_EDGES = np.array(EDGES)
# The families whose rules depend on the page's language.
LANGUAGE_DEPENDENT = (gopher.REPETITION, gopher.QUALITY, fineweb.RULE_SET)
# The histogram of every document, beside those per language.
ALL_LANGUAGES = "*"
SIDES = ("below", "at", "above")
# Tally keys: (BIN_KEY, signal, language, measure, bin) and (SIDE_KEY, signal, language, measure, side).
BIN_KEY, SIDE_KEY = "signal_bin", "signal_side"


def bin_of(value: float) -> int:
    """The bin of `value` (`bins_of`)."""
    return int(bins_of(np.float64(value)))


def threshold_name(signal: str) -> str | None:
    """The `--quality-threshold` name of a signal named after a rule (`FAMILY/RULE`), or None."""
    family, _, rule = signal.partition("/")
    name = f"{family}.{rule.split(' (')[0]}"
    return name if name in DEFAULT_THRESHOLDS else None


@functools.lru_cache(maxsize=1024)
def _counted(signal: str) -> tuple[str | None, bool]:
    """A signal's threshold name (`threshold_name`), and whether it is counted per language: the same for every
    document, so found once per name (a build has a few dozen)."""
    return threshold_name(signal), signal.partition("/")[0] in LANGUAGE_DEPENDENT


def dropped_side(signal: str) -> str | None:
    """The side of its threshold that the rule of a signal named after it drops ("below" or "above", from the rule's
    definition: `max_non_alpha_words_ratio` drops below), or None for a signal of no rule with a threshold."""
    rule = THRESHOLD_RULES.get(signal)
    return rule.dropped_side if rule is not None and threshold_name(signal) is not None else None


class SignalTally:
    """What written documents add to the signals' histograms: per signal, its bin and its side of the threshold, in
    documents and tokens, for every document and (for rules that depend on it) for its language. A shard adds up
    thousands of documents of a few dozen signals each: `add` keeps a document's values as they are (its signals'
    names once per set of names, most documents having the same), and `add_to` bins and counts each signal's values
    at once (`bins_of`; the side as `value >= threshold` plus `value > threshold`) into the report's keys
    (`BIN_KEY`, `SIDE_KEY`; every document's under `ALL_LANGUAGES`, beside its language's where the signal is
    counted per language)."""

    def __init__(self, thresholds: dict):
        self._thresholds = thresholds
        # The documents' languages and tokens, in the order added; and by their signals' names (a tuple), the
        # values of each document that has those, and its index.
        self._languages: list[str] = []
        self._tokens: list[int] = []
        self._by_names: dict[tuple, tuple[list, list]] = {}

    def add(self, signals: dict[str, float], language: str, tokens: int) -> None:
        names = tuple(signals)
        documents = self._by_names.get(names)
        if documents is None:
            documents = self._by_names[names] = ([], [])
        documents[0].append(tuple(signals.values()))
        documents[1].append(len(self._languages))
        self._languages.append(language or "none")
        self._tokens.append(tokens)

    def add_to(self, tally: Counter) -> Counter:
        """`tally` with the histograms added, in the report's keys."""
        if not self._languages:
            return tally
        languages, language_of = np.unique(np.array(self._languages, dtype=object), return_inverse=True)
        # Where a signal is not counted per language: one language more, every document's.
        names_of_languages = [*languages.tolist(), ALL_LANGUAGES]
        tokens = np.array(self._tokens, dtype=np.int64)
        for names, (rows, indexes) in self._by_names.items():
            self._add_documents(tally, names, np.array(rows, dtype=np.float64).reshape(len(rows), len(names)),
                                language_of[indexes], tokens[indexes], names_of_languages)
        return tally

    def _add_documents(self, tally: Counter, names: tuple, values: np.ndarray, languages: np.ndarray,
                       tokens: np.ndarray, names_of_languages: list[str]) -> None:
        """Documents of the same signals (`names`; `values`: a row each, a column a signal) added to `tally`'s
        keys, as a document at a time would add them: each (signal, language, bin, side) met, its documents and
        tokens (0 tokens too), and every language's under `ALL_LANGUAGES` as well."""
        counted = [_counted(name) for name in names]
        thresholds = np.array([np.nan if named is None or self._thresholds.get(named) is None
                               else self._thresholds[named] for named, _ in counted])
        per_language = np.array([per_language for _, per_language in counted])
        sides = np.where(np.isnan(thresholds), 0, (values >= thresholds).astype(np.int64) + (values > thresholds))
        where = np.where(per_language, languages[:, None], len(names_of_languages) - 1)
        # (signal, language, bin, side) as one number.
        places = (((np.arange(len(names)) * len(names_of_languages) + where) * BINS + bins_of(values)) * len(SIDES)
                  + sides)
        met, met_of = np.unique(places.ravel(), return_inverse=True)
        documents = np.bincount(met_of, minlength=len(met))
        token_sums = np.zeros(len(met), dtype=np.int64)
        np.add.at(token_sums, met_of, np.repeat(tokens, len(names)))
        for place, count, summed in zip(met.tolist(), documents.tolist(), token_sums.tolist()):
            rest, side = divmod(place, len(SIDES))
            rest, at = divmod(rest, BINS)
            column, language = divmod(rest, len(names_of_languages))
            name, has_side = names[column], not np.isnan(thresholds[column])
            for where_counted in {ALL_LANGUAGES: None, names_of_languages[language]: None}:
                tally[(BIN_KEY, name, where_counted, "documents", at)] += count
                tally[(BIN_KEY, name, where_counted, "tokens", at)] += summed
                if has_side:
                    tally[(SIDE_KEY, name, where_counted, "documents", SIDES[side])] += count
                    tally[(SIDE_KEY, name, where_counted, "tokens", SIDES[side])] += summed


def bins_of(values: np.ndarray) -> np.ndarray:
    """The bin of each value: [EDGES[i], EDGES[i + 1]), but the last share bin holds 1 too (a share of 1 is a share:
    [0.95, 1]); the first and last bins are open below and above."""
    found = np.searchsorted(_EDGES, values, side="right") - 1
    return np.clip(np.where(values > 1, found, np.minimum(found, SHARE_BINS - 1)), 0, BINS - 1)


def signals_section(tally: Counter, thresholds: dict) -> dict:
    """report.json's `signals`: the bins' edges, and per signal its threshold (name and value; None: no rule's)
    and per language (`*`: all) the documents and tokens per bin (sparse: by the bin's index) and each side."""
    by_signal: dict[str, dict] = {}
    for key, amount in sorted(tally.items()):
        if key[0] not in (BIN_KEY, SIDE_KEY):
            continue
        kind, name, language, measure, place = key
        named = threshold_name(name)
        signal = by_signal.setdefault(name, {"threshold_name": named, "threshold": thresholds.get(named),
                                             "languages": {}})
        counts = signal["languages"].setdefault(language, {"documents": {}, "tokens": {},
                                                           **({side: {"documents": 0, "tokens": 0} for side in SIDES}
                                                              if named is not None else {})})
        if kind == BIN_KEY:
            counts[measure][str(place)] = amount
        else:
            counts[place][measure] = amount
    return {"edges": list(EDGES), "by_signal": by_signal}
