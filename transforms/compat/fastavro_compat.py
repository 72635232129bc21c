"""fastavro's writer, made to honour the compression level of the xz and bzip2 codecs.

fastavro 1.13 takes a level (`Writer(compression_level=...)`,
`writer(codec_compression_level=...)`) and gives it to each codec's block
writer, but its xz and bzip2 writers ignore it: they always compress at
their library's default (xz preset 6, bzip2 level 9), so `--codec xz --level
0` and `--level 9` write the same bytes (docs/upstream.md). fastavro has no
public way to give a codec another writer, so `honour_compression_levels`
puts writers that honour the level in place of those two in its private
`_write.BLOCK_WRITERS` (a dict from codec name to `writer(out, block_bytes,
level)`), for every fastavro writer in the process. What they write are
plain xz and bzip2 blocks, which every Avro reader reads.

Before that, `check_supported` checks the installed fastavro against
`SUPPORTED` (what requirements.txt pins) and that the dict and both
entries are there; otherwise it fails with one line that says what to do.
"""

from __future__ import annotations

import bz2
import importlib
import lzma

import fastavro

# The fastavro releases this is written and tested for: >= 1.13, < 1.14 (requirements.txt).
SUPPORTED = ((1, 13), (1, 14))
# The codecs whose block writers are replaced.
REPLACED = ("xz", "bzip2")


class UnsupportedFastavro(RuntimeError):
    """The installed fastavro is not one whose xz and bzip2 writers webcorpus can replace."""


def check_supported() -> None:
    """Raises `UnsupportedFastavro` (one line) unless fastavro is in `SUPPORTED` with the block writers replaced."""
    version = fastavro.__version__
    release = tuple(int(part) for part in version.split(".")[:2])
    advice = "install fastavro>=1.13,<1.14 (requirements.txt)"
    if not SUPPORTED[0] <= release < SUPPORTED[1]:
        raise UnsupportedFastavro(f"webcorpus replaces fastavro 1.13's xz and bzip2 block writers, and fastavro "
                                  f"{version} is installed: {advice}")
    try:
        writers = importlib.import_module("fastavro._write").BLOCK_WRITERS
    except (ImportError, AttributeError):
        writers = None
    missing = [codec for codec in REPLACED if not isinstance(writers, dict) or codec not in writers]
    if missing:
        raise UnsupportedFastavro(f"fastavro {version} has no fastavro._write.BLOCK_WRITERS entry for "
                                  f"{', '.join(missing)}, which webcorpus replaces: {advice}")


def honour_compression_levels() -> None:
    """Every fastavro writer in the process writes xz and bzip2 blocks at the level it is given."""
    check_supported()
    writers = importlib.import_module("fastavro._write").BLOCK_WRITERS
    writers["xz"] = xz_block
    writers["bzip2"] = bzip2_block


def xz_block(out, block_bytes: bytes, level: int | None) -> None:
    _write_block(out, lzma.compress(block_bytes, preset=6 if level is None else level))


def bzip2_block(out, block_bytes: bytes, level: int | None) -> None:
    _write_block(out, bz2.compress(block_bytes, 9 if level is None else level))


def _write_block(out, data: bytes) -> None:
    # fastavro's compiled writer hands block writers the file, its pure Python writer an encoder.
    if hasattr(out, "write_long"):
        out.write_long(len(data))
        out._fo.write(data)
    else:
        out.write(_zigzag_varint(len(data)))
        out.write(data)


def _zigzag_varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
