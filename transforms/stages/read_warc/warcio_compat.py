"""Where ReadWarc changes warcio from the inside, because of warcio's bugs and limits: nowhere else.

Checked on import: warcio's version in the range requirements.txt pins, and
every module attribute and method patched or overridden here present; else
the import fails with one line that says which (`check_warcio`).

* warcio prints a gzip member that breaks part-way, and reads the rest of the
  file into it: `RaisingDecompression` raises instead, so that the damage is a
  dead letter and reading resumes at the next record.
* warcio writes its warnings to `sys.stderr` (a record not followed by a blank line, which
  `RecordIterator` writes here in its stead), and logs one (a target URI with
  spaces): they cannot be told apart by file and record, and print over a
  progress display. Its reader module's `sys` is `WARCIO_SYS`, which sends
  what a thread writes while it reads a record to that thread's sink
  (`redirect`), as does a filter on its record loader's logger.
* warcio reads the blank lines after a record one line at a time (2 GiB of
  newlines: 9 minutes), and the line after a record whole, however long:
  `RecordIterator` overrides its `_consume_blanklines`.
* warcio reads a WARC header line whole, however long (a 10 MB line is read,
  or swallows the headers after it when it ends in a bare CR), and a response
  record without WARC-Target-URI fails inside it with an AttributeError of its
  own. Here a WARC header line over `HEADER_LINE_LIMIT` bytes, and a record
  that lacks its target URI, are a `DamagedHeader` that says which: the reader
  reports it as damage with that reason and resumes at the next record. What
  fails after a record's WARC headers were read (its HTTP headers, cut by the
  end of a whole-file gzip) is told of that record (`RecordLoader.last_read`).
* warcio decompresses gzip members only, with CPython's zlib: `BoundedReader`
  gives its reader zlib-ng's (`formats.gunzip_decompressor`), and `FramedReader` a
  decompressor of zstd or LZ4 frames, through its `DECOMPRESSORS` table.
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import sys
import threading
from typing import BinaryIO

from warcio import bufferedreaders, recordloader
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader, DecompressingBufferedReader
from warcio.recordloader import ArcWarcRecordLoader
from warcio.statusandheaders import StatusAndHeadersParser
from warcio.utils import BUFF_SIZE

from transforms.stages.read_warc.formats import Format, Framing, gunzip_decompressor
from transforms.stages.read_warc.gzip_stream import CutStream, GunzipStream

# The releases these patches were checked against: requirements.txt's warcio>=1.7.4,<1.9.
SUPPORTED_RELEASES = ((1, 7, 4), (1, 9))
# The module of warcio that writes warnings to its `sys.stderr` when ReadWarc reads: its reader's (`_decompress`).
# (ArchiveIterator's `_consume_blanklines` is overridden here; DigestVerifyingReader writes only with check_digests.)
MODULES_WRITING_STDERR = (bufferedreaders,)
# What is patched or overridden here, each checked before: (owner, attribute).
PATCHED = (
    *((module, "sys") for module in MODULES_WRITING_STDERR),
    (recordloader, "logger"),
    (ArchiveIterator, "_consume_blanklines"),
    (ArchiveIterator, "read_to_end"),
    (ArchiveIterator, "INC_RECORD"),
    (BufferedReader, "_fillbuff"),
    (BufferedReader, "empty"),
    (BufferedReader, "readline"),
    (BufferedReader, "DECOMPRESSORS"),
    (BufferedReader, "_decompress"),
    (ArcWarcRecordLoader, "load_http_headers"),
    (StatusAndHeadersParser, "parse"),
)
# The longest line read after a record where a blank line should be: longer lines are damage anyway.
TRAILING_LINE_LIMIT = 1 << 16
# No WARC header line is this long: a longer one is damage.
HEADER_LINE_LIMIT = 1 << 20
# The record types whose block is about a target URI (warcio parses their HTTP headers).
TARGETED_TYPES = ("response", "request", "revisit")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def check_warcio(version: str | None = None) -> None:
    """Raises RuntimeError, in one line, unless warcio is a release these patches were checked against and has what
    they patch."""
    version = version or importlib.metadata.version("warcio")
    lowest, above = SUPPORTED_RELEASES
    supported = f"warcio>={'.'.join(map(str, lowest))},<{'.'.join(map(str, above))}"
    if not lowest <= _release(version) < above:
        raise RuntimeError(f"warcio {version} is not a release that transforms/stages/read_warc/warcio_compat.py was checked "
                           f"against: install {supported} (requirements.txt), or check its patches against this "
                           "release and widen the range")
    for owner, name in PATCHED:
        if not hasattr(owner, name):
            raise RuntimeError(f"warcio {version} has no {owner.__name__}.{name}, which "
                               f"transforms/stages/read_warc/warcio_compat.py patches: install {supported} "
                               "(requirements.txt), or port the patch")


class _ThreadStderr(logging.Filter):
    """What warcio's reader module sees as `sys`: it writes its warnings to `sys.stderr` (and the loader logs some).

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

    def redirect(self, sink):
        """Sends this thread's warnings to `sink` (None: to stderr); returns where they went before."""
        previous = getattr(self._local, "sink", None)
        self._local.sink = sink
        return previous


WARCIO_SYS = _ThreadStderr()


def _route_warnings() -> None:
    for module in MODULES_WRITING_STDERR:
        module.sys = WARCIO_SYS
    recordloader.logger.addFilter(WARCIO_SYS)


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


class DamagedHeader(Exception):
    """A record's WARC headers that cannot be a record's."""


class BoundedLines:
    """A warcio reader whose lines read without a length (a record's WARC headers) are bounded (`HEADER_LINE_LIMIT`).

    (warcio's parser reads header lines with no length; the HTTP headers are read within the record's length.)
    """

    def readline(self, length=None):
        if length is not None:
            return super().readline(length)
        # (warcio's readline with a length may stop before it, short of a line end: it is called again.)
        line = b""
        while len(line) <= HEADER_LINE_LIMIT:
            piece = super().readline(HEADER_LINE_LIMIT + 1 - len(line))
            line += piece
            if not piece or line.endswith(b"\n"):
                return line
        raise DamagedHeader(f"a WARC header line over {HEADER_LINE_LIMIT:,} bytes")


class RaisingDecompression:
    """A warcio reader that raises when a gzip member (zstd, LZ4 frame) breaks after some of it decompressed.

    warcio's `_decompress` prints the error and returns nothing, and its reader
    then feeds the rest of the file to the broken decompressor: the record
    keeps what decompressed before, and every record after it is lost, with no
    error. Raised, the damage is a dead letter and reading resumes at the next
    intact record. (A failure on a member's first bytes is warcio's to decide:
    a stream that is not compressed.)
    """

    def _decompress(self, data):
        if self.decompressor and data and self.num_block_read:
            return self.decompressor.decompress(data)
        return super()._decompress(data)


class BoundedReader(BoundedLines, RaisingDecompression, DecompressingBufferedReader):
    """warcio's reader (of a file not compressed, or gzipped), with bounded header lines, inflating with zlib-ng."""

    # warcio makes the decompressor of each member by its name from `DECOMPRESSORS`.
    DECOMPRESSORS = {**DecompressingBufferedReader.DECOMPRESSORS, "gzip": gunzip_decompressor}


class _RememberingParser(StatusAndHeadersParser):
    """warcio's header parser, keeping the last headers it read whole."""

    last = None

    def parse(self, stream, full_statusline=None):
        self.last = super().parse(stream, full_statusline)
        return self.last


class RecordLoader(ArcWarcRecordLoader):
    """warcio's record parser, saying what is missing where warcio would fail on it."""

    def __init__(self, verify_http: bool = True, arc2warc: bool = True):
        super().__init__(verify_http=verify_http, arc2warc=arc2warc)
        self.warc_parser = _RememberingParser(self.WARC_TYPES)

    def forget(self) -> None:
        """Called before a record is parsed: `last_read` is of that record only."""
        self.warc_parser.last = None

    def last_read(self) -> tuple[str, str] | None:
        """(record id, URL) of the WARC record whose headers were read since `forget` (None: none was)."""
        headers = self.warc_parser.last
        if headers is None:
            return None
        return headers.get_header("WARC-Record-ID", ""), headers.get_header("WARC-Target-URI", "")

    def load_http_headers(self, rec_type, uri, stream, length):
        if uri is None and rec_type in TARGETED_TYPES:
            raise DamagedHeader(f"a WARC {rec_type} record without WARC-Target-URI")
        return super().load_http_headers(rec_type, uri, stream, length)


class FrameDecompressor:
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

    def flush(self) -> bytes:
        # (warcio flushes a zlib decompressor when it closes it; a frame's decompressor has nothing to flush.)
        return b""


class FramedReader(BoundedLines, RaisingDecompression, DecompressingBufferedReader):
    """warcio's reader of gzip members, for frames of another codec (zstd, LZ4): a new decompressor per frame."""

    def __init__(self, stream: BinaryIO, framing: Framing):
        self.DECOMPRESSORS = {framing.name: lambda: FrameDecompressor(framing.new_decompressor())}
        super().__init__(stream, block_size=framing.read_size, decomp_type=framing.name)


class RecordIterator(ArchiveIterator):
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

    def __init__(self, stream: BinaryIO, form: Format):
        # ARC records come with the headers of the WARC record they would be.
        super().__init__(stream, arc2warc=form.arc)
        # (Header lines bounded, a missing target URI said so: `RecordLoader`.)
        self.loader = RecordLoader(verify_http=False, arc2warc=form.arc)
        if form.framing is not None and form.framing.new_decompressor is not None:
            self.reader = FramedReader(self.fh, form.framing)
        else:
            self.reader = BoundedReader(self.fh, block_size=BUFF_SIZE)

    def at_member_end(self) -> bool:
        """Whether the record read last ended where its gzip member (or frame) does: nothing of that member is left."""
        decompressor = self.reader.decompressor
        return decompressor is not None and decompressor.eof and self.reader.empty()

    def read_to_end(self, record=None):
        super().read_to_end(record)
        if self.cut_at is not None:
            # (warcio's offset counts the cut line it had read: the next record starts where that line does.)
            self.offset = self.cut_at

    def _consume_blanklines(self):
        if isinstance(self.fh, GunzipStream):
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
                WARCIO_SYS.stderr.write(self.INC_RECORD.format(err_offset, line))
                self.garbage_at = err_offset
                self.err_count += 1
            first_line = False


check_warcio()
_route_warnings()
