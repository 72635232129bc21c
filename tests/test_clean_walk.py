"""CleanHtml's two paths give the same pages: the walk in C and the pure-Python path.

The pure-Python path (`cleaning.python_walk.tree_walk`) carries the rules out with lexbor's own tree
operations: it removes the dropped and hidden subtrees, adds the abbreviations' expansions and
the spaces between adjacent links, unwraps the inline elements, merges the adjacent text nodes and
asks lexbor for the text, plainly the rules of `transforms/stages/clean_html/rules.py`. The C walk reads the
same tree without changing it, and must give the same blocks, links and metadata for any page; and, for
`--main-content`, the same features of each block (`cleaning.python_features`), hence the same main content.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from transforms.corpus.blocks import BOUNDARY
from transforms.stages.clean_html import c_walk, links, python_walk
from transforms.stages.clean_html.css_selectors import css
from transforms.stages.clean_html.main_content import block_features
from transforms.stages.clean_html.python_walk import tree_walk
from transforms.stages.clean_html.text import split_blocks
from transforms.stages.clean_html.clean_html import HtmlCleaner

pytestmark = pytest.mark.skipif(c_walk.WALK is None, reason="the C walk is not in use here (not built, "
                                "refused, or WEBCORPUS_PURE_PYTHON=1): only the pure-Python path runs")


def walks(page: str | bytes, selectors: tuple[str, ...] = ()) -> tuple[tuple, tuple]:
    """(blocks before entity decoding, whether the body is hidden or absent, hrefs, events, each block's features for
    main content) of each walk."""
    found = []
    for walk in ("c", "python"):
        tree = LexborHTMLParser(page)
        root, body = tree.root, tree.body
        user_hidden = {node.mem_id for node in css(body, ", ".join(selectors))} if selectors and body else None
        if walk == "c":
            text, _, hrefs, events, features = c_walk.WALK.walk(root.mem_id, body.mem_id if body else 0, user_hidden,
                                                                True)
            blocks, features = text.split(BOUNDARY) if text else [], block_features(features)
        else:
            text, hrefs, events, features = tree_walk(root, body, user_hidden, True)
            blocks = split_blocks(text or "")
        found.append((blocks, text is None, hrefs, events, features))
    return found[0], found[1]


def cleaned(page: str | bytes, selectors: tuple[str, ...] = (), main_content: bool = False):
    """The CleanedPage with the C walk and links, and with neither."""
    accelerated = HtmlCleaner(selectors, main_content).clean(page, "https://example.org/dir/page.html")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(c_walk, "WALK", None)
        patch.setattr(links, "_links", None)
        pure = HtmlCleaner(selectors, main_content).clean(page, "https://example.org/dir/page.html")
    return accelerated, pure


TEXTS = st.sampled_from([
    "word", "При", "вет", " ", "  ", "\n", "\t", "\xa0", "\u2003", "\u3000", "\x1c", "\u200b", "\u1680", "\x85",
    "&amp;", "&amp;amp;", "&amp;nbsp;", "&amp;lt;", "&amp;#9;", "&lt;b&gt;", "AT&T;", "a&b", "&#x41;", "\u00ad", "é", "日本",
    # Rule 4's case boundary: lowercase before, uppercase after (titlecase `ǅ` is neither).
    "Экономика", "News", "É", "ǅ", "%", "165", "x ", " Y",
])
ATTRIBUTES = st.sampled_from([
    "", " hidden", ' hidden id="S:1a"', ' hidden id="S:XY"', ' aria-hidden="true"', ' aria-hidden="TRUE"',
    ' aria-hidden=" true "', ' aria-hidden="false"', ' style="display:none"', ' style="DISPLAY : None"',
    ' style="display:block"', ' style="visibility: hidden"', ' style="color: red; visibility:visible"',
    ' style="display:block" aria-hidden=" true "', ' class="warning"', ' title="World  Health\nOrganization"',
    ' title=" "', ' title', ' href="/x"', ' href=""', ' href', ' xlink:href="/y"', ' HREF="/z"',
    # Main content's flags: class and id substrings, role and itemprop values (ASCII case ignored, and only it:
    # `\u212a` is the Kelvin sign, which `str.lower` makes a `k`).
    ' class="Main-NAV warning"', ' id="comments"', ' class="entry-content"', ' class="coo\u212aie"', ' class',
    ' role="Navigation"', ' role=" main"', ' itemprop="articleBody"', ' id="share" role="main"', ' name="top"',
])
TAGS = st.sampled_from([
    "div", "p", "span", "b", "i", "a", "abbr", "br", "img", "script", "style", "template", "noscript",
    "annotation", "math", "svg", "select", "option", "button", "label", "area", "map", "title", "meta", "link",
    "table", "td", "li", "wbr", "custom-element", "sup", "font", "iframe", "object", "param", "applet", "embed",
    "output", "nav", "main", "article", "aside", "header", "footer", "h2", "ul",
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
@pytest.mark.slow
def test_both_paths_give_the_same_pages(page, selectors):
    accelerated, pure = cleaned(page, selectors)
    assert accelerated == pure
    main_accelerated, main_pure = cleaned(page, selectors, main_content=True)
    assert main_accelerated == main_pure
    from_c, from_python = walks(page, selectors)
    # The C walk's text holds no entity left to decode where the other's does not.
    assert from_c[1:] == from_python[1:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=PAGES)
def test_unwrapping_by_moving_every_node_once_gives_the_same_pages(page):
    """The pure path's unwrapping of deeply nested inline elements (`unwrap_inline`), on every page."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(python_walk, "NESTED_INLINE_LIMIT", 0)
        accelerated, pure = cleaned(page)
        assert accelerated == pure
        from_c, from_python = walks(page)
        assert from_c == from_python


@pytest.mark.parametrize("page", [
    "<p>a<b></b>c</p>",                                      # an empty inline element is no boundary
    "<p>a<script>x</script>b</p>",                           # nor is a dropped one
    "<p>a<br>b</p><p>c<img>d</p>",                           # br and img are
    "<p><b>x</b><a href=/1>1</a><a href=/2>2</a></p>",       # links after shown inline elements
    "<p><b><script></script></b><a>1</a></p>",               # the first is empty once the script goes
    "<p><b>x</b><a><!-- --></a><a>y</a></p>",
    "<p><abbr title=' W  H O '></abbr><a>x</a></p>",         # an expansion is content
    "<p>x<abbr title='t'><div>y</div></abbr>z</p>",
    # Rule 4's case boundary, and what it must not split.
    "<p><span>Политика</span><span>Экономика</span><b>При</b><i>вет</i><b>%</b>165</p>",
    "<p><span>a</span><abbr title=T></abbr><span>b<b><i></i></b></span><span>C</span></p>",
    "<p><span>a<div>b</div></span><span>C</span><span>x<br></span><span>Y</span></p>",
    "<p><span>a</span><span><b><i></i></b><a>N</a></span><i>b</i><script></script><!-- --><u>C</u></p>",
    "<p><span>a</span><span hidden>b</span><b><img></b><span>C</span><a>x</a><span>Y</span></p>",
    "<p><object><param name=movie>Flash <b>video</b></object><object><embed>Caption</object></p>",
    "<p>a<![CDATA[x]]>b</p>", "<p><math><mi>a</mi><![CDATA[x]]><mi>b</mi></math>c<?pi?>d<!-- -->e</p>",
    "<body hidden><a href=/in>x</a></body>",
    "<p>\xa0 a \u3000 b\u200b \x1c</p>",
    "<p>&amp;amp; &amp;nbsp;</p>", "<p>x&amp;lt;y &amp;#9;z</p>",
    # Metadata: the first title (an SVG one too), base and canonical link, every meta with content.
    "<svg><title>a<tspan>b</tspan>c</title></svg><title>second</title><p>x</p>",
    "<head><base><base href=/b/><link rel=CANONICAL href><link rel=canonical href=/c></head><a href=x>y</a>",
    "<meta name=Description content=' a  b '><meta content><meta name=author><meta property=og:title content=t>",
    "<html lang=' EN '><meta http-equiv=content-language content='de, fr'><div hidden><title>t</title></div>",
    "<noscript><a href=/n>n</a><meta name=robots content=none></noscript><template><a href=/t>t</a></template>",
    # Main content's features: a link space is link text, an expansion its parent's, a case space nothing.
    "<nav class=menu><b>x</b><a href=/1><i>1</i></a><abbr title='W H O'>WHO</abbr></nav><p>a<span>B</span></p>",
    "<div class=COMMENTS><main><h2><a href=/t>Title</a></h2><a name=top>old anchor</a></main><p>reply</p></div>",
    "<div role=NAVIGATION itemprop=articleBody><p>x</p></div><div class='coo\u212aie'><p>y</p></div>",
])
def test_tricky_pages(page):
    accelerated, pure = cleaned(page)
    assert accelerated == pure
    assert cleaned(page, main_content=True)[0] == cleaned(page, main_content=True)[1]
    from_c, from_python = walks(page)
    assert from_c == from_python


@pytest.mark.slow
def test_the_developer_corpus(corpus_dir):
    from devcorpus.pages import load_pages

    pages = list(load_pages(corpus_dir))
    for page in pages:
        accelerated, pure = cleaned(page.payload)
        assert accelerated == pure, page.url
    assert len(pages) > 900


@pytest.mark.parametrize("level", [
    "<span>x",                                   # inline elements in inline elements
    "<span><a href=/l>l</a><b>x</b><a href=/m>m",  # links after shown inline elements, at every depth
    "<span>x<div>y",                             # blocks between them, which the unwrapping moves
    "<abbr title=t><i></i>",                     # expansions, and empty inline elements
])
def test_deep_nesting(level):
    """The pure path unwraps deeply nested inline elements by moving every node once (`unwrap_inline`); its page is
    the C walk's. (How long either takes is measured, not asserted: see `unwrap_inline`.)"""
    page = "<p>" + level * 1_500 + "z</p><p>after</p>"
    accelerated, pure = cleaned(page)
    assert accelerated == pure and pure.blocks[-1] == "after"
    from_c, from_python = walks(page)
    assert from_c == from_python
