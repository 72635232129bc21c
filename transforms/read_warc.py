"""ReadWarc: HTML responses out of WARC files.

Every record of a file comes out as exactly one of:

* a `Document`: an HTTP 200 response whose payload is HTML, with chunked
  transfer coding and content-encoding removed (`transforms.payload`, which
  reads at most `max_page_bytes` of it);
* a `Skip` of a kind in `SKIP_KINDS`: records a text corpus does not want;
* a `DeadLetter`: a record (or the rest of a file) that could not be read.

So `read = documents + skips + dead letters` holds for each file.

Files may be gzipped per record (as Common Crawl publishes them), gzipped as
a whole, or not compressed. warcio reads the first and the last; a whole-file
gzip stream (told apart by its first member holding more than one record)
is read through a streaming gzip decoder, and its offsets then count
uncompressed bytes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from warcio.archiveiterator import ArchiveIterator

from transforms.document import DeadLetter, Document, Skip, describe_error
from transforms.manifest import digest_file
from transforms.payload import DEFAULT_MAX_PAGE_BYTES, MalformedPayload, PayloadTooLarge, read_payload
from transforms.progress import ProgressNotes
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
    "empty": "an HTML response (or one with no Content-Type) with no payload",
    "too-large": "an HTML response whose payload decodes to more than the bound (--max-page-bytes)",
    # Given after MinimizeText, by HashDedup's hashing step (`hash_dedup.HashDocuments`).
    "no-text": "an HTML page with no visible text (JavaScript only, a frameset, letters only in scripts not kept)",
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
GZIP_MAGIC = b"\x1f\x8b\x08"
RESYNC_CHUNK = 1 << 20
# Common Crawl's files are about 1 GB: 16 ranges each.
DEFAULT_RANGE_BYTES = 64 << 20
# Bytes of a candidate gzip member to decompress when looking for `WARC/`.
RESYNC_PROBE = 4096


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


def _classify(record) -> tuple[str, str] | None:
    """The skip kind and detail that a record's headers decide, or None when its payload must tell."""
    headers = record.rec_headers
    if record.rec_type == "revisit":
        return "revisit", headers.get_header("WARC-Profile", "")
    if record.rec_type != "response":
        return "non-response", record.rec_type
    if record.http_headers is None:
        return "non-http", headers.get_header("Content-Type", "")
    truncated = headers.get_header("WARC-Truncated")
    if truncated:
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


def _read_record(iterator: ArchiveIterator, record, source_file: str,
                 max_page_bytes: int) -> Document | Skip | DeadLetter:
    headers = record.rec_headers
    record_id = headers.get_header("WARC-Record-ID", "")
    url = headers.get_header("WARC-Target-URI", "")
    payload, failure = b"", None
    # Decided from the headers first: what is skipped is never read, only
    # drained (by `get_record_offset`, in pieces).
    try:
        verdict = _classify(record)
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
    if missing > 0:
        return dead(f"truncated: the file ends {missing} bytes before the end of this record")
    if failure is not None:
        return dead(failure)
    content_type = "" if verdict else record.http_headers.get_header("Content-Type", "") or ""
    if verdict is None and not payload:
        verdict = "empty", ""
    elif verdict is None and (not_html := payload_verdict(content_type, payload)):
        verdict = "non-html", not_html
    if verdict is not None:
        return Skip(verdict[0], source_file, offset, record.rec_type, record_id, url, verdict[1])
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
    )


@dataclass
class _Progress:
    """How far reading a file got: records yielded, and where the last good record ended."""

    emitted: int = 0
    next_offset: int = 0
    # Records that start at or after this offset belong to the next range.
    end: int | None = None


class DamagedData(Exception):
    """Bytes where a WARC record should be that are not one."""

    def __init__(self, message: str, after_good_record: bool = False):
        super().__init__(message)
        # Garbage after an intact record: the next record may start right
        # after it, so resynchronizing starts there, not one byte later.
        self.after_good_record = after_good_record


def _iterate(stream: BinaryIO, source_file: str, progress: _Progress,
             max_page_bytes: int) -> Iterator[Document | Skip | DeadLetter]:
    # warcio is lenient where a corpus must not be: it reads ARC and garbage
    # as records, skips a line it cannot parse with only a warning, and reads
    # a record without Content-Length into the next ones.
    iterator = ArchiveIterator(stream)
    for record in iterator:
        # Until the record is read, the iterator's offset is where it starts.
        if progress.end is not None and iterator.offset >= progress.end:
            return
        if record.format != "warc":
            raise DamagedData(f"not a WARC record (read as {record.format})")
        if record.rec_headers.get_header("Content-Length") is None:
            raise DamagedData("a WARC record without Content-Length")
        warnings = iterator.err_count
        outcome = _read_record(iterator, record, source_file, max_page_bytes)
        # warcio's offsets go wrong on garbled input (even negative): never backwards.
        progress.next_offset = max(progress.next_offset, iterator.offset)
        progress.emitted += 1
        yield outcome
        if iterator.err_count > warnings:
            raise DamagedData("bytes that are not a WARC record after this record", after_good_record=True)


def _starts_warc_member(data: bytes) -> bool:
    try:
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 16)
    except zlib.error:
        return False
    return head.startswith(b"WARC/")


def starts_like_warc(open_file: Callable[[], BinaryIO]) -> bool:
    """Whether a file begins with a WARC record (gzipped or not)."""
    with open_file() as raw:
        head = raw.read(RESYNC_PROBE)
    return head.startswith(b"WARC/") or (head.startswith(GZIP_MAGIC) and _starts_warc_member(head))


def find_next_record(open_file: Callable[[], BinaryIO], start: int, gzipped: bool) -> int | None:
    """The offset of the first intact-looking record at or after `start`, or None.

    In a gzipped file that is a gzip member whose data starts with `WARC/`;
    in an uncompressed one, a `WARC/1.` line.
    """
    marker = GZIP_MAGIC if gzipped else b"\nWARC/1."
    with open_file() as raw:
        raw.seek(start)
        carried, base = b"", start
        while True:
            chunk = raw.read(RESYNC_CHUNK)
            data = carried + chunk
            found = data.find(marker)
            while found >= 0 and (len(data) - found >= RESYNC_PROBE or not chunk):
                if not gzipped:
                    return base + found + 1
                if _starts_warc_member(data[found:found + RESYNC_PROBE]):
                    return base + found
                found = data.find(marker, found + 1)
            if not chunk:
                return None
            keep = max(len(data) - RESYNC_PROBE, 0) if found < 0 else found
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
        self._position = 0
        self._finished = False
        self._cut = False

    def _fill(self, wanted: int) -> None:
        while len(self._buffer) < wanted and not self._finished:
            chunk = self._decompressor.unconsumed_tail or self._raw.read(RESYNC_CHUNK)
            if not chunk:
                self._cut = not self._decompressor.eof
                self._finished = True
                break
            self._buffer += self._decompressor.decompress(chunk, RESYNC_CHUNK)
            if self._decompressor.eof and self._decompressor.unused_data:
                rest = self._decompressor.unused_data
                self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._buffer += self._decompressor.decompress(rest, RESYNC_CHUNK)

    def read(self, size: int = -1) -> bytes:
        self._fill(RESYNC_CHUNK if size is None or size < 0 else size)
        wanted = len(self._buffer) if size is None or size < 0 else size
        data, self._buffer = self._buffer[:wanted], self._buffer[wanted:]
        if not data and self._cut and wanted:
            raise CutStream("the file ends inside its gzip stream")
        self._position += len(data)
        return data

    def tell(self) -> int:
        return self._position


def _layout(open_file: Callable[[], BinaryIO]) -> str:
    """`record` (a gzip member per record), `file` (one gzip stream) or `none`.

    The first member of a per-record file holds the warcinfo record alone; a
    whole-file gzip stream holds a second record, or more than a record can.
    """
    with open_file() as raw:
        head = raw.read(RESYNC_CHUNK)
    if not head.startswith(GZIP_MAGIC):
        return "none"
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        first = decompressor.decompress(head, RESYNC_CHUNK)
    except zlib.error:
        return "record"  # damaged from the start: reading reports it
    if b"\nWARC/1." in first or (len(first) >= RESYNC_CHUNK and not decompressor.eof):
        return "file"
    return "record"


def _ends_inside_a_member(open_file: Callable[[], BinaryIO], offset: int) -> bool:
    """Whether the bytes from `offset` are the start of a gzip member that the end of the file cuts short."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    with open_file() as raw:
        raw.seek(offset)
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


def read_warc(open_file: Callable[[], BinaryIO], source_file: str, start: int = 0, end: int | None = None,
              max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES) -> Iterator[Document | Skip | DeadLetter]:
    """Reads one WARC file; `open_file` opens it (again) as a seekable binary stream.

    With `start` and `end`, reads the records that start in that byte range
    of a file gzipped per record: the range begins at the first gzip member
    holding a WARC record at or after `start`, and its last record may end
    past `end`. Reading every range of a file reads every record once.

    Damage inside a file (a corrupt gzip member, a garbled record) costs only
    the damaged part: reading resumes at the next record that starts intact,
    and one `DeadLetter` says how many bytes were skipped and how many
    records were recovered after them. A page whose payload decodes to more
    than `max_page_bytes` is a `too-large` skip.
    """
    layout = _layout(open_file)
    whole_file_gzip = layout == "file"
    progress = _Progress(next_offset=start, end=end)
    if start:
        progress.next_offset = find_next_record(open_file, start, layout == "record")
        if progress.next_offset is None or (end is not None and progress.next_offset >= end):
            return
    damage = None  # (where it started, where reading resumed, the error, records before)
    while True:
        segment_start = progress.next_offset
        try:
            with open_file() as raw:
                if whole_file_gzip:
                    stream = _GunzipStream(raw)
                else:
                    raw.seek(progress.next_offset)
                    stream = raw
                yield from _iterate(stream, source_file, progress, max_page_bytes)
            failure = None
        except Exception as error:  # noqa: BLE001 - whatever broke, the rest of the file may be readable
            failure = error
        if damage is not None:
            yield _damage_report(source_file, *damage, recovered=progress.emitted - damage[3])
            damage = None
        if failure is None:
            if not whole_file_gzip and end is None:
                yield from _check_tail(open_file, source_file, progress.next_offset)
            return
        search_from = progress.next_offset + (0 if getattr(failure, "after_good_record", False) else 1)
        # Each attempt starts past the last one, so garbled offsets cannot loop.
        search_from = max(search_from, segment_start + 1)
        resume = None if whole_file_gzip else find_next_record(open_file, search_from, layout == "record")
        if resume is None:
            yield _unreadable_rest(open_file, source_file, progress, failure, layout)
            return
        if end is not None and resume >= end:
            # The next range starts reading there.
            yield _damage_report(source_file, progress.next_offset, resume, failure, progress.emitted, recovered=0)
            return
        damage = (progress.next_offset, resume, failure, progress.emitted)
        progress.next_offset = resume


def _unreadable_rest(open_file, source_file: str, progress: _Progress, failure: BaseException,
                     layout: str) -> DeadLetter:
    cut = isinstance(failure, (CutStream, EOFError)) or (
        layout == "record" and _ends_inside_a_member(open_file, progress.next_offset))
    if cut:
        reason = f"truncated: the file ends inside a record, after {progress.emitted} records"
    else:
        reason = (f"unreadable from offset {progress.next_offset} to the end of the file after "
                  f"{progress.emitted} records: {describe_error(failure)}")
    return DeadLetter(STAGE, reason, source_file, progress.next_offset, "", "")


def _check_tail(open_file: Callable[[], BinaryIO], source_file: str, end: int) -> Iterator[DeadLetter]:
    """A file cut inside a record's first bytes reads as complete; what is left after the last record tells."""
    with open_file() as raw:
        raw.seek(end)
        tail = raw.read(RESYNC_PROBE)
    if tail.strip(b"\r\n"):
        yield DeadLetter(STAGE, "truncated: the file ends inside a record that starts at this offset",
                         source_file, end, "", "")


def _damage_report(source_file: str, damaged_at: int, resumed_at: int, error: BaseException, emitted_before: int,
                   recovered: int) -> DeadLetter:
    return DeadLetter(
        STAGE,
        f"corrupt data: {describe_error(error)}; skipped {resumed_at - damaged_at} bytes to the next intact record "
        f"at offset {resumed_at}; {recovered} records recovered after it",
        source_file, damaged_at, "", "", skipped_bytes=resumed_at - damaged_at,
    )


def open_uncompressed(path: str) -> BinaryIO:
    # Compression is ReadWarc's business: per-record gzip must reach warcio
    # as it is stored, so Beam must not decompress by file extension.
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


@dataclass(frozen=True)
class WarcRange:
    """A unit of reading: the records that start in [start, end) of a file (end None: to its end)."""

    path: str
    start: int = 0
    end: int | None = None
    file_size: int = 0

    @property
    def size(self) -> int:
        return (self.file_size if self.end is None else self.end) - self.start


def split_warc(path: str, size: int, range_bytes: int, layout: str) -> list[WarcRange]:
    """Byte ranges of a file; only files gzipped per record can start reading mid-file."""
    if layout != "record" or size <= range_bytes:
        return [WarcRange(path, file_size=size)]
    return [WarcRange(path, start, start + range_bytes if start + range_bytes < size else None, size)
            for start in range(0, size, range_bytes)]


class SplitWarc(beam.DoFn):
    def __init__(self, range_bytes: int):
        self._range_bytes = range_bytes

    def process(self, file):
        layout = _layout(lambda: open_uncompressed(file.path))
        yield from split_warc(file.path, file.size_in_bytes, self._range_bytes, layout)


class ReadWarcRange(beam.DoFn):
    """Reads the records of a `WarcRange`; the range that starts a file also digests it.

    With a `progress_dir` (local runs), it leaves notes of how far it got.
    """

    def __init__(self, progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES):
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes

    def setup(self):
        self._records = counter(STAGE, "records")
        self._documents = counter(STAGE, "documents")
        self._skipped = counter(STAGE, "skipped")
        self._dead = counter(STAGE, "dead_letter")

    def process(self, unit: WarcRange):
        path = unit.path
        notes = ProgressNotes(self._progress_dir, f"{path}@{unit.start}") if self._progress_dir else None
        read = 0
        for outcome in read_warc(lambda: open_uncompressed(path), path, unit.start, unit.end, self._max_page_bytes):
            self._records.inc()
            read += 1
            if notes is not None:
                notes.update(min(max(outcome.source_offset - unit.start, 0), unit.size), read)
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
        if notes is not None:
            notes.update(unit.size, read, force=True)
        if unit.start == 0:
            yield beam.pvalue.TaggedOutput(INPUT_FILES, digest_file(path))


class ReadAllWarc(beam.PTransform):
    """Reads the WARC files matched by each file pattern of a PCollection.

    Outputs `documents`, `skipped`, `dead_letter` and `input_files` (the
    size and SHA-256 of each file read, for the build manifest). Files are
    cut into ranges of `range_bytes` (as Beam's file sources split theirs),
    and the ranges, not records, are spread over workers: no page crosses a
    shuffle here.
    """

    def __init__(self, range_bytes: int = DEFAULT_RANGE_BYTES, progress_dir: str | None = None,
                 max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES):
        super().__init__()
        self._range_bytes = range_bytes
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes

    def expand(self, patterns):
        return (
            patterns
            | "Match" >> fileio.MatchAll()
            | "Split" >> beam.ParDo(SplitWarc(self._range_bytes))
            | "SpreadRanges" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadWarcRange(self._progress_dir, self._max_page_bytes)).with_outputs(SKIPPED, DEAD_LETTER, INPUT_FILES, main=DOCUMENTS)
        )


class ReadWarc(beam.PTransform):
    """Reads the WARC files matched by the given file patterns."""

    def __init__(self, patterns: list[str] | str, range_bytes: int = DEFAULT_RANGE_BYTES,
                 progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES):
        super().__init__()
        self._patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        self._range_bytes = range_bytes
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes

    def expand(self, pbegin):
        return pbegin | "Patterns" >> beam.Create(self._patterns) | ReadAllWarc(self._range_bytes, self._progress_dir,
                                                                                  self._max_page_bytes)
