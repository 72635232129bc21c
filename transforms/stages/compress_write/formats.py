"""The corpus's file formats (`--format`): Avro (the default), Parquet and JSON Lines, their codecs and levels,
and the writer of a shard in each.

Every format holds the same records: WriteShard encodes each once as Avro bytes (`RecordLayout.record`, with its
`record_digest`), and a Parquet or JSON Lines shard is written from those records decoded, so the digest, defined
on the Avro encoding, is the same whatever the format (`avro_encoding.record_digest` checks a record of any).
"""

from __future__ import annotations

import io
from concurrent.futures import Executor

import fastavro

from transforms.corpus.corpus_format import SHARD_EXTENSIONS
from transforms.stages.compress_write import avro_encoding, jsonl_encoding, parquet_encoding
from transforms.stages.compress_write.schema import parsed_schema

DEFAULT_FORMAT = "avro"
# format -> {codec: (lowest level, highest level, default level), or None: no levels}
CODECS = {
    "avro": avro_encoding.CODECS,
    "parquet": parquet_encoding.CODECS,
    "jsonl": jsonl_encoding.CODECS,
}
DEFAULT_CODECS = {
    "avro": avro_encoding.DEFAULT_CODEC,
    "parquet": parquet_encoding.DEFAULT_CODEC,
    "jsonl": jsonl_encoding.DEFAULT_CODEC,
}
ALL_CODECS = tuple(dict.fromkeys(codec for codecs in CODECS.values() for codec in codecs))


def resolve_codec(file_format: str, codec: str | None, level: int | None) -> tuple[str, int | None]:
    """The codec (None: the format's default) and level (None: the codec's default) to write with; ValueError,
    in one line, for an unknown format, a codec the format does not have, or a level out of range."""
    if file_format not in CODECS:
        raise ValueError(f"unknown --format {file_format!r}; choose one of {', '.join(CODECS)}")
    codecs = CODECS[file_format]
    codec = DEFAULT_CODECS[file_format] if codec is None else codec
    if codec not in codecs:
        raise ValueError(f"--codec {codec} does not apply to --format {file_format}; its codecs: {', '.join(codecs)}")
    return codec, avro_encoding.resolve_level(codec, level, codecs)


def shard_extension(file_format: str, codec: str) -> str:
    """The file name extension of a shard: `.avro`, `.parquet`, `.jsonl.zst`, `.jsonl.gz` or `.jsonl`."""
    extension = jsonl_encoding.EXTENSIONS[codec] if file_format == "jsonl" else f".{file_format}"
    assert extension in SHARD_EXTENSIONS
    return extension


class DecodedWriter:
    """A writer of records given as their Avro bytes (`RecordLayout.record`) to a shard of a format whose rows are
    the records' values (`rows`: a Parquet or JSON Lines writer, with `write(dict)` and `close()`)."""

    def __init__(self, rows, fields: tuple[str, ...]):
        self._rows = rows
        self._schema = parsed_schema(fields)

    def write(self, record: bytes) -> None:
        self._rows.write(fastavro.schemaless_reader(io.BytesIO(record), self._schema))

    def flush(self) -> None:
        self._rows.close()


def row_writer(file_format: str, handle, fields: tuple[str, ...], codec: str, level: int | None):
    """The writer of one Parquet or JSON Lines shard to `handle`: `write(record)` each record's dict, then
    `close()` (which leaves `handle` open)."""
    if file_format == "parquet":
        return parquet_encoding.ParquetRows(handle, fields, codec, level)
    return jsonl_encoding.JsonLines(handle, codec, level)


def shard_writer(file_format: str, handle, fields: tuple[str, ...], codec: str, level: int | None,
                 sync_interval: int, sync_marker: bytes, compressing: Executor | None = None, together: int = 1):
    """The writer of one shard to `handle`: `write(record bytes)` each record, then `flush()`. An Avro shard's full
    blocks are compressed on `compressing` where it is given, `together` at once (`EncodedWriter`)."""
    if file_format == "avro":
        return avro_encoding.EncodedWriter(handle, parsed_schema(fields), codec, level, sync_interval, sync_marker,
                                           compressing, together)
    return DecodedWriter(row_writer(file_format, handle, fields, codec, level), fields)
