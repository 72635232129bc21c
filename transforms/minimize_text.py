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
`& - ' . , : % + @ # $ /`.

How it runs: `minimize_block` applies the rules as written. Text made only
of the characters of a `CodePage` (ASCII plus 128 others: the Western,
Cyrillic and Central European sets of common web text) takes a fast path
instead: for such characters the five rules act on each character alone,
whatever its neighbours, so they are precomputed per character and applied
with `bytes.translate`. Every other text (combining marks, CJK, emoji...)
takes the rules as written, block by block.
"""

from __future__ import annotations

import codecs
import html as html_escaping
import re
import sys
import unicodedata

import apache_beam as beam

from transforms.clean_html import blocks_to_html, html_to_blocks
from transforms.document import Document
from transforms.stage import apply_stage

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


def _word_internal_characters() -> str:
    marks = [chr(code) for code in range(0x300, sys.maxunicode + 1) if unicodedata.category(chr(code)) in ("Mn", "Me")]
    return "".join(sorted(WORD_INTERNAL)) + "".join(marks)


ALL_KEPT_RANGES = tuple(span for spans in KEPT_RANGES.values() for span in spans)
DROPPED = re.compile(f"[^{_character_class(ALL_KEPT_RANGES, KEPT_SYMBOLS)}]+")
DELETED = str.maketrans({character: None for character in _word_internal_characters()} | FOLDS)


def _case_kept_letters() -> str:
    """Kept letters whose lowercase form is not kept (`Ɓ`, whose `ɓ` is outside the ranges): they keep their case."""
    kept = re.compile(f"[{_character_class(ALL_KEPT_RANGES, KEPT_SYMBOLS)}]*")
    letters = (chr(code) for low, high in ALL_KEPT_RANGES for code in range(ord(low), ord(high) + 1))
    return "".join(letter for letter in letters
                   if kept.fullmatch(letter) and not kept.fullmatch(letter.lower().translate(DELETED)))


CASE_KEPT = _case_kept_letters()
_CASE_KEPT = re.compile(f"[{re.escape(CASE_KEPT)}]") if CASE_KEPT else None


def _lower(text: str) -> str:
    if _CASE_KEPT is None or _CASE_KEPT.search(text) is None:
        return text.lower()
    # Character by character: only the Greek sigma lowercases by context,
    # and Greek is not kept either way.
    return "".join(character if character in CASE_KEPT else character.lower() for character in text)


def _apply_rules(text: str) -> str:
    """Rules 1-5 without collapsing the spaces."""
    # Lowercasing before the deletions of rule 2 gives the same text, and
    # rule 2 then also deletes the combining dot that lowercasing `İ` makes
    # (`İstanbul` -> `istanbul`).
    text = _lower(unicodedata.normalize("NFKC", text)).translate(DELETED)
    return DROPPED.sub(" ", text)


def minimize_block(block: str) -> str:
    """The rules as written, for one block."""
    return " ".join(_apply_rules(block).split())


# Blocks are minimized a page at a time, joined by newlines; on the fast
# path a newline becomes SEPARATOR, which is no space and no result of the
# rules (they turn U+0001 into a space), so collapsing spaces keeps it.
_NEWLINE = "\n"
SEPARATOR = "\x01"
# Stands for characters outside a code page (and for U+0002 itself, which
# then takes the rules as written too).
MARK = "\x02"
_SPACE_RUNS = re.compile(b"  +")
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

    def __init__(self, name: str, characters: str):
        if len(characters) != 256 or len(set(characters)) != 256 or characters[:128] != "".join(map(chr, range(128))):
            raise ValueError(f"code page {name}: ASCII then 128 distinct characters")
        self.name = name
        self.characters = characters
        self._encoding = codecs.charmap_build(characters)
        table = bytearray(range(256))
        delete = bytearray()
        # Characters whose result is not one character of the code page
        # stand for themselves through the byte map and are replaced at the
        # end (`…` -> `...`, `™` -> `tm`, `½` -> `1 2`).
        self._replacements = []
        singles = set()
        for byte, character in enumerate(characters):
            result = SEPARATOR if character == _NEWLINE else _apply_rules(character)
            if not result:
                delete.append(byte)
            elif len(result) == 1 and result in characters:
                table[byte] = characters.index(result)
                singles.add(result)
            else:
                self._replacements.append((character, result))
        self.table = bytes(table)
        self._delete = bytes(delete)
        # For text with other characters too: they are encoded as MARK,
        # which this table keeps, and their blocks take the rules as written.
        table[ord(MARK)] = ord(MARK)
        self._marking_table = bytes(table)
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
        try:
            data = codecs.charmap_encode(text, "strict", self._encoding)[0]
        except UnicodeEncodeError:
            return None
        return [line for line in self._finish(data.translate(self.table, self._delete), self.characters) if line]

    def marked_lines(self, text: str) -> list[str]:
        """The minimized lines of `text`, empty ones included; those with other characters hold MARK."""
        data = codecs.charmap_encode(text, _MARKING, self._encoding)[0]
        return self._finish(data.translate(self._marking_table, self._delete), self.characters)

    def _finish(self, data: bytes, decoding) -> list[str]:
        # Only kept characters, spaces and separators are left: collapse the
        # spaces, drop those next to a separator, split.
        if b"  " in data:
            data = _SPACE_RUNS.sub(b" ", data)
        if b" \x01" in data or b"\x01 " in data:
            data = data.replace(b" \x01", b"\x01").replace(b"\x01 ", b"\x01")
        data = data.strip(b" ")
        result = data.decode("ascii") if decoding is None else codecs.charmap_decode(data, "strict", decoding)[0]
        for character, replacement in self._replacements:
            if character in result:
                result = result.replace(character, replacement)
        return result.split(SEPARATOR)

    def ascii_lines(self, text: str) -> list[str]:
        """`lines` for ASCII text (the first half of every code page is the same)."""
        return [line for line in self._finish(text.encode("ascii").translate(self.table), None) if line]


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


def _code_page(name: str, legacy_codec: str, extra: str) -> CodePage:
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
    return CodePage(name, "".join(map(chr, range(128))) + "".join(upper))


# Ordered by how often web text fits them; the unassigned bytes of the
# legacy code pages hold other characters common in web text.
CODE_PAGES = (
    _code_page("western", "cp1252", "\u2192\u2190\u200b\u2212\ufeff"),
    _code_page("cyrillic", "cp1251", "\u2212"),
    _code_page("central-european", "cp1250", "\u2192\u2190\u200b\u2212\ufeff"),
)
_ASCII_PAGE = CODE_PAGES[0]


def _fast_lines(text: str) -> list[str] | None:
    """The minimized non-empty lines of `text`, or None when it needs the rules as written."""
    if text.isascii():
        return _ASCII_PAGE.ascii_lines(text)
    for page in CODE_PAGES:
        lines = page.lines(text)
        if lines is not None:
            return lines
    return None


def _best_page(text: str) -> CodePage:
    """The code page that encodes the longest start of `text`."""
    best, reach = _ASCII_PAGE, -1
    for page in CODE_PAGES:
        if page.usable:
            try:
                codecs.charmap_encode(text, "strict", page._encoding)
            except UnicodeEncodeError as error:
                if error.start > reach:
                    best, reach = page, error.start
    return best


def minimize_blocks(blocks: list[str]) -> list[str]:
    if not blocks:
        return []
    return _minimize_joined(_NEWLINE.join(blocks), len(blocks), lambda: blocks)


def _minimize_joined(text: str, count: int, blocks) -> list[str]:
    """`minimize_blocks(blocks())`, given the `count` blocks joined by newlines as `text`."""
    if text.count(_NEWLINE) == count - 1:
        # The whole page at once: newlines are only between blocks.
        lines = _fast_lines(text)
        if lines is not None:
            return lines
        # Some blocks have characters that no code page has: the best code
        # page marks them, and they take the rules as written.
        lines = _best_page(text).marked_lines(text)
        minimized = []
        for block, line in zip(blocks(), lines):
            if MARK in line:
                line = minimize_block(block)
            if line:
                minimized.append(line)
        return minimized
    minimized = []
    for block in blocks():
        # A newline inside a block is whitespace: it joins the lines.
        lines = _fast_lines(block)
        block = " ".join(lines) if lines is not None else minimize_block(block)
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
            if lines is None or " ".join(lines) != minimize_block(pair):
                return False
            # Spaces are collapsed in the end, but a character's result must
            # not depend on its neighbour even before that.
            if _NEWLINE not in pair and _SPACES.sub(" ", _apply_rules(first) + _apply_rules(second)) != _apply_rules(pair):
                return False
    return True


_SPACES = re.compile(" +")


def minimize_document(doc: Document) -> Document:
    div_html = doc.html
    if div_html:
        # The blocks of CleanHtml's `html` (see `html_to_blocks`), joined by
        # newlines without making the list: its text escapes `<`, so the
        # only `</div><div>` are the boundaries.
        inner = div_html[len("<div>"):-len("</div>")]
        text = inner.replace("</div><div>", _NEWLINE)
        if "&" in text:
            text = html_escaping.unescape(text)
        blocks = _minimize_joined(text, inner.count("</div><div>") + 1, lambda: html_to_blocks(div_html))
    else:
        blocks = []
    div_html = blocks_to_html(blocks)
    return doc.replace(html=div_html, text="\n".join(blocks), minimized_bytes=len(div_html.encode("utf-8")))


class MinimizeText(beam.PTransform):
    """Applies `minimize_document` to every document; failures go to `dead_letter`."""

    def expand(self, docs):
        return apply_stage(docs, "minimize_text", minimize_document)
