"""Inputs from a listing: a Common Crawl snapshot by name (`--crawl`), or a `warc.paths.gz` given as `--input`.

Common Crawl publishes, for each snapshot, `crawl-data/NAME/warc.paths.gz`:
one line per WARC file, its path in the crawl's bucket
(`crawl-data/NAME/segments/SEGMENT/warc/....warc.gz`), to be read from
`https://data.commoncrawl.org/` (`--crawl-source https`, the default) or
`s3://commoncrawl/` (`--crawl-source s3`, for jobs in AWS's us-east-1).
`--crawl-base-url` replaces that base (a mirror, or a local server in the
tests). `--files START:END` chooses lines START to END-1 of the listing.

A listing's line is resolved like this: an absolute URL or path is taken as
it is; in a listing that lies under a `crawl-data/` directory (Common
Crawl's layout, wherever it is served from), a line is relative to the
directory above `crawl-data/`; a `crawl-data/...` line of a listing kept
elsewhere (Common Crawl's listing, downloaded) is relative to the crawl's
base; any other line is relative to the listing's own directory.

A listing read over the network (a URL, an `s3://` or `gs://` path) may
only name files on its own server (the same scheme, host and port) or under
the crawl's base: not a local path, nor another server's or scheme's file,
which a listing someone else wrote could otherwise make a build read.

The listing is read when the command starts, as a stream (decompressed as
it is read), only as far as `--files` needs (lines of at most `LINE_BYTES_LIMIT` bytes, a listing of at
most `LISTING_BYTES_LIMIT` uncompressed), and the build records the files it
resolved to as its inputs: `--rebuild` reads the same files, whatever the
listing says later.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.locations import origin, redacted

CRAWL_BASES = {"https": "https://data.commoncrawl.org/", "s3": "s3://commoncrawl/"}
DEFAULT_SOURCE = "https"
LISTING_NAME = "warc.paths.gz"
# A listing given as --input is told by its name: the format of WARC files is told from their bytes, but a
# listing is a text file like any other.
LISTING = re.compile(r"\.paths(\.gz)?$")
CRAWL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
CRAWL_DATA = "crawl-data/"
S3_EXTRA = "pip install 'apache-beam[aws]==2.77.*'"
# Bounds of a listing, uncompressed: Common Crawl's hold about 90,000 lines of about 140 bytes (13 MB).
LISTING_BYTES_LIMIT = 256 << 20
LINE_BYTES_LIMIT = 4096
READ_SIZE = 1 << 16


class ListingError(ValueError):
    """A crawl or listing that cannot be used: reported in one line, exit status 2."""


@dataclass(frozen=True)
class FileRange:
    """Lines `start` to `end` - 1 of a listing (None: from its first, to its last)."""

    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        return f"{'' if self.start is None else self.start}:{'' if self.end is None else self.end}"

    def of(self, lines: Iterable, listing: str) -> list:
        """The chosen lines of `lines` (the listing's), read no further than the last chosen one."""
        start = 0 if self.start is None else self.start
        chosen, count = [], 0
        for line in lines:
            if count >= start:
                chosen.append(line)
            count += 1
            if count == self.end:
                break
        if start >= count or (self.end is not None and self.end > count):
            raise ListingError(f"--files {self} is out of range: the listing {redacted(listing)} has {count} files "
                               f"(0:{count} is all of them)")
        return chosen


def parse_file_range(text: str) -> FileRange:
    """`START:END` (0-based, END excluded, either may be left out) as a FileRange."""
    match = re.fullmatch(r"\s*(\d*)\s*:\s*(\d*)\s*", text)
    if match is None:
        raise ValueError(f"--files takes START:END (0-based, END excluded), e.g. 0:100; not {text!r}")
    start, end = (int(value) if value else None for value in match.groups())
    if start is not None and end is not None and start >= end:
        raise ValueError(f"--files {text} chooses no file: END must be greater than START")
    return FileRange(start, end)


def check_crawl_name(name: str) -> str:
    if not CRAWL_NAME.match(name):
        raise ValueError(f"--crawl {name!r} is not a crawl's name (such as CC-MAIN-2024-33)")
    return name


def crawl_base(source: str, base_url: str | None) -> str:
    """Where a crawl's files are: `base_url` if given, else the base of `source` (https, s3)."""
    return (base_url or CRAWL_BASES[source]).rstrip("/") + "/"


def listing_url(name: str, base: str) -> str:
    return f"{base}{CRAWL_DATA}{name}/{LISTING_NAME}"


def is_listing(path: str) -> bool:
    return bool(LISTING.search(path))


def resolve_line(line: str, listing: str, base: str) -> str:
    """The file a listing's line names (see the module's docstring)."""
    if "://" in line or line.startswith("/"):
        return line
    marker = listing.rfind("/" + CRAWL_DATA)
    if marker >= 0:
        return listing[:marker + 1] + line
    if line.startswith(CRAWL_DATA):
        return base + line
    return listing.rsplit("/", 1)[0] + "/" + line


def read_listing(listing: str, crawl: str | None = None) -> Iterator[tuple[int, str]]:
    """(number, from 1; text, stripped) of each non-blank line of a listing (gzipped if its name ends in .gz),
    read as they are asked for."""
    name = redacted(listing)
    check_source_installed(listing)
    try:
        found = FileSystems.exists(listing)
    except Exception as error:  # noqa: BLE001 - any file system's failure is said in one line
        raise ListingError(f"cannot read the listing {name}: {str(error).removeprefix(name + ': ')}") from error
    if not found:
        raise ListingError(f"no crawl named {crawl} at {name}" if crawl else f"no listing at {name}")
    try:
        # Decompressed here, as it is read: Beam's decompression inflates all that one read brings in one piece
        # (for the first line of 64 MiB of newlines gzipped in 64 KB, 148 MB of memory).
        with FileSystems.open(listing, compression_type=CompressionTypes.UNCOMPRESSED) as stored, \
                (gzip.GzipFile(fileobj=stored) if listing.endswith(".gz") else stored) as handle:
            for number, line in enumerate(_lines(handle, name), start=1):
                try:
                    text = line.decode("utf-8").strip()
                except UnicodeDecodeError as error:
                    raise ListingError(f"the listing {name}: line {number} is not UTF-8 ({error})") from error
                if text:
                    yield number, text
    except ListingError:
        raise
    except Exception as error:  # noqa: BLE001
        raise ListingError(f"cannot read the listing {name}: {error}") from error


def _lines(handle, name: str) -> Iterator[bytes]:
    """The lines of an open listing, within the bounds on a line and on the whole."""
    pending, total, number = b"", 0, 0
    while chunk := handle.read(READ_SIZE):
        total += len(chunk)
        if total > LISTING_BYTES_LIMIT:
            raise ListingError(f"the listing {name} holds over {LISTING_BYTES_LIMIT} bytes (uncompressed): a listing "
                               "names one file per line, and Common Crawl's hold about 13 MB")
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            number += 1
            yield line
        if len(pending) > LINE_BYTES_LIMIT:
            raise ListingError(f"the listing {name}: line {number + 1} is longer than {LINE_BYTES_LIMIT} bytes; a "
                               "listing names one file per line")
    if pending:
        yield pending


def check_named_file(path: str, line: str, number: int, listing: str, base: str) -> None:
    """A listing read over the network names only files on its own server, or under the crawl's base."""
    served_from = origin(listing)
    if served_from is None or served_from[0] == "file":
        return  # a local listing: the user's own
    if origin(path) == served_from or redacted(path).startswith(redacted(base)):
        return
    scheme, host, port = served_from
    raise ListingError(f"the listing {redacted(listing)}, line {number}, names {redacted(line)}: a listing read from "
                       f"{scheme}://{host}{'' if port is None else f':{port}'} may only name files on its own server "
                       f"or under the crawl's base {redacted(base)}, not a local path, another server or scheme")


def boto3_installed() -> bool:
    # (Beam registers its s3:// file system without boto3, and fails only when it is used.)
    return importlib.util.find_spec("boto3") is not None


def check_source_installed(path: str) -> None:
    """Beam's s3:// file system needs boto3, which webcorpus does not require: say what to install."""
    if FileSystems.get_scheme(path) == "s3" and not boto3_installed():
        raise ListingError(f"reading {path} needs Beam's S3 support (boto3), which is not installed: {S3_EXTRA}")


def expand_inputs(inputs: tuple[str, ...], base: str, files: FileRange | None,
                  crawl: str | None = None) -> tuple[str, ...]:
    """`inputs` with each listing replaced by the files it names (`files` of them, if given)."""
    if files is not None and not any(map(is_listing, inputs)):
        raise ListingError(f"--files {files} chooses files of a listing: give --crawl, or a listing "
                           f"({LISTING_NAME}) as --input")
    expanded = []
    for pattern in inputs:
        if not is_listing(pattern):
            expanded.append(pattern)
            continue
        with contextlib.closing(read_listing(pattern, crawl)) as lines:
            chosen = list(lines) if files is None else files.of(lines, pattern)
        if not chosen:
            raise ListingError(f"the listing {redacted(pattern)} names no file")
        resolved = []
        for number, line in chosen:
            path = resolve_line(line, pattern, base)
            check_named_file(path, line, number, pattern, base)
            resolved.append(path)
        for path in resolved[:1]:
            check_source_installed(path)
        expanded.extend(resolved)
    return tuple(expanded)
