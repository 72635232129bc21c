"""Skimming: the records of a file gzipped per record that are not responses, read without warcio.

Two of a Common Crawl capture's three records are not responses (its request and its metadata): `classify`
skips each from its WARC-Type alone, as a `non-response` skip. warcio reads each header line through three
layers of buffered readers, and a request's HTTP headers too (about 0.3 ms a record, most of the time a crawl
of those records costs); `skim` inflates such a gzip member in one call, checks that it holds one whole,
well-formed record and nothing else, and gives the same `Skip` warcio's reading would. Whatever it is not sure
of (another type, a header it would read otherwise than warcio, a member that is not whole, damage) it leaves,
where it starts, to warcio (`read_warc`), so nothing but the speed differs.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Iterator

from transforms.document import Skip
from transforms.stages.read_warc.formats import GZIP_FRAMING, Format, gunzip_decompressor
from transforms.vocabulary import NON_RESPONSE

# The record types skimmed: every one a `non-response` skip whatever its headers say (`classify._classify`).
SKIMMED_TYPES = frozenset({"request", "metadata", "warcinfo"})
STATUS_LINES = (b"WARC/1.0", b"WARC/1.1")
# Bytes read from the file at first (a response's WARC headers, to leave it to warcio), then at a time, and
# fed to the inflater at a time.
FIRST_READ_BYTES = 2048
READ_BYTES = 1 << 16
PIECE_BYTES = 1024
# What `_skimmed` says of a member that goes on past the bytes read.
MORE = "more"
# A request or metadata record of Common Crawl's is a few KB: a member that is not whole in this much is warcio's.
MEMBER_LIMIT = READ_BYTES // 2
HEADER_END = b"\r\n\r\n"


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


def _inflated(inflate, member: memoryview, start: int, until: bytes | None) -> tuple[bytes, int]:
    """What `inflate` gives of `member` from `start`, fed a piece at a time (no copy of the rest of the buffer each
    time), until the member ends, the output holds `until`, or `MEMBER_LIMIT` bytes were fed; and where the feeding
    got to."""
    pieces = []
    while not inflate.eof and start < min(len(member), MEMBER_LIMIT):
        pieces.append(inflate.decompress(member[start:start + PIECE_BYTES]))
        start += PIECE_BYTES
        if until is not None and until in pieces[-1]:
            break
    return b"".join(pieces), start


def _skimmed(member: memoryview, offset: int, source_file: str) -> tuple[Skip, int] | str | None:
    """The skip of the record of the gzip member at the start of `member` (which starts at `offset` of the file),
    and the member's length; None where it is warcio's to read; `MORE` where `member` holds only part of it."""
    inflate = gunzip_decompressor()
    try:
        head, fed = _inflated(inflate, member, 0, HEADER_END)
    except Exception:  # noqa: BLE001 - damage is warcio's to report
        return None
    end = head.find(HEADER_END)
    if end < 0:
        return _cut(inflate, member, fed)
    headers = _headers(head[:end])
    if headers is None:
        return None
    record_type = headers.get("warc-type")
    length = headers.get("content-length", "")
    url = headers.get("warc-target-uri")
    if record_type not in SKIMMED_TYPES or not (length.isascii() and length.isdigit()):
        return None
    if (url is None and record_type == "request") or (url is not None and (" " in url or url.startswith("<"))):
        return None  # (warcio refuses it, or mends it with a warning)
    try:
        rest, fed = _inflated(inflate, member, fed, None)
    except Exception:  # noqa: BLE001
        return None
    if not inflate.eof:
        return _cut(inflate, member, fed)
    # (One record, then the blank line warcio reads after it, and the member ends: nothing for warcio to say.)
    whole = head + rest
    if len(whole) != end + 2 * len(HEADER_END) + int(length) or not whole.endswith(HEADER_END):
        return None
    return (Skip(NON_RESPONSE, source_file, offset, record_type, headers.get("warc-record-id", ""), url or "",
                 record_type), min(fed, len(member)) - len(inflate.unused_data))


def _cut(inflate, member: memoryview, fed: int) -> str | None:
    """`MORE` where the inflater used all of `member`, shorter than `MEMBER_LIMIT`, without the member ending."""
    return MORE if not inflate.eof and fed >= len(member) and len(member) < MEMBER_LIMIT else None


def skim(stream: BinaryIO, source_file: str, progress) -> Iterator[Skip]:
    """The skips of the records from `progress.next_offset` on that are skimmed, claimed one by one as `read_warc`
    claims records; returns True where the file ends (its end claimed), False where a record is warcio's to read
    (`progress.next_offset` is where it starts) or another range's (`progress.handed_on`).

    Reads little at first (a response's headers, when warcio is to read it), more once records are skimmed."""
    stream.seek(progress.next_offset)
    data, at, more = b"", progress.next_offset, True  # bytes read, where they start, whether the stream has more
    while True:
        offset = progress.next_offset
        if not progress.claim(offset):
            progress.handed_on = True
            return False
        while True:
            member = memoryview(data)[offset - at:]
            found = _skimmed(member, offset, source_file) if len(member) else MORE
            if found is not MORE or not more:
                break
            piece = stream.read(READ_BYTES if data else FIRST_READ_BYTES)
            more = bool(piece)
            data, at = bytes(member) + piece, offset
        if not len(member):
            return True
        if found is None or found is MORE:
            return False
        skip, length = found
        progress.next_offset = offset + length
        progress.emitted += 1
        yield skip
