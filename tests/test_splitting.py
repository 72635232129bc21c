"""One big file, many workers: reading byte ranges reads every record exactly once."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import cli
from pipeline import settings as options
from pipeline.sample import sample_captures, warc_bytes
from tests.helpers import about
from transforms.corpus.read_corpus import iter_corpus
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.ranges import WarcRange, split_warc

SAMPLE = warc_bytes(sample_captures())


def identity(outcome) -> tuple:
    return type(outcome).__name__, about(outcome).source_offset, about(outcome).warc_record_id


def read_ranges(data: bytes, cuts: list[int]) -> list:
    bounds = [0] + sorted(set(cuts)) + [None]
    outcomes = []
    for start, end in zip(bounds, bounds[1:]):
        outcomes.extend(read_warc(lambda: io.BytesIO(data), "big.warc.gz", start, end))
    return outcomes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, len(SAMPLE) - 1), max_size=12))
@pytest.mark.slow
def test_any_split_points_read_every_record_exactly_once(cuts):
    whole = [identity(outcome) for outcome in read_warc(lambda: io.BytesIO(SAMPLE), "big.warc.gz")]
    assert [identity(outcome) for outcome in read_ranges(SAMPLE, cuts)] == whole


def test_every_byte_as_a_split_point_reads_every_record_exactly_once():
    whole = [identity(outcome) for outcome in read_warc(lambda: io.BytesIO(SAMPLE), "big.warc.gz")]
    for cut in range(1, len(SAMPLE), 97):
        assert [identity(outcome) for outcome in read_ranges(SAMPLE, [cut])] == whole, cut


def test_only_files_gzipped_per_record_are_split():
    assert len(split_warc("a", 1000, 300, "record")) == 4
    assert split_warc("a", 1000, 300, "file") == split_warc("a", 1000, 300, "none") == [WarcRange("a", file_size=1000)]
    # One range, that a runner may still split while it is read.
    assert split_warc("a", 1000, 1000, "record") == [WarcRange("a", file_size=1000, splittable=True)]
    ranges = split_warc("a", 1000, 300, "record")
    assert [(unit.start, unit.end) for unit in ranges] == [(0, 300), (300, 600), (600, 900), (900, None)]


def test_dev_corpus_file_split_into_many_ranges(corpus_dir):
    data = (corpus_dir / "warc" / "dev-02-readability.warc.gz").read_bytes()
    whole = [identity(outcome) for outcome in read_warc(lambda: io.BytesIO(data), "f")]
    cuts = list(range(100_000, len(data), 250_000))
    assert [identity(outcome) for outcome in read_ranges(data, cuts)] == whole


@pytest.mark.slow
def test_a_split_build_keeps_the_same_documents(monkeypatch, tmp_path):
    monkeypatch.setattr(options, "MIN_RANGE_BYTES", 64)  # ranges of a small file
    source = tmp_path / "in" / "big.warc.gz"  # an output is never in an input's directory
    source.parent.mkdir()
    source.write_bytes(SAMPLE)
    whole, split = tmp_path / "whole", tmp_path / "split"
    assert cli.main(["--input", str(source), "--output", str(whole)]) == 0
    assert cli.main(["--input", str(source), "--output", str(split), "--range-size", "3000"]) == 0
    records = sorted(json.dumps(record, sort_keys=True) for record in iter_corpus(str(whole)))
    assert sorted(json.dumps(record, sort_keys=True) for record in iter_corpus(str(split))) == records
    assert len(list(split.glob("corpus-*.avro"))) > 1
    report = json.loads((split / "report.json").read_text())
    assert report["records"]["balanced"] and report["records"]["read"] == json.loads(
        (whole / "report.json").read_text())["records"]["read"]
