"""CleanHtml's walk in C against the rules carried out with lexbor's own tree operations.

The reference below removes the dropped and hidden subtrees, adds the abbreviations'
expansions and the spaces between adjacent links, unwraps the inline elements, merges the
adjacent text nodes and asks lexbor for the text: slow, and plainly the rules of
`transforms/clean_html.py`. The walk reads the same tree without changing it, and must give the
same blocks and links for any page.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from transforms import _lexbor_walk
from transforms.clean_html import (BOUNDARY, DROP_TAGS, INLINE_TAGS, HtmlCleaner, _is_hidden, _tag_ids,
                                   collapse_whitespace, decode_leftover_entities, split_blocks)

HIDING_CANDIDATES = ('[hidden], [aria-hidden="true" i], [style*="display" i], [style*="visibility" i], noscript, '
                     'annotation')
DROPPED_TAG_IDS = _tag_ids(DROP_TAGS + ("title", "base", "meta", "link"))
INLINE_TAG_IDS = _tag_ids(INLINE_TAGS)
ANCHOR_ID, ABBR_ID = (next(iter(_tag_ids((name,)))) for name in ("a", "abbr"))


def reference(page: str, selectors: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(blocks, hrefs) by the rules, with tree operations."""
    tree = LexborHTMLParser(page)
    body = tree.body
    hidden = {node.mem_id for node in body.css(HIDING_CANDIDATES)
              if _is_hidden(node.tag if node.tag in ("noscript", "annotation") else None, node.attributes,
                         node.text() if node.tag == "noscript" else None)}
    if selectors:
        hidden |= {node.mem_id for node in body.css(", ".join(selectors))}
    hrefs = []
    for top in tree.root.iter():
        if top.mem_id == body.mem_id and body.mem_id in hidden:
            continue  # nothing of a hidden body is read
        hrefs += [node.attrs.get("href") for node in top.traverse()
                  if node.tag in ("a", "area") and node.attrs.get("href")]
    if body.mem_id in hidden:
        return [], hrefs
    dropped, inline, anchors, abbreviations = [], [], [], []

    def sort(node):
        for child in node.iter(include_text=False):
            if child.is_comment_node or child.tag_id in DROPPED_TAG_IDS or child.mem_id in hidden:
                dropped.append(child)
                continue
            if child.tag_id in INLINE_TAG_IDS:
                inline.append(child)
                if child.tag_id == ANCHOR_ID:
                    anchors.append(child)
                expansion = collapse_whitespace(child.attrs.get("title") or "") if child.tag_id == ABBR_ID else ""
                if expansion:
                    abbreviations.append((child, expansion))
            sort(child)

    sort(body)
    for node in dropped:
        node.decompose()
    for abbr, expansion in abbreviations:
        abbr.insert_child(f" ({expansion})")
    for link in anchors:
        previous = link.prev
        if (previous is not None and previous.is_element_node and previous.tag_id in INLINE_TAG_IDS
                and previous.first_child is not None and link.first_child is not None):
            link.insert_before(" ")
    for node in inline:
        node.unwrap(delete_empty=True)
    body.merge_text_nodes()
    text = body.text(separator=BOUNDARY, skip_empty=True)
    return split_blocks(decode_leftover_entities(text)), hrefs


def walked(page: str, selectors: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    tree = LexborHTMLParser(page)
    user_hidden = {node.mem_id for node in tree.body.css(", ".join(selectors))} if selectors else None
    hrefs = _lexbor_walk.walk(tree.root.mem_id, tree.body.mem_id, user_hidden)[2]
    return HtmlCleaner(selectors).clean(page).blocks, hrefs


TEXTS = st.sampled_from([
    "word", "При", "вет", " ", "  ", "\n", "\t", "\xa0", "\u2003", "\u3000", "\x1c", "\u200b", "\u1680", "\x85",
    "&amp;", "&amp;amp;", "&amp;nbsp;", "&amp;lt;", "&amp;#9;", "&lt;b&gt;", "AT&T;", "a&b", "&#x41;", "\u00ad", "é", "日本",
])
ATTRIBUTES = st.sampled_from([
    "", " hidden", ' hidden id="S:1a"', ' hidden id="S:XY"', ' aria-hidden="true"', ' aria-hidden="TRUE"',
    ' aria-hidden=" true "', ' aria-hidden="false"', ' style="display:none"', ' style="DISPLAY : None"',
    ' style="display:block"', ' style="visibility: hidden"', ' style="color: red; visibility:visible"',
    ' style="display:block" aria-hidden=" true "', ' class="warning"', ' title="World  Health\nOrganization"',
    ' title=" "', ' title', ' href="/x"', ' href=""', ' href', ' xlink:href="/y"', ' HREF="/z"',
])
TAGS = st.sampled_from([
    "div", "p", "span", "b", "i", "a", "abbr", "br", "img", "script", "style", "template", "noscript",
    "annotation", "math", "svg", "select", "option", "button", "label", "area", "map", "title", "meta", "link",
    "table", "td", "li", "wbr", "custom-element", "sup", "font", "iframe",
])
VOID = {"br", "img", "meta", "link", "area", "wbr"}


def element(children):
    return st.builds(
        lambda tag, attributes, inner: f"<{tag}{attributes}>" + ("" if tag in VOID else f"{inner}</{tag}>"),
        TAGS, ATTRIBUTES, children.map("".join))


OTHER_NODES = st.sampled_from(["<!-- c -->", "<![CDATA[x]]>", "<?pi x?>", "&nbsp;", "<b></b>", "<span> </span>"])
FRAGMENTS = st.recursive(st.one_of(TEXTS, OTHER_NODES), lambda children: element(st.lists(children, max_size=4)),
                         max_leaves=25)
PAGES = st.builds(lambda head, body_attributes, body: f"<html><head>{head}</head><body{body_attributes}>{body}</body>"
                  "</html>", st.sampled_from(["", "<title>T</title>", '<base href="/b/">']),
                  st.sampled_from(["", " hidden", ' style="display:none"', ' class="warning"']),
                  st.lists(FRAGMENTS, max_size=6).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=PAGES, selectors=st.sampled_from([(), (".warning",), ("div.warning, p",), ("span > b",)]))
def test_the_walk_gives_what_the_tree_operations_give(page, selectors):
    assert walked(page, selectors) == reference(page, selectors)


@pytest.mark.parametrize("page", [
    "<p>a<b></b>c</p>",                                      # an empty inline element is no boundary
    "<p>a<script>x</script>b</p>",                           # nor is a dropped one
    "<p>a<br>b</p><p>c<img>d</p>",                           # br and img are
    "<p><b>x</b><a href=/1>1</a><a href=/2>2</a></p>",       # links after shown inline elements
    "<p><b><script></script></b><a>1</a></p>",               # the first is empty once the script goes
    "<p><b>x</b><a><!-- --></a><a>y</a></p>",
    "<p><abbr title=' W  H O '></abbr><a>x</a></p>",         # an expansion is content
    "<p>x<abbr title='t'><div>y</div></abbr>z</p>",
    "<p>a<![CDATA[x]]>b</p>", "<p><math><mi>a</mi><![CDATA[x]]><mi>b</mi></math>c<?pi?>d<!-- -->e</p>",
    "<body hidden><a href=/in>x</a></body>",
    "<p>\xa0 a \u3000 b\u200b \x1c</p>",
    "<p>&amp;amp; &amp;nbsp;</p>", "<p>x&amp;lt;y &amp;#9;z</p>",
])
def test_tricky_pages(page):
    assert walked(page) == reference(page)


def test_the_developer_corpus(corpus_dir):
    from benchmarks.throughput import load_pages

    pages = [page for page in load_pages(corpus_dir) if LexborHTMLParser(page.payload).body is not None]
    for page in pages:
        assert walked(page.payload) == reference(page.payload), page.url
    assert len(pages) > 900
