"""A crawl by name (`--crawl`, `--files`), a listing as `--input`, and the https:// file system, without the internet.

A server on 127.0.0.1 serves a small crawl laid out as Common Crawl's
(`crawl-data/NAME/warc.paths.gz` and the WARC files it lists), honouring
Range requests; it can drop a connection mid-file or answer 503, once per
file. Builds over HTTP are compared with the build of the same files on disk.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from apache_beam.io.filesystems import FileSystems

from pipeline import crawl
from pipeline import settings as options
from pipeline.verify import verify
from pipeline.sample import Capture, sample_captures, warc_bytes
from tests.helpers import corpus_records, html_capture
from tests.test_cli import run_main
from transforms.filesystems import http_filesystem, http_session

REPO = Path(__file__).resolve().parent.parent
CRAWL = "CC-TEST-2026-05"
SEGMENT = "1722640000000.00"


def warc_name(index: int) -> str:
    return f"crawl-data/{CRAWL}/segments/{SEGMENT}/warc/{CRAWL}-20260101000000-{index:05d}.warc.gz"


def crawl_files() -> dict[str, bytes]:
    """Three WARC files (the sample's pages, a duplicate across files) and the crawl's listing, by path."""
    captures = sample_captures()
    groups = [captures[:5], captures[5:] + [html_capture("https://b.example.org/", "<p>Second file's page</p>")],
              [html_capture("https://c.example.org/", "<p>Third file's page</p>")]]
    files = {warc_name(index): warc_bytes(group, filename=warc_name(index).rsplit("/", 1)[1])
             for index, group in enumerate(groups)}
    listing = "".join(f"{name}\n" for name in files).encode()
    files[f"crawl-data/{CRAWL}/warc.paths.gz"] = gzip.compress(listing, mtime=0)
    return files


class CrawlServer(ThreadingHTTPServer):
    """Serves `root`'s files with Range support; `faults` says what goes wrong once per WARC file."""

    daemon_threads = True

    def __init__(self, root: Path):
        super().__init__(("127.0.0.1", 0), RangeHandler)
        self.root = root
        self.faults: set[str] = set()
        self.faulted: set[tuple[str, str]] = set()
        self.requests: list[tuple[str, str, str | None]] = []
        # (path, offset) where a dropped connection left each file.
        self.dropped_at: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def handle_error(self, request, client_address):
        pass  # a client that hung up (a build that failed): the build's stderr is the test's

    def reset(self, *faults: str) -> None:
        with self.lock:
            self.faults, self.faulted, self.requests, self.dropped_at = set(faults), set(), [], []

    def fault_once(self, fault: str, path: str) -> bool:
        """Whether `fault` strikes this request: the first time for each WARC file."""
        with self.lock:
            if fault not in self.faults or not path.endswith(".warc.gz") or (fault, path) in self.faulted:
                return False
            self.faulted.add((fault, path))
            return True


class RangeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _answer(self, with_body: bool) -> None:
        server: CrawlServer = self.server
        path = self.path.lstrip("/")
        with server.lock:
            server.requests.append((self.command, path, self.headers.get("Range")))
        if server.fault_once(f"503-{self.command}", path):
            self._send(503, b"busy", with_body)
            return
        file = server.root / path
        if not file.is_file():
            self._send(404, b"not found", with_body)
            return
        stat = file.stat()
        size = stat.st_size
        # (As file servers make theirs: a file rewritten has another ETag.)
        etag = {"ETag": f'"{stat.st_mtime_ns:x}-{size:x}"'}
        wanted = self.headers.get("Range")
        if wanted is None:
            if with_body:
                self._send(200, file.read_bytes(), with_body, etag)
            else:
                self._send_head(200, size, etag)
            return
        # (Only the range is read, as a file server does: a benchmark's 16 MB files are read by thousands of ranges.)
        first, last = wanted.removeprefix("bytes=").split("-")
        first, last = int(first), min(int(last or size - 1), size - 1)
        if first >= size:
            self._send(416, b"", with_body, {"Content-Range": f"bytes */{size}", **etag})
            return
        with file.open("rb") as handle:
            handle.seek(first)
            body = handle.read(last + 1 - first)
        headers = {"Content-Range": f"bytes {first}-{last}/{size}", **etag}
        if with_body and len(body) > 1 and server.fault_once("drop", path):
            # The connection dies half-way through the body.
            self._send_head(206, len(body), headers)
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            with server.lock:
                server.dropped_at.append((path, first + len(body) // 2))
            self.close_connection = True
            return
        self._send(206, body, with_body, headers)

    def _send_head(self, status: int, length: int, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def _send(self, status: int, body: bytes, with_body: bool, headers: dict | None = None) -> None:
        self._send_head(status, len(body), headers)
        if with_body:
            self.wfile.write(body)

    def do_GET(self):
        self._answer(True)

    def do_HEAD(self):
        self._answer(False)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("crawl-site")
    for name, data in crawl_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


@pytest.fixture(scope="module")
def server(site):
    served = CrawlServer(site)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


@pytest.fixture
def clean_server(server):
    server.reset()
    yield server
    server.reset()


def build(tmp_path_factory, *args: str) -> Path:
    output = tmp_path_factory.mktemp("crawl-out")
    code, stdout, stderr = run_main([*args, "--output", str(output), "--quiet"])
    assert code == 0, stderr
    return output


def output_files(output: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(output.iterdir()) if path.is_file()}


def as_on_disk(text: str, server: CrawlServer, site: Path) -> str:
    """`text` with the server's URLs as the paths of the same files on disk."""
    return text.replace(server.base, f"{site}/")


def without_digest(records: list[dict]) -> list[dict]:
    return [{name: value for name, value in record.items() if name != "record_digest"} for record in records]


def assert_same_build_as_on_disk(http_output: Path, disk_output: Path, server: CrawlServer, site: Path) -> None:
    """The same corpus but for where the files were read from (the records' source_file).

    What differs follows from source_file: each record's record_digest (over its fields, source_file
    included: both builds verify), the Avro files' sync marker (derived from the build's options, inputs
    included), and so the output digests of the manifests.
    """
    assert (json.loads(as_on_disk(json.dumps(without_digest(corpus_records(http_output))), server, site))
            == without_digest(corpus_records(disk_output)))
    for output in (http_output, disk_output):
        assert verify(str(output))[2] == []
    http_files, disk_files = output_files(http_output), output_files(disk_output)
    assert http_files.keys() == disk_files.keys()
    for name in http_files:
        if name.endswith(".jsonl"):
            assert as_on_disk(http_files[name].decode(), server, site) == disk_files[name].decode(), name
    http_report, disk_report = (json.loads(as_on_disk(files["report.json"].decode(), server, site))
                                for files in (http_files, disk_files))
    # The Avro files' size: the records hold source_file.
    for report in (http_report, disk_report):
        del report["bytes"]["written"], report["ratios"]["minimized/written"], report["ratios"]["raw_html/written"]
    assert http_report == disk_report
    http_manifest, disk_manifest = (json.loads(files["manifest.json"]) for files in (http_files, disk_files))
    assert (json.loads(as_on_disk(json.dumps(http_manifest["inputs"]), server, site)) == disk_manifest["inputs"])


@pytest.fixture(scope="module")
def disk_build(site, tmp_path_factory) -> Path:
    return build(tmp_path_factory, "--input", str(site / warc_name(0)), "--input", str(site / warc_name(1)))


@pytest.fixture(scope="module")
def crawl_build(server, tmp_path_factory) -> Path:
    server.reset()
    return build(tmp_path_factory, "--crawl", CRAWL, "--files", "0:2", "--crawl-base-url", server.base)


@pytest.mark.slow
def test_a_crawl_by_name_builds_what_its_files_on_disk_build(crawl_build, disk_build, server, site):
    assert_same_build_as_on_disk(crawl_build, disk_build, server, site)
    manifest = json.loads((crawl_build / "manifest.json").read_text())
    assert [entry["path"] for entry in manifest["inputs"]] == [server.base + warc_name(0), server.base + warc_name(1)]
    assert manifest["options"]["inputs"] == [server.base + warc_name(0), server.base + warc_name(1)]


@pytest.mark.slow
def test_the_listing_as_input_builds_the_same_bytes(crawl_build, clean_server, tmp_path_factory):
    listing = f"{clean_server.base}crawl-data/{CRAWL}/warc.paths.gz"
    output = build(tmp_path_factory, "--input", listing, "--files", ":2")
    assert output_files(output) == output_files(crawl_build)


@pytest.mark.parametrize("faults", [("drop",), ("503-GET", "503-HEAD")], ids=["drop-mid-file", "503-once"])
@pytest.mark.slow
def test_a_server_that_fails_once_gives_the_same_bytes(faults, crawl_build, clean_server, tmp_path_factory):
    clean_server.reset(*faults)
    output = build(tmp_path_factory, "--crawl", CRAWL, "--files", "0:2", "--crawl-base-url", clean_server.base)
    assert output_files(output) == output_files(crawl_build)
    assert {path for _, path in clean_server.faulted} == {warc_name(0), warc_name(1)}
    if faults == ("drop",):
        # Reading went on from the byte it had got to, not from the start of the range.
        assert {path for path, _ in clean_server.dropped_at} == {warc_name(0), warc_name(1)}
        for dropped_path, offset in clean_server.dropped_at:
            assert any(method == "GET" and path == dropped_path and span.startswith(f"bytes={offset}-")
                       for method, path, span in clean_server.requests if span), (dropped_path, offset)


@pytest.mark.slow
def test_the_build_over_http_rebuilds_byte_identical(crawl_build, clean_server, tmp_path):
    code, stdout, stderr = run_main(["--rebuild", str(crawl_build / "manifest.json"), "--output",
                                     str(tmp_path / "again"), "--quiet"])
    assert code == 0, stderr
    assert "byte-identical" in stdout


@pytest.mark.slow
def test_small_byte_ranges_over_http_read_as_on_disk(monkeypatch, site, clean_server, tmp_path_factory):
    monkeypatch.setattr(options, "MIN_RANGE_BYTES", 64)  # ranges of a small file
    over_http = build(tmp_path_factory, "--crawl", CRAWL, "--files", "0:1", "--crawl-base-url", clean_server.base,
                      "--range-size", "2000")
    on_disk = build(tmp_path_factory, "--input", str(site / warc_name(0)), "--range-size", "2000")
    assert_same_build_as_on_disk(over_http, on_disk, clean_server, site)
    size = (site / warc_name(0)).stat().st_size
    assert size > 3 * 2000
    assert len(list(over_http.glob("corpus-*.avro"))) >= 3  # a shard per range
    starts = {int(span.removeprefix("bytes=").split("-")[0]) for method, path, span in clean_server.requests
              if method == "GET" and path == warc_name(0) and span}
    assert {start for start in starts if 0 < start < size}, "no read began inside the file"


def error_line(args: list[str], tmp_path: Path) -> str:
    code, stdout, stderr = run_main([*args, "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 2, (stdout, stderr)
    errors = stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("python -m pipeline: error: "), stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    return errors[0]


def test_a_crawl_that_does_not_exist_is_one_line_and_exit_2(clean_server, tmp_path):
    line = error_line(["--crawl", "CC-MAIN-1999-99", "--crawl-base-url", clean_server.base], tmp_path)
    assert line.endswith(f"no crawl named CC-MAIN-1999-99 at {clean_server.base}crawl-data/CC-MAIN-1999-99/"
                         "warc.paths.gz")


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (one the system just gave out, and took back)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("host, why", [
    (None, "cannot connect to 127.0.0.1:{port} (Connection refused)"),
    ("webcorpus-test.invalid", "cannot find the host webcorpus-test.invalid ("),
], ids=["connection-refused", "unknown-host"])
def test_a_crawl_without_network_is_one_line_at_once(host, why, tmp_path, monkeypatch, caplog):
    port = closed_port()
    base = f"http://{host or '127.0.0.1'}:{port}/"
    connections, slept = [], []
    resolve = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: connections.append(args[:2])
                        or resolve(*args, **kwargs))
    monkeypatch.setattr(time, "sleep", slept.append)
    line = error_line(["--crawl", CRAWL, "--files", "0:1", "--crawl-base-url", base], tmp_path)
    assert line.startswith(f"python -m pipeline: error: cannot read the listing {base}crawl-data/{CRAWL}/"
                           f"warc.paths.gz: {why.format(port=port)}"), line
    assert len(connections) == 1 and not slept
    assert not [record for record in caplog.records if record.name.startswith("urllib3")]


@pytest.mark.parametrize("files, culprit", [
    ("2:9", "--files 2:9 is out of range: the listing"),
    ("3:", "--files 3: is out of range"),
    ("0-2", "--files takes START:END"),
    ("2:1", "chooses no file"),
])
def test_files_out_of_range_or_malformed_is_a_clear_error(files, culprit, clean_server, tmp_path):
    line = error_line(["--crawl", CRAWL, "--files", files, "--crawl-base-url", clean_server.base], tmp_path)
    assert culprit in line
    if "range" in culprit:
        assert "has 3 files" in line


@pytest.mark.parametrize("args, culprit", [
    (["--files", "0:2", "--input", "x.warc.gz"], "apply to a listing"),
    (["--crawl", CRAWL, "--input", "x.paths"], "--crawl and --input"),
    (["--crawl", CRAWL, "--crawl-source", "s3", "--crawl-base-url", "http://127.0.0.1:9/"], "give one"),
    (["--crawl", "../etc"], "is not a crawl's name"),
    (["--rebuild", "elsewhere/manifest.json", "--crawl", CRAWL, "--files", "0:2"], "leave out --crawl, --files"),
])
def test_conflicting_crawl_options_are_refused(args, culprit, tmp_path):
    assert culprit in error_line(args, tmp_path)


def test_crawl_source_s3_without_boto3_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(crawl, "boto3_installed", lambda: False)
    line = error_line(["--crawl", "CC-MAIN-2024-33", "--crawl-source", "s3"], tmp_path)
    assert "s3://commoncrawl/crawl-data/CC-MAIN-2024-33/warc.paths.gz" in line and "apache-beam[aws]" in line


def test_listing_lines_resolve_as_common_crawl_lays_them_out():
    line = "crawl-data/CC-MAIN-2024-33/segments/1/warc/a.warc.gz"
    https, s3 = crawl.crawl_base("https", None), crawl.crawl_base("s3", None)
    assert crawl.listing_url("CC-MAIN-2024-33", s3) == "s3://commoncrawl/crawl-data/CC-MAIN-2024-33/warc.paths.gz"
    assert crawl.resolve_line(line, crawl.listing_url("CC-MAIN-2024-33", s3), s3) == f"s3://commoncrawl/{line}"
    assert crawl.resolve_line(line, crawl.listing_url("CC-MAIN-2024-33", https), https) == \
        f"https://data.commoncrawl.org/{line}"
    # Common Crawl's listing, downloaded: its lines are the crawl's, read from the base chosen.
    assert crawl.resolve_line(line, "/home/me/warc.paths.gz", s3) == f"s3://commoncrawl/{line}"
    # A copy laid out as Common Crawl's, wherever it is.
    assert crawl.resolve_line(line, "/data/cc/crawl-data/CC-MAIN-2024-33/warc.paths.gz", https) == f"/data/cc/{line}"
    # Any other listing: relative to its own directory; absolute lines as they are.
    assert crawl.resolve_line("part/b.warc.gz", "gs://bucket/run/mine.paths", https) == "gs://bucket/run/part/b.warc.gz"
    assert crawl.resolve_line("s3://other/c.warc.gz", "/x/mine.paths", https) == "s3://other/c.warc.gz"


def test_a_plain_listing_on_disk_reads_the_files_it_names(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.warc.gz").write_bytes(warc_bytes([Capture("https://a.example.org/", b"<p>A</p>")]))
    (tmp_path / "in" / "mine.paths").write_text("a.warc.gz\n\n")
    assert crawl.expand_inputs((str(tmp_path / "in" / "mine.paths"),), crawl.crawl_base("https", None), None) == \
        (str(tmp_path / "in" / "a.warc.gz"),)


def test_the_read_stream_seeks_and_reads_every_byte_over_blocks(clean_server, site, monkeypatch):
    monkeypatch.setattr(http_filesystem, "FIRST_BLOCK", 1000)
    data = (site / warc_name(0)).read_bytes()
    url = clean_server.base + warc_name(0)
    with FileSystems.open(url, compression_type="uncompressed") as stream:
        assert stream.read(10) == data[:10]
        assert stream.read() == data[10:]
        stream.seek(len(data) // 2)
        assert stream.read(5000) == data[len(data) // 2:len(data) // 2 + 5000]
        assert stream.seek(0, 2) == len(data)
        assert stream.read(1) == b""
    assert FileSystems.match([url])[0].metadata_list[0].size_in_bytes == len(data)
    assert FileSystems.match([clean_server.base + "nothing.warc.gz"])[0].metadata_list == []


def test_a_seek_back_across_a_blocks_end_asks_for_nothing_again(clean_server, site, monkeypatch):
    """A reader that read past a block's end and seeks back to where its record starts (warcio after a record, the
    WARC reader's skim before a response) reads those bytes again without a request: a full build over HTTP read
    Common Crawl's mix of records about twice over when it did not."""
    monkeypatch.setattr(http_filesystem, "FIRST_BLOCK", 1000)
    data = (site / warc_name(0)).read_bytes()
    assert len(data) > 3000
    stream = http_filesystem.HttpReadStream(clean_server.base + warc_name(0))
    assert stream.read(1000) + stream.read(1000) == data[:2000]  # blocks [0, 1000) and [1000, 3000)
    asked = len(clean_server.requests)
    stream.seek(900)
    assert stream.read(100) + stream.read(1000) == data[900:2000]
    assert len(clean_server.requests) == asked


def test_a_server_that_keeps_dropping_is_an_error_naming_the_url_and_offset(server, site, monkeypatch):
    monkeypatch.setattr(http_session, "ATTEMPTS", 3)
    monkeypatch.setattr(http_session, "BACKOFF", 0.01)
    url = server.base + warc_name(1)
    server.reset("drop")
    monkeypatch.setattr(server, "fault_once", lambda fault, path: fault == "drop" and path == warc_name(1))
    with FileSystems.open(url, compression_type="uncompressed") as stream:
        with pytest.raises(http_filesystem.RemoteReadError, match=rf"{url}: reading from offset \d+ failed after 3"):
            stream.read()
    server.reset()


@pytest.mark.slow
def test_every_module_that_uses_beams_file_systems_registers_https():
    # The `transforms` package imports nothing, so that CleanHtml's rules load without Beam in the parser's
    # child: each module that reaches FileSystems registers https:// itself, in every worker that imports it.
    checked = []
    for path in sorted((REPO / "pipeline").rglob("*.py")) + sorted((REPO / "transforms").rglob("*.py")):
        names = {(node.module, alias.name) for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.ImportFrom) for alias in node.names}
        if ("apache_beam.io.filesystems", "FileSystems") in names and path.name != "http_filesystem.py":
            checked.append(path.name)
            assert ("transforms.filesystems", "http_filesystem") in names or any(
                module == "transforms.filesystems.http_filesystem" for module, _ in names), path
    assert "manifest.py" in checked and "verify.py" in checked
    code = ("import sys, transforms.report.manifest\n"
            "from apache_beam.io.filesystems import FileSystems\n"
            "print(type(FileSystems.get_filesystem('https://example.org/a.warc.gz')).__name__)")
    child = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert child.stdout.split()[-1] == "HttpsFileSystem"
    bare = subprocess.run([sys.executable, "-c", "import sys, transforms; print('apache_beam' in sys.modules)"],
                          cwd=REPO, capture_output=True, text=True, check=True)
    assert bare.stdout.split()[-1] == "False"


def test_the_https_file_system_refuses_to_write(clean_server):
    with pytest.raises(http_filesystem.ReadOnly, match="only reads"):
        FileSystems.create(clean_server.base + "new.warc.gz")


def test_a_read_that_the_network_breaks_is_an_error_not_damage():
    """Damage would be a dead letter and the records after it; a network failure fails the read (the runner retries
    it), so that the corpus does not depend on the network."""
    from transforms.stages.read_warc.read_warc import read_warc

    data = warc_bytes(sample_captures())
    broke = []

    class BreaksMidFile(io.BytesIO):
        """Fails once half-way, as a network does that comes back."""

        def read(self, size=-1):
            if self.tell() > len(data) // 2 and not broke:
                broke.append(self.tell())
                raise http_filesystem.RemoteReadError(f"https://example.org/a.warc.gz: reading from offset {self.tell()} "
                                                      "failed after 6 attempts")
            return super().read(size)

    with pytest.raises(http_filesystem.RemoteReadError, match="reading from offset"):
        list(read_warc(lambda: BreaksMidFile(data), "a.warc.gz", on_note=lambda note: None))
