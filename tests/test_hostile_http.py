"""Servers and listings that misbehave: each is an error in one line, or read correctly; none hangs a run.

A server on 127.0.0.1 serves a few WARC files and listings; `behaviour`
says how it misbehaves (a Content-Range total that shrinks, a 503 with
`retry_after`, a hang-up without an answer, a body at a trickle, a HEAD that claims 90 TB, a compressed answer,
a body cut on every attempt, a retry answered from elsewhere than asked, basic auth; `later`: a file that becomes other bytes once it was read to its
end). Every answer it sends is bounded
in time, and the server stops with the test module.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import gzip
import io
import json
import re
import threading
import time
import tracemalloc
import zlib
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from apache_beam.io.filesystems import FileSystems

from pipeline import crawl
from pipeline import settings as options
from pipeline.sample import sample_captures, warc_bytes
from tests.helpers import corpus_records, html_capture
from tests.test_cli import run_main
from transforms.filesystems import http_filesystem, http_session
from transforms.filesystems.locations import readable_by_name, redacted
from transforms.stages.read_warc import record_runs
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES, split_warc

USER, PASSWORD = "alice", "s3cretpw"
# The longest any answer of the server may take: it stops trickling after this, whoever still waits.
ANSWER_SECONDS = 20


def many_pages(count: int) -> bytes:
    """A WARC file of `count` pages, of about 2 KB each."""
    return warc_bytes([html_capture(f"https://many.example.org/{index}", f"<p>Page {index} " + "word " * 400 + "</p>")
                       for index in range(count)], filename="many.warc.gz")


FILES = {
    "a.warc.gz": warc_bytes(sample_captures(), filename="a.warc.gz"),
    "many.warc.gz": many_pages(305),
    "junk.warc.gz": b"not a WARC file at all\n" * 10,
}


class HostileServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), HostileHandler)
        self.files: dict[str, bytes] = dict(FILES)
        self.behaviour: set[str] = set()
        self.seen: set[str] = set()
        self.retry_after = "100000"
        # A file's bytes from the first time an answer gave its last byte on (a file swapped once it was checked).
        self.later: dict[str, bytes] = {}
        # Each request, as "METHOD path".
        self.requests: list[str] = []
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def handle_error(self, request, client_address):
        pass  # a client that gave up on an answer (the build's stderr is the test's)

    def first_time(self, key: str) -> bool:
        with self.lock:
            if key in self.seen:
                return False
            self.seen.add(key)
            return True


class HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _head(self, status: int, length: int, headers: dict) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _answer(self, with_body: bool) -> None:
        server: HostileServer = self.server
        behaviour = server.behaviour
        path = self.path.lstrip("/")
        with server.lock:
            server.requests.append(f"{self.command} {path}")
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if "auth" in behaviour and self.headers.get("Authorization") != expected:
            self._head(401, 0, {"WWW-Authenticate": 'Basic realm="mirror"'})
            return
        if "hang-up" in behaviour and server.first_time(f"{self.command} {path}"):
            self.close_connection = True  # no answer at all
            return
        if "retry-after" in behaviour and server.first_time(f"{self.command} {path}"):
            self._head(503, 0, {"Retry-After": server.retry_after})
            return
        data = server.files.get(path)
        if data is None:
            self._head(404, 0, {})
            return
        if self.command == "HEAD":
            length = 99999999999999 if "huge-head" in behaviour else len(data)
            self._head(200, length, {"Accept-Ranges": "bytes"})
            return
        first, _, last = self.headers.get("Range", "bytes=0-").removeprefix("bytes=").partition("-")
        first, last = int(first), min(int(last or len(data) - 1), len(data) - 1)
        if first >= len(data):
            self._head(416, 0, {"Content-Range": f"bytes */{len(data)}"})
            return
        misplaced = "misplaced-retry" in behaviour and not server.first_time(f"misplaced {path}")
        if misplaced:
            # (A retry answered from further back in the file than asked, as its Content-Range says.)
            first = max(0, first - 100)
        body = data[first:last + 1]
        # Shrinking: each answer says the file ends where this range ends (and no ETag to tell files apart).
        total = last + 1 if "shrinking" in behaviour else len(data)
        headers = {"Content-Range": f"bytes {first}-{last}/{total}"}
        if "gzip" in behaviour:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        self._head(206, len(body), headers)
        if "slow" in behaviour:
            self._trickle(body)
        elif "cut" in behaviour or ("misplaced-retry" in behaviour and not misplaced):
            self.wfile.write(body[:len(body) // 2])
            self.close_connection = True
        else:
            self.wfile.write(body)
            if last == len(data) - 1 and path in server.later:
                with server.lock:
                    server.files[path] = server.later.pop(path)

    def _trickle(self, body: bytes) -> None:
        give_up = time.monotonic() + ANSWER_SECONDS
        for index in range(len(body)):
            if time.monotonic() > give_up:
                break
            try:
                self.wfile.write(body[index:index + 1])
                self.wfile.flush()
            except OSError:
                break
            time.sleep(0.05)
        self.close_connection = True

    def do_GET(self):
        self._answer(True)

    def do_HEAD(self):
        self._answer(False)


@pytest.fixture(scope="module")
def hostile_server():
    served = HostileServer()
    threading.Thread(target=served.serve_forever, daemon=True).start()
    yield served
    served.shutdown()
    served.server_close()


@pytest.fixture
def server(hostile_server):
    hostile_server.behaviour, hostile_server.seen = set(), set()
    hostile_server.files, hostile_server.retry_after, hostile_server.requests = dict(FILES), "100000", []
    hostile_server.later = {}
    yield hostile_server
    hostile_server.behaviour, hostile_server.seen = set(), set()


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(http_session, "ATTEMPTS", 2)
    monkeypatch.setattr(http_session, "BACKOFF", 0.01)


def read_url(url: str) -> bytes:
    with FileSystems.open(url, compression_type="uncompressed") as stream:
        return stream.read()


def within(seconds: float, function, *args):
    """`function(*args)`'s result or exception, failing the test (not hanging it) past `seconds`."""
    outcome = {}

    def call():
        try:
            outcome["result"] = function(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def failed_build(args: list[str], tmp_path: Path) -> str:
    """The one line of a build that fails (exit 1), leaving nothing in its output directory."""
    code, stdout, stderr = run_main([*args, "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 1, (stdout, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing was published" in lines[0], stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    return lines[0]


def refusal(args: list[str], tmp_path: Path) -> str:
    code, stdout, stderr = run_main([*args, "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 2, (stdout, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m pipeline: error: "), stderr
    return lines[0]


# A Content-Range total that is not HEAD's size.

def test_a_content_range_total_that_shrinks_is_an_error(server, monkeypatch):
    monkeypatch.setattr(http_filesystem, "FIRST_BLOCK", 1000)
    server.behaviour = {"shrinking"}
    size = len(FILES["a.warc.gz"])
    assert size > 8192  # more than the first read asks for
    with pytest.raises(http_filesystem.RemoteReadError,
                       match=rf"a.warc.gz: an answer says the file ends at \d+ bytes .*HEAD said {size}"):
        read_url(server.base + "a.warc.gz")


def test_a_content_range_total_that_shrinks_names_where_the_size_came_from(server):
    """A stream given the file's size (the launcher's plan of an index file) asks no HEAD; an answer that disagrees
    with the size is an error naming where the size came from, not HEAD."""
    server.behaviour = {"shrinking"}
    size = len(FILES["a.warc.gz"])
    stream = http_filesystem.HttpReadStream(server.base + "a.warc.gz", exact=True, size=size,
                                            size_from="the launcher's plan")
    with pytest.raises(http_filesystem.RemoteReadError, match=rf"a.warc.gz: an answer says the file ends at 100 "
                                                              rf"bytes .*, the launcher's plan said {size}: the file"):
        stream.read(100)
    assert not any(request.startswith("HEAD") for request in server.requests)


def test_a_build_from_a_server_whose_file_shrinks_fails(server, tmp_path):
    server.behaviour = {"shrinking"}
    assert len(FILES["many.warc.gz"]) > http_filesystem.FIRST_BLOCK
    line = failed_build(["--input", server.base + "many.warc.gz", "--input", server.base + "a.warc.gz"], tmp_path)
    assert f"{server.base}many.warc.gz" in line or f"{server.base}a.warc.gz" in line


# Waits between retries.

@pytest.fixture
def slept(monkeypatch) -> list[float]:
    """The waits asked of time.sleep (urllib3's backoff and Retry-After, the file system's backoff), not waited."""
    waits = []
    monkeypatch.setattr(time, "sleep", waits.append)
    return waits


def test_a_retry_after_within_the_longest_wait_is_waited(server, slept):
    server.behaviour, server.retry_after = {"retry-after"}, "7"
    assert read_url(server.base + "a.warc.gz") == FILES["a.warc.gz"]
    assert 7 in slept and max(slept) == 7


def test_retries_are_not_logged(server, caplog):
    server.behaviour = {"hang-up"}
    assert read_url(server.base + "a.warc.gz") == FILES["a.warc.gz"]
    assert server.requests[:2] == ["HEAD a.warc.gz", "HEAD a.warc.gz"]
    assert not [record for record in caplog.records if record.name.startswith("urllib3")]


def in_a_day() -> str:
    return email.utils.formatdate(time.time() + 100000, usegmt=True)


@pytest.mark.parametrize("retry_after", [lambda: "100000", in_a_day], ids=["seconds", "http-date"])
def test_a_server_that_asks_to_retry_after_a_day_is_an_error_at_once(retry_after, server, slept):
    server.behaviour, server.retry_after = {"retry-after"}, retry_after()
    with pytest.raises(http_filesystem.RemoteReadError) as failed:
        read_url(server.base + "a.warc.gz")
    assert re.fullmatch(rf"{re.escape(server.base)}a.warc.gz: HTTP 503 Service Unavailable, and the server asked to "
                        r"retry after (100000|99\d\d\d) s \(27.8 h\); giving up", str(failed.value)), failed.value
    assert server.requests == ["HEAD a.warc.gz"] and not slept


def test_a_listing_whose_server_asks_for_a_day_is_one_line_at_once(server, slept, tmp_path):
    server.behaviour = {"retry-after"}
    server.files["mine.paths"] = b"a.warc.gz\n"
    line = refusal(["--input", server.base + "mine.paths"], tmp_path)
    assert line == f"python -m pipeline: error: cannot read the listing {server.base}mine.paths: HTTP 503 Service " \
        "Unavailable, and the server asked to retry after 100000 s (27.8 h); giving up"
    assert server.requests == ["HEAD mine.paths"] and not slept


# A body at a trickle.

class Trickle:
    """An answer whose body comes `per_read` bytes a socket read, each read `seconds` later on `clock`."""

    def __init__(self, per_read: int, seconds: float):
        self.per_read, self.seconds, self.now, self.sent = per_read, seconds, 0.0, 0
        self.raw = self

    def clock(self) -> float:
        return self.now

    def read1(self, size: int, decode_content: bool) -> bytes:
        self.now += self.seconds
        self.sent += min(size, self.per_read)
        return b"x" * min(size, self.per_read)


@pytest.mark.parametrize("length", [3 << 20, 1 << 30], ids=["3 MB", "1 GB"])
def test_a_body_at_a_byte_a_second_stalls_after_one_window_whatever_its_size(length):
    answer, received = Trickle(per_read=1, seconds=1.0), bytearray()
    with pytest.raises(http_session.TooSlow, match=r"^stalled: 30 bytes in 30.0 s, fewer than the 65536 bytes every "
                                                   r"30 s that a body must bring$"):
        http_session.read_body(answer, length, received, http_session.STALL, answer.clock)
    assert len(received) == answer.sent == 30


def test_a_slow_body_that_keeps_up_the_minimum_is_read_whole():
    answer, received = Trickle(per_read=16 << 10, seconds=7.0), bytearray()  # 64 KiB in 28 s
    http_session.read_body(answer, 1 << 20, received, http_session.STALL, answer.clock)
    assert len(received) == 1 << 20


def test_a_body_at_a_trickle_is_an_error_naming_the_stall(server, quick_retries):
    server.behaviour = {"slow"}
    stream = io.BufferedReader(http_filesystem.HttpReadStream(server.base + "a.warc.gz",
                                                              http_session.StallWindow(0.3, 64 << 10)))
    with pytest.raises(http_filesystem.RemoteReadError, match=r"a.warc.gz: reading from offset \d+ failed after 2 "
                                                              r"attempts: stalled: \d+ bytes in [\d.]+ s, fewer than "
                                                              r"the 65536 bytes every 0.3 s that a body must bring$"):
        within(10, stream.read)
    assert server.requests == ["HEAD a.warc.gz", "GET a.warc.gz", "GET a.warc.gz"]


# Ranges: bounded, and a range size that is too small.

def test_a_file_of_any_size_has_a_bounded_number_of_ranges():
    size = 1 << 36
    ranges = list(split_warc("f.warc.gz", size, 1 << 20, "record"))
    assert len(ranges) <= split_warc.__globals__["MAX_RANGES_PER_FILE"]
    assert ranges[0].start == 0 and ranges[-1].end is None
    assert all(one.end == after.start for one, after in zip(ranges, ranges[1:]))
    # Files within the bound keep the range size asked for.
    assert [r.start for r in split_warc("f.warc.gz", 4 * DEFAULT_RANGE_BYTES, DEFAULT_RANGE_BYTES, "record")] == \
        [0, DEFAULT_RANGE_BYTES, 2 * DEFAULT_RANGE_BYTES, 3 * DEFAULT_RANGE_BYTES]


def test_a_record_run_is_read_without_a_head_and_a_retry_answered_from_elsewhere_is_an_error(server, quick_retries):
    """An index's record run (`record_runs.fetch_run`) is read by the file system's exact ranged GET: no HEAD, and
    a retry's answer must start at the byte the cut-short answer reached (its Content-Range says where)."""
    url = server.base + "many.warc.gz"
    data = FILES["many.warc.gz"]
    server.behaviour = {"misplaced-retry"}
    with pytest.raises(http_session.RemoteReadError, match="asked for bytes from 3000, got Content-Range 'bytes 2900-"):
        record_runs.fetch_run(url, 1000, 5000)
    server.behaviour, server.requests = set(), []
    assert record_runs.fetch_run(url, 1000, 5000) == (data[1000:5000], len(data))
    assert server.requests == ["GET many.warc.gz"]
    with pytest.raises(http_filesystem.PastTheEnd):
        record_runs.fetch_run(url, len(data) - 10, len(data) + 10)


def test_a_range_size_below_the_minimum_is_refused(tmp_path):
    line = refusal(["--range-size", "1"], tmp_path)
    assert "--range-size 1 is below the minimum of 1048576 bytes (1 MiB)" in line


def test_a_head_that_claims_90_terabytes_fails_quickly(server, tmp_path):
    server.behaviour = {"huge-head"}
    line = within(60, failed_build, ["--input", server.base + "many.warc.gz", "--input", server.base + "a.warc.gz"],
                  tmp_path)
    assert "99999999999999" in line


# A compressed answer; a body cut on every attempt.

def test_a_compressed_answer_is_said_as_such(server):
    server.behaviour = {"gzip"}
    with pytest.raises(http_filesystem.RemoteReadError, match="a.warc.gz: the server compressed its answer "
                                                               r"\(Content-Encoding: gzip\)"):
        read_url(server.base + "a.warc.gz")


def test_a_body_cut_on_every_attempt_is_exit_1_naming_the_url_once(server, quick_retries, tmp_path):
    server.behaviour = {"cut"}
    url = server.base + "a.warc.gz"
    line = failed_build(["--input", url], tmp_path)
    assert line.count("127.0.0.1") == 1 and url in line
    assert re.search(r"reading from offset \d+ failed after 2 attempts: Connection broken: IncompleteRead\(\d+ bytes "
                     r"read, \d+ more expected\); nothing was published", line), line


# A server that ignores Range (Python's http.server).

@pytest.fixture
def plain_server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    served = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    served.daemon_threads = True
    threading.Thread(target=served.serve_forever, daemon=True).start()
    yield served, root
    served.shutdown()
    served.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_a_server_that_ignores_range_is_read_as_one_stream(plain_server, tmp_path, monkeypatch):
    served, root = plain_server
    base = f"http://127.0.0.1:{served.server_address[1]}/"
    monkeypatch.setattr(options, "MIN_RANGE_BYTES", 1000)
    disk = tmp_path / "disk"
    code, _, stderr = run_main(["--input", str(root / "many.warc.gz"), "--output", str(disk), "--quiet"])
    assert code == 0, stderr
    code, _, stderr = run_main(["--input", base + "many.warc.gz", "--input", base + "a.warc.gz",
                                "--output", str(tmp_path / "out"), "--quiet", "--range-size", "2000"])
    assert code == 0, stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for name in ("many.warc.gz", "a.warc.gz"):
        assert any("ignores Range requests" in note for note in report["files"][base + name]["notes"]), report
    # One range per file: a shard each.
    assert len(list((tmp_path / "out").glob("corpus-*.avro"))) == 2
    many = [record["url"] for record in corpus_records(tmp_path / "out") if "many.example.org" in record["url"]]
    assert sorted(many) == sorted(record["url"] for record in corpus_records(disk))
    # The page inspector does not download a file again from its start for each page it shows.
    assert "not read again: its server ignores Range requests" in (tmp_path / "out" / "report.html").read_text()


def test_whether_a_server_serves_ranges_is_told_by_one_request(server, plain_server):
    served, _ = plain_server
    assert not http_filesystem.serves_ranges(f"http://127.0.0.1:{served.server_address[1]}/a.warc.gz")
    server.files["empty.warc.gz"] = b""
    assert http_filesystem.serves_ranges(server.base + "a.warc.gz")
    assert http_filesystem.serves_ranges(server.base + "empty.warc.gz")  # (416: there is no byte 0)
    assert read_url(server.base + "empty.warc.gz") == b""
    assert http_filesystem.serves_ranges("/data/a.warc.gz")


# Listings.

def bomb(lines: bytes, filler: bytes, size: int) -> bytes:
    """A gzip file of `lines` then `size` bytes of `filler`, compressed without holding them."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = filler * ((1 << 20) // len(filler))
    parts = [compressor.compress(lines)]
    parts += [compressor.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join(parts) + compressor.flush()


def test_a_listing_is_read_only_as_far_as_files_needs(tmp_path, monkeypatch):
    monkeypatch.setattr(crawl, "LISTING_BYTES_LIMIT", 4 << 20)
    listing = tmp_path / "mine.paths.gz"
    listing.write_bytes(bomb(b"a.warc.gz\nb.warc.gz\n", b"\n", 64 << 20))
    base = crawl.crawl_base("https", None)
    assert crawl.expand_inputs((str(listing),), base, crawl.FileRange(0, 2)) == \
        (str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc.gz"))
    with pytest.raises(crawl.ListingError, match=r"mine.paths.gz holds over 4194304 bytes"):
        crawl.expand_inputs((str(listing),), base, None)


@pytest.mark.parametrize("where", ["disk", "server"])
def test_a_listing_that_inflates_far_is_read_in_little_memory(where, server, tmp_path):
    # 64 MiB of blank lines in 64 KB: decompressed as far as --files 0:1 needs, not in one piece.
    data = bomb(b"a.warc.gz\n", b"\n", 64 << 20)
    server.files["mine.paths.gz"] = data
    (tmp_path / "mine.paths.gz").write_bytes(data)
    listing = server.base + "mine.paths.gz" if where == "server" else str(tmp_path / "mine.paths.gz")
    tracemalloc.start()
    try:
        files = crawl.expand_inputs((listing,), crawl.crawl_base("https", None), crawl.FileRange(0, 1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert files == (listing.replace("mine.paths.gz", "a.warc.gz"),)
    assert peak < 8 << 20, f"{peak:,} bytes at the peak"


def test_a_listing_line_too_long_is_refused(tmp_path):
    listing = tmp_path / "mine.paths.gz"
    listing.write_bytes(bomb(b"a.warc.gz\n", b"x", 2 << 20))
    with pytest.raises(crawl.ListingError, match=r"mine.paths.gz: line 2 is longer than 4096 bytes"):
        crawl.expand_inputs((str(listing),), crawl.crawl_base("https", None), None)


@pytest.mark.parametrize("line", ["/etc/passwd", "file:///etc/passwd", "s3://bucket/x.warc.gz",
                                  "http://elsewhere.example/x.warc.gz", "http://127.0.0.1:1/x.warc.gz"])
def test_a_remote_listing_names_only_files_of_its_own_server(line, server, tmp_path):
    server.files["mine.paths"] = f"a.warc.gz\n{line}\n".encode()
    listing = server.base + "mine.paths"
    message = refusal(["--input", listing], tmp_path)
    assert f"the listing {listing}, line 2, names {line}" in message
    assert "may only name files on its own server" in message


def test_a_remote_listing_may_name_files_on_its_server_and_the_crawls_base(server):
    server.files["mine.paths"] = (f"a.warc.gz\n{server.base}many.warc.gz\n"
                                  "https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-33/x.warc.gz\n").encode()
    assert crawl.expand_inputs((server.base + "mine.paths",), crawl.crawl_base("https", None), None) == (
        server.base + "a.warc.gz", server.base + "many.warc.gz",
        "https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-33/x.warc.gz")


# Credentials.

def test_redacted_drops_the_credentials_of_a_url_only():
    assert redacted(f"http://{USER}:{PASSWORD}@mirror.example:8080/a/b.warc.gz?x=1") == \
        "http://mirror.example:8080/a/b.warc.gz?x=1"
    assert redacted(f"https://{USER}@mirror.example/b.warc.gz") == "https://mirror.example/b.warc.gz"
    for unchanged in ("/data/a@b.warc.gz", "https://mirror.example/a@b.warc.gz", "s3://bucket/x.warc.gz"):
        assert redacted(unchanged) == unchanged
    assert readable_by_name(["/data/a.warc.gz", f"http://{USER}:{PASSWORD}@mirror.example/b.warc.gz"]) == \
        {"http://mirror.example/b.warc.gz": f"http://{USER}:{PASSWORD}@mirror.example/b.warc.gz"}


@pytest.mark.slow
def test_credentials_in_urls_are_written_nowhere(server, tmp_path):
    server.behaviour = {"auth"}
    server.files["mine.paths"] = b"a.warc.gz\njunk.warc.gz\n"
    secret = f"http://{USER}:{PASSWORD}@127.0.0.1:{server.server_address[1]}/"
    code, stdout, stderr = run_main(["--input", secret + "mine.paths", "--input", secret + "many.warc.gz",
                                     "--output", str(tmp_path / "out")])
    assert code == 0, stderr
    assert PASSWORD not in stdout + stderr
    written = [path for path in (tmp_path / "out").rglob("*") if path.is_file()]
    assert {"manifest.json", "report.json", "report.html"} <= {path.name for path in written}
    assert any(path.name.startswith("dead-letter") and path.stat().st_size for path in written)
    for path in written:
        content = path.read_bytes()
        assert PASSWORD.encode() not in content and f"{USER}:".encode() not in content, path
    sources = {record["source_file"] for record in corpus_records(tmp_path / "out")}
    assert sources == {server.base + "a.warc.gz", server.base + "many.warc.gz"}
    # The page inspector read its pages again, with the credentials.
    page = (tmp_path / "out" / "report.html").read_text()
    assert "kept pages, the same sample" in page and "cannot read it again" not in page


@pytest.mark.parametrize("names", [["a.warc.gz"], ["a.warc.gz", "many.warc.gz"]], ids=["launcher", "pipeline"])
def test_a_failure_line_names_a_url_without_its_credentials(names, server, quick_retries, tmp_path):
    server.behaviour = {"auth", "cut"}
    secret = f"http://{USER}:{PASSWORD}@127.0.0.1:{server.server_address[1]}/"
    line = failed_build([argument for name in names for argument in ("--input", secret + name)], tmp_path)
    assert PASSWORD not in line and "reading from offset" in line
    assert any(server.base + name in line for name in names)


@pytest.mark.slow
def test_a_build_with_credentials_in_urls_rebuilds_with_them_in_netrc(server, tmp_path, monkeypatch):
    server.behaviour = {"auth"}
    secret = f"http://{USER}:{PASSWORD}@127.0.0.1:{server.server_address[1]}/"
    code, _, stderr = run_main(["--input", secret + "a.warc.gz", "--input", secret + "many.warc.gz",
                                "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, stderr
    rebuild = ["--rebuild", str(tmp_path / "out" / "manifest.json")]
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    (tmp_path / "first").mkdir()
    line = failed_build(rebuild, tmp_path / "first")
    assert f"{server.base}a.warc.gz: HTTP 401 Unauthorized (a manifest names URLs without credentials" in line
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login {USER} password {PASSWORD}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert read_url(server.base + "a.warc.gz") == FILES["a.warc.gz"]
    code, stdout, stderr = run_main([*rebuild, "--output", str(tmp_path / "again"), "--quiet"])
    assert code == 0 and "byte-identical" in stdout, stderr
