"""MinimizeText: each block keeps letters, digits and a few symbols, lowercased.

Per block of CleanHtml's output, in this order:

1. Unicode NFKC normalization, so that look-alike forms (full-width
   letters, ligatures, `ﬁ`) become the letters they stand for.
2. Characters that are part of a word without being letters are deleted,
   not turned into spaces, so the word stays whole: soft hyphens,
   zero-width characters, the middle dot (`col·legi`) and combining marks
   (`при́вет` -> `привет`).
3. Lowercasing; a kept letter whose lowercase form would not be kept
   (`Ɓ`, whose `ɓ` lies outside the ranges below) keeps its case, so that a
   word of letters stays one word.
4. Typographic variants fold into the kept symbols (`’` -> `'`, `–` -> `-`).
5. Everything that is not a kept character becomes a space; runs of spaces
   collapse; a block left empty is removed.

Kept characters (`KEPT_RANGES`, `KEPT_SYMBOLS`): letters of the Latin and
Cyrillic scripts (with their accented forms), the digits 0-9 and
`& - ' . , : % + @ # $ /`. Other scripts are kept on request (`scripts`,
the `--scripts` option: names of `SCRIPTS`, or `all`); the combining marks
of a kept script's own block (Devanagari vowel signs, Hebrew points) are
then part of its words and stay. `dropped_letter_share` tells, per
document, the share of its letters that were not kept.

How it runs: `minimize_block` applies the rules as written. Text made only
of the characters of a `CodePage` (ASCII plus 128 others: the Western,
Cyrillic and Central European sets of common web text) takes a fast path
instead: for such characters the five rules act on each character alone,
whatever its neighbours, so they are precomputed per character and applied
by one table lookup per character, in C (`_code_page.translate`; its
pure-Python path, `codecs.charmap_encode` and `bytes.translate`, gives the
same bytes: see transforms/native/). Every other text (combining marks, CJK, emoji...) takes the rules as written,
block by block.
"""

from __future__ import annotations

import array
import codecs
import functools
import re
import sys
import unicodedata
from collections import Counter
from itertools import compress, repeat

from transforms import native
from transforms.corpus.blocks import blocks_text, blocks_to_html, html_to_blocks
from transforms.document import Document

KEPT_RANGES = {
    "latin": (
        ("a", "z"), ("A", "Z"), ("\u00c0", "\u00d6"), ("\u00d8", "\u00f6"), ("\u00f8", "\u024f"),
        ("\u1e00", "\u1eff"), ("\u2c60", "\u2c7f"), ("\ua720", "\ua7ff"), ("\uab30", "\uab6f"),
    ),
    "cyrillic": (
        ("\u0400", "\u0482"), ("\u048a", "\u052f"), ("\u1c80", "\u1c8f"), ("\ua640", "\ua66e"),
        ("\ua680", "\ua69d"),
    ),
    "digits": (("0", "9"),),
}
KEPT_SYMBOLS = "&-'.,:%+@#$/"

FOLDS = {
    "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u2032": "'",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-",
}

# The middle dot is the Catalan `l·l` (and what NFKC makes of `ŀ`).
WORD_INTERNAL = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e", "\u00b7"}


def _character_class(ranges, symbols: str) -> str:
    parts = [f"{re.escape(low)}-{re.escape(high)}" for low, high in ranges]
    parts.extend(re.escape(symbol) for symbol in symbols)
    return "".join(parts)


# Spans without combining marks (CJK ideographs, Hangul syllables,
# surrogates, private use, the unassigned planes 4-13): passed over, they cut
# the scan for marks, which every worker process makes at import, by 6x.
# `test_minimize_text` checks it against the scan of every code point.
SPANS_WITHOUT_MARKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xD800, 0xF8FF), (0x20000, 0xDFFFF),
                       (0xF0000, 0x10FFFF))


def _marks(spans_without_marks=SPANS_WITHOUT_MARKS) -> list[str]:
    """The combining marks (categories Mn and Me) from U+0300 on."""
    marks = []
    start = 0x300
    for low, high in (*spans_without_marks, (sys.maxunicode + 1, sys.maxunicode + 1)):
        marks.extend(character for character in map(chr, range(start, low))
                     if unicodedata.category(character) in ("Mn", "Me"))
        start = max(start, high + 1)
    return marks


@functools.lru_cache(maxsize=1)
def _word_internal_characters() -> str:
    return "".join(sorted(WORD_INTERNAL)) + "".join(_marks())


def minimize_block(block: str, scripts=None) -> str:
    """The rules as written, for one block; `scripts` as in `minimize_blocks`."""
    return script_rules(scripts).minimize_block(block)


# Blocks are minimized a page at a time, joined by newlines; on the fast
# path a newline becomes SEPARATOR, which is no space and no result of the
# rules (they turn U+0001 into a space), so collapsing spaces keeps it.
_NEWLINE = "\n"
SEPARATOR = "\x01"
# Stands for characters outside a code page (and for U+0002 itself, which
# then takes the rules as written too).
MARK = "\x02"
_SPACE_RUNS = re.compile(b"  +")
# `CodePage.lines` in one pass, or None for its pure-Python path.
_code_page = native.load("_code_page")
_MARKING = "webcorpus-minimize-mark"
codecs.register_error(_MARKING, lambda error: (MARK, error.end))


class CodePage:
    """ASCII plus 128 characters, each minimized on its own by one byte map.

    A character qualifies when the rules give the same result for it
    wherever it stands: it is a starter (no combining class) and so is the
    first character of its decomposition, so NFKC never joins it to a
    neighbour, and lowercasing it needs no context. `codepage_is_exact`
    checks every pair of characters of a code page against the rules.
    """

    def __init__(self, name: str, characters: str, rules):
        # `rules`: rules 1-5 without collapsing spaces (`ScriptRules.apply_rules`).
        self.rules = rules
        if len(characters) != 256 or len(set(characters)) != 256 or characters[:128] != "".join(map(chr, range(128))):
            raise ValueError(f"code page {name}: ASCII then 128 distinct characters")
        self.name = name
        self.characters = characters
        self._encoding = codecs.charmap_build(characters)
        # Its characters, a run of them at a time (what lies between them is outside the page).
        self.runs_within = re.compile(f"[{re.escape(characters)}]+")
        table = bytearray(range(256))
        delete = bytearray()
        # Characters whose result is not one character of the code page
        # stand for themselves through the byte map and are replaced at the
        # end (`…` -> `...`, `™` -> `tm`, `½` -> `1 2`).
        self._replacements = []
        singles = set()
        for byte, character in enumerate(characters):
            result = SEPARATOR if character == _NEWLINE else rules(character)
            if not result:
                delete.append(byte)
            elif len(result) == 1 and result in characters:
                table[byte] = characters.index(result)
                singles.add(result)
            else:
                self._replacements.append((character, result))
        self._table = bytes(table)
        self._delete = bytes(delete)
        if _code_page is not None:
            # The same, by code point, for `_code_page.translate`.
            by_code_point = array.array("H", [_code_page.NOT_IN_PAGE]) * 0x10000
            for byte, character in enumerate(characters):
                by_code_point[ord(character)] = _code_page.DELETED if byte in delete else table[byte]
            self._by_code_point = by_code_point.tobytes()
        # For text with other characters too: they are encoded as MARK,
        # which this table keeps, and their blocks take the rules as written.
        table[ord(MARK)] = ord(MARK)
        self._marking_table = bytes(table)
        if _code_page is not None:
            marking = array.array("H", self._by_code_point)
            marking[ord(MARK)] = _code_page.DELETED if ord(MARK) in delete else ord(MARK)
            self._marking_by_code_point = marking.tobytes()
        # A replaced character that is also some character's result would be
        # replaced twice, and a replacement with spaces at its ends would
        # escape their collapsing; a code page with either (none of those
        # below) is not used.
        self.usable = not singles & {character for character, _ in self._replacements} and all(
            result == " ".join(result.split()) for _, result in self._replacements)

    def lines(self, text: str) -> list[str] | None:
        """The minimized non-empty lines of `text`, or None if it has other characters."""
        if not self.usable:
            return None
        if _code_page is None:
            try:
                data = codecs.charmap_encode(text, "strict", self._encoding)[0]
            except UnicodeEncodeError:
                return None
            data = _SPACE_RUNS.sub(b" ", data.translate(self._table, self._delete))
        else:
            # Encoded, translated and its spaces collapsed in one pass.
            data = _code_page.translate(text, self._by_code_point)
            if data is None:
                return None
        return list(filter(None, self._finish(data, None if text.isascii() else self.characters)))

    def marked_lines(self, text: str) -> list[str]:
        """The minimized lines of `text`, empty ones included; those with other characters hold MARK."""
        if _code_page is not None:
            # (A run of other characters is a MARK each, not one: only the lines they are on differ, and those take
            # the rules as written.)
            return self._finish(_code_page.translate(text, self._marking_by_code_point, ord(MARK)), self.characters)
        data = codecs.charmap_encode(text, _MARKING, self._encoding)[0]
        return self._finish(_SPACE_RUNS.sub(b" ", data.translate(self._marking_table, self._delete)), self.characters)

    def _finish(self, data: bytes, decoding) -> list[str]:
        # Only kept characters, single spaces and separators are left: split,
        # strip the lines (stripping each is faster than replacing the spaces
        # next to separators in the whole text).
        result = data.decode("ascii") if decoding is None else codecs.charmap_decode(data, "strict", decoding)[0]
        for character, replacement in self._replacements:
            if character in result:
                result = result.replace(character, replacement)
        return list(map(str.strip, result.split(SEPARATOR), repeat(" ")))



def _context_free(character: str) -> bool:
    decomposed = unicodedata.normalize("NFKD", character)
    return (
        len(character) == 1
        and unicodedata.combining(character) == 0
        and (not decomposed or unicodedata.combining(decomposed[0]) == 0)
        and not 0x1100 <= ord(character) <= 0x11FF  # Hangul jamo compose with their neighbours
        and len(character.lower()) == 1
        and character not in "\u03a3\u03c3\u03c2"  # sigma lowercases by context
    )


def _from_legacy_code_page(name: str, legacy_codec: str, extra: str, rules) -> CodePage:
    """ASCII plus the upper half of a legacy code page, its unassigned bytes filled from `extra`."""
    upper = []
    spare = iter(extra)
    for byte in range(128, 256):
        try:
            character = bytes([byte]).decode(legacy_codec)
        except UnicodeDecodeError:
            character = next(spare)
        # A character the fast path cannot take (none, with the Unicode
        # data of today) gives its byte to a noncharacter, which never
        # occurs in text.
        upper.append(character if _context_free(character) else chr(0xFDD0 + byte - 128))
    return CodePage(name, "".join(map(chr, range(128))) + "".join(upper), rules)


# Ordered by how often web text fits them; the unassigned bytes of the
# legacy code pages hold other characters common in web text.
CODE_PAGE_SOURCES = (
    ("western", "cp1252", "\u2192\u2190\u200b\u2212\ufeff"),
    ("cyrillic", "cp1251", "\u2212"),
    ("central-european", "cp1250", "\u2192\u2190\u200b\u2212\ufeff"),
)
def _fast_lines(text: str, pages: tuple[CodePage, ...]) -> list[str] | None:
    """The minimized non-empty lines of `text`, or None when it needs the rules as written."""
    if text.isascii():
        # The first half of every code page is the same.
        return pages[0].lines(text)
    for page in pages:
        lines = page.lines(text)
        if lines is not None:
            return lines
    return None


def _best_page(text: str, pages: tuple[CodePage, ...]) -> CodePage:
    """The code page that encodes the longest start of `text`."""
    best, reach = pages[0], -1
    for page in pages:
        if page.usable:
            try:
                codecs.charmap_encode(text, "strict", page._encoding)
            except UnicodeEncodeError as error:
                if error.start > reach:
                    best, reach = page, error.start
    return best


def minimize_blocks(blocks: list[str], scripts=None) -> list[str]:
    """The minimized non-empty blocks; `scripts` (see `parse_scripts`): the scripts kept, default Latin and Cyrillic."""
    if not blocks:
        return []
    return _minimize_joined(_NEWLINE.join(blocks), len(blocks), lambda: blocks, script_rules(scripts))


def _minimize_joined(text: str, count: int, blocks, rules: ScriptRules) -> list[str]:
    """`minimize_blocks(blocks())`, given the `count` blocks joined by newlines as `text`."""
    pages, as_written = rules.code_pages, rules.minimize_block
    if text.count(_NEWLINE) == count - 1:
        # The whole page at once: newlines are only between blocks.
        lines = _fast_lines(text, pages)
        if lines is not None:
            return lines
        # Some blocks have characters that no code page has: the best code
        # page marks them, and they take the rules as written.
        lines = _best_page(text, pages).marked_lines(text)
        # (Found without a step of Python per line: most lines of such a page have none. The blocks are the text's
        # lines, as newlines are only between them.)
        marked = list(compress(range(len(lines)), map(str.__contains__, lines, repeat(MARK))))
        if marked:
            blocks_of_lines = text.split(_NEWLINE)
            for index in marked:
                lines[index] = as_written(blocks_of_lines[index])
        return list(filter(None, lines))
    minimized = []
    for block in blocks():
        # A newline inside a block is whitespace: it joins the lines.
        lines = _fast_lines(block, pages)
        block = " ".join(lines) if lines is not None else as_written(block)
        if block:
            minimized.append(block)
    return minimized


def codepage_is_exact(page: CodePage) -> bool:
    """Whether the fast path equals the rules for every pair of the code page's characters (slow: 65,536 pairs)."""
    characters = page.characters
    for first in characters:
        for second in characters:
            pair = first + second
            lines = page.lines(pair)
            if lines is None or " ".join(lines) != " ".join(page.rules(pair).split()):
                return False
            # Spaces are collapsed in the end, but a character's result must
            # not depend on its neighbour even before that.
            if _NEWLINE not in pair and _SPACES.sub(" ", page.rules(first) + page.rules(second)) != page.rules(pair):
                return False
    return True


_SPACES = re.compile(" +")


# Scripts that can be kept besides Latin and Cyrillic (`KEPT_RANGES`): the
# letters, marks and digits (categories L, M, Nd, Nl) of their Unicode blocks.
SCRIPT_BLOCKS = {
    "greek": ((0x370, 0x3FF), (0x1F00, 0x1FFF)),
    "armenian": ((0x530, 0x58F), (0xFB13, 0xFB17)),
    "hebrew": ((0x590, 0x5FF), (0xFB1D, 0xFB4F)),
    "arabic": ((0x600, 0x6FF), (0x750, 0x77F), (0x870, 0x8FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    "devanagari": ((0x900, 0x97F), (0xA8E0, 0xA8FF)),
    "bengali": ((0x980, 0x9FF),),
    "gurmukhi": ((0xA00, 0xA7F),),
    "gujarati": ((0xA80, 0xAFF),),
    "tamil": ((0xB80, 0xBFF),),
    "telugu": ((0xC00, 0xC7F),),
    "kannada": ((0xC80, 0xCFF),),
    "malayalam": ((0xD00, 0xD7F),),
    "thai": ((0xE00, 0xE7F),),
    "lao": ((0xE80, 0xEFF),),
    "georgian": ((0x10A0, 0x10FF), (0x1C90, 0x1CBF), (0x2D00, 0x2D2F)),
    "ethiopic": ((0x1200, 0x139F), (0x2D80, 0x2DDF)),
    "khmer": ((0x1780, 0x17FF),),
    "hangul": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF)),
    "kana": ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0x1B000, 0x1B16F)),
    "han": ((0x3005, 0x3007), (0x3021, 0x3029), (0x3038, 0x303B), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
            (0xF900, 0xFAFF), (0x20000, 0x2FA1F), (0x30000, 0x323AF)),
}
SCRIPTS = ("latin", "cyrillic") + tuple(SCRIPT_BLOCKS)
ALL_SCRIPTS = "all"
DEFAULT_SCRIPTS = ("latin", "cyrillic")
# The combining marks that are accents over any script's letters: deleted
# (rule 2) even with `all` scripts kept; a script's own marks are not.
GENERIC_MARKS = ((0x300, 0x36F), (0x483, 0x489), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF),
                 (0xFE20, 0xFE2F))
# A document whose letters are mostly dropped is counted as such in the report.
MOSTLY_DROPPED_SHARE = 0.5


def parse_scripts(value) -> tuple[str, ...]:
    """The scripts to keep, in `SCRIPTS` order, from `latin,cyrillic,greek`, a list of names, or `all`.

    Raises ValueError for an unknown name or an empty list.
    """
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [name.strip().lower() for name in names if name.strip()]
    if not names:
        raise ValueError("--scripts needs at least one script (or all)")
    if ALL_SCRIPTS in names:
        return (ALL_SCRIPTS,)
    unknown = sorted(set(names) - set(SCRIPTS))
    if unknown:
        raise ValueError(f"unknown script {', '.join(unknown)} for --scripts; choose from {', '.join(SCRIPTS)} or all")
    return tuple(name for name in SCRIPTS if name in names)


def _ranges(codes) -> list[tuple[str, str]]:
    """Sorted code points as (first, last) character ranges."""
    spans = []
    for code in sorted(codes):
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return [(chr(low), chr(high)) for low, high in spans]


# Letters (Unicode categories L*, and the few numerals that `isalpha` does
# not tell from them) are what is left of a text without these.
_NOT_LETTERS = re.compile(r"[\W\d_]+")


def _letters(text: str) -> int:
    # (In C without making the text that is left: the same count.)
    return _code_page.letters(text) if _code_page is not None else len(_NOT_LETTERS.sub("", text))


class ScriptRules:
    """Rules 1-5 for a choice of scripts (`parse_scripts`): MinimizeText's one rule engine."""

    def __init__(self, scripts: tuple[str, ...]):
        self.scripts = scripts
        # ASCII letters are Latin.
        self.keeps_ascii_letters = "latin" in scripts or ALL_SCRIPTS in scripts
        kept = set()
        for name in ("latin", "cyrillic", "digits"):
            if name == "digits" or name in scripts or ALL_SCRIPTS in scripts:
                kept.update(code for low, high in KEPT_RANGES[name] for code in range(ord(low), ord(high) + 1))
        generic = {code for low, high in GENERIC_MARKS for code in range(low, high + 1)}
        if ALL_SCRIPTS in scripts:
            candidates = range(0x80, sys.maxunicode + 1)
        else:
            candidates = (code for name in scripts for low, high in SCRIPT_BLOCKS.get(name, ())
                          for code in range(low, high + 1))
        for code in candidates:
            category = unicodedata.category(chr(code))
            if (category[0] in "LM" or category in ("Nd", "Nl")) and code not in generic and chr(code) not in WORD_INTERNAL:
                kept.add(code)
        ranges = _ranges(kept)
        self.dropped = re.compile(f"[^{_character_class(ranges, KEPT_SYMBOLS)}]+")
        marks = {character for character in _word_internal_characters() if ord(character) not in kept}
        self.deleted = str.maketrans({character: None for character in marks} | FOLDS)
        kept_re = re.compile(f"[{_character_class(ranges, KEPT_SYMBOLS)}]*")
        self.case_kept = "".join(chr(code) for code in sorted(kept) if unicodedata.category(chr(code))[0] == "L"
                                 and chr(code).lower() != chr(code)
                                 and not kept_re.fullmatch(chr(code).lower().translate(self.deleted)))
        self._case_kept = re.compile(f"[{re.escape(self.case_kept)}]") if self.case_kept else None
        self.code_pages = tuple(_from_legacy_code_page(*source, rules=self.apply_rules) for source in CODE_PAGE_SOURCES)
        # The letters of the first code page that the rules drop (`µ`, a
        # Greek letter after NFKC, by default): see `dropped_letter_share`.
        self.dropped_page_letters = "".join(
            character for character in self.code_pages[0].characters
            if character.isalpha() and not any(result.isalpha() for result in self.apply_rules(character)))
        # Letters the rules take from a character on its own (`letters_dropped`), as characters are met.
        self._letters_lost: dict[str, int] = {}
        # A text of the first code page's characters and of these loses no letter outside the page (see
        # `dropped_letter_share`): Latin and Cyrillic letters that the rules keep, each as it is under NFKC and
        # none composing with a letter before it (those are marks and Hangul's jamo, not letters of these blocks).
        kept_letters = "".join(
            character for name in ("latin", "cyrillic") for low, high in KEPT_RANGES[name]
            for character in map(chr, range(ord(low), ord(high) + 1))
            if unicodedata.category(character)[0] == "L" and character != "Σ"
            and unicodedata.normalize("NFKC", character) == character
            and _letters(character) == _letters(self.apply_rules(character)))
        self.losing_none = re.compile("[{}]*".format(re.escape(self.code_pages[0].characters + kept_letters)))
        if _code_page is not None:
            # The same, for `_code_page.outside`: a class per code point.
            page = self.code_pages[0].characters
            classes = bytearray([_code_page.OTHER]) * (max(map(ord, page + kept_letters)) + 1)
            for characters, kind in ((kept_letters, _code_page.KEPT), (page, _code_page.PAGE),
                                     (self.dropped_page_letters, _code_page.PAGE_DROPPED)):
                for character in characters:
                    classes[ord(character)] = kind
            self._letter_classes = bytes(classes)

    def _lower(self, text: str) -> str:
        if self._case_kept is None or self._case_kept.search(text) is None:
            return text.lower()
        # Character by character: only the Greek sigma lowercases by context,
        # and it is in `case_kept` or lowercases alike everywhere.
        case_kept = self.case_kept
        return "".join(character if character in case_kept else character.lower() for character in text)

    def apply_rules(self, text: str) -> str:
        """Rules 1-5 without collapsing the spaces."""
        # Lowercasing before the deletions of rule 2 gives the same text, and
        # rule 2 then also deletes the combining dot that lowercasing `İ` makes
        # (`İstanbul` -> `istanbul`).
        text = self._lower(unicodedata.normalize("NFKC", text)).translate(self.deleted)
        return self.dropped.sub(" ", text)

    def letters_dropped(self, text: str) -> int:
        """How many letters of `text` rules 1-5 drop: `_letters(text) - _letters(self.apply_rules(text))`, at least 0.

        Where NFKC leaves `text` as it is and it has no `Σ` (the one letter
        lowercased by its context), each rule acts on a character alone, so the
        count is summed over its distinct characters, each worked out once (a
        page in Cyrillic: a dozenth of the time of applying the rules to it).
        """
        if "Σ" in text or not unicodedata.is_normalized("NFKC", text):
            return max(0, _letters(text) - _letters(self.apply_rules(text)))
        lost = self._letters_lost
        dropped = 0
        # Counted in one pass: a page of thousands of distinct characters (Chinese) is not read once for each.
        for character, occurrences in Counter(text).items():
            count = lost.get(character)
            if count is None:
                count = lost[character] = _letters(character) - _letters(self.apply_rules(character))
            if count:
                dropped += count * occurrences
        return max(0, dropped)

    def outside_page(self, text: str) -> tuple[int, str | None]:
        """How many of the first code page's letters that the rules drop `text` holds; and its characters outside
        that page, one space standing for each run of the page's characters between them, or None where none of
        them can lose a letter (see `dropped_letter_share`)."""
        if _code_page is not None:
            # (In one pass, in C: the same.)
            return _code_page.outside(text, self._letter_classes)
        dropped = sum(map(text.count, self.dropped_page_letters))
        if self.losing_none.fullmatch(text):
            return dropped, None
        return dropped, self.code_pages[0].runs_within.sub(" ", text).strip(" ")

    def minimize_block(self, block: str) -> str:
        return " ".join(self.apply_rules(block).split())


@functools.lru_cache(maxsize=8)
def _script_rules(scripts: tuple[str, ...]) -> ScriptRules:
    return ScriptRules(scripts)


def script_rules(scripts) -> ScriptRules:
    """The rules for `scripts`: None (the default scripts), a name list, a `parse_scripts` value or their rules."""
    if isinstance(scripts, ScriptRules):
        return scripts
    if scripts is None:
        return DEFAULT_RULES
    scripts = scripts if isinstance(scripts, tuple) and all(name in SCRIPTS or name == ALL_SCRIPTS for name in scripts) \
        else parse_scripts(scripts)
    return DEFAULT_RULES if scripts == DEFAULT_SCRIPTS else _script_rules(scripts)


DEFAULT_RULES = ScriptRules(DEFAULT_SCRIPTS)
CODE_PAGES = DEFAULT_RULES.code_pages


def dropped_letter_share(before: str, after: str, scripts=None) -> float:
    """The share of the letters of `before` that the rules dropped (`after`: the result), rounded to 4 places.

    `scripts`: as in `minimize_blocks`, or their `ScriptRules`.

    Letters are only lost where the rules drop them: in the letters of the
    western code page that they drop (`µ`, Greek after NFKC) and in the
    characters outside that page, which are counted through the rules on
    their own; the rest of the letters are those of `after`.
    """
    rules = script_rules(scripts)
    if before.isascii() and rules.keeps_ascii_letters:
        return 0.0
    dropped, outside = rules.outside_page(before)
    if outside is not None:
        dropped += rules.letters_dropped(outside)
    if not dropped:
        return 0.0
    return round(dropped / (dropped + _letters(after)), 4)


def minimize_document(doc: Document, scripts=None, clean_text: bool = False) -> Document:
    """`doc` with its `cleaned_html` minimized (`scripts` as in `minimize_blocks`) into `html` and `text`, and its
    `dropped_letter_share`; `cleaned_html` is emptied.

    With `clean_text`, also the blocks before minimizing, as plain text one per line (`clean_text`).
    """
    div_html = doc.cleaned_html
    if not div_html:
        return _minimized(doc, "", 0, list, scripts, clean_text)
    # The blocks of CleanHtml's `cleaned_html` (see `html_to_blocks`), joined by newlines without making the list.
    text, count = blocks_text(div_html)
    return _minimized(doc, text, count, lambda: html_to_blocks(div_html), scripts, clean_text)


def minimize_lines(doc: Document, text: str, scripts=None) -> Document:
    """`minimize_document(doc with the lines of `text` as its blocks, clean_text=True)`, from `text` itself: what a
    quality rule that removes lines, or a selection, minimizes again without escaping the text into `<div>` blocks
    and reading them back (`text`: the blocks joined by newlines, as `clean_text` holds them)."""
    blocks = text.split(_NEWLINE) if text else []
    return _minimized(doc, text, len(blocks), lambda: blocks, scripts, True)


def _minimized(doc: Document, text: str, count: int, blocks, scripts, clean_text: bool) -> Document:
    """`doc` minimized from its `count` blocks (`blocks()`), joined by newlines as `text`."""
    rules = script_rules(scripts)
    blocks = _minimize_joined(text, count, blocks, rules) if count else []
    div_html = blocks_to_html(blocks)
    minimized = "\n".join(blocks)
    return doc.replace(cleaned_html="", html=div_html, text=minimized, minimized_bytes=len(div_html.encode("utf-8")),
                       dropped_letter_share=dropped_letter_share(text, minimized, rules),
                       clean_text=text if clean_text else "")


def is_mostly_dropped(doc: Document) -> bool:
    """Whether most of a minimized document's letters were dropped (their scripts are not kept: --scripts)."""
    return doc.dropped_letter_share > MOSTLY_DROPPED_SHARE
