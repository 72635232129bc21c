"""What the quality rules count in a text: its words, its sentences, its terminal punctuation, its repeats.

`split_words` follows the tokenization the reference rules count with (spaCy's blank English tokenizer, which
datatrove 0.10 uses for English): whitespace-separated chunks, punctuation split off as tokens of its own,
`n't` and `'s`-style clitics split from their word, hyphens between letters split, while URLs, numbers with
separators (`1,000`, `3.14`, `10:30`) and dotted abbreviations (`U.S.`) stay whole. It is an approximation, good
enough for thresholds on counts and shares (the benchmark measures how good).
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"""
    (?:https?://|www\.)\S*[^\s.,;:!?)\]'"]      # a URL, without the punctuation after it
  | \d+(?:[.,:/]\d+)+                           # a number with separators
  | (?:[^\W\d_]\.){2,}                          # a dotted abbreviation
  | \w+?(?=n['’]t\b)                            # the word of a negative contraction (do of don't)
  | n['’]t\b
  | (?<=\w)['’](?:s|m|d|ll|re|ve|S|M|D|LL|RE|VE)\b  # a clitic
  | \w+
  | \.{2,} | …
  | [^\w\s]
""", re.VERBOSE)

# The characters that end a sentence, in the scripts that use them (Unicode's Sentence_Terminal, the common part).
SENTENCE_TERMINALS = frozenset(
    ".!?\u203c\u203d\u2047\u2048\u2049\u2e2e\u2e3c\u3002\uff01\uff0e\uff1f\uff61\ufe52\ufe56\ufe57"
    "\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0837\u0839\u083d\u083e\u0964\u0965"
    "\u104a\u104b\u1362\u1367\u1368\u166e\u1735\u1736\u1803\u1809\u1944\u1945\u17d4\u17d5\u1aa8\u1aa9\u1aaa\u1aab"
    "\u1b5a\u1b5b\u1b5e\u1b5f\u1c3b\u1c3c\u1c7e\u1c7f\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce\ua8cf"
    "\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1\uabeb")


def split_words(text: str) -> list[str]:
    """The tokens of `text`: words, numbers and punctuation marks (see the module's docstring)."""
    return _TOKEN.findall(text)


def is_symbol(character: str) -> bool:
    """Whether a character is punctuation, a symbol or a control character (not a letter, digit or mark)."""
    return unicodedata.category(character)[0] in "PSC"


def is_symbol_word(word: str) -> bool:
    return all(map(is_symbol, word))


def ends_sentence(text: str) -> bool:
    """Whether `text` ends with a sentence terminal."""
    return bool(text) and text[-1] in SENTENCE_TERMINALS


def count_sentences(text: str) -> int:
    """Sentences in `text`: a new one starts at each token after a terminal mark that is not itself one."""
    tokens = split_words(text)
    if not tokens:
        return 0
    starts = 1
    for before, token in zip(tokens, tokens[1:]):
        if before in SENTENCE_TERMINALS and token not in SENTENCE_TERMINALS:
            starts += 1
    return starts


def duplicates(items: list[str]) -> tuple[int, int]:
    """How many of `items` repeat an earlier one, and their characters."""
    seen: set[str] = set()
    count = characters = 0
    for item in items:
        if item in seen:
            count += 1
            characters += len(item)
        else:
            seen.add(item)
    return count, characters


# Languages written without spaces between words: word-based rules mean nothing on them.
UNSPACED_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "dz", "wuu", "yue"})


def is_spaced(language: str) -> bool:
    """Whether a page in `language` ("" when not identified) is written with spaces between words."""
    return language not in UNSPACED_LANGUAGES
