"""Side files: sharded by a count of their lines, each shard sorted, the same bytes with any number of workers."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor

from pipeline.graph import WriteJsonLines, build_corpus, shard_count, write_json_lines
from pipeline.settings import CorpusSettings
from pipeline.publish import names_a_build_may_write
from tests.helpers import html_capture

SIDE_FILE = re.compile(r"^(dead-letter|skipped|duplicates)-(\d{5})-of-(\d{5})\.jsonl$")
LINES_PER_SHARD = 4
PAGES = 12


def captures() -> list:
    pages = [html_capture(f"https://example.org/{k}", f"<p>Page number {k} has words of its own.</p>")
             for k in range(PAGES)]
    copies = [html_capture(f"https://copy.example.org/{k}", f"<p>Page number {k} has words of its own.</p>")
              for k in range(PAGES)]
    not_found = [html_capture(f"https://example.org/missing/{k}", "<p>Not here.</p>", status=404)
                 for k in range(PAGES)]
    return pages + copies + not_found


def build(inputs: Path, output: Path, *beam_args: str) -> dict[str, bytes]:
    settings = CorpusSettings(inputs=(str(inputs),), output=str(output))
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as pipeline:
        build_corpus(pipeline, settings, side_file_lines=LINES_PER_SHARD)
    return {path.name: path.read_bytes() for path in sorted(output.iterdir()) if SIDE_FILE.match(path.name)}


@pytest.mark.slow
def test_side_files_are_sharded_by_their_line_count_and_the_same_with_two_workers(write_warc, tmp_path):
    inputs = write_warc(captures())
    one = build(inputs, tmp_path / "one")
    by_name: dict[str, list[tuple[int, int, bytes]]] = {}
    for file_name, data in one.items():
        name, index, count = SIDE_FILE.match(file_name).groups()
        by_name.setdefault(name, []).append((int(index), int(count), data))
    assert set(by_name) == {"dead-letter", "skipped", "duplicates"}
    # No dead letters: still one (empty) file.
    assert by_name["dead-letter"] == [(0, 1, b"")]
    for name in ("skipped", "duplicates"):
        shards = sorted(by_name[name])
        lines = [line for _, _, data in shards for line in data.decode("utf-8").splitlines()]
        assert len(lines) == PAGES, name
        expected = shard_count(PAGES, LINES_PER_SHARD)
        assert expected > 1 and [(index, count) for index, count, _ in shards] == [(k, expected) for k in range(expected)]
        for _, _, data in shards:
            shard_lines = data.decode("utf-8").splitlines()
            assert shard_lines == sorted(shard_lines)
        assert len(set(lines)) == PAGES
    assert {json.loads(line)["url"] for _, _, data in by_name["duplicates"] for line in data.decode().splitlines()} \
        in ({f"https://copy.example.org/{k}" for k in range(PAGES)}, {f"https://example.org/{k}" for k in range(PAGES)})
    two = build(inputs, tmp_path / "two", "--direct_num_workers=2", "--direct_running_mode=multi_processing")
    assert two == one


def test_a_build_may_write_side_file_shards_of_any_count(tmp_path):
    for name in ("skipped-00002-of-00003.jsonl", "near-duplicates-00000-of-00002.jsonl", "notes.jsonl"):
        (tmp_path / name).write_text("a user's file")
    may_write = names_a_build_may_write(str(tmp_path))
    assert "skipped-00002-of-00003.jsonl" in may_write and "near-duplicates-00000-of-00002.jsonl" in may_write
    assert "notes.jsonl" not in may_write


def test_a_shard_is_written_without_its_text_as_one_string(tmp_path):
    # A shard's lines are held to be sorted; the file's text and its bytes must not be held beside them.
    lines = [json.dumps({"url": f"https://example.org/{k:06d}", "detail": "x" * 400}) for k in range(20_000)]
    held = sum(len(line) for line in lines)
    tracemalloc.start()
    try:
        written = write_json_lines((("skipped", 0, 1), lines + [None]), str(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Path(written.path).read_text("utf-8").splitlines() == sorted(lines)
    assert peak < 0.2 * held, (peak, held)


def test_the_docs_say_how_many_lines_a_side_file_shard_holds():
    from pipeline.graph import LINES_PER_SHARD as lines_per_shard

    output = (Path(__file__).resolve().parent.parent / "docs" / "output.md").read_text(encoding="utf-8")
    stated = re.search(r"Each side file is written in shards, in parallel: one shard per ([\d,]+) lines", output)
    assert stated, "docs/output.md no longer says how many lines a side-file shard holds"
    assert int(stated.group(1).replace(",", "")) == lines_per_shard


class Leaves(PipelineVisitor):
    """Each PCollection's producing (leaf) transform, by label."""

    def __init__(self):
        self.producer_of = {}
        self.by_label = {}

    def visit_transform(self, applied):
        self.by_label[applied.full_label] = applied
        for output in applied.outputs.values():
            self.producer_of[output] = applied.full_label


def test_the_lines_are_counted_before_any_flatten(tmp_path):
    # The local runner writes a copy of every element of a Flatten: the lines' counts meet every name's after
    # they are summed, not as one (name, 1) per line.
    pipeline = beam.Pipeline()
    _ = {"skipped": pipeline | beam.Create(["a", "b"])} | "SideFiles" >> WriteJsonLines(str(tmp_path))
    leaves = Leaves()
    pipeline.visit(leaves)
    counted = leaves.by_label["SideFiles/CountsAndNames"]
    assert not [leaves.producer_of[collection] for collection in counted.main_inputs.values()
                if leaves.producer_of[collection].endswith("/OnePerLine")]
