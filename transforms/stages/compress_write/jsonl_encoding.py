"""The corpus records as JSON Lines (`--format jsonl`): one JSON object per line, fields in schema order,
compressed as one zstd frame (`.jsonl.zst`, with its content checksum) or gzip member (`.jsonl.gz`, with
mtime 0 and no file name, so the bytes depend only on the records), or not at all (`.jsonl`)."""

from __future__ import annotations

import gzip
import json
import sys

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

# codec -> (lowest level, highest level, default level); None: no levels.
CODECS = {
    "zstd": (1, 22, 9),
    "gzip": (1, 9, 6),
    "none": None,
}
DEFAULT_CODEC = "zstd"
EXTENSIONS = {"zstd": ".jsonl.zst", "gzip": ".jsonl.gz", "none": ".jsonl"}


def json_line(record: dict) -> bytes:
    """A record as a line of JSON in UTF-8: the same bytes for the same record."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _ZstdFrame:
    """One zstd frame, with its content checksum, written to `handle`; `close` ends it. (zstd's own file writes
    nothing at all for no lines, which is no zstd stream: a shard of no records is an empty frame.)"""

    def __init__(self, handle, level: int):
        self._handle = handle
        self._compressor = zstd.ZstdCompressor(options={zstd.CompressionParameter.compression_level: level,
                                                        zstd.CompressionParameter.checksum_flag: 1})

    def write(self, data: bytes) -> None:
        self._handle.write(self._compressor.compress(data))

    def close(self) -> None:
        self._handle.write(self._compressor.flush(zstd.ZstdCompressor.FLUSH_FRAME))


class JsonLines:
    """A JSON Lines file of corpus records (dicts) written to `handle`, which `close` leaves open."""

    def __init__(self, handle, codec: str, level: int | None):
        if codec == "zstd":
            self._stream = _ZstdFrame(handle, level)
        elif codec == "gzip":
            self._stream = gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=handle, mtime=0)
        else:
            self._stream = None
        self._out = handle if self._stream is None else self._stream

    def write(self, record: dict) -> None:
        self._out.write(json_line(record))

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
