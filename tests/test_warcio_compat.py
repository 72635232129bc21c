"""warcio's bugs that `transforms.stages.read_warc.warcio_compat` works around: each reproduced with warcio as it is, then
read through ReadWarc; and the compat module's guard against a warcio it was not checked against."""

from __future__ import annotations

import gzip
import io
import random
import tracemalloc

import pytest
import zstandard
from warcio import bufferedreaders
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from pipeline.sample import capture_records
from tests.helpers import html_capture, outcomes_by_kind
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc import warcio_compat
from transforms.stages.read_warc.formats import WARC

PAGES = [html_capture(f"https://en.example.org/{n}", f"<p>Page number {n} of the harbour story.</p>",
                      date=f"2026-01-15T10:0{n}:00Z") for n in range(2)]
MiB = 1 << 20


def response(n: int) -> bytes:
    return capture_records(PAGES[n], "1.0")[1]


def read_all(data: bytes, notes: list | None = None) -> list:
    return list(read_warc(lambda: io.BytesIO(data), "test.warc",
                          on_note=(lambda note: None) if notes is None else notes.append))


def warcio_records(data: bytes) -> list:
    """What warcio's own ArchiveIterator makes of `data`: (record type, target URI) of each record."""
    return [(record.rec_type, record.rec_headers.get_header("WARC-Target-URI"))
            for record in ArchiveIterator(io.BytesIO(data))]


def test_warcio_prints_a_broken_gzip_member_and_loses_what_follows_and_read_warc_dead_letters_it_and_reads_on(capsys):
    # A gzip member that breaks after some of it decompressed (past warcio's first 16 KiB read): warcio prints zlib's
    # error, gives the record what decompressed before, and takes the rest of the file for the broken member's.
    page = html_capture("https://en.example.org/big", "<p>" + random.Random(0).randbytes(60_000).hex() + "</p>")
    member = bytearray(gzip.compress(capture_records(page, "1.0")[1]))
    member[40_000:40_010] = bytes(10)
    data = bytes(member) + gzip.compress(response(0)) + gzip.compress(response(1))
    assert warcio_records(data) == [("response", page.url)]
    assert "Error -3 while decompressing data" in capsys.readouterr().err
    docs, _, dead_letters = outcomes_by_kind(read_all(data))
    assert capsys.readouterr().err == ""
    assert [doc.capture.url for doc in docs] == [PAGES[0].url, PAGES[1].url]
    [dead] = dead_letters
    assert (dead.source_offset, dead.url) == (0, page.url)
    assert "Error -3 while decompressing data" in dead.reason and "2 records recovered after it" in dead.reason


def test_warcio_reads_the_blank_lines_after_a_record_one_call_at_a_time_and_read_warc_a_buffer_at_a_time():
    data = response(0) + b"\r\n" * 100_000 + response(1)
    calls = {"warcio": 0, "read_warc": 0}

    def counting(reader, name):
        readline = reader.readline

        def counted(*args):
            calls[name] += 1
            return readline(*args)
        return counted

    iterator = ArchiveIterator(io.BytesIO(data))
    iterator.reader.readline = counting(iterator.reader, "warcio")
    assert [record.rec_type for record in iterator] == ["response", "response"]
    iterator = warcio_compat.RecordIterator(io.BytesIO(data), WARC)
    iterator.reader.readline = counting(iterator.reader, "read_warc")
    assert [record.rec_type for record in iterator] == ["response", "response"]
    assert calls["warcio"] > 100_000 and calls["read_warc"] < 100, calls


def peak_bytes(read) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_warcio_reads_the_line_after_a_record_whole_and_read_warc_within_a_bound(capsys):
    # What follows a record where a blank line should be: 8 MiB without a line end.
    data = response(0) + b"x" * (8 * MiB)

    def warcio_reads():
        with pytest.raises(ArchiveLoadFailed):  # (after it read the line whole, and printed it as its warning)
            warcio_records(data)
    assert peak_bytes(warcio_reads) > 8 * MiB
    capsys.readouterr()
    outcomes = []
    assert peak_bytes(lambda: outcomes.extend(read_all(data))) < 4 * MiB
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [PAGES[0].url] and len(dead) == 1


def test_warcio_reads_a_warc_header_line_whole_and_read_warc_stops_at_the_bound():
    first, rest = response(0).split(b"\r\n", 1)
    long_value = b"a" * (warcio_compat.HEADER_LINE_LIMIT + 1)
    data = first + b"\r\nX-Long: " + long_value + b"\r\n" + rest + response(1)
    record = next(iter(ArchiveIterator(io.BytesIO(data))))
    assert len(record.rec_headers.get_header("X-Long")) == len(long_value)
    docs, _, dead = outcomes_by_kind(read_all(data))
    assert [doc.capture.url for doc in docs] == [PAGES[1].url]
    assert [f"WARC header line over {warcio_compat.HEADER_LINE_LIMIT:,} bytes" in letter.reason
            for letter in dead] == [True]


def test_warcio_fails_with_an_attribute_error_on_a_response_without_target_uri_and_read_warc_says_what_is_missing():
    head, block = response(0).split(b"\r\n\r\n", 1)
    kept = [line for line in head.split(b"\r\n") if not line.startswith(b"WARC-Target-URI:")]
    data = b"\r\n".join(kept) + b"\r\n\r\n" + block + response(1)
    with pytest.raises(AttributeError):
        warcio_records(data)
    docs, _, dead = outcomes_by_kind(read_all(data))
    assert [doc.capture.url for doc in docs] == [PAGES[1].url]
    assert ["without WARC-Target-URI" in letter.reason for letter in dead] == [True]


def test_warcio_reads_no_zstd_frames_and_read_warc_does_through_its_decompressors_table():
    data = b"".join(zstandard.ZstdCompressor().compress(response(n)) for n in range(2))
    with pytest.raises(ArchiveLoadFailed):
        warcio_records(data)
    docs, _, dead = outcomes_by_kind(read_all(data))
    assert [doc.capture.url for doc in docs] == [PAGES[0].url, PAGES[1].url] and dead == []


def test_a_warcio_outside_the_checked_releases_fails_in_one_line():
    warcio_compat.check_warcio()  # the installed one
    for version in ("1.7.3", "1.9.0", "2.0"):
        with pytest.raises(RuntimeError, match=f"^warcio {version} is not a release") as error:
            warcio_compat.check_warcio(version)
        assert "\n" not in str(error.value)


@pytest.mark.parametrize("owner, name", [(ArchiveIterator, "_consume_blanklines"), (bufferedreaders, "sys")])
def test_a_warcio_without_what_is_patched_fails_in_one_line_that_names_it(monkeypatch, owner, name):
    monkeypatch.delattr(owner, name)
    with pytest.raises(RuntimeError, match=f"has no {owner.__name__}.{name}, which") as error:
        warcio_compat.check_warcio()
    assert "\n" not in str(error.value)
