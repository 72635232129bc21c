"""File operations on exact paths, never on patterns.

Beam's `FileSystems.match` and, on local disks and GCS, `FileSystems.delete`
take glob patterns: a path with `*`, `?` or `[` in it (an output directory
named `run?` or `victim-*`) would match, and delete, other files. Paths are
paths: these functions name one file or directory each.

`open_regular` reads a local path only if it is a regular file: a FIFO, a
device (a link to `/dev/zero`), a directory or a socket would block the
reader, or never end.
"""

from __future__ import annotations

import os
import re
import shutil
import stat

from apache_beam.io.filesystems import FileSystems

from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it

GLOB_CHARACTER = re.compile(r"([*?\[])")


def escape_glob(path: str) -> str:
    """`path` as a Beam pattern that matches only itself (`[?]` matches `?`)."""
    return GLOB_CHARACTER.sub(r"[\1]", path)


def is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def remove_exactly(paths: list[str]) -> None:
    """Removes each file, or directory with its content, named in `paths`; a missing one is no error."""
    for path in paths:
        if is_local(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.remove(path)
        elif FileSystems.exists(path):
            # GCS deletes a prefix ending in "/" recursively without matching, and matches
            # anything else; S3 deletes the paths it is given.
            FileSystems.delete([escape_glob(path) if FileSystems.get_scheme(path) == "gs" else path])
        else:
            FileSystems.delete([path.rstrip("/") + "/"])


def names_in(directory: str, prefix: str = "") -> list[str]:
    """The names of the entries of `directory` that start with `prefix` (on object stores: of its objects
    and of the "directories" their paths go through)."""
    if is_local(directory):
        return sorted(name for name in os.listdir(directory) if name.startswith(prefix))
    base = directory.rstrip("/") + "/"
    pattern = escape_glob(base + prefix) + "**"
    return sorted({meta.path[len(base):].split("/", 1)[0] for meta in FileSystems.match([pattern])[0].metadata_list})


class NotARegularFile(OSError):
    """A local path that names a FIFO, a device, a directory or a socket: it is not read."""


KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """What a file of `mode` is, in words."""
    return "a regular file" if stat.S_ISREG(mode) else next((name for test, name in KINDS if test(mode)), "not a file")


def open_regular(path: str):
    """`path` opened for reading in binary: a local path only if it is a regular file (after links), checked
    without blocking on a FIFO or reading anything; a path of another file system as FileSystems opens it.
    Raises NotARegularFile."""
    if not is_local(path):
        return FileSystems.open(path, compression_type="uncompressed")
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"not a regular file ({kind_of(mode)}): not read")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
