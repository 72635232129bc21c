"""A read-only Beam file system for `https://` and `http://` URLs (Common Crawl's files over HTTPS).

Importing this module registers it: Beam finds a `FileSystem` subclass by
its scheme once the subclass's module is imported, and `transforms/__init__`
imports it, so every worker that unpickles a stage has it. Then
`FileSystems.open`, `match`, `exists` and `size` take URLs like paths, on
every runner.

Built on `requests` (`transforms.filesystems.http_session`: retries, bounded waits, a
body that stalls ends its attempt): a URL is one exact file (no globs: `?` and
`[` are URL characters); its size comes from `HEAD` (Content-Length). A file
is read with byte-range GETs (`Range: bytes=a-b`) in blocks that grow while
reading goes on forwards (from 256 KiB to 16 MiB) and start small again
after a seek, so `detect_format`'s probes and the byte ranges of
`--range-size` fetch about what they read (the last MiB of the block before
is kept, so that a seek back across a block's end fetches nothing again). A body that breaks off (a dropped
connection) or stalls (`http_session.StallWindow`: the stream's `stall`,
64 KiB in 30 s unless given) is asked for again from the byte it
got to, up to `http_session.ATTEMPTS` times with backoff, and then raises
`RemoteReadError`, which names the URL and the offset. Reading checks that
each answer is the range asked for, of the file HEAD described (the total of
its Content-Range is HEAD's size, its ETag the same): a file that changes
while it is read is an error, not a mixture. A server that ignores Range
(answers 200 with the whole file, as Python's `http.server` does) is read
as one stream from the start, as wget would: a stream reads on in the same
answer, and a seek back asks for the file again (`serves_ranges` tells
such a server, so that its files are not split into ranges). A stream in
`exact` mode (a capture index's Parquet files, read by the column chunks
pyarrow asks for) asks for exactly the bytes of each read, nothing ahead,
and a server that ignores Range is `RangesIgnored`, not read whole; its
`read_range` reads [start, end) by one request (a record a capture index
names), without a HEAD where the file's size and ETag are not given: the
first answer's are the file's, and bytes past its end are `PastTheEnd`. A URL's
credentials (`user:password@`) are used to read it, and left out of every
message and name written (`transforms.filesystems.locations.redacted`).
"""

from __future__ import annotations

import functools
import io
import os
from email.utils import parsedate_to_datetime

import requests
from apache_beam.io.filesystem import (BeamIOError, CompressedFile, CompressionTypes, FileMetadata, FileSystem,
                                       MatchResult)

from transforms.filesystems import http_session
from transforms.filesystems.http_session import RemoteReadError, check_stored_bytes, failure, head, session, size_of
from transforms.filesystems.locations import redacted

FIRST_BLOCK = 256 << 10
LARGEST_BLOCK = 16 << 20
# The end of the block before the current one, kept: a reader that read ahead across a block's end and seeks back
# to where its record starts (warcio after a record, the WARC reader's skim) reads it again without a request.
KEPT_BEHIND = 1 << 20
CHUNK = http_session.CHUNK

class RangesIgnored(RemoteReadError):
    """A stream in exact mode met a server that ignores Range requests: it would read the whole file."""


class PastTheEnd(RemoteReadError):
    """An exact read of bytes the file does not have; `size`: the file's, where the server said it."""

    def __init__(self, message: str, size: int | None):
        super().__init__(message)
        self.size = size


class ReadOnly(BeamIOError):
    """Writing, copying, renaming or deleting over HTTP: this file system only reads."""


@functools.lru_cache(maxsize=1024)
def serves_ranges(path: str) -> bool:
    """Whether `path` can be read from any offset: False for a URL whose server ignores Range (one GET tells,
    once per process)."""
    if not path.startswith(("http://", "https://")):
        return True
    try:
        answer = session().get(path, headers={"Range": "bytes=0-0"}, stream=True, timeout=http_session.TIMEOUT)
    except requests.RequestException as error:
        raise http_session.unanswered(path, error) from error
    with answer:
        if answer.status_code not in (200, 206, 416):
            raise failure(path, answer, 0)
        # (416: an empty file, which has no byte 0.)
        return answer.status_code != 200


class HttpReadStream(io.RawIOBase):
    """A seekable read stream of one URL, by byte-range GETs; see the module's docstring (`exact`: each read
    asks for its bytes alone; `size` and `etag`: the file's as known before, which every answer must agree with,
    and no HEAD asked; `size_from`: what they were known from, as an error names it)."""

    mode = "rb"

    def __init__(self, url: str, stall: http_session.StallWindow = http_session.STALL, exact: bool = False,
                 size: int | None = None, etag: str | None = None, size_from: str = "what the caller knew"):
        super().__init__()
        self.url = url
        self.name = redacted(url)
        self.stall = stall
        self.exact = exact
        self._position = 0
        self._size = size
        self._etag = etag
        # Where the size every answer must agree with came from: HEAD, the first answer, or the caller.
        self._size_from = size_from
        self._block = b""
        self._block_start = 0
        self._behind = b""
        self._behind_start = 0
        self._next_block = FIRST_BLOCK
        # A whole-file answer (a server that ignores Range) read on, and the offset its body has reached.
        self._whole: requests.Response | None = None
        self._whole_at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def _head(self) -> None:
        if self._size is None:
            answer = head(self.url)
            if answer is None:
                raise RemoteReadError(f"{self.name}: HTTP 404, no such file")
            self._size = size_of(self.url, answer)
            self._etag = answer.headers.get("ETag")
            self._size_from = "HEAD"

    @property
    def size(self) -> int:
        """The file's size (HEAD's Content-Length, unless it was known before): every answer must agree with it."""
        self._head()
        return self._size

    @property
    def etag(self) -> str:
        """HEAD's ETag ("" where the server gives none): every answer must agree with it."""
        self._head()
        return self._etag or ""

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
        kept_start = self._behind_start if self._behind else self._block_start
        if not kept_start <= position <= block_end:
            # Reading jumped: the next fetch is small again.
            self._next_block = FIRST_BLOCK
        self._position = position
        return position

    def readinto(self, buffer) -> int:
        behind = self._position - self._behind_start
        # (The bytes kept behind end where the block starts.)
        if 0 <= behind < len(self._behind):
            count = min(len(buffer), len(self._behind) - behind)
            buffer[:count] = self._behind[behind:behind + count]
            self._position += count
            return count
        offset = self._position - self._block_start
        if not 0 <= offset < len(self._block):
            if self._position >= self.size:
                return 0
            self._fetch(len(buffer) if self.exact else max(len(buffer), self._next_block))
            offset = 0
        count = min(len(buffer), len(self._block) - offset)
        buffer[:count] = self._block[offset:offset + count]
        self._position += count
        return count

    def read_range(self, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file, by one Range GET (and its retries), in exact mode; `PastTheEnd` where the
        file ends before `end`. Where the file's size is not known, no HEAD is asked: the first answer tells it."""
        if not self.exact:
            raise ValueError("read_range reads exactly: an HttpReadStream in exact mode")
        if start < 0 or end <= start:
            raise PastTheEnd(f"{self.name}: no bytes from {start} to {end}", None)
        self._position = start
        self._fetch(end - start)
        self._position = end
        return self._block

    def close(self) -> None:
        self._drop_whole()
        super().close()

    def _fetch(self, length: int) -> None:
        """Reads [position, position + length) into the block (less at the end of the file, where its size is
        known)."""
        start = self._position
        if self._size is not None or not self.exact:
            length = min(length, self.size - start)
        received = bytearray()
        attempt = 0
        while len(received) < length:
            attempt += 1
            offset = start + len(received)
            try:
                self._get(offset, start + length - 1, received)
            except RemoteReadError:
                self._drop_whole()
                raise  # an answer that retrying does not change (404, 403, another file)
            except http_session.BROKEN_OFF as error:
                self._drop_whole()
                http_session.after_failed_attempt(self.name, offset, attempt, error)
        if not self.exact and start == self._block_start + len(self._block):
            self._behind = self._block[-KEPT_BEHIND:]
            self._behind_start = start - len(self._behind)
        else:
            self._behind, self._behind_start = b"", 0
        self._block = bytes(received)
        self._block_start = start
        self._next_block = min(self._next_block * 2, LARGEST_BLOCK)

    def _get(self, first: int, last: int, received: bytearray) -> None:
        """Appends bytes first..last (inclusive, within the file) to `received`."""
        if self._whole is not None and self._whole_at <= first:
            # A server that ignores Range: read on in its answer, past what is not wanted.
            self._skip_whole_to(first)
            http_session.read_body(self._whole, last + 1 - first, received, self.stall)
            self._whole_at = last + 1
            return
        self._drop_whole()
        # A socket read that waits out the window has stalled.
        answer = session().get(self.url, headers={"Range": f"bytes={first}-{last}"}, stream=True,
                               timeout=(http_session.TIMEOUT[0], self.stall.seconds))
        if answer.status_code == 200 and self.exact:
            answer.close()
            raise RangesIgnored(f"{self.name}: the server ignores Range requests, and this file is read by the "
                                "ranges asked for, never whole")
        if answer.status_code == 200:
            # The whole file (the server ignores Range): kept open, to read on from where this read stops.
            try:
                length = size_of(self.url, answer)
                self._check_answer(answer, length, f"Content-Length {length}")
            except RemoteReadError:
                answer.close()
                raise
            self._whole, self._whole_at = answer, 0
            self._get(first, last, received)
            return
        with answer:
            if answer.status_code == 416 and self.exact:
                total = answer.headers.get("Content-Range", "").rpartition("/")[2]
                raise PastTheEnd(f"{self.name}: bytes from {first} lie past the end of the file",
                                 int(total) if total.isdigit() else None)
            if answer.status_code != 206:
                raise failure(self.url, answer, first)
            total, content_range = self._check_range(answer, first)
            self._check_answer(answer, total, f"Content-Range {content_range!r}")
            if total <= last:
                # (Only where the size was not known: a known size bounds what is asked for.)
                raise PastTheEnd(f"{self.name}: bytes to {last} lie past the end of the file ({total:,} bytes)",
                                 total)
            http_session.read_body(answer, last + 1 - first, received, self.stall)

    def _skip_whole_to(self, offset: int) -> None:
        while self._whole_at < offset:
            skipped = bytearray()
            http_session.read_body(self._whole, min(CHUNK, offset - self._whole_at), skipped, self.stall)
            self._whole_at += len(skipped)

    def _drop_whole(self) -> None:
        if self._whole is not None:
            self._whole.close()
            self._whole = None

    def _check_range(self, answer: requests.Response, first: int) -> tuple[int, str]:
        content_range = answer.headers.get("Content-Range", "")
        unit, _, spec = content_range.partition(" ")
        span, _, total = spec.partition("/")
        span_start = span.split("-", 1)[0]
        if unit != "bytes" or not span_start.isdigit() or int(span_start) != first or not total.isdigit():
            raise RemoteReadError(f"{self.name}: asked for bytes from {first}, got Content-Range {content_range!r}")
        return int(total), content_range

    def _check_answer(self, answer: requests.Response, total: int, said: str) -> None:
        """The answer is of the file HEAD described: stored bytes, its size, its ETag."""
        check_stored_bytes(self.url, answer)
        if self._size is None:
            # (A stream not given the file's size, and asked for none: its first answer tells it.)
            self._size, self._size_from = total, "the first answer"
        if total != self._size:
            raise RemoteReadError(f"{self.name}: an answer says the file ends at {total} bytes ({said}), "
                                  f"{self._size_from} said {self._size}: the file changed while it was read, or the "
                                  "server is broken")
        etag = answer.headers.get("ETag")
        if etag and self._etag and etag != self._etag:
            raise RemoteReadError(f"{self.name}: the file changed while it was read (ETag {self._etag} became {etag})")
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
        raise ReadOnly(f"cannot create {redacted(path)}: the {self.scheme()} file system only reads")

    def _list(self, dir_or_prefix):
        raise BeamIOError(f"cannot list {redacted(dir_or_prefix)}: HTTP has no listing; give each file's URL")

    def match(self, patterns, limits=None):
        """Each pattern is one URL (HTTP has no listing): its file, or no file where it answers 404."""
        results, failures = [], {}
        for pattern in patterns:
            try:
                answer = head(pattern)
                results.append(MatchResult(pattern, [] if answer is None else [self._metadata(pattern, answer)]))
            except RemoteReadError as error:
                failures[redacted(pattern)] = error
        if failures:
            raise BeamIOError("Match operation failed", failures)
        return results

    def create(self, path, mime_type="application/octet-stream", compression_type=CompressionTypes.AUTO):
        raise ReadOnly(f"cannot write {redacted(path)}: the {self.scheme()} file system only reads")

    def open(self, path, mime_type="application/octet-stream", compression_type=CompressionTypes.AUTO):
        raw = io.BufferedReader(HttpReadStream(path), buffer_size=CHUNK)
        if compression_type == CompressionTypes.AUTO:
            compression_type = CompressionTypes.detect_compression_type(path)
        if compression_type == CompressionTypes.UNCOMPRESSED:
            return raw
        return CompressedFile(raw, compression_type=compression_type)

    def copy(self, source_file_names, destination_file_names):
        raise ReadOnly(f"cannot copy to {', '.join(map(redacted, destination_file_names))}: the {self.scheme()} "
                       "file system only reads")

    def rename(self, source_file_names, destination_file_names):
        raise ReadOnly(f"cannot rename {', '.join(map(redacted, source_file_names))}: the {self.scheme()} file "
                       "system only reads")

    def delete(self, paths):
        raise ReadOnly(f"cannot delete {', '.join(map(redacted, paths))}: the {self.scheme()} file system only reads")

    def exists(self, path: str) -> bool:
        return head(path) is not None

    def _answer(self, path: str) -> requests.Response:
        answer = head(path)
        if answer is None:
            raise BeamIOError(f"{redacted(path)}: HTTP 404, no such file")
        return answer

    def size(self, path: str) -> int:
        return size_of(path, self._answer(path))

    def last_updated(self, path: str) -> float:
        modified = self._answer(path).headers.get("Last-Modified")
        return parsedate_to_datetime(modified).timestamp() if modified else 0.0

    def checksum(self, path: str) -> str:
        answer = self._answer(path)
        return answer.headers.get("ETag") or str(size_of(path, answer))

    def _metadata(self, path: str, answer: requests.Response) -> FileMetadata:
        modified = answer.headers.get("Last-Modified")
        modified_at = parsedate_to_datetime(modified).timestamp() if modified else 0.0
        return FileMetadata(path, size_of(path, answer), modified_at)

    def metadata(self, path: str) -> FileMetadata:
        return self._metadata(path, self._answer(path))


class HttpsFileSystem(HttpFileSystem):
    @classmethod
    def scheme(cls):
        return "https"
