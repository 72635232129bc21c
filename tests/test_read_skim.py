"""The records of a file gzipped per record, skimmed (transforms/stages/read_warc/skim.py): read without warcio, they
give the outcomes warcio's reading gives, record for record (what skimming is not sure of is warcio's); a range counts
the records that are not responses (`RecordsRead.non_response`) rather than listing each."""

import gzip
import io
from collections import Counter

import pytest
from apache_beam.pvalue import TaggedOutput

from pipeline.sample import Capture, warc_bytes
from tests.helpers import html_capture, process_unit, read_bytes
from transforms.document import Skip
from transforms.report.report import tally_records_read, tally_skip
from transforms.stages.read_warc import read_warc as reader
from transforms.stages.read_warc.formats import detect_format
from transforms.stages.read_warc.ranges import WarcRange
from transforms.stages.read_warc.read_warc import _Progress
from transforms.stages.read_warc import skim as skim_module
from transforms.stages.read_warc.skim import skim
from transforms.vocabulary import NON_RESPONSE, RECORDS_READ, REDIRECT, SKIPPED, RecordsRead


def through_warcio(data: bytes, monkeypatch) -> list:
    with monkeypatch.context() as patched:
        patched.setattr(reader, "skims", lambda form: False)
        return read_bytes(data)


def member(text: bytes) -> bytes:
    return gzip.compress(text, mtime=0)


def record(warc_type: str, headers: bytes, block: bytes = b"GET / HTTP/1.1\r\n\r\n", length: int | None = None) -> bytes:
    length = len(block) if length is None else length
    return (b"WARC/1.0\r\nWARC-Type: " + warc_type.encode() + b"\r\n" + headers +
            b"Content-Length: %d\r\n\r\n" % length + block + b"\r\n\r\n")


CRAWL = warc_bytes([html_capture(f"https://example.org/{index}", f"<p>Page {index} of the crawl.</p>")
                    for index in range(3)] + [Capture("https://example.org/r", status=301, content_type=None)])
ODD_RECORDS = {
    "continuation line": record("request", b"WARC-Target-URI: https://example.org/a\r\nX-Long: a\r\n b\r\n"),
    "target in angle brackets": record("request", b"WARC-Target-URI: <https://example.org/a>\r\n"),
    "space in the target": record("metadata", b"WARC-Target-URI: https://example.org/a b\r\n"),
    "request without target": record("request", b"WARC-Record-ID: <urn:uuid:9>\r\n"),
    "bare line feed": record("request", b"WARC-Target-URI: https://example.org/a\nWARC-Record-ID: <urn:uuid:9>\r\n"),
    "not ASCII": record("metadata", "WARC-Target-URI: https://example.org/\u00e9\r\n".encode("utf-8")),
    "Content-Length too short": record("request", b"WARC-Target-URI: https://example.org/a\r\n", length=5),
    "Content-Length too long": record("request", b"WARC-Target-URI: https://example.org/a\r\n", length=500),
    "Content-Length not a number": record("metadata", b"WARC-Target-URI: https://example.org/a\r\n", length=-3),
    "two records in a member": record("request", b"WARC-Target-URI: https://example.org/a\r\n") * 2,
    "header names in another case, spaces before the colon": record(
        "metadata", b"warc-target-uri : https://example.org/a\r\nWARC-RECORD-ID:<urn:uuid:7>  \r\n"),
    "WARC/1.1": record("request", b"WARC-Target-URI: https://example.org/a\r\n").replace(b"WARC/1.0", b"WARC/1.1"),
}


def response(http: bytes, body: bytes = b"<html><body><p>A page.</p></body></html>",
             warc_headers: bytes = b"WARC-Target-URI: https://example.org/p\r\nWARC-Record-ID: <urn:uuid:5>\r\n"
                                   b"WARC-Date: 2026-01-15T10:00:00Z\r\n") -> bytes:
    return record("response", warc_headers, http + body)


OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
ODD_RESPONSES = {
    "plain": response(OK),
    "HTTP continuation line": response(b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n charset=koi8-r\r\n\r\n"),
    "HTTP header without a colon": response(b"HTTP/1.1 200 OK\r\nContent-Type text/plain\r\nX: y\r\n\r\n"),
    "HTTP header line of whitespace": response(b"HTTP/1.1 200 OK\r\n\x0b\r\nContent-Type: image/png\r\n\r\n"),
    "HTTP header not ASCII": response("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\u00e9\r\n\r\n".encode()),
    "HTTP bare line feed": response(b"HTTP/1.1 200 OK\nContent-Type: image/png\r\n\r\n"),
    "HTTP headers without the blank line": response(b"HTTP/1.1 200 OK\r\nContent-Type: text/html", body=b""),
    "HTTP headers only": response(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", body=b""),
    "lower-case protocol, no reason": response(b"http/1.1 200\r\nContent-Type: text/html\r\n\r\n"),
    "status not a number": response(b"HTTP/1.1 2x0 OK\r\nContent-Type: text/html\r\n\r\n"),
    "no status line": response(b"Content-Type: text/html\r\n\r\n"),
    "redirect": response(b"HTTP/1.1 301 Moved\r\nLocation: /q\r\n\r\n", body=b""),
    "not HTML": response(b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n", body=b"\x89PNG\r\n\x1a\n"),
    "binary labelled HTML": response(OK, body=b"\x89PNG\r\n\x1a\n\x00\x00"),
    "two Content-Types, spaces around": response(
        b"HTTP/1.1 200 OK\r\ncontent-type \t:  text/html  \r\nContent-Type: image/png\r\n\r\n"),
    "chunked": response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n",
                        body=b"7\r\n<p>Hi. \r\n9\r\nA page.</p>\r\n0\r\n\r\n"),
    "broken chunks": response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                              body=b"7\r\n<p>Hi. XX\r\nzz\r\n"),
    "gzip Content-Encoding": response(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/html\r\n\r\n",
                                      body=gzip.compress(b"<html><body><p>Zipped page.</p></body></html>", mtime=0)),
    "empty body": response(OK, body=b""),
    "WARC-Truncated": response(OK, warc_headers=b"WARC-Target-URI: https://example.org/t\r\nWARC-Truncated: length\r\n"),
    "target not http": response(OK, warc_headers=b"WARC-Target-URI: ftp://example.org/p\r\n"),
    "target in capitals": response(OK, warc_headers=b"WARC-Target-URI: HTTP://example.org/p\r\n"),
    "response without target": response(OK, warc_headers=b"WARC-Record-ID: <urn:uuid:5>\r\n"),
    "WARC header without a colon": response(OK, warc_headers=b"WARC-Target-URI: https://example.org/p\r\nOdd line\r\n"),
    "Content-Length too short": record("response", b"WARC-Target-URI: https://example.org/a\r\n", OK, length=5),
}


def test_a_crawl_reads_as_through_warcio(monkeypatch):
    outcomes = read_bytes(CRAWL)
    assert outcomes == through_warcio(CRAWL, monkeypatch)
    assert sum(isinstance(outcome, Skip) and outcome.kind == NON_RESPONSE for outcome in outcomes) == 9


@pytest.mark.parametrize("name", sorted(ODD_RECORDS))
def test_odd_records_read_as_through_warcio(name, monkeypatch):
    data = CRAWL + member(ODD_RECORDS[name]) + CRAWL
    assert read_bytes(data) == through_warcio(data, monkeypatch)


@pytest.mark.parametrize("name", sorted(ODD_RESPONSES))
def test_odd_responses_read_as_through_warcio(name, monkeypatch):
    data = CRAWL + member(ODD_RESPONSES[name]) + CRAWL
    assert read_bytes(data) == through_warcio(data, monkeypatch)


def test_plain_responses_are_read_without_warcio(monkeypatch):
    expected = through_warcio(CRAWL, monkeypatch)

    def no_warcio(*args, **kwargs):
        raise AssertionError("warcio was asked to read a record")

    monkeypatch.setattr(reader, "RecordIterator", no_warcio)
    assert read_bytes(CRAWL) == expected


def test_a_response_over_the_bounds_is_warcios(monkeypatch):
    data = CRAWL + member(response(OK, body=b"<p>" + b"A long page. " * 2000 + b"</p>")) + CRAWL
    expected = through_warcio(data, monkeypatch)
    asked = []
    iterator = reader.RecordIterator
    monkeypatch.setattr(reader, "RecordIterator", lambda *args: asked.append(args) or iterator(*args))
    monkeypatch.setattr(skim_module, "RESPONSE_BYTES", 4096)
    assert read_bytes(data) == expected and len(asked) == 1


@pytest.mark.parametrize("cut", [1, 20, 200])
def test_a_file_cut_inside_a_member_reads_as_through_warcio(cut, monkeypatch):
    data = CRAWL[:-cut]
    assert read_bytes(data) == through_warcio(data, monkeypatch)


def test_a_damaged_member_reads_as_through_warcio(monkeypatch):
    request = member(record("request", b"WARC-Target-URI: https://example.org/a\r\n", block=b"x" * 3000))
    damaged = request[:40] + bytes(byte ^ 0x55 for byte in request[40:60]) + request[60:]
    data = CRAWL + damaged + CRAWL
    assert read_bytes(data) == through_warcio(data, monkeypatch)


def test_garbage_after_the_last_member_reads_as_through_warcio(monkeypatch):
    data = CRAWL + b"\r\n\r\nnot a record\r\n"
    assert read_bytes(data) == through_warcio(data, monkeypatch)


def test_skims_requests_and_metadata_and_leaves_responses():
    progress = _Progress(form=detect_format(lambda: io.BytesIO(CRAWL)))
    skipped = list(skim(io.BytesIO(CRAWL), "test.warc.gz", progress))
    # The warcinfo record and the first capture's request; its response is warcio's.
    assert [skip.record_type for skip in skipped] == ["warcinfo", "request"]
    assert progress.emitted == 2 and not progress.handed_on
    assert CRAWL[progress.next_offset:].startswith(b"\x1f\x8b")
    assert gzip.decompress(CRAWL[progress.next_offset:])[:40].find(b"WARC-Type: response") > 0


def test_skimming_claims_each_record_and_stops_at_one_not_claimed():
    offsets = []

    def claim(offset):
        offsets.append(offset)
        return len(offsets) < 2

    progress = _Progress(form=detect_format(lambda: io.BytesIO(CRAWL)), claim=claim)
    assert len(list(skim(io.BytesIO(CRAWL), "test.warc.gz", progress))) == 1
    assert progress.handed_on and offsets[0] == 0 and offsets[1] == progress.next_offset > 0


def test_a_range_counts_its_non_response_skips_and_lists_the_others(write_warc):
    captures = [html_capture(f"https://example.org/{index}", "<p>A page.</p>") for index in range(3)]
    path = write_warc(captures + [Capture("https://example.org/r", status=301, content_type=None)])
    outputs = process_unit(WarcRange(str(path), 0, None, path.stat().st_size, splittable=True))
    tagged = {tag: [output.value for output in outputs if isinstance(output, TaggedOutput) and output.tag == tag]
              for tag in (SKIPPED, RECORDS_READ)}
    assert [skip.kind for skip in tagged[SKIPPED]] == [REDIRECT]
    (read,) = tagged[RECORDS_READ]
    assert (read.records, read.non_response) == (1 + 3 * 4, 1 + 2 * 4)


def test_the_report_tallies_counted_non_response_skips_as_listed_ones():
    listed = Counter()
    for offset in range(3):
        listed.update(tally_skip(Skip(NON_RESPONSE, "/in/a.warc.gz", offset, "request", "", "")))
    listed.update(tally_records_read(RecordsRead("/in/a.warc.gz", 4)))
    assert tally_records_read(RecordsRead("/in/a.warc.gz", 4, non_response=3)) == listed
