"""CleanHtml: a page reduced to the text a reader sees, in `<div>` blocks.

The rules, in the order they apply:

1. Metadata is taken first, into its own fields: the title, the links
   (absolute, resolved against `<base href>` and the page URL), the language
   (`<html lang>`, else `Content-Language` in `<meta>`) and the `<meta>`
   values in `META_NAMES`.
2. Elements that carry no text for a reader go with their content:
   `DROP_TAGS`, elements hidden by the `hidden` attribute, by
   `aria-hidden="true"`, by `display:none` or `visibility:hidden` in their
   `style`, and whatever the user's CSS selectors match.
3. `abbr`'s title is kept after its text: `WHO (World Health Organization)`.
4. Inline elements (`INLINE_TAGS`) are unwrapped, so `При<b>в</b>ет` stays
   one word.
5. Every other element is a block boundary, and so are `br` and `img`: the
   text between two boundaries is one block. Each block becomes one
   `<div>`, without attributes; blocks with no text are dropped.
6. Entities are decoded by the parser; whitespace inside a block collapses
   to single spaces. The `html` field escapes `&`, `<` and `>` again.

The output holds only `<div>` and text; the `text` field has the same blocks,
one per line.
"""

from __future__ import annotations

import html as html_escaping
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from transforms.document import Document
from transforms.stage import apply_stage

import apache_beam as beam

DROP_TAGS = (
    # Code and styling.
    "script", "style", "template", "noscript",
    # Embedded content that has no text of its own.
    "svg", "math", "iframe", "frame", "frameset", "object", "embed", "applet", "canvas",
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

# Candidates for hiding, confirmed by HIDDEN_STYLE (CSS cannot match `\s*`).
HIDING_SELECTOR = '[hidden], [aria-hidden="true" i], [style*="display" i], [style*="visibility" i]'
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)

META_NAMES = (
    "description", "keywords", "author", "generator", "robots",
    "og:title", "og:description", "og:site_name", "og:type", "og:locale",
)

LINK_SCHEMES = frozenset({"http", "https"})
# A character that never occurs in parsed text (lexbor turns NUL into U+FFFD)
# marks the boundary between text nodes.
BOUNDARY = "\x00"


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


def blocks_to_html(blocks: list[str]) -> str:
    return "".join(f"<div>{html_escaping.escape(block, quote=False)}</div>" for block in blocks)


def html_to_blocks(div_html: str) -> list[str]:
    """The blocks of `blocks_to_html`'s output, unescaped."""
    if not div_html:
        return []
    inner = div_html[len("<div>"):-len("</div>")]
    return [html_escaping.unescape(block) for block in inner.split("</div><div>")]


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def validate_selectors(selectors: tuple[str, ...]) -> None:
    probe = LexborHTMLParser("<div></div>")
    for selector in selectors:
        try:
            probe.css(selector)
        except Exception as error:
            raise ValueError(f"invalid CSS selector {selector!r}: {error}") from error


class HtmlCleaner:
    """The CleanHtml rules, with the user's extra selectors of elements to drop."""

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = ()):
        self.drop_selectors = tuple(drop_selectors)
        validate_selectors(self.drop_selectors)

    def clean(self, page: bytes | str, url: str = "") -> CleanedPage:
        tree = LexborHTMLParser(page)
        title, links, lang, meta = extract_metadata(tree, url)
        body = tree.body
        if body is None:
            return CleanedPage([], title, links, lang, meta)
        body.strip_tags(list(DROP_TAGS), recursive=True)
        self._drop_hidden(body)
        for abbr in body.css("abbr[title]"):
            expansion = collapse_whitespace(abbr.attributes.get("title") or "")
            if expansion:
                abbr.insert_child(f" ({expansion})")
        _separate_adjacent_links(body)
        body.unwrap_tags(list(INLINE_TAGS))
        body.merge_text_nodes()
        blocks = [block for block in map(collapse_whitespace, body.text(separator=BOUNDARY).split(BOUNDARY)) if block]
        return CleanedPage(blocks, title, links, lang, meta)

    def _drop_hidden(self, body) -> None:
        user_selector = ", ".join(self.drop_selectors)
        selector = f"{HIDING_SELECTOR}, {user_selector}" if user_selector else HIDING_SELECTOR
        doomed = {}
        # css() lists matches in document order, an element once per selector
        # that matches it.
        for node in body.css(selector):
            if node.mem_id not in doomed and (_is_hidden(node) or (user_selector and node.css_matches(user_selector))):
                doomed[node.mem_id] = node
        # Descendants go before their ancestors, so that no node is touched
        # after an ancestor's removal freed it.
        for node in reversed(list(doomed.values())):
            node.decompose()

    def __call__(self, doc: Document) -> Document:
        page = self.clean(doc.payload, doc.url)
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


def _separate_adjacent_links(body) -> None:
    # A menu of links written without spaces (`<a>Home</a><a>News</a>`) shows
    # as separate items; unwrapped, it would become one word. Only a link
    # that directly follows another element gets a space, so markup inside a
    # word (`<b>%</b>165`, `При<b>в</b>ет`) stays glued.
    for link in body.css("a"):
        previous = link.prev
        if previous is not None and previous.is_element_node and previous.tag in INLINE_TAG_SET:
            link.insert_before(" ")


def _is_hidden(node) -> bool:
    attributes = node.attributes
    if "hidden" in attributes or (attributes.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(HIDDEN_STYLE.search(attributes.get("style") or ""))


def extract_metadata(tree: LexborHTMLParser, url: str) -> tuple[str, list[str], str, dict[str, str]]:
    title_node = tree.css_first("title")
    title = collapse_whitespace(title_node.text()) if title_node is not None else ""

    base_node = tree.css_first("base[href]")
    base = urljoin(url, (base_node.attributes.get("href") or "").strip()) if base_node is not None else url
    links = []
    seen = set()
    for anchor in tree.css("a[href], area[href]"):
        href = (anchor.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        try:
            absolute = urljoin(base, href)
            scheme = urlsplit(absolute).scheme
        except ValueError:
            continue
        if scheme in LINK_SCHEMES and absolute not in seen:
            seen.add(absolute)
            links.append(absolute)

    root = tree.root
    lang = ""
    if root is not None:
        lang = (root.attributes.get("lang") or root.attributes.get("xml:lang") or "").strip()
    meta = {}
    for node in tree.css("meta[content]"):
        attributes = node.attributes
        name = (attributes.get("name") or attributes.get("property") or attributes.get("http-equiv") or "").strip().lower()
        content = collapse_whitespace(attributes.get("content") or "")
        if not content:
            continue
        if name == "content-language" and not lang:
            lang = content.split(",")[0].strip()
        elif name in META_NAMES and name not in meta:
            meta[name] = content
    canonical = tree.css_first('link[rel="canonical" i][href]')
    if canonical is not None:
        meta["canonical"] = urljoin(base, (canonical.attributes.get("href") or "").strip())
    return title, links, lang.lower(), meta


class CleanHtml(beam.PTransform):
    """Applies `HtmlCleaner` to every document; failures go to `dead_letter`."""

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = ()):
        super().__init__()
        self._cleaner = HtmlCleaner(drop_selectors)

    def expand(self, docs):
        return apply_stage(docs, "clean_html", self._cleaner)
