"""HashDedup: one document per distinct content.

Every document gets `content_hash`, the SHA-256 (hex) of its minimized
`html` in UTF-8: 256 bits, so an accidental collision among billions of pages
is not a practical concern (the birthday bound for 10^10 documents is about
10^-57).

Documents themselves never cross the shuffle: each is staged by the worker
that read it (see `compress_write.StageDocuments`), and only its small
`Fingerprint` is combined by hash. A fingerprint carries a second, unrelated
digest of the content (BLAKE2b-128) and its length, and only fingerprints
that agree on all three are merged, so a SHA-256 collision alone can never
drop a document.

The survivor of a group is the capture with the earliest `warc_date`, then
the smallest `url`, then the smallest `warc_record_id`: the same whatever the
order in which records arrive or the number of workers. It carries
`duplicate_count` and the duplicates' URLs and record ids (in the same
order); the `duplicates` output maps every dropped record to its survivor.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import apache_beam as beam

from transforms.document import Document
from transforms.stage import counter

HASH_ALGORITHM = "sha256"
DUPLICATES = "duplicates"
SURVIVORS = "survivors"


def content_hash(div_html: str) -> str:
    return hashlib.sha256(div_html.encode("utf-8")).hexdigest()


def content_check(div_html: str) -> str:
    encoded = div_html.encode("utf-8")
    return f"{len(encoded)}:{hashlib.blake2b(encoded, digest_size=16).hexdigest()}"


def hash_document(doc: Document) -> Document:
    return doc.replace(content_hash=content_hash(doc.html))


@dataclass(frozen=True, order=True)
class Fingerprint:
    """What HashDedup needs of a document; ordered by the survivor rule."""

    warc_date: str
    url: str
    warc_record_id: str
    source_file: str
    source_offset: int
    source_range: int
    content_hash: str
    content_check: str

    @classmethod
    def of(cls, doc: Document) -> "Fingerprint":
        return cls(doc.warc_date, doc.url, doc.warc_record_id, doc.source_file, doc.source_offset,
                   doc.source_range, doc.content_hash, content_check(doc.html))


@dataclass(frozen=True)
class Duplicate:
    """A dropped capture and the survivor that stands for it."""

    url: str
    warc_record_id: str
    warc_date: str
    source_file: str
    source_offset: int
    source_range: int
    content_hash: str
    survivor_url: str
    survivor_record_id: str


@dataclass(frozen=True)
class Survivor:
    """A kept capture that stands for others: what its record must list."""

    source_file: str
    source_range: int
    warc_record_id: str
    duplicate_urls: tuple[str, ...]
    duplicate_record_ids: tuple[str, ...]


class KeepOneSurvivor(beam.CombineFn):
    """Per hash: for each distinct content, its survivor first, then its duplicates in order."""

    def create_accumulator(self):
        return {}

    def add_input(self, groups, fingerprint):
        groups.setdefault(fingerprint.content_check, []).append(fingerprint)
        return groups

    def merge_accumulators(self, accumulators):
        merged = {}
        for groups in accumulators:
            for check, fingerprints in groups.items():
                merged.setdefault(check, []).extend(fingerprints)
        return merged

    def extract_output(self, groups):
        return [sorted(fingerprints) for _, fingerprints in sorted(groups.items())]


def resolve_group(group: list[Fingerprint]) -> tuple[Survivor | None, list[Duplicate]]:
    """The survivor's note (None when it has no duplicates) and the dropped captures."""
    survivor, dropped = group[0], group[1:]
    if not dropped:
        return None, []
    note = Survivor(survivor.source_file, survivor.source_range, survivor.warc_record_id,
                    tuple(doc.url for doc in dropped), tuple(doc.warc_record_id for doc in dropped))
    duplicates = [
        Duplicate(doc.url, doc.warc_record_id, doc.warc_date, doc.source_file, doc.source_offset, doc.source_range,
                  survivor.content_hash, survivor.url, survivor.warc_record_id)
        for doc in dropped
    ]
    return note, duplicates


class ResolveGroups(beam.DoFn):
    def setup(self):
        self._duplicates = counter("hash_dedup", "duplicates")

    def process(self, keyed_groups):
        _, groups = keyed_groups
        for group in groups:
            note, duplicates = resolve_group(group)
            self._duplicates.inc(len(duplicates))
            if note is not None:
                yield note
            for duplicate in duplicates:
                yield beam.pvalue.TaggedOutput(DUPLICATES, duplicate)


class HashDedup(beam.PTransform):
    """Fingerprints in; outputs `survivors` (those that have duplicates) and `duplicates`."""

    def expand(self, fingerprints):
        return (
            fingerprints
            | "KeyByHash" >> beam.Map(lambda fingerprint: (fingerprint.content_hash, fingerprint))
            | "KeepOneSurvivor" >> beam.CombinePerKey(KeepOneSurvivor())
            | "Resolve" >> beam.ParDo(ResolveGroups()).with_outputs(DUPLICATES, main=SURVIVORS)
        )
