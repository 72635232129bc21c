"""ReadWarc: HTML responses out of WARC files.

Every record of a file comes out as exactly one of:

* a `Document`: an HTTP 200 response whose payload is HTML, with chunked
  transfer coding and content-encoding removed (`transforms.payload`, which
  reads at most `max_page_bytes` of it); one cut short (WARC-Truncated, or
  the end of the file) is one too, with what was received and its
  `truncated` saying how, unless `skip_truncated`;
* a `Skip` of a kind in `SKIP_KINDS`: records a text corpus does not want;
* a `DeadLetter`: a record (or the rest of a file) that could not be read.

So `read = documents + skips + dead letters` holds for each file.

Files are WARC or ARC (version 1, the Internet Archive's format before
WARC), told apart by their first bytes, never their names (`detect_format`).
They may be gzipped per record (as Common Crawl publishes them), gzipped as
a whole, not compressed, or (WARC) compressed per record with zstd (the
IIPC's draft: an optional dictionary in a skippable frame at the start) or
LZ4 (as FastWARC writes). warcio reads gzip members and, through
`_FramedReader`, zstd and LZ4 frames: a record's offset is its frame's, and a
file compressed per record splits into byte ranges at frame boundaries (a
range reads the records that start in it; a runner may split a range again,
at any offset, while it is read). A whole-file gzip stream, WARC or ARC (told
apart by its first member holding more than one record, or not the whole of
one: `detect_format`), is read through a streaming gzip decoder, and its
offsets then count uncompressed bytes; it is read whole, by one range. ARC
records come as the WARC records warcio makes of them (`arc2warc`), without
the random record id it gives them.

What warcio warns about on stderr (a record not followed by a blank line, a
payload that stops decompressing) costs no record; it becomes a `ReadNote`
(file, offset, text) for the report, and nothing is printed.
"""

from __future__ import annotations

import io
import logging
import re
import struct
import sys
import threading
import zlib
from dataclasses import dataclass, replace
from typing import BinaryIO, Callable, Iterator

import apache_beam as beam
import lz4.frame
import zstandard
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker, UnsplittableRestrictionTracker
from apache_beam.transforms.window import GlobalWindows
from warcio import archiveiterator, bufferedreaders, digestverifyingreader, recordloader
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.utils import BUFF_SIZE

from transforms.document import DeadLetter, Document, Skip, describe_error
from transforms.http_filesystem import RemoteReadError, serves_ranges
from transforms.locations import redacted
from transforms.payload import DEFAULT_MAX_PAGE_BYTES, MalformedPayload, PayloadTooLarge, read_payload
from transforms.progress import ProgressNotes
from transforms.snapshot import FileChanged, digest_listed, open_listed
from transforms.warc_headers import BoundedLines, BoundedReader, RecordLoader
from transforms.stage import counter
from transforms.vocabulary import READ_WARC as STAGE
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, INPUT_FILES, NOTES, RECORDS_READ, SKIPPED, ReadNote, RecordsRead

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
GZIP_MAGIC = b"\x1f\x8b\x08"
ZSTD_MAGIC = struct.pack("<I", 0xFD2FB528)
# The IIPC's WARC zstd draft: a skippable frame at the start of the file holds the dictionary.
ZSTD_DICTIONARY_MAGIC = struct.pack("<I", 0x184D2A5D)
LZ4_MAGIC = struct.pack("<I", 0x184D2204)
# A zstd dictionary bigger than this is damage (zstd's own trainer makes them of 100 KiB or so).
ZSTD_DICTIONARY_LIMIT = 16 << 20
# A zstd block of 4 bytes can stand for 128 KiB: 2 KiB decompressed at a time inflate to 64 MiB at most.
ZSTD_READ_SIZE = 2048
ARC_START = b"filedesc://"
# An ARC version 1 record's first line: URL IP-address Archive-date Content-type Archive-length.
ARC_HEADER = re.compile(rb"[a-zA-Z][a-zA-Z0-9+.-]*:\S* \S+ \d{14} \S+ \d+\r?\n")
RESYNC_CHUNK = 1 << 20
# Common Crawl's files are about 1 GB: 16 ranges each.
DEFAULT_RANGE_BYTES = 64 << 20
# Ranges of one file at most (a bigger file gets bigger ranges): whatever size a file claims, its ranges are
# listed in bounded memory (64 MiB ranges up to 256 GiB).
MAX_RANGES_PER_FILE = 4096
# Bytes of a candidate gzip member to decompress when looking for `WARC/`.
RESYNC_PROBE = 4096
# Blank lines between two records beyond this many bytes are a dead letter (they are skipped all the same).
BLANK_RUN_LIMIT = 1 << 16
# The longest line read after a record where a blank line should be: longer lines are damage anyway.
TRAILING_LINE_LIMIT = 1 << 16
# Notes listed for one range of a file; the rest are counted in one more note.
NOTES_PER_RANGE = 100


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def looks_binary(payload: bytes) -> bool:
    # A stray control byte does not make a page binary; a share of them does.
    head = payload[:SNIFF_BYTES]
    return head.startswith(BINARY_SIGNATURES) or sum(byte in BINARY_BYTES for byte in head) * 10 > len(head)


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


def _classify(record, skip_truncated: bool) -> tuple[str, str] | None:
    """The skip kind and detail that a record's headers decide, or None when its payload must tell.

    A capture the crawler cut (WARC-Truncated) is a `truncated` skip with `skip_truncated` only.
    """
    headers = record.rec_headers
    if record.rec_type == "revisit":
        return "revisit", headers.get_header("WARC-Profile", "")
    if record.rec_type != "response":
        return "non-response", record.rec_type
    if record.http_headers is None:
        return "non-http", headers.get_header("Content-Type", "")
    truncated = headers.get_header("WARC-Truncated")
    if truncated and skip_truncated:
        return "truncated", truncated
    status = int(record.http_headers.get_statuscode())
    if 300 <= status < 400:
        return "redirect", str(status)
    if status != 200:
        return "error-status", str(status)
    declared = media_type(record.http_headers.get_header("Content-Type", "") or "")
    if declared and declared not in HTML_TYPES:
        return "non-html", f"Content-Type {declared}"
    return None


def _read_record(iterator: ArchiveIterator, record, source_file: str, max_page_bytes: int, skip_truncated: bool,
                 file_size: int | None) -> Document | Skip | DeadLetter:
    """The outcome of a record whose headers are read; `file_size`: see `_Progress`.

    A page cut short (by the crawler: WARC-Truncated; by the end of the file
    or of its gzip member) is kept, with `truncated` saying why and how much,
    unless `skip_truncated`; a cut record that would not be a page is a dead
    letter, as is one cut before its HTTP body.
    """
    headers = record.rec_headers
    record_id = headers.get_header("WARC-Record-ID", "")
    url = headers.get_header("WARC-Target-URI", "")
    payload, failure = b"", None
    # The HTTP body's bytes by the record's Content-Length (its block after the HTTP headers).
    declared_body = getattr(record.raw_stream, "limit", 0)
    # Decided from the headers first: what is skipped is never read, only
    # drained (by `get_record_offset`, in pieces).
    try:
        verdict = _classify(record, skip_truncated)
    except Exception as error:  # noqa: BLE001 - one bad record must not stop the file
        verdict, failure = None, f"unreadable record: {describe_error(error)}"
    if verdict is None and failure is None:
        http = record.http_headers
        try:
            payload = read_payload(record.raw_stream, http.get_header("Transfer-Encoding", "") or "",
                                   http.get_header("Content-Encoding", "") or "", max_page_bytes)
        except PayloadTooLarge as error:
            verdict = "too-large", str(error)
        except MalformedPayload as error:
            failure = str(error)
    offset = iterator.get_record_offset()

    def dead(reason: str) -> DeadLetter:
        return DeadLetter(STAGE, reason, source_file, offset, record_id, url)

    # The stream of a record cut short (a file that ends inside it) just
    # ends; warcio raises nothing, but the record's block is incomplete.
    missing = getattr(record.raw_stream, "limit", 0)
    received = declared_body - missing
    content_type = "" if verdict or failure else record.http_headers.get_header("Content-Type", "") or ""
    if verdict is None and failure is None and not payload:
        verdict = "empty", ""
    elif verdict is None and failure is None and (not_html := payload_verdict(content_type, payload)):
        verdict = "non-html", not_html
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
    return Document(
        url=url,
        warc_record_id=record_id,
        warc_date=headers.get_header("WARC-Date", ""),
        source_file=source_file,
        source_offset=offset,
        http_status=200,
        content_type=content_type,
        payload=payload,
        raw_bytes=len(payload),
        truncated=truncated,
    )


class _WarningSink:
    """Collects what is written to it, one warning per write, until it hands them on as notes."""

    def __init__(self):
        self.warnings: list[str] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.warnings.append(" ".join(text.split()))
        return len(text)

    def flush(self) -> None:
        pass

    def hand_on(self, note: Callable[[ReadNote], None], source_file: str, offset: int) -> None:
        for text in self.warnings:
            note(ReadNote(source_file, offset, text))
        self.warnings.clear()


class _ThreadStderr(logging.Filter):
    """What warcio's modules see as `sys`; they write their warnings to `sys.stderr` (and log some).

    While a thread reads a record (between two `redirect`s), what warcio
    writes or logs goes to that thread's sink, so warnings are told apart by
    file and record and never printed; on other threads, and outside, stderr
    is stderr.
    """

    def __init__(self):
        super().__init__()
        self._local = threading.local()

    def __getattr__(self, name):
        return getattr(sys, name)

    @property
    def stderr(self):
        return getattr(self._local, "sink", None) or sys.stderr

    def filter(self, record: logging.LogRecord) -> bool:
        sink = getattr(self._local, "sink", None)
        if sink is None:
            return True
        sink.write(record.getMessage())
        return False

    def redirect(self, sink: _WarningSink | None) -> _WarningSink | None:
        """Sends this thread's warnings to `sink` (None: to stderr); returns where they went before."""
        previous = getattr(self._local, "sink", None)
        self._local.sink = sink
        return previous


_WARCIO_SYS = _ThreadStderr()
for _module in (archiveiterator, bufferedreaders, digestverifyingreader):
    _module.sys = _WARCIO_SYS
recordloader.logger.addFilter(_WARCIO_SYS)


def _skip_blank_bytes(reader) -> int:
    """Skips CR and LF bytes at the reader's position a buffer at a time (warcio reads them a line at a time)."""
    skipped = 0
    while True:
        reader._fillbuff()
        if reader.empty():
            return skipped
        buffered = reader.buff
        start = buffered.tell()
        rest = buffered.read()
        # (translate finds a buffer of nothing but line ends faster than lstrip)
        kept = len(rest.lstrip(b"\r\n")) if rest.translate(None, b"\r\n") else 0
        skipped += len(rest) - kept
        if kept:
            buffered.seek(start + len(rest) - kept)
            return skipped


def _gunzip_head(data: bytes, size: int) -> bytes:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, size)
    except zlib.error:
        return b""


def _gzip_cut_short(raw: BinaryIO) -> bool:
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    while chunk := raw.read(RESYNC_CHUNK):
        try:
            decompressor.decompress(chunk, 1)
            while decompressor.unconsumed_tail and not decompressor.eof:
                decompressor.decompress(decompressor.unconsumed_tail, RESYNC_CHUNK)
        except zlib.error:
            return False
        if decompressor.eof:
            return False
    return True


class _Framing:
    """A compression of one frame per record (gzip members, zstd or LZ4 frames): what warcio's reader needs.

    `new_decompressor` makes a decompressor of one frame that leaves the
    bytes after it in `unused_data`, as zlib's does (None: warcio's own
    gzip); `head` is the first bytes of the frame that `data` starts with (b"":
    not one); `cut_short` tells whether the file ends inside the frame that
    starts where `raw` is.
    """

    def __init__(self, name: str, magic: bytes, head: Callable[[bytes, int], bytes],
                 cut_short: Callable[[BinaryIO], bool], new_decompressor: Callable[[], object] | None = None,
                 read_size: int = 16384):
        self.name = name
        self.magic = magic
        self.head = head
        self.cut_short = cut_short
        self.new_decompressor = new_decompressor
        # Raw bytes decompressed at a time: what one call may inflate to is bounded by this and the codec's ratio.
        self.read_size = read_size


GZIP_FRAMING = _Framing("gzip", GZIP_MAGIC, _gunzip_head, _gzip_cut_short)


def _zstd_framing(dictionary: zstandard.ZstdCompressionDict | None) -> _Framing:
    decompressor = zstandard.ZstdDecompressor(dict_data=dictionary)

    def head(data: bytes, size: int) -> bytes:
        try:
            with decompressor.stream_reader(io.BytesIO(data), read_across_frames=False) as reader:
                return reader.read(size)
        except zstandard.ZstdError:
            return b""

    def cut_short(raw: BinaryIO) -> bool:
        # (A stream_reader ends a cut frame as if it were whole: a decompressobj tells.)
        frame = decompressor.decompressobj()
        try:
            while chunk := raw.read(ZSTD_READ_SIZE):
                frame.decompress(chunk)
                if frame.eof:
                    return False
        except zstandard.ZstdError:
            return False
        return True

    return _Framing("zstd", ZSTD_MAGIC, head, cut_short, decompressor.decompressobj, read_size=ZSTD_READ_SIZE)


def _lz4_head(data: bytes, size: int) -> bytes:
    try:
        return lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=size)
    except RuntimeError:
        return b""


def _lz4_cut_short(raw: BinaryIO) -> bool:
    decompressor = lz4.frame.LZ4FrameDecompressor()
    try:
        while chunk := raw.read(RESYNC_CHUNK):
            decompressor.decompress(chunk, max_length=RESYNC_CHUNK)
            while not decompressor.eof and not decompressor.needs_input:
                decompressor.decompress(b"", max_length=RESYNC_CHUNK)
            if decompressor.eof:
                return False
    except RuntimeError:
        return False
    return True


LZ4_FRAMING = _Framing("lz4", LZ4_MAGIC, _lz4_head, _lz4_cut_short, lz4.frame.LZ4FrameDecompressor)


@dataclass(frozen=True)
class _Format:
    """How a file is stored, as its first bytes tell: its records (WARC or ARC) and their compression.

    `layout` is `none` (not compressed), `file` (one gzip stream) or `record`
    (a gzip member, zstd or LZ4 frame per record, told by `framing`);
    `records_start` is where the first record starts (after a zstd dictionary);
    `damage`, what is wrong with what precedes it ("": nothing).
    """

    name: str
    layout: str = "none"
    framing: _Framing | None = None
    arc: bool = False
    records_start: int = 0
    damage: str = ""

    def starts_record(self, data: bytes) -> bool:
        """Whether uncompressed `data` starts like a record of this format."""
        return bool(ARC_HEADER.match(data)) if self.arc else data.startswith(b"WARC/")

    def frame_starts_record(self, data: bytes) -> bool:
        return self.starts_record(self.framing.head(data, 512 if self.arc else 16))


WARC = _Format("WARC")


def _zstd_dictionary(raw: BinaryIO, head: bytes) -> tuple[zstandard.ZstdCompressionDict | None, int, str]:
    """The dictionary of the skippable frame at the start of a zstd WARC (if any), where records start, and what is
    wrong with the frame ("": nothing)."""
    if not head.startswith(ZSTD_DICTIONARY_MAGIC) or len(head) < 8:
        return None, 0, ""
    size = struct.unpack("<I", head[4:8])[0]
    raw.seek(0, 2)
    file_size = raw.tell()
    if size > ZSTD_DICTIONARY_LIMIT or 8 + size > file_size:
        # Where records start is unknown: they are looked for after the frame's header, read without a dictionary.
        beyond = ("more than 16 MiB" if size > ZSTD_DICTIONARY_LIMIT
                  else f"past the end of the file ({file_size:,} bytes)")
        return None, 8, f"the zstd dictionary frame at the start of the file declares {size:,} bytes, {beyond}"
    raw.seek(8)
    content = raw.read(size)
    if content.startswith(ZSTD_MAGIC):
        # The draft allows the dictionary itself to be zstd-compressed.
        try:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(content)) as reader:
                content = reader.read(ZSTD_DICTIONARY_LIMIT)
        except zstandard.ZstdError:
            return None, 8 + size, ""  # the frames that need it are dead letters
    return zstandard.ZstdCompressionDict(content), 8 + size, ""


def _starts_arc(data: bytes) -> bool:
    # Its version block, or (in a file that lost it) a record.
    return data.startswith(ARC_START) or bool(ARC_HEADER.match(data))


_CONTENT_LENGTH = re.compile(rb"\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)


def _ends_inside_its_record(data: bytes, arc: bool) -> bool:
    """Whether the decompressed `data` of a gzip member ends before the end that its first record declares."""
    if arc:
        header = ARC_HEADER.match(data)
        if header is None:
            return False
        return len(data) < header.end() + int(header.group().split()[-1])
    if not data.startswith(b"WARC/"):
        return False
    block_start = data.find(b"\r\n\r\n") + 4
    if block_start < 4:
        return True  # inside the record's headers
    length = _CONTENT_LENGTH.search(data, 0, block_start)
    return length is not None and len(data) < block_start + int(length.group(1))


def detect_format(open_file: Callable[[], BinaryIO]) -> _Format:
    """The format of a file from its first bytes (never its name); WARC where none is recognised.

    A gzip file is gzipped per record (its first member holds the warcinfo
    or ARC version record alone) or as a whole (a first member holding a
    second record, more than a record can, or the end of the file), WARC or
    ARC alike; a file whose first member ends inside its record and whose
    second member goes on with that record (members cut where the writer's
    buffer was full, not at records) is read as one stream too.
    """
    with open_file() as raw:
        head = raw.read(RESYNC_CHUNK)
        if head.startswith(ZSTD_DICTIONARY_MAGIC):
            dictionary, records_start, damage = _zstd_dictionary(raw, head)
            return _Format("WARC.zst", "record", _zstd_framing(dictionary), records_start=records_start, damage=damage)
    if head.startswith(ZSTD_MAGIC):
        return _Format("WARC.zst", "record", _zstd_framing(None))
    if head.startswith(LZ4_MAGIC):
        return _Format("WARC.lz4", "record", LZ4_FRAMING)
    if _starts_arc(head):
        return _Format("ARC", arc=True)
    if not head.startswith(GZIP_MAGIC):
        return WARC
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        first = decompressor.decompress(head, RESYNC_CHUNK)
    except zlib.error:
        return _Format("WARC.gz", "record", GZIP_FRAMING)  # damaged from the start: reading reports it
    arc = _starts_arc(first)
    name = "ARC.gz" if arc else "WARC.gz"
    # (A first member that does not end in the head holds more than a record can, or the file ends inside it.)
    if _RECORD_MARKERS[arc].search(first) or not decompressor.eof:
        return _Format(name, "file", GZIP_FRAMING, arc=arc)
    second = _gunzip_head(decompressor.unused_data, RESYNC_PROBE)
    if _ends_inside_its_record(first, arc) and not (_starts_arc(second) if arc else second.startswith(b"WARC/")):
        return _Format(name, "file", GZIP_FRAMING, arc=arc)
    return _Format(name, "record", GZIP_FRAMING, arc=arc)


class _FrameDecompressor:
    """A zstd or LZ4 frame's decompressor with zlib's manners, which warcio's reader counts on.

    Bytes given after the frame ended are kept in `unused_data` (zstd's
    refuses a second use, LZ4's raises), and `unused_data` is bytes, never None.
    """

    def __init__(self, decompressor):
        self._decompressor = decompressor
        self._after = b""

    def decompress(self, data: bytes) -> bytes:
        if self._decompressor.eof:
            self._after += data
            return b""
        return self._decompressor.decompress(data)

    @property
    def eof(self) -> bool:
        return self._decompressor.eof

    @property
    def unused_data(self) -> bytes:
        if not self._decompressor.eof:
            return b""
        return (self._decompressor.unused_data or b"") + self._after


class _FramedReader(BoundedLines, DecompressingBufferedReader):
    """warcio's reader of gzip members, for frames of another codec (zstd, LZ4): a new decompressor per frame."""

    def __init__(self, stream: BinaryIO, framing: _Framing):
        self._framing = framing
        super().__init__(stream, block_size=framing.read_size, decomp_type=framing.name)

    def close_decompressor(self):
        # (warcio flushes a zlib decompressor here; a frame's decompressor has nothing to flush.)
        self.decompressor = None

    def _init_decomp(self, decomp_type):
        self.num_block_read = 0
        self.decomp_type = decomp_type
        self.decompressor = _FrameDecompressor(self._framing.new_decompressor())


class _RecordIterator(ArchiveIterator):
    """warcio's ArchiveIterator, with the blank lines after a record skipped in linear time.

    warcio reads them one line at a time (2 GiB of newlines: 9 minutes) and a
    line that should be blank whole, however long. `blank_run` is the bytes of
    blank lines that followed the last record read; `garbage_at`, where the
    last line that should have been blank and was not starts.
    """

    blank_run = 0
    garbage_at = 0
    # Where the line that a whole-file gzip's end cut short starts (None: no cut seen).
    cut_at = None

    def __init__(self, stream: BinaryIO, form: _Format):
        # ARC records come with the headers of the WARC record they would be.
        super().__init__(stream, arc2warc=form.arc)
        # (Header lines bounded, a missing target URI said so: `transforms.warc_headers`.)
        self.loader = RecordLoader(verify_http=False, arc2warc=form.arc)
        if form.framing is not None and form.framing.new_decompressor is not None:
            self.reader = _FramedReader(self.fh, form.framing)
        else:
            self.reader = BoundedReader(self.fh, block_size=BUFF_SIZE)

    def read_to_end(self, record=None):
        super().read_to_end(record)
        if self.cut_at is not None:
            # (warcio's offset counts the cut line it had read: the next record starts where that line does.)
            self.offset = self.cut_at

    def _consume_blanklines(self):
        if isinstance(self.fh, _GunzipStream):
            self.fh.quiet_cut = False  # (the record's block is read)
        # As warcio's: the first line after a record is consumed even if it is
        # not blank (with a warning and an error count), and the first
        # non-blank line after it is the next record's first line.
        empty_size = 0
        first_line = True
        while True:
            line_start = self.fh.tell() - self.reader.rem_length()
            try:
                if not first_line:
                    empty_size += _skip_blank_bytes(self.reader)
                    line_start = self.fh.tell() - self.reader.rem_length()
                line = self.reader.readline(TRAILING_LINE_LIMIT)
            except CutStream:
                # A whole-file gzip that ends in the line after a record: the
                # record is whole, and the next read raises again, for the
                # record that line starts.
                self.cut_at = line_start
                line = b""
            if not line:
                self.blank_run = empty_size
                return None, empty_size
            if line.strip() and not first_line:
                self.blank_run = empty_size
                return line, empty_size
            empty_size += len(line)
            if line.strip():
                err_offset = self.fh.tell() - self.reader.rem_length() - empty_size
                _WARCIO_SYS.stderr.write(self.INC_RECORD.format(err_offset, line))
                self.garbage_at = err_offset
                self.err_count += 1
            first_line = False


def _every_offset(offset: int) -> bool:
    return True


@dataclass
class _Progress:
    """How far reading a file got: records yielded, and where the last good record ended."""

    emitted: int = 0
    next_offset: int = 0
    # Whether the record that starts at an offset is this range's to read (see `read_warc`).
    claim: Callable[[int], bool] = _every_offset
    # A claim failed: the records from there on are another range's.
    handed_on: bool = False
    form: _Format = WARC
    # The stored size of a file gzipped per record: a member that ends inside its record is split, not cut, before it.
    file_size: int | None = None
    # (record id, URL) of the record whose header is read and whose outcome is not yet given: damage names it.
    reading: tuple[str, str] | None = None
    # Skip pages cut short (`read_warc`'s `skip_truncated`).
    skip_truncated: bool = False


class DamagedData(Exception):
    """Bytes where a WARC record should be that are not one."""

    def __init__(self, message: str, after_good_record: bool = False, resume_at: int | None = None,
                 damaged_at: int | None = None):
        super().__init__(message)
        # Garbage after an intact record: the next record may start right
        # after it, so resynchronizing starts there, not one byte later.
        self.after_good_record = after_good_record
        # Where the damage starts, when that is before where reading stopped.
        self.damaged_at = damaged_at
        # Where the next record is known to start (the damage is already reported).
        self.resume_at = resume_at


def _iterate(stream: BinaryIO, source_file: str, progress: _Progress, records_file: Callable[[], BinaryIO],
             note: Callable[[ReadNote], None], max_page_bytes: int) -> Iterator[Document | Skip | DeadLetter]:
    # warcio is lenient where a corpus must not be: it reads ARC (in a WARC
    # file) and garbage as records, skips a line it cannot parse with only a warning, and reads
    # a record without Content-Length into the next ones.
    iterator = _RecordIterator(stream, progress.form)
    records = iter(iterator)
    sink = _WarningSink()
    while True:
        # Warnings are redirected while warcio reads, never across a yield:
        # another generator may read another file on this thread meanwhile.
        record_offset = progress.next_offset
        # Until the next record is read, the iterator's offset is where it starts (where the file ends, when
        # none does). It is claimed first: another range's record is not read here, not even its headers.
        if not progress.claim(iterator.offset):
            progress.handed_on = True
            return
        previous = _WARCIO_SYS.redirect(sink)
        try:
            iterator.loader.forget()
            try:
                record = next(records, None)
            except Exception:
                # (A record whose WARC headers were read, and whose HTTP headers were not: the damage names it.)
                progress.reading = iterator.loader.last_read()
                raise
            if record is None:
                return
            record_offset = iterator.offset
            if record.format != "warc":
                raise DamagedData(f"not a WARC record (read as {record.format})")
            if progress.form.arc:
                # (warcio gives an ARC record a random WARC-Record-ID: an ARC record has none.)
                record.rec_headers.remove_header("WARC-Record-ID")
            progress.reading = (record.rec_headers.get_header("WARC-Record-ID", ""),
                                record.rec_headers.get_header("WARC-Target-URI", ""))
            declared_length = record.rec_headers.get_header("Content-Length")
            if declared_length is None:
                raise DamagedData("a WARC record without Content-Length")
            warnings = iterator.err_count
            if isinstance(stream, _GunzipStream):
                # (What the end of a whole-file gzip cuts of this record's block is read as its end: `_read_record`.)
                stream.quiet_cut = True
            outcome = _read_record(iterator, record, source_file, max_page_bytes, progress.skip_truncated,
                                   progress.file_size)
        finally:
            _WARCIO_SYS.redirect(previous)
            sink.hand_on(note, source_file, record_offset)
        not_followed_by_blank_line = iterator.err_count > warnings
        if not_followed_by_blank_line and progress.form.layout != "record":
            # A Content-Length too big (or counted with CRLF in a file whose
            # lines now end in LF) runs into the next record: find it there.
            inside = find_next_record(records_file, record_offset + 1, progress.form, stop=iterator.offset)
            if inside is not None:
                progress.next_offset = inside
                progress.emitted += 1
                yield DeadLetter(STAGE, f"Content-Length {declared_length} runs past the end of this record: "
                                 f"the next record starts inside it, at offset {inside}", source_file, record_offset,
                                 *progress.reading)
                progress.reading = None
                raise DamagedData("a Content-Length too big", resume_at=inside)
        # warcio's offsets go wrong on garbled input (even negative): never backwards.
        progress.next_offset = max(progress.next_offset, iterator.offset)
        progress.emitted += 1
        missing = getattr(record.raw_stream, "limit", 0)
        # The file goes on after the gzip member that ends inside this record.
        member_cut = missing > 0 and progress.file_size is not None and iterator.offset < progress.file_size
        split = member_cut and not _member_starts_record(records_file, iterator.offset, progress.form)
        # (A page kept with what its member holds is kept: `_read_record`.)
        if split or member_cut and not isinstance(outcome, Document):
            outcome = DeadLetter(STAGE, (
                f"split across gzip members: this record's gzip member ends {missing} bytes before the end of the "
                "record (by its Content-Length), and the next member holds its rest" if split else
                f"truncated: this record's gzip member ends {missing} bytes before the end of the record "
                "(by its Content-Length), and the next member starts another record"), source_file, record_offset,
                *progress.reading)
        progress.reading = None
        yield outcome
        if iterator.blank_run > BLANK_RUN_LIMIT:
            yield DeadLetter(STAGE, f"{iterator.blank_run} bytes of blank lines after this record "
                             f"(more than {BLANK_RUN_LIMIT}), skipped", source_file, record_offset, "", "",
                             skipped_bytes=iterator.blank_run)
        if split:
            raise DamagedData("the rest of a record split across gzip members", after_good_record=True)
        if not_followed_by_blank_line:
            # (In a file gzipped per record, warcio's offset of the garbage is not one of the file.)
            raise DamagedData("bytes that are not a WARC record after this record", after_good_record=True,
                              damaged_at=None if progress.form.layout == "record" else iterator.garbage_at)


def _member_starts_record(open_file: Callable[[], BinaryIO], offset: int, form: _Format) -> bool:
    with open_file() as raw:
        raw.seek(offset)
        return form.frame_starts_record(raw.read(RESYNC_PROBE))


def starts_like_archive(open_file: Callable[[], BinaryIO]) -> bool:
    """Whether a file begins with a WARC or ARC record, in a format that is read (see `detect_format`).

    Raises ValueError when what precedes its records is damaged (a zstd dictionary frame of a size it cannot have).
    """
    form = detect_format(open_file)
    if form.damage:
        raise ValueError(form.damage)
    with open_file() as raw:
        raw.seek(form.records_start)
        head = raw.read(RESYNC_PROBE)
    if form.framing is not None:
        head = form.framing.head(head, 512)
    return _starts_arc(head) if form.arc else head.startswith(b"WARC/")


# Where an uncompressed record may start: after a newline.
_RECORD_MARKERS = {False: re.compile(rb"\nWARC/1\."), True: re.compile(rb"\n(?=" + ARC_HEADER.pattern + rb")")}


def find_next_record(open_file: Callable[[], BinaryIO], start: int, form: _Format,
                     stop: int | None = None) -> int | None:
    """The offset of the first intact-looking record at or after `start` (and before `stop`), or None.

    In a file compressed per record that is a gzip member (zstd, LZ4 frame)
    whose data starts like a record; in an uncompressed one (or the
    decompressed stream of a whole-file gzip), a `WARC/1.` line (an ARC
    record's first line). The search reads the file once, a chunk at a time.
    """
    framed = form.layout == "record"
    marker = re.compile(re.escape(form.framing.magic)) if framed else _RECORD_MARKERS[form.arc]
    # An uncompressed record starts after a newline, or at the start of the file:
    # the byte before `start` is searched too, so a record at `start` is found.
    lead = 0 if framed else 1
    with open_file() as raw:
        raw.seek(max(start - lead, 0))
        carried, base = (b"\n", -1) if start < lead else (b"", start - lead)
        while True:
            try:
                chunk = raw.read(RESYNC_CHUNK)
            except (CutStream, zlib.error):  # a whole-file gzip stream that ends or breaks here
                chunk = b""
            data = carried + chunk
            match = marker.search(data)
            while match and (len(data) - match.start() >= RESYNC_PROBE or not chunk):
                found = match.start()
                offset = base + found + lead
                if stop is not None and offset >= stop:
                    return None
                if not framed or form.frame_starts_record(data[found:found + RESYNC_PROBE]):
                    return offset
                match = marker.search(data, found + 1)
            if not chunk or (stop is not None and base + len(data) >= stop + RESYNC_PROBE):
                return None
            keep = max(len(data) - RESYNC_PROBE, 0) if match is None else match.start()
            carried, base = data[keep:], base + keep


class CutStream(Exception):
    """A compressed stream that the end of the file cuts short."""


class _GunzipStream:
    """The decompressed bytes of a gzip stream, raising CutStream where the file cuts it short.

    (warcio takes an EOFError, which `gzip.GzipFile` raises there, for the
    end of the file, and drops the cut record without a word.)
    """

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._buffer = b""
        # Where the bytes not read yet start in `_buffer` (slicing off each read copied the rest: 1 MiB per 16 KiB read).
        self._start = 0
        self._position = 0
        self._finished = False
        self._cut = False
        # While a record's block is read (its headers were), the cut ends it as the end of a file would
        # (`_iterate`); once a block was cut so, the file has ended.
        self.quiet_cut = False
        self._cut_read = False

    def _fill(self, wanted: int) -> None:
        while len(self._buffer) - self._start < wanted and not self._finished:
            chunk = self._decompressor.unconsumed_tail or self._raw.read(RESYNC_CHUNK)
            if not chunk:
                self._cut = not self._decompressor.eof
                self._finished = True
                break
            pieces = [self._buffer[self._start:], self._decompressor.decompress(chunk, RESYNC_CHUNK)]
            # (One chunk may hold the ends of several members.)
            while self._decompressor.eof and self._decompressor.unused_data:
                rest = self._decompressor.unused_data
                self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
                pieces.append(self._decompressor.decompress(rest, RESYNC_CHUNK))
            self._buffer, self._start = b"".join(pieces), 0

    def read(self, size: int = -1) -> bytes:
        self._fill(RESYNC_CHUNK if size is None or size < 0 else size)
        available = len(self._buffer) - self._start
        wanted = available if size is None or size < 0 else min(size, available)
        data = self._buffer[self._start:self._start + wanted]
        self._start += wanted
        if not data and self._cut and size is not None and size > 0:
            if not (self.quiet_cut or self._cut_read):
                raise CutStream("the file ends inside its gzip stream")
            # The end of the file, as a record's block that the cut ended was read: nothing else remains.
            self._cut_read = True
        self._position += len(data)
        return data

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int) -> None:
        """Moves forward to `offset` of the decompressed stream (the decompressor cannot go back)."""
        while self._position < offset and self.read(min(RESYNC_CHUNK, offset - self._position)):
            pass

    def __enter__(self) -> "_GunzipStream":
        return self

    def __exit__(self, *exc_info) -> None:
        self._raw.close()


def _decompressed(open_file: Callable[[], BinaryIO]) -> Callable[[], _GunzipStream]:
    """Opens the decompressed stream of a whole-file gzip, as `open_file` opens the file."""
    return lambda: _GunzipStream(open_file())


def _ends_inside_a_member(open_file: Callable[[], BinaryIO], offset: int, framing: _Framing) -> bool:
    """Whether the bytes from `offset` are the start of a frame that the end of the file cuts short."""
    with open_file() as raw:
        raw.seek(offset)
        return framing.cut_short(raw)


def _print_note(note: ReadNote) -> None:
    print(f"{note.source_file}: {note.line()}", file=sys.stderr)


def _file_size(open_file: Callable[[], BinaryIO]) -> int:
    with open_file() as raw:
        raw.seek(0, 2)
        return raw.tell()


def read_warc(open_file: Callable[[], BinaryIO], source_file: str, start: int = 0,
              end: int | None = None, on_note: Callable[[ReadNote], None] = _print_note,
              max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
              claim: Callable[[int], bool] | None = None,
              skip_truncated: bool = False) -> Iterator[Document | Skip | DeadLetter]:
    """Reads one WARC file; `open_file` opens it (again) as a seekable binary stream.

    With `start` and `end`, reads the records that start in that byte range
    of a file compressed per record: the range begins at the first gzip member
    (zstd, LZ4 frame) holding a record at or after `start`, and its last
    record may end past `end`. Reading every range of a file reads every
    record once. With `claim` instead of `end`, a record is read when
    `claim(its offset)` is true, and reading stops at the first that is not
    (a restriction tracker's `try_claim`: where the range ends may change
    while it is read). Offsets are claimed rising, before each record is
    parsed, and once more where the records run out (the end of the file).
    A whole-file gzip stream claims none: its offsets count uncompressed
    bytes, and it is only ever read whole.

    Damage inside a file (a corrupt gzip member, a garbled record) costs only
    the damaged part: reading resumes at the next record that starts intact
    (in a whole-file gzip, in its decompressed stream), and one `DeadLetter`
    says how many bytes were skipped and how many records were recovered
    after them. warcio's warnings go to `on_note` (by default, to stderr with
    the file's name). A page whose payload decodes to more than
    `max_page_bytes` is a `too-large` skip. A page cut short (WARC-Truncated,
    or a record the end of the file or of its gzip member cuts) is kept with
    what was received, its `truncated` saying why and how much; with
    `skip_truncated`, it is a `truncated` skip (a cut record: a dead letter).
    """
    form = detect_format(open_file)
    layout = form.layout
    whole_file_gzip = layout == "file"
    records_file = _decompressed(open_file) if whole_file_gzip else open_file
    # (The first range reads from where records start: what is there is read, or reported, never searched past.)
    first_range = start <= form.records_start
    start = max(start, form.records_start)
    if whole_file_gzip or (claim is None and end is None):
        claim = _every_offset
    elif claim is None:
        claim = lambda offset: offset < end
    progress = _Progress(next_offset=start, claim=claim, form=form,
                         file_size=_file_size(open_file) if layout == "record" else None, skip_truncated=skip_truncated)
    if form.damage and first_range:
        yield DeadLetter(STAGE, form.damage, source_file, 0, "", "")
    if form.damage or not first_range:
        progress.next_offset = find_next_record(open_file, start, form)
        if progress.next_offset is None:
            return
    damage = None  # (where it started, where reading resumed, the error, records before, (record id, URL))
    while True:
        segment_start = progress.next_offset
        try:
            with records_file() as stream:
                stream.seek(progress.next_offset)
                yield from _iterate(stream, source_file, progress, records_file, on_note, max_page_bytes)
            failure = None
        except (RemoteReadError, FileChanged):
            # The network failed, or the file changed under the build, not the data: the work item fails (the
            # runner retries it), no record is lost.
            raise
        except Exception as error:  # noqa: BLE001 - whatever broke, the rest of the file may be readable
            failure = error
        # The record the failure cut short, when its header was read.
        named, progress.reading = progress.reading or ("", ""), None
        if damage is not None:
            yield _damage_report(source_file, *damage, recovered=progress.emitted - damage[3])
            damage = None
        if failure is None:
            if not whole_file_gzip and not progress.handed_on:
                yield from _check_tail(open_file, source_file, progress.next_offset)
            return
        if getattr(failure, "resume_at", None) is not None:
            progress.next_offset = failure.resume_at
            continue
        search_from = progress.next_offset + (0 if getattr(failure, "after_good_record", False) else 1)
        # Each attempt starts past the last one, so garbled offsets cannot loop.
        search_from = max(search_from, segment_start + 1)
        resume = find_next_record(records_file, search_from, form)
        if resume is None:
            yield _unreadable_rest(open_file, source_file, progress, failure, form, named)
            return
        # (A resumed record that is another range's cannot be claimed: the damage is reported, recovering none.)
        damaged_at = getattr(failure, "damaged_at", None)
        damaged_at = progress.next_offset if damaged_at is None else min(damaged_at, progress.next_offset)
        damage = (damaged_at, resume, failure, progress.emitted, named)
        progress.next_offset = resume


def _unreadable_rest(open_file, source_file: str, progress: _Progress, failure: BaseException,
                     form: _Format, named: tuple[str, str]) -> DeadLetter:
    cut = isinstance(failure, (CutStream, EOFError)) or (
        form.layout == "record" and _ends_inside_a_member(open_file, progress.next_offset, form.framing))
    if cut:
        reason = f"truncated: the file ends inside a record, after {progress.emitted} records"
    else:
        reason = (f"unreadable from offset {progress.next_offset} to the end of the file after "
                  f"{progress.emitted} records: {describe_error(failure)}")
    return DeadLetter(STAGE, reason, source_file, progress.next_offset, *named)


def _check_tail(open_file: Callable[[], BinaryIO], source_file: str, end: int) -> Iterator[DeadLetter]:
    """A file cut inside a record's first bytes reads as complete; what is left after the last record tells."""
    with open_file() as raw:
        raw.seek(end)
        tail = raw.read(RESYNC_PROBE)
    if tail.strip(b"\r\n"):
        yield DeadLetter(STAGE, "truncated: the file ends inside a record that starts at this offset",
                         source_file, end, "", "")


def _damage_report(source_file: str, damaged_at: int, resumed_at: int, error: BaseException, emitted_before: int,
                   named: tuple[str, str], recovered: int) -> DeadLetter:
    return DeadLetter(
        STAGE,
        f"corrupt data: {describe_error(error)}; skipped {resumed_at - damaged_at} bytes to the next intact record "
        f"at offset {resumed_at}; {recovered} records recovered after it",
        source_file, damaged_at, *named, skipped_bytes=resumed_at - damaged_at,
    )


def open_uncompressed(path: str) -> BinaryIO:
    # Compression is ReadWarc's business: per-record gzip must reach warcio
    # as it is stored, so Beam must not decompress by file extension.
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


@dataclass(frozen=True)
class WarcRange:
    """A unit of reading: the records that start in [start, end) of a file (end None: to its end).

    Its documents keep its `start` as their `source_range` (the corpus shard
    they go to), however a runner splits the range while it is read.
    """

    path: str
    start: int = 0
    end: int | None = None
    file_size: int = 0
    # How many times the input patterns matched the file (it is read once).
    times_matched: int = 1
    # Whether reading may start mid-range, at the record after any offset (a file compressed per record).
    splittable: bool = False
    # Whether the file can be read from any offset: False where its server ignores Range (it is one range).
    ranged: bool = True

    @property
    def size(self) -> int:
        return (self.file_size if self.end is None else self.end) - self.start


@dataclass(frozen=True)
class FileToDigest:
    """A unit of work beside a file's ranges: its size and SHA-256 for the manifest (no range reads its file twice)."""

    path: str
    file_size: int = 0


def split_warc(path: str, size: int, range_bytes: int, layout: str, times_matched: int = 1,
               ranged: bool = True) -> list[WarcRange]:
    """Byte ranges of a file (at most MAX_RANGES_PER_FILE); only files compressed per record, that can be read
    from any offset (`ranged`), can start reading mid-file."""
    splittable = layout == "record" and ranged
    if not splittable or size <= range_bytes:
        return [WarcRange(path, file_size=size, times_matched=times_matched, splittable=splittable, ranged=ranged)]
    range_bytes = max(range_bytes, -(-size // MAX_RANGES_PER_FILE))
    return [WarcRange(path, start, start + range_bytes if start + range_bytes < size else None, size, times_matched,
                      splittable)
            for start in range(0, size, range_bytes)]


def once_per_file(path_and_matches) -> tuple:
    """(the file's metadata, how many times it was matched) from (path, every match of it)."""
    path, matches = path_and_matches
    matches = list(matches)
    return matches[0], len(matches)


class SplitWarc(beam.DoFn):
    """Cuts each file into `WarcRange`s; outputs a `FileToDigest` per file too, after every range of the bundle.

    Beam's local runner deals the work items of a stage to its workers in
    turn, in order: a digest after each file's ranges would give one worker
    every range and the other every digest (with files of one range each).
    """

    def __init__(self, range_bytes: int):
        self._range_bytes = range_bytes

    def start_bundle(self):
        self._to_digest: list[FileToDigest] = []

    def process(self, file_and_times_matched):
        file, times_matched = file_and_times_matched
        layout = detect_format(lambda: open_listed(file.path, file.size_in_bytes)).layout
        self._to_digest.append(FileToDigest(file.path, file.size_in_bytes))
        yield from split_warc(file.path, file.size_in_bytes, self._range_bytes, layout, times_matched,
                              serves_ranges(file.path))

    def finish_bundle(self):
        for to_digest in self._to_digest:
            yield GlobalWindows.windowed_value(to_digest)


class WholeRange(OffsetRange):
    """A restriction that is never split: a range read from its start, or a file digested in one go."""


class WarcRestrictions(beam.transforms.core.RestrictionProvider):
    """The restriction of a unit of reading: its byte range, on an `OffsetRestrictionTracker`.

    The records of a range are claimed at their offsets (see `read_warc`), so
    a runner can split a range while it is read, at any offset, and knows how
    far it got. A range of a file that cannot start reading mid-file (not
    compressed, or gzipped whole) is a `WholeRange`, as is a file to digest
    (one position). The initial restriction is not split further: the
    ranges are made, and spread over workers, before (`SplitWarc`), as
    units of the corpus's shards.
    """

    def initial_restriction(self, unit: WarcRange | FileToDigest) -> OffsetRange:
        if isinstance(unit, FileToDigest):
            return WholeRange(0, 1)
        return (OffsetRange if unit.splittable else WholeRange)(unit.start, unit.start + unit.size)

    def create_tracker(self, restriction: OffsetRange):
        tracker = OffsetRestrictionTracker(restriction)
        return UnsplittableRestrictionTracker(tracker) if isinstance(restriction, WholeRange) else tracker

    def restriction_size(self, unit: WarcRange | FileToDigest, restriction: OffsetRange) -> int:
        # (Digesting a file reads all of it.)
        return unit.file_size if isinstance(unit, FileToDigest) else restriction.size()


class _Claims:
    """`read_warc`'s `claim` on a restriction tracker.

    An offset at or before the last claimed is not claimed again (warcio's
    offsets go back on garbled input): it is the restriction's, as the last was.
    """

    def __init__(self, tracker):
        self._tracker = tracker
        self._last: int | None = None
        self._held = True

    def __call__(self, offset: int) -> bool:
        if self._last is not None and offset <= self._last:
            return self._held
        self._last = offset
        self._held = self._tracker.try_claim(offset)
        return self._held

    def finish(self) -> None:
        """Claims what is left of the restriction when reading ends: no record starts there."""
        stop = self._tracker.current_restriction().stop
        if self._last is None or self._last < stop:
            self(stop)


class ReadWarcRange(beam.DoFn):
    """Reads the records of a `WarcRange`; digests the file of a `FileToDigest`. A splittable DoFn.

    Digests are work items of their own, spread over workers like the ranges:
    the reader of a file's first range does not read the whole file again.

    With a `progress_dir` (local runs), it leaves notes of how far it got.
    `skip_truncated`: see `read_warc`.
    """

    def __init__(self, progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 skip_truncated: bool = False):
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes
        self._skip_truncated = skip_truncated

    def setup(self):
        self._records = counter(STAGE, "records")
        self._documents = counter(STAGE, "documents")
        self._skipped = counter(STAGE, "skipped")
        self._dead = counter(STAGE, "dead_letter")

    def process(self, unit: WarcRange | FileToDigest, tracker=beam.DoFn.RestrictionParam(WarcRestrictions())):
        claims = _Claims(tracker)
        if isinstance(unit, FileToDigest):
            if claims(0):
                yield beam.pvalue.TaggedOutput(INPUT_FILES, replace(digest_listed(unit.path, unit.file_size),
                                                                    path=redacted(unit.path)))
            return
        path = unit.path
        # The name written (records, side files, report, manifest): a URL without its credentials, which only
        # `path` holds, to read it.
        source_file = redacted(path)
        restriction = tracker.current_restriction()
        start = restriction.start
        notes = ProgressNotes(self._progress_dir, f"{path}@{start}") if self._progress_dir else None
        read = 0
        warnings: list[ReadNote] = []
        noted = 0

        def listed_notes():
            nonlocal noted
            for warning in warnings:
                noted += 1
                if noted <= NOTES_PER_RANGE:
                    yield beam.pvalue.TaggedOutput(NOTES, warning)
            warnings.clear()

        # (A split never moves the start of the restriction that reads a file's first record.)
        if start == 0 and unit.times_matched > 1:
            warnings.append(ReadNote(source_file, None, f"matched {unit.times_matched} times by the input patterns; "
                                                        "read once"))
        if not unit.ranged:
            warnings.append(ReadNote(source_file, None, "the server ignores Range requests: read as one stream "
                                                        "from the start, not in ranges"))
        # (Within the size listed: a file that grows meanwhile is read as its digest says it was.)
        for outcome in read_warc(lambda: open_listed(path, unit.file_size), source_file, start, None, warnings.append,
                                 self._max_page_bytes, claims, self._skip_truncated):
            yield from listed_notes()
            self._records.inc()
            read += 1
            if notes is not None:
                notes.update(min(max(outcome.source_offset - start, 0), restriction.size()), read)
            if isinstance(outcome, Document):
                self._documents.inc()
                yield outcome.replace(source_range=unit.start)
            elif isinstance(outcome, Skip):
                self._skipped.inc()
                counter(STAGE, f"skipped:{outcome.kind}").inc()
                yield beam.pvalue.TaggedOutput(SKIPPED, outcome)
            else:
                self._dead.inc()
                yield beam.pvalue.TaggedOutput(DEAD_LETTER, outcome)
        claims.finish()
        yield from listed_notes()
        if read:
            yield beam.pvalue.TaggedOutput(RECORDS_READ, RecordsRead(source_file, read))
        if noted > NOTES_PER_RANGE:
            yield beam.pvalue.TaggedOutput(NOTES, ReadNote(
                source_file, None,
                f"{noted - NOTES_PER_RANGE} more notes in the range from offset {start}, not listed"))
        if notes is not None:
            notes.update(tracker.current_restriction().size(), read, force=True)


class ReadAllWarc(beam.PTransform):
    """Reads the WARC files matched by each file pattern of a PCollection.

    Outputs `documents`, `skipped`, `dead_letter`, `notes` (`ReadNote`s:
    warcio's warnings, files matched more than once), `records_read`
    (`RecordsRead`: the records of each range read) and `input_files` (the
    size and SHA-256 of each file read, `InputDigest`s for the build manifest
    and the report; each file is digested as a work item of its own, in
    parallel with the reading). Each file is read and digested within the
    size it was matched with (`transforms.snapshot`). A file that
    several patterns match (or one pattern given twice) is read once. Files
    are cut into ranges of `range_bytes` (as Beam's file sources split
    theirs), and the ranges, not records, are spread over workers: no page
    crosses a shuffle here. Each range is read by a splittable DoFn that a
    runner may split again while it reads (`WarcRestrictions`).
    """

    def __init__(self, range_bytes: int = DEFAULT_RANGE_BYTES, progress_dir: str | None = None,
                 max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES, skip_truncated: bool = False):
        super().__init__()
        self._range_bytes = range_bytes
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes
        self._skip_truncated = skip_truncated

    def expand(self, patterns):
        return (
            patterns
            | "Match" >> fileio.MatchAll()
            | "ByPath" >> beam.Map(lambda file: (file.path, file))
            | "SamePath" >> beam.GroupByKey()
            | "OncePerFile" >> beam.Map(once_per_file)
            | "Split" >> beam.ParDo(SplitWarc(self._range_bytes))
            | "SpreadRanges" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadWarcRange(self._progress_dir, self._max_page_bytes,
                                                 self._skip_truncated)).with_outputs(
                SKIPPED, DEAD_LETTER, NOTES, RECORDS_READ, INPUT_FILES, main=DOCUMENTS)
        )


class ReadWarc(beam.PTransform):
    """Reads the WARC files matched by the given file patterns."""

    def __init__(self, patterns: list[str] | str, range_bytes: int = DEFAULT_RANGE_BYTES,
                 progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 skip_truncated: bool = False):
        super().__init__()
        self._patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        self._range_bytes = range_bytes
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes
        self._skip_truncated = skip_truncated

    def expand(self, pbegin):
        return pbegin | "Patterns" >> beam.Create(self._patterns) | ReadAllWarc(self._range_bytes, self._progress_dir,
                                                                                  self._max_page_bytes,
                                                                                  self._skip_truncated)
