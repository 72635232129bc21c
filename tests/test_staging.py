"""Staging needs no fusion: a unit's documents may come in any order, in any number of bundles, with retries."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP

from transforms.stages.compress_write import compress_write_transform as sink_write, staging as sink_staging
from transforms.stages.compress_write.compress_write import ShardAttempt, publish, sync_marker_for
from transforms.stages.compress_write.compress_write_transform import (CompressWrite, StageAndFingerprint, StageDocuments,
                                                                       WriteShard)
from transforms.stages.compress_write.staging import STAGED
from transforms.document import Document
from transforms.stages.hash_dedup import hash_document
from transforms.stages.hash_dedup_transform import HashDedup
from tests.helpers import document

PER_UNIT = 30
UNITS = (("a.warc.gz", 0), ("a.warc.gz", 1000), ("b.warc.gz", 0))


def doc(source_file: str, source_range: int, k: int) -> Document:
    html = f"<div>page {k} of {source_file} from {source_range}</div>"
    url = f"https://example.org/{source_file}/{source_range}/{k}"
    return hash_document(document(
        url=url, warc_record_id=f"<urn:uuid:{url}>", warc_date="2026-01-15T10:00:00Z", source_file=source_file,
        source_offset=source_range + k, source_range=source_range, http_status=200,
        content_type="text/html; charset=utf-8", charset="utf-8", charset_source="http-header", title=url, links=[],
        lang="en", meta={}, html=html, text=html[5:-6], raw_bytes=len(html), cleaned_bytes=len(html),
        minimized_bytes=len(html)))


DOCS = [doc(source_file, source_range, k) for source_file, source_range in UNITS for k in range(PER_UNIT)]


def shard_bytes(output: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(output.glob("corpus-*.avro"))}


def note_staged(staged: tuple, notes_dir: str) -> None:
    """Leaves a note of a staging file: a file of the same name holding its unit."""
    (source_file, source_range), path = staged
    (Path(notes_dir) / Path(path).name).write_text(f"{source_file}@{source_range}")


def build(output: Path, reshuffled: bool, pipeline: beam.Pipeline | None = None,
          staged_notes: Path | None = None) -> dict[str, bytes]:
    """The corpus shards of DOCS built on `pipeline` (Beam's in-process TestPipeline by default); with
    `staged_notes`, a note of each staging file there (`note_staged`)."""
    with pipeline or TestPipeline() as pipeline:
        docs = pipeline | beam.Create(DOCS)
        if reshuffled:
            # Beam's in-process runner keeps the order through a Reshuffle: this shuffle also reorders.
            docs = (docs | beam.Reshuffle() | beam.Map(lambda one: (one.capture.source_offset % 7, one))
                    | beam.GroupByKey()
                    | beam.FlatMap(lambda grouped: reversed(list(grouped[1]))))
        staged = docs | StageAndFingerprint(str(output))
        if staged_notes is not None:
            _ = staged.staged | beam.Map(note_staged, str(staged_notes))
        deduplicated = staged.fingerprints | HashDedup()
        _ = {"staged": staged.staged, "survivors": deduplicated.survivors,
             "duplicates": deduplicated.duplicates} | CompressWrite(str(output))
    return shard_bytes(output)


@pytest.mark.slow
def test_a_shuffle_between_reading_and_staging_gives_the_same_corpus(tmp_path):
    fused = build(tmp_path / "fused", reshuffled=False)
    assert len(fused) == len(UNITS)
    assert build(tmp_path / "reshuffled", reshuffled=True) == fused


def staged_in_bundle(stage: StageDocuments, docs: list[Document]) -> list[tuple]:
    """Runs one bundle of `stage` to its end; its STAGED outputs ((unit, path))."""
    stage.start_bundle()
    outputs = [output for one in docs for output in stage.process(one)]
    outputs += list(stage.finish_bundle())
    return [getattr(output.value, "value", output.value) for output in outputs
            if isinstance(output, beam.pvalue.TaggedOutput) and output.tag == STAGED]


def shard_writer(staging: Path, sync_interval: int = 4 * 1024 * 1024) -> WriteShard:
    writer = WriteShard(str(staging.parent), str(staging), "zstandard", 9, sync_interval, sync_marker_for({}))
    writer.setup()
    return writer


def write_attempt(writer: WriteShard, staged_paths: list[str]) -> ShardAttempt:
    """One attempt of `writer` at the shard of UNITS[0], in a bundle of its own; its main output (what the runner
    commits of it: WriteShard emits a shard's outputs once a thread has finished it, at the latest when the bundle
    ends)."""
    unit = UNITS[0]
    writer.start_bundle()
    outputs = [*writer.process((unit, {STAGED: staged_paths, "survivors": [], "duplicates": []}), GlobalWindow(),
                               MIN_TIMESTAMP, [unit]),
               *writer.finish_bundle()]
    [written] = [output.value for output in outputs if not isinstance(output, beam.pvalue.TaggedOutput)]
    return written


def written_shard(staging: Path, staged_paths: list[str], sync_interval: int = 4 * 1024 * 1024) -> bytes:
    return Path(write_attempt(shard_writer(staging, sync_interval), staged_paths).path).read_bytes()


def test_a_retried_split_bundle_beside_its_zombie_gives_the_same_shard(tmp_path):
    docs = DOCS[:PER_UNIT]
    once = tmp_path / "once"
    once.mkdir()
    expected = written_shard(once, [path for _, path in staged_in_bundle(StageDocuments(str(once)), docs)])

    staging = tmp_path / "retried"
    staging.mkdir()
    # The first attempt fails on the 10th document: the runner keeps none of its outputs and retries the
    # unit, split in two bundles (one overlapping the other), while the first attempt, a zombie, goes on.
    zombie = StageDocuments(str(staging))
    zombie.start_bundle()
    for one in docs[:9]:
        list(zombie.process(one))
    committed = staged_in_bundle(StageDocuments(str(staging)), docs[:20])
    committed += staged_in_bundle(StageDocuments(str(staging)), docs[15:])
    for one in reversed(docs):
        list(zombie.process(one))
    list(zombie.finish_bundle())
    assert {unit for unit, _ in committed} == {UNITS[0]} and len(committed) == 2
    assert written_shard(staging, [path for _, path in committed]) == expected


def test_a_unit_in_more_runs_than_may_be_open_is_merged_in_groups(tmp_path, monkeypatch):
    docs = DOCS[:PER_UNIT]
    once = tmp_path / "once"
    once.mkdir()
    expected = written_shard(once, [path for _, path in staged_in_bundle(StageDocuments(str(once)), docs)])
    monkeypatch.setattr(sink_staging, "MAX_OPEN_RUNS", 4)
    staging = tmp_path / "runs"
    staging.mkdir()
    # In falling offset order, each document is a run of its own.
    committed = staged_in_bundle(StageDocuments(str(staging)), list(reversed(docs)))
    assert len(committed) == PER_UNIT
    assert written_shard(staging, [path for _, path in committed]) == expected


def test_a_zombie_shard_writer_that_fails_beside_its_retry_leaves_one_complete_shard(tmp_path, monkeypatch):
    # Pages of text that does not compress, in a block each: the writers' bytes reach the file while they write.
    def incompressible(one: Document) -> Document:
        text = "".join(hashlib.sha256(f"{one.capture.url} {part}".encode()).hexdigest() for part in range(200))
        return one.replace(html=f"<div>{text}</div>", text=text)

    docs = [incompressible(one) for one in DOCS[:PER_UNIT]]
    block = 1
    once = tmp_path / "once" / "staging"
    once.mkdir(parents=True)
    expected = written_shard(once, [path for _, path in staged_in_bundle(StageDocuments(str(once)), docs)], block)

    output = tmp_path / "out"
    staging = output / "staging"
    staging.mkdir(parents=True)
    staged = [path for _, path in staged_in_bundle(StageDocuments(str(staging)), docs)]
    # The retry pauses at its 20th record while the first attempt, a zombie, writes 3 records and fails.
    real_records = sink_write.staged_records
    zombie_failed = []

    def zombie(index):
        if index == 3:
            raise OSError("the zombie's worker is lost")

    def retry(index):
        if index == 20:
            try:
                write_attempt(shard_writer(staging, block), staged)
            except OSError:
                zombie_failed.append(True)

    attempts = [retry, zombie]

    def interleaved(*args):
        pace = attempts.pop(0)
        for index, record in enumerate(real_records(*args)):
            pace(index)
            yield record

    monkeypatch.setattr(sink_write, "staged_records", interleaved)
    committed = write_attempt(shard_writer(staging, block), staged)
    assert zombie_failed
    # Only the retry's output is committed: the shard is its file, and the zombie's is gone with the staging dir.
    [shard] = publish([committed], str(staging))
    assert sorted(path.name for path in output.iterdir()) == [Path(shard).name]
    assert Path(shard).read_bytes() == expected
