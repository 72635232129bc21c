"""Skimming: the records of a file gzipped per record, read without warcio where they are plain.

Two of a Common Crawl capture's three records are not responses (its request and its metadata): `classify`
skips each from its WARC-Type alone, as a `non-response` skip. warcio reads each header line through three
layers of buffered readers, and a request's HTTP headers too (about 0.3 ms a record, most of the time a crawl
of those records costs); `skim` inflates such a gzip member in one call, checks that it holds one whole,
well-formed record and nothing else, and gives the same `Skip` warcio's reading would. A response whose member is
as plain (and its HTTP headers too) is read the same way, its headers parsed as warcio parses them, and handed
to `classify.read_record` as warcio's record would be: its outcome is the same. Whatever it is not sure of
(another type, a header it would read otherwise than warcio, a member that is not whole, damage) it leaves,
where it starts, to warcio (`read_warc`), so nothing but the speed differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from warcio.statusandheaders import StatusAndHeaders

from transforms.document import DeadLetter, Document, Skip
from transforms.stages.read_warc.classify import read_record
from transforms.stages.read_warc.formats import GZIP_FRAMING, Format, gunzip_decompressor
from transforms.vocabulary import NON_RESPONSE

# The record types skimmed: every one a `non-response` skip whatever its headers say (`classify._classify`).
SKIMMED_TYPES = frozenset({"request", "metadata", "warcinfo"})
STATUS_LINES = (b"WARC/1.0", b"WARC/1.1")
# Bytes read from the file at first (a record's WARC headers, to leave it to warcio), then at a time, twice as many
# each time up to `MOST_READ_BYTES` (a member that runs past them is inflated again from its start once more is
# read: few do, in that much; one record read alone, the page inspector's, reads little), and fed to the inflater
# at a time.
FIRST_READ_BYTES = 2048
READ_BYTES = 1 << 16
MOST_READ_BYTES = 1 << 20
PIECE_BYTES = 1024
# What `_skimmed` says of a member that goes on past the bytes read.
MORE = "more"
# A request or metadata record of Common Crawl's is a few KB: a member that is not whole in this much is warcio's.
MEMBER_LIMIT = 1 << 15
# A response's member is read whole up to this many bytes, inflated to at most `RESPONSE_BYTES`: a bigger one is
# warcio's, which reads it a piece at a time (0: every response is warcio's).
RESPONSE_MEMBER_LIMIT = 1 << 20
RESPONSE_BYTES = 8 << 20
# Bytes fed to the inflater at a time once a response's WARC headers are read.
RESPONSE_PIECE_BYTES = 1 << 14
HEADER_END = b"\r\n\r\n"
# The targets whose responses warcio reads HTTP headers of (`ArcWarcRecordLoader.HTTP_SCHEMES`).
HTTP_SCHEMES = ("http:", "https:")


def skims(form: Format) -> bool:
    """Whether records of files of `form` are skimmed: WARC (not ARC), gzipped per record."""
    return form.layout == "record" and not form.arc and form.framing is GZIP_FRAMING


# The headers a skip is made of, each line of one (warcio: the name before the first colon, spaces and tabs
# after it stripped, case aside).
NEEDED = re.compile(rb"^(warc-type|content-length|warc-record-id|warc-target-uri)[ \t]*:([^\r\n]*)", re.I | re.M)


def _headers(block: bytes) -> dict[str, str] | None:
    """The WARC headers a skip is made of, in `block` (the bytes before the blank line that ends them, the status
    line first), by lowercase name, the first of each, as warcio reads them; None where warcio might read them
    otherwise: a line end other than CRLF (warcio ends a line at LF), a continuation line, a byte not ASCII, one of
    those headers' values with a byte not printable, another status line."""
    if not (block.isascii() and block.startswith(STATUS_LINES) and block[len(STATUS_LINES[0]):][:2] == b"\r\n"):
        return None
    line_ends = block.count(b"\r\n")
    if block.count(b"\n") != line_ends or block.count(b"\r") != line_ends or b"\r\n " in block or b"\r\n\t" in block:
        return None
    headers: dict[str, str] = {}
    for name, value in NEEDED.findall(block):
        value = value.decode("ascii")
        if not value.isprintable():
            return None
        headers.setdefault(name.decode("ascii").lower(), value.strip())
    return headers


def _inflated(inflate, member: memoryview, start: int, until: bytes | None, limit: int = MEMBER_LIMIT,
              piece: int = PIECE_BYTES) -> tuple[list[bytes], int]:
    """What `inflate` gives of `member` from `start`, in pieces, fed `piece` bytes at a time (no copy of the rest of
    the buffer each time), until the member ends, the output holds `until`, or `limit` bytes were fed; and where the
    feeding got to. Raises OverflowError once it made more than `RESPONSE_BYTES`."""
    pieces, made = [], 0
    while not inflate.eof and start < min(len(member), limit):
        pieces.append(inflate.decompress(member[start:start + piece]))
        start += piece
        made += len(pieces[-1])
        if made > RESPONSE_BYTES:
            raise OverflowError(f"a member that inflates to more than {RESPONSE_BYTES} bytes")
        if until is not None and until in pieces[-1]:
            break
    return pieces, start


def _skimmed(member: memoryview, offset: int, source_file: str,
             read_response=None) -> tuple[Skip | Document | DeadLetter, int] | str | None:
    """The outcome of the record of the gzip member at the start of `member` (which starts at `offset` of the file),
    and the member's length; None where it is warcio's to read; `MORE` where `member` holds only part of it.
    `read_response(whole, headers_end, length, offset, member_end)`: the outcome of a response (None: warcio's),
    given its member inflated; without it, every response is warcio's."""
    inflate = gunzip_decompressor()
    try:
        head_pieces, fed = _inflated(inflate, member, 0, HEADER_END)
    except Exception:  # noqa: BLE001 - damage is warcio's to report
        return None
    head = b"".join(head_pieces)
    end = head.find(HEADER_END)
    if end < 0:
        return _cut(inflate, member, fed, MEMBER_LIMIT)
    headers = _headers(head[:end])
    if headers is None:
        return None
    record_type = headers.get("warc-type")
    length = headers.get("content-length", "")
    url = headers.get("warc-target-uri")
    response = record_type == "response" and read_response is not None and url is not None and url.startswith(
        HTTP_SCHEMES)
    if not (record_type in SKIMMED_TYPES or response) or not (length.isascii() and length.isdigit()):
        return None
    if (url is None and record_type == "request") or (url is not None and (" " in url or url.startswith("<"))):
        return None  # (warcio refuses it, or mends it with a warning)
    limit = RESPONSE_MEMBER_LIMIT if response else MEMBER_LIMIT
    try:
        rest, fed = _inflated(inflate, member, fed, None, limit, RESPONSE_PIECE_BYTES if response else PIECE_BYTES)
    except Exception:  # noqa: BLE001 - damage (or a member too big to hold) is warcio's
        return None
    if not inflate.eof:
        return _cut(inflate, member, fed, limit)
    # (One record, then the blank line warcio reads after it, and the member ends: nothing for warcio to say.)
    whole = b"".join((head, *rest))
    if len(whole) != end + 2 * len(HEADER_END) + int(length) or not whole.endswith(HEADER_END):
        return None
    member_length = min(fed, len(member)) - len(inflate.unused_data)
    if response:
        outcome = read_response(whole, end, int(length), offset, offset + member_length)
        return None if outcome is None else (outcome, member_length)
    return (Skip(NON_RESPONSE, source_file, offset, record_type, headers.get("warc-record-id", ""), url or "",
                 record_type), member_length)


def _cut(inflate, member: memoryview, fed: int, limit: int) -> str | None:
    """`MORE` where the inflater used all of `member`, shorter than `limit`, without the member ending."""
    return MORE if not inflate.eof and fed >= len(member) and len(member) < limit else None


def _status_and_headers(block: bytes, http: bool) -> StatusAndHeaders | None:
    """`block` (a status line and header lines, CRLF apart, without the blank line that ends them) as warcio's
    parser reads it (`StatusAndHeadersParser.parse`; a WARC status line is checked before); None where warcio might
    read it otherwise: a byte not ASCII, a line end other than CRLF, a continuation line, a line blank once its
    trailing whitespace is stripped (it would end the headers), a line without a colon (warcio leaves it out)."""
    line_ends = block.count(b"\r\n")
    if not block.isascii() or block.count(b"\n") != line_ends or block.count(b"\r") != line_ends:
        return None
    status, *lines = block.decode("ascii").split("\r\n")
    headers = []
    for line in lines:
        stripped = line.rstrip()
        if not stripped or line[0] in " \t" or ":" not in stripped:
            return None
        name, value = stripped.split(":", 1)
        headers.append((name.rstrip(" \t"), value.lstrip()))
    status = status.rstrip()
    if http:
        protocol, _, statusline = status.partition(" ")
        statusline = statusline.strip()
    else:
        protocol, statusline = status.upper(), ""
    return StatusAndHeaders(statusline, headers, protocol, len(block) + len(HEADER_END))


@dataclass
class _Record:
    """What `classify.read_record` reads of warcio's record."""

    rec_type: str
    rec_headers: StatusAndHeaders
    http_headers: StatusAndHeaders
    raw_stream: "_Body"


class _Body:
    """A response's HTTP body (a view of its inflated member) as warcio's record stream gives it: read a piece at a
    time, `limit` the bytes of it not read yet."""

    def __init__(self, data: memoryview):
        self._data, self._at = data, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else self._at + size
        piece = self._data[self._at:end]
        self._at += len(piece)
        return bytes(piece)

    def skip_rest(self) -> None:
        self._at = len(self._data)

    @property
    def limit(self) -> int:
        return len(self._data) - self._at


class _Position:
    """What `classify.read_record` asks of warcio's iterator: where the record starts (once its block is read to
    its end) and where its member ends."""

    def __init__(self, record: _Record, offset: int, end: int):
        self._record, self._offset, self.offset = record, offset, end

    def get_record_offset(self) -> int:
        self._record.raw_stream.skip_rest()
        return self._offset


def response_reader(source_file: str, progress, max_page_bytes: int):
    """`_skimmed`'s `read_response` for a file's records: a plain response read into its outcome by
    `classify.read_record`, as `read_warc` reads one through warcio (None: warcio's to read)."""

    def read_response(whole: bytes, end: int, length: int, offset: int, member_end: int):
        rec_headers = _status_and_headers(whole[:end], http=False)
        block_start = end + len(HEADER_END)
        block_end = block_start + length
        http_end = whole.find(HEADER_END, block_start, block_end)
        if rec_headers is None or not whole.startswith(b"HTTP/", block_start) or http_end < 0:
            return None
        http_headers = _status_and_headers(whole[block_start:http_end], http=True)
        if http_headers is None:
            return None
        body = memoryview(whole)[http_end + len(HEADER_END):block_end]
        record = _Record("response", rec_headers, http_headers, _Body(body))
        # (What fails in it is damage of this record, as when warcio reads it.)
        progress.reading = (rec_headers.get_header("WARC-Record-ID", ""), rec_headers.get_header("WARC-Target-URI", ""))
        outcome = read_record(_Position(record, offset, member_end), record, source_file, max_page_bytes,
                              progress.skip_truncated, progress.file_size, progress.screen)
        progress.reading = None
        return outcome

    return read_response


def skim(stream: BinaryIO, source_file: str, progress,
         max_page_bytes: int | None = None) -> Iterator[Skip | Document | DeadLetter]:
    """The outcomes of the records from `progress.next_offset` on that are skimmed, claimed one by one as `read_warc`
    claims records; returns True where the file ends (its end claimed), False where a record is warcio's to read
    (`progress.next_offset` is where it starts) or another range's (`progress.handed_on`). With `max_page_bytes`
    (`read_warc`'s), plain responses are read too (`response_reader`); without, they are warcio's.

    Reads little at first (a record's headers, when warcio is to read it), more once records are skimmed."""
    read_response = None if max_page_bytes is None else response_reader(source_file, progress, max_page_bytes)
    stream.seek(progress.next_offset)
    data, at, more = b"", progress.next_offset, True  # bytes read, where they start, whether the stream has more
    read_bytes = FIRST_READ_BYTES
    while True:
        offset = progress.next_offset
        if not progress.claim(offset):
            progress.handed_on = True
            return False
        while True:
            member = memoryview(data)[offset - at:]
            found = _skimmed(member, offset, source_file, read_response) if len(member) else MORE
            if found is not MORE or not more:
                break
            # (A member bigger than what was read gets as much again: a response's is inflated anew each time.)
            piece = stream.read(max(read_bytes, len(member)))
            read_bytes = READ_BYTES if read_bytes == FIRST_READ_BYTES else min(2 * read_bytes, MOST_READ_BYTES)
            more = bool(piece)
            data, at = bytes(member) + piece, offset
        if not len(member):
            return True
        if found is None or found is MORE:
            return False
        outcome, length = found
        progress.next_offset = offset + length
        progress.emitted += 1
        yield outcome
