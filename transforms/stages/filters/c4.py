"""C4's rules (Raffel et al. 2020, section 2.2, and its reference code), at datatrove 0.10's defaults.

Line rules (a failing line is removed, the rest of the page kept): a word longer than 1,000 characters, no
terminal punctuation (`. ? ! " '`, and not an ellipsis; off in FineWeb's recipe), fewer than 3 words,
"javascript", a cookie or terms-of-use phrase. Wikipedia-style citations (`[1]`, `[edit]`, `[citation needed]`)
are removed from the lines kept. Page rules (the page is dropped): "lorem ipsum" or a `{` in a line that the line
rules before them kept, and fewer than 5 sentences in the lines kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from transforms import native
from transforms.stages.filters.verdict import Drop, Outcome, Rule
from transforms.stages.filters.words import SENTENCE_ARGUMENTS, count_sentences

RULE_SET = "c4"
DEFAULTS = {"max_word_length": 1000, "min_words_per_line": 3, "min_num_sentences": 5}
CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
END_PUNCTUATION = (".", "?", "!", '"', "'")
ELLIPSIS = "..."
LOREM_IPSUM, JAVASCRIPT = "lorem ipsum", "javascript"
POLICY_PHRASES = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")
# What every policy phrase holds one of: a line without any is passed over fastest.
POLICY_WORDS = _POLICY, _COOKIE, _TERMS = ("policy", "cookie", "terms of use")
LINE_RULES = ("max_word_length", "terminal_punctuation", "min_words_per_line", "javascript", "policy")
# Page rules met on a line: the page is dropped at the first line one is met on (on one line, in this order).
PAGE_RULES = ("lorem_ipsum", "curly_bracket")
MIN_NUM_SENTENCES = Rule("min_num_sentences", minimum=True)


@dataclass
class Scan:
    """C4's line rules over a text: the lines kept (citations removed), the lines removed by each line rule (their
    indexes in the text's lines), the sentences of the lines kept, and the line (counted from 1) each page rule is
    first met on, 0 when never."""

    kept: list[str] = field(default_factory=list)
    removed: dict[str, list[int]] = field(default_factory=lambda: {rule: [] for rule in LINE_RULES})
    sentences: int = 0
    met: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PAGE_RULES, 0))

    @property
    def text(self) -> str:
        return "\n".join(self.kept).strip()

    def meet(self, rule: str, index: int) -> None:
        """Page rule `rule` is met on line `index` (counted from 0): kept if the first."""
        self.met[rule] = self.met[rule] or index + 1

    def values(self) -> dict[str, float]:
        """What C4's rules measured, by rule: the page rules' lines met on, the sentences kept, and, under
        `lines_removed/RULE`, the count of lines each line rule removes."""
        return {**self.met, "min_num_sentences": self.sentences,
                **{f"lines_removed/{rule}": len(lines) for rule, lines in self.removed.items()}}


_words = native.load("_words")
# What the C scan (`transforms.native._words.c4_scan`) is told of the rules: the phrases it looks for in a line's lower
# case, the ends a line needs and the one it must not end with, the policy phrases' words; and its flags.
_C_MARKS = (LOREM_IPSUM, JAVASCRIPT, POLICY_PHRASES, END_PUNCTUATION, ELLIPSIS, POLICY_WORDS)
_TERMINAL_PUNCTUATION, _UNTIL_PAGE_RULE, _SENTENCES = 1, 2, 4


def scan(text: str, limits: dict, terminal_punctuation: bool = True, until_page_rule: bool = True,
         sentences: bool = True) -> Scan:
    """C4's line rules over `text` (`limits`: every C4 threshold). `until_page_rule`: stop at the first line a page
    rule is met on (the page is dropped there); else scan every line, the page rules only recording where they are
    met first. `terminal_punctuation`: apply the terminal-punctuation line rule (FineWeb's recipe leaves it out).
    `sentences`: count the sentences of the lines kept (a selection, which only needs the lines, does not). In C
    where it is built (`_words.c4_scan`: the same scan, line for line, without a Python step a line)."""
    if _words is None:
        return python_scan(text, limits, terminal_punctuation, until_page_rule, sentences)
    flags = (terminal_punctuation and _TERMINAL_PUNCTUATION) | (until_page_rule and _UNTIL_PAGE_RULE) | (
        sentences and _SENTENCES)
    fewest = limits["min_words_per_line"]
    kept, removed, sentence_count, lorem_ipsum, curly_bracket = _words.c4_scan(
        text, float(limits["max_word_length"]), float(fewest), max(math.ceil(fewest), 0), flags,
        remove_citations, _C_MARKS, SENTENCE_ARGUMENTS)
    return Scan(kept, dict(zip(LINE_RULES, removed)), sentence_count,
                {"lorem_ipsum": lorem_ipsum, "curly_bracket": curly_bracket})


def remove_citations(line: str) -> str:
    """`line` without its Wikipedia-style citations (`CITATION`), as C4 keeps a line."""
    return CITATION.sub("", line)


def python_scan(text: str, limits: dict, terminal_punctuation: bool = True, until_page_rule: bool = True,
                sentences: bool = True) -> Scan:
    """`scan`'s pure path."""
    result = Scan()
    longest, fewest = limits["max_word_length"], limits["min_words_per_line"]
    # A line has fewer than `fewest` words when splitting off at most `split` of them leaves fewer parts.
    split = max(math.ceil(fewest), 0)
    # (Bound once: a page has hundreds of lines, and the selection scans every page it keeps.)
    long_word, no_end, few, javascript, policy = (result.removed[rule] for rule in LINE_RULES)
    kept = result.kept
    for index, line in enumerate(text.splitlines()):
        line = line.strip()
        # (No word of a line that short can be over the limit: most lines are not looked at word by word.)
        if len(line) > longest and max(map(len, line.split())) > longest:
            long_word.append(index)
            continue
        few_words = len(line.split(None, split)) < fewest
        if "[" in line:
            line = remove_citations(line)
        if terminal_punctuation and (not line.endswith(END_PUNCTUATION) or line.endswith(ELLIPSIS)):
            no_end.append(index)
            continue
        if few_words:
            few.append(index)
            continue
        lowered = line.lower()
        if LOREM_IPSUM in lowered:
            result.meet("lorem_ipsum", index)
            if until_page_rule:
                return result
        if JAVASCRIPT in lowered:
            javascript.append(index)
            continue
        if "{" in line:
            result.meet("curly_bracket", index)
            if until_page_rule:
                return result
        if (_POLICY in lowered or _COOKIE in lowered or _TERMS in lowered) and any(
                phrase in lowered for phrase in POLICY_PHRASES):
            policy.append(index)
            continue
        if sentences:
            result.sentences += count_sentences(line)
        kept.append(line)
    return result


def decide(values: dict[str, float], limits: dict) -> Drop | None:
    """C4's page decision from what its rules measured (`Scan.values`): the page rule met on the earliest line (a
    drop reported as 1 against 0, as met), else too few sentences."""
    met = [(values[rule], order, rule) for order, rule in enumerate(PAGE_RULES) if values.get(rule)]
    if met:
        return Drop(RULE_SET, min(met)[2], 1, 0)
    return MIN_NUM_SENTENCES.drop(RULE_SET, values["min_num_sentences"], limits)


def c4(text: str, thresholds: dict, terminal_punctuation: bool = True) -> Outcome:
    """`text` with C4's failing lines removed, or dropped by a page rule. `terminal_punctuation`: apply the
    terminal-punctuation line rule (FineWeb's recipe leaves it out)."""
    limits = dict(DEFAULTS, **thresholds)
    result = scan(text, limits, terminal_punctuation)
    removed = Counter({rule: len(lines) for rule, lines in result.removed.items() if lines})
    drop = decide(result.values(), limits)
    return Outcome(text if drop else result.text, drop, removed)
