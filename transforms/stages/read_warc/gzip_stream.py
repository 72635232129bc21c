"""The decompressed stream of a file gzipped as a whole, which says where the end of the file cuts it short."""

from __future__ import annotations

from typing import BinaryIO, Callable

from transforms.stages.read_warc.formats import RESYNC_CHUNK, gunzip_decompressor

class CutStream(Exception):
    """A compressed stream that the end of the file cuts short."""


class GunzipStream:
    """The decompressed bytes of a gzip stream, raising CutStream where the file cuts it short.

    (warcio takes an EOFError, which `gzip.GzipFile` raises there, for the
    end of the file, and drops the cut record without a word.)
    """

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._decompressor = gunzip_decompressor()
        self._buffer = b""
        # Where the bytes not read yet start in `_buffer` (slicing off each read copied the rest: 1 MiB per 16 KiB read).
        self._start = 0
        self._position = 0
        self._finished = False
        self._cut = False
        # While a record's block is read (its headers were), the cut ends it as the end of a file would
        # (`reader._iterate`); once a block was cut so, the file has ended.
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
                self._decompressor = gunzip_decompressor()
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

    def __enter__(self) -> "GunzipStream":
        return self

    def __exit__(self, *exc_info) -> None:
        self._raw.close()


def decompressed(open_file: Callable[[], BinaryIO]) -> Callable[[], GunzipStream]:
    """Opens the decompressed stream of a whole-file gzip, as `open_file` opens the file."""
    return lambda: GunzipStream(open_file())
