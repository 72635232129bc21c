"""CompressWrite: the corpus as sharded Avro files, the same bytes on every build.

Files are `DIR/corpus-SSSSS-of-NNNNN.avro`, one Avro record per document with
the schema `CORPUS_SCHEMA` (documented field by field in README.md). Codecs
are Avro's: zstandard (levels 1-22, default 9; the default codec), deflate
(zlib, levels 0-9, default 6), snappy, xz (presets 0-9, default 6), bzip2
(levels 1-9, default 9) and null.

Writing has two halves around HashDedup, so that no document crosses a
shuffle and nothing holds all documents:

1. `StageDocuments`, fused with reading: each document's record is encoded
   (`RecordLayout`: Avro bytes, in parts around the fields filled in later)
   and appended to a staging file of its unit of reading (an input file, or
   a byte range of a big one; in `DIR/.webcorpus-staging/`), and only its
   fingerprint goes on to HashDedup. A staging file is a run of one unit's
   records in rising offset, named for its bundle attempt; fused with
   reading, a unit has one.
2. `CompressWrite`: per unit, every staging file the runner committed for
   it is read back, merged by offset (each offset once), duplicates are
   left out, survivors get their duplicate lists, each
   record its `record_digest` (of every other field, once they are final),
   and the records' bytes are written, compressed, to that unit's corpus
   shard (`EncodedWriter`).
   Shards are numbered in the sorted order of (input path, range start) of
   the units that gave documents. Each attempt at a shard writes a file of
   its own (named for the attempt, a uuid), so a retry and its zombie, or a
   failed attempt, never share or tear a file; when all are written, one
   committed attempt of each shard is renamed to the shard's final name in
   one step, and the others go with the staging directory, so a failed run
   never leaves files that look complete. (`python -m pipeline` stages its
   whole build in a directory of its own and publishes it at the end:
   `pipeline/publish.py`.)

So the shard of a record and its place in the shard follow from the input
alone, and the Avro sync marker is derived from the build's options: the same
inputs and options give byte-identical files whatever the runner or the
number of workers.

fastavro ignores the level for xz and bzip2, so this module has
`transforms/fastavro_compat.py` install block writers for those two codecs
that honour it; the bytes they write are plain xz and bzip2 blocks that every
Avro reader reads.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import difflib
import functools
import hashlib
import heapq
import io
import json
import uuid
from collections import Counter
from typing import NamedTuple

import apache_beam as beam
import fastavro
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from transforms import fastavro_compat
from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus_format import DIGEST_HEX_DIGITS, FILE_PREFIX, HASH_ALGORITHM, RECORD_DIGEST, digest_in
from transforms.document import Document
from transforms.exact_paths import remove_exactly
from transforms.manifest import digest_file
from transforms.progress import note_shard_written
from transforms.report import tally_record
from transforms.stage import counter
from transforms.vocabulary import DUPLICATE_LIST_CAP, Fingerprint

STAGING_DIR = ".webcorpus-staging"
STAGED = "staged"
FINGERPRINTS = "fingerprints"
TALLIES = "tallies"
DIGESTS = "digests"

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


def _string(name: str, doc: str) -> dict:
    return {"name": name, "type": "string", "doc": doc}


def _strings(name: str, doc: str) -> dict:
    return {"name": name, "type": {"type": "array", "items": "string"}, "doc": doc}


def _long(name: str, doc: str) -> dict:
    return {"name": name, "type": "long", "doc": doc}


# The fields of a page as read, cleaned and deduplicated: everything a
# record holds but its record_digest, which is computed from them.
DIGESTED_FIELDS = [
    _string("url", "WARC-Target-URI of the capture."),
    _string("warc_record_id", "WARC-Record-ID of the response record."),
    _string("warc_date", "WARC-Date of the response record (ISO 8601)."),
    _string("source_file", "Path of the WARC file the record was read from."),
    _long("source_offset", "Offset of the record in that file (of its gzip member when gzipped per record)."),
    {"name": "http_status", "type": "int", "doc": "HTTP status code (always 200 for kept pages)."},
    _string("content_type", "HTTP Content-Type header as sent."),
    _string("truncated", "Empty for a whole capture. For a page cut short, why and how much of its HTTP body (as "
                         "stored, before decoding) was received: '<reason>: N bytes received', the reason being "
                         "WARC-Truncated's (length, time, disconnect, unspecified, ...), or 'end-of-file: N of M "
                         "bytes received' for a record the end of its WARC file cuts ('end-of-member': the end of its "
                         "gzip member). Pages cut short are skipped instead with --skip-truncated."),
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
    _strings("duplicate_urls", f"URLs of the first {DUPLICATE_LIST_CAP} of those captures, in survivor order "
                               "(the duplicates file lists them all)."),
    _strings("duplicate_record_ids", "WARC-Record-IDs of the same captures, in the same order."),
    _long("raw_bytes", "Bytes of the HTTP payload after transfer and content decoding."),
    _long("cleaned_bytes", "Bytes of the div-only HTML after CleanHtml."),
    _long("minimized_bytes", "Bytes of `html` after MinimizeText."),
    {"name": "dropped_letter_share", "type": "double",
     "doc": "Share of the page's letters that MinimizeText dropped because their script is not kept "
            "(--scripts); over 0.5: the page is mostly in other scripts (counted as mostly_dropped in the report)."},
]
CLEAN_TEXT = "clean_text"
NEAR_DUPLICATE_COUNT = "near_duplicate_count"


def _document_schema(fields: list[dict]) -> dict:
    return {"type": "record", "name": "Document", "namespace": "webcorpus",
            "doc": "One deduplicated web page of a webcorpus build.", "fields": fields}


RECORD_DIGEST_FIELD = _string(
    RECORD_DIGEST, "The first 64 bits of the SHA-256 of the Avro binary encoding of every other field of the "
                   "record, in schema order, with the entries of `meta` sorted by key; lowercase hex.")
_NAMES = [field["name"] for field in DIGESTED_FIELDS]
_LANG_INDEX, _TEXT_INDEX = _NAMES.index("lang"), _NAMES.index("text")
LANGUAGE_FIELDS = ("language", "language_confidence")
# Every field a record can have, in the order every schema gives them: the default ones, `language` and
# `language_confidence` (with --language or --languages) after `lang`, `clean_text` (with --clean-text or
# --fields) after `text`, `near_duplicate_count` (with --near-dedup) and `record_digest` last.
ALL_FIELDS = (
    DIGESTED_FIELDS[:_LANG_INDEX + 1]
    + [_string("language", "Language identified from the page's text (fastText lid.176; ISO 639-1 where there is "
                           "one); empty for a page without text."),
       {"name": "language_confidence", "type": "double", "doc": "The identifier's probability for `language`."}]
    + DIGESTED_FIELDS[_LANG_INDEX + 1:_TEXT_INDEX + 1]
    + [_string(CLEAN_TEXT, "The cleaned text before minimizing: CleanHtml's blocks as plain text, one per line, "
                           "case, punctuation and every script kept, whitespace collapsed.")]
    + DIGESTED_FIELDS[_TEXT_INDEX + 1:]
    + [{"name": NEAR_DUPLICATE_COUNT, "type": "int",
        "doc": "Number of near-duplicate pages this one stands for (--near-dedup; listed in near-duplicates-*.jsonl)."},
       RECORD_DIGEST_FIELD]
)
FIELD_NAMES = tuple(field["name"] for field in ALL_FIELDS)
_FIELDS_BY_NAME = {field["name"]: field for field in ALL_FIELDS}
DEFAULT_FIELDS = tuple(field["name"] for field in DIGESTED_FIELDS) + (RECORD_DIGEST,)


def corpus_schema(fields: tuple[str, ...]) -> dict:
    """The Avro schema of records with these fields (names of FIELD_NAMES, in its order)."""
    return _document_schema([_FIELDS_BY_NAME[name] for name in fields])


def resolve_fields(fields: tuple[str, ...] | None, near_dedup: bool = False, clean_text: bool = False,
                   language: bool = False) -> tuple[str, ...]:
    """The fields a build writes, in schema order; raises ValueError for a name the schema lacks.

    `fields` None: the default ones (and `near_duplicate_count` with `near_dedup`). `clean_text` adds it,
    `language` the language fields.
    `record_digest` is always written: it lets `pipeline.verify` and `read_corpus` check every record,
    whichever fields it has.
    """
    if fields is None:
        chosen = set(DEFAULT_FIELDS) | ({NEAR_DUPLICATE_COUNT} if near_dedup else set())
    else:
        chosen = set(fields)
        for name in fields:
            if name not in _FIELDS_BY_NAME:
                nearest = difflib.get_close_matches(name, FIELD_NAMES, n=1)
                hint = f"did you mean {nearest[0]}? " if nearest else ""
                raise ValueError(f"--fields: the schema has no field {name!r}; {hint}"
                                 f"(fields: {', '.join(FIELD_NAMES)})")
    if NEAR_DUPLICATE_COUNT in chosen and not near_dedup:
        raise ValueError(f"--fields {NEAR_DUPLICATE_COUNT} needs --near-dedup")
    chosen |= {RECORD_DIGEST} | ({CLEAN_TEXT} if clean_text else set()) | (set(LANGUAGE_FIELDS) if language else set())
    return tuple(name for name in FIELD_NAMES if name in chosen)


CORPUS_SCHEMA = corpus_schema(DEFAULT_FIELDS)
PARSED_SCHEMA = fastavro.parse_schema(CORPUS_SCHEMA)
SCHEMA_FIELDS = DEFAULT_FIELDS


@functools.lru_cache(maxsize=None)
def _parsed(fields: tuple[str, ...]):
    return fastavro.parse_schema(corpus_schema(fields))


FILE_METADATA = {"webcorpus.content_hash": HASH_ALGORITHM}


# fastavro's xz and bzip2 writers ignore the level: transforms/fastavro_compat.py.
fastavro_compat.honour_compression_levels()


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


def record_digest(record: dict) -> str:
    """The `record_digest` of a corpus record: it covers every other field it has, so that no changed byte goes
    unseen (the record's fields in schema order: the same for the records of any --fields choice)."""
    return digest_in(_parsed(tuple(name for name in FIELD_NAMES[:-1] if name in record)), record)


def avro_record(doc: Document) -> dict:
    """The corpus record of a document with the default fields, as fastavro writes it."""
    record = {name: getattr(doc, name) for name in DEFAULT_FIELDS[:-1]}
    record[RECORD_DIGEST] = record_digest(record)
    return record


DUPLICATE_FIELDS = ("duplicate_count", "duplicate_urls", "duplicate_record_ids")
# What the report counts of a written record (`tally_record`), besides the language fields when they are written.
TALLIED_FIELDS = ("source_file", "charset", "charset_source", "raw_bytes", "cleaned_bytes", "minimized_bytes",
                  "truncated")


def _encoded(schema, values: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, values)
    return out.getvalue()


class RecordLayout:
    """A build's corpus record as Avro bytes, in the parts a document's fields fall into, in schema order:
    `before_meta`, `meta`, `after_meta`, `duplicates` (the duplicate lists), `after_duplicates`; then
    `near_duplicate_count` if the build writes it, and `record_digest`.

    A document is encoded once, part by part, when it is staged; WriteShard joins the parts, with a survivor's
    duplicate lists and its near-duplicate count, and the digest, computed from the same bytes (with `meta`
    in key order: `sorted_meta`, staged when the page's is not). So no staged text is decoded or encoded
    again, and the record is the same bytes as fastavro's writer gives its dict, with `record_digest`'s
    digest.
    """

    def __init__(self, fields: tuple[str, ...] = DEFAULT_FIELDS):
        written = [name for name in fields if name not in (RECORD_DIGEST, NEAR_DUPLICATE_COUNT)]
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
        self._schemas = {part: _parsed(names) for part, names in self._parts.items()}
        self._near = NEAR_DUPLICATE_COUNT in fields
        self._near_schema, self._digest_schema = _parsed((NEAR_DUPLICATE_COUNT,)), _parsed((RECORD_DIGEST,))
        self._tallied = TALLIED_FIELDS + (("language",) if "language" in fields else ())
        # The staging record: the document's offset (runs are merged by it), what the report tallies, the parts.
        self.staging_schema = fastavro.parse_schema({
            "type": "record", "name": "StagedDocument", "namespace": "webcorpus.staging",
            "fields": [_FIELDS_BY_NAME["source_offset"]]
                      + [_FIELDS_BY_NAME[name] for name in self._tallied]
                      + [{"name": part, "type": "bytes"} for part in self._parts]
                      + [{"name": "sorted_meta", "type": ["null", "bytes"]}],
        })
        # Staging files say which layout they hold: WriteShard refuses one of another.
        self.identity = "|".join(",".join(names) for names in self._parts.values())

    def _part(self, part: str, values: dict) -> bytes:
        # fastavro takes the part's fields from `values` by name and leaves the rest.
        return _encoded(self._schemas[part], values)

    def staged(self, doc: Document) -> dict:
        """The staging record of a document: its parts encoded, and what the report tallies of it."""
        fields = vars(doc)
        record = {name: fields[name] for name in self._tallied}
        record.update({part: self._part(part, fields) for part in self._parts}, source_offset=doc.source_offset,
                      sorted_meta=None)
        if self._parts["meta"] and list(doc.meta) != sorted(doc.meta):
            record["sorted_meta"] = self._part("meta", {"meta": dict(sorted(doc.meta.items()))})
        return record

    def duplicates_of(self, duplicate_count: int, duplicate_urls, duplicate_record_ids) -> bytes:
        """The duplicate lists part of a survivor."""
        return self._part("duplicates", dict(duplicate_count=duplicate_count, duplicate_urls=list(duplicate_urls),
                                             duplicate_record_ids=list(duplicate_record_ids)))

    def record(self, staged: dict, duplicates: bytes | None = None, near_duplicate_count: int = 0) -> bytes:
        """The Avro bytes of a corpus record: `staged`'s parts, `duplicates` (None: the staged ones), the
        near-duplicate count if the build writes it, and `record_digest`."""
        rest = [staged["after_meta"], staged["duplicates"] if duplicates is None else duplicates,
                staged["after_duplicates"]]
        if self._near:
            rest.append(_encoded(self._near_schema, {NEAR_DUPLICATE_COUNT: near_duplicate_count}))
        digest = hashlib.sha256(staged["before_meta"])
        for part in (staged["sorted_meta"] or staged["meta"], *rest):
            digest.update(part)
        encoded_digest = _encoded(self._digest_schema, {RECORD_DIGEST: digest.hexdigest()[:DIGEST_HEX_DIGITS]})
        return b"".join((staged["before_meta"], staged["meta"], *rest, encoded_digest))

    def encoded(self, doc: Document) -> bytes:
        """The Avro bytes of a document's corpus record, with its own duplicate lists."""
        return self.record(self.staged(doc))


class _Block(NamedTuple):
    """A block of encoded records, with the two attributes of `fastavro.read.Block` that
    `fastavro.write.Writer.write_block` reads."""

    bytes_: io.BytesIO
    num_records: int


class EncodedWriter:
    """An Avro container file of records given as their Avro bytes (`RecordLayout.record`).

    fastavro writes the header and each block (`Writer.write_block`, its interface for blocks read from
    another file); a block is cut where fastavro's `Writer.write` would cut it (once it holds `sync_interval`
    bytes), so the file is the same bytes as fastavro's writer gives the records' dicts.
    """

    def __init__(self, handle, schema, codec: str, level: int | None, sync_interval: int, sync_marker: bytes = b""):
        self._writer = fastavro.write.Writer(handle, schema, codec=codec, compression_level=level,
                                             sync_interval=sync_interval, metadata=FILE_METADATA,
                                             sync_marker=sync_marker)
        self._sync_interval = sync_interval
        self._block, self._records = io.BytesIO(), 0

    def write(self, record: bytes) -> None:
        self._block.write(record)
        self._records += 1
        if self._block.tell() >= self._sync_interval:
            self._dump()

    def _dump(self) -> None:
        self._writer.write_block(_Block(self._block, self._records))
        self._block, self._records = io.BytesIO(), 0

    def flush(self) -> None:
        if self._records:
            self._dump()
        self._writer.flush()


def shard_name(index: int, count: int) -> str:
    return f"{FILE_PREFIX}-{index:05d}-of-{count:05d}.avro"


def sync_marker_for(build: dict) -> bytes:
    """A sync marker derived from what defines a build, instead of a random one."""
    return hashlib.sha256(json.dumps(build, sort_keys=True).encode("utf-8")).digest()[:16]


# Staging files WriteShard reads at once; a unit with more runs has them merged in groups of this many first.
MAX_OPEN_RUNS = 256


def staging_path(staging_dir: str, unit: tuple[str, int], attempt: str, run: int) -> str:
    name = hashlib.sha256(f"{unit[0]}@{unit[1]}".encode("utf-8")).hexdigest()[:24]
    return FileSystems.join(staging_dir, f"staged-{name}-{attempt}-{run:05d}.avro")


# The metadata key of a staging file's `RecordLayout.identity`.
STAGED_LAYOUT = "webcorpus.staged_layout"


class _Run:
    """A staging file being written: the staging records (`RecordLayout.staged`) of one unit in rising
    offset."""

    def __init__(self, path: str, layout: RecordLayout):
        self.path = path
        self._handle = FileSystems.create(path)
        self._writer = fastavro.write.Writer(self._handle, layout.staging_schema, codec="null",
                                             metadata={STAGED_LAYOUT: layout.identity})
        self.last_offset = -1

    def write(self, record: dict) -> None:
        self._writer.write(record)
        self.last_offset = record["source_offset"]

    def close(self) -> str:
        self._writer.flush()
        self._handle.close()
        return self.path


class StageDocuments(beam.DoFn):
    """Appends each document to a staging file of its unit of reading; emits its fingerprint, and (unit, path)
    of each staging file.

    A unit is a byte range of an input file (`source_file`, `source_range`).
    Nothing here relies on how a runner fuses or splits the work: a staging
    file is named for its bundle attempt (a uuid), so a retry never shares a
    file with the attempt it replaces (a zombie's files are left unread: the
    runner commits no output of a failed attempt); and it holds a run of
    documents in rising offset, a new run beginning where the offsets of a
    unit fall, so WriteShard merges any number of them. Fused with reading,
    a unit's documents come in file order in one bundle: one file per unit.
    """

    def __init__(self, staging_dir: str, fields: tuple[str, ...] = DEFAULT_FIELDS):
        self._staging_dir = staging_dir
        self._layout = RecordLayout(fields)

    def start_bundle(self):
        self._attempt = uuid.uuid4().hex
        self._runs = 0
        self._open: dict[tuple[str, int], _Run] = {}

    def process(self, doc: Document):
        unit = (doc.source_file, doc.source_range)
        run = self._open.get(unit)
        if run is None or doc.source_offset <= run.last_offset:
            if run is not None:
                yield beam.pvalue.TaggedOutput(STAGED, (unit, run.close()))
            run = self._open[unit] = _Run(staging_path(self._staging_dir, unit, self._attempt, self._runs), self._layout)
            self._runs += 1
        run.write(self._layout.staged(doc))
        yield Fingerprint.of(doc)

    def finish_bundle(self):
        for unit, run in self._open.items():
            yield beam.pvalue.TaggedOutput(STAGED, GlobalWindows.windowed_value((unit, run.close())))
        self._open = {}


def _merged(paths: list[str], layout: RecordLayout):
    """The records of staging files in offset order, each offset once (a record read twice is the same record)."""
    paths = sorted(paths)
    with contextlib.ExitStack() as stack:
        runs = [fastavro.reader(stack.enter_context(FileSystems.open(path))) for path in paths]
        for path, run in zip(paths, runs):
            if run.metadata.get(STAGED_LAYOUT) != layout.identity:
                raise ValueError(f"{path} was staged for records of other fields "
                                 f"({run.metadata.get(STAGED_LAYOUT)!r}, not {layout.identity!r})")
        last_offset = None
        for record in heapq.merge(*runs, key=lambda record: record["source_offset"]):
            if record["source_offset"] != last_offset:
                last_offset = record["source_offset"]
                yield record


def staged_records(paths: list[str], staging_dir: str, layout: RecordLayout):
    """A unit's staging records (of `layout`) in offset order, each once, from any number of staging files
    (runs).

    Runs past `MAX_OPEN_RUNS` are merged in groups into new runs first, so that few files are open at once.
    """
    while len(paths) > MAX_OPEN_RUNS:
        merged = []
        for start in range(0, len(paths), MAX_OPEN_RUNS):
            run = _Run(FileSystems.join(staging_dir, f"merged-{uuid.uuid4().hex}.avro"), layout)
            for record in _merged(paths[start:start + MAX_OPEN_RUNS], layout):
                run.write(record)
            merged.append(run.close())
        paths = merged
    yield from _merged(paths, layout)


class ShardAttempt(NamedTuple):
    """A corpus shard as one attempt wrote it: the shard's final path, and the attempt's own file."""

    shard: str
    path: str


def attempt_path(staging_dir: str, shard: str) -> str:
    """A file of its own for one attempt at writing `shard`."""
    return FileSystems.join(staging_dir, f"attempt-{uuid.uuid4().hex}-{shard.rsplit('/', 1)[-1]}")


class WriteShard(beam.DoFn):
    """Writes one unit's surviving records to its corpus shard, in a file of this attempt's own; outputs the
    `ShardAttempt`."""

    def __init__(self, output_dir: str, staging_dir: str, codec: str, level: int | None, sync_interval: int,
                 sync_marker: bytes, progress_dir: str | None = None, fields: tuple[str, ...] = DEFAULT_FIELDS):
        self._output_dir = output_dir
        self._staging_dir = staging_dir
        self._fields = fields
        self._layout = RecordLayout(fields)
        self._codec = codec
        self._level = level
        self._sync_interval = sync_interval
        self._sync_marker = sync_marker
        self._progress_dir = progress_dir

    def setup(self):
        self._written = counter("compress_write", "records")

    def process(self, grouped, shard_order):
        unit, parts = grouped
        # Within a unit, a capture is known by its offset: record ids repeat in the wild.
        notes = {note.source_offset: note for note in parts["survivors"]}
        dropped = set(parts["duplicates"])
        near_dropped = set(parts.get("near_duplicates", ()))
        near_counts = {note.source_offset: note.near_duplicate_count for note in parts.get("near_survivors", ())}
        # `shard_order` is sorted: a snapshot has about 1.5 million units, too many for a linear search each.
        shard = FileSystems.join(self._output_dir,
                                 shard_name(bisect.bisect_left(shard_order, unit), len(shard_order)))
        path = attempt_path(self._staging_dir, shard)
        tally = Counter()
        records = 0
        with FileSystems.create(path) as handle:
            writer = EncodedWriter(handle, _parsed(self._fields), self._codec, self._level, self._sync_interval,
                                   self._sync_marker)
            for staged in staged_records(sorted(parts[STAGED]), self._staging_dir, self._layout):
                offset = staged["source_offset"]
                if offset in dropped or offset in near_dropped:
                    continue
                note = notes.get(offset)
                duplicates = None if note is None else self._layout.duplicates_of(
                    note.duplicate_count, note.duplicate_urls, note.duplicate_record_ids)
                tally.update(tally_record(staged))
                writer.write(self._layout.record(staged, duplicates, near_counts.get(offset, 0)))
                records += 1
            writer.flush()
        self._written.inc(records)
        if self._progress_dir is not None:
            note_shard_written(self._progress_dir, shard, len(shard_order))
        yield ShardAttempt(shard, path)
        yield beam.pvalue.TaggedOutput(TALLIES, tally)
        yield beam.pvalue.TaggedOutput(DIGESTS, dataclasses.replace(digest_file(path, records), path=shard))


def publish(attempts: list[ShardAttempt], staging_dir: str) -> list[str]:
    """Renames one committed attempt of each shard to the shard's final path, then removes the staging directory
    (with every other attempt's file: a failed attempt's, a zombie's).

    Safe to run again (a runner may retry it): shards already renamed are left as they are.
    """
    chosen: dict[str, str] = {}
    for shard, path in sorted(attempts):
        # The runner commits one attempt per shard; should it give two, both are complete and the same bytes.
        chosen.setdefault(shard, path)
    pending = [(path, shard) for shard, path in sorted(chosen.items()) if FileSystems.exists(path)]
    if pending:
        FileSystems.rename([path for path, _ in pending], [shard for _, shard in pending])
    remove_exactly([staging_dir])
    return sorted(chosen)


class CompressWrite(beam.PTransform):
    """Writes the corpus shards; outputs their final `paths`, report `tallies` and manifest `digests`.

    Takes a dict of PCollections: `staged` ((unit, staging file) pairs
    from `StageDocuments`, any number per unit), and HashDedup's `survivors` and `duplicates`;
    with `near_dedup`, also NearDedup's `near_survivors` and `near_duplicates`.
    """

    def __init__(self, output_dir: str, codec: str = DEFAULT_CODEC, level: int | None = None,
                 sync_interval: int = DEFAULT_SYNC_INTERVAL, sync_marker: bytes = b"", progress_dir: str | None = None,
                 near_dedup: bool = False, fields: tuple[str, ...] | None = None):
        super().__init__()
        self._progress_dir = progress_dir
        self._near_dedup = near_dedup
        self._fields = resolve_fields(fields, near_dedup)
        self._output_dir = output_dir
        self._staging_dir = FileSystems.join(output_dir, STAGING_DIR)
        self._codec = codec
        self._level = resolve_level(codec, level)
        self._sync_interval = sync_interval
        self._sync_marker = sync_marker or sync_marker_for({"codec": codec, "level": self._level})

    def expand(self, inputs):
        staged = inputs[STAGED]
        shard_order = (
            staged
            | "Units" >> beam.Keys()
            | "AllUnits" >> beam.combiners.ToList()
            | "Sorted" >> beam.Map(lambda units: sorted(set(units)))
        )
        parts = {
            STAGED: staged,
            "survivors": inputs["survivors"] | "SurvivorsByUnit" >> beam.Map(
                lambda note: ((note.source_file, note.source_range), note)),
            "duplicates": inputs["duplicates"] | "DroppedByUnit" >> beam.Map(
                lambda duplicate: ((duplicate.source_file, duplicate.source_range), duplicate.source_offset)),
        }
        if self._near_dedup:
            # Within a unit, a capture is its offset.
            parts["near_survivors"] = inputs["near_survivors"] | "NearSurvivorsByUnit" >> beam.Map(
                lambda note: ((note.source_file, note.source_range), note))
            parts["near_duplicates"] = inputs["near_duplicates"] | "NearDroppedByUnit" >> beam.Map(
                lambda duplicate: ((duplicate.source_file, duplicate.source_range), duplicate.source_offset))
        grouped = parts | "ByUnit" >> beam.CoGroupByKey()
        shards = grouped | "WriteShards" >> beam.ParDo(
            WriteShard(self._output_dir, self._staging_dir, self._codec, self._level, self._sync_interval,
                       self._sync_marker, self._progress_dir, self._fields),
            shard_order=beam.pvalue.AsSingleton(shard_order),
        ).with_outputs(TALLIES, DIGESTS, main="paths")
        published = (
            shards.paths
            | "AllShards" >> beam.combiners.ToList()
            | "Publish" >> beam.FlatMap(publish, self._staging_dir)
        )
        return {"paths": published, TALLIES: shards[TALLIES], DIGESTS: shards[DIGESTS]}


class StageAndFingerprint(beam.PTransform):
    """Stages documents for CompressWrite; outputs `fingerprints` (main) and `staged`."""

    def __init__(self, output_dir: str, fields: tuple[str, ...] = DEFAULT_FIELDS):
        super().__init__()
        self._staging_dir = FileSystems.join(output_dir, STAGING_DIR)
        self._fields = fields

    def expand(self, docs):
        return docs | beam.ParDo(StageDocuments(self._staging_dir, self._fields)).with_outputs(STAGED, main=FINGERPRINTS)
