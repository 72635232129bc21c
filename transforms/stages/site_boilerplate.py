"""SiteBoilerplate: the lines (blocks) of a page's readable text that repeat across the pages of its site
(`--site-boilerplate`), removed.

A page's markup cannot tell its site's menu, footer or cookie notice from its
article; its site can: those lines repeat on many of its pages. After
CleanHtml (and its main content), before MinimizeText, the quality rules and
deduplication, each block of `cleaned_html` is normalised (`normalised_line`:
case folded, digits made 0, runs of other characters than letters and digits
made one space) and hashed; a block counts once per page, and once per
distinct page text (pages that are copies of each other, exact duplicates
that HashDedup will drop, count as one). A line is its site's boilerplate when
it is on at least `min_pages` of the site's distinct pages and on at least
`min_share` of them; the blocks of such lines are removed from every page of
the site, and MinimizeText then minimizes what is kept, so that the content
hash and deduplication are of the text written.

The site is the page's registered domain (`registered_domain`), or with the
scope `crawl` the whole crawl (one site). Here are the pure functions; the
counting and the joins are in `site_boilerplate_transform`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Iterable
from urllib.parse import urlsplit

from transforms import native
from transforms.corpus.blocks import BOUNDARY, blocks_to_html, html_to_blocks
from transforms.document import Document
from transforms.stages.filters.url_forms import canonical_host

SCOPES = ("domain", "crawl")
# Chosen by benchmarks/site_boilerplate.py (benchmarks/README.md): a line on 3 distinct pages of its site and
# on a fifth of them. A lower count removes the lines that two pages of a site quote from each other.
DEFAULT_MIN_PAGES = 3
DEFAULT_MIN_SHARE = 0.2
# The site of the crawl scope: every page's.
CRAWL_SITE = ""

# Second-level labels under which a two-letter country code registers names (`example.co.uk`, `example.com.au`):
# the public suffixes most pages are under, without the Public Suffix List (a dependency and a file to keep
# current). A name under another suffix of the list (`example.blogspot.com`) is counted with its parent's site.
COUNTRY_SECOND_LEVELS = frozenset(("ac", "co", "com", "edu", "gob", "gov", "go", "govt", "ltd", "me", "mil", "ne",
                                   "net", "nic", "nom", "or", "org", "plc", "sch"))
_NOT_WORD = re.compile(r"[\W_]+")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class SiteBoilerplate:
    """The settings of `--site-boilerplate`: where lines are counted (`scope`) and when one is boilerplate."""

    scope: str = "domain"
    min_pages: int = DEFAULT_MIN_PAGES
    min_share: float = DEFAULT_MIN_SHARE

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"--site-boilerplate-scope must be one of {', '.join(SCOPES)}, not {self.scope!r}")
        if self.min_pages < 2:
            raise ValueError(f"--boilerplate-min-pages must be at least 2 (a line on one page repeats nowhere), "
                             f"not {self.min_pages}")
        if not 0 <= self.min_share <= 1:
            raise ValueError(f"--boilerplate-min-share is a share of a site's pages, in [0, 1], not {self.min_share}")

    def is_boilerplate(self, pages_with_line: int, site_pages: int) -> bool:
        """Whether a line on `pages_with_line` of its site's `site_pages` distinct pages is boilerplate."""
        return pages_with_line >= self.min_pages and pages_with_line >= self.min_share * site_pages


def registered_domain(url: str) -> str:
    """The name a page's host is registered under (`news.example.co.uk` -> `example.co.uk`), by the rule of
    `COUNTRY_SECOND_LEVELS`; an IP address or a host that cannot be read is its own site (its URL)."""
    return _domain_of_origin(_origin(url)) or url


def _origin(url: str) -> str:
    """`url` up to the end of its authority: all that `urlsplit` reads its host from (the pages of a site share
    it, so their domain is found once)."""
    start = url.find("//")
    if start < 0:
        return url
    ends = [end for end in (url.find(character, start + 2) for character in "/?#") if end >= 0]
    return url[:min(ends)] if ends else url


@functools.lru_cache(maxsize=1 << 14)
def _domain_of_origin(origin: str) -> str:
    """`registered_domain` of the URLs of an `_origin`; "" where there is no host to read."""
    try:
        hostname = urlsplit(origin).hostname or ""
    except ValueError:
        hostname = ""
    if ":" in hostname:
        # An IPv6 address.
        return f"[{hostname}]"
    host = canonical_host(hostname)
    if not host:
        return ""
    labels = host.split(".")
    if labels[-1].isdigit():
        return host
    kept = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in COUNTRY_SECOND_LEVELS else 2
    return ".".join(labels[-kept:])


def site_of(url: str, scope: str) -> str:
    return CRAWL_SITE if scope == "crawl" else registered_domain(url)


def normalised_line(block: str) -> str:
    """A block as lines are compared: case folded, digits made 0 (a date or a count does not make a footer
    another), runs of anything but letters and digits made one space."""
    return _NOT_WORD.sub(" ", _DIGIT.sub("0", block.casefold())).strip()


def line_hash(block: str) -> int | None:
    """The signed 64-bit hash (BLAKE2b: the same on every machine) of a block's normalised line; None for a block
    with no letter or digit, which is nobody's boilerplate."""
    return _hash_of(normalised_line(block).encode("utf-8")) or None


def _hash_of(line: bytes) -> int:
    if not line:
        return NO_LINE
    return int.from_bytes(hashlib.blake2b(line, digest_size=8).digest(), "big", signed=True)


# A block's hash when it has no line (`line_hash` None); a line whose hash is 0 (one in 2**64) is no line either.
NO_LINE = 0
# Non-word characters, less the boundary between blocks: a page's blocks are normalised in one pass (`_` made a
# space first: `_NOT_WORD` in a character class, which re matches faster than an alternation).
_NOT_WORD_WITHIN_BLOCK = re.compile(f"[^\\w{BOUNDARY}]+")
# The same normalisation of an ASCII page (most of an English crawl's) as one byte table: letters lowered, digits
# made 0, the boundary kept, anything else a space (whose runs `split` and `join` make one).
_ASCII_TABLE = bytes(ord(BOUNDARY) if character == BOUNDARY else ord("0") if character.isdigit()
                     else ord(character.lower()) if character.isalnum() else ord(" ")
                     for character in map(chr, range(256)))
_ENCODED_BOUNDARY = BOUNDARY.encode("ascii")
_HASHES = struct.Struct(">q")


# The C path of `block_hashes` (transforms/native/_line_hashes.c), or None.
_C_LINE_HASHES = native.load("_line_hashes")


def block_hashes(blocks: list[str]) -> list[int]:
    """`line_hash` of each block (`NO_LINE` for None): in C where it is built, else `python_block_hashes`."""
    if _C_LINE_HASHES is not None:
        return _C_LINE_HASHES.block_hashes(blocks)
    return python_block_hashes(blocks)


def python_block_hashes(blocks: list[str]) -> list[int]:
    """`block_hashes`' pure path: the page's blocks normalised in one pass (a few calls a page, not a few a block)
    and each distinct line hashed once."""
    joined = BOUNDARY.join(blocks)
    if joined.count(BOUNDARY) != len(blocks) - 1:
        # A block with the boundary in it (lexbor never parses one), or no block: one block at a time.
        lines = [normalised_line(block).encode("utf-8") for block in blocks]
    elif joined.isascii():
        lines = b" ".join(joined.encode("ascii").translate(_ASCII_TABLE).split()).split(_ENCODED_BOUNDARY)
    else:
        folded = _DIGIT.sub("0", joined.casefold()).replace("_", " ")
        lines = _NOT_WORD_WITHIN_BLOCK.sub(" ", folded).encode("utf-8").split(_ENCODED_BOUNDARY)
    hashes: dict[bytes, int] = {}
    return [hashes[line] if line in hashes else hashes.setdefault(line, _hash_of(line))
            for line in map(bytes.strip, lines)]


def packed(hashes: list[int]) -> bytes:
    """Line hashes as 8 bytes each, as they go to the shuffles and with their page to the join (`unpacked` reads
    them)."""
    return struct.pack(f">{len(hashes)}q", *hashes)


def unpacked(hashes: bytes) -> list[int]:
    return [hash_ for (hash_,) in _HASHES.iter_unpack(hashes)]


def line_hashes(doc: Document) -> frozenset[int]:
    """The distinct line hashes of a document's blocks (a line repeated on a page counts once for it)."""
    return frozenset(block_hashes(html_to_blocks(doc.cleaned_html))) - {NO_LINE}


def text_hash(doc: Document) -> bytes:
    """What tells a page's text from another's: pages with the same blocks count as one page of their site."""
    return hashlib.blake2b(doc.cleaned_html.encode("utf-8"), digest_size=16).digest()


def without_lines(doc: Document, boilerplate: frozenset[int] | set[int],
                  hashes: list[int] | None = None) -> tuple[Document, int, int]:
    """`doc` without the blocks whose line is in `boilerplate`, their size as `<div>` HTML in its
    `site_boilerplate_bytes`; and the blocks removed and their text's bytes (UTF-8: what the report counts).
    `hashes`: the blocks' `block_hashes`, where they were computed before (else computed here)."""
    if not boilerplate:
        return doc, 0, 0
    blocks = html_to_blocks(doc.cleaned_html)
    kept, removed = [], []
    for block, hash_ in zip(blocks, block_hashes(blocks) if hashes is None else hashes):
        (removed if hash_ in boilerplate else kept).append(block)
    if not removed:
        return doc, 0, 0
    return (doc.replace(cleaned_html=blocks_to_html(kept),
                        site_boilerplate_bytes=len(blocks_to_html(removed).encode("utf-8"))),
            len(removed), sum(len(block.encode("utf-8")) for block in removed))


def repeated_lines(pages: Iterable[tuple[str, list[str]]], settings: SiteBoilerplate) -> set[tuple[str, int]]:
    """The (site, line hash) pairs that the stage removes from `pages` ((site, blocks) a page), decided in memory
    as `site_boilerplate_transform` decides by shuffles: for a benchmark's or a test's few thousand pages."""
    lines_of_text: dict[tuple[str, tuple[str, ...]], frozenset[int]] = {}
    for site, blocks in pages:
        hashes = frozenset(block_hashes(blocks)) - {NO_LINE}
        if hashes:
            lines_of_text[(site, tuple(blocks))] = hashes
    site_pages = Counter(site for site, _ in lines_of_text)
    pages_with_line = Counter((site, line) for (site, _), hashes in lines_of_text.items() for line in hashes)
    return {(site, line) for (site, line), count in pages_with_line.items()
            if settings.is_boilerplate(count, site_pages[site])}
