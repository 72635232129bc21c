"""Reading a webcorpus corpus back, checking it as it goes.

`iter_corpus` yields the records of every `corpus-*.avro` file of a
directory (or of a file pattern); with `verify=True` it recomputes each
record's `content_hash` from its `html` and its `record_digest` from all
its other fields, and raises `CorruptCorpus` on any mismatch or damaged
block. `ReadCorpus` does the same in a Beam pipeline, sending bad records to
a `dead_letter` output instead of failing.

`scan_avro` walks an Avro container file block by block itself (rather than
through fastavro's reader, which stops at the first damaged block): it checks
every sync marker, decompresses every block and decodes every record, and
after a damaged block it resynchronizes at the next sync marker, so one bad
block does not hide the state of the rest of the file.
"""

from __future__ import annotations

import bz2
import io
import json
import lzma
import mmap
import re
import sys
import zlib
from dataclasses import dataclass
from typing import Iterator

import apache_beam as beam
import fastavro
from apache_beam.io.filesystems import FileSystems
from fastavro.read import HEADER_SCHEMA

from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.blocks import html_to_blocks
from transforms.compress_write import FILE_PREFIX, RECORD_DIGEST, record_digest
from transforms.exact_paths import escape_glob
from transforms.hash_dedup import content_hash
from transforms.regular_files import file_contents, open_regular
from transforms.stage import DEAD_LETTER, counter

SHARD_NAME = re.compile(rf"{FILE_PREFIX}-\d{{5}}-of-\d{{5}}\.avro")

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

SYNC_SIZE = 16


def _snappy(data: bytes) -> bytes:
    import cramjam

    payload, checksum = data[:-4], data[-4:]
    decompressed = bytes(cramjam.snappy.decompress_raw(payload))
    if zlib.crc32(decompressed).to_bytes(4, "big") != checksum:
        raise ValueError("snappy block CRC mismatch")
    return decompressed


DECOMPRESSORS = {
    "null": bytes,
    "deflate": lambda data: zlib.decompress(data, -zlib.MAX_WBITS),
    "snappy": _snappy,
    "zstandard": zstd.decompress,
    "xz": lzma.decompress,
    "bzip2": bz2.decompress,
}


class CorruptCorpus(ValueError):
    """A corpus file that is damaged, with where."""


@dataclass
class Problem:
    file: str
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.reason}"


def _read_long(data: bytes, position: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if position >= len(data):
            raise ValueError("unexpected end of file in a block header")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), position
        shift += 7
        if shift > 63:
            raise ValueError("malformed block header")


def record_problem(record: dict) -> str | None:
    """Why a record does not match its digests (or its text its html), or None.

    Records of corpora written before `record_digest` was added have none:
    only their `html` and `text` are checked.
    """
    if "html" in record and "content_hash" in record and content_hash(record["html"]) != record["content_hash"]:
        return f"content_hash mismatch (url {record.get('url', '')!r})"
    if "html" in record and "text" in record and "\n".join(html_to_blocks(record["html"])) != record["text"]:
        return f"text differs from html (url {record.get('url', '')!r})"
    if RECORD_DIGEST in record and record_digest(record) != record[RECORD_DIGEST]:
        return f"record_digest mismatch: a field of the record changed (url {record.get('url', '')!r})"
    return None


def scan_avro(data: bytes, name: str, verify: bool = True) -> Iterator[dict | Problem]:
    """Yields the records of an Avro file's bytes (or its mapping: `file_contents`), and a `Problem` for each
    damage found."""
    # A mapping is read as a file of its own; bytes are wrapped (BytesIO shares them, without a copy).
    header_stream = data if isinstance(data, mmap.mmap) else io.BytesIO(data)
    header_stream.seek(0)
    try:
        header = fastavro.schemaless_reader(header_stream, HEADER_SCHEMA)
        schema = fastavro.parse_schema(json.loads(header["meta"]["avro.schema"]))
        codec = header["meta"].get("avro.codec", b"null").decode()
        decompress = DECOMPRESSORS[codec]
    except Exception as error:  # noqa: BLE001 - any failure here means the header is damaged
        yield Problem(name, "header", f"unreadable Avro header: {error}")
        return
    sync = header["sync"]
    position = header_stream.tell()
    block_index = 0
    record_index = 0
    while position < len(data):
        start = position
        try:
            count, position = _read_long(data, position)
            size, position = _read_long(data, position)
            if count < 0 or size < 0 or position + size + SYNC_SIZE > len(data):
                raise ValueError("block size runs past the end of the file")
            block = data[position:position + size]
            position += size
            if data[position:position + SYNC_SIZE] != sync:
                raise ValueError("sync marker missing after the block")
            position += SYNC_SIZE
            stream = io.BytesIO(decompress(block))
            records = [fastavro.schemaless_reader(stream, schema) for _ in range(count)]
            if stream.read(1):
                raise ValueError("block holds more bytes than its records")
        except Exception as error:  # noqa: BLE001
            yield Problem(name, f"block {block_index} at byte {start}", f"damaged block: {error}")
            resync = data.find(sync, start + 1)
            if resync < 0:
                return
            position = resync + SYNC_SIZE
            block_index += 1
            continue
        for record in records:
            problem = record_problem(record) if verify else None
            if problem:
                yield Problem(name, f"record {record_index} (block {block_index} at byte {start})", problem)
            else:
                yield record
            record_index += 1
        block_index += 1


def corpus_files(location: str) -> list[str]:
    """The corpus shards of a directory (`corpus-SSSSS-of-NNNNN.avro`: a user's `corpus-final.avro` beside them
    is none), or the files a pattern matches."""
    if FileSystems.exists(location) and not location.endswith(".avro"):
        # The directory is a path, not a pattern.
        matched = FileSystems.match([FileSystems.join(escape_glob(location), f"{FILE_PREFIX}-*-of-*.avro")])
        return sorted(meta.path for meta in matched[0].metadata_list
                      if SHARD_NAME.fullmatch(meta.path.rsplit("/", 1)[-1]))
    return sorted(meta.path for meta in FileSystems.match([location])[0].metadata_list)


def read_bytes(path: str) -> bytes:
    """The bytes of a file (a local one only if it is a regular file: `open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def iter_corpus(location: str, verify: bool = True) -> Iterator[dict]:
    """Yields every record of a corpus (a directory or a pattern of Avro files).

    With `verify`, raises `CorruptCorpus` at the first damaged block or record.
    """
    for path in corpus_files(location):
        with file_contents(path) as data:
            for item in scan_avro(data, path, verify):
                if isinstance(item, Problem):
                    raise CorruptCorpus(str(item))
                yield item


class VerifyRecord(beam.DoFn):
    def setup(self):
        self._bad = counter("read_corpus", "corrupt")

    def process(self, record: dict):
        problem = record_problem(record)
        if problem:
            self._bad.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, {"url": record.get("url", ""), "reason": problem})
        else:
            yield record


class ReadCorpus(beam.PTransform):
    """Reads a corpus's records in a Beam pipeline; outputs `records` and `dead_letter` (hash mismatches)."""

    def __init__(self, location: str):
        super().__init__()
        self._pattern = location if location.endswith(".avro") else FileSystems.join(location, f"{FILE_PREFIX}-*.avro")

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadAvro" >> beam.io.ReadFromAvro(self._pattern)
            | "Verify" >> beam.ParDo(VerifyRecord()).with_outputs(DEAD_LETTER, main="records")
        )
