"""HTTP requests of the https:// and http:// file system (`transforms.filesystems.http_filesystem`), on `requests` (urllib3).

A session per thread keeps connections alive. Connections that break and
429, 500, 502, 503 and 504 answers are retried by urllib3 with exponential
backoff of at most `BACKOFF_MAX` (30 s) a wait. A connection that cannot be
made because the host's name does not resolve or nothing listens on its port
is not retried (as neither wget nor curl does): offline, a command says so
at once, not after half a minute of backoff. A server's `Retry-After` is
waited up to `RETRY_AFTER_MAX` (2 min); a server that asks for longer (a
`Retry-After: 100000`, a day) says no for today: the answer is an error at
once that names the wait (`failure`). urllib3's warnings of its retries are
not shown: what a retry came to is said by the error, if any.

A body stalls when fewer than `StallWindow.least_bytes` of it arrive in a
window of `StallWindow.seconds` (`STALL`: 64 KiB in 30 s): the attempt ends
(`TooSlow`), whatever the body's size, and is asked for again from the byte
it reached. (A deadline that grew with the size let a server that sends a
byte a second hold a 1 GB file's read for hours.)

Every message names a URL without its credentials (`transforms.filesystems.locations`).
"""

from __future__ import annotations

import email.utils
import logging
import threading
import time
import urllib.parse
from dataclasses import dataclass

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from transforms.filesystems.locations import redacted

# Transient answers, retried with backoff (urllib3 sleeps BACKOFF * 2 ** (n - 1) before the nth retry but the
# first, at most BACKOFF_MAX; a Retry-After as asked, up to RETRY_AFTER_MAX).
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRIES = 6
BACKOFF = 0.5
BACKOFF_MAX = 30
RETRY_AFTER_MAX = 120
# Reads of a body that breaks off (or stalls): attempts from the byte reached, with the same backoff.
ATTEMPTS = 6
# Seconds to connect, and to wait for the next bytes of an answer (of a file's body: its stall window's seconds).
TIMEOUT = (30, 120)
CHUNK = 64 << 10


@dataclass(frozen=True)
class StallWindow:
    """A body stalls when fewer than `least_bytes` of it arrive in `seconds` (its socket reads wait as long)."""

    seconds: float
    least_bytes: int


STALL = StallWindow(seconds=30, least_bytes=64 << 10)


class RemoteReadError(IOError):
    """A file that could not be read over HTTP: the URL, the offset, and why."""


class TooSlow(urllib3.exceptions.ProtocolError):
    """A body that stalled: retried from the byte it reached, as a dropped connection is."""


class BoundedRetry(Retry):
    """urllib3's Retry, that neither waits for a host that is not there nor a Retry-After over RETRY_AFTER_MAX."""

    def increment(self, method=None, url=None, response=None, error=None, **context):
        if isinstance(error, urllib3.exceptions.NewConnectionError):
            raise urllib3.exceptions.MaxRetryError(None, url, error) from error
        if response is not None and response.status in self.RETRY_AFTER_STATUS_CODES \
                and (retry_after(response) or 0) > RETRY_AFTER_MAX:
            # Raised here, urllib3 hands the answer back (raise_on_status=False), and `failure` names the wait.
            raise urllib3.exceptions.MaxRetryError(None, url, urllib3.exceptions.ResponseError("Retry-After"))
        return super().increment(method, url, response, error, **context)


class HideRetries(logging.Filter):
    """Drops urllib3's warning of each retry ("Retrying (...) after connection broken by ..."): a retry that
    succeeds is no news, and one that does not ends in an error that says why."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Retrying (")


logging.getLogger("urllib3.connectionpool").addFilter(HideRetries())


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
    wait = retry_after(answer)
    if wait is not None and wait > RETRY_AFTER_MAX and answer.status_code in Retry.RETRY_AFTER_STATUS_CODES:
        hours = f" ({wait / 3600:.1f} h)" if wait >= 3600 else ""
        where += f", and the server asked to retry after {wait:.0f} s{hours}; giving up"
    return RemoteReadError(f"{redacted(url)}: HTTP {answer.status_code} {answer.reason}{where}")


def retry_after(answer) -> float | None:
    """The seconds an answer's Retry-After asks for (given as seconds or as an HTTP date); None without one.

    (Parsed here: urllib3's parse_retry_after caps the wait at 6 hours since 2.6, and that is not what was asked.)
    """
    value = answer.headers.get("Retry-After", "").strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def unanswered(url: str, error: requests.RequestException) -> RemoteReadError:
    """A request that got no answer, in one line: a host that cannot be found or reached is said in those words."""
    given_up = error.args[0] if error.args else None
    reason = given_up.reason if isinstance(given_up, urllib3.exceptions.MaxRetryError) else None
    proxy = isinstance(error, requests.exceptions.ProxyError)  # (a proxy that cannot be reached says so itself)
    if proxy or not isinstance(reason, urllib3.exceptions.NewConnectionError):
        return RemoteReadError(f"{redacted(url)}: {error}")
    cause = reason.__cause__
    why = cause.strerror if isinstance(cause, OSError) and cause.strerror else reason
    parts = urllib.parse.urlsplit(url)
    if isinstance(reason, urllib3.exceptions.NameResolutionError):
        return RemoteReadError(f"{redacted(url)}: cannot find the host {parts.hostname} ({why})")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return RemoteReadError(f"{redacted(url)}: cannot connect to {parts.hostname}:{port} ({why})")


def head(url: str) -> requests.Response | None:
    """The answer to a HEAD of `url` (redirects followed), or None where there is no such file (404, 410)."""
    try:
        answer = session().head(url, allow_redirects=True, timeout=TIMEOUT)
    except requests.RequestException as error:
        raise unanswered(url, error) from error
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


# What breaks a read off without saying anything of the file (a connection's failure, a body cut short or stalled):
# the read is attempted again from the byte reached (`after_failed_attempt`).
BROKEN_OFF = (requests.RequestException, urllib3.exceptions.HTTPError, OSError)


def after_failed_attempt(name: str, offset: int, attempt: int, error: BaseException) -> None:
    """After attempt number `attempt` at reading `name` from `offset` broke off (`error`, of `BROKEN_OFF`): raises
    RemoteReadError once `ATTEMPTS` have, else waits before the next (the first retry at once, on a new connection,
    then with backoff)."""
    if attempt >= ATTEMPTS:
        # (urllib3's ProtocolError repeats its cause after its message: the message says it.)
        why = error.args[0] if isinstance(error, urllib3.exceptions.ProtocolError) and error.args else error
        raise RemoteReadError(f"{name}: reading from offset {offset} failed after {attempt} attempts: {why}") from error
    if attempt > 1:
        time.sleep(min(BACKOFF * 2 ** (attempt - 2), BACKOFF_MAX))


def read_body(answer: requests.Response, length: int, into: bytearray, stall: StallWindow,
              clock=time.monotonic) -> None:
    """Appends the next `length` bytes of `answer`'s body to `into`, unless it stalls (see `StallWindow`).

    Raises a ProtocolError where the body ends first or `TooSlow` where it
    stalls: what it got stays in `into`, so reading goes on from there.
    """
    got = window_got = 0
    window_start = clock()
    while got < length:
        # read1: what one socket read brings, so that progress is looked at between reads of a slow body.
        chunk = answer.raw.read1(min(CHUNK, length - got), decode_content=False)
        if not chunk:
            raise urllib3.exceptions.ProtocolError(f"the answer ended after {got} of {length} bytes")
        into += chunk
        got += len(chunk)
        window_got += len(chunk)
        elapsed = clock() - window_start
        if got < length and elapsed >= stall.seconds:
            if window_got < stall.least_bytes:
                raise TooSlow(f"stalled: {window_got} bytes in {elapsed:.1f} s, fewer than the {stall.least_bytes} "
                              f"bytes every {stall.seconds:g} s that a body must bring")
            window_start, window_got = clock(), 0
