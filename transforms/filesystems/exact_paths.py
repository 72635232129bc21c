"""File operations on exact paths, never on patterns.

Beam's `FileSystems.match` and, on local disks and GCS, `FileSystems.delete`
take glob patterns: a path with `*`, `?` or `[` in it (an output directory
named `run?` or `victim-*`) would match, and delete, other files. Paths are
paths: these functions name one file or directory each.
"""

from __future__ import annotations

import os
import re
import shutil

from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it

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
