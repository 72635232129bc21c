"""CleanHtml's rule, as data: a page reduced to the text a reader sees, in `<div>` blocks.

The rules, in the order they apply:

1. Metadata is taken first, into its own fields: the title, the links
   (absolute, resolved against `<base href>` and the page URL), the language
   (`<html lang>`, else `Content-Language` in `<meta>`) and the `<meta>`
   values in `META_NAMES` (`transforms/stages/clean_html/metadata.py`).
2. Elements that carry no text for a reader go with their content:
   `DROP_TAGS`, elements hidden by the `hidden` attribute (but React's
   streamed segments, `REACT_SEGMENT`), by `aria-hidden="true"`, by
   `display:none` or `visibility:hidden` in their `style`, MathML's
   `annotation`, a `<noscript>` shorter than `NOSCRIPT_MIN_CHARACTERS` or
   holding markup written as text (`is_hidden`), and whatever the user's CSS
   selectors match.
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
   (`&amp;amp;`) once more (`transforms/stages/clean_html/text.py`); whitespace inside
   a block collapses to single spaces. The `html` field escapes `&`, `<` and
   `>` again.

The output holds only `<div>` and text; the `text` field has the same blocks,
one per line. Both walks (`c_walk`, `python_walk`) read these tables:
`KINDS` says, by tag id, what they do with an element.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

# Rule 2. Checked against the HTML standard's rendering rules, tag by tag, in
# docs/fidelity.md ("What a browser renders").
# Code and styling: never rendered.
CODE_TAGS = ("script", "style", "template")
# Embedded content whose children a browser does not render (MathML's
# formulas are text; its TeX or XML sources in `annotation` are not
# shown). `object` and `applet` are inline: they show their children
# when what they embed cannot be shown (a Flash video, a Java applet:
# every browser today), all but `param`.
EMBEDDED_TAGS = ("svg", "annotation-xml", "iframe", "frame", "frameset", "embed", "param", "canvas",
                 "audio", "video", "picture", "source", "track", "map")
# Form controls (the form itself and its labels stay).
FORM_CONTROL_TAGS = ("input", "button", "select", "option", "optgroup", "datalist", "textarea",
                     "progress", "meter", "keygen")
# Document metadata: never rendered (rule 1 reads title, base, meta and link first).
METADATA_TAGS = ("head", "title", "meta", "link", "base")
DROP_TAGS = CODE_TAGS + EMBEDDED_TAGS + FORM_CONTROL_TAGS + METADATA_TAGS

# Rule 2's hidden elements: candidates by attribute or tag, which `is_hidden` decides on.
HIDING_ATTRIBUTES = ("hidden", "aria-hidden", "style")
HIDING_TAGS = ("noscript", "annotation")
# The candidates as a CSS selector (CSS cannot match `\s*`, so `is_hidden` has the last word).
HIDING_CANDIDATES = ", ".join(('[hidden]', '[aria-hidden="true" i]', '[style*="display" i]',
                               '[style*="visibility" i]') + HIDING_TAGS)
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

# Rule 4.
INLINE_TAGS = (
    "a", "abbr", "acronym", "applet", "b", "bdi", "bdo", "big", "blink", "cite", "code", "data", "del",
    "dfn", "em", "font", "i", "ins", "kbd", "label", "mark", "nobr", "object", "output", "q", "rb", "rp",
    "rt", "rtc", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var", "wbr",
)

# Rule 1: the `<meta>` values kept, by name (or property).
META_NAMES = (
    "description", "keywords", "author", "generator", "robots",
    "og:title", "og:description", "og:site_name", "og:type", "og:locale",
)

# What the walk does with an element, by tag id; 0, a block boundary, for
# tags not listed. The C walk has the same numbers (checked when it binds).
KIND_BLOCK, KIND_DROP, KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION, KIND_AREA, KIND_TITLE, KIND_BASE, KIND_META, \
    KIND_LINK = range(10)
KIND_NAMES = ("KIND_BLOCK", "KIND_DROP", "KIND_INLINE", "KIND_ANCHOR", "KIND_ABBREVIATION", "KIND_AREA", "KIND_TITLE",
              "KIND_BASE", "KIND_META", "KIND_LINK")


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


def is_hidden_element(node) -> bool:
    """`is_hidden` for an element of selectolax's lexbor tree."""
    tag = node.tag
    return is_hidden(tag if tag in HIDING_TAGS else None, node.attributes, node.text() if tag == "noscript" else None)


def tag_ids(names) -> frozenset[int]:
    factory = LexborHTMLParser("")
    return frozenset(factory.create_node(name).tag_id for name in names)


def tag_id(name: str) -> int:
    return next(iter(tag_ids((name,))))


def kind_table() -> bytes:
    """What the walk does with an element, by tag id; elements not listed are block boundaries."""
    kinds = {identifier: KIND_DROP for identifier in tag_ids(DROP_TAGS)}
    kinds.update({identifier: KIND_INLINE for identifier in tag_ids(INLINE_TAGS)})
    kinds.update({tag_id(name): kind for name, kind in (
        ("a", KIND_ANCHOR), ("abbr", KIND_ABBREVIATION), ("area", KIND_AREA),
        # Metadata; title, base, meta and link are dropped too.
        ("title", KIND_TITLE), ("base", KIND_BASE), ("meta", KIND_META), ("link", KIND_LINK))})
    table = bytearray(max(kinds) + 1)  # 0 is KIND_BLOCK
    for identifier, kind in kinds.items():
        table[identifier] = kind
    return bytes(table)


KINDS = kind_table()
