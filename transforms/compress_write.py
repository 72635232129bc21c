"""CompressWrite: the corpus as sharded Avro files.

Files are `DIR/corpus-SSSSS-of-NNNNN.avro`, one Avro record per document with
the schema `CORPUS_SCHEMA` (documented field by field in README.md). Codecs
are Avro's: deflate (zlib, levels 0-9, default 6), snappy, zstandard (levels
1-22, default 3), xz (presets 0-9, default 6), bzip2 (levels 1-9, default
9) and null.

fastavro ignores the level for xz and bzip2, so this module installs block
writers for those two codecs that honour it; the bytes they write are plain
xz and bzip2 blocks that every Avro reader reads.
"""

from __future__ import annotations

import bz2
import lzma

import apache_beam as beam
import fastavro
import fastavro._write as fastavro_write
from apache_beam.io.filebasedsink import FileBasedSink
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.transforms.display import DisplayDataItem

from transforms.document import Document
from transforms.hash_dedup import HASH_ALGORITHM

SHARD_TEMPLATE = "-SSSSS-of-NNNNN"
SUFFIX = ".avro"
FILE_PREFIX = "corpus"

# codec -> (lowest level, highest level, default level); None: no levels.
CODECS = {
    "deflate": (0, 9, 6),
    "snappy": None,
    "zstandard": (1, 22, 3),
    "xz": (0, 9, 6),
    "bzip2": (1, 9, 9),
    "null": None,
}

# Avro blocks are compressed one by one: the larger the block, the better
# the ratio. fastavro's default (16 KB) holds one or two pages.
DEFAULT_SYNC_INTERVAL = 1024 * 1024


def _string(name: str, doc: str) -> dict:
    return {"name": name, "type": "string", "doc": doc}


def _strings(name: str, doc: str) -> dict:
    return {"name": name, "type": {"type": "array", "items": "string"}, "doc": doc}


def _long(name: str, doc: str) -> dict:
    return {"name": name, "type": "long", "doc": doc}


CORPUS_SCHEMA = {
    "type": "record",
    "name": "Document",
    "namespace": "webcorpus",
    "doc": "One deduplicated web page of a webcorpus build.",
    "fields": [
        _string("url", "WARC-Target-URI of the capture."),
        _string("warc_record_id", "WARC-Record-ID of the response record."),
        _string("warc_date", "WARC-Date of the response record (ISO 8601)."),
        _string("source_file", "Path of the WARC file the record was read from."),
        _long("source_offset", "Offset of the record in that file (of its gzip member when gzipped per record)."),
        {"name": "http_status", "type": "int", "doc": "HTTP status code (always 200 for kept pages)."},
        _string("content_type", "HTTP Content-Type header as sent."),
        _string("charset", "Charset the page was decoded from (WHATWG name)."),
        _string("charset_source", "Where the charset came from: bom, http-header, meta, detected, default."),
        _string("title", "Text of <title>, whitespace collapsed."),
        _strings("links", "Absolute http(s) links of the page, in document order, without repeats."),
        _string("lang", "Language declared by <html lang> or Content-Language <meta>, lowercased; empty if none."),
        {"name": "meta", "type": {"type": "map", "values": "string"},
         "doc": "Selected <meta> values (description, keywords, og:*, ...) and the canonical link."},
        _string("html", "The page reduced to <div> blocks of minimized text (the corpus's content)."),
        _string("text", "The same blocks as plain text, one per line."),
        _string("content_hash", f"{HASH_ALGORITHM} of `html` in UTF-8, lowercase hex."),
        {"name": "duplicate_count", "type": "int", "doc": "Number of other captures with the same content."},
        _strings("duplicate_urls", "URLs of those captures, in survivor order."),
        _strings("duplicate_record_ids", "WARC-Record-IDs of those captures, in the same order."),
        _long("raw_bytes", "Bytes of the HTTP payload after transfer and content decoding."),
        _long("cleaned_bytes", "Bytes of the div-only HTML after CleanHtml."),
        _long("minimized_bytes", "Bytes of `html` after MinimizeText."),
    ],
}
PARSED_SCHEMA = fastavro.parse_schema(CORPUS_SCHEMA)
SCHEMA_FIELDS = tuple(field["name"] for field in CORPUS_SCHEMA["fields"])
FILE_METADATA = {"webcorpus.content_hash": HASH_ALGORITHM}


def _xz_block(encoder, block_bytes, level):
    data = lzma.compress(block_bytes, preset=6 if level is None else level)
    encoder.write_long(len(data))
    encoder._fo.write(data)


def _bzip2_block(encoder, block_bytes, level):
    data = bz2.compress(block_bytes, 9 if level is None else level)
    encoder.write_long(len(data))
    encoder._fo.write(data)


fastavro_write.BLOCK_WRITERS["xz"] = _xz_block
fastavro_write.BLOCK_WRITERS["bzip2"] = _bzip2_block


def resolve_level(codec: str, level: int | None) -> int | None:
    """The level to write with; raises ValueError for an unknown codec or a level out of range."""
    if codec not in CODECS:
        raise ValueError(f"unknown codec {codec!r}; choose one of {', '.join(CODECS)}")
    levels = CODECS[codec]
    if levels is None:
        if level is not None:
            raise ValueError(f"codec {codec} has no levels; leave --level out")
        return None
    low, high, default = levels
    if level is None:
        return default
    if not low <= level <= high:
        raise ValueError(f"level {level} is out of range for {codec} ({low}-{high})")
    return level


def avro_record(doc: Document) -> dict:
    return {name: getattr(doc, name) for name in SCHEMA_FIELDS}


class AvroCorpusSink(FileBasedSink):
    def __init__(self, file_path_prefix: str, codec: str, level: int | None, num_shards: int = 0,
                 sync_interval: int = DEFAULT_SYNC_INTERVAL):
        super().__init__(
            file_path_prefix,
            coder=None,
            file_name_suffix=SUFFIX,
            num_shards=num_shards,
            shard_name_template=SHARD_TEMPLATE,
            mime_type="application/x-avro",
            compression_type=CompressionTypes.UNCOMPRESSED,
        )
        self.codec = codec
        self.level = resolve_level(codec, level)
        self.sync_interval = sync_interval

    def open(self, temp_path):
        handle = super().open(temp_path)
        writer = fastavro.write.Writer(
            handle, PARSED_SCHEMA, codec=self.codec, compression_level=self.level,
            sync_interval=self.sync_interval, metadata=FILE_METADATA,
        )
        return handle, writer

    def write_record(self, file_handle, value):
        file_handle[1].write(avro_record(value))

    def close(self, file_handle):
        handle, writer = file_handle
        writer.flush()
        handle.close()

    def display_data(self):
        return dict(super().display_data(), codec=DisplayDataItem(self.codec, label="Avro codec"),
                    level=DisplayDataItem(self.level, label="Codec level").drop_if_none())


class CompressWrite(beam.PTransform):
    """Writes documents to `output_dir/corpus-SSSSS-of-NNNNN.avro`; outputs the written paths."""

    def __init__(self, output_dir: str, codec: str = "deflate", level: int | None = None, num_shards: int = 0,
                 sync_interval: int = DEFAULT_SYNC_INTERVAL):
        super().__init__()
        prefix = beam.io.filesystems.FileSystems.join(output_dir, FILE_PREFIX)
        self._sink = AvroCorpusSink(prefix, codec, level, num_shards, sync_interval)

    def expand(self, docs):
        return docs | beam.io.Write(self._sink)
