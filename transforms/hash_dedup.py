"""HashDedup: one document per distinct content.

Every document gets `content_hash`, the SHA-256 (hex) of its minimized
`html` in UTF-8: 256 bits, so an accidental collision among billions of pages
is not a practical concern (the birthday bound for 10^10 documents is about
10^-57).

A page whose `html` is empty (no visible text: a JavaScript-only page, a
frameset, an unclosed `<title>` that swallows the page, a page whose letters
are all in scripts not kept) is not a duplicate of every other such page:
`HashDocuments` skips it as `no-text` instead of giving it a hash.

Documents themselves never cross the shuffle: each is staged by the worker
that read it (see `compress_write.StageDocuments`), and only its small
`Fingerprint` goes on. A fingerprint carries a second, unrelated digest of
the content (BLAKE2b-128) and its length, and only fingerprints that agree on
all three are merged, so a SHA-256 collision alone can never drop a document.

A capture is known by where it was read, its `identity` (source file, byte
range, offset), never by its WARC-Record-ID alone: files in the wild repeat
record ids, inside one file and across files.

The survivor of a content is the capture with the earliest `warc_date`, then
the smallest `url`, then the smallest `warc_record_id`, then the smallest
identity: the same whatever the order in which records arrive or the number
of workers. Nothing per content grows with its number of captures, so a
content captured millions of times (boilerplate pages) is no hot key for
memory: fingerprints are grouped by hash (one GroupByKey, no side input,
which runners such as Flink and Dask hold whole on every worker), and
`outcomes_of_hash` reads a hash's grouped values twice, never holding them:
once for each content's count and first `DUPLICATE_LIST_CAP + 1` captures in
survivor order, once to compare each capture with its content's survivor.
Grouped values are re-iterable in Beam's model and paged in from the shuffle
where they are large, so a hash with millions of captures is streamed, not
listed. This gives the `duplicates` output, which maps every dropped capture
to its survivor. (A combine per hash before the group would shuffle every
fingerprint twice, and hold a table of up to 100,000 keys per bundle where
Beam lifts it.)

The survivor's record lists the first `DUPLICATE_LIST_CAP` duplicates' URLs
and record ids (in survivor order), and `duplicate_count` says how many there
were in all.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
from typing import Iterable, Iterator, NamedTuple

import apache_beam as beam

from transforms.document import Document, Skip
from transforms.stage import counter

HASH_ALGORITHM = "sha256"
DOCUMENTS = "documents"
SKIPPED = "skipped"
NO_TEXT = "no-text"
SURVIVORS = "survivors"
DUPLICATES = "duplicates"

# A survivor's record lists at most this many of its duplicates (the first in
# survivor order); `duplicate_count` counts them all, and the duplicates file
# maps every one. Enough for a reader to see what a page was copied as, and a
# bound on the size of a record whatever the crawl.
DUPLICATE_LIST_CAP = 100


def content_hash(div_html: str) -> str:
    return hashlib.sha256(div_html.encode("utf-8")).hexdigest()


def content_check(div_html: str) -> str:
    encoded = div_html.encode("utf-8")
    return f"{len(encoded)}:{hashlib.blake2b(encoded, digest_size=16).hexdigest()}"


def hash_document(doc: Document) -> Document:
    return doc.replace(content_hash=content_hash(doc.html))


def has_text(doc: Document) -> bool:
    return doc.html != ""


def no_text_skip(doc: Document) -> Skip:
    """The skip of a document that MinimizeText left without text."""
    detail = "its letters are all in scripts not kept (--scripts)" if doc.dropped_letter_share > 0 else ""
    return Skip(NO_TEXT, doc.source_file, doc.source_offset, "response", doc.warc_record_id, doc.url, detail)


@dataclass(frozen=True, order=True, slots=True)
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

    @property
    def identity(self) -> tuple[str, int, int]:
        """Where the capture was read: what tells it from every other capture."""
        return (self.source_file, self.source_range, self.source_offset)


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
    survivor_source_file: str
    survivor_source_offset: int


@dataclass(frozen=True)
class Survivor:
    """A kept capture that stands for others: what its record must list."""

    source_file: str
    source_range: int
    source_offset: int
    warc_record_id: str
    duplicate_count: int
    duplicate_urls: tuple[str, ...]
    duplicate_record_ids: tuple[str, ...]


@dataclass
class Captures:
    """A content's captures as far as the survivor rule needs them: how many, and the first in survivor order."""

    count: int
    first: list[Fingerprint]

    def add(self, fingerprint: Fingerprint) -> None:
        self.count += 1
        if len(self.first) <= DUPLICATE_LIST_CAP:
            bisect.insort(self.first, fingerprint)
        elif fingerprint < self.first[-1]:
            bisect.insort(self.first, fingerprint)
            self.first.pop()


def captures_by_content(fingerprints: Iterable[Fingerprint]) -> list[Captures]:
    """The `Captures` of each distinct content (`content_check`) among one hash's fingerprints, sorted by content
    check; in any order of `fingerprints`, of which it keeps at most `DUPLICATE_LIST_CAP + 1` per content."""
    contents: dict[str, Captures] = {}
    for fingerprint in fingerprints:
        captures = contents.get(fingerprint.content_check)
        if captures is None:
            contents[fingerprint.content_check] = Captures(1, [fingerprint])
        else:
            captures.add(fingerprint)
    return [captures for _, captures in sorted(contents.items())]


def survivor_note(captures: Captures) -> Survivor | None:
    """What the survivor's record must list; None when it stands for no other capture."""
    if captures.count == 1:
        return None
    survivor, listed = captures.first[0], captures.first[1:]
    return Survivor(survivor.source_file, survivor.source_range, survivor.source_offset, survivor.warc_record_id,
                    captures.count - 1, tuple(f.url for f in listed), tuple(f.warc_record_id for f in listed))


def duplicate_of(fingerprint: Fingerprint, survivor: Fingerprint) -> Duplicate | None:
    """The duplicate record of a capture whose content `survivor` stands for; None for the survivor itself."""
    if fingerprint.identity == survivor.identity:
        return None
    return Duplicate(fingerprint.url, fingerprint.warc_record_id, fingerprint.warc_date, fingerprint.source_file,
                     fingerprint.source_offset, fingerprint.source_range, survivor.content_hash, survivor.url,
                     survivor.warc_record_id, survivor.source_file, survivor.source_offset)


def outcomes_of_hash(fingerprints: Iterable[Fingerprint]) -> Iterator[Survivor | Duplicate]:
    """One hash's captures, in any order: the notes of its survivors that stand for others (in content-check
    order), then its duplicates.

    Iterates `fingerprints` twice and keeps nothing per capture: first for
    each content's `Captures`, then to compare each capture with its
    content's survivor; a hash without duplicates is read once.
    """
    survivors = {}
    for captures in captures_by_content(fingerprints):
        note = survivor_note(captures)
        if note is not None:
            survivors[captures.first[0].content_check] = captures.first[0]
            yield note
    if not survivors:
        return
    for fingerprint in fingerprints:
        survivor = survivors.get(fingerprint.content_check)
        duplicate = None if survivor is None else duplicate_of(fingerprint, survivor)
        if duplicate is not None:
            yield duplicate


def deduplicate(fingerprints: Iterable[Fingerprint]) -> tuple[list[Survivor], list[Duplicate]]:
    """HashDedup in one process: the survivors' notes and the duplicates."""
    by_hash: dict[str, list[Fingerprint]] = {}
    for fingerprint in fingerprints:
        by_hash.setdefault(fingerprint.content_hash, []).append(fingerprint)
    outcomes = [outcome for captures in by_hash.values() for outcome in outcomes_of_hash(captures)]
    return ([outcome for outcome in outcomes if isinstance(outcome, Survivor)],
            [outcome for outcome in outcomes if isinstance(outcome, Duplicate)])


class HashOrSkip(beam.DoFn):
    def setup(self):
        self._no_text = counter("hash_dedup", NO_TEXT)

    def process(self, doc: Document):
        if has_text(doc):
            yield hash_document(doc)
        else:
            self._no_text.inc()
            yield beam.pvalue.TaggedOutput(SKIPPED, no_text_skip(doc))


class HashDocuments(beam.PTransform):
    """Gives documents their `content_hash`; outputs `documents` and `skipped` (`no-text` skips)."""

    def expand(self, docs):
        return docs | beam.ParDo(HashOrSkip()).with_outputs(SKIPPED, main=DOCUMENTS)


class DeduplicateHash(beam.DoFn):
    """Per hash, its captures grouped: `outcomes_of_hash`, the notes of survivors (main) and the duplicates
    (tagged)."""

    def setup(self):
        self._duplicates = counter("hash_dedup", "duplicates")

    def process(self, hash_and_fingerprints):
        _, fingerprints = hash_and_fingerprints
        for outcome in outcomes_of_hash(fingerprints):
            if isinstance(outcome, Duplicate):
                self._duplicates.inc()
                yield beam.pvalue.TaggedOutput(DUPLICATES, outcome)
            else:
                yield outcome


class Deduplicated(NamedTuple):
    survivors: beam.PCollection
    duplicates: beam.PCollection


class HashDedup(beam.PTransform):
    """Fingerprints in; outputs `survivors` (notes of those that have duplicates) and `duplicates`."""

    def expand(self, fingerprints):
        outcomes = (
            fingerprints
            | "KeyByHash" >> beam.Map(lambda fingerprint: (fingerprint.content_hash, fingerprint))
            | "ByHash" >> beam.GroupByKey()
            | "Deduplicate" >> beam.ParDo(DeduplicateHash()).with_outputs(DUPLICATES, main=SURVIVORS)
        )
        return Deduplicated(outcomes[SURVIVORS], outcomes[DUPLICATES])
