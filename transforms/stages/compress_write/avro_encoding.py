"""The corpus records as Avro bytes, and the Avro container files they are written to.

Codecs are Avro's: zstandard (levels 1-22, default 9; the default codec),
deflate (zlib, levels 0-9, default 6), snappy, xz (presets 0-9, default 6),
bzip2 (levels 1-9, default 9) and null.

fastavro ignores the level for xz and bzip2, so this module has
`transforms/compat/fastavro_compat.py` install block writers for those two codecs
that honour it; the bytes they write are plain xz and bzip2 blocks that every
Avro reader reads.
"""

from __future__ import annotations

import collections
import hashlib
import io
import os
from concurrent.futures import Executor, Future
from typing import NamedTuple

import fastavro

from transforms.compat import fastavro_compat
from transforms.corpus.corpus_format import DIGEST_HEX_DIGITS, HASH_ALGORITHM, RECORD_DIGEST, digest_in
from transforms.document import Document
from transforms.stages.compress_write.schema import (DEFAULT_FIELDS, DUPLICATE_FIELDS, FIELD_NAMES, FIELDS_BY_NAME,
                                                     NEAR_DUPLICATE_COUNT, SIGNALS, parsed_schema)

# codec -> (lowest level, highest level, default level); None: no levels.
CODECS = {
    "deflate": (0, 9, 6),
    "snappy": None,
    "zstandard": (1, 22, 9),
    "xz": (0, 9, 6),
    "bzip2": (1, 9, 9),
    "null": None,
}

# The compression study (docs/compression.md) chose these: zstandard 9 in
# 4 MiB blocks writes the dev corpus 20.2x smaller than its raw HTML, with
# less CPU than deflate 6 (15.9x). Avro blocks are compressed one by one:
# fastavro's default block (16 KiB) holds one or two pages and costs 7-14 %.
DEFAULT_CODEC = "zstandard"
DEFAULT_SYNC_INTERVAL = 4 * 1024 * 1024


FILE_METADATA = {"webcorpus.content_hash": HASH_ALGORITHM}


# fastavro's xz and bzip2 writers ignore the level: transforms/compat/fastavro_compat.py.
fastavro_compat.honour_compression_levels()


def resolve_level(codec: str, level: int | None, codecs: dict = CODECS) -> int | None:
    """The level to write with; raises ValueError for an unknown codec or a level out of range.

    `codecs`: the codecs of the format (`formats.CODECS`), by default Avro's."""
    if codec not in codecs:
        raise ValueError(f"unknown codec {codec!r}; choose one of {', '.join(codecs)}")
    levels = codecs[codec]
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


def record_digest(record: dict) -> str:
    """The `record_digest` of a corpus record: it covers every other field it has, so that no changed byte goes
    unseen (the record's fields in schema order: the same for the records of any --fields choice)."""
    return digest_in(parsed_schema(tuple(name for name in FIELD_NAMES[:-1] if name in record)), record)


def avro_record(doc: Document) -> dict:
    """The corpus record of a document with the default fields, as fastavro writes it."""
    fields = doc.fields()
    record = {name: fields[name] for name in DEFAULT_FIELDS[:-1]}
    record[RECORD_DIGEST] = record_digest(record)
    return record


# What the report counts of a written record (`tally_record`), besides these fields when they are written.
TALLIED_FIELDS = ("source_file", "charset", "charset_source", "raw_bytes", "cleaned_bytes", "minimized_bytes",
                  "truncated")
OPTIONAL_TALLIED_FIELDS = ("language", "token_count")
# ... and what it counts that is no corpus field (in the staging record only).
TALLIED_DOCUMENT_FIELDS = ({"name": "boilerplate_bytes", "type": "long"},)
# The fields that name a document's content: its `html`, and the SHA-256 of it.
CONTENT_FIELDS = ("html", "content_hash")


def _encoded(schema, values: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, values)
    return out.getvalue()


class RecordLayout:
    """A build's corpus record as Avro bytes, in the parts a document's fields fall into, in schema order:
    `before_meta`, `meta`, `after_meta`, `duplicates` (the duplicate lists), `after_duplicates`; then
    `near_duplicate_count` and `signals` if the build writes them, and `record_digest`.

    A document is encoded once, part by part, when it is staged; WriteShard joins the parts, with a survivor's
    duplicate lists and its near-duplicate count, and the digest, computed from the same bytes (with `meta`
    in key order: `sorted_meta`, staged when the page's is not). So no staged text is decoded or encoded
    again, and the record is the same bytes as fastavro's writer gives its dict, with `record_digest`'s
    digest. `signals` is staged as the document's and written with the duplicate clusters' sizes its survivor
    note gives (`dedup/exact_cluster`, and `dedup/near_cluster` with the near-duplicate count), keys sorted.
    """

    def __init__(self, fields: tuple[str, ...] = DEFAULT_FIELDS):
        written = [name for name in fields if name not in (RECORD_DIGEST, NEAR_DUPLICATE_COUNT, SIGNALS)]
        meta = FIELD_NAMES.index("meta")
        first_duplicate, last_duplicate = FIELD_NAMES.index(DUPLICATE_FIELDS[0]), FIELD_NAMES.index(DUPLICATE_FIELDS[-1])

        def between(low: int, high: int) -> tuple[str, ...]:
            return tuple(name for name in written if low < FIELD_NAMES.index(name) < high)

        self._parts = {
            "before_meta": between(-1, meta),
            "meta": ("meta",) if "meta" in written else (),
            "after_meta": between(meta, first_duplicate),
            "duplicates": tuple(name for name in DUPLICATE_FIELDS if name in written),
            "after_duplicates": between(last_duplicate, len(FIELD_NAMES)),
        }
        self._schemas = {part: parsed_schema(names) for part, names in self._parts.items()}
        self._near = NEAR_DUPLICATE_COUNT in fields
        self._signals = SIGNALS in fields
        self._near_schema, self._digest_schema = parsed_schema((NEAR_DUPLICATE_COUNT,)), parsed_schema((RECORD_DIGEST,))
        self._signals_schema = parsed_schema((SIGNALS,))
        self._tallied = TALLIED_FIELDS + tuple(name for name in OPTIONAL_TALLIED_FIELDS if name in fields)
        # What a staging record holds that names its document's content (`content_of`): in `after_meta`.
        self._content = tuple(name for name in CONTENT_FIELDS if name in self._parts["after_meta"])
        self._content_schema = parsed_schema(self._content)
        # The staging record: the document's offset (runs are merged by it), what the report tallies, the parts.
        self.staging_schema = fastavro.parse_schema({
            "type": "record", "name": "StagedDocument", "namespace": "webcorpus.staging",
            "fields": [FIELDS_BY_NAME["source_offset"]]
                      + [FIELDS_BY_NAME[name] for name in self._tallied]
                      + list(TALLIED_DOCUMENT_FIELDS)
                      + [{"name": part, "type": "bytes"} for part in self._parts]
                      + [{"name": "sorted_meta", "type": ["null", "bytes"]}]
                      + ([FIELDS_BY_NAME[SIGNALS]] if self._signals else []),
        })
        # Staging files say which layout they hold: WriteShard refuses one of another.
        self.identity = "|".join(",".join(names) for names in self._parts.values()) + ("|signals" if self._signals
                                                                                       else "")

    def _part(self, part: str, values: dict) -> bytes:
        # fastavro takes the part's fields from `values` by name and leaves the rest.
        return _encoded(self._schemas[part], values)

    def staged(self, doc: Document) -> dict:
        """The staging record of a document: its parts encoded, and what the report tallies of it."""
        fields = doc.fields()
        record = {name: fields[name] for name in self._tallied}
        record.update((field["name"], fields[field["name"]]) for field in TALLIED_DOCUMENT_FIELDS)
        record.update({part: self._part(part, fields) for part in self._parts}, source_offset=doc.capture.source_offset,
                      sorted_meta=None)
        if self._signals:
            record[SIGNALS] = doc.signals
        if self._parts["meta"] and list(doc.meta) != sorted(doc.meta):
            record["sorted_meta"] = self._part("meta", {"meta": dict(sorted(doc.meta.items()))})
        return record

    def content_of(self, staged: dict) -> dict:
        """What a staging record holds of its document's content, decoded from its staged bytes: `html` and
        `content_hash`, those of them the build writes (the other fields of their part are skipped)."""
        if not self._content:
            return {}
        return fastavro.schemaless_reader(io.BytesIO(staged["after_meta"]), self._schemas["after_meta"],
                                          self._content_schema)

    def duplicates_of(self, duplicate_count: int, duplicate_urls, duplicate_record_ids) -> bytes:
        """The duplicate lists part of a survivor."""
        return self._part("duplicates", dict(duplicate_count=duplicate_count, duplicate_urls=list(duplicate_urls),
                                             duplicate_record_ids=list(duplicate_record_ids)))

    def written_signals(self, staged: dict, duplicate_count: int, near_duplicate_count: int) -> dict | None:
        """The signals of a record as written: the staged ones and its clusters' sizes, keys sorted; None where the
        build writes no signals."""
        if not self._signals:
            return None
        clusters = {"dedup/exact_cluster": 1.0 + duplicate_count}
        if self._near:
            clusters["dedup/near_cluster"] = 1.0 + near_duplicate_count
        return dict(sorted({**staged[SIGNALS], **clusters}.items()))

    def record(self, staged: dict, duplicates: bytes | None = None, near_duplicate_count: int = 0,
               duplicate_count: int = 0, signals: dict | None = None) -> bytes:
        """The Avro bytes of a corpus record: `staged`'s parts, `duplicates` (None: the staged ones), the
        near-duplicate count and the signals (with the clusters' sizes, of `duplicate_count` and
        `near_duplicate_count`; `signals`: `written_signals`' where the caller has them) if the build writes them,
        and `record_digest`."""
        rest = [staged["after_meta"], staged["duplicates"] if duplicates is None else duplicates,
                staged["after_duplicates"]]
        if self._near:
            rest.append(_encoded(self._near_schema, {NEAR_DUPLICATE_COUNT: near_duplicate_count}))
        if self._signals:
            rest.append(_encoded(self._signals_schema, {
                SIGNALS: self.written_signals(staged, duplicate_count, near_duplicate_count) if signals is None
                else signals}))
        digest = hashlib.sha256(staged["before_meta"])
        for part in (staged["sorted_meta"] or staged["meta"], *rest):
            digest.update(part)
        encoded_digest = _encoded(self._digest_schema, {RECORD_DIGEST: digest.hexdigest()[:DIGEST_HEX_DIGITS]})
        return b"".join((staged["before_meta"], staged["meta"], *rest, encoded_digest))

    def encoded(self, doc: Document) -> bytes:
        """The Avro bytes of a document's corpus record, with its own duplicate lists."""
        return self.record(self.staged(doc), duplicate_count=doc.duplicate_count)


# An Avro file's sync marker, which ends each of its blocks.
SYNC_MARKER_BYTES = 16


class _Block(NamedTuple):
    """A block of encoded records, with the two attributes of `fastavro.read.Block` that
    `fastavro.write.Writer.write_block` reads."""

    bytes_: io.BytesIO
    num_records: int


class EncodedWriter:
    """An Avro container file of records given as their Avro bytes (`RecordLayout.record`).

    fastavro writes the header and each block (`Writer.write_block`, its interface for blocks read from
    another file, into the bytes it adds to the file: `_framed`); a block is cut where fastavro's `Writer.write`
    would cut it (once it holds `sync_interval` bytes), so the file is the same bytes as fastavro's writer gives the
    records' dicts.

    With `compressing` (an executor of `together` threads), each full block is framed there while the next ones
    fill, up to `together` at once (the codecs release the GIL: a worker's cores share a shard's blocks); the blocks
    are written to the file in order, by the caller of `write` and `flush`: the same bytes, at most `together` blocks
    more held. `flush` frames the last block where it is called, once the ones in flight are written.
    """

    def __init__(self, handle, schema, codec: str, level: int | None, sync_interval: int, sync_marker: bytes = b"",
                 compressing: Executor | None = None, together: int = 1):
        # Every block's bytes end with the file's sync marker: one drawn here where none is given (fastavro's
        # writer would draw one for each block's own writer).
        self._settings = {"schema": schema, "codec": codec, "compression_level": level, "sync_interval": sync_interval,
                          "metadata": FILE_METADATA, "sync_marker": sync_marker or os.urandom(SYNC_MARKER_BYTES)}
        fastavro.write.Writer(handle, **self._settings)  # (it writes the file's header)
        self._handle = handle
        self._sync_interval = sync_interval
        self._block, self._records = io.BytesIO(), 0
        self._compressing = compressing
        self._together = together
        self._in_flight: collections.deque[Future] = collections.deque()

    def write(self, record: bytes) -> None:
        self._block.write(record)
        self._records += 1
        if self._block.tell() < self._sync_interval:
            return
        if self._compressing is None:
            self._handle.write(_framed(self._taken(), self._settings))
            return
        while len(self._in_flight) >= self._together:
            self._write_oldest()
        self._in_flight.append(self._compressing.submit(_framed, self._taken(), self._settings))

    def _taken(self) -> _Block:
        block = _Block(self._block, self._records)
        self._block, self._records = io.BytesIO(), 0
        return block

    def _write_oldest(self) -> None:
        """Writes the oldest block in flight once it is compressed (its error raised here)."""
        self._handle.write(self._in_flight.popleft().result())

    def flush(self) -> None:
        while self._in_flight:
            self._write_oldest()
        if self._records:
            self._handle.write(_framed(self._taken(), self._settings))
        self._handle.flush()


def _framed(block: _Block, settings: dict) -> bytes:
    """The bytes `fastavro.write.Writer.write_block` adds to a file of `settings` for `block` (its record count, its
    size, its compressed bytes and the sync marker): what a writer of its own writes after its header."""
    out = io.BytesIO()
    writer = fastavro.write.Writer(out, **settings)
    header_end = out.tell()
    writer.write_block(block)
    writer.flush()
    return out.getvalue()[header_end:]
