"""Reproducible builds, the manifest, `pipeline.verify`, `--rebuild` and the corpus reader."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline import cli, verify
from transforms.report import manifest
from pipeline.sample import Capture, sample_captures, warc_bytes
from transforms.stages.hash_dedup import content_hash
from transforms.report.manifest import MANIFEST_NAME, seal
from transforms.corpus.read_corpus import CorruptCorpus, ReadCorpus, iter_corpus

TWO_WORKERS = ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]


def build(inputs: list[str], output: Path, *flags: str) -> Path:
    argv = [arg for pattern in inputs for arg in ("--input", pattern)] + ["--output", str(output), *flags]
    assert cli.main(argv) == 0
    return output


def file_bytes(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


def write_sample_inputs(directory: Path) -> list[str]:
    """Two WARC files in `directory`: the sample, and a second one holding a duplicate of a sample page; their glob."""
    first = directory / "a.warc.gz"
    second = directory / "b.warc.gz"
    directory.mkdir(exist_ok=True)
    first.write_bytes(warc_bytes(sample_captures(), filename=first.name))
    copy = sample_captures()[1]
    second.write_bytes(warc_bytes([
        Capture("https://copy.example.org/most", copy.body, content_type="text/html", date="2026-01-14T00:00:00Z"),
        Capture("https://other.example.org/", b"<html><body><p>Another page entirely</p></body></html>"),
    ], filename=second.name))
    return [str(directory / "*.warc.gz")]


@pytest.fixture
def sample_inputs(tmp_path) -> list[str]:
    return write_sample_inputs(tmp_path / "in")


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory) -> Path:
    """One build of sample inputs of the module's (in/ beside it) with the default options, for the tests that only
    read it (a test that damages a build damages a copy)."""
    directory = tmp_path_factory.mktemp("sample-build")
    return build(write_sample_inputs(directory / "in"), directory / "out")


@pytest.mark.parametrize("file_format", ["avro", "parquet", "jsonl"])
def test_every_output_is_digested_as_it_is_written_and_not_read_back(sample_inputs, tmp_path, monkeypatch,
                                                                     file_format):
    opened = []
    open_regular = manifest.open_regular
    monkeypatch.setattr(manifest, "open_regular", lambda path: opened.append(path) or open_regular(path))
    output = build(sample_inputs, tmp_path / "out", "--format", file_format)
    outputs = json.loads((output / MANIFEST_NAME).read_text())["outputs"]
    assert {entry["path"].split("-0")[0] for entry in outputs} == {
        "corpus", "dead-letter", "skipped", "duplicates", "index", "report.json", "report.html"}
    # Shards, side files, the report and its page, the index: none opened to be digested (the inputs are).
    assert not {os.path.basename(path) for path in opened} & {entry["path"] for entry in outputs}, opened
    assert len([entry for entry in outputs if entry["path"].startswith("corpus-")]) == 2
    for entry in outputs:
        # (open_regular is the test's again: the files on disk are digested as `verify` digests them.)
        on_disk = manifest.digest_file(str(output / entry["path"]))
        assert (entry["size"], entry["sha256"]) == (on_disk.size, on_disk.sha256)


@pytest.mark.slow
def test_two_builds_and_two_workers_are_byte_identical(sample_build, tmp_path):
    inputs = [str(sample_build.parent / "in" / "*.warc.gz")]
    first = file_bytes(sample_build)
    again = file_bytes(build(inputs, tmp_path / "again"))
    parallel = file_bytes(build(inputs, tmp_path / "two", *TWO_WORKERS))
    assert first == again == parallel
    assert {"manifest.json", "report.json", "corpus-00000-of-00002.avro", "corpus-00001-of-00002.avro"} <= set(first)


@pytest.mark.slow
def test_survivor_is_the_earliest_capture_whatever_the_file_order(sample_build):
    records = {record["url"]: record for record in iter_corpus(str(sample_build))}
    # The copy in b.warc.gz was captured a day before the original in a.warc.gz.
    assert "https://ru.example.org/news/most" not in records
    survivor = records["https://copy.example.org/most"]
    assert survivor["duplicate_urls"] == ["https://ru.example.org/news/most"]
    assert survivor["duplicate_count"] == 1
    mapping = [json.loads(line) for line in (sample_build / "duplicates-00000-of-00001.jsonl").read_text().splitlines()]
    dropped = {row["url"]: row for row in mapping}
    assert dropped["https://ru.example.org/news/most"]["survivor_url"] == "https://copy.example.org/most"
    assert dropped["https://ru.example.org/news/most"]["content_hash"] == survivor["content_hash"]


@pytest.mark.slow
def test_manifest_lists_inputs_options_software_and_outputs(sample_inputs, tmp_path):
    output = build(sample_inputs, tmp_path / "out", "--codec", "zstandard", "--level", "5")
    manifest = json.loads((output / MANIFEST_NAME).read_text())
    assert seal(manifest) == manifest
    assert [Path(entry["path"]).name for entry in manifest["inputs"]] == ["a.warc.gz", "b.warc.gz"]
    assert manifest["options"]["codec"] == "zstandard" and manifest["options"]["level"] == 5
    assert {"python", "apache-beam", "selectolax", "lexbor", "warcio", "fastavro", "charset-normalizer"} <= set(
        manifest["software"])
    listed = {entry["path"]: entry for entry in manifest["outputs"]}
    on_disk = {path.name for path in output.iterdir()} - {MANIFEST_NAME}
    assert set(listed) == on_disk
    records = sum(entry.get("records", 0) for entry in manifest["outputs"])
    assert records == len(list(iter_corpus(str(output)))) == json.loads((output / "report.json").read_text())[
        "records"]["kept"]


@pytest.mark.slow
def test_rebuild_from_a_manifest_is_identical(sample_inputs, tmp_path, capsys):
    output = build(sample_inputs, tmp_path / "out", "--codec", "xz", "--level", "1")
    assert cli.main(["--rebuild", str(output / MANIFEST_NAME), "--output", str(tmp_path / "again")]) == 0
    assert "byte-identical" in capsys.readouterr().out
    assert file_bytes(output) == file_bytes(tmp_path / "again")


@pytest.mark.slow
def test_a_build_from_relative_paths_rebuilds_from_any_directory(sample_inputs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    output = build(["in/*.warc.gz"], Path("out"))
    manifest = json.loads((output / MANIFEST_NAME).read_text())
    assert manifest["options"]["inputs"] == [str(tmp_path / "in" / "*.warc.gz")]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli.main(["--rebuild", str(tmp_path / "out" / MANIFEST_NAME), "--output", "again"]) == 0
    assert "byte-identical" in capsys.readouterr().out
    assert file_bytes(tmp_path / "out") == file_bytes(elsewhere / "again")


@pytest.mark.parametrize("damage", ["no codec", "options a list", "scripts a number"])
@pytest.mark.slow
def test_rebuild_of_a_manifest_whose_options_are_not_a_builds_is_one_line(sample_build, tmp_path, capsys, damage):
    manifest = json.loads((sample_build / MANIFEST_NAME).read_text())
    if damage == "no codec":
        del manifest["options"]["codec"]
    elif damage == "options a list":
        manifest["options"] = [manifest["options"]["inputs"]]
    else:
        manifest["options"]["scripts"] = 7
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(manifest))
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        cli.main(["--rebuild", str(damaged), "--output", str(tmp_path / "again")])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--rebuild" in err and "Traceback" not in err


@pytest.mark.slow
def test_rebuild_refuses_changed_inputs_and_conflicting_options(sample_inputs, tmp_path, capsys):
    output = build(sample_inputs, tmp_path / "out")
    with pytest.raises(SystemExit) as conflict:
        cli.main(["--rebuild", str(output / MANIFEST_NAME), "--codec", "xz", "--output", str(tmp_path / "x")])
    assert conflict.value.code == 2
    (tmp_path / "in" / "b.warc.gz").write_bytes(warc_bytes([Capture("https://changed.example.org/", b"<p>x</p>")]))
    assert cli.main(["--rebuild", str(output / MANIFEST_NAME), "--output", str(tmp_path / "y")]) == 2
    assert "changed since the manifest was written" in capsys.readouterr().err


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def problems(directory: Path) -> tuple[int, list[str]]:
    shards, records, found = verify.verify(str(directory))
    return records, [str(problem) for problem in found]


@pytest.mark.slow
def test_verify_passes_an_intact_build(sample_build, capsys):
    assert problems(sample_build)[1] == []
    assert verify.main([str(sample_build)]) == 0
    assert "intact" in capsys.readouterr().out


@pytest.mark.slow
def test_verify_names_a_damaged_record_in_an_uncompressed_file(sample_inputs, tmp_path, capsys):
    output = build(sample_inputs, tmp_path / "out", "--codec", "null")
    shard = output / "corpus-00000-of-00002.avro"
    flip_byte(shard, shard.read_bytes().index("harbour cranes return".encode()) + 2)
    _, found = problems(output)
    assert any("corpus-00000-of-00002.avro: record 0" in line and "content_hash mismatch" in line for line in found)
    assert any("sha256 differs from the manifest" in line for line in found)
    assert verify.main([str(output)]) == 1
    with pytest.raises(CorruptCorpus, match="record 0"):
        list(iter_corpus(str(output)))
    assert len(list(iter_corpus(str(output), verify=False))) > 0


def first_block(data: bytes) -> tuple[int, int]:
    """(start of block 0, start of the sync marker that ends it)."""
    sync = data[-16:]  # every block ends with the file's sync marker
    start = data.index(sync) + 16
    return start, data.index(sync, start)


@pytest.mark.slow
def test_verify_names_a_damaged_compressed_block(sample_inputs, tmp_path):
    output = build(sample_inputs, tmp_path / "out", "--codec", "deflate")
    shard = output / "corpus-00000-of-00002.avro"
    start, end = first_block(shard.read_bytes())
    flip_byte(shard, (start + end) // 2)
    # A changed byte inside compressed data may still decompress (to other
    # text in some field): the file's checksum always catches it.
    assert "corpus-00000-of-00002.avro: file: sha256 differs from the manifest" in problems(output)[1]


@pytest.mark.slow
def test_verify_names_a_broken_block_boundary_without_the_manifest(sample_inputs, tmp_path):
    output = build(sample_inputs, tmp_path / "out", "--codec", "deflate", "--block-size", "2000")
    shard = output / "corpus-00000-of-00002.avro"
    start, end = first_block(shard.read_bytes())
    flip_byte(shard, end)  # the sync marker after block 0
    (output / MANIFEST_NAME).unlink()
    records, found = problems(output)
    assert f"corpus-00000-of-00002.avro: block 0 at byte {start}: damaged block: sync marker missing after the block" \
        in found
    # Reading resynchronizes at the next sync marker: the other blocks' records are still verified.
    assert records > 0


@pytest.mark.slow
def test_verify_names_a_damaged_manifest(sample_build, tmp_path):
    output = Path(shutil.copytree(sample_build, tmp_path / "out"))
    manifest = output / MANIFEST_NAME
    text = manifest.read_text()
    at = text.index('"codec": "') + len('"codec": "')
    manifest.write_text(text[:at] + chr(ord(text[at]) ^ 1) + text[at + 1:])  # one byte of the codec's name
    assert problems(output)[1] == ["manifest.json: manifest_sha256: checksum mismatch: the manifest was changed"]
    assert verify.main([str(output)]) == 1


def test_verify_refuses_a_directory_without_a_build(tmp_path, capsys):
    assert verify.main([str(tmp_path)]) == 2
    assert "holds no webcorpus build" in capsys.readouterr().err


@pytest.mark.slow
def test_read_corpus_transform_verifies_records(sample_build):
    expected = sorted(record["content_hash"] for record in iter_corpus(str(sample_build)))
    assert all(content_hash(record["html"]) == record["content_hash"] for record in iter_corpus(str(sample_build)))
    with TestPipeline() as pipeline:
        read = pipeline | ReadCorpus(str(sample_build))
        assert_that(read.records | beam.Map(lambda record: record["content_hash"]), equal_to(expected))
        assert_that(read.dead_letter, equal_to([]), label="NoCorruptRecords")


@pytest.mark.slow
def test_dev_corpus_builds_are_byte_identical_across_runs_and_workers(corpus_dir, dev_corpus_build, tmp_path):
    inputs = [str(corpus_dir / "warc" / "*.warc.gz")]
    first = file_bytes(dev_corpus_build[0])
    parallel = file_bytes(build(inputs, tmp_path / "two", *TWO_WORKERS))
    assert first == parallel
    assert verify.main([str(tmp_path / "two")]) == 0


def test_reading_a_local_corpus_imports_no_beam_and_prints_nothing(sample_build):
    """A reader needs fastavro, not Beam: importing Beam costs seconds and logs warnings nobody asked for."""
    expected = sorted(record["content_hash"] for record in iter_corpus(str(sample_build)))
    code = ("import sys\n"
            "from transforms.corpus.read_corpus import CorruptCorpus, iter_corpus\n"
            f"hashes = sorted(record['content_hash'] for record in iter_corpus({str(sample_build)!r}))\n"
            "print(len(hashes), hashes[0], 'apache_beam' in sys.modules)\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == [str(len(expected)), expected[0], "False"]
    assert child.stderr == ""
