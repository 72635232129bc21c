"""--url-blocklist: captures of listed domains, hosts and URLs skipped as url-blocked from their headers."""

from __future__ import annotations

import io
import json

import pytest

from pipeline.sample import Capture, warc_bytes
from tests.helpers import page
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.document import Document, Skip
from transforms.stages.filters.url_blocklist import UrlBlocklist
from transforms.stages.read_warc.read_warc import read_warc

LIST = """# a comment, then a domain, a hosts-file host, a UT1 url and a URL with its scheme
blocked.example
0.0.0.0 ads.example.org

example.net/private/
https://example.com/secret
"""


def blocklist() -> UrlBlocklist:
    rules = UrlBlocklist()
    for line in LIST.splitlines():
        rules.add_line(line, "list.txt")
    return rules


def test_domains_match_their_subdomains_hosts_only_themselves_urls_as_prefixes():
    rules = blocklist()
    assert rules.match("https://blocked.example/a") == "domain blocked.example (list.txt)"
    assert rules.match("http://WWW.Blocked.Example:8080/") == "domain blocked.example (list.txt)"
    assert rules.match("https://notblocked.example/") is None
    assert rules.match("https://ads.example.org/x") == "host ads.example.org (list.txt)"
    assert rules.match("https://www.ads.example.org/x") is None and rules.match("https://example.org/") is None
    assert rules.match("http://example.net/private/page.html") == "URL example.net/private/ (list.txt)"
    assert rules.match("https://example.net/public") is None
    assert rules.match("http://example.com/secret?x=1").startswith("URL example.com/secret")
    assert rules.match("not a url") is None


def test_the_reader_skips_a_blocked_capture_without_reading_its_payload():
    # A payload that would be a dead letter if it were read (gzip declared, not gzip).
    blocked = Capture("https://www.blocked.example/", b"not gzip at all", http_headers=(("Content-Encoding", "gzip"),))
    kept = Capture("https://open.example/", page("<p>Open page.</p>").encode("utf-8"))
    data = warc_bytes([blocked, kept])
    outcomes = list(read_warc(lambda: io.BytesIO(data), "t.warc.gz", screen=blocklist()))
    skips = [outcome for outcome in outcomes if isinstance(outcome, Skip) and outcome.kind == "url-blocked"]
    assert [(skip.url, skip.detail) for skip in skips] == [(blocked.url, "domain blocked.example (list.txt)")]
    assert [outcome.url for outcome in outcomes if isinstance(outcome, Document)] == [kept.url]


@pytest.mark.slow
def test_url_blocklist_build_counts_lists_and_records_the_list(write_warc, tmp_path):
    source = write_warc([Capture("https://blocked.example/a", page("<p>Blocked page.</p>").encode("utf-8")),
                         Capture("https://open.example/", page("<p>Open page.</p>").encode("utf-8"))])
    listing = tmp_path / "list.txt"
    listing.write_text(LIST)
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet",
                                "--url-blocklist", str(listing)])
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == ["https://open.example/"]
    (skip,) = [line for line in json_lines(output, "skipped") if line["kind"] == "url-blocked"]
    assert skip["url"] == "https://blocked.example/a"
    report = json.loads((output / "report.json").read_text())
    assert report["skipped"]["url-blocked"] == 1 and report["records"]["balanced"]
    (recorded,) = report["options"]["url_blocklists"]
    assert recorded["path"] == str(listing) and len(recorded["sha256"]) == 64
    code, _, stderr = run_main(["--output", str(tmp_path / "never"), "--url-blocklist", str(tmp_path / "nope.txt")])
    assert code == 2 and "no such file" in stderr
