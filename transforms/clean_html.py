"""CleanHtml: a page reduced to the text a reader sees, in `<div>` blocks.

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
   spaces is separate words).
5. Every other element is a block boundary, and so are `br` and `img`: the
   text between two boundaries is one block. Each block becomes one
   `<div>`, without attributes; blocks with no text are dropped.
6. Entities are decoded by the parser, and those the page escaped twice
   (`&amp;amp;`) once more (`decode_leftover_entities`); whitespace inside a
   block collapses to single spaces. The `html` field escapes `&`, `<` and
   `>` again.

The output holds only `<div>` and text; the `text` field has the same blocks,
one per line.

How it runs (the work is pushed into lexbor): one `traverse()` of the
document decides per element by its tag id, collecting the metadata, the
elements to drop, the inline elements and the links; the CSS engine is
asked once, for the hiding attributes and the user's selectors. Then the
dropped subtrees are removed, inline elements are unwrapped, adjacent text
nodes are merged and lexbor's `text()` returns the blocks. No node inside a
dropped subtree is collected, so none is touched after it was freed.
"""

from __future__ import annotations

import html as html_escaping
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser

from transforms.document import Document
from transforms.isolation import ChildProcess
from transforms.stage import apply_stage

import apache_beam as beam

DROP_TAGS = (
    # Code and styling.
    "script", "style", "template",
    # Embedded content that has no text of its own (MathML's formulas are
    # text; its TeX or XML sources in `annotation` are not shown).
    "svg", "annotation-xml", "iframe", "frame", "frameset", "object", "embed", "applet", "canvas",
    "audio", "video", "picture", "source", "track", "map",
    # Form controls (the form itself and its labels stay).
    "input", "button", "select", "option", "optgroup", "datalist", "textarea", "output",
    "progress", "meter", "keygen",
    # Document metadata.
    "head", "title", "meta", "link", "base",
)

INLINE_TAGS = (
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "blink", "cite", "code", "data", "del",
    "dfn", "em", "font", "i", "ins", "kbd", "label", "mark", "nobr", "q", "rb", "rp", "rt",
    "rtc", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var", "wbr",
)

INLINE_TAG_SET = frozenset(INLINE_TAGS)

# Candidates for hiding, confirmed by `_is_hidden` (CSS cannot match `\s*`).
HIDING_SELECTOR = ('[hidden], [aria-hidden="true" i], [style*="display" i], [style*="visibility" i], noscript, '
                   'annotation')
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
# See GuardedCleaner.
ISOLATE_ABOVE_TAGS = 25_000
DEFAULT_PAGE_TIMEOUT = 30.0
# A character that never occurs in parsed text (lexbor turns NUL into U+FFFD)
# marks the boundary between text nodes.
BOUNDARY = "\x00"


def _tag_ids(names) -> frozenset[int]:
    factory = LexborHTMLParser("")
    return frozenset(factory.create_node(name).tag_id for name in names)


def _tag_id(name: str) -> int:
    return next(iter(_tag_ids((name,))))


DROP_TAG_IDS = _tag_ids(DROP_TAGS)
INLINE_TAG_IDS = _tag_ids(INLINE_TAGS)
_A, _AREA, _ABBR, _TITLE, _BASE, _META, _LINK = (
    _tag_id(name) for name in ("a", "area", "abbr", "title", "base", "meta", "link"))
_COMMENT = next(node.tag_id for node in LexborHTMLParser("<p><!----></p>").body.traverse() if node.is_comment_node)
# What the traversal does with an element, by tag id; other elements are
# block boundaries (_BLOCK) and need nothing.
_DROP, _INLINE, _ANCHOR, _ABBREVIATION, _AREA_LINK, _TITLE_META, _BASE_META, _META_META, _LINK_META, _BLOCK = range(10)
# Added to the kind of a tag that some hidden element of the page has.
_MAYBE_HIDDEN = 16
_KINDS = {tag_id: _DROP for tag_id in DROP_TAG_IDS}
_KINDS.update({tag_id: _INLINE for tag_id in INLINE_TAG_IDS})
_KINDS.update({_A: _ANCHOR, _ABBR: _ABBREVIATION, _AREA: _AREA_LINK, _TITLE: _TITLE_META, _BASE: _BASE_META,
               _META: _META_META, _LINK: _LINK_META})
# Comments are invisible and no boundary: they go, so that the text around
# them stays one block.
_KINDS[_COMMENT] = _DROP
# Kinds that are metadata; title, base, meta and link are dropped too.
_METADATA_KINDS = frozenset({_ANCHOR, _AREA_LINK, _TITLE_META, _BASE_META, _META_META, _LINK_META})
_END = -1  # a dropped subtree that lasts to the end of the body


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


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """The inverse of `_escape` (every `&` of escaped text starts one of its three entities)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def blocks_to_html(blocks: list[str]) -> str:
    if not blocks:
        return ""
    joined = BOUNDARY.join(blocks)
    if joined.count(BOUNDARY) == len(blocks) - 1:
        return "<div>" + _escape(joined).replace(BOUNDARY, "</div><div>") + "</div>"
    return "".join(f"<div>{_escape(block)}</div>" for block in blocks)


def html_to_blocks(div_html: str) -> list[str]:
    """The blocks of `blocks_to_html`'s output, unescaped."""
    if not div_html:
        return []
    inner = div_html[len("<div>"):-len("</div>")]
    blocks = inner.split("</div><div>")
    if "&" not in inner:
        return blocks
    return [unescape(block) if "&" in block else block for block in blocks]


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


class _Metadata:
    """What the traversal collects for rule 1, resolved by `finish`."""

    __slots__ = ("title", "base_href", "hrefs", "metas", "canonical_href")

    def __init__(self):
        self.title = None
        self.base_href = None
        self.hrefs = []
        self.metas = []
        self.canonical_href = None

    def add(self, kind: int, node) -> None:
        if kind == _ANCHOR or kind == _AREA_LINK:
            href = node.attrs.get("href")
            if href:
                self.hrefs.append(href)
        elif kind == _TITLE_META:
            if self.title is None:
                self.title = collapse_whitespace(node.text())
        elif kind == _META_META:
            attributes = node.attributes
            if "content" in attributes:
                self.metas.append(attributes)
        elif kind == _BASE_META:
            if self.base_href is None and "href" in node.attrs:
                self.base_href = node.attrs.get("href") or ""
        elif kind == _LINK_META:
            if self.canonical_href is None:
                attributes = node.attributes
                rel = attributes.get("rel")
                if rel is not None and "href" in attributes and rel.isascii() and rel.lower() == "canonical":
                    self.canonical_href = attributes.get("href") or ""

    def finish(self, url: str, root) -> tuple[str, list[str], str, dict[str, str]]:
        base = urljoin(url, self.base_href.strip()) if self.base_href is not None else url
        links = resolve_links(base, self.hrefs)
        lang = ""
        if root is not None:
            attributes = root.attributes
            lang = (attributes.get("lang") or attributes.get("xml:lang") or "").strip()
        meta = {}
        for attributes in self.metas:
            name = (attributes.get("name") or attributes.get("property") or attributes.get("http-equiv") or "").strip().lower()
            content = collapse_whitespace(attributes.get("content") or "")
            if not content:
                continue
            if name == "content-language" and not lang:
                lang = content.split(",")[0].strip()
            elif name in META_NAMES and name not in meta:
                meta[name] = content
        if self.canonical_href is not None:
            meta["canonical"] = urljoin(base, self.canonical_href.strip())
        return self.title or "", links, lang.lower(), meta


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
    unique = dict.fromkeys(map(str.strip, hrefs))
    unique.pop("", None)
    if not unique:
        return []
    parts = _base_parts(base) if _FAST_JOIN else None
    # Checked at once for the hrefs that may take the inline paths below
    # (those starting with `/` or `h`): most pages have none that needs
    # urljoin for its characters, an empty query or fragment, or a dot
    # segment.
    joined = "\x00" + "\x00".join([href for href in unique if href[0] in "/h"]) + "\x00"
    # Searching for one character is many times faster than for two: the
    # two-character checks only run where their first character occurs.
    plain = (_FAST_JOIN and joined.isascii()
             and ("?" not in joined or ("?#" not in joined and "?\x00" not in joined))
             and ("#" not in joined or "#\x00" not in joined)
             and not any(character in joined for character in _JOIN_UNSAFE_CHARACTERS))

    def other(href: str) -> str | None:
        if href[0] == "#":
            return None
        absolute = _fast_join(parts, href, plain and href[0] in "/h") if _FAST_JOIN else None
        if absolute is None:
            try:
                absolute = urljoin(base, href)
                if urlsplit(absolute).scheme not in LINK_SCHEMES:
                    return None
            except ValueError:
                return None
        return absolute or None  # _REJECT is ""

    if plain and parts is not None and _DOT_SEGMENT.search(joined) is None:
        # The commonest hrefs inline: a path from the root, an absolute
        # http(s) URL with a host.
        origin = parts[1]
        no_host = _NO_HOST
        resolved = [
            origin + href if href[0] == "/" and href[1:2] != "/"
            else href if (href[8:9] not in no_host and href[:8] == "https://")
            or (href[7:8] not in no_host and href[:7] == "http://")
            else other(href)
            for href in unique
        ]
    else:
        resolved = [other(href) for href in unique]
    return list(dict.fromkeys(filter(None, resolved)))


# `"/." in text` searches at half the speed of this.
_DOT_SEGMENT = re.compile(r"/\.")
_NO_HOST = frozenset(("", "/", "?", "#"))


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
        self._selector = f"{HIDING_SELECTOR}, {self._user_selector}" if self._user_selector else HIDING_SELECTOR

    def clean(self, page: bytes | str, url: str = "") -> CleanedPage:
        tree = LexborHTMLParser(page)
        root = tree.root
        body = tree.body
        metadata = _Metadata()
        if body is None:
            if root is not None:
                _collect_metadata(root, metadata)
            return CleanedPage([], *metadata.finish(url, root))
        body_id = body.mem_id
        hidden = self._hidden(body)
        parts = None
        # The root's children in document order: metadata from all of them,
        # the cleaning rules in the body.
        for child in root.iter():
            if child.mem_id == body_id:
                parts = _collect_body(child, hidden, metadata)
            else:
                _collect_metadata(child, metadata)
        title, links, lang, meta = metadata.finish(url, root)
        if parts is None:
            return CleanedPage([], title, links, lang, meta)
        dropped, inline, anchors, abbreviations = parts
        if dropped and dropped[0] is None:
            # The body itself is hidden.
            return CleanedPage([], title, links, lang, meta)
        # Dropped subtrees are disjoint and nothing collected lies inside
        # one, so no node below is touched after its removal.
        for node in dropped:
            node.decompose()
        for abbr, expansion in abbreviations:
            abbr.insert_child(f" ({expansion})")
        _separate_adjacent_links(anchors)
        for node in inline:
            node.unwrap(delete_empty=True)
        body.merge_text_nodes()
        text = body.text(separator=BOUNDARY, skip_empty=True)
        if "&" in text:
            text = decode_leftover_entities(text)
        return CleanedPage(split_blocks(text), title, links, lang, meta)

    def _hidden(self, body) -> dict[int, int]:
        """The elements that rule 2 hides (by attribute or by the user's selectors): mem_id -> tag id."""
        user_selector = self._user_selector
        hidden = {}
        for node in css(body, self._selector):
            mem_id = node.mem_id
            if mem_id not in hidden and (_is_hidden(node) or (user_selector and node.css_matches(user_selector))):
                hidden[mem_id] = node.tag_id
        return hidden

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


class GuardedCleaner:
    """Cleans pages with many tags in a child process with a time limit.

    lexbor is quadratic on deep nesting (100,000 nested `<div>`s take about
    90 s to parse here) and, as native code, can neither be interrupted by a
    Python thread nor kept from taking the worker down if it crashes. Depth
    is only known after parsing; the count of `<` bounds it and costs
    microseconds. The most on the dev corpus is 19,252; below
    `ISOLATE_ABOVE_TAGS` the worst nesting parses in about 5 s. The child
    is started at the first such page (a Python with Beam: ~140 MiB).
    """

    def __init__(self, cleaner: HtmlCleaner, page_timeout: float = DEFAULT_PAGE_TIMEOUT):
        self._cleaner = cleaner
        self._page_timeout = page_timeout
        self._child = None

    def __getstate__(self):
        return {"_cleaner": self._cleaner, "_page_timeout": self._page_timeout, "_child": None}

    def __call__(self, doc: Document) -> Document:
        if doc.payload.count(b"<") <= ISOLATE_ABOVE_TAGS:
            return self._cleaner(doc)
        if self._child is None:
            self._child = ChildProcess(self._cleaner.clean, self._page_timeout)
        return with_cleaned_page(doc, self._child(doc.payload, doc.url))


def _collect_metadata(top, metadata: _Metadata) -> None:
    kinds = _KINDS
    metadata_kinds = _METADATA_KINDS
    for node in top.traverse():
        kind = kinds.get(node.tag_id)
        if kind in metadata_kinds:
            metadata.add(kind, node)


def _collect_body(body, hidden: dict[int, int], metadata: _Metadata):
    """One pass over the body: metadata, and what rules 2-4 act on.

    Returns the roots of dropped subtrees, the inline elements, the links
    and the abbreviations with their expansion, none of them inside a
    dropped subtree; the first dropped root is None when the body itself is
    hidden.
    """
    kinds = _KINDS
    if hidden:
        # Only elements of the hidden elements' tags are looked up.
        kinds = dict(kinds)
        for tag_id in set(hidden.values()):
            kinds[tag_id] = kinds.get(tag_id, _BLOCK) + _MAYBE_HIDDEN
    kind_of = kinds.get
    metadata_kinds = _METADATA_KINDS
    hrefs = metadata.hrefs
    body_id = body.mem_id
    dropped = []
    inline = []
    anchors = []
    abbreviations = []
    skip_to = 0  # while in a dropped subtree: the mem_id of the node after it
    for node in body.traverse():
        kind = kind_of(node.tag_id)
        if skip_to:
            if skip_to == _END or node.mem_id != skip_to:
                if kind is not None:
                    kind &= 15
                    if kind == _ANCHOR:
                        href = node.attrs.get("href")
                        if href:
                            hrefs.append(href)
                    elif kind in metadata_kinds:
                        metadata.add(kind, node)
                continue
            skip_to = 0
        if kind is None:
            continue
        if kind >= _MAYBE_HIDDEN:
            kind -= _MAYBE_HIDDEN
            if node.mem_id in hidden:
                if kind in metadata_kinds:
                    metadata.add(kind, node)
                if node.mem_id == body_id:
                    return [None], [], [], []
                dropped.append(node)
                if node.first_child is not None:
                    skip_to = _element_after(node, body_id)
                continue
            if kind == _BLOCK:
                continue
        if kind == _INLINE:
            inline.append(node)
            continue
        if kind == _ANCHOR:
            href = node.attrs.get("href")
            if href:
                hrefs.append(href)
            inline.append(node)
            anchors.append(node)
            continue
        if kind == _DROP:
            dropped.append(node)
            # A comment or an empty element has no subtree to pass over.
            if node.first_child is not None:
                skip_to = _element_after(node, body_id)
        elif kind == _ABBREVIATION:
            inline.append(node)
            title = node.attrs.get("title")
            if title:
                expansion = collapse_whitespace(title)
                if expansion:
                    abbreviations.append((node, expansion))
        elif kind != _AREA_LINK:
            # title, base, meta, link: metadata, then dropped.
            metadata.add(kind, node)
            dropped.append(node)
            if node.first_child is not None:
                skip_to = _element_after(node, body_id)
        else:
            metadata.add(kind, node)
    return dropped, inline, anchors, abbreviations


def _element_after(node, stop_id: int) -> int:
    """The mem_id of the first non-text node after `node`'s subtree, in document order, within `stop_id`'s."""
    while True:
        sibling = node.next
        while sibling is not None:
            # traverse() yields every node but text nodes.
            if not sibling.is_text_node:
                return sibling.mem_id
            sibling = sibling.next
        node = node.parent
        if node is None or node.mem_id == stop_id:
            return _END


def _separate_adjacent_links(anchors) -> None:
    # A menu of links written without spaces (`<a>Home</a><a>News</a>`) shows
    # as separate items; unwrapped, it would become one word. Only a link
    # that directly follows another element gets a space, so markup inside a
    # word (`<b>%</b>165`, `При<b>в</b>ет`) stays glued.
    inline_ids = INLINE_TAG_IDS
    for link in anchors:
        previous = link.prev
        # Empty elements show nothing to keep apart (`le<a></a><a></a>ave`).
        if (previous is not None and previous.is_element_node and previous.tag_id in inline_ids
                and previous.first_child is not None and link.first_child is not None):
            link.insert_before(" ")


def _is_hidden(node) -> bool:
    attributes = node.attributes
    if "hidden" in attributes and not REACT_SEGMENT.fullmatch(attributes.get("id") or ""):
        return True
    if (attributes.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if HIDDEN_STYLE.search(attributes.get("style") or ""):
        return True
    tag = node.tag
    if tag == "noscript":
        text = node.text()
        return "<" in text or len("".join(text.split())) < NOSCRIPT_MIN_CHARACTERS
    return tag == "annotation"


def _decode_entity(match) -> str:
    entity = match.group()
    if entity[1] != "#" and entity[1:] not in html_escaping.entities.html5:
        return entity
    return html_escaping.unescape(entity)


def decode_leftover_entities(text: str) -> str:
    """`text` with the entities that a page escaped twice decoded (`&amp;` -> `&`; `AT&T;` stays)."""
    for _ in range(3):
        decoded = LEFTOVER_ENTITY.sub(_decode_entity, text)
        if decoded == text:
            break
        text = decoded
    return text


class CleanHtml(beam.PTransform):
    """Applies `HtmlCleaner` to every document; failures go to `dead_letter`."""

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = (),
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT):
        super().__init__()
        self._cleaner = GuardedCleaner(HtmlCleaner(drop_selectors), page_timeout)

    def expand(self, docs):
        return apply_stage(docs, "clean_html", self._cleaner)
