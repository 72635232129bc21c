"""WARC files written by webcorpus itself: the shipped sample and test fixtures.

`warc_bytes` writes Common Crawl style WARC files (warcinfo, then request,
response and metadata for every capture), byte for byte the same on every
run: record ids are derived from the capture, gzip headers carry no time;
compressed per record with gzip, zstd (with a dictionary, as the IIPC's WARC
zstd draft has it, or without) or LZ4, or not. `arc_bytes` writes ARC
version 1 files (a version block, then one record per capture), as the
Internet Archive did before WARC, plain or gzipped (per record or whole).
`sample_captures` is the sample that `python -m pipeline` reads when given
no input: Latin and Cyrillic pages and the troubles real crawls have.

    python -m pipeline.sample [PATH]   # rewrites pipeline/data/sample.warc.gz
"""

from __future__ import annotations

import argparse
import gzip
import struct
import sys
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path

import lz4.frame
import zstandard

WARC_VERSIONS = ("1.0", "1.1")
COMPRESSIONS = ("record", "file", "none", "zstd", "lz4")
# The skippable frame that holds a zstd WARC's dictionary (IIPC WARC zstd draft).
ZSTD_DICTIONARY_MAGIC = struct.pack("<I", 0x184D2A5D)
SAMPLE_PATH = Path(__file__).parent / "data" / "sample.warc.gz"
RECORD_ID_NAMESPACE = uuid.UUID("6f1d3c3e-52d5-4a43-9f5b-1f5c1a3f7e10")

REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 304: "Not Modified", 404: "Not Found",
           500: "Internal Server Error"}


@dataclass(frozen=True)
class Capture:
    """One fetched URL, as a crawler stored it."""

    url: str
    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    date: str = "2026-01-15T10:00:00Z"
    http_headers: tuple[tuple[str, str], ...] = ()
    warc_headers: tuple[tuple[str, str], ...] = ()
    record_type: str = "response"
    # Store the body with HTTP chunked framing / gzip content-encoding, as
    # some crawlers do instead of storing the decoded payload.
    chunked: bool = False
    gzipped: bool = False
    # Cut the stored HTTP block to this many bytes (a broken record).
    cut_block_to: int | None = None

    @property
    def record_id(self) -> str:
        return f"<urn:uuid:{uuid.uuid5(RECORD_ID_NAMESPACE, f'{self.record_type} {self.url} {self.date}')}>"


def _record(version: str, warc_type: str, headers: list[tuple[str, str]], block: bytes,
            declared_length: int | None = None) -> bytes:
    lines = [f"WARC/{version}", f"WARC-Type: {warc_type}"]
    lines += [f"{name}: {value}" for name, value in headers]
    lines.append(f"Content-Length: {len(block) if declared_length is None else declared_length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"


def _chunk(body: bytes, size: int = 1000) -> bytes:
    pieces = [body[start:start + size] for start in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


def http_response(capture: Capture) -> bytes:
    body = capture.body
    headers = list(capture.http_headers)
    if capture.content_type is not None:
        headers.insert(0, ("Content-Type", capture.content_type))
    if capture.gzipped:
        body = gzip.compress(body, mtime=0)
        headers.append(("Content-Encoding", "gzip"))
    if capture.chunked:
        body = _chunk(body)
        headers.append(("Transfer-Encoding", "chunked"))
    else:
        headers.append(("Content-Length", str(len(body))))
    status_line = f"HTTP/1.1 {capture.status} {REASONS.get(capture.status, 'Unknown')}".rstrip()
    head = "\r\n".join([status_line] + [f"{name}: {value}" for name, value in headers])
    return head.encode("latin-1") + b"\r\n\r\n" + body


def capture_records(capture: Capture, version: str) -> list[bytes]:
    """The request, response (or revisit) and metadata records of one capture."""
    host = capture.url.split("/")[2]
    path = "/" + capture.url.split("/", 3)[3] if capture.url.count("/") >= 3 else "/"
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: webcorpus-sample\r\n\r\n".encode("latin-1")
    request_id = f"<urn:uuid:{uuid.uuid5(RECORD_ID_NAMESPACE, f'request {capture.url} {capture.date}')}>"
    metadata_id = f"<urn:uuid:{uuid.uuid5(RECORD_ID_NAMESPACE, f'metadata {capture.url} {capture.date}')}>"
    common = [("WARC-Target-URI", capture.url), ("WARC-Date", capture.date)]
    block = http_response(capture)
    declared = None
    if capture.cut_block_to is not None:
        declared = len(block)
        block = block[:capture.cut_block_to]
    response = _record(
        version, capture.record_type,
        common + [("WARC-Record-ID", capture.record_id), ("WARC-Concurrent-To", request_id),
                  ("Content-Type", "application/http; msgtype=response")] + list(capture.warc_headers),
        block, declared,
    )
    return [
        _record(version, "request", common + [("WARC-Record-ID", request_id),
                                              ("Content-Type", "application/http; msgtype=request")], request),
        response,
        _record(version, "metadata", common + [("WARC-Record-ID", metadata_id), ("WARC-Concurrent-To", capture.record_id),
                                               ("Content-Type", "application/warc-fields")],
                b"fetchTimeMs: 120\r\n"),
    ]


def warc_bytes(captures: list[Capture], compression: str = "record", version: str = "1.0",
               filename: str = "sample.warc.gz", zstd_dictionary: bytes | None = None,
               compress_dictionary: bool = False) -> bytes:
    """A WARC file of `captures`: gzip per `record`, over the whole `file`, `none`, or a `zstd` or `lz4` frame per record.

    A zstd file made with `zstd_dictionary` (a trained dictionary, or raw
    content) starts with it in a skippable frame, itself zstd-compressed
    with `compress_dictionary`.
    """
    if compression not in COMPRESSIONS or version not in WARC_VERSIONS:
        raise ValueError(f"compression must be one of {COMPRESSIONS} and version one of {WARC_VERSIONS}")
    info = f"software: webcorpus sample writer\r\nformat: WARC File Format {version}\r\n".encode("utf-8")
    records = [_record(version, "warcinfo", [
        ("WARC-Date", "2026-01-15T09:59:00Z"),
        ("WARC-Filename", filename),
        ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(RECORD_ID_NAMESPACE, 'warcinfo ' + filename)}>"),
        ("Content-Type", "application/warc-fields"),
    ], info)]
    for capture in captures:
        records.extend(capture_records(capture, version))
    if compression == "record":
        return b"".join(_gzip_member(record) for record in records)
    if compression == "file":
        return _gzip_member(b"".join(records))
    if compression == "zstd":
        return _zstd_frames(records, zstd_dictionary, compress_dictionary)
    if compression == "lz4":
        return b"".join(lz4.frame.compress(record, content_checksum=True) for record in records)
    return b"".join(records)


def _zstd_frames(records: list[bytes], dictionary: bytes | None, compress_dictionary: bool) -> bytes:
    if dictionary is None:
        compressor = zstandard.ZstdCompressor(level=3)
        return b"".join(compressor.compress(record) for record in records)
    compressor = zstandard.ZstdCompressor(level=3, dict_data=zstandard.ZstdCompressionDict(dictionary))
    stored = zstandard.ZstdCompressor().compress(dictionary) if compress_dictionary else dictionary
    head = ZSTD_DICTIONARY_MAGIC + struct.pack("<I", len(stored)) + stored
    return head + b"".join(compressor.compress(record) for record in records)


def arc_bytes(captures: list[Capture], compression: str = "none", filename: str = "sample.arc") -> bytes:
    """An ARC version 1 file of `captures` (their HTTP responses): `none`, gzip per `record`, or over the whole `file`."""
    if compression not in ("none", "record", "file"):
        raise ValueError("an ARC file is gzipped per `record`, over the whole `file`, or not at all (`none`)")
    version_block = b"1 0 webcorpus\nURL IP-address Archive-date Content-type Archive-length\n"
    records = [_arc_record(f"filedesc://{filename}", "20260115095900", "text/plain", version_block)]
    for capture in captures:
        date = capture.date.replace("-", "").replace("T", "").replace(":", "").rstrip("Z")
        records.append(_arc_record(capture.url, date, _arc_content_type(capture), http_response(capture)))
    if compression == "record":
        return b"".join(_gzip_member(record) for record in records)
    if compression == "file":
        return _gzip_member(b"".join(records))
    return b"".join(records)


def _arc_content_type(capture: Capture) -> str:
    return (capture.content_type or "no-type").split(";", 1)[0].strip()


def _arc_record(url: str, date: str, content_type: str, block: bytes) -> bytes:
    return f"{url} 192.0.2.1 {date} {content_type} {len(block)}\n".encode("utf-8") + block + b"\n"


def _gzip_member(data: bytes) -> bytes:
    # gzip.compress(mtime=0) still writes the OS byte of the machine; a fixed
    # header keeps the file identical everywhere.
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = compressor.compress(data) + compressor.flush()
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = zlib.crc32(data).to_bytes(4, "little") + (len(data) & 0xFFFFFFFF).to_bytes(4, "little")
    return header + body + trailer


def _page(title: str, body: str, lang: str, head: str = "") -> str:
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head>{head}<title>{title}</title>'
            f'<style>body {{ font-family: serif; }}</style>'
            f'<script>window.tracking = {{"page": "{title}"}};</script></head>\n'
            f'<body>{body}</body></html>\n')


ENGLISH_ARTICLE = _page(
    "Harbour cranes return to the old port",
    '<nav><a href="/">Home</a><a href="/news/">News</a><a href="/about">About</a></nav>'
    '<article><h1>Harbour cranes return to the old port</h1>'
    '<p class="byline">By <b>Anna</b> Smith &amp; Tom Jones, <abbr title="Associated Press">AP</abbr></p>'
    '<p>The city council voted on Tuesday to restore the three <i>historic</i> cranes that stood '
    'on the quay until 1987. Foo &amp; Bar Ltd. will do the work for &pound;2.4&nbsp;million.</p>'
    '<h4 class="warning">Cookies help us deliver our services.</h4>'
    '<div style="display: none">Hidden tracking text that no reader sees.</div>'
    '<p>Work starts in spring.<br>Residents can see the plans at the library.</p>'
    '<form action="/subscribe"><label>Your e-mail</label><input name="email" value="you@example.org">'
    '<button>Subscribe</button></form>'
    '<p>Read more: <a href="https://example.org/ports/history">the port\'s history</a>.</p>'
    '</article><footer>&copy; 2026 Harbour Gazette</footer>',
    "en",
)

RUSSIAN_ARTICLE = _page(
    "Новый мост через Неву",
    '<header><a href="/ru/">Главная</a></header>'
    '<main><h1>Новый мост через Неву</h1>'
    '<div>При<b>в</b>ет, читатель! Строительство моста начнётся в 2027 году.</div>'
    '<p>Мэрия сообщила, что проект стоит 12,5 млрд рублей. '
    '<span class="dropcap">Г</span>ородские власти обещают открыть движение через три года.</p>'
    '<p hidden>Скрытый текст для поисковых роботов.</p>'
    '<ul><li>Длина: 900 м</li><li>Полосы: 6</li></ul>'
    '<svg width="10" height="10"><text>svg-текст</text></svg>'
    '</main>',
    "ru",
    head='<meta charset="utf-8">',
)

CP1251_ARTICLE = _page(
    "Погода в Москве",
    '<h1>Погода в Москве</h1><p>Завтра в столице ожидается снег и до минус 15 градусов. '
    'Синоптики советуют одеваться теплее.</p><p>Mixed Latin text: Moscow weather report.</p>',
    "ru",
    head='<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
)

KOI8R_ARTICLE = _page(
    "Новости науки",
    '<h1>Новости науки</h1><p>Учёные из Новосибирска вырастили кристалл размером с ладонь.</p>',
    "ru",
)

MIXED_ARTICLE = _page(
    "Café culture – a guide",
    '<div class="content"><h2>Café culture</h2><p>Naïve visitors order a “latte” at 5 p.m.; '
    'locals prefer espresso. Über-fans travel far for it.</p>'
    '<div class="warning">Advertisement: buy coffee beans online!</div>'
    '<p>Кофе по-турецки тоже популярен.</p></div>',
    "en",
)


def sample_captures() -> list[Capture]:
    """The pages of the shipped sample, with the troubles real crawls have."""
    english = ENGLISH_ARTICLE.encode("utf-8")
    return [
        Capture("https://harbour-gazette.example.org/2026/01/cranes", english,
                date="2026-01-15T10:00:00Z"),
        Capture("https://ru.example.org/news/most", RUSSIAN_ARTICLE.encode("utf-8"),
                content_type="text/html", date="2026-01-15T10:01:00Z"),
        Capture("https://pogoda.example.org/moskva", CP1251_ARTICLE.encode("windows-1251"),
                content_type="text/html", date="2026-01-15T10:02:00Z"),
        Capture("https://nauka.example.org/kristall", KOI8R_ARTICLE.encode("koi8-r"),
                content_type="text/html", date="2026-01-15T10:03:00Z"),
        Capture("https://cafe.example.org/guide", MIXED_ARTICLE.encode("utf-8"),
                date="2026-01-15T10:04:00Z", chunked=True, gzipped=True),
        # The same article under another URL, captured later: an exact duplicate.
        Capture("https://mirror.example.org/harbour/cranes", english, date="2026-01-15T10:05:00Z"),
        Capture("https://harbour-gazette.example.org/cranes", b"", status=301,
                http_headers=(("Location", "https://harbour-gazette.example.org/2026/01/cranes"),),
                date="2026-01-15T10:06:00Z"),
        Capture("https://harbour-gazette.example.org/robots.txt", b"User-agent: *\nDisallow: /private/\n",
                content_type="text/plain", date="2026-01-15T10:07:00Z"),
        Capture("https://harbour-gazette.example.org/missing", _page("Not found", "<p>No such page</p>", "en").encode(),
                status=404, date="2026-01-15T10:08:00Z"),
        Capture("https://ru.example.org/news/most", b"", record_type="revisit", date="2026-01-16T10:00:00Z",
                warc_headers=(("WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),
                              ("WARC-Refers-To-Target-URI", "https://ru.example.org/news/most"))),
        Capture("https://big.example.org/long-page", _page("Long", "<p>" + "word " * 2000 + "</p>", "en").encode(),
                warc_headers=(("WARC-Truncated", "length"),), date="2026-01-15T10:09:00Z"),
    ]


def write_sample(path: Path = SAMPLE_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(warc_bytes(sample_captures(), filename=path.name))
    return path


class _OneLineErrorParser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineErrorParser(
        prog="python -m pipeline.sample",
        description="Write the sample WARC file that `python -m pipeline` reads when given no input, byte for byte "
                    "the same on every run.")
    parser.add_argument("path", nargs="?", type=Path, default=SAMPLE_PATH,
                        help=f"where to write it (default: the shipped sample, {SAMPLE_PATH})")
    print(write_sample(parser.parse_args(argv).path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
