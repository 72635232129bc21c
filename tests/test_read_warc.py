"""ReadWarc: which records become documents, skips and dead letters."""

from __future__ import annotations

import gzip
import io
import random
import zlib

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from pipeline.sample import COMPRESSIONS, WARC_VERSIONS, Capture, warc_bytes
from transforms.document import DeadLetter, Document, Skip, read_at
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.read_warc_transform import ReadWarc
from transforms.vocabulary import RECORDS_READ, SKIP_KINDS
from tests.helpers import about, compressed_frames, html_capture, outcomes_by_kind, page, read_bytes

LATIN = html_capture("https://en.example.org/a", "<p>Harbour cranes &amp; the old port.</p>",
                     date="2026-01-15T10:00:00Z")
CYRILLIC = html_capture("https://ru.example.org/b", "<p>Новый мост через Неву</p>", date="2026-01-15T10:01:00Z")
ENCODED = Capture("https://cafe.example.org/c", page("<p>Café culture, chunked and gzipped</p>").encode("utf-8"),
                  date="2026-01-15T10:02:00Z", chunked=True, gzipped=True)
REDIRECT = Capture("https://en.example.org/old", b"", status=301,
                   http_headers=(("Location", "https://en.example.org/a"),), date="2026-01-15T10:03:00Z")
PLAIN_TEXT = Capture("https://en.example.org/robots.txt", b"User-agent: *\nDisallow: /\n",
                     content_type="text/plain", date="2026-01-15T10:04:00Z")

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01" + bytes(range(256)) * 8
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"stream\n" + bytes(range(256)) * 4


def summary(outcomes):
    """What a reader must agree on whatever the file's compression: no offsets."""
    result = []
    for outcome in outcomes:
        if isinstance(outcome, Document):
            result.append(("doc", outcome.capture.url, outcome.capture.warc_record_id, outcome.capture.warc_date,
                           outcome.http_status,
                           outcome.content_type, outcome.payload, outcome.raw_bytes))
        elif isinstance(outcome, Skip):
            result.append(("skip", outcome.kind, outcome.record_type, outcome.warc_record_id, outcome.url))
        else:
            result.append(("dead", outcome.reason))
    return result


def response_outcome(capture: Capture, skip_truncated: bool = False):
    """The outcome of the one response (or revisit) record of a single-capture WARC."""
    outcomes = list(read_warc(lambda: io.BytesIO(warc_bytes([capture])), "test.warc.gz",
                              skip_truncated=skip_truncated))
    assert len(outcomes) == 4  # warcinfo, request, response, metadata
    assert [o.kind for i, o in enumerate(outcomes) if i != 2] == ["non-response"] * 3
    assert [o.detail for i, o in enumerate(outcomes) if i != 2] == ["warcinfo", "request", "metadata"]
    return outcomes[2]


# --- compression and WARC version ------------------------------------------------------------

CAPTURES = [LATIN, CYRILLIC, ENCODED, REDIRECT, PLAIN_TEXT]


@pytest.mark.parametrize("version", WARC_VERSIONS)
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_every_compression_and_version_gives_the_same_outcomes(compression, version):
    reference = summary(read_bytes(warc_bytes(CAPTURES, "record", "1.0")))
    outcomes = read_bytes(warc_bytes(CAPTURES, compression, version))
    assert summary(outcomes) == reference
    docs, skips, dead = outcomes_by_kind(outcomes)
    assert dead == []
    assert [doc.capture.url for doc in docs] == [LATIN.url, CYRILLIC.url, ENCODED.url]
    assert [doc.payload for doc in docs] == [LATIN.body, CYRILLIC.body, ENCODED.body]
    assert [doc.capture.warc_record_id for doc in docs] == [LATIN.record_id, CYRILLIC.record_id, ENCODED.record_id]
    # Offsets are distinct and increase through the file.
    offsets = [read_at(outcome) for outcome in outcomes]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)


def test_per_record_gzip_offsets_point_at_the_record():
    data = warc_bytes(CAPTURES)
    starts = [start for start, _ in compressed_frames(data)]
    outcomes = read_bytes(data)
    assert [read_at(outcome) for outcome in outcomes] == starts
    for doc in outcomes_by_kind(outcomes)[0]:
        record = next(iter(ArchiveIterator(io.BytesIO(data[doc.capture.source_offset:]))))
        assert record.rec_headers.get_header("WARC-Record-ID") == doc.capture.warc_record_id


def test_document_fields_come_from_the_record():
    [doc] = outcomes_by_kind(read_bytes(warc_bytes([LATIN])))[0]
    assert doc.capture.url == LATIN.url
    assert doc.capture.warc_date == LATIN.date
    assert doc.http_status == 200
    assert doc.content_type == LATIN.content_type
    assert doc.payload == LATIN.body
    assert doc.raw_bytes == len(LATIN.body)
    assert doc.capture.source_file == "test.warc.gz"


# --- skips by kind ---------------------------------------------------------------------------

SKIP_CASES = {
    "revisit": Capture("https://en.example.org/a", b"", record_type="revisit",
                       warc_headers=(("WARC-Profile",
                                      "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),)),
    "redirect-301": REDIRECT,
    "redirect-302": Capture("https://en.example.org/tmp", b"", status=302,
                            http_headers=(("Location", "https://en.example.org/a"),)),
    "error-404": Capture("https://en.example.org/missing", page("<p>Not found</p>").encode(), status=404),
    "error-500": Capture("https://en.example.org/boom", page("<p>Server error</p>").encode(), status=500),
    "text-plain": PLAIN_TEXT,
    "pdf": Capture("https://en.example.org/doc.pdf", PDF, content_type="application/pdf"),
    "jpeg-labelled-html": Capture("https://en.example.org/logo.jpg", JPEG, content_type="text/html"),
    "pdf-labelled-html": Capture("https://en.example.org/file", PDF, content_type="text/html; charset=utf-8"),
    "no-content-type-not-html": Capture("https://en.example.org/robots", b"User-agent: *\nDisallow: /\n",
                                        content_type=None),
    "truncated": Capture("https://en.example.org/long", page("<p>" + "word " * 500 + "</p>").encode(),
                         warc_headers=(("WARC-Truncated", "length"),)),
    "truncated-disconnect": Capture("https://en.example.org/cut", page("<p>text</p>").encode(),
                                    warc_headers=(("WARC-Truncated", "disconnect"),)),
    "empty": Capture("https://en.example.org/empty", b""),
}
SKIP_EXPECTED = {
    "revisit": "revisit", "redirect-301": "redirect", "redirect-302": "redirect", "error-404": "error-status",
    "error-500": "error-status", "text-plain": "non-html", "pdf": "non-html", "jpeg-labelled-html": "non-html",
    "pdf-labelled-html": "non-html", "no-content-type-not-html": "non-html", "truncated": "truncated",
    "truncated-disconnect": "truncated", "empty": "empty",
}


@pytest.mark.parametrize("case", sorted(SKIP_CASES))
def test_records_a_corpus_does_not_want_are_skipped_by_kind(case):
    capture = SKIP_CASES[case]
    outcome = response_outcome(capture, skip_truncated=case.startswith("truncated"))
    assert isinstance(outcome, Skip), outcome
    assert outcome.kind == SKIP_EXPECTED[case]
    assert outcome.kind in SKIP_KINDS
    assert outcome.url == capture.url
    assert outcome.warc_record_id == capture.record_id
    assert outcome.record_type == capture.record_type


@pytest.mark.parametrize("case", ["truncated", "truncated-disconnect"])
def test_captures_the_crawler_cut_are_kept_or_with_skip_truncated_skipped(case):
    # (Pages cut short are kept with what was received, `truncated` saying so: tests/test_read_truncated.py.)
    capture = SKIP_CASES[case]
    kept = response_outcome(capture)
    assert isinstance(kept, Document) and kept.truncated.endswith(f": {len(capture.body)} bytes received"), kept
    skipped = response_outcome(capture, skip_truncated=True)
    assert isinstance(skipped, Skip) and skipped.kind == SKIP_EXPECTED[case] and skipped.kind in SKIP_KINDS


def test_binary_labelled_html_names_the_reason():
    outcome = response_outcome(SKIP_CASES["jpeg-labelled-html"])
    assert "binary" in outcome.detail


@pytest.mark.parametrize("content_type", [None, "text/html", "application/xhtml+xml", "TEXT/HTML; charset=UTF-8"])
def test_html_is_kept_whatever_html_content_type_or_none(content_type):
    body = page("<p>Sniffed or declared, this is HTML.</p>").encode()
    outcome = response_outcome(Capture("https://en.example.org/page", body, content_type=content_type))
    assert isinstance(outcome, Document)
    assert outcome.payload == body


@pytest.mark.parametrize("start", [b"<html><body>x</body></html>", b"  \n<!DOCTYPE html><p>x</p>", b"<p>x</p>",
                                   b"<!-- comment --><div>x</div>", b"\xef\xbb\xbf<html>x</html>"])
def test_missing_content_type_is_sniffed_as_html(start):
    assert isinstance(response_outcome(Capture("https://en.example.org/s", start, content_type=None)), Document)


@pytest.mark.parametrize("body", [b"plain words, not markup", b"<?xml version='1.0'?><rss></rss>", b"{\"json\": 1}",
                                  b"<pre>x</pre>"])
def test_missing_content_type_not_starting_like_html_is_skipped(body):
    outcome = response_outcome(Capture("https://en.example.org/s", body, content_type=None))
    assert isinstance(outcome, Skip) and outcome.kind == "non-html"


def test_a_stray_control_byte_does_not_make_a_page_binary():
    body = page("<p>A page with one form feed \x0c and one \x01 byte.</p>").encode()
    assert isinstance(response_outcome(Capture("https://en.example.org/ctl", body)), Document)


# --- transfer and content encodings ----------------------------------------------------------

@pytest.mark.parametrize("chunked,gzipped", [(True, False), (False, True), (True, True)])
def test_chunked_and_gzip_encodings_are_decoded(chunked, gzipped):
    body = page("<p>" + "Ein langer Absatz über Häfen. " * 200 + "</p>").encode("utf-8")  # several chunks
    outcome = response_outcome(Capture("https://de.example.org/x", body, chunked=chunked, gzipped=gzipped))
    assert isinstance(outcome, Document)
    assert outcome.payload == body
    assert outcome.raw_bytes == len(body)


# --- broken files ----------------------------------------------------------------------------

_WORDS = random.Random(7)
# Random words: the page hardly compresses, so its gzip member is mostly payload.
BIG = html_capture("https://en.example.org/big", "<p>" + " ".join(
    "".join(_WORDS.choices("abcdefghijklmnopqrstuvwxyz", k=8)) for _ in range(3000)) + "</p>",
                   date="2026-01-15T10:05:00Z")


@pytest.mark.parametrize("skip_truncated", [False, True])
def test_a_record_cut_short_is_kept_cut_or_with_skip_truncated_a_dead_letter_and_the_others_are_kept(skip_truncated):
    cut = Capture("https://en.example.org/cut", page("<p>" + "hello world " * 300 + "</p>").encode(),
                  cut_block_to=600, date="2026-01-15T10:06:00Z")
    outcomes = list(read_warc(lambda: io.BytesIO(warc_bytes([LATIN, cut, CYRILLIC])), "test.warc.gz",
                              skip_truncated=skip_truncated))
    assert len(outcomes) == 1 + 3 * 3
    docs, _, dead = outcomes_by_kind(outcomes)
    if not skip_truncated:
        assert [doc.capture.url for doc in docs] == [LATIN.url, cut.url, CYRILLIC.url] and not dead
        assert docs[1].truncated.startswith("end-of-member: ") and outcomes[5] is docs[1]
        return
    assert [doc.capture.url for doc in docs] == [LATIN.url, CYRILLIC.url]
    [letter] = dead
    assert "truncated" in letter.reason
    assert letter.stage == "read_warc"
    assert (letter.url, letter.warc_record_id) == (cut.url, cut.record_id)
    assert outcomes[5] is letter  # in place of the response


def _cut_points(data: bytes, start: int, end: int) -> dict[str, int]:
    """Where to cut the gzip member data[start:end] (a response record) to end the file inside it."""
    header_end = zlib.decompress(data[start:end], 31).index(b"\r\n\r\n")  # end of the WARC headers
    inside_headers = next(cut for cut in range(start + 11, end)
                          if 0 < len(zlib.decompressobj(31).decompress(data[start:cut])) < header_end)
    return {"gzip-header": start + 5, "warc-headers": inside_headers, "payload": (start + end) // 2}


@pytest.mark.parametrize("where", ["gzip-header", "warc-headers", "payload"])
def test_a_file_cut_inside_its_last_gzip_member_keeps_the_records_before(where):
    data = warc_bytes([LATIN, CYRILLIC, BIG])
    members = compressed_frames(data)
    start, end = members[-2]  # BIG's response; its metadata member is lost with the cut
    outcomes = list(read_warc(lambda: io.BytesIO(data[:_cut_points(data, start, end)[where]]), "test.warc.gz",
                              skip_truncated=True))
    assert len(outcomes) == len(members) - 1  # every record that starts in the file
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [LATIN.url, CYRILLIC.url]
    assert len(dead) == 1 and outcomes[-1] is dead[0]
    assert "truncated" in dead[0].reason
    assert dead[0].source_offset == start


def test_a_record_cut_inside_its_payload_is_kept_cut_or_with_skip_truncated_a_dead_letter_that_names_it():
    data = warc_bytes([LATIN, CYRILLIC, BIG])
    start, end = compressed_frames(data)[-2]
    cut = data[:(start + end) // 2]
    kept = read_bytes(cut)[-1]
    assert isinstance(kept, Document) and kept.truncated.startswith("end-of-file: "), kept
    assert (kept.capture.url, kept.capture.warc_record_id) == (BIG.url, BIG.record_id) and kept.payload
    letter = list(read_warc(lambda: io.BytesIO(cut), "test.warc.gz", skip_truncated=True))[-1]
    assert isinstance(letter, DeadLetter)
    assert (letter.url, letter.warc_record_id) == (BIG.url, BIG.record_id)


def test_an_uncompressed_file_cut_inside_its_last_record_keeps_the_records_before_and_what_it_holds_of_it():
    data = warc_bytes([LATIN, CYRILLIC, BIG], compression="none")
    cut = data[:len(data) - len(data) // 10]  # inside BIG's response
    outcomes = read_bytes(cut)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [LATIN.url, CYRILLIC.url, BIG.url] and not dead
    assert outcomes[-1] is docs[-1] and docs[-1].truncated.startswith("end-of-file: ")


@pytest.mark.parametrize("size", ["small", "big"])
def test_a_whole_file_gzip_cut_short_keeps_the_records_before(size):
    if size == "big":
        data = warc_bytes([LATIN, CYRILLIC, BIG], compression="file")
        cut = data[:len(data) * 2 // 3]  # BIG's random words fill most of the member
    else:
        data = warc_bytes([LATIN, CYRILLIC, Capture(CYRILLIC.url + "/2", CYRILLIC.body)], compression="file")
        cut = data[:-30]  # inside the last capture's metadata record
    outcomes = list(read_warc(lambda: io.BytesIO(cut), "test.warc.gz", skip_truncated=True))
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs][:2] == [LATIN.url, CYRILLIC.url]
    assert len(dead) == 1 and outcomes[-1] is dead[0]
    assert "truncated" in dead[0].reason
    if size == "big":  # (the cut is inside BIG's page: without --skip-truncated, what the file holds of it is kept)
        kept = read_bytes(cut)
        assert kept[:-1] == outcomes[:-1] and kept[-1].capture.url == BIG.url
        assert kept[-1].truncated.startswith("end-of-file")


THIRD = html_capture("https://en.example.org/third", "<p>A third page.</p>", date="2026-01-15T10:09:00Z")


def test_a_corrupt_gzip_member_costs_only_its_record():
    data = warc_bytes([LATIN, CYRILLIC, THIRD])
    members = compressed_frames(data)
    start, end = members[5]  # CYRILLIC's response
    damaged = bytearray(data)
    for index in range(start + 20, start + 40):
        damaged[index] ^= 0xFF
    outcomes = read_bytes(bytes(damaged))
    assert len(outcomes) == len(members)  # the damaged record is replaced by one dead letter
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [LATIN.url, THIRD.url]
    [letter] = dead
    assert "corrupt" in letter.reason
    assert letter.source_offset == start
    assert letter.skipped_bytes == end - start


def test_garbage_between_records_is_skipped_and_reported():
    data = warc_bytes([LATIN, CYRILLIC, THIRD], compression="none")
    where = data.index(b"WARC/1.0\r\nWARC-Type: request", len(data) // 3)
    garbage = b"GARBAGE that is not a record\r\n\r\n" * 3
    outcomes = read_bytes(data[:where] + garbage + data[where:])
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [LATIN.url, CYRILLIC.url, THIRD.url]
    assert len(outcomes) == len(read_bytes(data)) + 1
    [letter] = dead
    assert letter.skipped_bytes == len(garbage)
    assert letter.source_offset == where


NOT_WARC = {
    "html": b"<!DOCTYPE html><html><body><p>Just a web page.</p></body></html>\n",
    "json": b'{"records": [1, 2, 3]}\n',
    "random": bytes(random.Random(1).randrange(256) for _ in range(3000)),
    "gzip-text": gzip.compress(b"some text\nmore text\n" * 20, mtime=0),
    "pdf": PDF,
    "text-sentence": b"The quick brown fox jumps over the lazy dog.\nIt is not a WARC file at all.\n" * 5,
}


@pytest.mark.parametrize("kind", sorted(NOT_WARC))
def test_a_file_that_is_not_a_warc_is_a_dead_letter(kind):
    outcomes = read_bytes(NOT_WARC[kind], source_file=f"not-a-warc.{kind}")
    docs, skips, dead = outcomes_by_kind(outcomes)
    assert docs == [] and skips == [], outcomes
    assert len(dead) == 1
    assert dead[0].source_file == f"not-a-warc.{kind}"
    assert dead[0].stage == "read_warc"


def test_a_valid_file_followed_by_garbage_keeps_its_records():
    data = warc_bytes([LATIN]) + b"this is garbage after the last record\r\n\r\n"
    outcomes = read_bytes(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [LATIN.url]
    assert len(dead) == 1 and outcomes[-1] is dead[0]


def test_an_empty_file_has_no_records():
    assert read_bytes(b"") == []


# --- accounting ------------------------------------------------------------------------------

KINDS = {
    "html": lambda i: html_capture(f"https://en.example.org/p{i}", f"<p>page {i}</p>"),
    "encoded": lambda i: Capture(f"https://en.example.org/e{i}", page(f"<p>enc {i}</p>").encode(),
                                 chunked=True, gzipped=True),
    "redirect": lambda i: Capture(f"https://en.example.org/r{i}", b"", status=301),
    "error": lambda i: Capture(f"https://en.example.org/x{i}", page("<p>gone</p>").encode(), status=404),
    "text": lambda i: Capture(f"https://en.example.org/t{i}.txt", b"text", content_type="text/plain"),
    "jpeg": lambda i: Capture(f"https://en.example.org/j{i}", JPEG, content_type="text/html"),
    "revisit": lambda i: Capture(f"https://en.example.org/v{i}", b"", record_type="revisit"),
    "truncated": lambda i: Capture(f"https://en.example.org/w{i}", page("<p>w</p>").encode(),
                                   warc_headers=(("WARC-Truncated", "length"),)),
    "empty": lambda i: Capture(f"https://en.example.org/z{i}", b""),
    "cut": lambda i: Capture(f"https://en.example.org/c{i}", page("<p>" + "cut " * 200 + "</p>").encode(),
                             cut_block_to=300),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(st.sampled_from(sorted(KINDS)), max_size=8), version=st.sampled_from(WARC_VERSIONS),
       compression=st.sampled_from(COMPRESSIONS))
def test_every_record_yields_exactly_one_outcome(kinds, version, compression):
    if compression != "record":
        # A record cut short inside an uncompressed or whole-file gzip swallows the records after it.
        kinds = [kind for kind in kinds if kind != "cut"]
    captures = [KINDS[kind](i) for i, kind in enumerate(kinds)]
    outcomes = read_bytes(warc_bytes(captures, compression, version))
    assert len(outcomes) == 1 + 3 * len(captures)
    docs, skips, dead = outcomes_by_kind(outcomes)
    # Pages cut short (by the crawler, or stored cut) are kept, `truncated` saying so.
    assert len(docs) == sum(kind in ("html", "encoded", "truncated", "cut") for kind in kinds)
    assert sum(bool(doc.truncated) for doc in docs) == kinds.count("truncated") + kinds.count("cut")
    assert not dead
    # Each response and revisit comes out once, under its own record id.
    ids = [about(o).warc_record_id for o in outcomes if not (isinstance(o, Skip) and o.kind == "non-response")]
    assert sorted(ids) == sorted(capture.record_id for capture in captures)


# --- ReadWarc in a pipeline ------------------------------------------------------------------

@pytest.mark.slow
def test_read_warc_counts_every_record_it_reads_once_per_range(write_warc, tmp_path):
    write_warc([LATIN, REDIRECT, CYRILLIC, PLAIN_TEXT] * 3, name="one.warc.gz")
    write_warc([ENCODED, LATIN], name="two.warc", compression="none")
    (tmp_path / "in" / "bogus.warc.gz").write_bytes(NOT_WARC["json"])
    with TestPipeline() as pipeline:
        # Ranges of 2,000 bytes: each file's records are counted over several ranges.
        read = pipeline | ReadWarc([str(tmp_path / "in" / "*")], range_bytes=2000)
        outcomes = ((read.documents, read.skipped, read.dead_letter) | beam.Flatten()
                    | "OutcomeFile" >> beam.Map(lambda outcome: about(outcome).source_file)
                    | beam.combiners.Count.PerElement())
        counted = (read[RECORDS_READ] | "ReadFile" >> beam.Map(lambda counted: (counted.source_file, counted.records))
                   | beam.CombinePerKey(sum))
        not_listed = (read[RECORDS_READ]
                      | "NotListed" >> beam.Map(lambda counted: (counted.source_file, counted.non_response))
                      | "SumNotListed" >> beam.CombinePerKey(sum))
        ranges = read[RECORDS_READ] | "Ranges" >> beam.combiners.Count.Globally()
        one, two, bogus = (str(tmp_path / "in" / name) for name in ("one.warc.gz", "two.warc", "bogus.warc.gz"))
        # Three records per capture (request, response, metadata) and the warcinfo record; the requests, metadata
        # and warcinfo are counted on their range (non_response), not listed one by one.
        assert_that(counted, equal_to([(one, 12 * 3 + 1), (two, 2 * 3 + 1), (bogus, 1)]), label="counted")
        assert_that(not_listed, equal_to([(one, 12 * 2 + 1), (two, 2 * 2 + 1), (bogus, 0)]), label="not listed")
        assert_that(outcomes, equal_to([(one, 12), (two, 2), (bogus, 1)]), label="outcomes")
        assert_that(ranges, lambda counts: None if counts[0] > 3 else pytest.fail(f"{counts} ranges"), label="ranges")


@pytest.mark.slow
def test_read_warc_transform_reads_every_matched_file(write_warc, tmp_path):
    write_warc([LATIN, REDIRECT], name="one.warc.gz")
    write_warc([CYRILLIC, PLAIN_TEXT], name="two.warc", compression="none")
    write_warc([ENCODED], name="three.warc.gz", compression="file", version="1.1")
    (tmp_path / "in" / "bogus.warc.gz").write_bytes(NOT_WARC["json"])
    with TestPipeline() as pipeline:
        read = pipeline | ReadWarc([str(tmp_path / "in" / "*.warc.gz"), str(tmp_path / "in" / "two.warc")])
        assert_that(read.documents | "Docs" >> beam.Map(
            lambda d: (d.capture.source_file.rsplit("/", 1)[-1], d.capture.url, d.payload)),
                    equal_to([("one.warc.gz", LATIN.url, LATIN.body), ("two.warc", CYRILLIC.url, CYRILLIC.body),
                              ("three.warc.gz", ENCODED.url, ENCODED.body)]), label="documents")
        assert_that(read.skipped | "Skips" >> beam.Map(lambda s: s.kind), equal_to(["redirect", "non-html"]),
                    label="skipped")
        # The requests, metadata and warcinfo records: counted on their ranges, not listed.
        assert_that(read[RECORDS_READ] | "NotListed" >> beam.Map(lambda counted: counted.non_response)
                    | beam.CombineGlobally(sum), equal_to([13]), label="not listed")
        assert_that(read.dead_letter | "Dead" >> beam.Map(lambda d: d.source_file.rsplit("/", 1)[-1]),
                    equal_to(["bogus.warc.gz"]), label="dead")
