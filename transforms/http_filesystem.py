"""A read-only Beam file system for `https://` and `http://` URLs (Common Crawl's files over HTTPS).

Importing this module registers it: Beam finds a `FileSystem` subclass by
its scheme once the subclass's module is imported, and `transforms/__init__`
imports it, so every worker that unpickles a stage has it. Then
`FileSystems.open`, `match`, `exists` and `size` take URLs like paths, on
every runner.

Built on `requests` (urllib3): a URL is one exact file (no globs: `?` and
`[` are URL characters); its size comes from `HEAD` (Content-Length). A file
is read with byte-range GETs (`Range: bytes=a-b`) in blocks that grow while
reading goes on forwards (from 256 KiB to 16 MiB) and start small again
after a seek, so `detect_format`'s probes and the byte ranges of
`--range-size` fetch about what they read. Connection errors and 429, 500,
502, 503 and 504 answers are retried with exponential backoff (urllib3's
`Retry`); a body that breaks off (a dropped connection, a stalled read) is
asked for again from the byte it got to, up to `ATTEMPTS` times with
backoff, and then raises `RemoteReadError`, which names the URL and the
offset. Reading checks that each answer is the range asked for, of the same
file (its ETag): a file that changes while it is read is an error, not a
mixture.
"""

from __future__ import annotations

import io
import os
import threading
import time
from email.utils import parsedate_to_datetime

import requests
import urllib3
from apache_beam.io.filesystem import (BeamIOError, CompressedFile, CompressionTypes, FileMetadata, FileSystem,
                                       MatchResult)
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

# Transient answers, retried with backoff (urllib3 sleeps backoff * 2 ** (n - 1) before the nth retry but the
# first, at most BACKOFF_MAX, and honours Retry-After).
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRIES = 6
BACKOFF = 0.5
BACKOFF_MAX = 30
# Reads of a body that breaks off: attempts from the byte reached, with the same backoff between them.
ATTEMPTS = 6
# Seconds to connect, and to wait for the next bytes of an answer.
TIMEOUT = (30, 120)
FIRST_BLOCK = 256 << 10
LARGEST_BLOCK = 16 << 20
CHUNK = 64 << 10


class RemoteReadError(IOError):
    """A file that could not be read over HTTP: the URL, the offset, and why."""


class ReadOnly(BeamIOError):
    """Writing, copying, renaming or deleting over HTTP: this file system only reads."""


_sessions = threading.local()


def session() -> requests.Session:
    """This thread's session (requests' sessions are not shared across threads), keeping connections alive."""
    current = getattr(_sessions, "session", None)
    if current is None:
        current = requests.Session()
        retry = Retry(total=RETRIES, backoff_factor=BACKOFF, backoff_max=BACKOFF_MAX,
                      status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"HEAD", "GET"}),
                      raise_on_status=False, respect_retry_after_header=True)
        adapter = HTTPAdapter(max_retries=retry)
        current.mount("https://", adapter)
        current.mount("http://", adapter)
        # The stored bytes, never a re-encoding of them (a .warc.gz must reach the reader as it is).
        current.headers["Accept-Encoding"] = "identity"
        _sessions.session = current
    return current


def _failure(url: str, answer: requests.Response, offset: int | None = None) -> RemoteReadError:
    where = "" if offset is None else f" (reading from offset {offset})"
    return RemoteReadError(f"{url}: HTTP {answer.status_code} {answer.reason}{where}")


def head(url: str) -> requests.Response | None:
    """The answer to a HEAD of `url` (redirects followed), or None where there is no such file (404, 410)."""
    try:
        answer = session().head(url, allow_redirects=True, timeout=TIMEOUT)
    except requests.RequestException as error:
        raise RemoteReadError(f"{url}: {error}") from error
    if answer.status_code in (404, 410):
        return None
    if answer.status_code != 200:
        raise _failure(url, answer)
    return answer


def _size_of(url: str, answer: requests.Response) -> int:
    length = answer.headers.get("Content-Length")
    if length is None or not length.isdigit():
        raise RemoteReadError(f"{url}: the server gives no Content-Length, so the file cannot be read in ranges")
    return int(length)


class HttpReadStream(io.RawIOBase):
    """A seekable read stream of one URL, by byte-range GETs; see the module's docstring."""

    mode = "rb"

    def __init__(self, url: str):
        super().__init__()
        self.url = self.name = url
        self._position = 0
        self._size: int | None = None
        self._etag: str | None = None
        self._block = b""
        self._block_start = 0
        self._next_block = FIRST_BLOCK

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    @property
    def size(self) -> int:
        if self._size is None:
            answer = head(self.url)
            if answer is None:
                raise RemoteReadError(f"{self.url}: HTTP 404, no such file")
            self._size = _size_of(self.url, answer)
            self._etag = answer.headers.get("ETag")
        return self._size

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            position = offset
        elif whence == os.SEEK_CUR:
            position = self._position + offset
        elif whence == os.SEEK_END:
            position = self.size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if position < 0:
            raise ValueError(f"negative seek position {position}")
        block_end = self._block_start + len(self._block)
        if not self._block_start <= position <= block_end:
            # Reading jumped: the next fetch is small again.
            self._next_block = FIRST_BLOCK
        self._position = position
        return position

    def readinto(self, buffer) -> int:
        offset = self._position - self._block_start
        if not 0 <= offset < len(self._block):
            if self._size is not None and self._position >= self._size:
                return 0
            self._fetch(max(len(buffer), self._next_block))
            offset = 0
            if not self._block:
                return 0
        count = min(len(buffer), len(self._block) - offset)
        buffer[:count] = self._block[offset:offset + count]
        self._position += count
        return count

    def _fetch(self, length: int) -> None:
        """Reads [position, position + length) into the block (less at the end of the file)."""
        start = self._position
        if self._size is not None:
            length = min(length, self._size - start)
        received = bytearray()
        attempt = 0
        while len(received) < length:
            attempt += 1
            offset = start + len(received)
            try:
                done = self._get(offset, start + length - 1, received)
            except RemoteReadError:
                raise  # an answer that retrying does not change (404, 403, a Range ignored)
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as error:
                if attempt >= ATTEMPTS:
                    raise RemoteReadError(f"{self.url}: reading from offset {offset} failed after {attempt} "
                                          f"attempts: {error}") from error
                # The first retry at once (a new connection), then with backoff.
                if attempt > 1:
                    time.sleep(min(BACKOFF * 2 ** (attempt - 2), BACKOFF_MAX))
                continue
            if done:
                break
        self._block = bytes(received)
        self._block_start = start
        self._next_block = min(self._next_block * 2, LARGEST_BLOCK)

    def _get(self, first: int, last: int, received: bytearray) -> bool:
        """Appends bytes first..last (inclusive) to `received`; True when the file ends before `last`."""
        answer = session().get(self.url, headers={"Range": f"bytes={first}-{last}"}, stream=True, timeout=TIMEOUT)
        with answer:
            if answer.status_code == 416:
                # A range past the end: the file ends at `first`.
                self._size = first
                return True
            if answer.status_code == 200 and first == 0:
                total = _size_of(self.url, answer)
            elif answer.status_code == 206:
                total = self._check_range(answer, first)
            elif answer.status_code == 200:
                raise RemoteReadError(f"{self.url}: the server ignores Range requests (HTTP 200 for bytes "
                                      f"{first}-{last}), so the file cannot be read from offset {first}")
            else:
                raise _failure(self.url, answer, first)
            self._check_same_file(answer)
            self._size = total
            wanted = min(last + 1, total) - first
            got = 0
            for chunk in answer.raw.stream(CHUNK, decode_content=False):
                chunk = chunk[:wanted - got]
                received += chunk
                got += len(chunk)
                if got >= wanted:
                    break
            if got < wanted:
                raise urllib3.exceptions.ProtocolError(f"the answer ended after {got} of {wanted} bytes")
            return last + 1 >= total

    def _check_range(self, answer: requests.Response, first: int) -> int:
        content_range = answer.headers.get("Content-Range", "")
        unit, _, spec = content_range.partition(" ")
        span, _, total = spec.partition("/")
        span_start = span.split("-", 1)[0]
        if unit != "bytes" or not span_start.isdigit() or int(span_start) != first or not total.isdigit():
            raise RemoteReadError(f"{self.url}: asked for bytes from {first}, got Content-Range {content_range!r}")
        return int(total)

    def _check_same_file(self, answer: requests.Response) -> None:
        etag = answer.headers.get("ETag")
        if etag and self._etag and etag != self._etag:
            raise RemoteReadError(f"{self.url}: the file changed while it was read (ETag {self._etag} became {etag})")
        self._etag = etag or self._etag


class HttpFileSystem(FileSystem):
    """`http://` URLs, read-only; see the module's docstring. `HttpsFileSystem` is the same for `https://`."""

    @classmethod
    def scheme(cls):
        return "http"

    def join(self, basepath: str, *paths: str) -> str:
        path = basepath
        for part in paths:
            path = path.rstrip("/") + "/" + part.lstrip("/")
        return path

    def split(self, path: str) -> tuple[str, str]:
        scheme, _, rest = path.partition("://")
        host_and_path, _, name = rest.rpartition("/")
        if not host_and_path:
            return path, ""
        return f"{scheme}://{host_and_path}", name

    def has_dirs(self) -> bool:
        return False

    def mkdirs(self, path):
        raise ReadOnly(f"cannot create {path}: the {self.scheme()} file system only reads")

    def _list(self, dir_or_prefix):
        raise BeamIOError(f"cannot list {dir_or_prefix}: HTTP has no listing; give each file's URL")

    def match(self, patterns, limits=None):
        """Each pattern is one URL (HTTP has no listing): its file, or no file where it answers 404."""
        results, failures = [], {}
        for pattern in patterns:
            try:
                answer = head(pattern)
                results.append(MatchResult(pattern, [] if answer is None else [self._metadata(pattern, answer)]))
            except RemoteReadError as error:
                failures[pattern] = error
        if failures:
            raise BeamIOError("Match operation failed", failures)
        return results

    def create(self, path, mime_type="application/octet-stream", compression_type=CompressionTypes.AUTO):
        raise ReadOnly(f"cannot write {path}: the {self.scheme()} file system only reads")

    def open(self, path, mime_type="application/octet-stream", compression_type=CompressionTypes.AUTO):
        raw = io.BufferedReader(HttpReadStream(path), buffer_size=CHUNK)
        compression_type = FileSystem._get_compression_type(path, compression_type)
        if compression_type == CompressionTypes.UNCOMPRESSED:
            return raw
        return CompressedFile(raw, compression_type=compression_type)

    def copy(self, source_file_names, destination_file_names):
        raise ReadOnly(f"cannot copy to {', '.join(destination_file_names)}: the {self.scheme()} file system "
                       "only reads")

    def rename(self, source_file_names, destination_file_names):
        raise ReadOnly(f"cannot rename {', '.join(source_file_names)}: the {self.scheme()} file system only reads")

    def delete(self, paths):
        raise ReadOnly(f"cannot delete {', '.join(paths)}: the {self.scheme()} file system only reads")

    def exists(self, path: str) -> bool:
        return head(path) is not None

    def _answer(self, path: str) -> requests.Response:
        answer = head(path)
        if answer is None:
            raise BeamIOError(f"{path}: HTTP 404, no such file")
        return answer

    def size(self, path: str) -> int:
        return _size_of(path, self._answer(path))

    def last_updated(self, path: str) -> float:
        modified = self._answer(path).headers.get("Last-Modified")
        return parsedate_to_datetime(modified).timestamp() if modified else 0.0

    def checksum(self, path: str) -> str:
        answer = self._answer(path)
        return answer.headers.get("ETag") or str(_size_of(path, answer))

    def _metadata(self, path: str, answer: requests.Response) -> FileMetadata:
        modified = answer.headers.get("Last-Modified")
        return FileMetadata(path, _size_of(path, answer), parsedate_to_datetime(modified).timestamp() if modified else 0.0)

    def metadata(self, path: str) -> FileMetadata:
        return self._metadata(path, self._answer(path))


class HttpsFileSystem(HttpFileSystem):
    @classmethod
    def scheme(cls):
        return "https"
