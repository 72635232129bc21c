"""A generated crawl with a capture index in Common Crawl's own schema, for the tests and the benchmark.

WARC files laid out as Common Crawl's (`crawl-data/NAME/segments/.../warc/`), gzipped per record, and an index of
their response records as Common Crawl's cc-index table: its columns and types, rows sorted by SURT key, several
row groups, Hive-style partitions (`cc-index/table/cc-main/warc/crawl=NAME/subset=warc/`), listed in
`crawl-data/NAME/cc-index-table.paths.gz`.
"""

from __future__ import annotations

import datetime
import gzip
import io
import random
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from warcio.archiveiterator import ArchiveIterator

from pipeline.sample import Capture, warc_bytes

# Common Crawl's table, as published (the columns a build may read, and those beside them), with their types.
SCHEMA = pa.schema([
    ("url_surtkey", pa.string()), ("url", pa.string()), ("url_host_name", pa.string()),
    ("url_host_tld", pa.string()), ("url_host_2nd_last_part", pa.string()), ("url_host_registry_suffix", pa.string()),
    ("url_host_registered_domain", pa.string()), ("url_host_private_suffix", pa.string()),
    ("url_host_private_domain", pa.string()), ("url_protocol", pa.string()), ("url_port", pa.int32()),
    ("url_path", pa.string()), ("url_query", pa.string()), ("fetch_time", pa.timestamp("ms", tz="UTC")),
    ("fetch_status", pa.int16()), ("fetch_redirect", pa.string()), ("content_digest", pa.string()),
    ("content_mime_type", pa.string()), ("content_mime_detected", pa.string()), ("content_charset", pa.string()),
    ("content_languages", pa.string()), ("content_truncated", pa.string()), ("warc_filename", pa.string()),
    ("warc_record_offset", pa.int32()), ("warc_record_length", pa.int32()), ("warc_segment", pa.string()),
])
SEGMENT = "1722640000000.00"
WORDS = {"rus": "дом лес река город книга слово время жизнь работа вопрос".split(),
         "eng": "house forest river city book word time life work question".split(),
         "deu": "Haus Wald Fluss Stadt Buch Wort Zeit Leben Arbeit Frage".split()}


@dataclass(frozen=True)
class IndexedCrawl:
    root: Path
    crawl: str
    # Per index row: (url, language, warc_filename, offset, length), in the WARC files' order.
    rows: list
    warc_files: list

    @property
    def listing(self) -> str:
        return f"crawl-data/{self.crawl}/cc-index-table.paths.gz"

    def urls(self, language: str) -> set[str]:
        return {row[0] for row in self.rows if row[1] == language}

    def warc_bytes(self) -> int:
        return sum((self.root / name).stat().st_size for name in self.warc_files)


def _surt(url: str) -> str:
    host, _, path = url.split("://", 1)[1].partition("/")
    return ",".join(reversed(host.split("."))) + ")/" + path


def _page(language: str, number: int, words: int, rng: random.Random) -> bytes:
    text = " ".join(rng.choice(WORDS[language]) for _ in range(words))
    return (f"<html lang=\"{language[:2]}\"><head><title>{language} page {number}</title></head><body>"
            f"<h1>{language} {number}</h1><p>{text}</p></body></html>").encode("utf-8")


def make_crawl(root: Path, crawl: str = "CC-TEST-2026-10", files: int = 3, pages_per_file: int = 12,
               language_of=lambda number: "rus" if number % 4 == 0 else "eng", words: int = 60,
               row_group_rows: int = 8, index_files: int = 2, seed: int = 1) -> IndexedCrawl:
    """Writes the crawl under `root`; page `number` (counted over the whole crawl) is in `language_of(number)`."""
    rng = random.Random(seed)
    rows, warc_names, number = [], [], 0
    for file_number in range(files):
        name = f"crawl-data/{crawl}/segments/{SEGMENT}/warc/{crawl}-20260101000000-{file_number:05d}.warc.gz"
        captures, languages = [], []
        for _ in range(pages_per_file):
            language = language_of(number)
            tld = {"rus": "ru", "eng": "com", "deu": "de"}[language]
            captures.append(Capture(f"https://site{number % 7}.example.{tld}/page/{number}",
                                    _page(language, number, words, rng)))
            languages.append(language)
            number += 1
        data = warc_bytes(captures, filename=name.rsplit("/", 1)[1])
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        warc_names.append(name)
        iterator = ArchiveIterator(io.BytesIO(data))
        responses = []
        for record in iterator:
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                record.content_stream().read()
                responses.append((url, iterator.get_record_offset()))
            else:
                record.content_stream().read()
        # (An offset's record ends where the next record begins: lengths from the offsets of every record.)
        offsets = [offset for offset in _record_offsets(data)] + [len(data)]
        for (url, offset), language in zip(responses, languages):
            rows.append((url, language, name, offset, offsets[offsets.index(offset) + 1] - offset))
    _write_index(root, crawl, rows, row_group_rows, index_files)
    return IndexedCrawl(root, crawl, rows, warc_names)


def _record_offsets(data: bytes) -> list[int]:
    iterator = ArchiveIterator(io.BytesIO(data))
    offsets = []
    for record in iterator:
        record.content_stream().read()
        offsets.append(iterator.get_record_offset())
    return offsets


def index_table(rows: list) -> pa.Table:
    """Common Crawl's table of `rows` ((url, language, warc_filename, offset, length)), sorted by SURT key."""
    when = datetime.datetime(2026, 1, 15, 10, tzinfo=datetime.timezone.utc)
    ordered = sorted(rows, key=lambda row: _surt(row[0]))
    columns = {name: [] for name in SCHEMA.names}
    for url, language, name, offset, length in ordered:
        host = url.split("/")[2]
        parts = host.split(".")
        values = {
            "url_surtkey": _surt(url), "url": url, "url_host_name": host, "url_host_tld": parts[-1],
            "url_host_2nd_last_part": parts[-2], "url_host_registry_suffix": parts[-1],
            "url_host_registered_domain": ".".join(parts[-2:]), "url_host_private_suffix": parts[-1],
            "url_host_private_domain": ".".join(parts[-2:]), "url_protocol": "https", "url_port": None,
            "url_path": "/" + url.split("/", 3)[3], "url_query": None, "fetch_time": when, "fetch_status": 200,
            "fetch_redirect": None, "content_digest": "AAAA", "content_mime_type": "text/html",
            "content_mime_detected": "text/html", "content_charset": "UTF-8",
            "content_languages": language if language != "rus" else "rus,eng", "content_truncated": None,
            "warc_filename": name, "warc_record_offset": offset, "warc_record_length": length,
            "warc_segment": SEGMENT,
        }
        for column, value in values.items():
            columns[column].append(value)
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def _write_index(root: Path, crawl: str, rows: list, row_group_rows: int, files: int) -> None:
    table = index_table(rows)
    directory = f"cc-index/table/cc-main/warc/crawl={crawl}/subset=warc"
    (root / directory).mkdir(parents=True, exist_ok=True)
    names = []
    per_file = -(-table.num_rows // files)
    for number in range(files):
        name = f"{directory}/part-{number:05d}-0000.c000.gz.parquet"
        pq.write_table(table.slice(number * per_file, per_file), root / name, row_group_size=row_group_rows,
                       compression="gzip")
        names.append(name)
    listing = root / f"crawl-data/{crawl}/cc-index-table.paths.gz"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_bytes(gzip.compress("".join(f"{name}\n" for name in names).encode(), mtime=0))
