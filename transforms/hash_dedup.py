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
content captured millions of times (boilerplate pages) is no hot key:

1. `KeepOneSurvivor` combines per hash, keeping for each content only its
   count and its first `DUPLICATE_LIST_CAP + 1` captures in survivor order.
2. The survivor of each content with duplicates is joined to every capture
   of its hash by a GroupByKey on the hash (no side input, which runners
   such as Flink and Dask hold whole on every worker). `FindDuplicates` reads
   a hash's grouped values twice, never holding them: once for its
   survivors (one per content), once to compare each capture with its
   content's survivor. Grouped values are re-iterable in Beam's model and
   paged in from the shuffle where they are large, so a hash with millions
   of captures is streamed, not listed. This gives the `duplicates` output,
   which maps every dropped capture to its survivor.

The survivor's record lists the first `DUPLICATE_LIST_CAP` duplicates' URLs
and record ids (in survivor order), and `duplicate_count` says how many there
were in all.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
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
SURVIVOR_OF_HASH = "survivor_of_hash"
# What a value of the join by hash is: a survivor of the hash, or one of its captures.
JOINED_SURVIVOR = "survivor"
JOINED_CAPTURE = "capture"

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

    @classmethod
    def merged(cls, parts: list["Captures"]) -> "Captures":
        first = list(itertools.islice(heapq.merge(*(part.first for part in parts)), DUPLICATE_LIST_CAP + 1))
        return cls(sum(part.count for part in parts), first)


class KeepOneSurvivor(beam.CombineFn):
    """Per hash: for each distinct content (`content_check`), its `Captures`, sorted by content check."""

    def create_accumulator(self):
        return {}

    def add_input(self, contents, fingerprint):
        captures = contents.get(fingerprint.content_check)
        if captures is None:
            contents[fingerprint.content_check] = Captures(1, [fingerprint])
        else:
            captures.add(fingerprint)
        return contents

    def merge_accumulators(self, accumulators):
        parts: dict[str, list[Captures]] = {}
        for contents in accumulators:
            for check, captures in contents.items():
                parts.setdefault(check, []).append(captures)
        return {check: Captures.merged(each) for check, each in parts.items()}

    def extract_output(self, contents):
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


def duplicates_of_hash(joined: Iterable[tuple[str, Fingerprint]]) -> Iterator[Duplicate]:
    """The duplicates among one hash's captures, from its values in the join, in any order: (JOINED_SURVIVOR,
    fingerprint) for each survivor and (JOINED_CAPTURE, fingerprint) for each capture.

    Iterates `joined` twice and keeps nothing per capture: first for the survivors (one per content that has
    duplicates), then for the captures; a hash without survivors (a content captured once) is read once.
    """
    survivors = {fingerprint.content_check: fingerprint for tag, fingerprint in joined if tag == JOINED_SURVIVOR}
    if not survivors:
        return
    for tag, fingerprint in joined:
        survivor = survivors.get(fingerprint.content_check) if tag == JOINED_CAPTURE else None
        duplicate = None if survivor is None else duplicate_of(fingerprint, survivor)
        if duplicate is not None:
            yield duplicate


def deduplicate(fingerprints: Iterable[Fingerprint]) -> tuple[list[Survivor], list[Duplicate]]:
    """HashDedup in one process, with the transform's own parts: the survivors' notes and the duplicates."""
    combiner = KeepOneSurvivor()
    by_hash: dict[str, dict] = {}
    joined: dict[str, list[tuple[str, Fingerprint]]] = {}
    for fingerprint in fingerprints:
        by_hash[fingerprint.content_hash] = combiner.add_input(
            by_hash.get(fingerprint.content_hash) or combiner.create_accumulator(), fingerprint)
        joined.setdefault(fingerprint.content_hash, []).append((JOINED_CAPTURE, fingerprint))
    notes = []
    for digest, contents in by_hash.items():
        for captures in combiner.extract_output(contents):
            note = survivor_note(captures)
            if note is not None:
                notes.append(note)
                joined[digest].append((JOINED_SURVIVOR, captures.first[0]))
    duplicates = [duplicate for values in joined.values() for duplicate in duplicates_of_hash(values)]
    return notes, duplicates


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


CAPTURE_OF_HASH = "capture_of_hash"


class KeyByHash(beam.DoFn):
    """Each fingerprint keyed by its hash, for the survivor's combine (main) and as a capture of the join by hash
    (tagged): one step over the fingerprints for both."""

    def process(self, fingerprint: Fingerprint):
        yield fingerprint.content_hash, fingerprint
        yield beam.pvalue.TaggedOutput(CAPTURE_OF_HASH, (fingerprint.content_hash, (JOINED_CAPTURE, fingerprint)))


class NoteSurvivors(beam.DoFn):
    """Per hash: the notes of survivors that stand for others, and (tagged) each such survivor as a value of the
    join by hash."""

    def process(self, keyed_contents):
        digest, contents = keyed_contents
        for captures in contents:
            note = survivor_note(captures)
            if note is not None:
                yield note
                yield beam.pvalue.TaggedOutput(SURVIVOR_OF_HASH, (digest, (JOINED_SURVIVOR, captures.first[0])))


class FindDuplicates(beam.DoFn):
    """Per hash of the join: its duplicates (`duplicates_of_hash`)."""

    def setup(self):
        self._duplicates = counter("hash_dedup", "duplicates")

    def process(self, keyed_values):
        _, joined = keyed_values
        for duplicate in duplicates_of_hash(joined):
            self._duplicates.inc()
            yield duplicate


class Deduplicated(NamedTuple):
    survivors: beam.PCollection
    duplicates: beam.PCollection


class HashDedup(beam.PTransform):
    """Fingerprints in; outputs `survivors` (notes of those that have duplicates) and `duplicates`."""

    def expand(self, fingerprints):
        keyed = fingerprints | "KeyByHash" >> beam.ParDo(KeyByHash()).with_outputs(CAPTURE_OF_HASH, main="keyed")
        noted = (
            keyed.keyed
            | "KeepOneSurvivor" >> beam.CombinePerKey(KeepOneSurvivor())
            | "NoteSurvivors" >> beam.ParDo(NoteSurvivors()).with_outputs(SURVIVOR_OF_HASH, main=SURVIVORS)
        )
        duplicates = (
            (noted[SURVIVOR_OF_HASH], keyed[CAPTURE_OF_HASH])
            | "SurvivorsAndCaptures" >> beam.Flatten()
            | "JoinByHash" >> beam.GroupByKey()
            | "FindDuplicates" >> beam.ParDo(FindDuplicates())
        )
        return Deduplicated(noted[SURVIVORS], duplicates)
