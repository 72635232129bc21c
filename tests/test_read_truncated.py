"""Truncated captures keep what was received (issue 30): a page the crawler cut (WARC-Truncated), or one the end
of the file (or of its gzip member) cuts, is a document whose `truncated` says why and how much; with
--skip-truncated, as before, a `truncated` skip (or, for a cut record, a dead letter)."""

from __future__ import annotations

import io
import json
import os
import zlib
from pathlib import Path

import pytest

from pipeline.sample import Capture, capture_records, http_response, warc_bytes
from tests.helpers import about, compressed_frames, corpus_records, html_capture, input_dir, page
from tests.test_cli import run_main
from transforms.document import DeadLetter, Document, Skip
from transforms.stages.read_warc.read_warc import read_warc

BEFORE = html_capture("https://en.example.org/before", "<p>The page before the long one.</p>",
                      date="2026-01-15T10:00:00Z")
LONG_BODY = page("<p>" + " ".join(f"word{n}" for n in range(3000)) + "</p>").encode()
CRAWLER_CUT = Capture("https://en.example.org/long", LONG_BODY[:2000], warc_headers=(("WARC-Truncated", "length"),),
                      date="2026-01-15T10:01:00Z")
LONG = Capture("https://en.example.org/long-stored", LONG_BODY, date="2026-01-15T10:02:00Z")


def read_all(data: bytes, skip_truncated: bool = False) -> list:
    return list(read_warc(lambda: io.BytesIO(data), "test.warc", on_note=lambda note: None,
                          skip_truncated=skip_truncated))


def only(outcomes: list, url: str):
    """The outcome of the response record of `url` (not of its request or metadata record)."""
    [outcome] = [outcome for outcome in outcomes
                 if about(outcome).url == url and not (isinstance(outcome, Skip) and outcome.kind == "non-response")]
    return outcome


@pytest.mark.parametrize("reason", ["length", "time", "disconnect", "unspecified"])
def test_a_capture_the_crawler_cut_is_kept_with_why_and_how_much(reason):
    capture = Capture(CRAWLER_CUT.url, CRAWLER_CUT.body, warc_headers=(("WARC-Truncated", reason),))
    doc = only(read_all(warc_bytes([BEFORE, capture])), capture.url)
    assert isinstance(doc, Document), doc
    assert doc.payload == capture.body
    assert doc.truncated == f"{reason}: {len(capture.body)} bytes received"


def test_a_whole_capture_says_nothing_of_truncation():
    doc = only(read_all(warc_bytes([BEFORE])), BEFORE.url)
    assert isinstance(doc, Document) and doc.truncated == ""


def test_with_skip_truncated_a_capture_the_crawler_cut_is_a_truncated_skip():
    skip = only(read_all(warc_bytes([BEFORE, CRAWLER_CUT]), skip_truncated=True), CRAWLER_CUT.url)
    assert isinstance(skip, Skip) and (skip.kind, skip.detail) == ("truncated", "length")


def body_offset(record: bytes) -> int:
    """Where the HTTP body starts in an uncompressed response record."""
    block = record.index(b"\r\n\r\n") + 4
    return record.index(b"\r\n\r\n", block) + 4


@pytest.mark.parametrize("compression", ["none", "record", "file"])
def test_a_page_the_end_of_the_file_cuts_keeps_what_was_received(compression):
    data = warc_bytes([BEFORE, LONG], compression)
    plain = warc_bytes([BEFORE, LONG], "none")
    response = capture_records(LONG, "1.0")[1]
    start = plain.index(response)
    body = len(LONG_BODY)
    received = 1500
    cut_plain = plain[:start + body_offset(response) + received]
    if compression == "none":
        cut = cut_plain
    else:
        # As many compressed bytes as hold the first `received` bytes of its body (and not all of it).
        cut = next(data[:end] for end in range(len(data) // 2, len(data))
                   if len(zlib.decompressobj(31).decompress(data[:end])) >= len(cut_plain)
                   or compression == "record" and _member_holds(data, end, received, response))
    outcomes = read_all(cut)
    doc = only(outcomes, LONG.url)
    assert isinstance(doc, Document), outcomes
    got = len(doc.payload)
    assert received <= got < body and doc.payload == LONG_BODY[:got]
    assert doc.truncated == f"end-of-file: {got} of {body} bytes received"
    assert (doc.capture.warc_record_id, doc.http_status) == (LONG.record_id, 200)
    assert not [outcome for outcome in outcomes if isinstance(outcome, DeadLetter)], outcomes


def _member_holds(data: bytes, end: int, received: int, response: bytes) -> bool:
    start = compressed_frames(data)[-2][0]  # LONG's response member
    return len(zlib.decompressobj(31).decompress(data[start:end])) >= body_offset(response) + received


def test_with_skip_truncated_a_page_the_end_of_the_file_cuts_is_a_dead_letter_that_names_it():
    plain = warc_bytes([BEFORE, LONG], "none")
    outcomes = read_all(plain[:len(plain) - 2000], skip_truncated=True)
    letter = only(outcomes, LONG.url)
    assert isinstance(letter, DeadLetter) and letter.reason.startswith("truncated"), letter
    assert letter.warc_record_id == LONG.record_id


def test_a_record_cut_before_its_body_stays_a_dead_letter_that_names_it():
    plain = warc_bytes([BEFORE, LONG], "none")
    response = capture_records(LONG, "1.0")[1]
    start = plain.index(response)
    cut = plain[:start + body_offset(response) - 20]  # inside its HTTP headers
    letter = read_all(cut)[-1]
    assert isinstance(letter, DeadLetter) and "truncated" in letter.reason, letter
    assert (letter.url, letter.warc_record_id) == (LONG.url, LONG.record_id)


def test_a_record_whose_gzip_member_ends_inside_it_keeps_what_was_stored():
    stored = 1200
    cut = Capture(LONG.url, LONG.body, cut_block_to=len(http_response(LONG)) - len(LONG_BODY) + stored,
                  date=LONG.date)
    outcomes = read_all(warc_bytes([BEFORE, cut, BEFORE]))
    doc = only(outcomes, LONG.url)
    assert isinstance(doc, Document) and doc.payload.startswith(LONG_BODY[:stored]), doc
    # (The blank lines the writer put after the cut block are in the member too: they are read as the body's.)
    assert stored <= len(doc.payload) <= stored + 4
    assert doc.truncated == f"end-of-member: {len(doc.payload)} of {len(LONG_BODY)} bytes received"
    assert len([outcome for outcome in outcomes if isinstance(outcome, Document)]) == 3


def test_a_peer_readers_clipped_file_keeps_its_page(peer_warcs):
    path = peer_warcs / "warcio__example-space-in-url.arc"
    outcomes = list(read_warc(lambda: open(path, "rb"), str(path), on_note=lambda note: None))
    [doc] = [outcome for outcome in outcomes if isinstance(outcome, Document)]
    assert doc.capture.url.startswith("http://example.com/index.cfm") and doc.truncated.startswith("end-of-file: ")
    assert not [outcome for outcome in outcomes if isinstance(outcome, DeadLetter)]


@pytest.fixture
def peer_warcs() -> Path:
    value = os.environ.get("WEBCORPUS_PEER_WARCS")
    if not value:
        pytest.skip("WEBCORPUS_PEER_WARCS is not set")
    return Path(value)


def build(tmp_path: Path, data: bytes, *options: str) -> tuple[dict, list[dict]]:
    path = input_dir(tmp_path) / "crawl.warc.gz"
    path.write_bytes(data)
    output = tmp_path / "out"
    code, _, err = run_main(["--input", str(path), "--output", str(output), "--quiet", *options])
    assert code == 0, err
    return json.loads((output / "report.json").read_text()), corpus_records(output)


def test_a_build_keeps_truncated_pages_says_so_in_each_record_and_counts_them(tmp_path):
    report, records = build(tmp_path, warc_bytes([BEFORE, CRAWLER_CUT]))
    by_url = {record["url"]: record for record in records}
    assert by_url[CRAWLER_CUT.url]["truncated"] == f"length: {len(CRAWLER_CUT.body)} bytes received"
    assert by_url[BEFORE.url]["truncated"] == ""
    assert report["truncated_kept"] == 1 and "truncated" not in report["skipped"]
    assert report["options"]["skip_truncated"] is False


def test_a_build_with_skip_truncated_skips_them_as_before(tmp_path):
    report, records = build(tmp_path, warc_bytes([BEFORE, CRAWLER_CUT]), "--skip-truncated")
    assert [record["url"] for record in records] == [BEFORE.url]
    assert report["skipped"]["truncated"] == 1 and report["truncated_kept"] == 0
    assert report["options"]["skip_truncated"] is True


@pytest.mark.slow
def test_a_rebuild_of_a_build_with_skip_truncated_skips_them_too(tmp_path):
    build(tmp_path, warc_bytes([BEFORE, CRAWLER_CUT]), "--skip-truncated")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["options"]["skip_truncated"] is True
    code, out, err = run_main(["--rebuild", str(tmp_path / "out" / "manifest.json"),
                               "--output", str(tmp_path / "again"), "--quiet"])
    assert code == 0 and "byte-identical" in out, err
    assert [record["url"] for record in corpus_records(tmp_path / "again")] == [BEFORE.url]
