"""HashDedup, the stage: each document hashed (`HashDocuments`), and one capture of each content kept, in Beam
(`HashDedup`: a combine by hash, then duplicates met with their survivor per bucket); its pure part is `hash_dedup`."""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam

from transforms.state.corpus_index import content_entry
from transforms.document import Document
from transforms.stage import counter
from transforms.vocabulary import DOCUMENTS, HASH_DEDUP, NO_TEXT, SKIPPED, is_earlier
from transforms.stages.hash_dedup import (CAPTURE, SURVIVOR, Captures, add_capture, capture_by_bucket, duplicates_among,
                                          has_text, hash_document, in_check_order, merge_contents, no_text_skip, notes_of)

SURVIVORS = "survivors"
BY_BUCKET = "by-bucket"
CONTENTS = "contents"


class HashOrSkip(beam.DoFn):
    def setup(self):
        self._no_text = counter(HASH_DEDUP, NO_TEXT)

    def process(self, doc: Document):
        if has_text(doc):
            yield hash_document(doc)
        else:
            self._no_text.inc()
            yield beam.pvalue.TaggedOutput(SKIPPED, no_text_skip(doc))


class HashDocuments(beam.PTransform):
    """Gives documents their `content_hash`; outputs `documents` and `skipped` (`no-text` skips)."""

    OUTPUTS = (SKIPPED,)

    def expand(self, docs):
        return docs | beam.ParDo(HashOrSkip()).with_outputs(*self.OUTPUTS, main=DOCUMENTS)


class CapturesOfHash(beam.CombineFn):
    """A hash's fingerprints combined into its contents' `Captures` (by content check): bounded whatever their
    number."""

    def create_accumulator(self) -> dict[str, Captures]:
        return {}

    def add_input(self, contents, fingerprint):
        return add_capture(contents, fingerprint)

    def merge_accumulators(self, accumulators):
        return merge_contents(accumulators)

    def extract_output(self, contents):
        return in_check_order(contents)


class SurvivorsOfHash(beam.DoFn):
    """Per hash, its contents' `Captures`: the notes of survivors that stand for others (main), each such
    survivor keyed by (hash, bucket) for each bucket its content's captures are in (tagged `BY_BUCKET`), and the
    survivor of each content this build keeps, by identity, with its index entry's content part (`CONTENTS`).

    A content an earlier corpus holds survives there (`is_earlier`): it gets no note and no index entry."""

    def process(self, hash_and_contents):
        content_hash, contents = hash_and_contents
        for captures in contents:
            survivor = captures.first[0]
            if not is_earlier(survivor):
                yield beam.pvalue.TaggedOutput(
                    CONTENTS, (survivor.identity, content_entry(survivor.content_hash, survivor.content_check)))
        for note, captures in notes_of(contents):
            if not is_earlier(captures.first[0]):
                yield note
            for bucket in sorted(captures.buckets):
                yield beam.pvalue.TaggedOutput(BY_BUCKET, ((content_hash, bucket), (SURVIVOR, captures.first[0])))


class DuplicatesOfBucket(beam.DoFn):
    """Per (hash, bucket), its captures and the survivors sent to it: the duplicates among the captures."""

    def __init__(self, earlier_corpora: tuple[str, ...] = ()):
        self._earlier_corpora = earlier_corpora

    def setup(self):
        self._duplicates = counter(HASH_DEDUP, "duplicates")

    def process(self, key_and_values):
        # A bucket's share of a content's captures: small enough to hold, and read twice.
        values = list(key_and_values[1])
        survivors = {fingerprint.content_check: fingerprint for role, fingerprint in values if role == SURVIVOR}
        if not survivors:
            return
        for duplicate in duplicates_among((fingerprint for role, fingerprint in values if role == CAPTURE),
                                          survivors, self._earlier_corpora):
            self._duplicates.inc()
            yield duplicate


class Deduplicated(NamedTuple):
    survivors: beam.PCollection
    duplicates: beam.PCollection
    # (survivor identity, `content_entry`) of every content kept: what the corpus's index lists.
    contents: beam.PCollection


class HashDedup(beam.PTransform):
    """Fingerprints in; outputs `survivors` (notes of those that have duplicates), `duplicates` and `contents`.

    With `earlier_corpora` (`--extend`), the fingerprints (`earlier_fingerprint`) of their contents whose hash
    this build has (`EarlierMatches`) are given as `earlier`, and join the combine by hash beside the new
    captures: sharded by hash like them, never held whole by a worker. They survive before any capture, so a capture of their content is
    an `EarlierDuplicate` naming its corpus."""

    def __init__(self, earlier_corpora: tuple[str, ...] = ()):
        super().__init__()
        self._earlier_corpora = earlier_corpora

    def expand(self, inputs):
        fingerprints, earlier = (inputs["fingerprints"], inputs.get("earlier")) if isinstance(inputs, dict) \
            else (inputs, None)
        by_content = fingerprints if earlier is None else (fingerprints, earlier) | "WithEarlier" >> beam.Flatten()
        survivors = (
            by_content
            | "KeyByHash" >> beam.Map(lambda fingerprint: (fingerprint.content_hash, fingerprint))
            | "CapturesByHash" >> beam.CombinePerKey(CapturesOfHash())
            | "Survivors" >> beam.ParDo(SurvivorsOfHash()).with_outputs(BY_BUCKET, CONTENTS, main=SURVIVORS)
        )
        duplicates = (
            (fingerprints | "KeyByBucket" >> beam.Map(capture_by_bucket), survivors[BY_BUCKET])
            | "CapturesAndSurvivors" >> beam.Flatten()
            | "ByBucket" >> beam.GroupByKey()
            | "Duplicates" >> beam.ParDo(DuplicatesOfBucket(self._earlier_corpora))
        )
        return Deduplicated(survivors[SURVIVORS], duplicates, survivors[CONTENTS])
