"""A selection's graph: the build's graph (`pipeline.graph.build_corpus`) with an annotated corpus as its source.

`ReadAnnotated` streams the records of the corpus as the documents a build had before deduplication, and beside
them the captures that follow each (its duplicates in the source's `duplicates-*.jsonl`: the same page, which a
filtering build decides alike). `SelectDocuments` (`select_documents.select_record`) decides each record, then
the content hash, and from there the build's graph: staging, HashDedup, NearDedup (`--near-dedup`: signed from the
kept text, after the selection, as a filtering build signs), the shards, side files, index, report, report page
and manifest. A follower's outcome is its record's, of its own capture (`FollowRecords`): only fingerprints, skips
and dead letters are shuffled to give it, never a document, so no step holds what grows with the source. The
source's listed skips and dead letters are kept as they are. Each shard of the source is a unit of the selection,
recorded for resume and replayed as a build's byte ranges are (`pipeline.select_units`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from pipeline.graph import FOLLOWERS, DocumentStage, DocumentSource, reminimize_of, token_counter
from pipeline.select_budget import TokenBudget
from pipeline.select_documents import Selection, select_record
from pipeline.select_units import SHARD_UNITS, ReadSourceShard, SourceShard
from transforms.document import DeadLetter, Document, Skip
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.exact_paths import escape_glob
from transforms.stage import FilterDocuments
from transforms.stages.hash_dedup_transform import HashDocuments
from transforms.stages.read_warc.snapshot import InputDigest
from transforms.stages.tokens import TokenCounter
from transforms.vocabulary import (DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, INPUT_FILES, NOTES,
                                   RECORDS_READ, SELECT, SKIPPED, UNITS_READ, Capture, Duplicate, Fingerprint,
                                   RecordsRead)
from transforms.state.unit_ledger import FINGERPRINTS, RECORDED

# The source's side files a selection reads, and the record each line is.
SIDE_RECORDS = {"duplicates": Duplicate, "skipped": Skip, "dead-letter": DeadLetter}


def _side_records(source: str, name: str, pbegin):
    kind = SIDE_RECORDS[name]
    return (pbegin
            | f"Read-{name}" >> beam.io.ReadFromText(FileSystems.join(escape_glob(source), f"{name}-*.jsonl"))
            | f"Parse-{name}" >> beam.Map(lambda line: kind(**json.loads(line))))


def outcome_key(outcome: Fingerprint | Skip | DeadLetter) -> tuple[str, int]:
    """Where the capture an outcome is about was read: what its followers name it by."""
    capture = outcome.capture if isinstance(outcome, Fingerprint) else outcome
    return capture.source_file, capture.source_offset


def as_follower(outcome: Fingerprint | Skip | DeadLetter, follower: Duplicate):
    """A record's outcome as that of a capture that follows it (the same page): its fingerprint, skip or dead
    letter, of the follower's capture."""
    if isinstance(outcome, Fingerprint):
        return Fingerprint(Capture(**{field.name: getattr(follower, field.name)
                                      for field in dataclasses.fields(Capture)}), outcome.content_hash,
                           outcome.content_check)
    return dataclasses.replace(outcome, source_file=follower.source_file, source_offset=follower.source_offset,
                               warc_record_id=follower.warc_record_id, url=follower.url)


def followed(key_and_grouped):
    """A record's outcome, once for each capture that follows it: fingerprints (main), skips and dead letters."""
    _, grouped = key_and_grouped
    for tag, outcomes in grouped.items():
        if tag == FOLLOWERS:
            continue
        for outcome in outcomes:
            for follower in grouped[FOLLOWERS]:
                copy = as_follower(outcome, follower)
                yield copy if isinstance(copy, Fingerprint) else beam.pvalue.TaggedOutput(
                    SKIPPED if isinstance(copy, Skip) else DEAD_LETTER, copy)


class FollowRecords(beam.PTransform):
    """The outcomes of the captures that follow a record (`followers`, the source's duplicates, by their survivor)
    from the record's (`fingerprints`, `skipped`, `dead_letter`: each a tuple of the PCollections that give them),
    met by capture: only these small values are shuffled, never a document. Each is keyed where it is made and
    goes to the shuffle as it is, with no Flatten before (in the local runner, each is one more copy of every
    outcome). Outputs `fingerprints` (main), `skipped` and `dead_letter`."""

    def expand(self, inputs):
        outcomes = {f"{tag}-{index}": collection | f"ByCapture-{tag}-{index}" >> beam.Map(
                        lambda outcome: (outcome_key(outcome), outcome))
                    for tag in (FINGERPRINTS, SKIPPED, DEAD_LETTER) for index, collection in enumerate(inputs[tag])}
        followers = inputs[FOLLOWERS] | "BySurvivor" >> beam.Map(
            lambda duplicate: ((duplicate.survivor_source_file, duplicate.survivor_source_offset), duplicate))
        copies = ({**outcomes, FOLLOWERS: followers}
                  | "OutcomesAndFollowers" >> beam.CoGroupByKey()
                  | "Followed" >> beam.FlatMap(followed).with_outputs(SKIPPED, DEAD_LETTER, main=FINGERPRINTS))
        return {tag: copies[tag] for tag in (FINGERPRINTS, SKIPPED, DEAD_LETTER)}


class CountRead(beam.DoFn):
    """The records read, per source file, one `RecordsRead` per file and bundle (a document, skip or dead letter
    each counts one)."""

    def start_bundle(self):
        self._read = Counter()

    def process(self, outcome):
        self._read[(outcome.capture if isinstance(outcome, Document) else outcome).source_file] += 1

    def finish_bundle(self):
        for source_file, records in sorted(self._read.items()):
            yield GlobalWindows.windowed_value(RecordsRead(source_file, records))


class ReadAnnotated(beam.PTransform):
    """The documents of the corpus in `source` and its skips and dead letters, as a build's reader outputs them
    (`pipeline.graph.DocumentSource`); the inputs are `manifest`, the source's manifest (which lists every file
    read, by digest). Its `shards` are its units, read each by one reader (`select_units.ReadSourceShard`, with
    the source's `file_sizes` and `range_bytes`); with `units_dir`, each unit read gives its `UnitRead`, and a
    unit recorded there by an earlier run of the selection its record on `recorded`, in place of its documents."""

    def __init__(self, source: str, manifest: InputDigest, shards: tuple[SourceShard, ...],
                 file_sizes: dict[str, int], range_bytes: int, units_dir: str | None = None,
                 staged_fields: tuple[str, ...] = ()):
        super().__init__()
        self._source = source
        self._manifest = manifest
        self._shards = shards
        self._reader = ReadSourceShard(file_sizes, range_bytes, units_dir, staged_fields)

    def expand(self, pbegin):
        # SOURCE's files were checked against its manifest's digests before the selection began. Streamed to the
        # selection: a record's followers are its duplicates' captures, whose outcomes are its own (`FollowRecords`).
        records = (pbegin | "Shards" >> beam.Create(self._shards) | "SpreadShards" >> beam.Reshuffle()
                   | "Records" >> beam.ParDo(self._reader).with_outputs(DEAD_LETTER, UNITS_READ, RECORDED,
                                                                        main=DOCUMENTS))
        documents = records[DOCUMENTS]
        followers = _side_records(self._source, "duplicates", pbegin)
        dead = ((_side_records(self._source, "dead-letter", pbegin), records[DEAD_LETTER])
                | "DeadLetters" >> beam.Flatten())
        skipped = _side_records(self._source, "skipped", pbegin)
        # Counted where each is made: a Flatten of the documents would hold them in the local runner.
        read = [outcomes | f"CountRead-{name}" >> beam.ParDo(CountRead()) for name, outcomes in (
            ("records", documents), ("followers", followers), ("skipped", skipped), ("dead", dead))] \
            | "Read" >> beam.Flatten()
        return {
            DOCUMENTS: documents, FOLLOWERS: followers, SKIPPED: skipped, DEAD_LETTER: dead, RECORDS_READ: read,
            INPUT_FILES: pbegin | "Manifest" >> beam.Create([self._manifest]),
            NOTES: pbegin | "NoNotes" >> beam.Create([]),
            UNITS_READ: records[UNITS_READ], RECORDED: records[RECORDED],
        }


class SelectDocuments(beam.PTransform):
    """`select_record` applied to every document; outputs `documents`, `skipped` (`filtered`, `other-language`),
    `filter_counts` and dead letters, as QualityFilter does."""

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, selection: Selection, reminimize, count_tokens: TokenCounter | None = None,
                 stored_minimized: bool = True):
        super().__init__()
        self._selection = selection
        self._reminimize = reminimize
        self._count_tokens = count_tokens
        self._stored_minimized = stored_minimized

    def expand(self, docs):
        apply = functools.partial(select_record, selection=self._selection, thresholds=self._selection.thresholds(),
                                  reminimize=self._reminimize, count_tokens=self._count_tokens,
                                  stored_minimized=self._stored_minimized)
        return docs | beam.ParDo(FilterDocuments(SELECT, apply)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)


def annotated_source(source: str, manifest: InputDigest, selection: Selection, recorded: dict,
                     shards: tuple[SourceShard, ...] = (), file_sizes: dict[str, int] | None = None,
                     stored_minimized: bool = True) -> DocumentSource:
    """The selection of `selection` from the annotated corpus in `source` (its manifest's digest `manifest`, its
    corpus shards `shards` and its input files' sizes `file_sizes`), as a `DocumentSource` of the build's graph;
    `recorded`: what its manifest records of the selection; `stored_minimized`: whether its records hold their
    minimized text (`html`, `text`), or it is made again. It resumes as a build does, unless a token budget decides
    across every unit."""
    return DocumentSource(
        "ReadAnnotated", lambda settings, progress_dir, units_dir, found: ReadAnnotated(
            source, manifest, shards, file_sizes or {}, settings.range_bytes, units_dir, settings.written_fields()),
        (DocumentStage("Select", lambda settings, found: SelectDocuments(selection, reminimize_of(settings),
                                                                         token_counter(found), stored_minimized)),
         DocumentStage("Hash", lambda settings, found: HashDocuments()),
         # After the hash: a content's tokens count once.
         DocumentStage("TokenBudget", lambda settings, found: TokenBudget(selection.token_budget, selection.budget_by),
                       lambda settings: selection.token_budget is not None)),
        inspects_pages=False, resumable=selection.token_budget is None, recorded=recorded, follow=FollowRecords,
        resumed_under={SELECT: selection.recorded()}, unit_outcomes=(), units_are=SHARD_UNITS)
