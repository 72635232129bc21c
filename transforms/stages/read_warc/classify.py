"""What each WARC record is to a text corpus: a `Document`, a `Skip` of a kind in `vocabulary.SKIP_KINDS`, or a `DeadLetter`.

The record's headers decide first (`_classify`); what they leave open, its
payload decides (`payload_verdict`: HTML or not, sniffed as the WHATWG MIME
sniffing standard does). A `conversion` record of plain text (a WET file's
extracted text) is a document too, its page that text (`is_extracted_text`). `read_record` reads one record into its outcome.
"""

from __future__ import annotations

from typing import Callable

from warcio.archiveiterator import ArchiveIterator

from transforms.document import DeadLetter, Document, Skip, describe_error
from transforms.stages.read_warc.payload import MalformedPayload, PayloadTooLarge, read_payload
from transforms.vocabulary import (EMPTY, ERROR_STATUS, EXTRACTED_TEXT, NON_HTML, NON_HTTP, NON_RESPONSE, REDIRECT,
                                   REVISIT, TOO_LARGE, TRUNCATED, Capture)
from transforms.vocabulary import READ_WARC as STAGE

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
BINARY_BYTES_DELETED = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
SNIFF_BYTES = 512
# What the WHATWG standard recognises as the start of an HTML document, for
# responses that name no Content-Type.
HTML_STARTS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
    b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--", b"<meta",
)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def looks_binary(payload: bytes) -> bool:
    # A stray control byte does not make a page binary; a share of them does.
    head = payload[:SNIFF_BYTES]
    # (The binary bytes counted by what deleting them takes away: one pass in C, not a step per byte.)
    binary = len(head) - len(head.translate(None, BINARY_BYTES_DELETED))
    return head.startswith(BINARY_SIGNATURES) or binary * 10 > len(head)


def looks_like_html(payload: bytes) -> bool:
    head = payload[:SNIFF_BYTES].lstrip(b" \t\r\n\x0c\xef\xbb\xbf").lower()
    return any(head.startswith(start) and head[len(start):len(start) + 1] in (b" ", b">", b"") for start in HTML_STARTS)


def payload_verdict(content_type: str, payload: bytes) -> str | None:
    """None when a payload of an HTML (or unnamed) Content-Type is HTML, else why it is not."""
    declared = media_type(content_type)
    if looks_binary(payload):
        return f"binary payload labelled {declared or 'with no Content-Type'}"
    if not declared and not looks_like_html(payload):
        return "no Content-Type and the payload does not start like HTML"
    return None


def is_extracted_text(record) -> bool:
    """A `conversion` record of plain text: the text a crawler extracted from a response (Common Crawl's WET files,
    in UTF-8), read as a page of text (`EXTRACTED_TEXT`)."""
    return record.rec_type == "conversion" and media_type(
        record.rec_headers.get_header("Content-Type", "") or "") == EXTRACTED_TEXT


# A check of a response's URL and HTTP headers: a skip (kind, detail), or None (`read_record`).
Screen = Callable[[str, Callable[[str], "str | None"]], "tuple[str, str] | None"]


def _classify(record, text: bool, skip_truncated: bool, screen: Screen | None = None) -> tuple[str, str] | None:
    """The skip kind and detail that a record's headers decide, or None when its payload must tell.

    A capture the crawler cut (WARC-Truncated) is a `truncated` skip with `skip_truncated` only. `text`: the
    record is extracted text (`is_extracted_text`). `screen`: see `read_record`.
    """
    headers = record.rec_headers
    if record.rec_type == "revisit":
        return REVISIT, headers.get_header("WARC-Profile", "")
    if record.rec_type != "response" and not text:
        return NON_RESPONSE, record.rec_type
    if record.http_headers is None and not text:
        return NON_HTTP, headers.get_header("Content-Type", "")
    if screen is not None:
        # (Extracted text has no HTTP headers: only its URL is screened.)
        http_header = (lambda name: None) if text else record.http_headers.get_header
        screened = screen(headers.get_header("WARC-Target-URI", "") or "", http_header)
        if screened is not None:
            return screened
    truncated = headers.get_header("WARC-Truncated")
    if truncated and skip_truncated:
        return TRUNCATED, truncated
    if text:
        return None
    status = int(record.http_headers.get_statuscode())
    if 300 <= status < 400:
        return REDIRECT, str(status)
    if status != 200:
        return ERROR_STATUS, str(status)
    declared = media_type(record.http_headers.get_header("Content-Type", "") or "")
    if declared and declared not in HTML_TYPES:
        return NON_HTML, f"Content-Type {declared}"
    return None


def read_record(iterator: ArchiveIterator, record, source_file: str, max_page_bytes: int, skip_truncated: bool,
                file_size: int | None, screen: Screen | None = None) -> Document | Skip | DeadLetter:
    """The outcome of a record whose headers are read; `file_size`: see `reader._Progress`.

    `screen(url, http_header)` (`http_header(name)`: the value of an HTTP header, or None) may skip an HTTP
    response from its headers alone, before its payload is read: it returns a skip kind and detail, or None
    (`--url-blocklist`, `--respect-opt-out`: `transforms.stages.filters`).

    A page cut short (by the crawler: WARC-Truncated; by the end of the file
    or of its gzip member) is kept, with `truncated` saying why and how much,
    unless `skip_truncated`; a cut record that would not be a page is a dead
    letter, as is one cut before its HTTP body.
    """
    headers = record.rec_headers
    text = is_extracted_text(record)
    record_id = headers.get_header("WARC-Record-ID", "")
    url = headers.get_header("WARC-Target-URI", "")
    payload, failure = b"", None
    # The HTTP body's bytes by the record's Content-Length (its block after the HTTP headers).
    declared_body = getattr(record.raw_stream, "limit", 0)
    # Decided from the headers first: what is skipped is never read, only
    # drained (by `get_record_offset`, in pieces).
    try:
        verdict = _classify(record, text, skip_truncated, screen)
    except Exception as error:  # noqa: BLE001 - one bad record must not stop the file
        verdict, failure = None, f"unreadable record: {describe_error(error)}"
    if verdict is None and failure is None:
        # (Extracted text is a record's block as it is: no transfer or content coding.)
        http = record.http_headers
        try:
            payload = read_payload(record.raw_stream, "" if text else http.get_header("Transfer-Encoding", "") or "",
                                   "" if text else http.get_header("Content-Encoding", "") or "", max_page_bytes)
        except PayloadTooLarge as error:
            verdict = TOO_LARGE, str(error)
        except MalformedPayload as error:
            failure = str(error)
    offset = iterator.get_record_offset()

    def dead(reason: str) -> DeadLetter:
        return DeadLetter(STAGE, reason, source_file, offset, record_id, url)

    # The stream of a record cut short (a file that ends inside it) just
    # ends; warcio raises nothing, but the record's block is incomplete.
    missing = getattr(record.raw_stream, "limit", 0)
    received = declared_body - missing
    content_type = "" if verdict or failure else (
        EXTRACTED_TEXT if text else record.http_headers.get_header("Content-Type", "") or "")
    if verdict is None and failure is None and not payload:
        verdict = EMPTY, ""
    elif verdict is None and failure is None and not text and (not_html := payload_verdict(content_type, payload)):
        verdict = NON_HTML, not_html
    if missing > 0 and (verdict is not None or failure is not None or skip_truncated or received <= 0):
        return dead(f"truncated: the file ends {missing} bytes before the end of this record")
    if failure is not None:
        return dead(failure)
    if verdict is not None:
        return Skip(verdict[0], source_file, offset, record.rec_type, record_id, url, verdict[1])
    if missing > 0:
        # (A gzip member that ends inside its record, and the file goes on: the record was stored cut.)
        cut = "end-of-file" if file_size is None or iterator.offset >= file_size else "end-of-member"
        truncated = f"{cut}: {received} of {declared_body} bytes received"
    else:
        crawler_cut = (headers.get_header("WARC-Truncated") or "").strip()
        truncated = f"{crawler_cut}: {received} bytes received" if crawler_cut else ""
    # The byte range it was read in is set by the reader of ranges (`read_warc_transform`); 0 until then.
    return Document(
        capture=Capture(warc_date=headers.get_header("WARC-Date", ""), url=url, warc_record_id=record_id,
                        source_file=source_file, source_offset=offset, source_range=0),
        http_status=200,
        content_type=content_type,
        payload=payload,
        raw_bytes=len(payload),
        truncated=truncated,
    )
