"""The files of a columnar capture index (Common Crawl's cc-index table), found and opened for reading by Range.

`--index` names the index: a Parquet file (a path or an http(s) URL), a local
directory of them (read in the order of their paths, Hive-style partitions
`crawl=NAME/subset=warc/` included), or a listing of them (`.paths` or
`.paths.gz`, as Common Crawl's `crawl-data/NAME/cc-index-table.paths.gz`,
whose lines are resolved and checked as a WARC listing's: `pipeline.crawl`).
Of a partitioned index only the `subset=warc` files are read: the other
subsets (`crawldiagnostics`, `robotstxt`) index no page.

An index file over HTTP is never read whole (Common Crawl's are about 1 GB
each, 300 to a crawl): pyarrow reads its footer, then only the column chunks
of the columns asked for, each read one Range GET (the https:// file
system's `HttpReadStream` in exact mode: its retries, stall window and
checks of each answer). A server that ignores Range is refused in one line. Each file's size and ETag
(of its HEAD where the launcher reads its footer) are what the manifest records of it, and what every
answer must agree with where a unit of its row groups is read (a file changed since: the build fails).
"""

from __future__ import annotations

import contextlib
import glob
import os
from dataclasses import dataclass

from apache_beam.io.filesystem import BeamIOError, CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipeline.crawl import CRAWL_DATA, check_named_file, is_listing, read_listing, resolve_line
from transforms.filesystems.http_filesystem import HttpReadStream, RangesIgnored
from transforms.filesystems.http_session import RemoteReadError
from transforms.filesystems.locations import redacted

TABLE_LISTING = "cc-index-table.paths.gz"
SUBSET = "/subset="
WARC_SUBSET = "/subset=warc/"


class IndexRefused(ValueError):
    """An index that cannot be used: reported in one line, exit status 2."""


@dataclass(frozen=True)
class IndexFile:
    """A file of the index as it was read: where, its size, and its ETag ("" where the store gives none)."""

    path: str
    size: int
    etag: str = ""


def table_listing_url(crawl: str, base: str) -> str:
    """Common Crawl's listing of the cc-index table of the crawl `crawl` under `base`."""
    return f"{base}{CRAWL_DATA}{crawl}/{TABLE_LISTING}"


def is_remote(path: str) -> bool:
    return path.startswith(("http://", "https://"))


def index_paths(source: str, base: str) -> list[str]:
    """The Parquet files of the index `source` (see the module's docstring), in the order they are read."""
    if "://" not in source and not os.path.exists(source):
        raise IndexRefused(f"no index at --index {source}")
    if is_listing(source):
        with contextlib.closing(read_listing(source)) as lines:
            paths = []
            for number, line in lines:
                path = resolve_line(line, source, base)
                check_named_file(path, line, number, source, base)
                paths.append(path)
    elif os.path.isdir(source):
        paths = sorted(glob.glob(os.path.join(source, "**", "*.parquet"), recursive=True))
    else:
        paths = [source]
    chosen = [path for path in paths if SUBSET not in path or WARC_SUBSET in path]
    if not chosen:
        raise IndexRefused(f"the index {redacted(source)} has no Parquet file (of the subset warc)")
    return chosen


@contextlib.contextmanager
def opened_index(path: str, planned: IndexFile | None = None):
    """(the `IndexFile`, a `pq.ParquetFile`) of one index file, local or over HTTP by Range; `planned`: the file as
    the launcher described it, which it must still be (over HTTP, every answer's size and ETag, and no HEAD)."""
    try:
        if is_remote(path):
            # (Exact reads: pyarrow asks for the footer and the column chunks, and gets them alone.)
            handle = (HttpReadStream(path, exact=True) if planned is None
                      else HttpReadStream(path, exact=True, size=planned.size, etag=planned.etag or None,
                                          size_from="the launcher's plan"))
            described = planned or IndexFile(redacted(path), handle.size, handle.etag)
        else:
            # (A local file, or s3:// and gs:// by Beam's file systems, whose streams read by ranges themselves.)
            handle = FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
            size = handle.seek(0, os.SEEK_END)
            handle.seek(0)
            described = IndexFile(path, size, FileSystems.checksum(path) if "://" in path else "")
            if planned is not None and planned != described:
                handle.close()
                raise IndexRefused(f"the index file {redacted(path)} changed since the build began (size "
                                   f"{planned.size:,} and ETag {planned.etag!r} then, {size:,} and "
                                   f"{described.etag!r} now)")
    except (OSError, BeamIOError) as error:
        raise IndexRefused(f"cannot read the index file {redacted(path)}: {error}") from error
    with handle:
        try:
            import pyarrow.parquet as pq

            # (pre_buffer: the column chunks of a row group are asked for together, adjacent ones in one read.)
            parquet = pq.ParquetFile(handle, pre_buffer=True)
        except RangesIgnored as error:
            raise IndexRefused(f"the server of the index file {redacted(path)} ignores Range requests: an index is "
                               "read by the column chunks it needs, never whole; serve it with Range support") \
                from error
        except RemoteReadError:
            raise
        except Exception as error:  # noqa: BLE001 - whatever pyarrow says of a file that is not Parquet
            raise IndexRefused(f"the index file {redacted(path)} is not a Parquet file: {error}") from error
        yield described, parquet

