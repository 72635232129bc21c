"""CleanHtml's rules: a page reduced to the text a reader sees, in `<div>` blocks.

This module does not import Beam: the child process that cleans the pages
`isolation_reason` sends away imports it, and starts in a tenth of the time
and memory that Beam would take (`transforms/clean_html.py` is the stage).

The rules, in the order they apply:

1. Metadata is taken first, into its own fields: the title, the links
   (absolute, resolved against `<base href>` and the page URL), the language
   (`<html lang>`, else `Content-Language` in `<meta>`) and the `<meta>`
   values in `META_NAMES`.
2. Elements that carry no text for a reader go with their content:
   `DROP_TAGS`, elements hidden by the `hidden` attribute (but React's
   streamed segments, `REACT_SEGMENT`), by `aria-hidden="true"`, by
   `display:none` or `visibility:hidden` in their `style`, MathML's
   `annotation`, a `<noscript>` shorter than `NOSCRIPT_MIN_CHARACTERS` or
   holding markup written as text, and whatever the user's CSS selectors
   match.
3. `abbr`'s title is kept after its text: `WHO (World Health Organization)`.
4. Inline elements (`INLINE_TAGS`) and comments are unwrapped, so
   `При<b>в</b>ет` and `tripl<!-- -->e` stay one word; a link right after a
   non-empty inline element gets a space (a menu of links written without
   spaces is separate words), and so does any other inline element right
   after one whose text ends with a lowercase letter, when its own text
   starts with an uppercase one (`<span>Политика</span><span>Экономика</span>`,
   breadcrumbs and tag clouds written without spaces: the case change is
   a word boundary that markup alone does not make, so `<b>При</b><i>вет</i>`
   and `<span>25</span><sup>th</sup>` stay one word).
5. Every other element is a block boundary, and so are `br` and `img`: the
   text between two boundaries is one block. Each block becomes one
   `<div>`, without attributes; blocks with no text are dropped.
6. Entities are decoded by the parser, and those the page escaped twice
   (`&amp;amp;`) once more (`decode_leftover_entities`); whitespace inside a
   block collapses to single spaces. The `html` field escapes `&`, `<` and
   `>` again.

The output holds only `<div>` and text; the `text` field has the same blocks,
one per line.

How it runs: lexbor parses the page; one walk in C over its tree
(`_lexbor_walk.c`) collects the metadata and writes the blocks, deciding per
element by its tag id and its attributes, with `is_hidden` asked about the
candidates for rule 2 and the user's selectors matched once by lexbor's CSS
engine. The tree is read, not modified: the blocks are what removing,
unwrapping, merging adjacent text nodes and lexbor's `text()` would give.
Without the C module (not built, refused at bind, or `WEBCORPUS_PURE_PYTHON=1`:
transforms/native.py), `_tree_walk` carries out those operations, the
pure-Python path; `tests/test_clean_walk.py` checks that both give the same
pages.
"""

from __future__ import annotations

import html as html_escaping
import importlib.metadata
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import selectolax.lexbor
from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser

from transforms import native
from transforms.blocks import BOUNDARY, blocks_to_html
from transforms.document import Document
from transforms.isolation import ChildProcess

# Checked against the HTML standard's rendering rules, tag by tag, in
# docs/fidelity.md ("What a browser renders").
DROP_TAGS = (
    # Code and styling.
    "script", "style", "template",
    # Embedded content whose children a browser does not render (MathML's
    # formulas are text; its TeX or XML sources in `annotation` are not
    # shown). `object` and `applet` are inline: they show their children
    # when what they embed cannot be shown (a Flash video, a Java applet:
    # every browser today), all but `param`.
    "svg", "annotation-xml", "iframe", "frame", "frameset", "embed", "param", "canvas",
    "audio", "video", "picture", "source", "track", "map",
    # Form controls (the form itself and its labels stay).
    "input", "button", "select", "option", "optgroup", "datalist", "textarea",
    "progress", "meter", "keygen",
    # Document metadata.
    "head", "title", "meta", "link", "base",
)

INLINE_TAGS = (
    "a", "abbr", "acronym", "applet", "b", "bdi", "bdo", "big", "blink", "cite", "code", "data", "del",
    "dfn", "em", "font", "i", "ins", "kbd", "label", "mark", "nobr", "object", "output", "q", "rb", "rp",
    "rt", "rtc", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var", "wbr",
)

HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# React's streamed server rendering sends each late part of the page in a
# `<div hidden id="S:1a">` (a number in hex) that its script moves into
# place: shown text.
REACT_SEGMENT = re.compile(r"S:[0-9a-f]+")
# A `<noscript>` is kept when it holds at least this many characters (not
# counting whitespace) and no markup written as text: a page's content for
# readers without JavaScript (Blogger puts the whole post there). Shorter
# ones ("Please enable JavaScript ...", tracking pixels) go.
NOSCRIPT_MIN_CHARACTERS = 600
# An entity left in the text after the parser decoded the page's, written
# twice escaped (`&amp;amp;`, `&amp;nbsp;`): decoded once more.
LEFTOVER_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")

META_NAMES = (
    "description", "keywords", "author", "generator", "robots",
    "og:title", "og:description", "og:site_name", "og:type", "og:locale",
)

LINK_SCHEMES = frozenset({"http", "https"})
# See `isolation_reason`.
ISOLATE_ABOVE_TAGS = 25_000
ISOLATE_ABOVE_BYTES = 4 * 1024 * 1024
CHECK_DENSITY_ABOVE_TAGS = 1_500
DENSE_BYTES_PER_TAG = 24
CHECK_UNCLOSED_ABOVE_TAGS = 4_000
ISOLATE_ABOVE_REOPENINGS = 8_000_000
SPARSE_CHECK_ABOVE_BYTES = 64 * 1024
SPARSE_BYTES_PER_TAG = 1024
# What may start another attribute of an element.
ATTRIBUTE_SEPARATORS = b" \t\n\r\f/\"'"
ISOLATE_ABOVE_SEPARATORS = 20_000
DEFAULT_PAGE_TIMEOUT = 30.0
# See `_unwrap`: below this many nested inline elements, the pure path unwraps them one by one.
NESTED_INLINE_LIMIT = 16
# The memory a page may take in the child process, beyond the child's own.
DEFAULT_PAGE_MEMORY_MIB = 2048


# What the walk does with an element, by tag id; 0, a block boundary, for
# tags not listed. The C walk has the same numbers (checked when it binds).
KIND_BLOCK, KIND_DROP, KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION, KIND_AREA, KIND_TITLE, KIND_BASE, KIND_META, \
    KIND_LINK = range(10)
_KIND_NAMES = ("KIND_BLOCK", "KIND_DROP", "KIND_INLINE", "KIND_ANCHOR", "KIND_ABBREVIATION", "KIND_AREA", "KIND_TITLE",
               "KIND_BASE", "KIND_META", "KIND_LINK")
# Rule 2's candidates: `is_hidden` decides on them.
HIDING_CANDIDATES = ('[hidden], [aria-hidden="true" i], [style*="display" i], [style*="visibility" i], noscript, '
                     'annotation')


def _tag_ids(names) -> frozenset[int]:
    factory = LexborHTMLParser("")
    return frozenset(factory.create_node(name).tag_id for name in names)


def _tag_id(name: str) -> int:
    return next(iter(_tag_ids((name,))))


def _kind_table() -> bytes:
    """What the walk does with an element, by tag id; elements not listed are block boundaries."""
    kinds = {tag_id: KIND_DROP for tag_id in _tag_ids(DROP_TAGS)}
    kinds.update({tag_id: KIND_INLINE for tag_id in _tag_ids(INLINE_TAGS)})
    kinds.update({_tag_id(name): kind for name, kind in (
        ("a", KIND_ANCHOR), ("abbr", KIND_ABBREVIATION), ("area", KIND_AREA),
        # Metadata; title, base, meta and link are dropped too.
        ("title", KIND_TITLE), ("base", KIND_BASE), ("meta", KIND_META), ("link", KIND_LINK))})
    table = bytearray(max(kinds) + 1)  # 0 is KIND_BLOCK
    for tag_id, kind in kinds.items():
        table[tag_id] = kind
    return bytes(table)


@dataclass(frozen=True)
class CleanedPage:
    blocks: list[str]
    title: str = ""
    links: list[str] = field(default_factory=list)
    lang: str = ""
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def html(self) -> str:
        return blocks_to_html(self.blocks)


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def split_blocks(text: str) -> list[str]:
    """The non-empty blocks of BOUNDARY-separated text, whitespace collapsed."""
    return list(filter(None, map(" ".join, map(str.split, text.split(BOUNDARY)))))


# A document's css() creates lexbor's CSS parser anew, which costs about as
# much as the search; one per thread serves every document.
_FINDERS = threading.local()


def css(node, selector: str) -> list:
    """`node.css(selector)`, with this thread's CSS parser."""
    finder = getattr(_FINDERS, "finder", None)
    if finder is None:
        finder = _FINDERS.finder = LexborCSSSelector()
    return finder.find(selector, node)


def validate_selectors(selectors: tuple[str, ...]) -> None:
    probe = LexborHTMLParser("<div></div>")
    for selector in selectors:
        try:
            probe.css(selector)
        except Exception as error:
            raise ValueError(f"invalid CSS selector {selector!r}: {error}") from error


def _metadata(url: str, root, hrefs: list[str], events: list) -> tuple[str, list[str], str, dict[str, str]]:
    """Rule 1, from what the walk collected: the hrefs of `a` and `area`, the first title's text, the href
    of the first base and of the first canonical link, and the attributes of every meta with content."""
    title = ""
    base_href = canonical_href = None
    metas = []
    for kind, value in events:
        if kind == KIND_META:
            metas.append(value)
        elif kind == KIND_TITLE:
            title = decode_leftover_entities(collapse_whitespace(value))
        elif kind == KIND_BASE:
            base_href = value
        else:
            canonical_href = value
    base = urljoin(url, base_href.strip()) if base_href is not None else url
    links = resolve_links(base, hrefs)
    lang = ""
    if root is not None:
        attributes = root.attributes
        lang = (attributes.get("lang") or attributes.get("xml:lang") or "").strip()
    meta = {}
    for attributes in metas:
        name = (attributes.get("name") or attributes.get("property") or attributes.get("http-equiv") or "").strip().lower()
        # As in the text, what the page escaped twice (`Trump&amp;#039;s`) is decoded once more.
        content = decode_leftover_entities(collapse_whitespace(attributes.get("content") or ""))
        if not content:
            continue
        if name == "content-language" and not lang:
            lang = content.split(",")[0].strip()
        elif name in META_NAMES and name not in meta:
            meta[name] = content
    if canonical_href is not None:
        meta["canonical"] = urljoin(base, canonical_href.strip())
    return title, links, lang.lower(), meta


# An href with any of these takes urljoin: urlsplit removes tabs and
# newlines, `;` starts parameters, brackets an IPv6 host.
_JOIN_UNSAFE_CHARACTERS = "\t\r\n;[]"
_JOIN_UNSAFE = re.compile(f"[{re.escape(_JOIN_UNSAFE_CHARACTERS)}]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_REJECT = ""  # _fast_join's answer for a link whose scheme is not http(s)


def resolve_links(base: str, hrefs: list[str]) -> list[str]:
    """The absolute http(s) URLs of `hrefs`, in order, without repeats.

    Each is `urljoin(base, href)` with the scheme checked by `urlsplit`; the
    common hrefs are joined by `_fast_join`, which gives the same answers.
    """
    parts = _base_parts(base) if _FAST_JOIN else None
    if parts is not None and _links is not None:
        # Most pages have no href starting with `/` or `h` that needs urljoin
        # for its characters, an empty query or fragment, or a dot segment:
        # their commonest hrefs (a path from the root, an absolute http(s)
        # URL with a host) are joined inline, in C; the lines below give the
        # same answers.
        resolved = _links.resolve_plain(parts[1], hrefs, lambda href: _other_link(base, parts, href, href[0] in "/h"))
        if resolved is not None:
            return resolved
    unique = dict.fromkeys(map(str.strip, hrefs))
    unique.pop("", None)
    # Checked at once for the hrefs that `_fast_join` may take as safe.
    # Searching for one character is many times faster than for two: the
    # two-character checks only run where their first character occurs.
    joined = "\x00" + "\x00".join([href for href in unique if href[0] in "/h"]) + "\x00"
    plain = (_FAST_JOIN and joined.isascii()
             and ("?" not in joined or ("?#" not in joined and "?\x00" not in joined))
             and ("#" not in joined or "#\x00" not in joined)
             and not any(character in joined for character in _JOIN_UNSAFE_CHARACTERS))
    resolved = (_other_link(base, parts, href, plain and href[0] in "/h") for href in unique)
    return list(dict.fromkeys(filter(None, resolved)))


def _other_link(base: str, parts, href: str, safe: bool) -> str | None:
    """`href` (stripped, not empty) resolved against `base`, or None; `safe`: see `_fast_join`."""
    if href[0] == "#":
        return None
    absolute = _fast_join(parts, href, safe) if _FAST_JOIN else None
    if absolute is None:
        try:
            absolute = urljoin(base, href)
            if urlsplit(absolute).scheme not in LINK_SCHEMES:
                return None
        except ValueError:
            return None
    return absolute or None  # _REJECT is ""


def _base_parts(base: str) -> tuple[str, str, str, str] | None:
    """(scheme, "scheme://netloc", path, directory) of an http(s) base that `_fast_join` can join to, else None."""
    if not base.isascii() or _JOIN_UNSAFE.search(base):
        return None
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    path = parts.path
    if (parts.scheme not in LINK_SCHEMES or not parts.netloc or not base.startswith(parts.scheme + "://")
            or (path and not path.startswith("/")) or "//" in path or "/." in path):
        return None
    return parts.scheme, f"{parts.scheme}://{parts.netloc}", path, path[:path.rfind("/") + 1] or "/"


def _fast_join(parts: tuple[str, str, str, str] | None, href: str, safe: bool = False) -> str | None:
    """urljoin's answer for a common href: an http(s) URL, or _REJECT for another scheme; None: ask urljoin.

    `href` is stripped, not empty and not a fragment alone; `safe` says that
    it is ASCII without `_JOIN_UNSAFE`'s characters nor an empty query or
    fragment.
    """
    # urljoin reassembles the URL from its parts, which drops an empty query
    # or fragment (`?#`, a trailing `?` or `#`) and resolves dot segments.
    plain = safe or (href.isascii() and not _JOIN_UNSAFE.search(href) and href[-1] not in "?#" and "?#" not in href)
    first = href[0]
    if first == "/":
        if not plain or parts is None:
            return None
        if href.startswith("//"):
            return parts[0] + ":" + href if len(href) > 2 and href[2] not in "/?#" else None
        return parts[1] + href if "/." not in href else None
    if href.startswith(("https://", "http://")):
        # An absolute URL with a host comes back as it is.
        rest = href[8:] if href[4] == "s" else href[7:]
        return href if plain and rest and rest[0] not in "/?#" else None
    scheme = _SCHEME.match(href)
    if scheme is not None:
        # mailto:, javascript:, tel:, ... whatever the base.
        return _REJECT if scheme.group()[:-1].lower() not in LINK_SCHEMES else None
    if not plain or parts is None:
        return None
    if first == "?":
        return parts[1] + parts[2] + href
    if first == "." or "/." in href or "//" in href:
        return None
    return parts[1] + parts[3] + href


def _fast_join_agrees() -> bool:
    """Whether `_fast_join` gives urljoin's answers on this Python (a cheap check at import)."""
    bases = ("https://example.org/a/b.html?x=1#top", "http://Example.org:8080", "https://u@example.org/dir/",
             "http://example.org/")
    hrefs = ("/", "/x/y.html", "/x?q=1&b=2", "/x#frag", "/x?q#f", "//cdn.example.org/s.js", "//h",
             "http://other.example/x", "https://e.org", "https://e.org?x", "http://E.ORG/A%20B#c?d",
             "https://e.org/a b", "/a/b/c/", "/~user/x.php?a=b/c", "c.html", "c/d/e.html?x=1#y", "?page=2",
             "?a=b#c", "x:y", "mailto:a@example.org", "JavaScript:void(0)", "a%20b")
    for base in bases:
        parts = _base_parts(base)
        for href in hrefs:
            fast = _fast_join(parts, href)
            if fast is None:
                continue
            try:
                joined = urljoin(base, href)
                expected = joined if urlsplit(joined).scheme in LINK_SCHEMES else _REJECT
            except ValueError:
                expected = _REJECT
            if fast != expected:
                return False
    return True


_FAST_JOIN = True
_FAST_JOIN = _fast_join_agrees()


class HtmlCleaner:
    """The CleanHtml rules, with the user's extra selectors of elements to drop."""

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = ()):
        self.drop_selectors = tuple(drop_selectors)
        validate_selectors(self.drop_selectors)
        self._user_selector = ", ".join(self.drop_selectors)

    def clean(self, page: bytes | str, url: str = "") -> CleanedPage:
        tree = LexborHTMLParser(page)
        root = tree.root
        if root is None:
            return CleanedPage([], *_metadata(url, None, [], []))
        body = tree.body
        user_hidden = None
        if self._user_selector and body is not None:
            user_hidden = {node.mem_id for node in css(body, self._user_selector)}
        if _WALK is None:
            text, hrefs, events = _tree_walk(root, body, user_hidden)
            blocks = split_blocks(decode_leftover_entities(text) if text and "&" in text else text or "")
            return CleanedPage(blocks, *_metadata(url, root, hrefs, events))
        # `tree` holds the document while the walk reads it.
        text, may_hold_entities, hrefs, events = _WALK.walk(
            root.mem_id, body.mem_id if body is not None else 0, user_hidden)
        if not text:
            blocks = []  # no body, a hidden one, or no text
        else:
            decoded = decode_leftover_entities(text) if may_hold_entities else text
            # Decoding may make whitespace or empty blocks (`&amp;nbsp;`).
            blocks = text.split(BOUNDARY) if decoded is text else split_blocks(decoded)
        return CleanedPage(blocks, *_metadata(url, root, hrefs, events))

    def __call__(self, doc: Document) -> Document:
        return with_cleaned_page(doc, self.clean(doc.payload, doc.url))


def with_cleaned_page(doc: Document, page: CleanedPage) -> Document:
    div_html = page.html
    return doc.replace(
        payload=b"",
        title=page.title,
        links=page.links,
        lang=page.lang,
        meta=page.meta,
        html=div_html,
        cleaned_bytes=len(div_html.encode("utf-8")),
    )


def isolation_reason(payload: bytes) -> str | None:
    """Why lexbor could take long or much memory on this page, from counts that cost far less than parsing
    it (a pass or two over its bytes); None for the pages it parses in a time and memory proportional to
    their size. These are estimates: what bounds a page sent away is the child's limits.

    - Nesting: depth costs lexbor quadratic time (100,000 nested `<div>`s take about 90 s) and is bounded
      by the count of `<`; the most on the dev corpus is 19,252, and below `ISOLATE_ABOVE_TAGS` the worst
      nesting parses in about 5 s.
    - Unclosed formatting elements (`<b id=1>`, `<font color=...>`: the HTML standard's list of active
      formatting elements, which holds at most 3 identical ones but any number with distinct attributes)
      are reopened inside every block that follows: `<p><b id=N>x` repeated 2,000 times makes 2 million
      elements and takes 730 MiB, 12,000 times over 20 GiB. Markup denser than `DENSE_BYTES_PER_TAG`
      with over `CHECK_DENSITY_ABOVE_TAGS` tags (the dev corpus's densest such page has 14.6 bytes a
      tag, the repeated `<p><b id=N>x` 6.5) goes to the child; so does a page with over
      `CHECK_UNCLOSED_ABOVE_TAGS` tags whose elements left open, estimated by the tags less twice the
      end tags (`</`), times its tags exceed `ISOLATE_ABOVE_REOPENINGS` (the most on the dev corpus is
      11.7 million, two pages over 8 million). Counting `</` costs as much as counting `<`, so the pages
      with fewer tags are not asked. What this misses: formatting elements padded with text to 24 bytes
      a tag in a page of 1,500 to 4,000 tags (at most about 2,000 of them: 730 MiB), and, above that,
      padded ones whose end tags are made up by stray ones (`</z>`).
    - An element's attributes: lexbor compares each new attribute's name with the element's others,
      quadratic in their count (20,000 distinct ones take 2 s, 200,000 take 98 s). A page with few tags
      for its size (over `SPARSE_BYTES_PER_TAG`) and more than `ISOLATE_ABOVE_SEPARATORS` characters
      that can start an attribute goes to the child. What this misses: such an element in a page with
      more tags than a 1,024th of its bytes (tags added to hide it).
    - Size: memory is about 15 bytes a byte of page; pages over `ISOLATE_ABOVE_BYTES` (the dev corpus's
      biggest is 1 MiB) go to the child, whose memory limit holds them.
    """
    size = len(payload)
    if size > ISOLATE_ABOVE_BYTES:
        return f"over {ISOLATE_ABOVE_BYTES:,} bytes"
    tags = payload.count(b"<")
    if tags > ISOLATE_ABOVE_TAGS:
        return f"over {ISOLATE_ABOVE_TAGS:,} tags"
    if tags > CHECK_DENSITY_ABOVE_TAGS and size < DENSE_BYTES_PER_TAG * tags:
        return f"under {DENSE_BYTES_PER_TAG} bytes a tag"
    if tags > CHECK_UNCLOSED_ABOVE_TAGS and (tags - 2 * payload.count(b"</")) * tags > ISOLATE_ABOVE_REOPENINGS:
        return "many unclosed elements"
    if size > SPARSE_CHECK_ABOVE_BYTES and size > SPARSE_BYTES_PER_TAG * tags:
        if size - len(payload.translate(None, ATTRIBUTE_SEPARATORS)) > ISOLATE_ABOVE_SEPARATORS:
            return "long tags"
    return None


class GuardedCleaner:
    """Cleans the pages that `isolation_reason` finds could be slow or large in a child process, at most
    `page_timeout` seconds and `page_memory_mib` MiB a page.

    lexbor, as native code, can neither be interrupted by a Python thread nor kept from taking the worker
    down if it crashes or exhausts the memory: a page over either limit goes to the dead letter alone. The
    child is started at the first such page (a Python with selectolax and this module: about 21 MiB).
    """

    def __init__(self, cleaner: HtmlCleaner, page_timeout: float = DEFAULT_PAGE_TIMEOUT,
                 page_memory_mib: int = DEFAULT_PAGE_MEMORY_MIB):
        self._cleaner = cleaner
        self._page_timeout = page_timeout
        self._page_memory_mib = page_memory_mib
        self._child = None

    def __getstate__(self):
        return {**self.__dict__, "_child": None}

    def __call__(self, doc: Document) -> Document:
        if isolation_reason(doc.payload) is None:
            return self._cleaner(doc)
        if self._child is None:
            self._child = ChildProcess(self._cleaner.clean, self._page_timeout, self._page_memory_mib << 20)
        return with_cleaned_page(doc, self._child(doc.payload, doc.url))


def is_hidden(tag: str | None, attributes: dict[str, str | None], text: str | None) -> bool:
    """Rule 2 for an element that the walk found a candidate, as the CSS selector `[hidden],
    [aria-hidden="true" i], [style*="display" i], [style*="visibility" i], noscript, annotation`
    would find them (CSS cannot match `\\s*`). `tag` is given for noscript and annotation, and
    `text` for noscript."""
    if "hidden" in attributes and not REACT_SEGMENT.fullmatch(attributes.get("id") or ""):
        return True
    if (attributes.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if HIDDEN_STYLE.search(attributes.get("style") or ""):
        return True
    if tag == "noscript":
        return "<" in text or len("".join(text.split())) < NOSCRIPT_MIN_CHARACTERS
    return tag == "annotation"


def _tree_walk(root, body, user_hidden: set[int] | None) -> tuple[str | None, list[str], list]:
    """The pure-Python path of the C walk, with lexbor's tree operations; the same (text, hrefs, events).

    It removes the dropped and hidden subtrees, adds the abbreviations'
    expansions and the spaces between adjacent links, unwraps the inline
    elements, merges the adjacent text nodes and asks lexbor for the text,
    BOUNDARY between text nodes (None for a hidden body or none). The tree
    is changed.
    """
    hidden = set(user_hidden) if user_hidden else set()
    if body is not None:
        for node in css(body, HIDING_CANDIDATES):
            tag = node.tag
            if is_hidden(tag if tag in ("noscript", "annotation") else None, node.attributes,
                          node.text() if tag == "noscript" else None):
                hidden.add(node.mem_id)
    body_shown = body is not None and body.mem_id not in hidden
    hrefs, events = [], []
    kinds = _KINDS
    kinds_length = len(kinds)
    firsts = set()  # of title, base and the canonical link
    for top in root.iter():
        if body is not None and top.mem_id == body.mem_id and not body_shown:
            continue  # nothing of a hidden body is read, not even its metadata
        for node in top.traverse():
            tag_id = node.tag_id
            kind = kinds[tag_id] if tag_id < kinds_length else KIND_BLOCK
            if kind < KIND_ANCHOR or kind == KIND_ABBREVIATION:
                continue
            attributes = node.attributes
            if kind == KIND_ANCHOR or kind == KIND_AREA:
                href = attributes.get("href")
                if href:
                    hrefs.append(href)
            elif kind == KIND_META:
                if "content" in attributes:
                    events.append((kind, attributes))
            elif kind in firsts:
                continue
            elif kind == KIND_TITLE:
                firsts.add(kind)
                events.append((kind, node.text()))
            elif "href" in attributes and (kind == KIND_BASE or _is_canonical(attributes.get("rel"))):
                firsts.add(kind)
                events.append((kind, attributes["href"] or ""))
    if not body_shown:
        return None, hrefs, events
    dropped, inline, anchors, abbreviations = [], [], [], []
    # The body's elements in document order, not below a dropped one.
    pending = [body.iter(include_text=False)]
    # How many inline elements the children of each of `pending` are below; the most any inline element is.
    inline_above, most_inline_above = [0], 0
    while pending:
        node = next(pending[-1], None)
        if node is None:
            pending.pop()
            inline_above.pop()
            continue
        tag_id = node.tag_id
        kind = kinds[tag_id] if tag_id < kinds_length else KIND_BLOCK
        if node.is_comment_node or kind == KIND_DROP or KIND_TITLE <= kind or node.mem_id in hidden:
            dropped.append(node)
            continue
        above = inline_above[-1]
        if kind == KIND_INLINE or kind == KIND_ANCHOR or kind == KIND_ABBREVIATION:
            inline.append(node)
            most_inline_above = max(most_inline_above, above)
            above += 1
            if kind == KIND_ANCHOR:
                anchors.append(node)
            elif kind == KIND_ABBREVIATION:
                expansion = collapse_whitespace(node.attributes.get("title") or "")
                if expansion:
                    abbreviations.append((node, expansion))
        pending.append(node.iter(include_text=False))
        inline_above.append(above)
    for node in dropped:
        node.decompose()
    for abbreviation, expansion in abbreviations:
        abbreviation.insert_child(f" ({expansion})")
    for link in anchors:
        # A link right after a shown inline element (both with content).
        previous = link.prev
        if (previous is not None and previous.is_element_node and previous.first_child is not None
                and link.first_child is not None and previous.tag_id < kinds_length
                and kinds[previous.tag_id] in (KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION)):
            link.insert_before(" ")
    for node in inline:
        # Any other inline element right after a shown inline element whose text ends with a
        # lowercase letter, when its own text starts with an uppercase one (after the link spaces,
        # which its text may start with).
        previous = node.prev
        if (kinds[node.tag_id] != KIND_ANCHOR and previous is not None and previous.is_element_node
                and previous.tag_id < kinds_length
                and kinds[previous.tag_id] in (KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION)
                and previous.text()[-1:].islower() and node.text()[:1].isupper()):
            node.insert_before(" ")
    _unwrap(inline, most_inline_above)
    body.merge_text_nodes()
    return body.text(separator=BOUNDARY, skip_empty=True), hrefs, events


def _unwrap(inline: list, most_inline_above: int) -> None:
    """Replaces each of the `inline` elements (in document order) by its children, as `unwrap(delete_empty=True)`
    on each in turn does; `most_inline_above`: the most inline elements that one of them is below.

    lexbor walks the subtree of every node it inserts (its insertion steps), so unwrapping the elements one
    by one walks a node once for every inline element above it: 20,000 nested `<span>`s took 30 s. Where
    none is below `NESTED_INLINE_LIMIT` others, that is at most so many walks a node, in C, and they are
    unwrapped one by one (most pages: it is the faster). Otherwise each node below an inline element is taken
    out of its parent, and its own children out of it, before it is inserted where unwrapping would leave it:
    every node is inserted once, with nothing below it, from Python. (Each insertion also checks, as
    selectolax does for a move, that the new parent is not below the node: a walk up the new parent's
    ancestors, as deep as the parser has already gone.)
    """
    if most_inline_above < NESTED_INLINE_LIMIT:
        for node in inline:
            node.unwrap(delete_empty=True)
        return
    unwrapped = {node.mem_id for node in inline}
    for top in inline:
        if top.parent is None:
            continue  # below an inline element unwrapped before, and moved with its content
        # (where a node goes, the children left to place there)
        pending = [(top.insert_before, iter(_take_children(top)))]
        while pending:
            insert, children = pending[-1]
            child = next(children, None)
            if child is None:
                pending.pop()
                continue
            if child.first_child is None:  # a text, most of them: nothing below it to take out
                if child.mem_id not in unwrapped:
                    insert(child, move=True)
                continue
            grandchildren = _take_children(child)
            if child.mem_id in unwrapped:
                pending.append((insert, iter(grandchildren)))
                continue
            insert(child, move=True)
            pending.append((child.insert_child, iter(grandchildren)))
        top.decompose(recursive=False)


def _take_children(node) -> list:
    """The children of `node`, taken out of it (each keeps its own)."""
    children = []
    child = node.first_child
    while child is not None:
        children.append(child)
        child = child.next
    for child in children:
        child.decompose(recursive=False)
    return children


def _is_canonical(rel: str | None) -> bool:
    return rel is not None and rel.isascii() and rel.lower() == "canonical"


def _bind_walk():
    """The C walk, bound to selectolax's lexbor; None, with one warning, when it cannot be.

    The walk was compiled against the lexbor headers of one selectolax release (lexbor_headers.py): it
    binds only to that release, with the lexbor version its headers declare."""
    walk = native.load("_lexbor_walk")
    if walk is None:
        return None
    try:
        differing = [name for value, name in enumerate(_KIND_NAMES) if getattr(walk, name, None) != value]
        if differing:
            raise ImportError(f"its {', '.join(differing)} differ from clean_html's")
        if not hasattr(walk, "SELECTOLAX_VERSION"):
            raise ImportError("it was built without lexbor's headers, by an older webcorpus; rebuild webcorpus")
        mismatch = lexbor_mismatch(walk.SELECTOLAX_VERSION, walk.LEXBOR_VERSION)
        if mismatch:
            raise ImportError(mismatch)
        walk.bind(selectolax.lexbor.__file__, _KINDS, _tag_id("noscript"), is_hidden)
    except (ImportError, ValueError, RuntimeError) as error:
        native.refuse("_lexbor_walk", f"it cannot bind to selectolax's lexbor ({error})")
        return None
    return walk


def lexbor_mismatch(headers_selectolax: str, headers_lexbor: tuple[int, int, int]) -> str | None:
    """Why the installed selectolax is not the one whose lexbor headers the walk was compiled against
    (`headers_selectolax`, with lexbor `headers_lexbor`); None when it is. selectolax says which lexbor
    major and minor version it was built with (lexbor has no run-time version of its own)."""
    installed = importlib.metadata.version("selectolax")
    if installed != headers_selectolax:
        return (f"the walk was compiled against selectolax {headers_selectolax}'s lexbor headers, and selectolax "
                f"{installed} is installed; rebuild webcorpus (pip install .)")
    running = (selectolax.lexbor.LEXBOR_VERSION_MAJOR, selectolax.lexbor.LEXBOR_VERSION_MINOR)
    if running != tuple(headers_lexbor[:2]):
        return (f"selectolax's module runs lexbor {'.'.join(map(str, running))} and the walk was compiled against "
                f"lexbor {'.'.join(map(str, headers_lexbor))}'s headers")
    return None


_KINDS = _kind_table()
_WALK = _bind_walk()
_links = native.load("_links")


def _decode_entity(match) -> str:
    entity = match.group()
    if entity[1] != "#" and entity[1:] not in html_escaping.entities.html5:
        return entity
    return html_escaping.unescape(entity)


def decode_leftover_entities(text: str) -> str:
    """`text` with the entities that a page escaped twice decoded (`&amp;` -> `&`; `AT&T;` stays)."""
    if "&" not in text:
        return text
    for _ in range(3):
        decoded = LEFTOVER_ENTITY.sub(_decode_entity, text)
        if decoded == text:
            break
        text = decoded
    return text
