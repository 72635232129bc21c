"""What the quality rules count in a text: its words, its sentences, its terminal punctuation, its repeats.

`split_words` follows the tokenization the reference rules count with (spaCy's blank English tokenizer, which
datatrove 0.10 uses for English): whitespace-separated chunks, punctuation split off as tokens of its own,
`n't` and `'s`-style clitics split from their word, hyphens between letters split, while URLs, numbers with
separators (`1,000`, `3.14`, `10:30`) and dotted abbreviations (`U.S.`) stay whole. It is an approximation, good
enough for thresholds on counts and shares (the benchmark measures how good).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

from transforms import native

# spaCy's English tokenizer, as its rules read: each whitespace-separated chunk loses prefixes and suffixes one
# at a time (punctuation, quotes, brackets, currency; a final period only after a digit, a lower-case letter,
# punctuation or two capitals; units after a number), then splits at infixes (ellipses, hyphens and `:<>=/`
# between letters, a comma between letters, a period between a lower-case and a capital letter, arithmetic
# between digits); URLs, dotted abbreviations and the usual abbreviations (`Mr.`, `Oct.`) stay whole, and
# contractions split (`do` `n't`, `I` `'ve`).
_PUNCTUATION = set("…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉⟦⟧")
_PREFIXES = _PUNCTUATION | set("§%=—–$£€¥")
_SUFFIXES = _PUNCTUATION | set("—–")
_UNITS = re.compile(r"(?<=[0-9])(?:km|m|cm|mm|kg|g|mg|lb|oz|mph|km/h|MB|KB|GB|TB|gb|mb|kb|tb|T|G|M|K|%|[$£€¥₽₹])$")
_ELLIPSIS_END = re.compile(r"(?:\.\.+|…+)$")
_ELLIPSIS_START = re.compile(r"^(?:\.\.+|…+)")
_PERIOD_SUFFIX = re.compile(r"(?:(?<=[0-9a-zß-öø-ÿа-яё%²\-+…,:;!?'\"”’)\]])|(?<=[A-ZÀ-ÖØ-ÞА-ЯЁ][A-ZÀ-ÖØ-ÞА-ЯЁ]))\.$")
_CLITIC = re.compile(r"^(.+?)(n['’]t|['’](?:s|S|m|M|d|D|ll|LL|re|RE|ve|VE))$")
_LETTER = r"[^\W\d_]"
_INFIX = re.compile(rf"""
    \.\.+ | … | [\u2190-\u2bff\U0001F000-\U0001FAFF]
  | (?<=[0-9])[+\-*^](?=[0-9-])
  | (?<=[a-zß-öø-ÿа-яё'"”’])\.(?=[A-ZÀ-ÖØ-ÞА-ЯЁ'"”’])
  | (?<={_LETTER}),(?={_LETTER})
  | (?<=[^\W_])(?:---|--|——|-|–|—|~)(?={_LETTER})
  | (?<=[^\W_])[:<>=/](?={_LETTER})
""", re.VERBOSE)
_WHOLE = re.compile(r"^(?:(?:https?://|www\.)\S*[\w/]|[\w.-]+\.[a-z]{2,}/\S*[\w/]|(?:[^\W\d_]\.){2,}|[^\W\d_]\."
                    r"|\S+@\S+\.\w+|and/or)$")
# Contractions written without their apostrophe, split as with it.
_RUN_TOGETHER = {"cannot": ["can", "not"], "Cannot": ["Can", "not"], "Ive": ["I", "ve"], "Im": ["I", "m"],
                 "dont": ["do", "nt"], "Dont": ["Do", "nt"], "doesnt": ["does", "nt"], "didnt": ["did", "nt"],
                 "cant": ["ca", "nt"], "wont": ["wo", "nt"], "isnt": ["is", "nt"], "wasnt": ["was", "nt"]}
ABBREVIATIONS = frozenset(
    "Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Sept. Oct. Nov. Dec. Mr. Mrs. Ms. Dr. Prof. St. Mt. Jr. Sr. Inc. Corp. "
    "Ltd. Co. co. vs. etc. Gov. Gen. Rep. Sen. Rev. Bros. Messrs. No. a.m. p.m. e.g. i.e. Ph.D.".split())


_POSSESSIVE = re.compile(r"['’][sS]$")
_LAST = re.compile(".$", re.S)


# The tokens of the chunks seen last: words repeat across a page and its lines (the rules tokenize a text whole, then
# C4 its lines, then FineWeb what C4 kept), and across pages, so most chunks are split once.
@functools.lru_cache(maxsize=1 << 16)
def _split_chunk(chunk: str) -> tuple[str, ...]:
    if chunk.isalpha():
        # Most chunks: a word of letters alone has no affix to split (nor a unit after a number).
        return tuple(_RUN_TOGETHER.get(chunk) or [chunk])
    prefixes: list[str] = []
    suffixes: list[str] = []
    while chunk and not (chunk in ABBREVIATIONS or _WHOLE.match(chunk)):
        if ellipsis := _ELLIPSIS_START.match(chunk):
            prefixes.append(ellipsis.group()); chunk = chunk[ellipsis.end():]; continue
        if chunk[0] in _PREFIXES or (chunk[0] == "+" and not chunk[1:2].isdigit()):
            if len(chunk) == 1:
                break
            prefixes.append(chunk[0]); chunk = chunk[1:]; continue
        if len(chunk) > 1:
            found = (_ELLIPSIS_END.search(chunk) or _UNITS.search(chunk) or _PERIOD_SUFFIX.search(chunk)
                     or (_POSSESSIVE.search(chunk) if len(chunk) > 2 else None))
            if found is None and (chunk[-1] in _SUFFIXES or (chunk[-1] == "+" and chunk[-2].isdigit())):
                found = _LAST.search(chunk)
            if found is not None and found.start() > 0:
                suffixes.insert(0, found.group()); chunk = chunk[:found.start()]; continue
        break
    middle: list[str] = []
    if chunk:
        if chunk in ABBREVIATIONS or _WHOLE.match(chunk):
            middle = [chunk]
        elif chunk in _RUN_TOGETHER:
            middle = _RUN_TOGETHER[chunk]
        elif clitic := _CLITIC.match(chunk):
            middle = [clitic.group(1), clitic.group(2)]
        else:
            start = 0
            for infix in _INFIX.finditer(chunk):
                if infix.start() > start:
                    middle.append(chunk[start:infix.start()])
                if infix.end() > infix.start():
                    middle.append(infix.group())
                start = infix.end()
            if start < len(chunk):
                middle.append(chunk[start:])
    return (*prefixes, *middle, *suffixes)


# The characters that end a sentence, in the scripts that use them (Unicode's Sentence_Terminal, the common part).
SENTENCE_TERMINALS = frozenset(
    ".!?\u203c\u203d\u2047\u2048\u2049\u2e2e\u2e3c\u3002\uff01\uff0e\uff1f\uff61\ufe52\ufe56\ufe57"
    "\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0837\u0839\u083d\u083e\u0964\u0965"
    "\u104a\u104b\u1362\u1367\u1368\u166e\u1735\u1736\u1803\u1809\u1944\u1945\u17d4\u17d5\u1aa8\u1aa9\u1aaa\u1aab"
    "\u1b5a\u1b5b\u1b5e\u1b5f\u1c3b\u1c3c\u1c7e\u1c7f\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce\ua8cf"
    "\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1\uabeb")


_words = native.load("_words")
# What the C split (`transforms.native._words`) is told of split_chunk's rules: the characters split off the end of
# a word, and the letters after which a final period is (from _PERIOD_SUFFIX itself).
_SUFFIX_CHARACTERS = frozenset(_SUFFIXES)
_PERIOD_AFTER = frozenset(letter for letter in map(chr, range(0x3000)) if letter.isalpha()
                          and _PERIOD_SUFFIX.search(letter + "."))
# Its arguments after the text, the same for every call.
_C_RULES = (_split_chunk, _RUN_TOGETHER, _SUFFIX_CHARACTERS, _PERIOD_AFTER, ABBREVIATIONS)
# ... and to count sentences (C4's line scan counts those of the lines it keeps with them, `c4.scan`).
SENTENCE_ARGUMENTS = (*_C_RULES, SENTENCE_TERMINALS)


def python_split_words(text: str) -> tuple[str, ...]:
    """`split_words`' pure path: every chunk through `_split_chunk`'s cache."""
    return tuple(itertools.chain.from_iterable(map(_split_chunk, text.split())))


@functools.lru_cache(maxsize=4)
def split_words(text: str) -> tuple[str, ...]:
    """The tokens of `text`: words, numbers and punctuation marks (see the module's docstring). The last few
    texts' are kept: rule sets count the words of one text several times. (In C, `transforms.native._words`,
    a chunk of letters alone is its own token without a call: the same tokens.)"""
    if _words is None:
        return python_split_words(text)
    return _words.split_words(text, *_C_RULES)


def count_words(text: str) -> int:
    """`len(split_words(text))`; in C without making the tokens (FineWeb counts the words of the text C4 kept)."""
    if _words is None:
        return len(split_words(text))
    return _words.count_words(text, *_C_RULES)


def is_symbol(character: str) -> bool:
    """Whether a character is punctuation, a symbol or a control character (not a letter, digit or mark)."""
    return unicodedata.category(character)[0] in "PSC"


def is_symbol_word(word: str) -> bool:
    return all(map(is_symbol, word))


def ends_sentence(text: str) -> bool:
    """Whether `text` ends with a sentence terminal."""
    return bool(text) and text[-1] in SENTENCE_TERMINALS


def count_sentences(text: str) -> int:
    """Sentences in `text`: a new one starts at each token after a terminal mark that is not itself one. (In C,
    the tokens are not made: C4 counts the sentences of every line it keeps.)"""
    if _words is not None:
        return _words.count_sentences(text, *SENTENCE_ARGUMENTS)
    return python_count_sentences(text)


def python_count_sentences(text: str) -> int:
    """`count_sentences`' pure path."""
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
