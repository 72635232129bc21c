"""C4's rules (Raffel et al. 2020, section 2.2, and its reference code), at datatrove 0.10's defaults.

Line rules (a failing line is removed, the rest of the page kept): a word longer than 1,000 characters, no
terminal punctuation (`. ? ! " '`, and not an ellipsis; off in FineWeb's recipe), fewer than 3 words,
"javascript", a cookie or terms-of-use phrase. Wikipedia-style citations (`[1]`, `[edit]`, `[citation needed]`)
are removed from the lines kept. Page rules (the page is dropped): "lorem ipsum" or a `{` in a line that the line
rules before them kept, and fewer than 5 sentences in the lines kept.
"""

from __future__ import annotations

import re
from collections import Counter

from transforms.stages.filters.verdict import Drop, Outcome
from transforms.stages.filters.words import count_sentences

RULE_SET = "c4"
DEFAULTS = {"max_word_length": 1000, "min_words_per_line": 3, "min_num_sentences": 5}
CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
END_PUNCTUATION = (".", "?", "!", '"', "'")
ELLIPSIS = "..."
POLICY_PHRASES = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")


def c4(text: str, thresholds: dict, terminal_punctuation: bool = True) -> Outcome:
    """`text` with C4's failing lines removed, or dropped by a page rule. `terminal_punctuation`: apply the
    terminal-punctuation line rule (FineWeb's recipe leaves it out)."""
    limits = dict(DEFAULTS, **thresholds)
    removed: Counter = Counter()
    kept: list[str] = []
    sentences = 0
    for line in text.splitlines():
        line = line.strip()
        words = line.split()
        if any(len(word) > limits["max_word_length"] for word in words):
            removed["max_word_length"] += 1
            continue
        line = CITATION.sub("", line)
        if terminal_punctuation and (not line.endswith(END_PUNCTUATION) or line.endswith(ELLIPSIS)):
            removed["terminal_punctuation"] += 1
            continue
        if len(words) < limits["min_words_per_line"]:
            removed["min_words_per_line"] += 1
            continue
        lowered = line.lower()
        if "lorem ipsum" in lowered:
            return Outcome(text, Drop(RULE_SET, "lorem_ipsum", 1, 0), removed)
        if "javascript" in lowered:
            removed["javascript"] += 1
            continue
        if "{" in line:
            return Outcome(text, Drop(RULE_SET, "curly_bracket", 1, 0), removed)
        if any(phrase in lowered for phrase in POLICY_PHRASES):
            removed["policy"] += 1
            continue
        sentences += count_sentences(line)
        kept.append(line)
    if sentences < limits["min_num_sentences"]:
        return Outcome(text, Drop(RULE_SET, "min_num_sentences", sentences, limits["min_num_sentences"]), removed)
    return Outcome("\n".join(kept).strip(), None, removed)
