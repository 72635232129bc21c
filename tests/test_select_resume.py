"""A selection's units are its source's shards, in the byte ranges of the build that wrote them: a WARC file over
`--range-size` gives the selection the filtering build's shards, one a range; a selection killed part-way resumes
as a build does (`pipeline.select_units`), and one whose source changed starts afresh and says why."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import random
import shutil
import sys
from pathlib import Path

import pytest

from pipeline.sample import Capture, warc_bytes
from pipeline.select_units import SourceShard, source_shards
from tests.test_cli import run_main
from tests.test_publish import snapshot
from tests.test_resume import killed_after, records_in
from tests.test_select import run_select
from transforms.stages.read_warc.ranges import range_start, split_warc

RANGE_SIZE = 1 << 20
WORDS = ("the", "and", "of", "to", "river", "crane", "garden", "winter", "market", "harbour", "lantern", "orchard")
SELECT = [sys.executable, "-m", "pipeline.select"]


def page(index: int, rng: random.Random) -> bytes:
    """A page of a few sentences of its own, and 53 KB of noise a comment holds (the file's bytes, not its text)."""
    noise = base64.b64encode(rng.randbytes(40_000)).decode("ascii")
    sentences = " ".join(f"{' '.join(rng.choice(WORDS) for _ in range(12))} page {index} line {line}."
                         for line in range(8))
    return f"<html><body><!-- {noise} --><p>{sentences}</p></body></html>".encode()


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    """A file of about 2.3 MB, gzipped per record (three 1 MiB ranges), whose pages are copied in its later ranges
    and in a second file, and a thin page (filtered) copied too."""
    rng = random.Random(45)
    pages = [Capture(f"https://example.org/{index}", page(index, rng)) for index in range(56)]
    thin = Capture("https://example.org/thin", b"<p>Too short.</p>")
    copies = [dataclasses.replace(pages[index], url=f"https://example.org/copy-{index}", date="2026-01-16T10:00:00Z")
              for index in (0, 1, 30)] + [dataclasses.replace(thin, url="https://example.org/thin-copy",
                                                               date="2026-01-16T10:00:00Z")]
    directory = tmp_path_factory.mktemp("select-crawl")
    big = warc_bytes([*pages[:40], thin, *copies[:2], *pages[40:]], filename="big.warc.gz")
    assert len(big) > 2 * RANGE_SIZE
    (directory / "big.warc.gz").write_bytes(big)
    (directory / "small.warc.gz").write_bytes(warc_bytes(copies[2:], filename="small.warc.gz"))
    return directory


def build(crawl: Path, output: Path, *options: str, quality: str = "gopher") -> Path:
    code, _, stderr = run_main(["--input", str(crawl / "*.warc.gz"), "--output", str(output), "--quiet",
                                "--range-size", str(RANGE_SIZE), "--quality", quality, *options])
    assert code == 0, stderr
    return output


@pytest.fixture(scope="module")
def annotated(crawl, tmp_path_factory) -> Path:
    return build(crawl, tmp_path_factory.mktemp("annotated") / "corpus", "--annotate")


@pytest.fixture(scope="module")
def selected(annotated, tmp_path_factory) -> Path:
    """The selection never interrupted."""
    output = tmp_path_factory.mktemp("selected") / "corpus"
    code, _, stderr = run_select(selection(annotated, output))
    assert code == 0, stderr
    return output


def corpus_files(directory: Path) -> dict[str, str]:
    """The SHA-256 of each file of a corpus but its report and manifest (which name how it was made), by name."""
    return {name: digest for name, digest in snapshot(directory).items()
            if name not in ("report.json", "report.html", "manifest.json")}


def said(stderr: str) -> list[str]:
    """The lines the command said (after its name: `python -m pipeline` where it runs in this process)."""
    return [line.split(": ", 1)[1] for line in stderr.splitlines() if line.startswith("python -m pipeline")]


def selection(source: Path, output: Path, *flags: str) -> list[str]:
    return [str(source), "--output", str(output), "--quality", "gopher", *flags]


def test_a_records_range_is_the_one_split_warc_reads_it_in():
    for size in (1, RANGE_SIZE, RANGE_SIZE + 1, 5 * RANGE_SIZE + 7, 4096 * RANGE_SIZE * 3):
        for part in split_warc("f", size, RANGE_SIZE, "record"):
            end = part.end if part.end is not None else size
            for offset in {part.start, (part.start + end) // 2, end - 1}:
                assert range_start(offset, size, RANGE_SIZE) == part.start, (size, offset)


def test_a_selections_units_are_the_sources_shards_but_those_listed_empty():
    outputs = [{"path": "corpus-00000-of-00002.avro", "size": 9, "sha256": "a", "records": 2},
               {"path": "corpus-00001-of-00002.avro", "size": 5, "sha256": "b", "records": 0},
               {"path": "skipped-00000-of-00001.jsonl", "size": 7, "sha256": "c"}]
    assert source_shards("/src", {"outputs": outputs}) == (SourceShard("/src/corpus-00000-of-00002.avro", 9, "a"),)


def test_a_units_record_is_reused_only_from_the_shard_it_was_read_from():
    shard = SourceShard("corpus-00000-of-00001.avro", 10, "ab")
    assert shard.input_problem({"read": [10, "ab"]}) is None
    assert shard.input_problem({"read": [10, "cd"]}) == "its source shard is not the one it was read from"


@pytest.mark.slow
def test_a_file_over_the_range_size_gives_the_filtering_builds_shards(crawl, selected, tmp_path):
    built = build(crawl, tmp_path / "built")
    compared = corpus_files(built)
    # One shard a range of the big file (three), and the small file's.
    assert len([name for name in compared if name.startswith("corpus-")]) == 4
    assert corpus_files(selected) == compared


@pytest.mark.slow
def test_a_killed_selection_resumes_and_gives_the_bytes_of_one_never_interrupted(annotated, selected, tmp_path):
    output = tmp_path / "out"
    killed_after(selection(annotated, output), output, 2, SELECT)
    recorded = records_in(output)
    assert 2 <= recorded < 4
    code, _, stderr = run_select(selection(annotated, output))
    assert code == 0, stderr
    assert (f"resuming the build that an earlier run left unfinished: {recorded} units (shards of the "
            "source) it finished are reused, not read again") in said(stderr)
    # The report too: the reused units' records, their outcomes and their followers' counted as in one run.
    assert snapshot(output) == snapshot(selected)
    assert json.loads((output / "report.json").read_text())["records"]["balanced"]
    assert not list(output.glob(".webcorpus*"))


@pytest.mark.slow
def test_a_changed_source_or_no_resume_starts_afresh_and_says_why(annotated, selected, crawl, tmp_path):
    source, output = Path(shutil.copytree(annotated, tmp_path / "source")), tmp_path / "out"
    killed_after(selection(source, output), output, 1, SELECT)
    code, _, stderr = run_select(selection(source, output, "--no-resume"))
    assert code == 0, stderr
    assert f"starting afresh (--no-resume): the unfinished work that an earlier run left in {output} is removed" \
        in said(stderr)
    # (The manifest and report name the source, here a copy.)
    assert corpus_files(output) == corpus_files(selected)

    killed_after(selection(source, output), output, 1, SELECT)
    # The source annotated again, measuring FineWeb's rules too: its manifest (and its digest) changed.
    shutil.rmtree(source)
    build(crawl, source, "--annotate", quality="gopher,fineweb")
    code, _, stderr = run_select(selection(source, output))
    assert code == 0, stderr
    assert (f"starting afresh: the unfinished build that an earlier run left in {output} "
            f"cannot be resumed, its inputs differ ({source / 'manifest.json'}: added, removed, or another size or "
            "modification time); its work is removed") in said(stderr)
    fresh = tmp_path / "fresh"
    assert run_select(selection(source, fresh))[0] == 0
    assert snapshot(output) == snapshot(fresh)
    assert os.listdir(output) == os.listdir(fresh)
