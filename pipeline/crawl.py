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

The listing is read when the command starts, and the build records the files
it resolved to as its inputs: `--rebuild` reads the same files, whatever the
listing says later.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it

CRAWL_BASES = {"https": "https://data.commoncrawl.org/", "s3": "s3://commoncrawl/"}
DEFAULT_SOURCE = "https"
LISTING_NAME = "warc.paths.gz"
# A listing given as --input is told by its name: the format of WARC files is told from their bytes, but a
# listing is a text file like any other.
LISTING = re.compile(r"\.paths(\.gz)?$")
CRAWL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
CRAWL_DATA = "crawl-data/"
S3_EXTRA = "pip install 'apache-beam[aws]==2.77.*'"


class ListingError(ValueError):
    """A crawl or listing that cannot be used: reported in one line, exit status 2."""


@dataclass(frozen=True)
class FileRange:
    """Lines `start` to `end` - 1 of a listing (None: from its first, to its last)."""

    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        return f"{'' if self.start is None else self.start}:{'' if self.end is None else self.end}"

    def of(self, lines: list[str], listing: str) -> list[str]:
        count = len(lines)
        start = 0 if self.start is None else self.start
        end = count if self.end is None else self.end
        if start >= count or end > count:
            raise ListingError(f"--files {self} is out of range: the listing {listing} has {count} files "
                               f"(0:{count} is all of them)")
        return lines[start:end]


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


def read_listing(listing: str, crawl: str | None = None) -> list[str]:
    """The non-blank lines of a listing (gzipped if its name ends in .gz)."""
    check_source_installed(listing)
    try:
        found = FileSystems.exists(listing)
    except Exception as error:  # noqa: BLE001 - any file system's failure is said in one line
        raise ListingError(f"cannot read the listing {listing}: {error}") from error
    if not found:
        raise ListingError(f"no crawl named {crawl} at {listing}" if crawl else f"no listing at {listing}")
    try:
        with FileSystems.open(listing) as handle:
            text = handle.read().decode("utf-8")
    except Exception as error:  # noqa: BLE001
        raise ListingError(f"cannot read the listing {listing}: {error}") from error
    return [line.strip() for line in text.splitlines() if line.strip()]


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
        lines = read_listing(pattern, crawl)
        chosen = lines if files is None else files.of(lines, pattern)
        if not chosen:
            raise ListingError(f"the listing {pattern} names no file")
        resolved = [resolve_line(line, pattern, base) for line in chosen]
        for path in resolved[:1]:
            check_source_installed(path)
        expanded.extend(resolved)
    return tuple(expanded)
