"""ReadWarc's formats besides WARC and WARC.gz: ARC (plain and gzipped), zstd and LZ4 WARC.

Each is told from its bytes, never its file name; every record is one
outcome, with the offset of its frame (of its line, in a plain ARC file);
damage costs only the damaged record; files compressed per record split
into byte ranges that read every record once.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib

import lz4.frame
import pytest
import zstandard

from pipeline import settings as options
from pipeline.sample import Capture, arc_bytes, capture_records, warc_bytes
from tests.helpers import compressed_frames, html_capture, input_dir, outcomes_by_kind
from tests.test_cli import run_main
from transforms.document import DeadLetter, read_at
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.formats import LZ4_FRAMING, detect_format, zstd_framing

LATIN = html_capture("https://en.example.org/harbour", "<p>Harbour cranes &amp; the old port at dawn.</p>",
                     date="2026-01-15T10:01:00Z")
CYRILLIC = Capture("https://ru.example.org/most", "<html><body><p>Новый мост через Неву открыт.</p></body></html>"
                   .encode("cp1251"), content_type="text/html; charset=windows-1251", date="2026-01-15T10:02:00Z")
REDIRECT = Capture("https://en.example.org/old", b"", status=301, http_headers=(("Location", "/harbour"),),
                   date="2026-01-15T10:03:00Z")
IMAGE = Capture("https://en.example.org/crane.png", b"\x89PNG\r\n\x1a\n" + bytes(200), content_type="image/png",
                date="2026-01-15T10:04:00Z")
CAPTURES = [LATIN, CYRILLIC, REDIRECT, IMAGE]
MORE = [html_capture(f"https://en.example.org/{n}", f"<p>Page number {n} of the long harbour story.</p>",
                     date=f"2026-01-15T11:{n:02}:00Z") for n in range(12)]

def read_all(data: bytes, source_file: str = "test", start: int = 0, end: int | None = None) -> list:
    return list(read_warc(lambda: io.BytesIO(data), source_file, start, end, on_note=lambda note: None))


def trained_dictionary() -> bytes:
    samples = [record for capture in MORE + CAPTURES for record in capture_records(capture, "1.0")] * 4
    return zstandard.train_dictionary(2048, samples).as_bytes()


RAW_DICTIONARY = b"".join(capture_records(MORE[0], "1.0"))


def zstd_decompressor(data: bytes):
    """A maker of zstd decompressors for the frames of `data`, with the dictionary at its start, if any."""
    if data.startswith(b"\x5d\x2a\x4d\x18"):
        size = int.from_bytes(data[4:8], "little")
        stored = data[8:8 + size]
        if stored.startswith(b"\x28\xb5\x2f\xfd"):
            stored = zstandard.ZstdDecompressor().decompress(stored)
        return zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(stored)).decompressobj
    return zstandard.ZstdDecompressor().decompressobj


def frame_offsets(data: bytes, compression: str) -> list[int]:
    if compression == "record":
        return [start for start, _ in compressed_frames(data)]
    if compression == "lz4":
        return [start for start, _ in compressed_frames(data, lz4.frame.LZ4FrameDecompressor)]
    skip = 8 + int.from_bytes(data[4:8], "little") if data.startswith(b"\x5d\x2a\x4d\x18") else 0
    return [skip + start for start, _ in compressed_frames(data[skip:], zstd_decompressor(data))]


WARC_VARIANTS = {
    "zstd": dict(compression="zstd"),
    "zstd-trained-dictionary": dict(compression="zstd", zstd_dictionary=trained_dictionary()),
    "zstd-raw-dictionary-compressed": dict(compression="zstd", zstd_dictionary=RAW_DICTIONARY,
                                           compress_dictionary=True),
    "lz4": dict(compression="lz4"),
}


def check_captures(outcomes: list, expected_docs: list[Capture]) -> None:
    docs, skips, dead = outcomes_by_kind(outcomes)
    assert dead == []
    assert [doc.capture.url for doc in docs] == [capture.url for capture in expected_docs]
    assert [doc.payload for doc in docs] == [capture.body for capture in expected_docs]


@pytest.mark.parametrize("compression", ["none", "record"])
def test_an_arc_file_is_read_with_the_version_block_a_non_response_skip(compression):
    data = arc_bytes(CAPTURES, compression)
    outcomes = read_all(data, "collection.warc.gz")  # the name says nothing of the format
    check_captures(outcomes, [LATIN, CYRILLIC])
    docs, skips, _ = outcomes_by_kind(outcomes)
    assert [(skip.kind, skip.record_type) for skip in skips] == [
        ("non-response", "warcinfo"), ("redirect", "response"), ("non-html", "response")]
    assert [doc.capture.warc_record_id for doc in docs] == ["", ""]  # an ARC record has none (warcio would invent one)
    assert docs[0].capture.warc_date == "2026-01-15T10:01:00Z"
    if compression == "record":
        starts = frame_offsets(data, "record")
        assert [doc.capture.source_offset for doc in docs] == starts[1:3]
    else:
        assert docs[0].capture.source_offset == data.index(b"https://en.example.org/harbour 192.0.2.1")
    # Read twice, the same: nothing random.
    assert read_all(data, "collection.warc.gz") == outcomes


@pytest.mark.parametrize("compression", ["none", "record"])
def test_a_damaged_arc_record_costs_only_itself(compression):
    if compression == "none":
        data = arc_bytes(MORE[:4])
        line = data[data.index(MORE[1].url.encode()):].split(b"\n", 1)[0]
        data = data.replace(line, b"%" * len(line))
    else:
        whole = arc_bytes(MORE[:4], "record")
        start, _ = compressed_frames(whole)[2]  # the version block is the first member
        data = whole[:start + 20] + bytes(30) + whole[start + 50:]
    outcomes = read_all(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [MORE[0].url, MORE[2].url, MORE[3].url]
    [letter] = dead
    assert letter.reason.startswith("corrupt data") and "2 records recovered" in letter.reason


@pytest.mark.parametrize("variant", WARC_VARIANTS)
def test_a_compressed_warc_is_read_with_frame_offsets(variant):
    data = warc_bytes(CAPTURES, **WARC_VARIANTS[variant])
    outcomes = read_all(data, "crawl.warc.gz")  # the name says nothing of the format
    check_captures(outcomes, [LATIN, CYRILLIC])
    docs, skips, _ = outcomes_by_kind(outcomes)
    assert len(outcomes) == 1 + 3 * len(CAPTURES)
    assert [doc.capture.warc_record_id for doc in docs] == [LATIN.record_id, CYRILLIC.record_id]
    # warcinfo, then request, response, metadata per capture: the responses are frames 2 and 5.
    starts = frame_offsets(data, WARC_VARIANTS[variant]["compression"])
    assert len(starts) == len(outcomes)
    assert [doc.capture.source_offset for doc in docs] == [starts[2], starts[5]]
    assert [read_at(outcome) for outcome in outcomes] == starts


@pytest.mark.parametrize("variant", WARC_VARIANTS)
def test_a_corrupt_frame_costs_only_its_record(variant):
    data = warc_bytes(MORE[:4], **WARC_VARIANTS[variant])
    starts = frame_offsets(data, WARC_VARIANTS[variant]["compression"])
    # The response of the second capture: frames are warcinfo, then 3 per capture.
    start, end = starts[5], starts[6]
    damaged = data[:start + 6] + bytes(b ^ 0x5A for b in data[start + 6:end - 4]) + data[end - 4:]
    outcomes = read_all(damaged)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [MORE[0].url, MORE[2].url, MORE[3].url]
    assert dead and all(letter.source_offset >= start for letter in dead)
    assert any("recovered" in letter.reason for letter in dead)
    assert max(outcome.capture.source_offset for outcome in docs) == starts[-2]


@pytest.mark.parametrize("variant", WARC_VARIANTS)
def test_a_compressed_warc_cut_inside_its_last_frame_says_so(variant):
    data = warc_bytes(MORE[:2], **WARC_VARIANTS[variant])
    last = frame_offsets(data, WARC_VARIANTS[variant]["compression"])[-1]
    for cut in (data[:-10], data[:last + 3]):  # inside its data, inside its frame header
        outcomes = read_all(cut)
        docs, _, dead = outcomes_by_kind(outcomes)
        assert [doc.capture.url for doc in docs] == [MORE[0].url, MORE[1].url]
        assert dead and all("truncated" in letter.reason for letter in dead)
        assert len(outcomes) == 1 + 3 * 2


@pytest.mark.parametrize("variant", [*WARC_VARIANTS, "arc-gzip"])
def test_ranges_of_a_file_compressed_per_record_read_every_record_once(variant):
    data = (arc_bytes(MORE, "record") if variant == "arc-gzip" else warc_bytes(MORE, **WARC_VARIANTS[variant]))
    whole = read_all(data)
    for range_bytes in (300, 1000, len(data) // 3):
        pieces = []
        for start in range(0, len(data), range_bytes):
            end = start + range_bytes if start + range_bytes < len(data) else None
            pieces += read_all(data, start=start, end=end)
        assert pieces == whole, range_bytes
    assert len(outcomes_by_kind(whole)[0]) == len(MORE)


@pytest.mark.parametrize("variant", ["zstd-trained-dictionary", "lz4", "arc"])
@pytest.mark.slow
def test_a_lone_file_of_each_format_builds_whatever_its_name(tmp_path, variant):
    data = arc_bytes(CAPTURES, "record") if variant == "arc" else warc_bytes(CAPTURES, **WARC_VARIANTS[variant])
    path = input_dir(tmp_path) / "crawl.bin"
    path.write_bytes(data)
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    counts = json.loads((tmp_path / "out" / "report.json").read_text())["files"][str(path)]
    assert counts["kept"] == 2 and counts["read"] == len(read_all(data))


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_frame_that_ends_where_a_read_ends_does_not_end_the_file(compression):
    # warcio reads the file a block at a time; a frame that ends with a block
    # leaves the next block to a decompressor that is done with its frame.
    read_size = (zstd_framing(None) if compression == "zstd" else LZ4_FRAMING).read_size
    noise = b"".join(hashlib.sha256(b"%d" % n).digest() for n in range(read_size // 32 + 200))  # incompressible
    for size in range(max(read_size - 4000, 1), read_size + 4000):
        captures = [Capture("https://en.example.org/noise", noise[:size], content_type="text/plain"), *MORE[:3]]
        data = warc_bytes(captures, compression)
        if any(end % read_size == 0 for end in frame_offsets(data, compression)[1:]):
            break
    else:
        pytest.fail("no frame ends on a read boundary")
    outcomes = read_all(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert dead == [] and len(outcomes) == 1 + 3 * len(captures)
    assert [doc.capture.url for doc in docs] == [capture.url for capture in MORE[:3]]


def whole_stream(kind: str, captures: list[Capture]) -> tuple[bytes, bytes]:
    """(the file gzipped as one stream, its plain bytes) of an ARC or WARC file of `captures`."""
    write = arc_bytes if kind == "arc" else warc_bytes
    return write(captures, "file"), write(captures, "none")


@pytest.mark.parametrize("captures", [CAPTURES, MORE], ids=["mixed", "pages"])
def test_an_arc_file_gzipped_as_one_stream_reads_as_the_plain_file(captures):
    data, plain = whole_stream("arc", captures)
    assert detect_format(lambda: io.BytesIO(data)).layout == "file"
    # Every record, the same outcomes: offsets count decompressed bytes.
    assert read_all(data, "old.arc.gz") == read_all(plain, "old.arc.gz")
    assert len(read_all(data)) == 1 + len(captures)


@pytest.mark.slow
def test_an_arc_file_gzipped_as_one_stream_builds_as_one_range(monkeypatch, tmp_path):
    monkeypatch.setattr(options, "MIN_RANGE_BYTES", 64)  # ranges of a small file
    data, _ = whole_stream("arc", CAPTURES)
    path = input_dir(tmp_path) / "crawl.bin"
    path.write_bytes(data)
    # Ranges far smaller than the file: a gzip stream cannot start mid-file, so one range reads it all.
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--range-size", "64",
                             "--quiet"])
    assert code == 0, err
    counts = json.loads((tmp_path / "out" / "report.json").read_text())["files"][str(path)]
    assert counts["kept"] == 2 and counts["read"] == len(read_all(data)) and counts["dead_letter"] == 0


@pytest.mark.parametrize("kind", ["arc", "warc"])
def test_a_file_gzipped_as_one_stream_cut_anywhere_keeps_every_whole_record_before_the_cut(kind):
    data, plain = whole_stream(kind, MORE[:6])
    whole = read_all(plain)
    starts = [read_at(outcome) for outcome in whole]
    separator = len(b"\n" if kind == "arc" else b"\r\n\r\n")
    block_ends = [start - separator for start in starts[1:]] + [len(plain) - separator]
    for cut in range(20, len(data) - 8, 3):  # (the last 8 bytes are the gzip trailer)
        readable = len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:cut]))
        outcomes = list(read_warc(lambda: io.BytesIO(data[:cut]), "test", on_note=lambda note: None,
                                  skip_truncated=True))
        kept = sum(end <= readable for end in block_ends)
        # Every record whose block the cut file holds whole, then one dead letter for the cut
        # (the cut record's own, or one for the rest of the file).
        assert outcomes[:-1] == whole[:kept], (cut, readable)
        letter = outcomes[-1]
        # Without --skip-truncated, the same, but a page the cut leaves part of is kept with it.
        default = read_all(data[:cut])
        assert default[:-1] == outcomes[:-1] and (default[-1] == letter or (
            default[-1].truncated.startswith("end-of-file: ")
            and default[-1].capture.source_offset == letter.source_offset)), cut
        assert isinstance(letter, DeadLetter) and letter.reason.startswith("truncated: the file ends"), (cut, letter)
        if kept < len(starts) and starts[kept] <= readable:  # the cut is inside a record: the letter is at its start
            assert letter.source_offset == starts[kept], (cut, letter)
        else:  # inside the blank lines after one
            assert block_ends[kept - 1] <= letter.source_offset <= readable, (cut, letter)


@pytest.mark.parametrize("kind", ["arc", "warc"])
def test_gzip_members_cut_where_a_buffer_filled_not_at_records_read_as_one_stream(kind):
    # (As a writer that flushes its compressor every so many bytes makes them.)
    _, plain = whole_stream(kind, MORE[:4])
    data = b"".join(gzip.compress(plain[start:start + 300], mtime=0) for start in range(0, len(plain), 300))
    assert detect_format(lambda: io.BytesIO(data)).layout == "file"
    assert read_all(data) == read_all(plain)
