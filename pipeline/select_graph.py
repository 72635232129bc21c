"""A selection's graph: the build's graph (`pipeline.graph.build_corpus`) with an annotated corpus as its source.

`ReadAnnotated` gives the documents of the corpus as a build had them before deduplication: each record, and each
capture of its content that the build dropped as its duplicate (the source's `duplicates-*.jsonl`: its capture
with the record's content, signals and all), so that the selection decides every capture, as a filtering build
does, and deduplicates what it keeps again, by HashDedup's own rule. Beside them, the source's listed skips and
dead letters, which a selection keeps as they are. Then `SelectDocuments` (`select_documents.select_document`)
and the content hash, and from there the build's graph: staging, HashDedup, NearDedup (`--near-dedup`: signed
from the kept text, after the selection, as a filtering build signs), the shards, side files, index, report,
report page and manifest.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from pipeline.graph import DocumentStage, DocumentSource, reminimize_of
from pipeline.select_budget import TokenBudget
from pipeline.select_documents import Selection, document_of, select_document
from transforms.corpus.read_corpus_transform import ReadCorpus
from transforms.document import DeadLetter, Document, Skip
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.exact_paths import escape_glob
from transforms.stage import FilterDocuments
from transforms.stages.hash_dedup_transform import HashDocuments
from transforms.stages.read_warc.snapshot import InputDigest
from transforms.vocabulary import (DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, INPUT_FILES, NOTES, READ_CORPUS,
                                   RECORDS_READ, SELECT, SKIPPED, UNITS_READ, Capture, Duplicate, RecordsRead)
from transforms.state.unit_ledger import RECORDED

# The source's side files a selection reads, and the record each line is.
SIDE_RECORDS = {"duplicates": Duplicate, "skipped": Skip, "dead-letter": DeadLetter}
# Where a capture was read, within its file: what a duplicate names its survivor by.
WITH_DUPLICATES = "with-duplicates"


def _side_records(source: str, name: str, pbegin):
    kind = SIDE_RECORDS[name]
    return (pbegin
            | f"Read-{name}" >> beam.io.ReadFromText(FileSystems.join(escape_glob(source), f"{name}-*.jsonl"))
            | f"Parse-{name}" >> beam.Map(lambda line: kind(**json.loads(line))))


class Rehydrate(beam.DoFn):
    """Records in; their documents out, and each capture a record's duplicates name, with its content (tagged
    `WITH_DUPLICATES`: a record with duplicates, keyed for them to meet it, is handled in `with_duplicates`)."""

    def process(self, record: dict):
        doc = document_of(record)
        if record.get("duplicate_count"):
            yield beam.pvalue.TaggedOutput(WITH_DUPLICATES, ((doc.capture.source_file, doc.capture.source_offset), doc))
        else:
            yield doc


def with_duplicates(key_and_grouped):
    """A record's document, then the same document as each capture its duplicates name."""
    _, grouped = key_and_grouped
    for doc in grouped["record"]:
        yield doc
        for duplicate in grouped["duplicates"]:
            yield doc.replace(capture=Capture(**{field.name: getattr(duplicate, field.name)
                                                 for field in dataclasses.fields(Capture)}))


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
    read, by digest)."""

    def __init__(self, source: str, manifest: InputDigest):
        super().__init__()
        self._source = source
        self._manifest = manifest

    def expand(self, pbegin):
        # SOURCE's files were checked against its manifest's digests before the selection began.
        records = pbegin | "Records" >> ReadCorpus(self._source, verify_records=False)
        rehydrated = records.records | "Documents" >> beam.ParDo(Rehydrate()).with_outputs(WITH_DUPLICATES,
                                                                                            main=DOCUMENTS)
        duplicates = _side_records(self._source, "duplicates", pbegin) | "BySurvivor" >> beam.Map(
            lambda duplicate: ((duplicate.survivor_source_file, duplicate.survivor_source_offset), duplicate))
        captures = ({"record": rehydrated[WITH_DUPLICATES], "duplicates": duplicates}
                    | "RecordAndDuplicates" >> beam.CoGroupByKey()
                    | "Captures" >> beam.FlatMap(with_duplicates))
        documents = (rehydrated[DOCUMENTS], captures) | "AllDocuments" >> beam.Flatten()
        corrupt = records[DEAD_LETTER] | "Corrupt" >> beam.Map(
            lambda problem: DeadLetter(READ_CORPUS, problem["reason"], "", 0, "", problem["url"]))
        dead = (_side_records(self._source, "dead-letter", pbegin), corrupt) | "DeadLetters" >> beam.Flatten()
        skipped = _side_records(self._source, "skipped", pbegin)
        # Counted where each is made: a Flatten of the documents would hold them in the local runner.
        read = [outcomes | f"CountRead-{name}" >> beam.ParDo(CountRead()) for name, outcomes in (
            ("records", rehydrated[DOCUMENTS]), ("captures", captures), ("skipped", skipped), ("dead", dead))] \
            | "Read" >> beam.Flatten()
        return {
            DOCUMENTS: documents, SKIPPED: skipped, DEAD_LETTER: dead, RECORDS_READ: read,
            INPUT_FILES: pbegin | "Manifest" >> beam.Create([self._manifest]),
            NOTES: pbegin | "NoNotes" >> beam.Create([]),
            UNITS_READ: pbegin | "NoUnits" >> beam.Create([]),
            RECORDED: pbegin | "NoRecords" >> beam.Create([]),
        }


class SelectDocuments(beam.PTransform):
    """`select_document` applied to every document; outputs `documents`, `skipped` (`filtered`, `other-language`),
    `filter_counts` and dead letters, as QualityFilter does."""

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, selection: Selection, reminimize):
        super().__init__()
        self._selection = selection
        self._reminimize = reminimize

    def expand(self, docs):
        apply = functools.partial(select_document, selection=self._selection, thresholds=self._selection.thresholds(),
                                  reminimize=self._reminimize)
        return docs | beam.ParDo(FilterDocuments(SELECT, apply)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)


def annotated_source(source: str, manifest: InputDigest, selection: Selection, recorded: dict) -> DocumentSource:
    """The selection of `selection` from the annotated corpus in `source` (its manifest's digest `manifest`), as a
    `DocumentSource` of the build's graph; `recorded`: what its manifest records of the selection."""
    return DocumentSource(
        "ReadAnnotated", lambda settings, progress_dir, units_dir, found: ReadAnnotated(source, manifest),
        (DocumentStage("Select", lambda settings, found: SelectDocuments(selection, reminimize_of(settings))),
         DocumentStage("Hash", lambda settings, found: HashDocuments()),
         # After the hash: a content's tokens count once.
         DocumentStage("TokenBudget", lambda settings, found: TokenBudget(selection.token_budget, selection.budget_by),
                       lambda settings: selection.token_budget is not None)),
        inspects_pages=False, resumable=False, recorded=recorded)
