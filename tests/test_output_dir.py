"""Where a build may write: next to its inputs, never where its inputs' patterns would read its own files; and a
failed build leaves the output directory exactly as it was."""

from __future__ import annotations

import os
import shutil

import apache_beam as beam
import pytest

from pipeline import cli
from pipeline.sample import sample_captures, warc_bytes
from tests.test_cli import run_main


@pytest.fixture
def crawl(tmp_path):
    """A folder holding WARC files, as a crawl leaves them."""
    folder = tmp_path / "crawl"
    folder.mkdir()
    for name in ("a.warc.gz", "b.warc.gz"):
        (folder / name).write_bytes(warc_bytes(sample_captures()[:3], filename=name))
    return folder


def test_a_build_runs_in_the_folder_of_its_warc_files(crawl, monkeypatch):
    monkeypatch.chdir(crawl)
    code, _, stderr = run_main(["--input", "*.warc.gz", "--quiet"])
    assert code == 0, stderr
    assert list((crawl / "webcorpus-out").glob("corpus-*.avro"))


def test_a_build_writes_beside_its_input_file(crawl):
    code, _, stderr = run_main(["--input", str(crawl / "a.warc.gz"), "--output", str(crawl / "corpus"), "--quiet"])
    assert code == 0, stderr
    assert (crawl / "corpus" / "manifest.json").is_file()


@pytest.mark.parametrize("pattern, output, culprit", [
    ("*", ".", "report.json"),
    ("*/*", "out", "out/report.json"),
    ("**", "deep/out", "deep/out"),
    ("out/.webcorpus-staging-*/*", "out", ".webcorpus-staging-"),
    ("*.json", ".", "report.json"),
])
def test_an_input_pattern_that_would_match_the_corpus_files_is_refused(crawl, monkeypatch, pattern, output, culprit):
    monkeypatch.chdir(crawl)
    before = sorted(path.relative_to(crawl) for path in crawl.rglob("*"))
    code, _, stderr = run_main(["--input", pattern, "--output", output, "--quiet"])
    assert code == 2, stderr
    assert len(stderr.splitlines()) == 1 and f"--input {crawl / pattern}" in stderr and culprit in stderr, stderr
    assert sorted(path.relative_to(crawl) for path in crawl.rglob("*")) == before


def test_an_output_directory_that_is_an_input_file_is_refused(crawl):
    code, _, stderr = run_main(["--input", str(crawl / "*.warc.gz"), "--output", str(crawl / "a.warc.gz")])
    assert code == 2
    assert len(stderr.splitlines()) == 1 and "is the input file" in stderr, stderr


REASON = "the input cannot be read from offset 123456789 to its end, " + "because the server said so " * 12 + "END"


def failing_graph(pipeline, settings, *args, **kwargs):
    def fail(_):
        raise RuntimeError(REASON)

    return pipeline | beam.Create([1]) | beam.Map(fail)


def test_a_failed_build_leaves_no_directory_it_made_and_says_its_whole_reason(crawl, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "build_corpus", failing_graph)
    output = tmp_path / "new" / "corpus"
    code, _, stderr = run_main(["--input", str(crawl / "a.warc.gz"), "--output", str(output), "--quiet"])
    assert code == 1
    assert len(stderr.splitlines()) == 1 and REASON in stderr, stderr
    assert not (tmp_path / "new").exists()


def test_a_failed_build_leaves_a_directory_that_was_there(crawl, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "build_corpus", failing_graph)
    output = tmp_path / "there"
    output.mkdir()
    code, _, _ = run_main(["--input", str(crawl / "a.warc.gz"), "--output", str(output), "--quiet"])
    assert code == 1
    assert output.is_dir() and os.listdir(output) == []


def test_an_input_that_is_a_file_the_build_writes_is_refused(crawl, tmp_path):
    (crawl / "corpus").mkdir()
    shutil.copy(crawl / "a.warc.gz", crawl / "corpus" / "report.json")
    code, _, stderr = run_main(["--input", str(crawl / "corpus" / "report.json"), "--output", str(crawl / "corpus")])
    assert code == 2
    assert len(stderr.splitlines()) == 1 and "would match" in stderr and "report.json" in stderr, stderr


@pytest.mark.slow
def test_the_check_of_a_crawls_many_paths_takes_no_time(tmp_path, monkeypatch):
    """A path that is no pattern matches itself alone: it is compared, never made into regular expressions (of
    every file a build writes, for each of a crawl's 100,000 paths); a pattern is."""
    translated = []
    as_matched = cli._as_matched
    monkeypatch.setattr(cli, "_as_matched", lambda pattern: translated.append(pattern) or as_matched(pattern))
    paths = tuple(f"https://data.commoncrawl.org/crawl-data/CC/segments/{k}/warc/{k}.warc.gz" for k in range(100_000))
    cli.check_inputs_apart_from_output(paths, str(tmp_path / "out"))
    assert translated == []
    pattern = "https://data.commoncrawl.org/crawl-data/CC/segments/*/warc/*.warc.gz"
    cli.check_inputs_apart_from_output((*paths[:10], pattern), str(tmp_path / "out"))
    assert translated == [pattern]
