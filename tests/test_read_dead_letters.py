"""ReadWarc's dead letters say what is wrong with the record, and name it (URL, record id) once its header is read."""

from __future__ import annotations

import io
import zlib

import pytest

from pipeline.sample import Capture, capture_records
from tests.helpers import html_capture, outcomes_by_kind
from transforms.stages.read_warc import read_warc as reader, warcio_compat

PAGES = [html_capture(f"https://en.example.org/{n}", f"<p>Page number {n} of the harbour story.</p>",
                      date=f"2026-01-15T10:0{n}:00Z") for n in range(3)]


def response(capture: Capture) -> bytes:
    return capture_records(capture, "1.0")[1]


def read_all(data: bytes) -> list:
    return list(reader.read_warc(lambda: io.BytesIO(data), "test.warc", on_note=lambda note: None))


def with_header_line(record: bytes, line: bytes) -> bytes:
    """`record` with `line` (and its line end) after its WARC-Type line (the second)."""
    first, second, rest = record.split(b"\r\n", 2)
    return first + b"\r\n" + second + b"\r\n" + line + rest


def without_header(record: bytes, name: bytes) -> bytes:
    head, block = record.split(b"\r\n\r\n", 1)
    kept = [line for line in head.split(b"\r\n") if not line.startswith(name + b":")]
    return b"\r\n".join(kept) + b"\r\n\r\n" + block


@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"])
def test_a_header_line_over_the_bound_is_a_dead_letter_that_says_so(line_end):
    # (A bare CR: the header after it, WARC-Target-URI, runs into the long line; warcio then fails with an
    # AttributeError of its own. With CRLF, warcio reads the line whole, however long.)
    long_line = b"X-Long: " + b"a" * 10_000_000 + line_end
    data = with_header_line(response(PAGES[0]), long_line) + response(PAGES[1])
    docs, _, dead = outcomes_by_kind(read_all(data))
    assert [doc.capture.url for doc in docs] == [PAGES[1].url]
    [letter] = dead
    assert f"WARC header line over {warcio_compat.HEADER_LINE_LIMIT:,} bytes" in letter.reason, letter.reason
    assert "AttributeError" not in letter.reason and letter.source_offset == 0


def test_a_response_without_a_target_uri_is_a_dead_letter_that_says_so():
    data = without_header(response(PAGES[0]), b"WARC-Target-URI") + response(PAGES[1])
    docs, _, dead = outcomes_by_kind(read_all(data))
    assert [doc.capture.url for doc in docs] == [PAGES[1].url]
    assert [letter.source_offset for letter in dead] == [0]
    assert "without WARC-Target-URI" in dead[0].reason and "AttributeError" not in dead[0].reason, dead[0].reason


# Dead letters of a record whose header was read: each names the record.
DAMAGED_AFTER_THE_HEADER = {
    # Its Content-Length is missing: where it ends is unknown.
    "no-content-length": lambda: without_header(response(PAGES[0]), b"Content-Length") + response(PAGES[1]),
    # Its chunked framing breaks part way.
    "broken-chunks": lambda: response(Capture(PAGES[0].url, b"5\r\nhello\r\nzz\r\nmore", date=PAGES[0].date,
                                              http_headers=(("Transfer-Encoding", "chunked"),)))
    + response(PAGES[1]),
    # Its Content-Length runs into the next record.
    "content-length-too-big": lambda: response(PAGES[0]).replace(
        b"Content-Length: %d" % len(response(PAGES[0]).split(b"\r\n\r\n", 1)[1][:-4]),
        b"Content-Length: %d" % (len(response(PAGES[0]).split(b"\r\n\r\n", 1)[1][:-4]) + 40), 1)
    + response(PAGES[1]),
}


@pytest.mark.parametrize("damage", DAMAGED_AFTER_THE_HEADER)
def test_a_dead_letter_of_a_record_whose_header_was_read_names_it(damage):
    outcomes = read_all(DAMAGED_AFTER_THE_HEADER[damage]())
    _, _, dead = outcomes_by_kind(outcomes)
    assert dead, outcomes
    letter = dead[0]
    assert (letter.url, letter.warc_record_id) == (PAGES[0].url, PAGES[0].record_id), letter


def test_a_whole_file_gzip_cut_inside_a_records_http_headers_names_the_record():
    plain = b"".join(response(page) for page in PAGES)
    second = plain.index(response(PAGES[1]))
    http_headers = plain.index(b"HTTP/1.1", second) + 20  # inside the second record's HTTP headers
    outcomes = read_all(_gzip_cut(plain, http_headers))
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [PAGES[0].url]
    [letter] = dead
    assert "truncated" in letter.reason
    assert (letter.url, letter.warc_record_id) == (PAGES[1].url, PAGES[1].record_id), letter


def _gzip_cut(plain: bytes, readable: int) -> bytes:
    """A whole-file gzip of `plain` cut so that it decompresses to its first `readable` bytes."""
    data = zlib.compressobj(9, zlib.DEFLATED, 31)
    # (A full flush after the first `readable` bytes: the cut there leaves them all and nothing after.)
    return data.compress(plain[:readable]) + data.flush(zlib.Z_FULL_FLUSH)


def test_a_response_without_a_target_uri_names_its_record_id():
    data = without_header(response(PAGES[0]), b"WARC-Target-URI") + response(PAGES[1])
    _, _, [letter] = outcomes_by_kind(read_all(data))
    assert letter.warc_record_id == PAGES[0].record_id
