"""The content index a build writes beside its corpus: what a later build needs to leave out what this corpus
already holds (`--extend`), without reading its WARC files or its shards.

`DIR/index-SSSSS-of-NNNNN.bin` holds one entry per document of the corpus,
fixed-width and sorted; entries are sharded by the content hash's first 64
bits as a number (range partitioning: shard `i` of `n` holds the hashes whose
prefix `p` gives `p * n >> 64 == i`), so the shards in order are one sorted
list and each can be read alone, in bounded memory. A shard is a 12-byte
header, `WCINDEX1` and the signature's count of 32-bit values (0 without
`--near-dedup`) as an unsigned big-endian 32-bit number, then the entries:

- the content hash, SHA-256 of the minimized `html` (32 bytes);
- the content check HashDedup merges on besides it: BLAKE2b-128 of the same
  bytes (16 bytes) and their length (8 bytes, big-endian);
- with `--near-dedup` only: 1 byte, 1 if the document has a MinHash
  signature (0 for a text without words, which near-dedup never compares),
  then the signature, bands x rows 32-bit values, little-endian (zeros
  without one).

A shard holds at most about `ENTRIES_PER_SHARD` entries: its count is decided
by the number of documents, so the same corpus gives the same files.

This module imports no Beam (pipeline.verify reads indexes with it).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Iterator

from transforms.filesystems.regular_files import ListedRead, open_regular

INDEX_PREFIX = "index"
INDEX_NAME = re.compile(rf"{INDEX_PREFIX}-\d{{5}}-of-\d{{5}}\.bin\Z")
MAGIC = b"WCINDEX1"
HEADER = struct.Struct(">8sI")
HASH_BYTES = 32
CHECK_BYTES = 16 + 8
CONTENT_BYTES = HASH_BYTES + CHECK_BYTES
# Entries per shard, at most about: a shard is sorted in one worker's memory (250,000 entries of 56 bytes, or
# of 457 with the default signature: 14 MB or 114 MB, as Python bytes about 25 MB or 125 MB).
ENTRIES_PER_SHARD = 250_000
READ_ENTRIES = 4096


def index_file_name(index: int, count: int) -> str:
    return f"{INDEX_PREFIX}-{index:05d}-of-{count:05d}.bin"


def index_shard_count(entries: int) -> int:
    return max(1, -(-entries // ENTRIES_PER_SHARD))


def index_shard_of(content_hash: bytes, count: int) -> int:
    """The shard of a content hash (its digest's bytes): by its first 64 bits, so shards are ranges of hashes."""
    return (int.from_bytes(content_hash[:8], "big") * count) >> 64


def content_entry(content_hash: str, content_check: str) -> bytes:
    """The content part of an entry, from a `Fingerprint`'s `content_hash` (hex) and `content_check`
    (`length:blake2b-hex`)."""
    length, digest = content_check.split(":")
    return bytes.fromhex(content_hash) + bytes.fromhex(digest) + int(length).to_bytes(8, "big")


def signature_part(signature: bytes | None, values: int) -> bytes:
    """The near-dedup part of an entry: a flag, then the signature (zeros for a document without one)."""
    if signature is None:
        return b"\x00" + bytes(4 * values)
    return b"\x01" + signature


def entry_width(signature_values: int) -> int:
    return CONTENT_BYTES + (1 + 4 * signature_values if signature_values else 0)


def index_header(signature_values: int) -> bytes:
    return HEADER.pack(MAGIC, signature_values)


@dataclass(frozen=True)
class IndexEntry:
    content_hash: str
    content_check: str
    # The MinHash signature's bytes (as NearDedup signs), None without one or without near-dedup.
    signature: bytes | None


def parse_entry(entry: bytes, signature_values: int) -> IndexEntry:
    digest, check, length = entry[:HASH_BYTES], entry[HASH_BYTES:HASH_BYTES + 16], entry[HASH_BYTES + 16:CONTENT_BYTES]
    signature = None
    if signature_values and entry[CONTENT_BYTES] == 1:
        signature = bytes(entry[CONTENT_BYTES + 1:])
    return IndexEntry(digest.hex(), f"{int.from_bytes(length, 'big')}:{check.hex()}", signature)


class IndexDamaged(ValueError):
    """An index file that is not what a build writes."""


def listed_bytes(handle, name: str, size: int, sha256: str) -> ListedRead:
    """An index file read as the one its manifest lists (`size`, `sha256`): IndexDamaged at its end if it is not
    those bytes (changed since it was checked, or a server that sent other bytes this time)."""
    why = {"longer": f"{name} is longer than the {size} bytes its manifest lists",
           "shorter": f"{name} is shorter than the {size} bytes its manifest lists",
           "sha256": f"{name} is not the file its manifest lists (sha256 differs): changed since its build wrote it, "
                     "or since this build checked it"}
    return ListedRead(handle, size, sha256, lambda how: IndexDamaged(why[how]))


def listed_size_holds(size: int, signature_values: int) -> bool:
    """Whether an index file of `size` bytes can be a header and whole entries."""
    return size >= HEADER.size and (size - HEADER.size) % entry_width(signature_values) == 0


def read_index_entries(path: str, signature_values: int, listed: tuple[int, str] | None = None) -> Iterator[bytes]:
    """The raw entries of an index file, in order, a few thousand at a time in memory; IndexDamaged for a file
    without the header or of another signature size, with a partial entry or out of order. With `listed`, the
    (size, sha256) its manifest lists: read only if it is a regular file and no link, and as those bytes only
    (`listed_bytes`)."""
    name = path.rsplit("/", 1)[-1]
    with open_regular(path, follow_links=listed is None) as opened:
        handle = opened if listed is None else listed_bytes(opened, name, *listed)
        header = handle.read(HEADER.size)
        if len(header) != HEADER.size or HEADER.unpack(header)[0] != MAGIC:
            raise IndexDamaged(f"{name} is not a webcorpus index (no {MAGIC.decode()} header)")
        if HEADER.unpack(header)[1] != signature_values:
            raise IndexDamaged(f"{name} holds signatures of {HEADER.unpack(header)[1]} values, not {signature_values}")
        width = entry_width(signature_values)
        previous, position = b"", HEADER.size
        while chunk := handle.read(width * READ_ENTRIES):
            if len(chunk) % width:
                raise IndexDamaged(f"{name} ends inside an entry ({len(chunk) % width} bytes of {width})")
            for start in range(0, len(chunk), width):
                entry = chunk[start:start + width]
                if entry <= previous:
                    raise IndexDamaged(f"{name}: the entry at byte {position + start} is out of order")
                previous = entry
                yield entry
            position += len(chunk)

