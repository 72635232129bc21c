"""CleanHtml: only <div> blocks of visible text, plus title, links, lang and meta."""

from __future__ import annotations

import re

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.sample import ENGLISH_ARTICLE, RUSSIAN_ARTICLE
from tests import helpers
from tests.helpers import page
from urllib.parse import urljoin, urlsplit

from transforms.corpus import blocks as block_format
from transforms.corpus.blocks import blocks_to_html, html_to_blocks
from transforms.stages.clean_html.clean_html_transform import CleanHtml
from transforms.document import Document
from transforms.stages.clean_html import links
from transforms.stages.clean_html.links import resolve_links
from transforms.stages.clean_html.clean_html import HtmlCleaner

DIV_ONLY = re.compile(r"^(<div>[^<>]*</div>)*$")


def blocks(html: str, *selectors: str, url: str = "") -> list[str]:
    return HtmlCleaner(selectors).clean(html, url).blocks


def text(html: str, *selectors: str) -> str:
    return " ".join(blocks(html, *selectors))


def document(utf8_payload, url="https://example.org/page") -> Document:
    return helpers.document(url=url, warc_record_id=f"<urn:uuid:{url}>", warc_date="2026-01-15T10:00:00Z",
                    source_file="test.warc.gz", source_offset=0, http_status=200, content_type="text/html",
                    utf8_payload=utf8_payload, raw_bytes=0)


# --- the seed's examples ---------------------------------------------------------------------

def test_inline_markup_inside_a_word_keeps_the_word_whole():
    assert blocks("<div>При<b>в</b>ет</div>") == ["Привет"]


def test_entities_are_decoded():
    assert blocks("<p>Foo &amp; Bar</p>") == ["Foo & Bar"]
    assert blocks("<p>&pound;2.4&nbsp;million &copy; &#1055;&#x440;&lt;x&gt;</p>") == ["£2.4 million © Пр<x>"]


def test_drop_selector_removes_matching_elements_with_their_content():
    html = '<h4 class="warning">Cookies help us.</h4><h4>Keep this heading</h4><p class="warning">Para</p>'
    assert blocks(html, "h4.warning") == ["Keep this heading", "Para"]


def test_drop_selector_may_be_a_selector_list():
    html = ('<div class="warning">Advert <b>now</b></div><div class="hidden">Hidden</div>'
            '<div class="visible">Visible</div><p class="warning">Para</p>')
    assert blocks(html, "div.warning, div.hidden") == ["Visible", "Para"]


def test_several_drop_selectors():
    html = '<div class="a">A</div><div class="b">B</div><div class="c">C</div>'
    assert blocks(html, "div.a", ".b") == ["C"]


def test_drop_selector_drops_only_what_it_matches_not_what_holds_a_match():
    # selectolax's css_matches() is true for a node whose subtree holds a match: an element that
    # might be hidden (here: a style that shows it, a long noscript) must not go for what it holds.
    noscript = "Read the whole story without JavaScript. " * 20
    html = (f'<div style="display:block"><p class="warning">Cookies</p><p>Keep this</p></div>'
            f'<noscript><p class="warning">x</p><p>{noscript}</p></noscript>')
    assert blocks(html, ".warning") == ["Keep this", noscript.strip()]


def test_nested_matches_are_dropped_once():
    html = '<div class="x">outer <div class="x">inner <span style="display:none">h</span></div></div><p>kept</p>'
    assert blocks(html, ".x") == ["kept"]


@pytest.mark.parametrize("attributes", ['style="display: none"', 'style="visibility:hidden"',
                                        'style="color: red; DISPLAY:NONE"', 'style="visibility : hidden ;"',
                                        "hidden", 'aria-hidden="true"', 'aria-hidden="TRUE"'])
def test_hidden_elements_go_with_their_content(attributes):
    html = f"<div>before</div><div {attributes}>secret <b>words</b><p>more secret</p></div><div>after</div>"
    assert blocks(html) == ["before", "after"]


@pytest.mark.parametrize("attributes", ['style="display: block"', 'style="visibility: visible"',
                                        'aria-hidden="false"', 'class="hidden"'])
def test_visible_elements_stay(attributes):
    assert blocks(f"<div {attributes}>shown</div>") == ["shown"]


@pytest.mark.parametrize("element", [
    "<script>var secret = 1;</script>", "<style>p { color: red }</style>", "<template><p>secret</p></template>",
    "<svg><text>secret</text></svg>", "<iframe>secret</iframe>", '<input value="secret">',
    "<button>secret</button>", "<select><option>secret</option></select>", "<textarea>secret</textarea>",
    "<audio>secret</audio>", "<video>secret</video>", "<noscript>secret</noscript>",
    '<object data="x.swf"><param name="secret" value="secret"></object>',
    "<canvas>secret</canvas>", '<math><semantics><annotation encoding="TeX">secret</annotation></semantics></math>',
])
def test_elements_without_reader_text_are_dropped(element):
    assert text(f"<p>before {element} after</p>") == "before after"


def test_form_content_is_kept():
    html = ('<form action="/s"><label>Your e-mail</label><input name="e" value="secret">'
            "<p>We never share it.</p><button>Send</button></form>")
    assert blocks(html) == ["Your e-mail", "We never share it."]


def test_br_separates_words():
    assert text("<p>one<br>two<br/>three</p>") == "one two three"
    assert blocks("<p>one<br>two</p>") == ["one", "two"]


def test_abbr_title_is_appended():
    assert blocks('<p><abbr title="World Health Organization">WHO</abbr> says</p>') == \
        ["WHO (World Health Organization) says"]
    assert blocks("<p><abbr>WHO</abbr> says</p>") == ["WHO says"]


def test_adjacent_links_are_separate_words():
    assert blocks('<nav><a href="/">Home</a><a href="/news">News</a><a href="/a">About</a></nav>') == \
        ["Home News About"]


@pytest.mark.parametrize("html,expected", [("<p><b>%</b>165</p>", "%165"), ("<p>10<sup>5</sup></p>", "105"),
                                           ("<p><i>un</i>believable</p>", "unbelievable"),
                                           ('<p><a href="/x">link</a>s</p>', "links")])
def test_inline_markup_inside_a_word_stays_glued(html, expected):
    assert blocks(html) == [expected]


def test_block_elements_are_block_boundaries():
    html = ("<div>first<p>second</p>third</div><ul><li>a</li><li>b</li></ul>"
            "<table><tr><td>c</td><td>d</td></tr></table><h1>e</h1>")
    assert blocks(html) == ["first", "second", "third", "a", "b", "c", "d", "e"]


def test_whitespace_collapses_and_empty_blocks_go():
    assert blocks("<div>  a \n\t b  </div><div>   </div><p></p><div>c</div>") == ["a b", "c"]


# --- metadata --------------------------------------------------------------------------------

def test_title_links_lang_and_meta_are_extracted():
    html = ('<html lang="EN-GB"><head><title>  A   title </title>'
            '<meta name="description" content="The  description">'
            '<meta property="og:title" content="OG title"><meta name="viewport" content="width=device-width">'
            '<link rel="canonical" href="/canonical"></head>'
            '<body><a href="x.html">x</a><a href="https://other.example.org/">o</a><a href="#top">t</a>'
            '<a href="mailto:a@example.org">m</a><a href="javascript:void(0)">j</a><a href="x.html">again</a>'
            '<a href="/root">r</a></body></html>')
    page = HtmlCleaner().clean(html, "https://page.example.org/dir/page.html")
    assert page.title == "A title"
    assert page.links == ["https://page.example.org/dir/x.html", "https://other.example.org/",
                          "https://page.example.org/root"]
    assert page.lang == "en-gb"
    assert page.meta == {"description": "The description", "og:title": "OG title",
                         "canonical": "https://page.example.org/canonical"}
    assert "A title" not in page.blocks


def test_links_resolve_against_base_href():
    html = ('<html><head><base href="https://cdn.example.org/base/"></head>'
            '<body><a href="x.html">x</a><a href="/y">y</a></body></html>')
    page = HtmlCleaner().clean(html, "https://page.example.org/dir/page.html")
    assert page.links == ["https://cdn.example.org/base/x.html", "https://cdn.example.org/y"]


def test_the_first_of_each_counts_title_base_canonical_and_meta():
    html = ('<html><head><title>First</title><title>Second</title><base target="_top"><base href="/b1/">'
            '<base href="/b2/"><link rel="stylesheet" href="/s.css"><link rel="canonical"><link rel=" canonical" '
            'href="/spaced"><link rel="CANONICAL" href="/c1"><link rel="canonical" href="/c2">'
            '<meta name="description"><meta name="description" content="  "><meta name="description" content="d1">'
            '<meta name="description" content="d2"><meta http-equiv="content-language" content="ru, en"></head>'
            '<body><title>Third</title><a href="x">x</a></body></html>')
    page = HtmlCleaner().clean(html, "https://e.org/dir/p")
    assert page.title == "First"
    assert page.links == ["https://e.org/b1/x"]
    assert page.meta == {"description": "d1", "canonical": "https://e.org/c1"}
    assert page.lang == "ru"


def test_relative_base_href_resolves_against_the_page_url():
    html = '<html><head><base href="/sub/"></head><body><a href="x.html">x</a></body></html>'
    assert HtmlCleaner().clean(html, "https://page.example.org/dir/p").links == ["https://page.example.org/sub/x.html"]


def _reference_links(base, hrefs):
    """resolve_links as its docstring defines it: urljoin, http(s) only, in order, no repeats."""
    links = []
    for href in hrefs:
        href = href.strip()
        if not href or href.startswith("#"):
            continue
        try:
            absolute = urljoin(base, href)
            if urlsplit(absolute).scheme not in ("http", "https"):
                continue
        except ValueError:
            continue
        if absolute and absolute not in links:
            links.append(absolute)
    return links


HREF_PIECES = st.sampled_from(["/", "//", "x", "y.html", "?", "#", "?q=1", "#f", ".", "..", "./", "../", ";p", "\t",
                               "\n", "[", "]", "é", "%20", "http://", "https://", "mailto:", "javascript:", "e.org",
                               ":", "@", " "])
BASES = st.sampled_from(["https://page.example.org/dir/p.html", "http://example.org", "https://example.org/a/",
                         "https://example.org/a/./b", "https://exa mple.org/é/", "ftp://example.org/", ""])


@given(base=BASES, hrefs=st.lists(st.lists(HREF_PIECES, max_size=5).map("".join), max_size=8))
@settings(max_examples=500, deadline=None)
# Each of these keeps a page off the inline answers (urljoin drops an empty query or fragment and
# resolves dot segments); with only plain hrefs beside them, they are rarely drawn.
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "/x?"])
@example(base="https://page.example.org/dir/p.html", hrefs=["https://e.org/y", "https://e.org/y#"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "https://e.org/y?#f"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/a/./b", "/a/../c"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "/a;p"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "https://[b/x"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "/a\tb"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "/é"])
@example(base="https://page.example.org/dir/p.html", hrefs=[" /x ", "/y ", "", "  ", "\u3000/z"])
@example(base="https://page.example.org/dir/p.html", hrefs=["/x", "/y\n"])
def test_resolve_links_is_urljoin_for_any_mix_of_hrefs(base, hrefs):
    # The inline paths, the per-href fallback and urljoin must give the same links, whatever else is on the page.
    assert resolve_links(base, hrefs) == _reference_links(base, hrefs)


@pytest.mark.skipif(links._links is None, reason="the C links are not in use here")
def test_an_href_that_needs_urljoin_leaves_the_rest_of_its_page_to_c(monkeypatch):
    # One ad link with `;` parameters on a page of plain links is joined on its own; the others stay in C.
    asked = []
    general = links._other_link
    monkeypatch.setattr(links, "_other_link", lambda *args: asked.append(args[2]) or general(*args))
    base = "https://page.example.org/dir/p.html"
    hrefs = [f"/section/{number}" for number in range(50)] + ["http://ad.example.net/jump;sz=728x90;tile=1",
                                                             "https://other.example.org/x", "next.html"]
    assert resolve_links(base, hrefs) == _reference_links(base, hrefs)
    assert asked == ["http://ad.example.net/jump;sz=728x90;tile=1", "next.html"]


def test_meta_values_and_the_title_escaped_twice_are_decoded_as_the_text_is():
    cleaned = HtmlCleaner().clean(page(
        "<p>Trump&amp;#039;s call &amp;hellip;</p>", title="Q&amp;amp;A",
        head='<meta name="description" content="Trump&amp;#039;s call &amp;hellip; AT&amp;T;">'))
    assert cleaned.blocks == ["Trump's call \u2026"]
    assert cleaned.meta["description"] == "Trump's call \u2026 AT&T;"
    assert cleaned.title == "Q&A"


def test_lang_from_content_language_meta():
    html = '<html><head><meta http-equiv="Content-Language" content="DE, en"></head><body>x</body></html>'
    assert HtmlCleaner().clean(html).lang == "de"
    assert HtmlCleaner().clean("<html><body>x</body></html>").lang == ""


def test_sample_english_article():
    page = HtmlCleaner(("h4.warning",)).clean(ENGLISH_ARTICLE, "https://harbour-gazette.example.org/2026/01/cranes")
    joined = "\n".join(page.blocks)
    assert page.title == "Harbour cranes return to the old port"
    assert page.lang == "en"
    assert "Home News About" in page.blocks
    assert "By Anna Smith & Tom Jones, AP (Associated Press)" in page.blocks
    assert "Foo & Bar Ltd. will do the work for £2.4 million." in joined
    assert "Work starts in spring." in page.blocks and "Residents can see the plans at the library." in page.blocks
    for gone in ("Cookies", "Hidden tracking", "window.tracking", "font-family", "Subscribe", "you@example.org"):
        assert gone not in joined
    assert "https://example.org/ports/history" in page.links
    assert "https://harbour-gazette.example.org/news/" in page.links


def test_sample_russian_article():
    page = HtmlCleaner().clean(RUSSIAN_ARTICLE.encode("utf-8"))
    joined = "\n".join(page.blocks)
    assert "Привет, читатель! Строительство моста начнётся в 2027 году." in page.blocks
    assert "Городские власти" in joined
    assert "Скрытый" not in joined and "svg-текст" not in joined
    assert page.lang == "ru"


def test_bytes_and_str_give_the_same_result():
    assert HtmlCleaner().clean(RUSSIAN_ARTICLE.encode("utf-8")) == HtmlCleaner().clean(RUSSIAN_ARTICLE)


# --- the output ------------------------------------------------------------------------------

def test_html_output_escapes_text_and_holds_only_divs():
    page = HtmlCleaner().clean('<p class="x">a &lt;b&gt; &amp; c</p><p>"quoted"</p>')
    assert page.html == '<div>a &lt;b&gt; &amp; c</div><div>"quoted"</div>'
    assert html_to_blocks(page.html) == page.blocks


@pytest.mark.parametrize("selector", ["div[", "!!!", "a >> b", "div:unknown-pseudo("])
def test_an_invalid_selector_raises_value_error(selector):
    with pytest.raises(ValueError, match="selector"):
        HtmlCleaner((selector,))


TAGS = ["div", "p", "span", "b", "a", "abbr", "li", "ul", "table", "td", "tr", "h1", "script", "style", "form",
        "label", "template", "svg", "iframe", "textarea", "button", "select", "option", "sup", "pre", "code",
        "section", "noscript", "head", "title", "body", "html", "font", "center"]
ATTRIBUTES = ["", ' class="warning"', " hidden", ' aria-hidden="true"', ' style="display:none"',
              ' style="visibility: hidden"', ' href="/x?a=1&b=2"', ' title="T < & >"', ' style="color:red"',
              ' lang="fr"', " data-x='<div>'"]
TEXT = st.lists(st.sampled_from(list("ab cЖж<>&;#\"'=/\n\t\u00a0\u200b\x00")
                               + ["&amp;", "&lt;", "&#60;", "&nbsp;", "<!--", "-->"]), max_size=12).map("".join)


def _element(children):
    return st.builds(lambda tag, attributes, inner, close: f"<{tag}{attributes}>{''.join(inner)}" +
                     (f"</{tag}>" if close else ""),
                     st.sampled_from(TAGS), st.sampled_from(ATTRIBUTES), st.lists(children, max_size=4), st.booleans())


HTML = st.recursive(TEXT | st.sampled_from(["<br>", "<img src=x>", "<hr>", "<!-- c -->", "</div>", "<p"]),
                    _element, max_leaves=20).map(str)


@settings(max_examples=300, deadline=None)
@given(html=st.lists(HTML, max_size=5).map("".join), drop=st.sampled_from([(), ("div.warning",), (".warning", "b")]))
@pytest.mark.slow
def test_output_is_only_div_blocks_for_any_html(html, drop):
    page = HtmlCleaner(drop).clean(html, "https://example.org/dir/")
    assert DIV_ONLY.match(page.html), page.html
    assert all(block and block == " ".join(block.split()) for block in page.blocks)
    assert html_to_blocks(page.html) == page.blocks
    assert "\x00" not in page.html
    assert all(link.startswith(("http://", "https://")) for link in page.links)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_arbitrary_input_never_raises(payload):
    page = HtmlCleaner().clean(payload)
    assert DIV_ONLY.match(page.html)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1).map(lambda s: " ".join(s.split())).filter(bool), max_size=5))
def test_blocks_to_html_round_trips(block_list):
    html = blocks_to_html(block_list)
    assert DIV_ONLY.match(html)
    assert html_to_blocks(html) == block_list


# What escaping and the boundaries may meet: entities and boundaries in the text itself, every width of character.
BLOCK_PIECES = st.sampled_from(["&", "<", ">", "a", "é", "Ж", "日", "\U0001f600", "\x00", "\n", "&amp;", "&lt;",
                                "&gt;", "</div><div>", "&amp;lt;", "amp;", "lt;", "&l", " "])


@pytest.mark.skipif(block_format._blocks is None, reason="the C block format is not in use here")
@settings(max_examples=500, deadline=None)
@given(block_list=st.lists(st.lists(BLOCK_PIECES, max_size=6).map("".join), max_size=5),
       markup=st.lists(BLOCK_PIECES, max_size=12).map("".join))
def test_both_block_format_paths_give_the_same_strings(block_list, markup):
    accelerated = block_format.blocks_to_html(block_list), block_format.blocks_text(f"<div>{markup}</div>")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(block_format, "_blocks", None)
        assert (block_format.blocks_to_html(block_list), block_format.blocks_text(f"<div>{markup}</div>")) == accelerated


# --- CleanHtml in a pipeline -----------------------------------------------------------------

def test_clean_html_transform_and_dead_letter():
    good = document("<html><head><title>T</title></head><body><p>Hello <b>world</b></p>"
                    '<div class="ad">Buy!</div><a href="/x">x</a></body></html>'.encode(), url="https://a.example.org/p")
    broken = document(12345, url="https://broken.example.org/")  # neither bytes nor str: the stage fails
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create([good, broken]) | CleanHtml(("div.ad",))
        assert_that(result.documents | "Docs" >> beam.Map(
            lambda d: (d.capture.url, d.cleaned_html, d.title, d.links, d.utf8_payload, d.cleaned_bytes)),
            equal_to([("https://a.example.org/p", "<div>Hello world</div><div>x</div>", "T",
                       ["https://a.example.org/x"], b"", len("<div>Hello world</div><div>x</div>"))]),
            label="documents")
        assert_that(result.dead_letter | "Dead" >> beam.Map(lambda d: (d.stage, d.url)),
                    equal_to([("clean_html", "https://broken.example.org/")]), label="dead")


def test_clean_html_transform_rejects_an_invalid_selector():
    with pytest.raises(ValueError):
        CleanHtml(("div[",))
