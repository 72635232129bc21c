"""--main-content: only the page's main content is kept, decided on CleanHtml's blocks
(transforms/stages/clean_html/main_content.py), with the C walk's features or the pure-Python path's, which are the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline.options import parse_settings
from pipeline.sample import Capture, sample_captures
from pipeline.settings import CorpusSettings, settings_from_manifest
from tests.helpers import page
from tests.test_clean_walk import cleaned, walks
from tests.test_cli import REPO, corpus_records, run_main
from transforms import native
from transforms.corpus.blocks import BOUNDARY
from transforms.stages.clean_html import c_walk
from transforms.stages.clean_html.main_content import (ASIDE, COMMENT, HEADING, LINK, MAIN, NAV, PARAGRAPH,
                                                       block_features, keep_blocks)
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.report.report import build_report, format_report, tally_record

needs_c_walk = pytest.mark.skipif(c_walk.WALK is None, reason="the C walk is not in use here (not built, refused, "
                                  "or WEBCORPUS_PURE_PYTHON=1)")


@pytest.fixture(params=["c", "python"])
def walk_path(request, monkeypatch):
    """Each path of CleanHtml's walk in turn: the C walk (where it is in use), and the pure-Python path."""
    if request.param == "c" and c_walk.WALK is None:
        pytest.skip("the C walk is not in use here")
    if request.param == "python":
        monkeypatch.setattr(c_walk, "WALK", None)
    return request.param


PARAGRAPHS = [
    "The council voted on Tuesday to rebuild the old bridge over the river, after two years of debate about "
    "its cost and about the traffic that the works will divert through the town centre for most of a year.",
    "Engineers expect the first piles to be driven in the spring. The new deck will be wider, with a lane for "
    "bicycles on each side, and the old stone arches will be kept and restored rather than replaced.",
    "Residents who spoke at the meeting were divided: shop owners fear the diversion, while parents of children "
    "at the school across the river welcomed a crossing that no longer floods every other winter.",
]
ARTICLE_PAGE = page(
    '<header><nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>'
    '<li><a href="/sport">Sport</a></li></ul></nav></header>'
    '<div class="layout"><article><h1>Bridge to be rebuilt</h1>'
    + "".join(f"<p>{text}</p>" for text in PARAGRAPHS)
    + '<div class="share-bar"><a href="/s/fb">Share on Facebook</a> <a href="/s/tw">Share on Twitter</a></div>'
    '</article>'
    '<aside class="sidebar"><h3>Most read</h3><p>A long teaser about another story entirely, written to be long '
    'enough that only its place in the sidebar tells it from the article text beside it on the page.</p></aside>'
    '</div>'
    '<section id="comments"><h3>Comments</h3><p>I think the old bridge was fine and this whole project is a '
    'waste of money that could have gone to the schools and the hospital instead, as usual.</p></section>'
    '<footer><p>Copyright 2024 The Town Paper. All rights reserved.</p><a href="/privacy">Privacy</a></footer>',
    title="Bridge to be rebuilt")
# Flags the walks collect: from tags, class and id names, main content around them, links and old anchors.
FLAGS_PAGE = page(
    '<nav><a href="/a">Menu entry</a></nav>'
    '<div id="comment-list"><p>A reply <a href="/u">by someone</a></p></div>'
    '<div class="comments-wrapper"><main><h2>Title</h2><a name="top">Text in an old anchor</a></main></div>')
NO_STANDOUT_BODIES = {
    "short page": "<p>Opening hours: Monday to Friday, 9 to 5.</p><p>Closed on public holidays.</p>",
    "list": "<ul>" + "".join(f"<li>Item number {n} of the list</li>" for n in range(30)) + "</ul>",
    "forum": "".join(f'<div class="post"><b>user{n}</b><p>I had the same problem with my router, reset fixed it.</p>'
                     "</div>" for n in range(12)),  # a forum thread of short posts
}


def test_an_article_page_keeps_its_article_and_drops_menu_sidebar_comments_and_footer(walk_path):
    cleaned = HtmlCleaner(main_content=True).clean(ARTICLE_PAGE.encode(), "https://news.example.org/bridge")
    assert cleaned.blocks == ["Bridge to be rebuilt", *PARAGRAPHS]
    dropped = " ".join(cleaned.boilerplate)
    for boilerplate in ("Home", "Share on Facebook", "Most read", "waste of money", "Copyright"):
        assert boilerplate in dropped
    whole = HtmlCleaner().clean(ARTICLE_PAGE.encode(), "https://news.example.org/bridge")
    assert whole.blocks == [block for block in whole.blocks if block in cleaned.blocks + cleaned.boilerplate]
    # Title, links, language and metadata are the whole page's.
    assert (cleaned.title, cleaned.links, cleaned.lang, cleaned.meta) == (whole.title, whole.links, whole.lang,
                                                                          whole.meta)
    assert whole.boilerplate == []


@pytest.mark.parametrize("body", NO_STANDOUT_BODIES.values(), ids=NO_STANDOUT_BODIES.keys())
def test_a_page_where_no_block_stands_out_keeps_its_text(body, walk_path):
    html = page(body).encode()
    assert HtmlCleaner(main_content=True).clean(html).blocks == HtmlCleaner().clean(html).blocks


@needs_c_walk
def test_the_walk_collects_flags_and_link_bytes_per_block():
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(FLAGS_PAGE)
    text, _, _, _, features = c_walk.WALK.walk(tree.root.mem_id, tree.body.mem_id, None, True)
    blocks = text.split("\x00")
    features = block_features(features)
    assert blocks == ["Menu entry", "A reply by someone", "Title", "Text in an old anchor"]
    (nav, _, nav_bytes), (comment, comment_links, comment_bytes), (title, _, _), (main, main_links, _) = features
    assert nav & NAV and nav & LINK and not nav & COMMENT
    assert comment & COMMENT and comment & PARAGRAPH and comment_links == len("by someone") < comment_bytes
    # Main content clears the boilerplate flags around it; an anchor without href is no link.
    assert title & MAIN and title & HEADING and not title & COMMENT
    assert main & MAIN and not main & (COMMENT | LINK) and main_links == 0
    # Without features the walk gives the same text, and no features.
    assert c_walk.WALK.walk(tree.root.mem_id, tree.body.mem_id, None)[0] == text
    assert c_walk.WALK.walk(tree.root.mem_id, tree.body.mem_id, None)[4] is None


def test_keep_blocks_is_a_pure_function_of_blocks_and_features():
    long_text = "x" * 300
    blocks = ["Home", "News", long_text, "A caption", long_text, "Reply from a reader", "Related story"]
    features = [(NAV | LINK, 4, 4), (NAV | LINK, 4, 4), (PARAGRAPH, 0, 300), (0, 0, 9), (PARAGRAPH, 0, 300),
                (COMMENT, 0, 19), (ASIDE | LINK, 13, 13)]
    keep = keep_blocks(blocks, features)
    assert keep == [False, False, True, True, True, False, False]
    assert keep_blocks(list(blocks), list(features)) == keep  # deterministic, inputs untouched
    assert blocks[0] == "Home" and keep_blocks([], []) == []


def test_a_short_block_between_boilerplate_goes_with_it():
    long_text = "z" * 300
    blocks = [long_text, "Share", "Related stories", "Another story", long_text]
    features = [(PARAGRAPH, 0, 300), (LINK, 5, 5), (HEADING, 0, 15), (LINK, 13, 13), (PARAGRAPH, 0, 300)]
    assert keep_blocks(blocks, features) == [True, False, False, False, True]
    # Next to content, it stays (a subheading).
    assert keep_blocks(blocks[:1] + blocks[2:], features[:1] + features[2:]) == [True, True, False, True]


def test_a_flag_around_all_the_long_text_says_nothing():
    # `<div class="comments-open">` around the whole article: its flag marks every block.
    long_text = "y" * 300
    blocks = [long_text, "Short line", long_text]
    features = [(COMMENT | PARAGRAPH, 0, 300), (COMMENT, 0, 10), (COMMENT | PARAGRAPH, 0, 300)]
    assert keep_blocks(blocks, features) == [True, True, True]
    # A flag with the page's long text outside it is boilerplate.
    assert keep_blocks(blocks, [(PARAGRAPH, 0, 300), (COMMENT, 0, 10), (COMMENT | PARAGRAPH, 0, 300)]) == [
        True, False, False]


def test_an_articles_comments_go_even_where_they_are_most_of_the_page():
    article, comment = "a" * 400, "c" * 300
    # An article and its readers' thread of 30 comments, 23 times its length.
    blocks = [article] + [comment] * 30
    features = [(PARAGRAPH, 0, 400)] + [(COMMENT | PARAGRAPH, 0, 300)] * 30
    assert keep_blocks(blocks, features) == [True] + [False] * 30
    # A page of comments alone, under a line of intro, keeps its posts.
    blocks[0], features[0] = "A short intro.", (PARAGRAPH, 0, 14)
    assert keep_blocks(blocks, features)[1:] == [True] * 30


@needs_c_walk
def test_the_features_are_taken_on_the_walk_and_only_when_asked():
    """The features cost a few attribute comparisons per element of the one walk (their cost per page is
    `benchmarks.fidelity --sections main-content`'s ms/page with and without --main-content): the walk with them
    finds what it finds without, and one feature record per block; without them, none is made."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(ARTICLE_PAGE * 50)
    root, body = tree.root.mem_id, tree.body.mem_id
    *found_with, features = c_walk.WALK.walk(root, body, None, True)
    *found_without, none = c_walk.WALK.walk(root, body, None, False)
    assert found_with == found_without and none is None
    blocks = found_with[0].split(BOUNDARY)
    assert len(blocks) > 50 and len(block_features(features)) == len(blocks)


@needs_c_walk
@pytest.mark.parametrize("html", [ARTICLE_PAGE, FLAGS_PAGE, *map(page, NO_STANDOUT_BODIES.values())],
                         ids=["article", "flags", *NO_STANDOUT_BODIES])
def test_the_pure_python_path_gives_the_c_walks_blocks_and_features_and_main_content(html):
    from_c, from_python = walks(html)
    assert from_c == from_python
    accelerated, pure = cleaned(html, main_content=True)
    assert accelerated == pure


def test_without_the_c_walk_the_settings_take_main_content(monkeypatch):
    monkeypatch.setattr(c_walk, "WALK", None)
    assert CorpusSettings(inputs=("in/*.warc.gz",), output="/tmp/never-written", main_content=True).main_content


def test_the_option_is_in_the_build_identity_only_when_on_and_a_rebuild_repeats_it():
    assert "main_content" not in parse_settings(["--output", "/tmp/never-written"]).build_identity()
    on = parse_settings(["--output", "/tmp/never-written", "--main-content"])
    assert on.build_identity()["main_content"] is True
    assert settings_from_manifest({"options": on.build_identity()}, "out", (), "manifest.json", True).main_content
    assert not settings_from_manifest({"options": parse_settings(["--output", "/tmp/x"]).build_identity()}, "out", (),
                                      "manifest.json", True).main_content


def test_the_report_counts_boilerplate_bytes_and_whole_page_documents():
    record = dict(source_file="a.warc.gz", charset="utf-8", charset_source="http", raw_bytes=100, cleaned_bytes=40,
                  minimized_bytes=30, truncated="")
    tally = tally_record({**record, "boilerplate_bytes": 25}) + tally_record({**record, "boilerplate_bytes": 0})
    report = build_report(tally, {"main_content": True})
    assert report["main_content"] == {"boilerplate_bytes_dropped": 25, "whole_page_documents": 1}
    assert "boilerplate dropped (div-only HTML bytes)" in format_report(report)
    assert "main_content" not in build_report(tally, {})


@pytest.mark.slow
def test_main_content_build_changes_text_fields_and_hash_not_title_or_links(write_warc, tmp_path):
    source = write_warc([Capture("https://news.example.org/bridge", ARTICLE_PAGE.encode())])
    fields = "url,title,links,html,text,clean_text,content_hash"
    records = {}
    for name, extra in (("whole", []), ("main", ["--main-content"])):
        output = tmp_path / name
        code, stdout, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet",
                                         "--fields", fields, *extra])
        assert code == 0, stderr
        (records[name],) = corpus_records(output)
        report = json.loads((output / "report.json").read_text())
        assert ("main_content" in report) == bool(extra)
    whole, main = records["whole"], records["main"]
    assert (main["title"], main["links"]) == (whole["title"], whole["links"])
    for field in ("html", "text", "clean_text", "content_hash"):
        assert main[field] != whole[field]
    assert "Copyright" in whole["clean_text"] and "Copyright" not in main["clean_text"]
    assert main["clean_text"].splitlines() == ["Bridge to be rebuilt", *PARAGRAPHS]
    html = (tmp_path / "main" / "report.html").read_text()
    assert '"boilerplate": [' in html and "line-through" in html
    assert "line-through" not in (tmp_path / "whole" / "report.html").read_text()


@needs_c_walk
@pytest.mark.slow
def test_main_content_targets_on_the_dev_corpus(corpus_dir, gold_pages):
    from benchmarks import main_content
    from devcorpus.gold import boilerplate_snippets

    methods, _ = main_content.tools()
    summary = main_content.run(gold_pages, {main_content.WITH: methods[main_content.WITH]}, 1,
                               boilerplate_snippets(corpus_dir))[main_content.WITH]["pooled"]
    assert summary["precision"] >= main_content.TARGETS["precision"], summary
    assert summary["recall"] >= main_content.TARGETS["recall"], summary


@needs_c_walk
@pytest.mark.slow
def test_on_every_dev_corpus_page_the_walk_gives_one_feature_a_block_and_the_same_text(gold_pages):
    from selectolax.lexbor import LexborHTMLParser

    for gold_page in gold_pages:
        tree = LexborHTMLParser(gold_page.utf8)
        if tree.body is None:
            continue
        whole = c_walk.WALK.walk(tree.root.mem_id, tree.body.mem_id, None)
        text, *_, features = c_walk.WALK.walk(tree.root.mem_id, tree.body.mem_id, None, True)
        assert text == whole[0], gold_page.id
        assert len(block_features(features)) == (len(text.split("\x00")) if text else 0), gold_page.id


@needs_c_walk
@pytest.mark.slow
def test_on_every_dev_corpus_page_the_pure_python_path_gives_the_c_walks_features_and_main_content(corpus_dir):
    from devcorpus.pages import load_pages

    pages = load_pages(corpus_dir)
    for dev_page in pages:
        from_c, from_python = walks(dev_page.payload)
        assert from_c == from_python, dev_page.url
        accelerated, pure = cleaned(dev_page.payload, main_content=True)
        assert accelerated == pure, dev_page.url
    assert len(pages) > 900


def build_outputs(source, output, **environment: str) -> tuple[list, dict]:
    """A --main-content build in a child process (the walk is chosen when it starts): its manifest's outputs (each
    file's digest) and its report."""
    env = {key: value for key, value in os.environ.items() if key != native.PURE_PYTHON_VARIABLE}
    child = subprocess.run([sys.executable, "-m", "pipeline", "--input", str(source), "--output", str(output),
                            "--quiet", "--main-content"], cwd=REPO, env=dict(env, PYTHONPATH=str(REPO), **environment),
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    outputs = json.loads((output / "manifest.json").read_text())["outputs"]
    return outputs, json.loads((output / "report.json").read_text())


@needs_c_walk
@pytest.mark.slow
def test_a_main_content_build_on_the_pure_python_path_is_the_c_walks_byte_for_byte(write_warc, tmp_path):
    source = write_warc([*sample_captures(), Capture("https://news.example.org/bridge", ARTICLE_PAGE.encode())])
    c_outputs, c_report = build_outputs(source, tmp_path / "c")
    pure_outputs, pure_report = build_outputs(source, tmp_path / "pure", **{native.PURE_PYTHON_VARIABLE: "1"})
    # The report says which path ran, and only that differs.
    assert (c_report.pop("accelerator"), pure_report.pop("accelerator")) == ("c", "python")
    assert c_report["main_content"]["boilerplate_bytes_dropped"] > 0 and pure_report == c_report
    assert ([output for output in pure_outputs if output["path"] != "report.json"]
            == [output for output in c_outputs if output["path"] != "report.json"]), "the files are not byte-identical"
