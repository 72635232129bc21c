"""Reading a file only if it is a regular file: a FIFO, a device (a link to `/dev/zero`), a directory or a
socket would block its reader, or never end.

Local paths are opened without blocking and checked (`fstat`, after links) before anything is read; with
`follow_links=False`, a symbolic link is not followed at all (`O_NOFOLLOW`): for the files a tool copies out of
a directory that others may write, where a link would have it copy a file that only its user may read. A path
on another file system (gs://, https://, ...) has none of these, and is opened by Beam's FileSystems,
imported only then: reading a local corpus imports no Beam.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import mmap
import os
import re
import stat
from typing import Callable

# A path on another file system, as Beam's FileSystems.get_scheme tells one.
SCHEME = re.compile(r"[a-z]+://")
KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


class NotARegularFile(OSError):
    """A local path that names a FIFO, a device, a directory or a socket: it is not read."""


def kind_of(mode: int) -> str:
    """What a file of `mode` is, in words."""
    return "a regular file" if stat.S_ISREG(mode) else next((name for test, name in KINDS if test(mode)), "not a file")


def open_regular(path: str, follow_links: bool = True):
    """`path` opened for reading, in binary: a local path only if it is a regular file (and, unless
    `follow_links`, not a symbolic link). Raises NotARegularFile."""
    if SCHEME.match(path):
        from apache_beam.io.filesystems import FileSystems

        from transforms.filesystems import (http_filesystem)  # noqa: F401 - FileSystems reads https:// and http:// with it

        return FileSystems.open(path, compression_type="uncompressed")
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW))
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_links:
            raise NotARegularFile("not a regular file (a symbolic link): not followed") from error
        raise
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"not a regular file ({kind_of(mode)}): not read")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def file_contents(path: str, follow_links: bool = True):
    """The contents of a file as a bytes-like object: a local regular file mapped (its pages are read as they are
    used, never all held at once), another file system's read whole; an empty file is b"". Raises
    NotARegularFile, as `open_regular`."""
    with open_regular(path, follow_links) as handle:
        if SCHEME.match(path) or os.fstat(handle.fileno()).st_size == 0:
            yield handle.read()
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


class ListedRead:
    """A file read as its listing names it (`size` and `sha256`: a manifest's, a completion record's), never past
    that size and digested as it passes, so that what is read is what was checked. Other bytes raise
    `damaged(how)`, `how` one of "longer", "shorter" or "sha256": at the file's end, or in `check_rest`, which
    reads what its reader left."""

    def __init__(self, handle, size: int, sha256: str, damaged: Callable[[str], Exception]):
        self._handle, self._size, self._sha256, self._damaged = handle, size, sha256, damaged
        self._left, self._digest = size, hashlib.sha256()

    def read(self, count: int = -1) -> bytes:
        wanted = self._left + 1 if count is None or count < 0 else min(count, self._left + 1)
        chunk = self._handle.read(wanted)
        if len(chunk) > self._left:
            raise self._damaged("longer")
        self._left -= len(chunk)
        self._digest.update(chunk)
        if not chunk and wanted:
            if self._left:
                raise self._damaged("shorter")
            if self._digest.hexdigest() != self._sha256:
                raise self._damaged("sha256")
        return chunk

    def check_rest(self, chunk: int = 1 << 20) -> None:
        while self.read(chunk):
            pass
