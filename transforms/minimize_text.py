"""MinimizeText: each block keeps letters, digits and a few symbols, lowercased.

Per block of CleanHtml's output, in this order:

1. Unicode NFKC normalization, so that look-alike forms (full-width
   letters, ligatures, `ﬁ`) become the letters they stand for.
2. Characters that are part of a word without being letters are deleted,
   not turned into spaces, so the word stays whole: soft hyphens,
   zero-width characters and combining marks (`при́вет` -> `привет`).
3. Lowercasing.
4. Typographic variants fold into the kept symbols (`’` -> `'`, `–` -> `-`).
5. Everything that is not a kept character becomes a space; runs of spaces
   collapse; a block left empty is removed.

Kept characters (`KEPT_RANGES`, `KEPT_SYMBOLS`): letters of the Latin and
Cyrillic scripts (with their accented forms), the digits 0-9 and
`& - ' . , : % + @ # $ /`.
"""

from __future__ import annotations

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

WORD_INTERNAL = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e"}


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


def minimize_block(block: str) -> str:
    block = unicodedata.normalize("NFKC", block).translate(DELETED).lower()
    return " ".join(DROPPED.sub(" ", block).split())


def minimize_blocks(blocks: list[str]) -> list[str]:
    return [minimized for minimized in map(minimize_block, blocks) if minimized]


def minimize_document(doc: Document) -> Document:
    blocks = minimize_blocks(html_to_blocks(doc.html))
    div_html = blocks_to_html(blocks)
    return doc.replace(html=div_html, text="\n".join(blocks), minimized_bytes=len(div_html.encode("utf-8")))


class MinimizeText(beam.PTransform):
    """Applies `minimize_document` to every document; failures go to `dead_letter`."""

    def expand(self, docs):
        return apply_stage(docs, "minimize_text", minimize_document)
