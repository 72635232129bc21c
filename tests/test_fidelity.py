"""Text fidelity: every word a reader sees, whole, and nothing else (CleanHtml + MinimizeText).

One small page per rule; the rules are listed in docs/stages.md
and measured on the dev corpus by `python -m benchmarks.fidelity`
(docs/fidelity.md), whose targets the last test checks when
WEBCORPUS_CORPUS is set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import apache_beam as beam
import fastavro
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given
from hypothesis import strategies as st

from pipeline.options import parse_settings
from pipeline.settings import CorpusSettings, settings_from_manifest
from transforms.corpus.blocks import blocks_to_html
from transforms.stages.compress_write.schema import CORPUS_SCHEMA, SCHEMA_FIELDS
from transforms.document import Document
from transforms.stages.clean_html.rules import NOSCRIPT_MIN_CHARACTERS
from transforms.stages.clean_html.text import decode_leftover_entities
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import (DEFAULT_SCRIPTS, MOSTLY_DROPPED_SHARE, SCRIPTS, dropped_letter_share,
                                             is_mostly_dropped, minimize_block, minimize_blocks, minimize_document,
                                             parse_scripts)
from transforms.stages.minimize_text_transform import MinimizeText
from transforms.report.report import build_report, format_report, tally_of
from transforms.vocabulary import MOSTLY_DROPPED, MostlyDropped
from tests import helpers

REPO = Path(__file__).resolve().parent.parent


def blocks(html: str, *selectors: str) -> list[str]:
    return HtmlCleaner(selectors).clean(html, "https://example.org/").blocks


def words(html: str, *selectors: str, scripts=None) -> list[str]:
    """The page as MinimizeText leaves it, cut into words at spaces."""
    return " ".join(minimize_blocks(blocks(html, *selectors), scripts)).split()


def document(blocks_: list[str]) -> Document:
    return helpers.document(url="https://example.org/", warc_record_id="<urn:uuid:1>", warc_date="2026-01-15T10:00:00Z",
                    source_file="test.warc.gz", source_offset=0, http_status=200, content_type="text/html",
                    cleaned_html=blocks_to_html(blocks_))


# --- no word split ---------------------------------------------------------------------------

@pytest.mark.parametrize("html,expected", [
    ("<p>При<b>в</b>ет</p>", ["привет"]),                                   # inline tags
    ("<p>tripl<!-- -->e</p>", ["triple"]),                                  # React's comments inside words
    ("<p>wo<!-- a comment\nover lines -->rd</p>", ["word"]),
    ("<p>fo<span></span>o</p>", ["foo"]),                                   # empty inline elements
    ("<p>super<wbr>cali<wbr/>fragilistic</p>", ["supercalifragilistic"]),
    ('<p><span class="dropcap">H</span>ong Kong</p>', ["hong", "kong"]),   # drop caps
    ("<p><b>%</b>165</p>", ["%165"]),
    ("<p>10<sup>5</sup> and 25<sup>th</sup></p>", ["105", "and", "25th"]),
    ("<p>le<a></a><a></a>ave</p>", ["leave"]),                              # empty links are no menu
    ('<p><a href="/x">expand</a><span><a href="/x">ed</a></span> to</p>', ["expanded", "to"]),
    ("<p><i>un</i><b>be</b><em>liev</em><u>able</u></p>", ["unbelievable"]),
    ("<p>co\u00adop</p>", ["coop"]),                                        # soft hyphen
    ("<p>zero\u200bwidth</p>", ["zerowidth"]),                              # zero-width space
    ("<p>при\u0301вет e\u0301te\u0301</p>", ["привет", "été"]),             # combining accents
])
def test_markup_inside_a_word_never_splits_it(html, expected):
    assert words(html) == expected


# --- no words glued --------------------------------------------------------------------------

@pytest.mark.parametrize("html,expected", [
    ("<p>one<br>two<br/>three</p>", ["one", "two", "three"]),
    ('<p>one<img src="x.png" alt="">two</p>', ["one", "two"]),
    ("<table><tr><td>cell</td><td>next</td></tr><tr><th>head</th></tr></table>", ["cell", "next", "head"]),
    ("<ul><li>first</li><li>second</li></ul><ol><li>third</li></ol>", ["first", "second", "third"]),
    ("<div>block<p>para</p>tail</div><h2>title</h2><blockquote>quote</blockquote>",
     ["block", "para", "tail", "title", "quote"]),
    ("<dl><dt>term</dt><dd>definition</dd></dl><section>a</section><article>b</article>",
     ["term", "definition", "a", "b"]),
    ('<nav><a href="/">Home</a><a href="/news">News</a><a href="/about">About</a></nav>', ["home", "news", "about"]),
    ('<p><span><a href="/">Home</a></span><a href="/n">News</a></p>', ["home", "news"]),
    # Inline elements written without spaces, where the case changes: a word boundary (rule 4).
    ("<p><span>Политика</span><span>Экономика</span></p>", ["политика", "экономика"]),
    ('<div class="breadcrumb"><span><a href="/">Home</a></span><span>World</span><span>Europe</span></div>',
     ["home", "world", "europe"]),
    ('<p class="tags"><span class="tag">Python</span><span class="tag">Django</span><b>Web</b></p>',
     ["python", "django", "web"]),
    # ... but not inside a word, nor where the case does not change.
    ("<p><span>Новости</span><span>Спорт</span> При<b>в</b>ет <b>%</b>165 <b>При</b><i>вет</i> "
     "<span>25</span><sup>th</sup></p>",
     ["новости", "спорт", "привет", "%165", "привет", "25th"]),
])
def test_markup_between_words_separates_them(html, expected):
    assert words(html) == expected


def test_block_boundaries_make_blocks():
    assert blocks("<p>one<br>two</p><div>three</div>") == ["one", "two", "three"]


# --- nothing visible lost --------------------------------------------------------------------

def test_form_content_is_kept_only_the_controls_go():
    html = ('<form action="/s"><fieldset><legend>Newsletter</legend><label>Your e-mail</label>'
            '<input name="e" value="secret-value"><p>We never share it.</p>'
            "<select><option>secret-option</option></select><textarea>secret-text</textarea>"
            "<button>Send</button></fieldset></form>")
    assert blocks(html) == ["Newsletter", "Your e-mail", "We never share it."]


def test_a_short_noscript_goes():
    html = "<p>Body</p><noscript>Please enable JavaScript to view the comments powered by Disqus.</noscript>"
    assert blocks(html) == ["Body"]


def test_a_noscript_holding_the_page_content_is_kept():
    post = " ".join(f"word{index}" for index in range(NOSCRIPT_MIN_CHARACTERS // 5))
    html = f'<script type="text/template"><p>{post}</p></script><noscript><p>{post}</p><p>end</p></noscript>'
    assert blocks(html) == [post, "end"]


def test_a_noscript_of_markup_written_as_text_goes():
    pixels = '&lt;img src="https://pixel.example.org/p.gif" style="display:none" /&gt; ' * 20
    assert len(pixels) > NOSCRIPT_MIN_CHARACTERS
    assert blocks(f"<p>Body</p><noscript>{pixels}</noscript>") == ["Body"]


def test_react_streamed_segments_are_shown_text():
    html = ('<div hidden id="S:1a"><p>The streamed article</p></div><template id="B:1a"></template>'
            '<div hidden id="sidebar">hidden text</div><div hidden id="S:x">not a segment</div>')
    assert blocks(html) == ["The streamed article"]


def test_mathml_is_text_and_its_sources_are_not():
    html = ('<p>Solve <math><semantics><mrow><mi>x</mi><mo>=</mo><mn>42</mn></mrow>'
            '<annotation encoding="application/x-tex">x = \\frac{84}{2}</annotation>'
            '<annotation-xml encoding="MathML-Content"><ci>secret</ci></annotation-xml></semantics></math> now</p>')
    assert words(html) == ["solve", "x", "42", "now"]


@pytest.mark.parametrize("html,expected", [
    # What an object shows when what it embeds cannot be shown (Flash: every browser today).
    ('<p>before</p><object type="application/x-shockwave-flash" data="storm.swf"><param name="movie" '
     'value="storm.swf"><embed src="storm.swf"><p>Video: the storm over <b>Lisbon</b></p></object><p>after</p>',
     ["before", "Video: the storm over Lisbon", "after"]),
    ('<p>Watch <object data="clip.swf"><param name="movie" value="clip.swf">the clip</object> now</p>',
     ["Watch the clip now"]),
    ('<p><applet code="Game.class"><param name="level" value="1">Java is needed for the game.</applet></p>',
     ["Java is needed for the game."]),
    ('<form><p>Total: <output name="sum">$42</output></p></form>', ["Total: $42"]),
])
def test_what_a_browser_renders_in_place_of_embedded_content_is_kept(html, expected):
    assert blocks(html) == expected


# --- nothing invisible kept ------------------------------------------------------------------

@pytest.mark.parametrize("element", [
    "<script>var secret = '<b>x</b>';</script>", "<style>.secret { color: red }</style>",
    "<template><p>secret</p></template>", "<textarea><b>secret</b> &lt;i&gt;</textarea>",
    '<div style="display:none">secret</div>', '<span style="visibility: hidden">secret</span>',
    "<div hidden>secret</div>", '<div aria-hidden="true">secret</div>', '<div class="ad">secret</div>',
    "<svg><title>secret</title><text>secret</text></svg>", "<iframe>secret</iframe>",
    "<video>secret</video>", "<audio>secret</audio>", "<canvas>secret</canvas>",
    '<object data="v.swf"><param name="secret" value="secret"><embed src="secret.swf"></object>',
])
def test_invisible_content_is_not_kept(element):
    assert blocks(f"<p>before</p>{element}<p>after</p>", "div.ad") == ["before", "after"]


@pytest.mark.parametrize("html,expected", [
    ("<p>Fish &amp;amp; Chips</p>", "Fish & Chips"),            # escaped twice
    ("<p>Fish &amp;amp;amp; Chips</p>", "Fish & Chips"),        # three times
    ("<p>a&amp;nbsp;b&nbsp;c</p>", "a b c"),
    ("<p>&amp;#x41;&amp;#66;&#x43;</p>", "ABC"),
    ("<p>&amp;lt;tag&amp;gt;</p>", "<tag>"),
    ("<p>AT&amp;T &amp; R&amp;D;</p>", "AT&T & R&D;"),           # no entity: left alone
    ("<p>&amp;notanentity; &amp;copy</p>", "&notanentity; &copy"),
])
def test_no_entity_is_left_undecoded(html, expected):
    assert blocks(html) == [expected]


def test_decode_leftover_entities_leaves_plain_text_alone():
    assert decode_leftover_entities("a & b; c&d &x; &#;") == "a & b; c&d &x; &#;"


# --- MinimizeText ----------------------------------------------------------------------------

def test_nfkc_folds_look_alike_forms():
    assert minimize_block("ﬁne ＡＢＣ １２３") == "fine abc 123"


def test_default_scripts_are_latin_and_cyrillic():
    assert parse_scripts("cyrillic, Latin") == DEFAULT_SCRIPTS == ("latin", "cyrillic")
    assert minimize_block("Hello Мир Καλημέρα 日本語") == "hello мир"


@pytest.mark.parametrize("scripts,expected", [
    ("latin,greek", "hello καλημέρα"),
    ("latin,cyrillic,greek,han,arabic", "hello мир καλημέρα 日本語 مرحبا"),
    ("all", "hello мир καλημέρα 日本語 مرحبا हिन्दी"),
    ("han", "日本語"),
])
def test_scripts_choose_the_letters_kept(scripts, expected):
    assert minimize_block("Hello Мир Καλημέρα 日本語 مرحبا हिन्दी", scripts) == expected


def test_a_kept_scripts_own_marks_stay_in_its_words():
    # Devanagari's virama and vowel signs, Hebrew points: combining marks of their own blocks.
    assert minimize_block("हिन्दी", "devanagari") == "हिन्दी"
    assert minimize_block("עִבְרִית", "hebrew") == "עִבְרִית"
    # Accents over Latin letters still go, whatever the scripts.
    assert minimize_block("e\u0301te\u0301 co\u00adop", "all") == "été coop"


def test_unknown_or_no_scripts_are_an_error():
    with pytest.raises(ValueError, match="klingon"):
        parse_scripts("latin,klingon")
    with pytest.raises(ValueError):
        parse_scripts(" , ")
    assert parse_scripts("greek,all") == ("all",)
    assert set(SCRIPTS) >= {"latin", "cyrillic", "greek", "han", "arabic", "kana", "hangul"}


@pytest.mark.parametrize("scripts", [None, "latin,cyrillic", "latin,greek", "greek", "han,kana", "all"])
def test_minimize_blocks_is_minimize_block_for_any_scripts(scripts):
    page = ["Grüße aus Köln – “quoted” ½ µ", "Привет, мир!", "Καλημέρα ΟΔΟΣ", "日本語のテキスト、です。",
            "plain ascii text 42", "mixed Grüße and 日本", "", "   ", "e\u0301 ﬁ ™"]
    expected = [line for line in (minimize_block(block, scripts) for block in page) if line]
    assert minimize_blocks(page, scripts) == expected


def test_the_share_of_dropped_letters_is_measured():
    assert dropped_letter_share("plain text", "plain text") == 0.0
    assert dropped_letter_share("Grüße, мир", "grüße, мир") == 0.0
    japanese = "日本語のテキストです"
    assert dropped_letter_share(japanese, "") == 1.0
    assert dropped_letter_share(japanese, japanese, parse_scripts("han,kana")) == 0.0
    half = "abcd 日本語の"
    assert dropped_letter_share(half, minimize_block(half)) == 0.5
    assert dropped_letter_share("1 µm", minimize_block("1 µm")) == 0.5  # NFKC makes the micro sign Greek


def test_a_page_in_other_scripts_is_flagged_never_silently_emptied():
    doc = minimize_document(document(["日本語のテキストです。", "東京 2026"]))
    assert doc.text == "2026"
    assert doc.dropped_letter_share == 1.0 > MOSTLY_DROPPED_SHARE
    assert is_mostly_dropped(doc)
    kept = minimize_document(document(["日本語のテキストです。", "東京 2026"]), scripts=parse_scripts("han,kana"))
    assert kept.text == "日本語のテキストです\n東京 2026"
    assert kept.dropped_letter_share == 0.0
    assert not is_mostly_dropped(kept)
    latin = minimize_document(document(["Hello world"]))
    assert latin.dropped_letter_share == 0.0


def test_minimize_text_transform_takes_scripts():
    docs = [document(["Καλημέρα κόσμε"]), document(["Hello"])]
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(docs) | MinimizeText(scripts="latin,greek")
        assert_that(result.documents | beam.Map(lambda doc: (doc.text, doc.dropped_letter_share)),
                    equal_to([("καλημέρα κόσμε", 0.0), ("hello", 0.0)]))


def test_minimize_text_counts_the_mostly_dropped_documents():
    docs = [document(["日本語"]), document(["abc"]), document(["Ελληνικά"])]
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(docs) | MinimizeText()
        assert_that(result[MOSTLY_DROPPED] | beam.Map(lambda counted: counted.documents) | beam.CombineGlobally(sum),
                    equal_to([2]))


def test_report_counts_mostly_dropped_documents():
    report = build_report(tally_of(MostlyDropped(1)), {})
    assert report["mostly_dropped"] == 1
    assert "most letters not in --scripts" in format_report(report)


def test_the_record_schema_has_dropped_letter_share():
    [field] = [field for field in CORPUS_SCHEMA["fields"] if field["name"] == "dropped_letter_share"]
    assert field["type"] == "double" and "--scripts" in field["doc"]
    assert "dropped_letter_share" in SCHEMA_FIELDS
    fastavro.parse_schema(CORPUS_SCHEMA)


def test_scripts_option_is_parsed_and_in_the_build_identity():
    settings = parse_settings(["--scripts", "greek,latin"])
    assert settings.scripts == ("latin", "greek")
    assert settings.build_identity()["scripts"] == ["latin", "greek"]
    assert parse_settings([]).build_identity()["scripts"] == list(DEFAULT_SCRIPTS)
    with pytest.raises(ValueError):
        CorpusSettings(inputs=("x",), output="out", scripts=("latin", "elvish"))


def test_scripts_option_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_settings(["--scripts", "latin,elvish"])
    assert exit_.value.code == 2
    assert "elvish" in capsys.readouterr().err


def test_a_manifest_without_scripts_rebuilds_with_the_default():
    options = CorpusSettings(inputs=("a.warc.gz",), output="out").build_identity()
    options.pop("scripts")
    settings = settings_from_manifest({"options": json.loads(json.dumps(options))}, "again", (), "m.json", True)
    assert settings.scripts == DEFAULT_SCRIPTS
    options["scripts"] = ["latin", "han"]
    assert settings_from_manifest({"options": options}, "again", (), "m.json", True).scripts == ("latin", "han")


def table_lcs_length(first: list[str], second: list[str]) -> int:
    """The longest common subsequence's length by the textbook table, a row at a time."""
    row = [0] * (len(second) + 1)
    for word in first:
        above, row = row, [0]
        for index, other in enumerate(second):
            row.append(above[index] + 1 if word == other else max(above[index + 1], row[index]))
    return row[-1]


@given(st.lists(st.sampled_from("abcd"), max_size=40), st.lists(st.sampled_from("abcd"), max_size=40))
def test_the_order_measure_counts_the_longest_common_subsequence_as_the_textbook_table(first, second):
    from devcorpus.measures import lcs_length

    assert lcs_length(first, second) == table_lcs_length(first, second)


# --- the dev corpus --------------------------------------------------------------------------

@pytest.mark.slow
def test_fidelity_targets_on_the_dev_corpus(gold_pages):
    from benchmarks import fidelity
    from devcorpus.measures import charset_agreement

    pages = gold_pages
    methods, _ = fidelity.tools()
    results = fidelity.run_tools(pages, {"webcorpus": methods["webcorpus"]}, reps=1)
    summary = fidelity.summarize(results["webcorpus"], fidelity.excused_pages(results))
    assert summary["recall_visible_mean"] >= fidelity.TARGETS["recall_mean"], summary
    assert summary["below_min_unexcused"] == 0, summary
    assert summary["split"] == summary["glued"] == 0, summary
    assert summary["leak_pages"] == 0, summary
    assert summary["snippets_missing"] == summary["snippets_excused"], summary
    charset = charset_agreement(pages)
    assert charset["right"] == charset["pages"], charset["wrong"]


# --- the benchmark's peers --------------------------------------------------------------------

@pytest.fixture
def broken_trafilatura(tmp_path, monkeypatch):
    """A trafilatura that is installed but cannot be imported, as lxml without lxml_html_clean leaves it."""
    package = tmp_path / "site" / "trafilatura"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('raise ImportError("lxml.html.clean module is now a separate project '
                                         'lxml_html_clean. Install lxml[html_clean] or lxml_html_clean directly.")\n')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "trafilatura", raising=False)


def test_fidelity_refuses_a_peer_it_was_asked_for_that_cannot_be_imported(broken_trafilatura, tmp_path, capsys):
    from benchmarks import fidelity

    with pytest.raises(SystemExit) as exit_:
        fidelity.main(["--corpus", str(tmp_path), "--tools", "webcorpus,trafilatura"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "trafilatura is installed but cannot be imported" in error and "lxml_html_clean" in error
    assert "benchmarks/requirements-fidelity.txt" in error


def test_fidelity_refuses_a_tool_it_does_not_know(tmp_path, capsys):
    from benchmarks import fidelity

    with pytest.raises(SystemExit) as exit_:
        fidelity.main(["--corpus", str(tmp_path), "--tools", "webcorpus,trafilatur"])
    assert exit_.value.code == 2
    assert "no tool trafilatur" in capsys.readouterr().err


def test_fidelity_says_loudly_which_peers_it_leaves_out(broken_trafilatura, capsys):
    from benchmarks import fidelity

    methods, left_out = fidelity.tools()
    assert "trafilatura" not in methods and "webcorpus" in methods
    fidelity.warn_left_out(left_out)
    error = capsys.readouterr().err
    assert "WARNING: trafilatura is left out of the comparison: installed but cannot be imported" in error


def test_the_fidelity_requirements_install_what_trafilatura_imports():
    """lxml 5.2 moved lxml.html.clean, which trafilatura (through justext) imports, to lxml_html_clean."""
    requirements = (REPO / "benchmarks" / "requirements-fidelity.txt").read_text().splitlines()
    assert any(line.startswith("lxml_html_clean") for line in requirements)
