"""--site-boilerplate: lines repeated across the pages of a site, removed (transforms/stages/site_boilerplate*.py)."""

from __future__ import annotations

import json
import tempfile
from collections import Counter

import apache_beam as beam
import hypothesis
import pytest
from hypothesis import strategies as st
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from devcorpus.site_crawl import GeneratedPage, crawl_warc, generate_crawl
from pipeline.options import parse_settings
from tests.helpers import document
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.corpus.blocks import blocks_to_html, html_to_blocks
from transforms.document import Document
from transforms.stages import site_boilerplate, site_boilerplate_transform
from transforms.stages.site_boilerplate import (NO_LINE, SiteBoilerplate, block_hashes, line_hash, line_hashes,
                                                normalised_line, packed, python_block_hashes, registered_domain,
                                                unpacked, without_lines)
from transforms.stages.site_boilerplate_transform import (LINE_BUCKETS, PAGES, SITES, LinesOfDocuments,
                                                          SiteBoilerplateLines, _lines_to_count, line_buckets,
                                                          read_waiting, unsealed)
from transforms.vocabulary import BUILD_COUNTS, DOCUMENTS, SITE_BOILERPLATE

FOOTER = "Copyright 2024 Example Ltd. All rights reserved."
# (Words, not numbers: digits are made 0 before lines are compared.)
WORDS = ("cat", "dog", "fox", "owl", "elk", "yak", "emu", "ant", "bee", "cod")


def page(url: str, blocks: list[str], offset: int) -> Document:
    return document(url=url, warc_record_id=f"<urn:{offset}>", warc_date="2026-01-01T00:00:00Z",
                    source_file="crawl.warc.gz", source_offset=offset, cleaned_html=blocks_to_html(blocks))


def site(domain: str, pages: list[list[str]], first_offset: int = 0) -> list[Document]:
    return [page(f"https://{domain}/{number}", blocks, first_offset + number) for number, blocks in enumerate(pages)]


def assert_stage(docs: list[Document], expected: dict[str, list[str]], settings: SiteBoilerplate = SiteBoilerplate(),
                 lines_removed: int | None = None):
    """Runs the stage on `docs`: each page's blocks after it are `expected` (by URL), and the report counts
    `lines_removed` lines."""
    with tempfile.TemporaryDirectory() as staging_dir, TestPipeline() as pipeline:
        applied = pipeline | beam.Create(docs) | SiteBoilerplateLines(settings, staging_dir)
        blocks = applied[DOCUMENTS] | "Blocks" >> beam.Map(lambda doc: (doc.capture.url, html_to_blocks(doc.cleaned_html)))
        assert_that(blocks, equal_to(sorted(expected.items())), label="blocks")
        if lines_removed is not None:
            removed = applied[BUILD_COUNTS] | "Lines" >> beam.Map(lambda counts: counts[(SITE_BOILERPLATE, "lines")])
            assert_that(removed, equal_to([lines_removed]), label="counts")


def test_a_line_is_normalised_before_it_is_compared():
    assert normalised_line("  Copyright © 2024, Example!  ") == "copyright 0000 example"
    assert line_hash("COPYRIGHT 1999 example") == line_hash("copyright 2024 -- Example")
    assert line_hash("— · —") is None


def test_a_pages_blocks_hashed_in_one_pass_are_each_blocks_line_hash():
    blocks = ["Copyright © 2024, Example!", "snake_case and  Ünïcode ＳＰＡＣＥ", "— · —", "", "copyright 1999 EXAMPLE",
              "Σίσυφος 42"]
    expected = [line_hash(block) or NO_LINE for block in blocks]
    assert block_hashes(blocks) == expected
    assert expected[0] == expected[4] and expected[2] == expected[3] == NO_LINE
    # An ASCII page's blocks, by a byte table.
    ascii_blocks = ["Copyright 2024, Example_Ltd!", " \t-- ", "COPYRIGHT 1999 example  ltd", "Tab\x1fbed A-Z 0-9"]
    assert block_hashes(ascii_blocks) == [line_hash(block) or NO_LINE for block in ascii_blocks]
    assert block_hashes(ascii_blocks)[0] == block_hashes(ascii_blocks)[2]
    # A block with the boundary in it (never parsed) is normalised alone.
    assert block_hashes(["one\x00two", "three"]) == [line_hash("one\x00two"), line_hash("three")]
    assert unpacked(packed(expected)) == expected


@pytest.mark.parametrize("share, buckets", [(0.2, 1), (0.5, 1), (0.1, 2), (0.05, 4), (0.001, LINE_BUCKETS),
                                            (0, LINE_BUCKETS)])
def test_a_pages_lines_go_to_the_join_in_fewer_buckets_the_larger_the_share(share, buckets):
    # A site's boilerplate lines are at most its mean page's lines over the share: a bucket holds five times those.
    assert line_buckets(SiteBoilerplate(min_share=share)) == buckets


@pytest.mark.parametrize("url, domain", [
    ("https://news.example.co.uk/a", "example.co.uk"),
    ("http://a.b.example.com:8080/x", "example.com"),
    ("https://example.org", "example.org"),
    ("https://WWW.Bücher.example/", "xn--bcher-kva.example"),
    ("http://192.0.2.7/page", "192.0.2.7"),
    ("http://[2001:db8::1]/page", "[2001:db8::1]"),
    ("not a url", "not a url"),
])
def test_the_site_of_a_page_is_its_registered_domain(url, domain):
    assert registered_domain(url) == domain


@pytest.mark.parametrize("settings, message", [
    (dict(min_pages=1), "--boilerplate-min-pages must be at least 2"),
    (dict(min_share=1.5), "--boilerplate-min-share is a share of a site's pages, in [0, 1], not 1.5"),
    (dict(min_share=-0.1), "in [0, 1], not -0.1"),
    (dict(scope="host"), "--site-boilerplate-scope must be one of domain, crawl"),
])
def test_thresholds_that_make_no_sense_are_refused(settings, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as refused:
        SiteBoilerplate(**settings)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("argv, message", [
    (["--site-boilerplate", "--boilerplate-min-share", "1.5"], "--boilerplate-min-share is a share"),
    (["--boilerplate-min-pages", "4"], "--boilerplate-min-pages need --site-boilerplate"),
])
def test_the_command_line_refuses_them_in_one_line(argv, message, capsys):
    code, _, err = run_main(["--input", "a.warc.gz", *argv])
    assert code == 2
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and message in lines[0]


def test_the_options_make_the_settings():
    settings = parse_settings(["--input", "a.warc.gz", "--site-boilerplate", "--site-boilerplate-scope", "crawl",
                               "--boilerplate-min-pages", "5", "--boilerplate-min-share", "0.5"])
    assert settings.site_boilerplate == SiteBoilerplate("crawl", 5, 0.5)
    assert parse_settings(["--input", "a.warc.gz"]).site_boilerplate is None


@pytest.mark.slow
def test_a_line_repeated_on_one_page_is_hashed_and_counted_once():
    repeated = page("https://example.com/", [FOOTER] * 1_000_000 + ["An article."], 0)
    assert line_hashes(repeated) == {line_hash(FOOTER), line_hash("An article.")}
    kept, lines, size = without_lines(repeated, {line_hash(FOOTER)})
    assert html_to_blocks(kept.cleaned_html) == ["An article."]
    assert (lines, size) == (1_000_000, 1_000_000 * len(FOOTER))


def test_the_blocks_removed_are_measured_on_the_page_as_cleanhtml_measures_it():
    # (`<div>` HTML in UTF-8, as `cleaned_bytes`: an escaped `&` and a two-byte letter count as written.)
    notice = "Café & bar: all rights reserved."
    blocks = ["An article.", notice]
    doc = page("https://example.com/", blocks, 0)
    kept, lines, size = without_lines(doc, {line_hash(notice)})
    assert kept.site_boilerplate_bytes == len("<div>Café &amp; bar: all rights reserved.</div>".encode("utf-8"))
    assert kept.site_boilerplate_bytes + len(kept.cleaned_html.encode("utf-8")) == len(doc.cleaned_html.encode("utf-8"))
    # What the report counts stays the blocks' text.
    assert (lines, size) == (1, len(notice.encode("utf-8")))
    assert without_lines(doc, {line_hash(FOOTER)})[0].site_boilerplate_bytes == 0


# Sites of the cases, one domain each, built in one pipeline: (pages, each page's blocks expected after the stage).
REPEATED = [[f"Article {word} is about {word}s.", "Home News Sport", FOOTER] for word in WORDS[:4]]
CASES = {
    # The menu and footer, on all four pages, go; the same footer on another site's one page stays.
    "example.com": (REPEATED, [blocks[:1] for blocks in REPEATED]),
    "other.org": ([["A page of its own.", FOOTER]], [["A page of its own.", FOOTER]]),
    # A site of one page keeps its text; a page of one line that is its site's boilerplate is left empty.
    "lonely.net": ([["Only page.", FOOTER]], [["Only page.", FOOTER]]),
    "one-line.com": ([[FOOTER]] + [[FOOTER, f"Article {word}."] for word in WORDS[:3]],
                     [[]] + [[f"Article {word}."] for word in WORDS[:3]]),
    # The footer is on two distinct pages only (one repeats it a thousand times, and has two copies): it stays.
    "copies.net": ([[FOOTER] * 1000 + ["First article."]] * 3 + [[FOOTER, "Second article."]],
                   [[FOOTER] * 1000 + ["First article."]] * 3 + [[FOOTER, "Second article."]]),
    # On 3 of 10 pages: at least 3 pages and a share of 0.2 of them, it goes.
    "share.com": ([[f"Article {word}.", "Related: a teaser."] if n < 3 else [f"Article {word}."]
                   for n, word in enumerate(WORDS)], [[f"Article {word}."] for word in WORDS]),
}


def test_a_page_waits_in_its_bundles_waiting_file_not_in_the_shuffle(tmp_path):
    docs = site("example.com", REPEATED)
    lines_of = LinesOfDocuments("domain", 1, str(tmp_path))
    lines_of.setup()
    lines_of.start_bundle()
    keyed = [out for doc in docs for out in lines_of.process(doc) if not isinstance(out, beam.pvalue.TaggedOutput)]
    lines_of.finish_bundle()
    # What goes to the join is where the page waits: one file of the bundle.
    places = [place for _, (_, place) in keyed]
    assert {name for name, _, _ in places} == {path.name for path in tmp_path.iterdir()} and len(places[0]) == 3
    read = [unsealed(sealed_page) for sealed_page in read_waiting(str(tmp_path), places[::-1])]
    assert [doc for doc, _ in read] == docs[::-1]
    assert [unpacked(hashes) for _, hashes in read][0] == [line_hash(block) for block in REPEATED[-1]]


def case_documents(cases: dict) -> list[Document]:
    docs = []
    for domain, (pages, _) in cases.items():
        docs += site(domain, pages, len(docs))
    return docs


def expected_blocks(cases: dict) -> dict[str, list[str]]:
    return {f"https://{domain}/{number}": blocks for domain, (_, kept) in cases.items()
            for number, blocks in enumerate(kept)}


@pytest.mark.slow
def test_lines_repeated_on_a_site_go_from_every_page_of_it_and_from_no_other_site():
    removed_lines = (4 + 4) + 4 + 3
    assert_stage(case_documents(CASES), expected_blocks(CASES), lines_removed=removed_lines)


@pytest.mark.slow
def test_the_share_of_a_site_decides_as_well_as_the_count():
    pages = CASES["share.com"][0]
    assert_stage(site("share.com", pages), {f"https://share.com/{n}": blocks for n, blocks in enumerate(pages)},
                 SiteBoilerplate(min_share=0.5))


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.2, 0.01])
def test_the_crawl_scope_counts_lines_across_sites(share):
    # (With a share of 0.01, a page's lines go to the join in 16 buckets.)
    docs = [page(f"https://{word}.com/", [f"Article {word}.", FOOTER], n) for n, word in enumerate(WORDS[:4])]
    assert_stage(docs, {f"https://{word}.com/": [f"Article {word}."] for word in WORDS[:4]},
                 SiteBoilerplate("crawl", min_share=share))


# Characters whose normalising differs: case folding that changes length (ß, ﬁ), dotted capitals, final sigma,
# decimal digits of other scripts (made 0) and numerals that are not (kept), the underscore, combining marks,
# NUL (the blocks' boundary), a lone surrogate, astral characters.
LINE_CHARACTERS = "aZ09_ \t\n\x00-.,ßİΣσςЁё٣²½Ωﬁ\u0301\ud800€😀中"


@pytest.mark.skipif(site_boilerplate._C_LINE_HASHES is None, reason="transforms.native._line_hashes is not built")
@hypothesis.settings(max_examples=500, deadline=None)
@hypothesis.given(st.lists(st.one_of(st.text(alphabet=LINE_CHARACTERS, max_size=40), st.text(max_size=40),
                                     st.text(alphabet="ab ", min_size=100, max_size=400)), max_size=8))
def test_c_and_python_give_the_same_line_hashes(blocks):
    # (Lines of every length around BLAKE2b's 128-byte blocks among them.)
    assert site_boilerplate._C_LINE_HASHES.block_hashes(blocks) == python_block_hashes(blocks)


URL_PARTS = ("http", "https", ":", "//", "/", "?", "#", "a.com", "WWW.Ex.co.uk", "[::1]", "[", "@", "user:pw@", ":80",
             "\t", "\n", " ", ".", "ß", "١", "%41", "\x00", "mailto:", "1.2.3.4", "é.com")


@hypothesis.settings(max_examples=2000, deadline=None)
@hypothesis.given(st.lists(st.sampled_from(URL_PARTS), max_size=9).map("".join))
def test_a_urls_domain_found_from_its_origin_is_the_one_found_from_the_whole_url(url):
    # (Found once per origin, the part of a URL urlsplit reads the host from: the same as from the URL itself.)
    assert registered_domain(url) == (site_boilerplate._domain_of_origin.__wrapped__(url) or url)


def test_only_the_lines_of_sites_of_pages_enough_are_counted():
    # A (site, part) group: its distinct pages' lines, and its site's count of pages where it has `min_pages`.
    # Counted in the group, in one map (a site of few lines is one bucket of line hashes).
    pages = [packed([1, 2]), packed([2])]
    assert list(_lines_to_count((("many.com", 3), {PAGES: pages, SITES: [(3, 5)]}))) == [
        (("many.com", 0), {1: 1, 2: 2})]
    assert list(_lines_to_count((("few.com", 3), {PAGES: pages, SITES: []}))) == []


def test_a_site_of_many_lines_is_counted_in_maps_of_bounded_size(monkeypatch):
    # A site's lines in buckets of their hashes, each map going on once it holds LINES_PER_COUNT lines.
    monkeypatch.setattr(site_boilerplate_transform, "LINES_PER_COUNT", 4)
    pages = [packed([1, 2, 3, 4, 5, 6]), packed([2, 4, 6, 8, 10, 12])]
    counted = list(_lines_to_count((("big.com", 0), {PAGES: pages, SITES: [(9, 12)]})))
    assert {key for key, _ in counted} == {("big.com", 0), ("big.com", 1), ("big.com", 2)}
    assert all(len(counts) <= 4 and all(line % 3 == key[1] for line in counts) for key, counts in counted)
    summed = Counter()
    for _, counts in counted:
        summed.update(counts)
    assert summed == Counter([1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12])


def test_the_decision_in_memory_is_the_transforms():
    from transforms.stages.site_boilerplate import repeated_lines

    docs = case_documents(CASES)
    removed = repeated_lines([(registered_domain(doc.capture.url), html_to_blocks(doc.cleaned_html)) for doc in docs],
                             SiteBoilerplate())
    assert {doc.capture.url: [block for block in html_to_blocks(doc.cleaned_html)
                      if (registered_domain(doc.capture.url), line_hash(block)) not in removed]
            for doc in docs} == expected_blocks(CASES)


@pytest.mark.slow
def test_a_build_writes_the_text_without_the_site_boilerplate(tmp_path):
    crawl = generate_crawl(sites=3, pages=6, seed=1)
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(crawl_warc(crawl))
    output = tmp_path / "out"
    code, _, err = run_main(["--input", str(warc), "--output", str(output), "--site-boilerplate", "--clean-text",
                             "--quiet"])
    assert code == 0, err
    report = json.loads((output / "report.json").read_text())
    removed = report[SITE_BOILERPLATE]
    assert removed["lines_removed"] > 0 and removed["top_domains"][0]["domain"].startswith("site")
    gold = {generated.url: generated.lines for generated in crawl}
    # (A paragraph quoted as a teaser on other pages may be on three: it is the site's then.)
    quoted = {line for generated in crawl for line, kind in generated.lines if kind == "teaser"}
    kept_of_kind = Counter()
    for record in corpus_records(output):
        kept = set(record["clean_text"].split("\n"))
        kept_of_kind.update(kind for line, kind in gold[record["url"]] if line in kept and line not in quoted)
    # Every line of a page's own article is kept; none of its site's template, on every page of it.
    assert kept_of_kind["article"] == sum(kind == "article" and line not in quoted
                                          for generated in crawl for line, kind in generated.lines)
    assert kept_of_kind["template"] == 0
    html = (output / "report.html").read_text()
    assert '"site_boilerplate": [' in html and "removed as a line repeated on its site" in html
    # The pages' waiting files went with the staging directory.
    assert not list(output.rglob("waiting-*"))


@pytest.mark.slow
def test_an_annotated_build_records_the_share_of_each_page_that_was_its_sites_boilerplate_to_select_by(tmp_path):
    from pipeline import select as select_command

    crawl = generate_crawl(sites=2, pages=4, seed=1)
    # A site of one page: nothing repeats on it.
    lonely = GeneratedPage("https://lonely-example.net/", crawl[0].html.replace("site0000", "lonely"), ())
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(crawl_warc([*crawl, lonely]))
    output = tmp_path / "out"
    code, _, err = run_main(["--input", str(warc), "--output", str(output), "--quiet", "--annotate", "--quality",
                             "fineweb-recipe", "--site-boilerplate"])
    assert code == 0, err
    records = {record["url"]: record for record in corpus_records(output)}
    shares = {url: record["signals"]["site_boilerplate/removed_share"] for url, record in records.items()}
    assert sorted(shares) == sorted(generated.url for generated in [*crawl, lonely])
    assert shares[lonely.url] == 0.0 and all(0 < shares[generated.url] < 1 for generated in crawl)
    for record in records.values():
        # The share of the page CleanHtml kept (`cleaned_bytes`) that is not in the text written.
        written = len(blocks_to_html(record["clean_text"].split("\n")).encode("utf-8"))
        assert shares[record["url"]] == pytest.approx(1 - written / record["cleaned_bytes"])
    # A selection keeps the pages of which the stage removed at most the median share, and drops, by the signal, the
    # others.
    median = sorted(shares.values())[len(shares) // 2]
    selected = tmp_path / "selected"
    code, _, err = run_main([str(output), "--output", str(selected), "--max-signal",
                             f"site_boilerplate/removed_share={median}"], select_command.main)
    assert code == 0, err
    kept = {record["url"] for record in corpus_records(selected)}
    assert lonely.url in kept and kept == {url for url, share in shares.items() if share <= median}
    by_signal = {skip["url"] for skip in json_lines(selected, "skipped")
                 if "max/site_boilerplate/removed_share" in skip["detail"]}
    assert by_signal == {url for url, share in shares.items() if share > median}


def test_a_rebuild_takes_the_settings_from_the_manifest():
    from pipeline.settings import settings_from_manifest

    settings = parse_settings(["--input", "a.warc.gz", "--site-boilerplate", "--boilerplate-min-pages", "4"])
    manifest = {"options": json.loads(json.dumps(settings.build_identity()))}
    assert settings_from_manifest(manifest, "out", (), "manifest.json", True).site_boilerplate == \
        SiteBoilerplate(min_pages=4)
    assert "site_boilerplate" not in parse_settings(["--input", "a.warc.gz"]).build_identity()



def test_an_earlier_corpus_must_have_the_same_site_boilerplate_settings():
    from pipeline.extend import ours_text_shaping, text_shaping

    plain = parse_settings(["--input", "a.warc.gz"])
    removing = parse_settings(["--input", "a.warc.gz", "--site-boilerplate"])
    assert ours_text_shaping(plain) == text_shaping(plain.build_identity())
    assert ours_text_shaping(removing) == text_shaping(removing.build_identity())
    assert ours_text_shaping(removing) != text_shaping(plain.build_identity())


@pytest.mark.slow
def test_a_build_with_it_records_no_unit_to_resume(tmp_path, write_warc):
    """A unit's pages depend on every page of their sites: none is recorded alone, so none is replayed."""
    from pipeline.graph import build_corpus
    from pipeline.sample import Capture
    from pipeline.settings import CorpusSettings
    from tests.helpers import page as html_page
    from transforms.state.unit_ledger import RECORD_SUFFIX, UNITS

    inputs = write_warc([Capture(f"https://example.com/{word}", html_page(f"<p>Article {word}.</p><p>{FOOTER}</p>")
                                 .encode("utf-8")) for word in WORDS[:4]])
    units = tmp_path / "units"
    for site_boilerplate, recorded in ((None, True), (SiteBoilerplate(), False)):
        output = tmp_path / f"out-{recorded}"
        settings = CorpusSettings(inputs=(str(inputs),), output=str(output), site_boilerplate=site_boilerplate)
        with beam.Pipeline() as pipeline:
            build_corpus(pipeline, settings, units_dir=str(units / str(recorded)))
        assert bool(list((units / str(recorded) / UNITS).glob(f"*{RECORD_SUFFIX}"))) == recorded
