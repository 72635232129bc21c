"""Reading a webcorpus corpus back, checking it as it goes.

`iter_corpus` yields the records of every corpus shard of a directory (or
of a file pattern), in any format a build writes (`corpus-*.avro`,
`.parquet`, `.jsonl.zst`, `.jsonl.gz`, `.jsonl`: `--format`); with
`verify=True` it recomputes each
record's `content_hash` from its `html` and its `record_digest` from all
its other fields, and raises `CorruptCorpus` on any mismatch or damaged
block. `ReadCorpus` does the same in a Beam pipeline, sending bad records to
a `dead_letter` output instead of failing.

Reading a local corpus imports fastavro, not Beam (whose import takes seconds and
logs warnings a reader never asked for): Beam's file systems are imported only
for a path with a scheme (gs://, https://, ...), and `ReadCorpus` only when asked
for (`transforms.corpus.read_corpus_transform`).

`scan_avro` walks an Avro container file block by block itself (rather than
through fastavro's reader, which stops at the first damaged block): it checks
every sync marker, decompresses every block and decodes every record, and
after a damaged block it resynchronizes at the next sync marker, so one bad
block does not hide the state of the rest of the file. `scan_parquet` reads a
Parquet shard row group by row group (each data page's CRC checked), and
`scan_jsonl` a JSON Lines shard line by line; `scan_shard` picks the one a
shard's name calls for.
"""

from __future__ import annotations

import bz2
import glob
import gzip
import io
import json
import lzma
import mmap
import os
import re
import sys
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

import fastavro
from fastavro.read import HEADER_SCHEMA

from transforms.corpus.blocks import html_to_blocks
from transforms.corpus.corpus_format import (FILE_PREFIX, RECORD_DIGEST, SHARD_EXTENSIONS, SHARD_NAME, content_hash,
                                             digest_in, digested_schema)
from transforms.filesystems.regular_files import file_contents, open_regular

# As Beam's FileSystems.get_scheme tells a path on another file system.
SCHEME = re.compile(r"[a-zA-Z][-a-zA-Z0-9+.]*://")

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


def record_problem(record: dict, digest: Callable[[dict], str] | None = None) -> str | None:
    """Why a record does not match its digests (or its text its html), or None.

    `digest` computes a record's `record_digest` (from the schema of the shard it was read from); by
    default, the pipeline's own `stages.compress_write.avro_encoding.record_digest`. Records of corpora
    written before `record_digest` was added have none: only their `html` and `text` are checked.
    """
    if "html" in record and "content_hash" in record and content_hash(record["html"]) != record["content_hash"]:
        return f"content_hash mismatch (url {record.get('url', '')!r})"
    if "html" in record and "text" in record and "\n".join(html_to_blocks(record["html"])) != record["text"]:
        return f"text differs from html (url {record.get('url', '')!r})"
    if digest is None:
        from transforms.stages.compress_write.avro_encoding import record_digest as digest
    if RECORD_DIGEST in record and digest(record) != record[RECORD_DIGEST]:
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
        written_schema = json.loads(header["meta"]["avro.schema"])
        schema = fastavro.parse_schema(written_schema)
        digest_schema = digested_schema(written_schema)
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
            problem = record_problem(record, lambda record: digest_in(digest_schema, record)) if verify else None
            if problem:
                yield Problem(name, f"record {record_index} (block {block_index} at byte {start})", problem)
            else:
                yield record
            record_index += 1
        block_index += 1


def scan_parquet(data, name: str, verify: bool = True) -> Iterator[dict | Problem]:
    """Yields the records of a Parquet shard's bytes (or its mapping), row group by row group, and a `Problem` for
    each damage found: an unreadable footer, a row group whose pages do not decode or fail their CRC."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Read through the mapping's file interface: a buffer of Arrow's over it would keep it from closing.
    stream = data if isinstance(data, mmap.mmap) else io.BytesIO(data)
    stream.seek(0)
    yield from _parquet_records(pq, pa.PythonFile(stream, mode="r"), name, verify)


def _parquet_records(pq, source, name: str, verify: bool) -> Iterator[dict | Problem]:
    import pyarrow as pa

    try:
        parquet = pq.ParquetFile(source, page_checksum_verification=True)
        # A map (`meta`) is a list of {key, value} entries (transforms/stages/compress_write/parquet_encoding.py).
        maps = [field.name for field in parquet.schema_arrow if pa.types.is_list(field.type)
                and pa.types.is_struct(field.type.value_type) and field.type.value_type.names == ["key", "value"]]
    except Exception as error:  # noqa: BLE001 - any failure here means the footer is damaged
        yield Problem(name, "footer", f"unreadable Parquet metadata: {str(error)[:300]}")
        return
    with parquet:
        first = 0
        for group in range(parquet.num_row_groups):
            try:
                records = parquet.read_row_group(group).to_pylist()
            except Exception as error:  # noqa: BLE001
                yield Problem(name, f"row group {group}", f"damaged row group: {str(error)[:300]}")
                first += parquet.metadata.row_group(group).num_rows
                continue
            for index, record in enumerate(records, first):
                record.update((column, {entry["key"]: entry["value"] for entry in record[column]}) for column in maps)
                problem = record_problem(record) if verify else None
                yield Problem(name, f"record {index} (row group {group})", problem) if problem else record
            first += len(records)


def _jsonl_lines(data, name: str) -> Iterator[bytes]:
    stream = data if isinstance(data, mmap.mmap) else io.BytesIO(data)
    stream.seek(0)
    if name.endswith(".jsonl.zst"):
        stream = zstd.ZstdFile(stream)
    elif name.endswith(".jsonl.gz"):
        stream = gzip.GzipFile(fileobj=stream, mode="rb")
    # (A mapping iterates byte by byte: its lines are read one by one.)
    return iter(stream.readline, b"")


def scan_jsonl(data, name: str, verify: bool = True) -> Iterator[dict | Problem]:
    """Yields the records of a JSON Lines shard's bytes (or its mapping; `.jsonl.zst`, `.jsonl.gz` or `.jsonl`),
    and a `Problem` for each damage found: a line that is not a JSON object, a compressed stream that breaks
    (zstd's and gzip's checksums are checked; reading stops there)."""
    number = 0
    try:
        for number, line in enumerate(_jsonl_lines(data, name), 1):
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
            except ValueError as error:
                yield Problem(name, f"line {number}", f"damaged line: {str(error)[:200]}")
                continue
            problem = record_problem(record) if verify else None
            yield Problem(name, f"line {number}", problem) if problem else record
    except (OSError, EOFError, zlib.error, zstd.ZstdError) as error:
        yield Problem(name, f"after line {number}", f"damaged compressed stream: {str(error)[:200]}")


def scan_shard(data, name: str, verify: bool = True) -> Iterator[dict | Problem]:
    """`scan_avro`, `scan_parquet` or `scan_jsonl`, as the shard's name says."""
    if name.endswith(".parquet"):
        return scan_parquet(data, name, verify)
    if ".jsonl" in name.rsplit("/", 1)[-1]:
        return scan_jsonl(data, name, verify)
    return scan_avro(data, name, verify)


def corpus_files(location: str) -> list[str]:
    """The corpus shards of a directory (`corpus-SSSSS-of-NNNNN.avro`, `.parquet`, `.jsonl.zst`, ...: a user's
    `corpus-final.avro` beside them is none), or the files a pattern matches."""
    if not SCHEME.match(location):
        if os.path.isdir(location):
            matched = glob.glob(os.path.join(glob.escape(location), f"{FILE_PREFIX}-*-of-*"))
            return sorted(path for path in matched if SHARD_NAME.fullmatch(os.path.basename(path)))
        return sorted(path for path in glob.glob(location, recursive=True) if os.path.isfile(path))
    from apache_beam.io.filesystems import FileSystems

    from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
    from transforms.filesystems.exact_paths import escape_glob

    if FileSystems.exists(location) and not location.endswith(SHARD_EXTENSIONS):
        # The directory is a path, not a pattern.
        matched = FileSystems.match([FileSystems.join(escape_glob(location), f"{FILE_PREFIX}-*-of-*")])
        return sorted(meta.path for meta in matched[0].metadata_list
                      if SHARD_NAME.fullmatch(meta.path.rsplit("/", 1)[-1]))
    return sorted(meta.path for meta in FileSystems.match([location])[0].metadata_list)


def read_bytes(path: str) -> bytes:
    """The bytes of a file (a local one only if it is a regular file: `open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def iter_corpus(location: str, verify: bool = True) -> Iterator[dict]:
    """Yields every record of a corpus (a directory or a pattern of its shards, in any format).

    With `verify`, raises `CorruptCorpus` at the first damaged block or record.
    """
    for path in corpus_files(location):
        with file_contents(path) as data:
            for item in scan_shard(data, path, verify):
                if isinstance(item, Problem):
                    raise CorruptCorpus(str(item))
                yield item


def __getattr__(name: str):
    """`ReadCorpus` and `VerifyRecord` are Beam transforms: Beam is imported when one is asked for."""
    if name in ("ReadCorpus", "VerifyRecord"):
        from transforms.corpus import read_corpus_transform

        return getattr(read_corpus_transform, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
