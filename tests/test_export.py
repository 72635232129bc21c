"""`python -m pipeline.export`: an Avro corpus in Parquet or JSON Lines without building it again, verified on the
way."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pipeline.export import main as export_main
from pipeline.verify import main as verify_main
from tests.test_cli import run_main
from tests.test_formats import CAPTURES
from transforms.corpus.read_corpus import iter_corpus


@pytest.fixture
def avro_build(write_warc, tmp_path):
    output = tmp_path / "avro"
    code, _, stderr = run_main(["--input", str(write_warc(CAPTURES)), "--output", str(output), "--quiet"])
    assert code == 0, stderr
    return output


@pytest.mark.slow
@pytest.mark.parametrize("file_format, codec, extension", [("parquet", None, ".parquet"),
                                                           ("jsonl", "gzip", ".jsonl.gz")])
def test_an_export_is_the_build_of_that_format(file_format, codec, extension, avro_build, write_warc, tmp_path):
    exported = tmp_path / "exported"
    options = ["--format", file_format] + (["--codec", codec] if codec else [])
    assert export_main([str(avro_build), *options, "--output", str(exported)]) == 0
    built = tmp_path / "built"
    code, _, stderr = run_main(["--input", str(write_warc(CAPTURES)), "--output", str(built), "--quiet", *options])
    assert code == 0, stderr
    (shard,) = exported.glob("corpus-*")
    assert shard.name == f"corpus-00000-of-00001{extension}"
    assert shard.read_bytes() == (built / shard.name).read_bytes()
    assert list(iter_corpus(str(exported))) == list(iter_corpus(str(avro_build)))
    assert verify_main([str(exported)]) == 0
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["options"]["format"] == file_format
    assert [entry["path"] for entry in manifest["outputs"]] == [shard.name, "index-00000-of-00001.bin", "report.json"]


@pytest.mark.slow
def test_a_damaged_corpus_is_not_exported(avro_build, tmp_path, capsys):
    (shard,) = avro_build.glob("corpus-*.avro")
    damaged = bytearray(shard.read_bytes())
    # A byte of the records' block (its header, with the schema, fills the first half of so small a shard).
    damaged[len(damaged) - 100] ^= 0x01
    shard.write_bytes(bytes(damaged))
    # With its manifest, the checksum sees it; without, the records' digests, while reading.
    for name in ("first", "second"):
        exported = tmp_path / name
        assert export_main([str(avro_build), "--format", "parquet", "--output", str(exported)]) == 1
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and "is damaged, nothing exported" in error and shard.name in error
        assert not exported.exists()
        (avro_build / "manifest.json").unlink(missing_ok=True)


def test_an_output_that_is_not_empty_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    assert export_main([str(tmp_path), "--format", "parquet", "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (f"python -m pipeline.export: error: --output {tmp_path / 'out'} exists "
                                               "and is not an empty directory; choose a new one")
    assert export_main([str(tmp_path), "--format", "jsonl", "--codec", "snappy", "--output", str(tmp_path / "new")]) == 2
    assert "does not apply to --format jsonl" in capsys.readouterr().err
    assert export_main([str(tmp_path), "--format", "jsonl", "--output", str(tmp_path / "new")]) == 2
    assert "holds no Avro corpus" in capsys.readouterr().err


@pytest.fixture(scope="module")
def built_avro(tmp_path_factory) -> Path:
    from pipeline.sample import warc_bytes

    inputs = tmp_path_factory.mktemp("in")
    (inputs / "a.warc.gz").write_bytes(warc_bytes(CAPTURES, filename="a.warc.gz"))
    output = tmp_path_factory.mktemp("built") / "avro"
    code, _, stderr = run_main(["--input", str(inputs / "a.warc.gz"), "--output", str(output), "--quiet"])
    assert code == 0, stderr
    return output


@pytest.mark.slow
@pytest.mark.parametrize("name, manifest", [("report.json", False), ("corpus-00000-of-00001.avro", False),
                                            ("index-00000-of-00001.bin", True), ("manifest.json", True)])
def test_an_export_reads_no_file_of_the_corpus_through_a_link(built_avro, tmp_path, capsys, name, manifest):
    """A link in the corpus to a file that only its user may read (its own bytes here, for the checksums to
    hold) would have the export copy that file into a directory others may read."""
    corpus = Path(shutil.copytree(built_avro, tmp_path / "corpus"))
    if not manifest:
        (corpus / "manifest.json").unlink()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (corpus / name).rename(private / name)
    (corpus / name).symlink_to(private / name)
    exported = tmp_path / "exported"
    assert export_main([str(corpus), "--format", "jsonl", "--output", str(exported)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert f"is damaged, nothing exported: {name}: " in line and "link" in line, line
    assert not exported.exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["report.json", "corpus-00000-of-00001.avro"])
def test_a_corpus_file_that_is_a_fifo_is_one_line(built_avro, tmp_path, capsys, name):
    corpus = Path(shutil.copytree(built_avro, tmp_path / "corpus"))
    (corpus / "manifest.json").unlink()
    (corpus / name).unlink()
    os.mkfifo(corpus / name)
    exported = tmp_path / "exported"
    assert export_main([str(corpus), "--format", "jsonl", "--output", str(exported)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert f"is damaged, nothing exported: {name}: not a regular file (a FIFO)" in line, line
    assert not exported.exists()
