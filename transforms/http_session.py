"""HTTP requests of the https:// and http:// file system (`transforms.http_filesystem`), on `requests` (urllib3).

A session per thread keeps connections alive. Connection errors and 429,
500, 502, 503 and 504 answers are retried by urllib3 with exponential
backoff; a wait is never longer than `BACKOFF_MAX` (30 s), a server's
`Retry-After` included (urllib3 caps its own backoff, not what a server asks
for: a `Retry-After: 100000` would be a day's sleep). A body is read
against a deadline (`deadline`): `ANSWER_SECONDS` plus its length at
`MIN_RATE`, beside the timeout of each socket read (`TIMEOUT`), so that a
server that sends a byte a second cannot hold a read for days.

Every message names a URL without its credentials (`transforms.locations`).
"""

from __future__ import annotations

import threading
import time

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from transforms.locations import redacted

# Transient answers, retried with backoff (urllib3 sleeps BACKOFF * 2 ** (n - 1) before the nth retry but the
# first, at most BACKOFF_MAX, and a Retry-After the same).
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRIES = 6
BACKOFF = 0.5
BACKOFF_MAX = 30
# Reads of a body that breaks off (or is too slow): attempts from the byte reached, with the same backoff.
ATTEMPTS = 6
# Seconds to connect, and to wait for the next bytes of an answer.
TIMEOUT = (30, 120)
# A body of N bytes must arrive within ANSWER_SECONDS + N / MIN_RATE seconds of its request (64 KiB/s: a 16 MiB
# block in 5 min 16 s), or the read is abandoned and asked for again from the byte it reached.
ANSWER_SECONDS = 60
MIN_RATE = 64 << 10
CHUNK = 64 << 10


class RemoteReadError(IOError):
    """A file that could not be read over HTTP: the URL, the offset, and why."""


class TooSlow(urllib3.exceptions.ProtocolError):
    """A body that did not arrive by its deadline: retried from the byte it reached, as a dropped connection is."""


class BoundedRetry(Retry):
    """urllib3's Retry, with a server's Retry-After waited at most BACKOFF_MAX seconds (then retried as any other)."""

    def get_retry_after(self, response) -> float | None:
        wait = super().get_retry_after(response)
        return None if wait is None else min(wait, BACKOFF_MAX)


_sessions = threading.local()


def session() -> requests.Session:
    """This thread's session (requests' sessions are not shared across threads), keeping connections alive."""
    current = getattr(_sessions, "session", None)
    if current is None:
        current = requests.Session()
        retry = BoundedRetry(total=RETRIES, backoff_factor=BACKOFF, backoff_max=BACKOFF_MAX,
                             status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"HEAD", "GET"}),
                             raise_on_status=False, respect_retry_after_header=True)
        adapter = HTTPAdapter(max_retries=retry)
        current.mount("https://", adapter)
        current.mount("http://", adapter)
        # The stored bytes, never a re-encoding of them (a .warc.gz must reach the reader as it is).
        current.headers["Accept-Encoding"] = "identity"
        _sessions.session = current
    return current


def failure(url: str, answer: requests.Response, offset: int | None = None) -> RemoteReadError:
    where = "" if offset is None else f" (reading from offset {offset})"
    return RemoteReadError(f"{redacted(url)}: HTTP {answer.status_code} {answer.reason}{where}")


def head(url: str) -> requests.Response | None:
    """The answer to a HEAD of `url` (redirects followed), or None where there is no such file (404, 410)."""
    try:
        answer = session().head(url, allow_redirects=True, timeout=TIMEOUT)
    except requests.RequestException as error:
        raise RemoteReadError(f"{redacted(url)}: {error}") from error
    if answer.status_code in (404, 410):
        return None
    if answer.status_code != 200:
        raise failure(url, answer)
    return answer


def size_of(url: str, answer: requests.Response) -> int:
    length = answer.headers.get("Content-Length")
    if length is None or not length.isdigit():
        raise RemoteReadError(f"{redacted(url)}: the server gives no Content-Length, so the file cannot be read")
    return int(length)


def check_stored_bytes(url: str, answer: requests.Response) -> None:
    """Refuses an answer the server compressed although asked for the file as stored (`Accept-Encoding: identity`)."""
    encoding = answer.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise RemoteReadError(f"{redacted(url)}: the server compressed its answer (Content-Encoding: {encoding}) "
                              "although asked for the file's stored bytes (Accept-Encoding: identity); serve the "
                              "file as it is")


def deadline(length: int) -> float:
    """When a request for `length` bytes, sent now, must have received them (on `time.monotonic`)."""
    return time.monotonic() + ANSWER_SECONDS + length / MIN_RATE


def read_body(answer: requests.Response, length: int, into: bytearray, due: float) -> None:
    """Appends the next `length` bytes of `answer`'s body to `into`, by `due` (see `deadline`).

    Raises a ProtocolError where the body ends first or `TooSlow` past `due`:
    what it got stays in `into`, so reading goes on from there.
    """
    started, got = time.monotonic(), 0
    while got < length:
        if time.monotonic() > due:
            raise TooSlow(f"too slow: {got} of {length} bytes in {time.monotonic() - started:.0f} s (at least "
                          f"{MIN_RATE} bytes/s after the first {ANSWER_SECONDS} s are needed)")
        # read1: what one socket read brings, so that the deadline is looked at between reads of a slow body.
        chunk = answer.raw.read1(min(CHUNK, length - got), decode_content=False)
        if not chunk:
            raise urllib3.exceptions.ProtocolError(f"the answer ended after {got} of {length} bytes")
        into += chunk
        got += len(chunk)
