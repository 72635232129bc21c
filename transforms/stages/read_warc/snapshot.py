"""An input file as the build listed it: read and digested within the size listed at the start.

A file appended to during a build (a crawler still writing it, a copy in
progress) is read, and digested for the manifest, as it was when the inputs
were matched: its records and its size and SHA-256 come from the same bytes.
A file that is shorter than listed has changed under the build, and reading
it raises `FileChanged` (the build fails with that one line) rather than
guess which of its bytes are the ones listed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import BinaryIO, Callable

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.locations import redacted
from transforms.report.manifest import READ_CHUNK, FileDigest


class FileChanged(Exception):
    """An input file that no longer holds the bytes it was listed with."""


class ListedBytes:
    """A seekable binary stream of the first `size` bytes of the file `path` (however long it is now); `seen`, if
    given, is called with (position, bytes) of each read."""

    def __init__(self, path: str, size: int, seen: Callable[[int, bytes], None] | None = None):
        self._path = path
        self._size = size
        self._seen = seen
        # Compression is the reader's business: the file is read as it is stored.
        self._raw = FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        left = max(self._size - self._position, 0)
        wanted = left if size is None or size < 0 else min(size, left)
        data = self._raw.read(wanted) if wanted else b""
        while data and len(data) < wanted:  # (a short read is not the end of the file)
            more = self._raw.read(wanted - len(data))
            if not more:
                break
            data += more
        if len(data) < wanted:
            raise FileChanged(f"{redacted(self._path)} changed during the build: listed at {self._size:,} bytes, it now ends at "
                              f"{self._position + len(data):,}")
        if self._seen is not None:
            self._seen(self._position, data)
        self._position += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        self._position = {0: 0, 1: self._position, 2: self._size}[whence] + offset
        if self._position < self._size:
            self._raw.seek(self._position)
        return self._position

    def tell(self) -> int:
        return self._position

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> "ListedBytes":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def open_listed(path: str, size: int, seen: Callable[[int, bytes], None] | None = None) -> BinaryIO:
    """The file `path` as listed at `size` bytes (`ListedBytes`)."""
    return ListedBytes(path, size, seen)


class RangeDigest:
    """SHA-256 of a file's bytes from `start`, taken from the reads of a reader as they pass (`ListedBytes`'s
    `seen`): each read that reaches where the digest got to carries it on, so a reader that reads on from `start`
    has its range digested without reading it twice; `finish` reads only what the reads left out."""

    def __init__(self, start: int):
        self.start = start
        self._to = start
        self._sha = hashlib.sha256()

    def seen(self, position: int, data: bytes) -> None:
        if position <= self._to < position + len(data):
            self._sha.update(memoryview(data)[self._to - position:])
            self._to = position + len(data)

    def finish(self, path: str, size: int, to: int) -> tuple[int, str]:
        """(where the digest ends: `to` at least, within `size`; its SHA-256 in hex)."""
        to = min(to, size)
        if self._to < to:
            with open_listed(path, size) as handle:
                handle.seek(self._to)
                while self._to < to:
                    self.seen(self._to, handle.read(min(READ_CHUNK, to - self._to)))
        return self._to, self._sha.hexdigest()


def range_digest(path: str, size: int, start: int, to: int) -> str:
    """SHA-256 of the bytes [start, to) of the file `path` as listed at `size` bytes."""
    return RangeDigest(start).finish(path, size, to)[1]


@dataclass(frozen=True)
class InputDigest(FileDigest):
    """An input file's size and SHA-256, of the bytes it was listed with (the manifest's `inputs`)."""


def digest_listed(path: str, size: int) -> InputDigest:
    sha = hashlib.sha256()
    with open_listed(path, size) as handle:
        while chunk := handle.read(READ_CHUNK):
            sha.update(chunk)
    return InputDigest(path, size, sha.hexdigest())
