"""ReadWarc: HTML responses out of WARC files.

Every record of a file comes out as exactly one of:

* a `Document`: an HTTP 200 response whose payload is HTML, with chunked
  transfer coding and content-encoding removed (warcio does both);
* a `Skip` of a kind in `SKIP_KINDS`: records a text corpus does not want;
* a `DeadLetter`: a record (or the rest of a file) that could not be read.

So `read = documents + skips + dead letters` holds for each file.

Files may be gzipped per record (as Common Crawl publishes them), gzipped as
a whole, or not compressed. warcio reads the first and the last; a whole-file
gzip makes it stop after the first record, so such a file is read again
through a streaming gzip decoder, and its offsets then count uncompressed
bytes.
"""

from __future__ import annotations

import gzip
import zlib
from typing import BinaryIO, Callable, Iterator

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from transforms.document import DeadLetter, Document, Skip, describe_error
from transforms.manifest import digest_file
from transforms.stage import DEAD_LETTER, DOCUMENTS, counter

SKIPPED = "skipped"
INPUT_FILES = "input_files"
STAGE = "read_warc"

SKIP_KINDS = {
    "non-response": "warcinfo, request, metadata and other records that hold no page",
    "revisit": "a revisit record: the payload is stored elsewhere or was not modified",
    "non-http": "a response record without HTTP headers (dns:, ftp:, ...)",
    "redirect": "an HTTP 3xx response",
    "error-status": "an HTTP status other than 200 and 3xx",
    "non-html": "a Content-Type other than HTML, or a payload that is not HTML",
    "truncated": "the crawler cut the payload (WARC-Truncated)",
    "empty": "an HTML response with no payload",
}

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

# Signatures of binary formats that crawls serve under an HTML content type.
BINARY_SIGNATURES = (
    b"\xff\xd8\xff",  # JPEG
    b"\x89PNG\r\n\x1a\n",
    b"GIF87a",
    b"GIF89a",
    b"%PDF-",
    b"PK\x03\x04",  # zip, docx, ...
    b"\x1f\x8b",  # gzip
    b"RIFF",
    b"\x00\x00\x01\x00",  # ico
    b"OggS",
    b"ID3",
    b"wOFF",
    b"wOF2",
)
# The WHATWG MIME sniffing standard's "binary data bytes".
BINARY_BYTES = frozenset(set(range(0x00, 0x09)) | {0x0B} | set(range(0x0E, 0x1B)) | set(range(0x1C, 0x20)))
SNIFF_BYTES = 512
# What the WHATWG standard recognises as the start of an HTML document, for
# responses that name no Content-Type.
HTML_STARTS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
    b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--", b"<meta",
)
UNCOMPRESSED_GZIP_HINT = "non-chunked gzip"


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def looks_binary(payload: bytes) -> bool:
    # A stray control byte does not make a page binary; a share of them does.
    head = payload[:SNIFF_BYTES]
    return head.startswith(BINARY_SIGNATURES) or sum(byte in BINARY_BYTES for byte in head) * 10 > len(head)


def looks_like_html(payload: bytes) -> bool:
    head = payload[:SNIFF_BYTES].lstrip(b" \t\r\n\x0c\xef\xbb\xbf").lower()
    return any(head.startswith(start) and head[len(start):len(start) + 1] in (b" ", b">", b"") for start in HTML_STARTS)


def html_verdict(content_type: str, payload: bytes) -> str | None:
    """None when the payload is HTML, else why it is not."""
    declared = media_type(content_type)
    if declared and declared not in HTML_TYPES:
        return f"Content-Type {declared}"
    if looks_binary(payload):
        return f"binary payload labelled {declared or 'with no Content-Type'}"
    if not declared and not looks_like_html(payload):
        return "no Content-Type and the payload does not start like HTML"
    return None


def _classify(record, payload: bytes, source_file: str, offset: int) -> Document | Skip:
    headers = record.rec_headers
    record_id = headers.get_header("WARC-Record-ID", "")
    url = headers.get_header("WARC-Target-URI", "")

    def skip(kind: str, detail: str = "") -> Skip:
        return Skip(kind, source_file, offset, record.rec_type, record_id, url, detail)

    if record.rec_type == "revisit":
        return skip("revisit", headers.get_header("WARC-Profile", ""))
    if record.rec_type != "response":
        return skip("non-response", record.rec_type)
    if record.http_headers is None:
        return skip("non-http", headers.get_header("Content-Type", ""))
    truncated = headers.get_header("WARC-Truncated")
    if truncated:
        return skip("truncated", truncated)
    status = int(record.http_headers.get_statuscode())
    if 300 <= status < 400:
        return skip("redirect", str(status))
    if status != 200:
        return skip("error-status", str(status))
    content_type = record.http_headers.get_header("Content-Type", "") or ""
    if not payload:
        return skip("empty")
    not_html = html_verdict(content_type, payload)
    if not_html:
        return skip("non-html", not_html)
    return Document(
        url=url,
        warc_record_id=record_id,
        warc_date=headers.get_header("WARC-Date", ""),
        source_file=source_file,
        source_offset=offset,
        http_status=status,
        content_type=content_type,
        payload=payload,
        raw_bytes=len(payload),
    )


def _read_record(iterator: ArchiveIterator, record, source_file: str) -> Document | Skip | DeadLetter:
    payload = record.content_stream().read() if record.rec_type == "response" else b""
    offset = iterator.get_record_offset()
    # The stream of a record cut short (a file that ends inside it) just
    # ends; warcio raises nothing, but the record's block is incomplete.
    missing = getattr(record.raw_stream, "limit", 0)
    if missing > 0:
        return DeadLetter(
            stage=STAGE,
            reason=f"truncated: the file ends {missing} bytes before the end of this record",
            source_file=source_file,
            source_offset=offset,
            warc_record_id=record.rec_headers.get_header("WARC-Record-ID", ""),
            url=record.rec_headers.get_header("WARC-Target-URI", ""),
        )
    return _classify(record, payload, source_file, offset)


def _iterate(stream: BinaryIO, source_file: str, skip_first: int) -> Iterator[Document | Skip | DeadLetter]:
    iterator = ArchiveIterator(stream)
    for index, record in enumerate(iterator):
        outcome = _read_record(iterator, record, source_file)
        if index >= skip_first:
            yield outcome


def read_warc(open_file: Callable[[], BinaryIO], source_file: str) -> Iterator[Document | Skip | DeadLetter]:
    """Reads one WARC file; `open_file` opens it (again) as a binary stream."""
    emitted = 0
    whole_file_gzip = False
    while True:
        try:
            with open_file() as raw:
                stream = gzip.GzipFile(fileobj=raw) if whole_file_gzip else raw
                for outcome in _iterate(stream, source_file, skip_first=emitted):
                    emitted += 1
                    yield outcome
            return
        except ArchiveLoadFailed as error:
            if UNCOMPRESSED_GZIP_HINT in str(error) and not whole_file_gzip:
                whole_file_gzip = True
                continue
            failure = error
        except (OSError, EOFError, ValueError, zlib.error) as error:
            failure = error
        yield DeadLetter(
            stage=STAGE,
            reason=f"unreadable after {emitted} records: {describe_error(failure)}",
            source_file=source_file,
            source_offset=-1,
            warc_record_id="",
            url="",
        )
        return


def open_uncompressed(path: str) -> BinaryIO:
    # Compression is ReadWarc's business: per-record gzip must reach warcio
    # as it is stored, so Beam must not decompress by file extension.
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


class ReadWarcFile(beam.DoFn):
    """Reads the WARC file at each path (a `FileMetadata` or a string)."""

    def setup(self):
        self._records = counter(STAGE, "records")
        self._documents = counter(STAGE, "documents")
        self._skipped = counter(STAGE, "skipped")
        self._dead = counter(STAGE, "dead_letter")

    def process(self, file):
        path = file if isinstance(file, str) else file.path
        for outcome in read_warc(lambda: open_uncompressed(path), path):
            self._records.inc()
            if isinstance(outcome, Document):
                self._documents.inc()
                yield outcome
            elif isinstance(outcome, Skip):
                self._skipped.inc()
                counter(STAGE, f"skipped:{outcome.kind}").inc()
                yield beam.pvalue.TaggedOutput(SKIPPED, outcome)
            else:
                self._dead.inc()
                yield beam.pvalue.TaggedOutput(DEAD_LETTER, outcome)
        yield beam.pvalue.TaggedOutput(INPUT_FILES, digest_file(path))


class ReadAllWarc(beam.PTransform):
    """Reads the WARC files matched by each file pattern of a PCollection.

    Outputs `documents`, `skipped`, `dead_letter` and `input_files` (the
    size and SHA-256 of each file read, for the build manifest). Files, not records, are
    spread over workers: a Reshuffle of the matched paths lets each worker
    read whole files, and no page crosses a shuffle here.
    """

    def expand(self, patterns):
        return (
            patterns
            | "Match" >> fileio.MatchAll()
            | "SpreadFiles" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadWarcFile()).with_outputs(SKIPPED, DEAD_LETTER, INPUT_FILES, main=DOCUMENTS)
        )


class ReadWarc(beam.PTransform):
    """Reads the WARC files matched by the given file patterns."""

    def __init__(self, patterns: list[str] | str):
        super().__init__()
        self._patterns = [patterns] if isinstance(patterns, str) else list(patterns)

    def expand(self, pbegin):
        return pbegin | "Patterns" >> beam.Create(self._patterns) | ReadAllWarc()
