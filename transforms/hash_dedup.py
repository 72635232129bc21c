"""HashDedup: one document per distinct content.

Every document gets `content_hash`, the SHA-256 (hex) of its minimized
`html` in UTF-8: 256 bits, so an accidental collision among billions of pages
is not a practical concern; even so, documents are only merged when their
content is equal, so a collision could never drop one.

Documents with the same hash are combined (a CombinePerKey, so that at most
one survivor per hash is held, never the whole group). The survivor is the
capture with the earliest `warc_date`, then the smallest `url`, then the
smallest `warc_record_id`: the same whatever the order in which records
arrive or the number of workers. It carries `duplicate_count` and the URLs
and record ids of the duplicates (sorted by the same rule); the `duplicates`
output maps every dropped record to its survivor.
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


def hash_document(doc: Document) -> Document:
    return doc.replace(content_hash=content_hash(doc.html))


def survivor_order(doc: Document) -> tuple[str, str, str]:
    return (doc.warc_date, doc.url, doc.warc_record_id)


@dataclass(frozen=True)
class Duplicate:
    """A dropped capture and the survivor that stands for it."""

    url: str
    warc_record_id: str
    warc_date: str
    source_file: str
    source_offset: int
    content_hash: str
    survivor_url: str
    survivor_record_id: str


# An accumulator is a list of groups, one per distinct content under the hash
# (in practice one): [survivor, [(order, doc without content) ...]].
def _add(groups: list, doc: Document, dropped: list) -> list:
    for group in groups:
        survivor = group[0]
        if survivor.html == doc.html:
            if survivor_order(doc) < survivor_order(survivor):
                group[0], doc = doc, survivor
            group[1].append(_without_content(doc))
            group[1].extend(dropped)
            return groups
    groups.append([doc, list(dropped)])
    return groups


def _without_content(doc: Document) -> Document:
    return doc.replace(html="", text="", links=[], meta={}, title="", duplicate_urls=[], duplicate_record_ids=[])


class KeepOneSurvivor(beam.CombineFn):
    def create_accumulator(self):
        return []

    def add_input(self, groups, doc):
        return _add(groups, doc, [])

    def merge_accumulators(self, accumulators):
        merged = []
        for groups in accumulators:
            for survivor, dropped in groups:
                merged = _add(merged, survivor, dropped)
        return merged

    def extract_output(self, groups):
        return [(survivor, sorted(dropped, key=survivor_order)) for survivor, dropped in groups]


def resolve_group(survivor: Document, dropped: list[Document]) -> tuple[Document, list[Duplicate]]:
    """The survivor as written, and one `Duplicate` per dropped capture."""
    kept = survivor.replace(
        duplicate_count=len(dropped),
        duplicate_urls=[doc.url for doc in dropped],
        duplicate_record_ids=[doc.warc_record_id for doc in dropped],
    )
    duplicates = [
        Duplicate(doc.url, doc.warc_record_id, doc.warc_date, doc.source_file, doc.source_offset,
                  survivor.content_hash, survivor.url, survivor.warc_record_id)
        for doc in dropped
    ]
    return kept, duplicates


class EmitSurvivors(beam.DoFn):
    def setup(self):
        self._survivors = counter("hash_dedup", "survivors")
        self._duplicates = counter("hash_dedup", "duplicates")

    def process(self, keyed_groups):
        _, groups = keyed_groups
        for survivor, dropped in groups:
            kept, duplicates = resolve_group(survivor, dropped)
            self._survivors.inc()
            self._duplicates.inc(len(duplicates))
            yield kept
            for duplicate in duplicates:
                yield beam.pvalue.TaggedOutput(DUPLICATES, duplicate)


class HashDedup(beam.PTransform):
    """Hashes documents and keeps one per content; outputs `survivors` and `duplicates`."""

    def expand(self, docs):
        return (
            docs
            | "Hash" >> beam.Map(hash_document)
            | "KeyByHash" >> beam.Map(lambda doc: (doc.content_hash, doc))
            | "KeepOneSurvivor" >> beam.CombinePerKey(KeepOneSurvivor())
            | "Emit" >> beam.ParDo(EmitSurvivors()).with_outputs(DUPLICATES, main=SURVIVORS)
        )
