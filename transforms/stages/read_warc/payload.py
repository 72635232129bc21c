"""The HTTP payload of a response: transfer coding and Content-Encoding removed, within a bound.

`read_payload` reads the HTTP body of a WARC response record from its raw
stream, piece by piece: it removes chunked transfer coding, then decodes
`Content-Encoding` gzip, deflate or br, and stops as soon as the decoded
bytes exceed the bound. Memory stays within twice the bound (the pieces,
then the payload made of them) whatever the record holds: a 5 KB gzip body
that inflates to gigabytes, a chunk that claims 2^64 bytes.

What crawls store, and what comes of it:

* A body labelled chunked whose first line is not a chunk-size line was
  stored decoded (some crawlers keep the header): it is taken as it is.
* A body that ends inside a chunk, before the last chunk, or inside a
  compressed stream is a capture the connection cut: what was received is
  the payload (as warcio reads it).
* A body whose first bytes do not decode as its Content-Encoding was sent
  without it (servers that label plain HTML gzip): it is taken as it is;
  deflate is tried as zlib, then as raw deflate.
* Chunk framing that breaks once it has begun (a size line that is not one,
  a size over 2 GiB, a chunk not followed by CRLF), or a compressed stream
  that breaks after some output, is `MalformedPayload`, raised with where it
  broke and how far decoding got: the bytes after the break cannot be told
  apart from the page, so the payload is not guessed at.

gzip and deflate are inflated by zlib-ng, as ReadWarc's gzip members are
(`read_warc.formats`). Only brotli's public API is used (`Decompressor.process` with
`output_buffer_limit`, `can_accept_more_data`, `is_finished`: brotli 1.2 and
later; 1.1's `process` has no output limit, so one call can inflate a small
br body to gigabytes).
"""

from __future__ import annotations

import re
from itertools import chain
from typing import BinaryIO, Callable, Iterator

import brotli
from zlib_ng import zlib_ng

from transforms.document import describe_error

# Bytes read from the record, and the most decoded bytes made, at a time.
PIECE = 1 << 16
DEFAULT_MAX_PAGE_BYTES = 32 << 20
# A longer chunk-size line is not one (extensions included).
MAX_SIZE_LINE = 1024
# warcio's sanity limit for one chunk: a bigger size is not a size.
MAX_CHUNK = 1 << 31
CHUNK_SIZE_LINE = re.compile(rb"[ \t]*([0-9a-fA-F]+)[ \t]*(;[^\r\n]*)?\r?\n")
# What a size line of a broken encoding looks like: a number where a chunk should start.
SIZE_LIKE = re.compile(rb"[ \t]*[-+]?[0-9a-fA-F]+[ \t]*(;[^\r\n]*)?\r?\n")
QUOTED = 40


class PayloadTooLarge(Exception):
    """The decoded payload is bigger than the bound."""

    def __init__(self, max_bytes: int, encoding: str):
        coded = f" (Content-Encoding {encoding})" if encoding else ""
        super().__init__(f"the payload{coded} decodes to more than {max_bytes} bytes")


class MalformedPayload(Exception):
    """Transfer or content coding that breaks part way; says where and how far decoding got."""


def _quote(data: bytes) -> str:
    return repr(data[:QUOTED]) + ("..." if len(data) > QUOTED else "")


class _Body:
    """The raw HTTP body: reads, and lines, with a count of the bytes consumed."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._held = b""
        self.consumed = 0

    def read(self, size: int) -> bytes:
        if self._held:
            data, self._held = self._held[:size], self._held[size:]
        else:
            data = self._stream.read(size)
        self.consumed += len(data)
        return data

    def line(self) -> bytes:
        """Up to and including the next LF, at most MAX_SIZE_LINE + 1 bytes."""
        line = b""
        while b"\n" not in line and len(line) <= MAX_SIZE_LINE:
            piece = self.read(MAX_SIZE_LINE + 1 - len(line))
            if not piece:
                break
            line += piece
        end = line.find(b"\n") + 1 or len(line)
        self.unread(line[end:])
        return line[:end]

    def unread(self, data: bytes) -> None:
        self._held = data + self._held
        self.consumed -= len(data)


def _pieces(body: _Body) -> Iterator[bytes]:
    while piece := body.read(PIECE):
        yield piece


def _dechunked(body: _Body) -> Iterator[bytes]:
    first = body.line()
    if not SIZE_LIKE.fullmatch(first):
        # Stored decoded under a chunked header: the body is the payload.
        body.unread(first)
        yield from _pieces(body)
        return
    line, decoded = first, 0
    while True:
        match = CHUNK_SIZE_LINE.fullmatch(line)
        size = int(match.group(1), 16) if match else -1
        if not match or size > MAX_CHUNK:
            if not line:
                return  # the capture ends before the last chunk
            raise MalformedPayload(
                f"malformed chunked transfer coding: {_quote(line)} where a chunk size should be, at byte "
                f"{body.consumed - len(line)} of the body, after {decoded} bytes of chunks")
        if size == 0:
            # Trailer fields up to the blank line; what follows is not part of the message.
            while body.line().strip():
                pass
            return
        left = size
        while left and (data := body.read(min(left, PIECE))):
            left -= len(data)
            decoded += len(data)
            yield data
        if left:
            return  # the capture ends inside this chunk
        end = body.line()
        if end.strip():
            raise MalformedPayload(
                f"malformed chunked transfer coding: a chunk of {size} bytes is followed by {_quote(end)}, "
                f"not CRLF, at byte {body.consumed - len(end)} of the body, after {decoded} bytes of chunks")
        if not end.endswith(b"\n"):
            return  # the capture ends right after this chunk
        line = body.line()


class _Zlib:
    def __init__(self, wbits: int):
        self._decompressor = zlib_ng.decompressobj(wbits)

    def decode(self, data: bytes) -> Iterator[bytes]:
        """Output for `data` in pieces of at most PIECE; b"" asks for what is left."""
        while not self._decompressor.eof:
            out = self._decompressor.decompress(data, PIECE)
            yield out
            data = self._decompressor.unconsumed_tail
            if not data and len(out) < PIECE:
                return

    def finished(self) -> bool:
        return self._decompressor.eof


class _Brotli:
    def __init__(self):
        self._decompressor = brotli.Decompressor()

    def decode(self, data: bytes) -> Iterator[bytes]:
        """Output for `data` in pieces of at most about 32 KiB (brotli's smallest); b"" asks for what is left."""
        decompressor = self._decompressor
        if decompressor.is_finished():
            return  # bytes after the end of the stream are not part of it (as for zlib)
        out = decompressor.process(data, output_buffer_limit=PIECE)
        yield out
        # It may hold output back even once it takes more input: the next call gives it.
        while not decompressor.is_finished() and (not decompressor.can_accept_more_data() or (out and not data)):
            out = decompressor.process(b"", output_buffer_limit=PIECE)
            yield out

    def finished(self) -> bool:
        return self._decompressor.is_finished()


# Each Content-Encoding and the decoders to try in turn on its first bytes.
DECODERS: dict[str, tuple[Callable[[], _Zlib | _Brotli], ...]] = {
    "gzip": (lambda: _Zlib(16 + zlib_ng.MAX_WBITS),),
    "deflate": (lambda: _Zlib(zlib_ng.MAX_WBITS), lambda: _Zlib(-zlib_ng.MAX_WBITS)),
    "br": (_Brotli,),
}
DECODE_ERRORS = (zlib_ng.error, brotli.error)


def _decoded(pieces: Iterator[bytes], encoding: str, max_bytes: int) -> Iterator[bytes]:
    """`pieces` decoded as `encoding`, or as they are when no decoder makes sense of their start."""
    makers = list(DECODERS[encoding])
    decoder = makers.pop(0)()
    # The input before the first decoded byte, for the next decoder or as the
    # payload; at most the bound (past it, a failure is corruption).
    held: list[bytes] | None = []
    held_bytes = produced = 0
    # b"" at the end asks the decoder for what it holds back.
    stream = chain(pieces, (b"",))
    for piece in stream:
        if held is not None:
            held.append(piece)
            held_bytes += len(piece)
        feed = [piece]
        while feed:
            try:
                for data in feed:
                    for out in decoder.decode(data):
                        if out:
                            produced += len(out)
                            held = None
                            yield out
                feed = []
            except DECODE_ERRORS as error:
                if held is None:
                    raise MalformedPayload(f"corrupt {encoding} Content-Encoding after {produced} decoded bytes: "
                                           f"{describe_error(error)}") from error
                if not makers:
                    yield from held
                    yield from stream
                    return
                decoder, feed = makers.pop(0)(), list(held)
        if decoder.finished():
            return
        if held_bytes > max_bytes:
            held = None


def read_payload(stream: BinaryIO, transfer_encoding: str, content_encoding: str, max_bytes: int) -> bytes:
    """The decoded HTTP payload of `stream` (the body after the HTTP headers), at most `max_bytes`.

    Raises PayloadTooLarge past the bound (the stream is then left part
    read) and MalformedPayload where a coding breaks part way.
    """
    body = _Body(stream)
    codings = [coding.strip() for coding in transfer_encoding.lower().split(",")]
    pieces = _dechunked(body) if codings[-1] == "chunked" else _pieces(body)
    encoding = content_encoding.strip().lower()
    if encoding in DECODERS:
        pieces = _decoded(pieces, encoding, max_bytes)
    else:
        encoding = ""
    payload, size = [], 0
    for piece in pieces:
        size += len(piece)
        if size > max_bytes:
            raise PayloadTooLarge(max_bytes, encoding)
        payload.append(piece)
    return b"".join(payload)
