"""How a WARC (or ARC) file is stored, from its first bytes: `detect_format`, and the framing of each compression.

A file is WARC or ARC (version 1), not compressed, gzipped as a whole, or
compressed per record: gzip members, zstd frames (the IIPC's draft, with an
optional dictionary in a skippable frame at the start) or LZ4 frames (as
FastWARC writes them). A `Framing` says what reading one frame per record
needs; a `Format`, how a file is stored and where its records start.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass
from typing import BinaryIO, Callable

import lz4.frame
import zstandard
from zlib_ng import zlib_ng

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
# gzip is inflated by zlib-ng (about 1.7x zlib's speed, the same bytes out, and the same errors, message for
# message, where a member is damaged: tests/test_inflate.py): every gzip of a WARC file is read through these
# (`transforms.stages.read_warc.payload` inflates a gzip Content-Encoding with zlib-ng too).
GZIP_ERROR = zlib_ng.error


def gunzip_decompressor():
    """A decompressor of one gzip member, which leaves the bytes after it in `unused_data`."""
    return zlib_ng.decompressobj(16 + zlib_ng.MAX_WBITS)


# Bytes of a candidate gzip member to decompress when looking for `WARC/`.
RESYNC_PROBE = 4096


def gunzip_head(data: bytes, size: int) -> bytes:
    try:
        return gunzip_decompressor().decompress(data, size)
    except GZIP_ERROR:
        return b""


def _gzip_cut_short(raw: BinaryIO) -> bool:
    decompressor = gunzip_decompressor()
    while chunk := raw.read(RESYNC_CHUNK):
        try:
            decompressor.decompress(chunk, 1)
            while decompressor.unconsumed_tail and not decompressor.eof:
                decompressor.decompress(decompressor.unconsumed_tail, RESYNC_CHUNK)
        except GZIP_ERROR:
            return False
        if decompressor.eof:
            return False
    return True


class Framing:
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


GZIP_FRAMING = Framing("gzip", GZIP_MAGIC, gunzip_head, _gzip_cut_short)


def zstd_framing(dictionary: zstandard.ZstdCompressionDict | None) -> Framing:
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

    return Framing("zstd", ZSTD_MAGIC, head, cut_short, decompressor.decompressobj, read_size=ZSTD_READ_SIZE)


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


LZ4_FRAMING = Framing("lz4", LZ4_MAGIC, _lz4_head, _lz4_cut_short, lz4.frame.LZ4FrameDecompressor)


@dataclass(frozen=True)
class Format:
    """How a file is stored, as its first bytes tell: its records (WARC or ARC) and their compression.

    `layout` is `none` (not compressed), `file` (one gzip stream) or `record`
    (a gzip member, zstd or LZ4 frame per record, told by `framing`);
    `records_start` is where the first record starts (after a zstd dictionary);
    `damage`, what is wrong with what precedes it ("": nothing).
    """

    name: str
    layout: str = "none"
    framing: Framing | None = None
    arc: bool = False
    records_start: int = 0
    damage: str = ""

    def starts_record(self, data: bytes) -> bool:
        """Whether uncompressed `data` starts like a record of this format."""
        return bool(ARC_HEADER.match(data)) if self.arc else data.startswith(b"WARC/")

    def frame_starts_record(self, data: bytes) -> bool:
        return self.starts_record(self.framing.head(data, 512 if self.arc else 16))


WARC = Format("WARC")


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


def starts_arc(data: bytes) -> bool:
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


def detect_format(open_file: Callable[[], BinaryIO]) -> Format:
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
            return Format("WARC.zst", "record", zstd_framing(dictionary), records_start=records_start, damage=damage)
    if head.startswith(ZSTD_MAGIC):
        return Format("WARC.zst", "record", zstd_framing(None))
    if head.startswith(LZ4_MAGIC):
        return Format("WARC.lz4", "record", LZ4_FRAMING)
    if starts_arc(head):
        return Format("ARC", arc=True)
    if not head.startswith(GZIP_MAGIC):
        return WARC
    decompressor = gunzip_decompressor()
    try:
        first = decompressor.decompress(head, RESYNC_CHUNK)
    except GZIP_ERROR:
        return Format("WARC.gz", "record", GZIP_FRAMING)  # damaged from the start: reading reports it
    arc = starts_arc(first)
    name = "ARC.gz" if arc else "WARC.gz"
    # (A first member that does not end in the head holds more than a record can, or the file ends inside it.)
    if RECORD_MARKERS[arc].search(first) or not decompressor.eof:
        return Format(name, "file", GZIP_FRAMING, arc=arc)
    second = gunzip_head(decompressor.unused_data, RESYNC_PROBE)
    if _ends_inside_its_record(first, arc) and not (starts_arc(second) if arc else second.startswith(b"WARC/")):
        return Format(name, "file", GZIP_FRAMING, arc=arc)
    return Format(name, "record", GZIP_FRAMING, arc=arc)


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
    return starts_arc(head) if form.arc else head.startswith(b"WARC/")


# Where an uncompressed record may start: after a newline.
RECORD_MARKERS = {False: re.compile(rb"\nWARC/1\."), True: re.compile(rb"\n(?=" + ARC_HEADER.pattern + rb")")}
