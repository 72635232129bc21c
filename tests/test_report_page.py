"""report.html: the run report to look at, with its page inspector."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings, strategies as st
from selectolax.lexbor import LexborHTMLParser

from pipeline import cli
from pipeline.sample import Capture, sample_captures, warc_bytes
from tests.helpers import page, read_bytes
from transforms.report.manifest import MANIFEST_NAME
from transforms.report.report_page import (DROPPED_ATTRIBUTE, FETCHING_ATTRIBUTES, REPORT_PAGE_NAME, inspect_page,
                                           marked_original)
from transforms.report.report_page_transform import SmallestDistinctHashes
from transforms import vocabulary
from transforms.document import read_at
from transforms.vocabulary import Fingerprint

# Where the browser test leaves its screenshot (CI keeps it as an artifact).
ARTIFACTS = Path(os.environ.get("WEBCORPUS_ARTIFACTS", Path(__file__).parent.parent / "artifacts"))
# Requests that Chromium makes on its own (time, sign-in, updates), whatever the page.
BROWSER_OWN_HOSTS = re.compile(r"(^|\.)(google\.com|gstatic\.com|googleapis\.com|gvt1\.com)(:\d+)?$")

FETCHING_PAGE = page(
    '<p>Visible <b>text</b> here</p>'
    '<div style="display:none">hidden panel</div>'
    '<div class="ad">an advert</div>'
    '<img src="http://example.org/a.png" srcset="http://example.org/b.png 2x" alt="a picture">'
    '<iframe src="http://example.org/frame"></iframe>'
    '<video poster="http://example.org/p.jpg"><source src="http://example.org/v.mp4"></video>'
    '<form action="http://example.org/post"><input value="x"></form>'
    '<a href="http://example.org/next">next page</a>'
    '<div style="background:url(http://example.org/bg.png)">styled</div>',
    head='<link rel="stylesheet" href="http://example.org/s.css"><script src="http://example.org/s.js"></script>'
         '<style>@import "http://example.org/i.css"; body{background-image:url("http://example.org/x.png")}</style>'
         '<meta http-equiv="refresh" content="0; url=http://example.org/">',
)


def fingerprint(content_hash: str, url: str, date: str = "2026-01-01T00:00:00Z") -> Fingerprint:
    return Fingerprint(vocabulary.Capture(date, url, f"<urn:{url}>", "a.warc.gz", 0, 0), content_hash, "0:x")


def test_the_original_fetches_and_runs_nothing():
    marked = marked_original(FETCHING_PAGE)
    tree = LexborHTMLParser(marked)
    assert tree.css("script, link, iframe, base") == []
    for node in tree.root.traverse():
        assert not set(node.attributes) & set(FETCHING_ATTRIBUTES) and node.attributes.get("href") is None
        assert "http-equiv" not in node.attributes or node.attributes.get("content", "").startswith("default-src")
    # What is left of CSS that fetches is inert.
    assert not re.search(r"(?<!blocked-)url\s*\(|@import", marked, re.IGNORECASE)
    # The policy comes before any of the page's markup.
    assert marked.startswith('<meta http-equiv="Content-Security-Policy"')
    assert tree.css_first("a").attributes.get("data-href") == "http://example.org/next"


def test_what_clean_html_drops_is_marked_and_what_it_keeps_is_not():
    marked = LexborHTMLParser(marked_original(FETCHING_PAGE, drop_selectors=("div.ad",)))
    reasons = {node.text(strip=True) or node.tag: node.attributes[DROPPED_ATTRIBUTE]
               for node in marked.css(f"[{DROPPED_ATTRIBUTE}]")}
    assert reasons["hidden panel"] == "hidden"
    assert reasons["an advert"] == "selector"
    assert reasons["input"] == "input"
    assert marked.css_first("p").attributes.get(DROPPED_ATTRIBUTE) is None
    # A hidden element is shown, highlighted, so that it can be seen.
    assert "display" not in (marked.css_first(f"[{DROPPED_ATTRIBUTE}=hidden]").attributes.get("style") or "")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 5)), min_size=0, max_size=40),
       st.integers(0, 5), st.randoms())
def test_the_sample_is_the_smallest_hashes_whatever_the_order_and_the_merges(entries, size, random):
    fingerprints = [fingerprint(content_hash, f"https://{content_hash}.example/{n}") for content_hash, n in entries]
    expected = [min(f for f in fingerprints if f.content_hash == key)
                for key in sorted({f.content_hash for f in fingerprints})[:size]]
    combine = SmallestDistinctHashes(size)
    random.shuffle(fingerprints)
    cut = random.randint(0, len(fingerprints))
    parts = []
    for chunk in (fingerprints[:cut], fingerprints[cut:]):
        accumulator = combine.create_accumulator()
        for item in chunk:
            accumulator = combine.add_input(accumulator, item)
        assert len(accumulator) <= size
        parts.append(accumulator)
    assert combine.extract_output(combine.merge_accumulators(parts)) == expected


def test_the_sample_in_a_pipeline_is_each_contents_survivor():
    fingerprints = [fingerprint("b", "https://b.example/late", "2026-02-01T00:00:00Z"),
                    fingerprint("b", "https://b.example/early"), fingerprint("c", "https://c.example/"),
                    fingerprint("a", "https://a.example/")]
    with TestPipeline() as pipeline:
        chosen = (pipeline | beam.Create(fingerprints)
                  | beam.CombineGlobally(SmallestDistinctHashes(2))
                  | beam.Map(lambda sample: [f.capture.url for f in sample]))
        assert_that(chosen, equal_to([["https://a.example/", "https://b.example/early"]]))


def test_a_sampled_page_is_read_again_and_cleaned_with_the_builds_settings(write_warc):
    path = write_warc([Capture("https://example.org/p", FETCHING_PAGE.encode("utf-8"))])
    offset = next(read_at(outcome) for outcome in read_bytes(path.read_bytes())
                  if getattr(outcome, "http_status", None) == 200)
    sampled = Fingerprint(vocabulary.Capture("", "https://example.org/p", "", str(path), offset, 0), "", "")
    inspected = inspect_page(sampled, ("div.ad",), None)
    assert inspected.note == ""
    assert "visible text here" in inspected.kept_blocks
    assert "an advert" not in " ".join(inspected.kept_blocks)
    assert DROPPED_ATTRIBUTE in inspected.original
    missing = inspect_page(Fingerprint(vocabulary.Capture("", "u", "", str(path), offset + 1, 0), "", ""), (), None)
    assert missing.note and missing.kept_blocks == ()


@pytest.fixture
def built_report(tmp_path) -> Path:
    source = tmp_path / "in" / "pages.warc.gz"
    source.parent.mkdir()
    captures = sample_captures() + [Capture("https://fetching.example.org/", FETCHING_PAGE.encode("utf-8"))]
    source.write_bytes(warc_bytes(captures, filename=source.name))
    output = tmp_path / "out"
    assert cli.main(["--input", str(source), "--output", str(output), "--quiet", "--report-sample", "50"]) == 0
    return output


@pytest.mark.slow
def test_a_sample_of_none_is_a_report_without_inspected_pages(write_warc, tmp_path):
    source = write_warc(sample_captures())
    assert cli.main(["--input", str(source), "--output", str(tmp_path / "out"), "--quiet", "--report-sample", "0"]) == 0
    assert "No page was sampled" in (tmp_path / "out" / REPORT_PAGE_NAME).read_text()


@pytest.mark.slow
def test_every_build_writes_report_html_listed_in_the_manifest(built_report):
    manifest = json.loads((built_report / MANIFEST_NAME).read_text())
    assert REPORT_PAGE_NAME in {entry["path"] for entry in manifest["outputs"]}
    text = (built_report / REPORT_PAGE_NAME).read_text()
    report = json.loads((built_report / "report.json").read_text())
    inspected = json.loads(re.search(r'id="inspected">(.*?)</script>', text, re.DOTALL).group(1).replace("<\\/", "</"))
    assert len(inspected) == report["records"]["kept"]
    assert "https://fetching.example.org/" in {entry["url"] for entry in inspected}
    for kind in report["skipped"]:
        if kind != "non-response":
            assert f"<td>{kind}</td>" in text


class _RecordingProxy(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def _record(self):
        self.requests.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_CONNECT = _record

    def log_message(self, *args):
        pass


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def open_in_chromium(page: Path, tmp_path: Path, screenshot: Path) -> tuple[str, list[str], list[str]]:
    """`page` opened from disk in headless Chromium, every request it makes going to a recording proxy: its DOM
    once rendered, its console lines, and the requests of the page's own (not the browser's); `screenshot` taken."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium here: `apt-get install chromium` (.ci/run installs it) to open report.html in it")
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RecordingProxy)
    _RecordingProxy.requests = []
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    common = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              f"--user-data-dir={tmp_path / 'profile'}", f"--proxy-server=http://127.0.0.1:{proxy.server_port}",
              "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0", "--window-size=1400,1800",
              "--virtual-time-budget=5000"]
    url = page.as_uri()
    try:
        dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        shot = subprocess.run([*common, f"--screenshot={screenshot}", url], capture_output=True, text=True,
                              timeout=120)
    finally:
        proxy.shutdown()
    assert dom.returncode == 0 and shot.returncode == 0, dom.stderr[-2000:] + shot.stderr[-2000:]
    console = [line for line in (dom.stderr + shot.stderr).splitlines() if ":CONSOLE" in line]
    page_requests = [request for request in _RecordingProxy.requests
                     if not BROWSER_OWN_HOSTS.search(re.sub(r"^[a-z]+://", "", request).split("/", 1)[0])]
    return dom.stdout, console, page_requests


@pytest.mark.slow
def test_report_html_renders_in_a_browser_from_disk_with_no_error_and_no_request(built_report, tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "report-page.png"
    dom, console, page_requests = open_in_chromium(built_report / REPORT_PAGE_NAME, tmp_path, screenshot)
    assert console == []
    assert page_requests == []
    rendered = LexborHTMLParser(dom)
    assert rendered.body.attributes.get("data-ready") == "true"
    assert len(rendered.css("#pages li")) >= 1 and rendered.css_first("#pages li.current") is not None
    assert rendered.css_first("#kept p") is not None
    assert len(rendered.css("#glance svg rect")) >= 4
    assert screenshot.stat().st_size > 20_000


@pytest.fixture(scope="module")
def signals_page(tmp_path_factory, tiny_tokenizer) -> tuple[list[dict], LexborHTMLParser]:
    """An annotated build's records (Gopher's rules, --tokenizer) and its report.html as Chromium renders it."""
    from tests.helpers import corpus_records, html_capture

    work = tmp_path_factory.mktemp("signals-page")
    sentence = "The quick brown fox jumps over the lazy dog. "
    inputs = work / "in" / "test.warc.gz"
    inputs.parent.mkdir()
    inputs.write_bytes(warc_bytes([html_capture(f"https://example.org/{words}", f"<p>{sentence * words}</p>")
                                   for words in (1, 3, 5, 7, 9, 20)] + [
        html_capture("https://example.org/figures", "<p>" + "12 34 56 78 90 and 1.5 2.5 " * 8 + "</p>")]))
    output = work / "out"
    assert cli.main(["--input", str(inputs), "--output", str(output), "--quiet", "--annotate", "--quality", "gopher",
                     "--quality-threshold", "gopher_quality.min_doc_words=50", "--tokenizer", str(tiny_tokenizer)]) == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    dom, console, page_requests = open_in_chromium(output / REPORT_PAGE_NAME, work,
                                                   ARTIFACTS / "report-page-signals.png")
    assert console == [] and page_requests == []
    return corpus_records(output), LexborHTMLParser(dom)


@pytest.mark.slow
def test_each_signals_histogram_is_drawn_in_a_browser_with_its_threshold_and_the_counts_each_side(signals_page):
    records, rendered = signals_page
    name = "gopher_quality/min_doc_words"
    values = [(record["signals"][name], record["token_count"]) for record in records]
    [signal] = rendered.css(f'#signals .signal[data-signal="{name}"]')
    # All documents, then per language (Gopher's rules depend on it): here English alone.
    histograms = signal.css("svg.histogram")
    assert len(histograms) == 2
    bars = histograms[0].css("rect.bin")
    assert sum(int(bar.attributes["data-documents"]) for bar in bars) == len(records) == 7
    assert histograms[0].css_first("line.threshold") is not None and "threshold 50" in histograms[0].text()
    below, at, above = signal.css_first("table.sides").css("tbody tr")
    for row, side in ((below, lambda value: value < 50), (at, lambda value: value == 50),
                      (above, lambda value: value > 50)):
        chosen = [tokens for value, tokens in values if side(value)]
        assert [cell.text() for cell in row.css("td")[1:]] == [f"{len(chosen):,}", f"{sum(chosen):,}"]
    assert rendered.css_first("#tokens") is not None


@pytest.mark.slow
@pytest.mark.parametrize("name, threshold, drops", [
    ("gopher_quality/min_doc_words", 50, "below"),
    # Named "max_", the rule keeps a page whose share of words with a letter reaches the threshold: it drops below.
    ("gopher_quality/max_non_alpha_words_ratio", 0.8, "below"),
    ("gopher_quality/max_doc_words", 100_000, "above"),
])
def test_each_histogram_shades_and_counts_the_side_its_rule_drops(signals_page, name, threshold, drops):
    records, rendered = signals_page
    values = [(record["signals"][name], record["token_count"]) for record in records]
    [signal] = rendered.css(f'#signals .signal[data-signal="{name}"]')
    label = f"dropped: {drops} {threshold:g}"
    for histogram in signal.css("svg.histogram"):
        shaded = histogram.css_first("rect.dropped-side")
        assert shaded.attributes["data-drops"] == drops and label in histogram.text()
        # The shade runs from the threshold's line to the chart's end on the side dropped.
        line_x = float(histogram.css_first("line.threshold").attributes["x1"])
        left, width = float(shaded.attributes["x"]), float(shaded.attributes["width"])
        assert (left + width if drops == "below" else left) == pytest.approx(line_x, abs=0.1) and width >= 0
    dropped_by_rule = (lambda value: value < threshold) if drops == "below" else (lambda value: value > threshold)
    rows = {row.attributes["class"]: [cell.text() for cell in row.css("td")]
            for row in signal.css_first("table.sides").css("tfoot tr")}
    for outcome, chosen in (("dropped", [tokens for value, tokens in values if dropped_by_rule(value)]),
                            ("kept", [tokens for value, tokens in values if not dropped_by_rule(value)])):
        assert rows[outcome] == [f"{len(chosen):,}", f"{sum(chosen):,}"]
    [marked] = signal.css_first("table.sides").css("tbody tr.dropped")
    assert marked.css_first("td").text() == f"{drops} {threshold:g}"
