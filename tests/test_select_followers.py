"""A selection's memory does not grow with its source: its documents go from the source's records to staging with no
shuffle or Flatten between (which the local runner would hold whole), and the captures that follow a record (its
duplicates in the source) get the record's outcome from a shuffle of small values only (`FollowRecords`)."""

from __future__ import annotations

from collections import Counter

import apache_beam as beam
from apache_beam.pipeline import PipelineVisitor
from apache_beam.testing.util import assert_that, equal_to

from pipeline.graph import FOLLOWERS, build_corpus
from pipeline.select_documents import Selection, select_record
from pipeline.select_graph import FollowRecords, annotated_source
from pipeline.settings import CorpusSettings
from tests import helpers
from tests.test_select import REMINIMIZE, minimized
from transforms.document import DeadLetter, Skip
from transforms.stages.read_warc.snapshot import InputDigest
from transforms.state.unit_ledger import FINGERPRINTS
from transforms.vocabulary import DEAD_LETTER, SKIPPED, Duplicate, Fingerprint


def follower(url: str, offset: int, survivor_offset: int) -> Duplicate:
    return Duplicate("2026-02-01T00:00:00Z", url, f"<urn:uuid:{url}>", "b.warc.gz", offset, 0, "h", "survivor",
                     "<urn:uuid:s>", "a.warc.gz", survivor_offset)


def test_a_follower_gets_its_records_outcome_of_its_own_capture():
    kept = Fingerprint(helpers.document(source_file="a.warc.gz", source_offset=10).capture, "hash", "check")
    skip = Skip("filtered", "a.warc.gz", 20, "response", "<urn:uuid:2>", "https://example.org/2", "c4: rule")
    dead = DeadLetter("select", "boom", "a.warc.gz", 30, "<urn:uuid:3>", "https://example.org/3")
    followers = [follower("https://f/1", 1, 10), follower("https://f/2", 2, 10), follower("https://f/3", 3, 20),
                 follower("https://f/4", 4, 30)]
    with beam.Pipeline() as pipeline:
        followed = {FOLLOWERS: pipeline | "Followers" >> beam.Create(followers),
                    FINGERPRINTS: (pipeline | "Fingerprints" >> beam.Create([kept]),),
                    SKIPPED: (pipeline | "Skips" >> beam.Create([skip]),),
                    DEAD_LETTER: (pipeline | "Dead" >> beam.Create([dead]),)} | FollowRecords()
        assert_that(followed[FINGERPRINTS] | beam.Map(lambda fingerprint: (
            fingerprint.capture.url, fingerprint.capture.source_file, fingerprint.capture.source_offset,
            fingerprint.content_hash, fingerprint.content_check)),
            equal_to([("https://f/1", "b.warc.gz", 1, "hash", "check"), ("https://f/2", "b.warc.gz", 2, "hash", "check")]),
            label="FollowersKept")
        assert_that(followed[SKIPPED], equal_to([Skip("filtered", "b.warc.gz", 3, "response", "<urn:uuid:https://f/3>",
                                                      "https://f/3", "c4: rule")]), label="FollowersSkipped")
        assert_that(followed[DEAD_LETTER], equal_to([DeadLetter("select", "boom", "b.warc.gz", 4,
                                                                "<urn:uuid:https://f/4>", "https://f/4")]),
                    label="FollowersDead")


def test_a_records_counts_are_also_its_followers():
    doc = minimized("A page.").replace(signals={"fineweb/line_punct_ratio": 0.9}, duplicate_count=2)
    selection = Selection(max_signals=(("fineweb/line_punct_ratio", 0.5),))
    skip, counts = select_record(doc, selection, selection.thresholds(), REMINIMIZE)
    alone, once = select_record(doc.replace(duplicate_count=0), selection, selection.thresholds(), REMINIMIZE)
    assert isinstance(skip, Skip) and skip == alone
    assert counts == Counter({name: 3 * amount for name, amount in once.items()}) and counts


class Producers(PipelineVisitor):
    """Each PCollection's producing transform."""

    def __init__(self):
        self.of = {}
        self.applied = []

    def visit_transform(self, applied):
        self.applied.append(applied)
        for output in applied.outputs.values():
            self.of[output] = applied


def selection_graph(tmp_path) -> Producers:
    """The producers of a selection's graph (`--quality fineweb-recipe`), of files of which only the names are
    looked at."""
    (tmp_path / "source").mkdir()
    for name in ("corpus-00000-of-00001.avro", *(f"{side}-00000-of-00001.jsonl"
                                                 for side in ("duplicates", "skipped", "dead-letter"))):
        (tmp_path / "source" / name).write_bytes(b"")
    settings = CorpusSettings(inputs=(), output=str(tmp_path / "out"), quality=("fineweb-recipe",))
    source = annotated_source(str(tmp_path / "source"), InputDigest("manifest.json", 0, ""),
                              Selection(quality=("fineweb-recipe",)), {})
    pipeline = beam.Pipeline()
    build_corpus(pipeline, settings, source=source)
    producers = Producers()
    pipeline.visit(producers)
    return producers


def test_a_selections_documents_reach_staging_without_a_shuffle_or_flatten(tmp_path):
    producers = selection_graph(tmp_path)
    staging = next(applied for applied in producers.applied if applied.full_label.startswith("Stage/"))
    path, collection = [], staging.main_inputs[next(iter(staging.main_inputs))]
    while not producers.of[collection].full_label.startswith("ReadAnnotated/Records/"):
        applied = producers.of[collection]
        path.append(applied.full_label)
        assert not isinstance(applied.transform, (beam.Flatten, beam.GroupByKey)), path
        collection = applied.main_inputs[next(iter(applied.main_inputs))]
    assert any(label.startswith("Select/") for label in path), path


def test_a_records_outcomes_reach_the_follow_shuffle_through_no_flatten(tmp_path):
    # The local runner writes a copy of every element of a Flatten: the outcomes of every record (not only of those
    # with followers) go from the stage that made them to the shuffle keyed, and no more.
    producers = selection_graph(tmp_path)
    shuffle = "Follow/OutcomesAndFollowers/"
    into_shuffle = [collection for applied in producers.applied if applied.full_label.startswith(shuffle)
                    for collection in applied.main_inputs.values()
                    if not producers.of[collection].full_label.startswith(shuffle)]
    made_by = []
    for collection in into_shuffle:
        applied = producers.of[collection]
        while applied.full_label.startswith("Follow/"):
            assert not isinstance(applied.transform, beam.Flatten), applied.full_label
            applied = producers.of[applied.main_inputs[next(iter(applied.main_inputs))]]
        assert not isinstance(applied.transform, beam.Flatten), applied.full_label
        made_by.append(applied.full_label.split("/")[0])
    assert {"Select", "Stage", "ReadAnnotated"} <= set(made_by), made_by
