"""The HTTP payload of a response: transfer coding and Content-Encoding removed, within a bound."""

from __future__ import annotations

import gzip
import io
import random
import tracemalloc
import zlib

import brotli
import pytest

from pipeline.sample import Capture, warc_bytes
from transforms.document import DeadLetter, Document, Skip
from transforms.stages.read_warc.payload import MalformedPayload, PayloadTooLarge, read_payload
from transforms.stages.read_warc.read_warc import read_warc
from transforms.vocabulary import SKIP_KINDS
from tests.helpers import input_dir, page

MiB = 1 << 20
PAGE = page("<p>" + "Brotli is how much of the web is sent today. " * 300 + "</p>").encode("utf-8")


def outcome_of(capture: Capture, max_page_bytes: int = 32 * MiB, compression: str = "record"):
    """The outcome of the one response of a single-capture WARC."""
    data = warc_bytes([capture], compression=compression)
    outcomes = list(read_warc(lambda: io.BytesIO(data), "test.warc.gz", max_page_bytes=max_page_bytes))
    assert len(outcomes) == 4  # warcinfo, request, response, metadata
    return outcomes[2]


def encoded(url: str, body: bytes, encoding: str, **fields) -> Capture:
    """A capture whose stored body is already `body` under Content-Encoding `encoding`."""
    return Capture(url, body, http_headers=(("Content-Encoding", encoding),), **fields)


def chunked(url: str, body: bytes, **fields) -> Capture:
    """A capture whose stored body is `body` as it is, labelled chunked."""
    return Capture(url, body, http_headers=(("Transfer-Encoding", "chunked"),), **fields)


def payload_of(body: bytes, transfer_encoding: str = "", content_encoding: str = "", max_bytes: int = 32 * MiB):
    return read_payload(io.BytesIO(body), transfer_encoding, content_encoding, max_bytes)


# --- Content-Encoding ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["br", "BR"])
def test_a_brotli_page_is_decoded_and_kept(name):
    outcome = outcome_of(encoded("https://en.example.org/br", brotli.compress(PAGE), name))
    assert isinstance(outcome, Document), outcome
    assert outcome.payload == PAGE


def test_a_brotli_page_whose_output_comes_in_many_pieces_is_whole():
    # Random words hardly compress: the decoder gives its output in many
    # pieces, and holds some back until it is asked again.
    words = bytes(range(97, 123)) * 40
    body = page("".join(f"<p>{words[i % 26:i % 26 + 300].decode()} {i}</p>" for i in range(3000))).encode()
    outcome = outcome_of(encoded("https://en.example.org/br", brotli.compress(body, quality=5), "br"))
    assert isinstance(outcome, Document) and outcome.payload == body


@pytest.mark.slow
def test_a_brotli_page_reaches_the_corpus_end_to_end(tmp_path):
    from tests.test_cli import corpus_records, json_lines, run_main

    warc = input_dir(tmp_path) / "br.warc.gz"
    warc.write_bytes(warc_bytes([encoded("https://en.example.org/br", brotli.compress(PAGE), "br")]))
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(warc), "--output", str(output), "--quiet"])
    assert code == 0, stderr
    [record] = corpus_records(output)
    assert record["url"] == "https://en.example.org/br"
    assert "brotli is how much of the web is sent today." in record["text"]
    assert json_lines(output, "dead-letter") == []


@pytest.mark.parametrize("encoding,body", [
    ("gzip", gzip.compress(PAGE, mtime=0)),
    ("deflate", zlib.compress(PAGE)),
    ("deflate", zlib.compress(PAGE)[2:-4]),  # raw deflate, as some servers send it
])
def test_gzip_and_deflate_are_decoded(encoding, body):
    assert payload_of(body, content_encoding=encoding) == PAGE


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_page_labelled_encoded_but_sent_plain_is_taken_as_it_is(encoding):
    assert payload_of(PAGE, content_encoding=encoding) == PAGE


def test_a_compressed_stream_cut_short_gives_what_was_received():
    body = gzip.compress(PAGE, mtime=0)
    decoded = payload_of(body[:len(body) // 2], content_encoding="gzip")
    assert decoded and PAGE.startswith(decoded)


@pytest.mark.parametrize("encoding,compress", [("gzip", lambda data: gzip.compress(data, mtime=0)),
                                               ("br", lambda data: brotli.compress(data, quality=5))])
def test_a_compressed_stream_that_breaks_part_way_is_a_dead_letter(encoding, compress):
    # Words that hardly compress: the first part decodes before the break.
    words = random.Random(3)
    text = b"".join(b"<p>%s</p>" % bytes(words.choices(b"abcdefghij klmnop", k=80)) for _ in range(4000))
    body = bytearray(compress(text))
    body[len(body) * 3 // 4:len(body) * 3 // 4 + 16] = b"\xff" * 16
    outcome = outcome_of(encoded("https://en.example.org/bad", bytes(body), encoding))
    assert isinstance(outcome, DeadLetter), outcome
    assert f"corrupt {encoding} Content-Encoding after" in outcome.reason


# --- the bound -----------------------------------------------------------------------------------

def zeros_gzip(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * MiB
    return b"".join(compressor.compress(block) for _ in range(size // MiB)) + compressor.flush()


def zeros_brotli(size: int) -> bytes:
    compressor = brotli.Compressor(quality=5)
    block = b"\0" * MiB
    return b"".join(compressor.process(block) for _ in range(size // MiB)) + compressor.finish()


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_payload_of_exactly_the_bound_is_read_and_one_byte_more_is_too_large(gzipped):
    capture = Capture("https://en.example.org/p", PAGE, gzipped=gzipped)
    assert outcome_of(capture, max_page_bytes=len(PAGE)).payload == PAGE
    outcome = outcome_of(capture, max_page_bytes=len(PAGE) - 1)
    assert (outcome.kind, outcome.detail) == ("too-large", f"the payload{' (Content-Encoding gzip)' * gzipped} "
                                                           f"decodes to more than {len(PAGE) - 1} bytes")
    with pytest.raises(PayloadTooLarge):
        payload_of(PAGE, max_bytes=len(PAGE) - 1)


def peak_bytes(run) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("encoding,bomb", [("gzip", zeros_gzip), ("br", zeros_brotli)])
def test_a_decompression_bomb_is_too_large_and_never_held(encoding, bomb):
    capture = encoded("https://en.example.org/bomb", bomb(48 * MiB), encoding)
    outcome, peak = peak_bytes(lambda: outcome_of(capture, max_page_bytes=MiB))
    assert isinstance(outcome, Skip) and outcome.kind == "too-large", outcome
    assert outcome.kind in SKIP_KINDS
    assert f"Content-Encoding {encoding}" in outcome.detail and str(MiB) in outcome.detail
    assert peak < 6 * MiB, f"{peak} bytes held for a 1 MiB bound"


def test_a_big_plain_page_is_too_large_too():
    capture = Capture("https://en.example.org/huge", b"<html><body>" + b"<p>words words</p>" * 200_000)
    outcome = outcome_of(capture, max_page_bytes=MiB)
    assert isinstance(outcome, Skip) and outcome.kind == "too-large"


def test_a_response_skipped_by_its_content_type_is_never_read():
    video = bytes(range(256)) * (64 * 1024)  # 16 MiB
    data = warc_bytes([Capture("https://en.example.org/clip.mp4", video, content_type="video/mp4")], compression="none")
    del video
    outcomes, peak = peak_bytes(lambda: list(read_warc(lambda: io.BytesIO(data), "test.warc")))
    assert (outcomes[2].kind, outcomes[2].detail) == ("non-html", "Content-Type video/mp4")
    assert peak < 4 * MiB, f"{peak} bytes held to skip a 16 MiB video"


def test_the_records_after_a_too_large_one_are_read():
    bomb = encoded("https://en.example.org/bomb", zeros_gzip(8 * MiB), "gzip")
    after = Capture("https://en.example.org/after", PAGE, date="2026-01-15T10:30:00Z")
    data = warc_bytes([bomb, after])
    outcomes = list(read_warc(lambda: io.BytesIO(data), "test.warc.gz", max_page_bytes=MiB))
    assert [type(o).__name__ for o in outcomes] == ["Skip"] * 4 + ["Skip", "Document", "Skip"]
    assert outcomes[2].kind == "too-large" and outcomes[5].payload == PAGE


# --- chunked transfer coding ------------------------------------------------------------------------

def chunks(*pieces: bytes, end: bytes = b"0\r\n\r\n") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + end


@pytest.mark.parametrize("body", [b"4;name=value\r\n<p>a\r\n5\nb</p>\n0\r\n\r\n",  # an extension, a bare LF
                                  chunks(b"<p>a", b"b</p>", end=b"0\r\nExpires: never\r\n\r\n")])  # a trailer
def test_chunked_with_extensions_trailers_and_bare_lf_is_decoded(body):
    assert outcome_of(chunked("https://en.example.org/c", body)).payload == b"<p>ab</p>"


@pytest.mark.parametrize("transfer_encoding", ["Chunked", "gzip, chunked"])
def test_transfer_encoding_names_chunked_in_any_case(transfer_encoding):
    capture = Capture("https://en.example.org/c", chunks(b"<p>a", b"b</p>"),
                      http_headers=(("Transfer-Encoding", transfer_encoding),))
    assert outcome_of(capture).payload == b"<p>ab</p>"


def test_a_body_labelled_chunked_but_stored_decoded_is_taken_as_it_is():
    assert payload_of(PAGE, "chunked") == PAGE


@pytest.mark.parametrize("cut", ["inside-a-chunk", "before-the-last-chunk", "after-a-chunk"])
def test_a_chunked_body_the_capture_cut_gives_what_was_received(cut):
    body = {"inside-a-chunk": chunks(b"<p>first</p>", b"<p>second</p>", end=b"")[:-8],
            "before-the-last-chunk": chunks(b"<p>first</p>", end=b""),
            "after-a-chunk": chunks(b"<p>first</p>", end=b"")[:-2]}[cut]
    assert payload_of(body, "chunked").startswith(b"<p>first</p>")


@pytest.mark.parametrize("broken", [
    chunks(b"<html><body><p>first part</p>", end=b"ffffffffffffffff\r\n<p>more</p></body></html>"),
    chunks(b"<html><body><p>first part</p>", end=b"-1\r\n<html><p>more</p></body></html>"),
    b"-1\r\n<html><body><p>first part</p></body></html>",
    chunks(b"<html><body><p>first part</p>", end=b"zz\r\n<p>more</p>"),
    b"1f\r\n<html><body><p>first part</p>XX7\r\n</html>\r\n0\r\n\r\n",  # a chunk not followed by CRLF
])
def test_a_malformed_chunked_body_is_a_dead_letter_that_says_where(broken):
    capture = chunked("https://en.example.org/chunks", broken)
    outcome = outcome_of(capture)
    assert isinstance(outcome, DeadLetter), outcome
    assert outcome.reason.startswith("malformed chunked transfer coding")
    assert "of the body, after" in outcome.reason
    assert (outcome.url, outcome.warc_record_id) == (capture.url, capture.record_id)
    with pytest.raises(MalformedPayload):
        payload_of(broken, "chunked")


# --- what a skip is called -----------------------------------------------------------------------

@pytest.mark.parametrize("content_type", ["application/javascript", "text/plain", "image/gif", "text/css"])
def test_an_empty_response_that_is_not_html_is_non_html(content_type):
    outcome = outcome_of(Capture("https://en.example.org/empty", b"", content_type=content_type))
    assert isinstance(outcome, Skip)
    assert outcome.kind == "non-html"


@pytest.mark.parametrize("content_type", ["text/html", None])
def test_an_empty_html_or_untyped_response_is_empty(content_type):
    outcome = outcome_of(Capture("https://en.example.org/empty", b"", content_type=content_type))
    assert isinstance(outcome, Skip)
    assert outcome.kind == "empty"


# --- the option ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_max_page_bytes_is_an_option_of_the_build(tmp_path):
    from pipeline.options import parse_settings
    from pipeline.settings import settings_from_manifest
    from tests.test_cli import json_lines, run_main

    warc = input_dir(tmp_path) / "pages.warc.gz"
    small = Capture("https://en.example.org/small", page("<p>short</p>").encode())
    warc.write_bytes(warc_bytes([small, Capture("https://en.example.org/long", PAGE, gzipped=True)]))
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(warc), "--output", str(output), "--quiet",
                                "--max-page-bytes", str(len(PAGE) - 1)])
    assert code == 0, stderr
    skipped = [line for line in json_lines(output, "skipped") if line["kind"] == "too-large"]
    assert [line["url"] for line in skipped] == ["https://en.example.org/long"]
    settings = parse_settings(["--input", str(warc), "--max-page-bytes", "1000"])
    assert settings.build_identity()["max_page_bytes"] == 1000
    manifest = {"options": dict(settings.build_identity())}
    assert settings_from_manifest(manifest, "o", (), "m", True).max_page_bytes == 1000
    del manifest["options"]["max_page_bytes"]  # a manifest from before the option
    assert settings_from_manifest(manifest, "o", (), "m", True).max_page_bytes == 32 * MiB


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_max_page_bytes_that_is_not_positive_is_a_usage_error(value):
    from tests.test_cli import run_main

    code, _, stderr = run_main(["--max-page-bytes", value])
    assert code == 2
    assert "--max-page-bytes must be positive" in stderr
