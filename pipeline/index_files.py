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
of the columns asked for, each read one Range GET (`RangedIndexFile`). A
server that ignores Range is refused in one line. Each file's size and ETag
(of its HEAD) are what the manifest records of it.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
from dataclasses import dataclass

import pyarrow.parquet as pq
import requests
from apache_beam.io.filesystem import BeamIOError, CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipeline.crawl import CRAWL_DATA, check_named_file, is_listing, read_listing, resolve_line
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems import http_session
from transforms.filesystems.http_session import RemoteReadError, check_stored_bytes, failure, head, session, size_of
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


class RangedIndexFile(io.RawIOBase):
    """An index file over HTTP, for pyarrow: each read is one Range GET of the bytes asked for."""

    def __init__(self, url: str):
        super().__init__()
        self.url = url
        answer = head(url)
        if answer is None:
            raise IndexRefused(f"no index file at {redacted(url)} (HTTP 404)")
        self.size = size_of(url, answer)
        self.etag = answer.headers.get("ETag", "")
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._position = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self.size}[whence] + offset
        return self._position

    def read(self, size: int = -1) -> bytes:
        last = self.size if size is None or size < 0 else min(self.size, self._position + size)
        if last <= self._position:
            return b""
        try:
            answer = session().get(self.url, headers={"Range": f"bytes={self._position}-{last - 1}"},
                                   timeout=http_session.TIMEOUT)
        except requests.RequestException as error:
            raise http_session.unanswered(self.url, error) from error
        if answer.status_code == 200:
            raise IndexRefused(f"the server of the index file {redacted(self.url)} ignores Range requests: an index "
                              "is read by the column chunks it needs, never whole; serve it with Range support")
        if answer.status_code != 206:
            raise failure(self.url, answer, self._position)
        check_stored_bytes(self.url, answer)
        etag = answer.headers.get("ETag", "")
        if self.etag and etag and etag != self.etag:
            raise RemoteReadError(f"{redacted(self.url)}: the index file changed while it was read (ETag "
                                  f"{self.etag} became {etag})")
        data = answer.content
        self._position += len(data)
        return data

    def readall(self) -> bytes:
        return self.read()

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


@contextlib.contextmanager
def opened_index(path: str):
    """(the `IndexFile`, a `pq.ParquetFile`) of one index file, local or over HTTP by Range."""
    try:
        if is_remote(path):
            handle = RangedIndexFile(path)
            described = IndexFile(redacted(path), handle.size, handle.etag)
        else:
            # (A local file, or s3:// and gs:// by Beam's file systems, whose streams read by ranges themselves.)
            handle = FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
            size = handle.seek(0, os.SEEK_END)
            handle.seek(0)
            described = IndexFile(path, size, FileSystems.checksum(path) if "://" in path else "")
    except (OSError, BeamIOError) as error:
        raise IndexRefused(f"cannot read the index file {redacted(path)}: {error}") from error
    with handle:
        try:
            # (pre_buffer: the column chunks of a row group are asked for together, adjacent ones in one read.)
            parquet = pq.ParquetFile(handle, pre_buffer=True)
        except (IndexRefused, RemoteReadError):
            raise
        except Exception as error:  # noqa: BLE001 - whatever pyarrow says of a file that is not Parquet
            raise IndexRefused(f"the index file {redacted(path)} is not a Parquet file: {error}") from error
        yield described, parquet

