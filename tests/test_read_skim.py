"""The records that are not responses: skimmed (transforms/stages/read_warc/skim.py), read without warcio, they give
the outcomes warcio's reading gives, record for record (what skimming is not sure of is warcio's); a range counts
them (`RecordsRead.non_response`) rather than listing each."""

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


def test_a_crawl_reads_as_through_warcio(monkeypatch):
    outcomes = read_bytes(CRAWL)
    assert outcomes == through_warcio(CRAWL, monkeypatch)
    assert sum(isinstance(outcome, Skip) and outcome.kind == NON_RESPONSE for outcome in outcomes) == 9


@pytest.mark.parametrize("name", sorted(ODD_RECORDS))
def test_odd_records_read_as_through_warcio(name, monkeypatch):
    data = CRAWL + member(ODD_RECORDS[name]) + CRAWL
    assert read_bytes(data) == through_warcio(data, monkeypatch)


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
