"""A unit's completion record is input too: before a rerun replays it, its reader checks it as the ledger
checked the unit when it wrote it (`transforms.state.unit_ledger`), and that what it reads is what was written.

A record is reused only if:

- it and its staging files are regular files (never through a link), and the record is within
  `MAX_RECORD_BYTES`, compressed and decompressed (a FIFO would hang the rerun, a link to `/dev/zero` or a
  small gzip that inflates to gigabytes exhaust its memory);
- its JSON is the bytes whose SHA-256 follows it (bit rot, a half-written file);
- it names the unit its file name says, and only outcomes of that unit;
- it balances: as many distinct outcomes that end a record (skips, dead letters, fingerprints) as records
  read, and its staging files, named for the unit, hold as many records as it has fingerprints;
- each staging file has the size and SHA-256 it was written with, and the build's record layout;
- each staged document is the one the fingerprint of its offset names: its `html` hashed again (as the
  build hashes it: `content_hash`, `content_check`) and its `content_hash`, those the build writes, are the
  fingerprint's (a fingerprint pointed at another page's hash, digests and all, would drop the page as a
  duplicate; a build that writes neither field stages nothing to check its fingerprints against);
- the input bytes the unit was read from (from its start to past its last record) have the SHA-256 they had
  (a file changed in place with its size and modification time kept, as `cp -p` or a restore leave it); of a
  unit of the runs a capture index chose, the runs are those it was read from (their bytes are not asked for
  again: `record_runs.runs_digest`); of a selection's unit, a shard of its source, the shard is the one it
  was read from (`pipeline.select_units`).

Otherwise the unit is read again, and a note says why (`units/NAME.not-reused`; the launcher says how many
in one line, `pipeline.resumable.not_reused`). The digests resist damage, not an attacker: one who can write
into DIR can write a record and digests that agree (docs/robustness.md says why no key is used).
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from typing import Callable

import fastavro
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus.corpus_format import content_hash
from transforms.document import DeadLetter, Skip
from transforms.filesystems.regular_files import ListedRead, NotARegularFile, open_regular
from transforms.stages.compress_write.avro_encoding import RecordLayout
from transforms.stages.compress_write.staging import STAGED_LAYOUT
from transforms.stages.read_warc.record_runs import runs_digest
from transforms.stages.read_warc.snapshot import FileChanged, range_digest
from transforms.state.unit_ledger import UNITS, decode, record_path, unit_name
from transforms.vocabulary import Candidate, Fingerprint, content_check

# A completion record's bound, compressed and as JSON: a 64 MiB unit of the smallest pages (about 100,000
# records, each with its fingerprint and signature) is about 150 MB of JSON.
MAX_RECORD_BYTES = 512 << 20
NOT_REUSED_SUFFIX = ".not-reused"
# What makes a unit's record not reusable, as a record's reader meets it.
DAMAGE = (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, zlib.error, FileChanged)


class NotReusable(Exception):
    """A unit whose completion record or staging files do not check out: it is read again."""


def record_json(path: str) -> bytes:
    """The JSON of the completion record at `path`, once its digest holds. Raises NotReusable."""
    try:
        with open_regular(path, follow_links=False) as handle:
            compressed = handle.read(MAX_RECORD_BYTES + 1)
        if len(compressed) > MAX_RECORD_BYTES:
            raise NotReusable(f"its record is over {MAX_RECORD_BYTES:,} bytes")
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        content = inflater.decompress(compressed, MAX_RECORD_BYTES + 1)
    except NotARegularFile as error:
        raise NotReusable(f"its record is {error}") from error
    except zlib.error as error:
        raise NotReusable("its record is damaged (not gzip)") from error
    if len(content) > MAX_RECORD_BYTES:
        raise NotReusable(f"its record inflates past {MAX_RECORD_BYTES:,} bytes")
    if not inflater.eof:
        raise NotReusable("its record is cut short")
    body, _, digest = content.rpartition(b"\n")
    if hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        raise NotReusable("its record is damaged (its SHA-256 differs)")
    return body


def imbalance(record: dict, source_file: str, start: int) -> str | None:
    """Why a record's outcomes are not those the ledger wrote for the unit (`source_file`, `start`), or None:
    the ledger's balance, as its record holds it."""
    if record["unit"] != [source_file, start]:
        return "its record names another unit"
    outcomes = [decode(encoded) for encoded in record["outcomes"]] + [decode(note) for note in record["notes"]]
    if any((tuple(outcome.identity[:2]) if isinstance(outcome, (Candidate, Fingerprint))
            else (outcome.source_file, getattr(outcome, "source_range", start))) != (source_file, start)
           for outcome in outcomes):
        return "its record holds outcomes of another unit"
    ends = [outcome for outcome in outcomes if isinstance(outcome, (Skip, DeadLetter, Fingerprint))]
    if len(ends) + record.get("non_response", 0) != record["records"] or len(set(ends)) != len(ends):
        return "its record's outcomes do not balance its records read"
    staged = re.compile(rf"staged-{unit_name(source_file, start)}-[0-9a-f]{{32}}-\d{{5}}\.avro")
    if not all(staged.fullmatch(name) for name, *_ in record["runs"]):
        return "its record names staging files of another unit"
    if sum(records for *_, records in record["runs"]) != sum(isinstance(end, Fingerprint) for end in ends):
        return "its staging files do not hold its fingerprints"
    return None


def unnamed_content(staged_records, layout: RecordLayout, fingerprints: dict[int, dict]) -> str | None:
    """Why a staging file's records are not the documents its unit's fingerprints name, or None: each record's
    content (`RecordLayout.content_of`: its `html` hashed again, as `hash_document` and `Fingerprint.of` hash
    it, and its `content_hash`) is that of the fingerprint of its offset, each fingerprint's once (taken from
    `fingerprints`, by offset)."""
    for staged in staged_records:
        fingerprint = fingerprints.pop(staged["source_offset"], None)
        if fingerprint is None:
            return "holds a document none of its fingerprints names"
        content = layout.content_of(staged)
        html = content.get("html")
        if (content.get("content_hash", fingerprint["content_hash"]) != fingerprint["content_hash"]
                or html is not None and (content_hash(html), content_check(html))
                != (fingerprint["content_hash"], fingerprint["content_check"])):
            return "holds a document its fingerprint does not name (its content hash differs)"
    return None


def check_staging_file(path: str, size: int, sha256: str, layout: RecordLayout, fingerprints: dict[int, dict]) -> None:
    """Reads a staging file once: it has the size and SHA-256 it was written with, the build's `layout`, and
    holds the documents its fingerprints name (`unnamed_content`). Raises NotReusable."""
    problem = failure = None
    try:
        with open_regular(path, follow_links=False) as handle:
            read = ListedRead(handle, size, sha256, lambda how: NotReusable(
                "a staging file of it is damaged (its size or SHA-256 differs)"))
            try:
                staged = fastavro.reader(read)
                if staged.metadata.get(STAGED_LAYOUT) != layout.identity:
                    problem = "was staged for records of other fields"
                else:
                    problem = unnamed_content(staged, layout, fingerprints)
            except Exception as error:  # what damaged bytes make of Avro; told apart by the digest, below
                failure = error
            read.check_rest()
    except FileNotFoundError as error:
        raise NotReusable("a staging file of it is missing") from error
    except NotARegularFile as error:
        raise NotReusable(f"a staging file of it is {error}") from error
    if failure is not None:
        if not isinstance(failure, DAMAGE):
            raise failure
        raise NotReusable(f"a staging file of it is damaged ({type(failure).__name__})") from failure
    if problem:
        raise NotReusable(f"a staging file of it {problem}")


def warc_input_problem(path: str, file_size: int, start: int,
                       runs: tuple[tuple[int, int], ...] = ()) -> Callable[[dict], str | None]:
    """Why a record's unit of the input `path` (listed at `file_size` bytes) is not read from the bytes it was, or
    None: the bytes from its start to past its last record have the SHA-256 they had; of a unit of the runs a
    capture index chose, the runs are those it was read from (their bytes are not asked for again)."""
    def problem(record: dict) -> str | None:
        read_to, read_sha256 = record["read"]
        if not start < read_to <= file_size:
            return "its input's bytes are not those it was read from (changed in place)"
        if runs:
            return None if record.get("index_runs") == runs_digest(runs) else "it was read from other runs of records"
        if range_digest(path, file_size, start, read_to) != read_sha256:
            return "its input's bytes are not those it was read from (changed in place)"
        return None

    return problem


def checked_record(units_dir: str, source_file: str, start: int, layout: RecordLayout,
                   input_problem: Callable[[dict], str | None]) -> dict:
    """The completion record of the unit (`source_file`, `start`), staged in `layout`, once it checks out (module
    docstring), its input's bytes as `input_problem` checks them (`warc_input_problem`). Raises NotReusable."""
    try:
        record = json.loads(record_json(record_path(units_dir, source_file, start)))
        problem = imbalance(record, source_file, start)
        if problem:
            raise NotReusable(problem)
        fingerprints = {fields["source_offset"]: fields for kind, fields in record["outcomes"] if kind == "Fingerprint"}
        for name, size, sha256, _ in record["runs"]:
            check_staging_file(FileSystems.join(units_dir, name), size, sha256, layout, fingerprints)
        if fingerprints:
            raise NotReusable("its staging files do not hold every document its fingerprints name")
        problem = input_problem(record)
        if problem:
            raise NotReusable(problem)
    except DAMAGE as error:
        raise NotReusable(f"its record is damaged ({type(error).__name__})") from error
    return record


def note_not_reused(units_dir: str, source_file: str, start: int, why: str) -> None:
    """Leaves a note (read by the launcher) of why the unit's record was not reused; written again by a retry."""
    path = FileSystems.join(units_dir, UNITS, f"{unit_name(source_file, start)}{NOT_REUSED_SUFFIX}")
    with FileSystems.create(path) as handle:
        handle.write(why.encode("utf-8"))


def reusable(units_dir: str, source_file: str, start: int, layout: RecordLayout,
             input_problem: Callable[[dict], str | None]) -> dict | None:
    """The checked completion record of a unit, if it has one (`checked_record`); one that does not check out
    is noted (`note_not_reused`) and None."""
    if not FileSystems.exists(record_path(units_dir, source_file, start)):
        return None
    try:
        return checked_record(units_dir, source_file, start, layout, input_problem)
    except NotReusable as error:
        note_not_reused(units_dir, source_file, start, str(error))
        return None
