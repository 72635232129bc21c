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
that read it (see `compress_write_transform.StageDocuments`), and only its small
`Fingerprint` goes on. A fingerprint carries a second, unrelated digest of
the content (BLAKE2b-128) and its length, and only fingerprints that agree on
all three are merged, so a SHA-256 collision alone can never drop a document.

A capture is known by where it was read, its `identity` (source file, byte
range, offset), never by its WARC-Record-ID alone: files in the wild repeat
record ids, inside one file and across files.

The survivor of a content is the capture with the earliest `warc_date`, then
the smallest `url`, then the smallest `warc_record_id`, then the smallest
identity: the same whatever the order in which records arrive or the number
of workers.

Nothing per content grows with its number of captures, so a content captured
millions of times (boilerplate pages, empty error pages) is no hot key, on
any runner. No runner can be trusted to page a large group in from the
shuffle: Beam's local runner and Flink's batch GroupByKey hold each key's
values as one list (apache/beam#18848), and a group over 2 GiB cannot even be
sent to a Python worker. So no step groups a content's captures whole:
- `CapturesByHash`, a combine per hash, keeps of each content its count, its
  first `DUPLICATE_LIST_CAP + 1` captures in survivor order and the buckets
  its captures fell in (at most `CAPTURE_BUCKETS`): enough for the survivor
  and its record's note;
- each capture is keyed by its hash and its bucket (`bucket_of`, from where
  it was read), and the survivor of each content that has duplicates is sent
  to each bucket its captures are in; one GroupByKey by (hash, bucket) then
  meets each capture with its survivor, in groups of about 1/1,024 of a
  content's captures. This gives the `duplicates` output, which maps every
  dropped capture to its survivor.
There is no side input, which runners such as Flink and Dask hold whole on
every worker. The price is a second shuffle: each fingerprint crosses once
in the combine's accumulators and once to meet its survivor.

The survivor's record lists the first `DUPLICATE_LIST_CAP` duplicates' URLs
and record ids (in survivor order), and `duplicate_count` says how many there
were in all.

Each content this build keeps gives its entry of the corpus's index
(`contents`: `transforms.state.corpus_index`). With `--extend`, the earlier
corpora's contents whose hash this build has (`earlier_fingerprint`, picked
from their indexes by `corpus_index_transform.EarlierMatches`: one alone under
its hash would change nothing) join the combine by hash as one more capture
each, ranked before every capture: a capture of such a content is dropped as
an `EarlierDuplicate`, and the content gets no note and no entry here.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import zlib
from dataclasses import dataclass
from typing import Iterable, Iterator


from transforms.corpus.corpus_format import content_hash
from transforms.document import Document, Skip
from transforms.vocabulary import (DUPLICATE_LIST_CAP, EARLIER_OFFSET, NO_TEXT, Duplicate, EarlierDuplicate,
                                   Fingerprint, Survivor, is_earlier)

# What a value of a (hash, bucket) group is: one of the bucket's captures, or a survivor sent to it.
CAPTURE, SURVIVOR = 0, 1

# How many groups a content's captures are split among to meet their survivor: a content captured a million
# times is read in groups of about a thousand, and one captured once is one group of one.
CAPTURE_BUCKETS = 1024


def hash_document(doc: Document) -> Document:
    return doc.replace(content_hash=content_hash(doc.html))


def has_text(doc: Document) -> bool:
    return doc.html != ""


def no_text_skip(doc: Document) -> Skip:
    """The skip of a document that MinimizeText left without text."""
    detail = "its letters are all in scripts not kept (--scripts)" if doc.dropped_letter_share > 0 else ""
    return Skip.for_document(NO_TEXT, doc, detail)


def bucket_of(fingerprint: Fingerprint) -> int:
    """The group, among `CAPTURE_BUCKETS`, in which a capture meets its survivor: from where it was read."""
    source_file, source_range, source_offset = fingerprint.identity
    return zlib.crc32(f"{source_file}\n{source_range}\n{source_offset}".encode("utf-8")) % CAPTURE_BUCKETS


@dataclass
class Captures:
    """A content's captures as far as the survivor rule needs them: how many, the first in survivor order, and the
    buckets they are in."""

    count: int
    first: list[Fingerprint]
    buckets: set[int]

    @classmethod
    def of(cls, fingerprint: Fingerprint) -> "Captures":
        return cls(1, [fingerprint], {bucket_of(fingerprint)})

    def add(self, fingerprint: Fingerprint) -> None:
        self.count += 1
        self.buckets.add(bucket_of(fingerprint))
        if len(self.first) <= DUPLICATE_LIST_CAP:
            bisect.insort(self.first, fingerprint)
        elif fingerprint < self.first[-1]:
            bisect.insort(self.first, fingerprint)
            self.first.pop()

    def merge(self, other: "Captures") -> None:
        self.count += other.count
        self.buckets |= other.buckets
        self.first = list(itertools.islice(heapq.merge(self.first, other.first), DUPLICATE_LIST_CAP + 1))


def add_capture(contents: dict[str, Captures], fingerprint: Fingerprint) -> dict[str, Captures]:
    """`contents` (content check to its `Captures`) with `fingerprint` added."""
    captures = contents.get(fingerprint.content_check)
    if captures is None:
        contents[fingerprint.content_check] = Captures.of(fingerprint)
    else:
        captures.add(fingerprint)
    return contents


def merge_contents(all_contents: Iterable[dict[str, Captures]]) -> dict[str, Captures]:
    """Several `contents` of one hash as one: the first, with the others merged into it (which stay as they were,
    as a CombineFn's `merge_accumulators` must leave them)."""
    contents_iter = iter(all_contents)
    merged = next(contents_iter, {})
    for contents in contents_iter:
        for check, captures in contents.items():
            if check in merged:
                merged[check].merge(captures)
            else:
                merged[check] = Captures(captures.count, list(captures.first), set(captures.buckets))
    return merged


def in_check_order(contents: dict[str, Captures]) -> list[Captures]:
    return [captures for _, captures in sorted(contents.items())]


def captures_by_content(fingerprints: Iterable[Fingerprint]) -> list[Captures]:
    """The `Captures` of each distinct content (`content_check`) among one hash's fingerprints, sorted by content
    check; in any order of `fingerprints`, of which it keeps at most `DUPLICATE_LIST_CAP + 1` per content."""
    contents: dict[str, Captures] = {}
    for fingerprint in fingerprints:
        add_capture(contents, fingerprint)
    return in_check_order(contents)


def survivor_note(captures: Captures) -> Survivor | None:
    """What the survivor's record must list; None when it stands for no other capture."""
    if captures.count == 1:
        return None
    survivor, listed = captures.first[0], captures.first[1:]
    capture = survivor.capture
    return Survivor(capture.source_file, capture.source_range, capture.source_offset, capture.warc_record_id,
                    captures.count - 1, tuple(f.capture.url for f in listed),
                    tuple(f.capture.warc_record_id for f in listed))


def duplicate_of(fingerprint: Fingerprint, survivor: Fingerprint,
                 earlier_corpora: tuple[str, ...] = ()) -> Duplicate | None:
    """The duplicate record of a capture whose content `survivor` stands for; None for the survivor itself.
    A survivor of an earlier corpus (`is_earlier`) is named by that corpus, of `earlier_corpora`, and the hash."""
    if fingerprint.identity == survivor.identity:
        return None
    dropped, kept = vars(fingerprint.capture), survivor.capture
    if is_earlier(survivor):
        return EarlierDuplicate(**dropped, content_hash=survivor.content_hash, survivor_url="", survivor_record_id="",
                                survivor_source_file="", survivor_source_offset=EARLIER_OFFSET,
                                survivor_corpus=earlier_corpora[kept.source_range])
    return Duplicate(**dropped, content_hash=survivor.content_hash, survivor_url=kept.url,
                     survivor_record_id=kept.warc_record_id, survivor_source_file=kept.source_file,
                     survivor_source_offset=kept.source_offset)


def notes_of(contents: Iterable[Captures]) -> Iterator[tuple[Survivor, Captures]]:
    """Of one hash's contents, those that have duplicates, each with its survivor's note."""
    for captures in contents:
        note = survivor_note(captures)
        if note is not None:
            yield note, captures


def duplicates_among(fingerprints: Iterable[Fingerprint], survivors: dict[str, Fingerprint],
                     earlier_corpora: tuple[str, ...] = ()) -> Iterator[Duplicate]:
    """The duplicates among captures of one hash, given the survivor of each content (by content check) that has
    duplicates."""
    for fingerprint in fingerprints:
        survivor = survivors.get(fingerprint.content_check)
        duplicate = None if survivor is None else duplicate_of(fingerprint, survivor, earlier_corpora)
        if duplicate is not None:
            yield duplicate


def outcomes_of_hash(fingerprints: list[Fingerprint]) -> Iterator[Survivor | Duplicate]:
    """One hash's captures, in any order: the notes of its survivors that stand for others (in content-check
    order), then its duplicates."""
    survivors = {}
    for note, captures in notes_of(captures_by_content(fingerprints)):
        survivors[captures.first[0].content_check] = captures.first[0]
        yield note
    yield from duplicates_among(fingerprints, survivors)


def deduplicate(fingerprints: Iterable[Fingerprint]) -> tuple[list[Survivor], list[Duplicate]]:
    """HashDedup in one process: the survivors' notes and the duplicates."""
    by_hash: dict[str, list[Fingerprint]] = {}
    for fingerprint in fingerprints:
        by_hash.setdefault(fingerprint.content_hash, []).append(fingerprint)
    outcomes = [outcome for captures in by_hash.values() for outcome in outcomes_of_hash(captures)]
    return ([outcome for outcome in outcomes if isinstance(outcome, Survivor)],
            [outcome for outcome in outcomes if isinstance(outcome, Duplicate)])


def capture_by_bucket(fingerprint: Fingerprint):
    return (fingerprint.content_hash, bucket_of(fingerprint)), (CAPTURE, fingerprint)
