"""The corpus in Parquet and JSON Lines (`--format`): the same records, fields and shards as Avro, with the same
guarantees (byte-identical rebuilds, `record_digest`, the manifest's checksums, verify, damage caught)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.options import parse_settings
from pipeline.sample import Capture, warc_bytes
from pipeline.verify import main as verify_main
from tests.helpers import page
from tests.test_cli import run_main
from transforms.corpus.corpus_format import RECORD_DIGEST
from transforms.corpus.read_corpus import CorruptCorpus, iter_corpus, scan_jsonl, scan_parquet
from transforms.stages.compress_write.avro_encoding import record_digest
from transforms.stages.compress_write.formats import resolve_codec
from transforms.stages.compress_write.jsonl_encoding import JsonLines
from transforms.stages.compress_write.parquet_encoding import ParquetRows

CAPTURES = [Capture(f"https://example.org/{name}", page(f"<p>{text}</p>", title=name).encode("utf-8"))
            for name, text in (("first", "The first page, with its own words."),
                               ("second", "Вторая страница: другие слова."),
                               ("mirror", "The first page, with its own words."))]
FIELDS = ("url", "text", "meta", "links", "source_offset", "dropped_letter_share", RECORD_DIGEST)


def records(count: int) -> list[dict]:
    made = []
    for index in range(count):
        record = {"url": f"https://example.org/{index}", "text": f"page {index}", "meta": {"z": "last", "a": "first"},
                  "links": [f"https://example.org/{index + 1}"], "source_offset": index * 1000,
                  "dropped_letter_share": index / 7}
        made.append(dict(record, record_digest=record_digest(record)))
    return made


def parquet_bytes(rows: list[dict], row_group_rows: int) -> bytes:
    out = io.BytesIO()
    writer = ParquetRows(out, FIELDS, "zstd", 9, row_group_rows)
    for row in rows:
        writer.write(row)
    writer.close()
    return out.getvalue()


def test_each_format_has_its_codecs_and_refuses_the_others_in_one_line(capsys):
    assert resolve_codec("avro", None, None) == ("zstandard", 9)
    assert resolve_codec("parquet", "snappy", None) == ("snappy", None)
    assert resolve_codec("jsonl", "gzip", None) == ("gzip", 6)
    for argv in (["--format", "jsonl", "--codec", "snappy"], ["--format", "parquet", "--codec", "zstandard"],
                 ["--codec", "gzip"], ["--format", "jsonl", "--block-size", "65536"]):
        with pytest.raises(SystemExit) as exited:
            parse_settings(["--output", "/tmp/never-written", *argv])
        assert exited.value.code == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert "does not apply to --format" in error or "--format jsonl has none" in error, error
    # A default build keeps its identity (and so its bytes); another format is part of it, for --rebuild.
    assert "format" not in parse_settings(["--output", "/tmp/never-written"]).build_identity()
    identity = parse_settings(["--output", "/tmp/never-written", "--format", "parquet"]).build_identity()
    assert (identity["format"], identity["codec"], identity["level"]) == ("parquet", "zstd", 9)


def test_parquet_row_groups_have_a_fixed_count_and_the_same_bytes_every_time():
    rows = records(10)
    data = parquet_bytes(rows, 4)
    assert data == parquet_bytes(rows, 4)
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    assert [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)] == [4, 4, 2]
    # No timestamp; the writer names only its version (which the manifest of a Parquet build records).
    assert metadata.created_by == f"parquet-cpp-arrow version {pa.__version__}"
    table = pq.read_table(io.BytesIO(data))
    assert table.schema.names == list(FIELDS)
    assert table.to_pylist()[3]["meta"] == [{"key": "z", "value": "last"}, {"key": "a", "value": "first"}]


@pytest.mark.parametrize("codec, extension", [("zstd", ".jsonl.zst"), ("gzip", ".jsonl.gz"), ("none", ".jsonl")])
def test_a_shard_of_no_records_reads_as_one(codec, extension):
    out = io.BytesIO()
    JsonLines(out, codec, resolve_codec("jsonl", codec, None)[1]).close()
    assert list(scan_jsonl(out.getvalue(), f"corpus-00000-of-00001{extension}")) == []
    assert list(scan_parquet(parquet_bytes([], 4), "corpus-00000-of-00001.parquet")) == []


def test_gzip_json_lines_hold_no_time_and_no_file_name():
    out = io.BytesIO()
    out.name = "corpus-00000-of-00001.jsonl.gz"
    writer = JsonLines(out, "gzip", 6)
    writer.write(records(1)[0])
    writer.close()
    data = out.getvalue()
    flags, mtime = data[3], data[4:8]
    assert flags == 0 and mtime == b"\0\0\0\0"
    assert gzip.decompress(data).decode("utf-8").startswith('{"url":"https://example.org/0","text":"page 0",')


def middle_of_the_records(shard) -> int:
    """A byte in the middle of the shard's records (of a Parquet shard, of its `html` column's pages: a byte of its
    footer's statistics changes no record, and only the manifest's checksum sees it)."""
    if shard.suffix != ".parquet":
        return shard.stat().st_size // 2
    column = pq.ParquetFile(shard).metadata.row_group(0).column(pq.read_schema(shard).names.index("html"))
    return column.data_page_offset + column.total_compressed_size // 2


@pytest.fixture(scope="module")
def avro_build(tmp_path_factory) -> tuple[Path, Path]:
    """A WARC file of CAPTURES and its build in the default format, Avro, which the tests read and never change."""
    directory = tmp_path_factory.mktemp("formats")
    source = directory / "in" / "test.warc.gz"
    source.parent.mkdir()
    source.write_bytes(warc_bytes(CAPTURES, filename=source.name))
    code, _, stderr = run_main(["--input", str(source), "--output", str(directory / "avro"), "--quiet"])
    assert code == 0, stderr
    return source, directory / "avro"


@pytest.mark.slow
@pytest.mark.parametrize("argv, extension", [(["--format", "parquet"], ".parquet"),
                                             (["--format", "parquet", "--codec", "snappy"], ".parquet"),
                                             (["--format", "jsonl"], ".jsonl.zst"),
                                             (["--format", "jsonl", "--codec", "gzip"], ".jsonl.gz"),
                                             (["--format", "jsonl", "--codec", "none"], ".jsonl")])
def test_each_format_holds_the_avro_records_rebuilds_identical_and_catches_damage(argv, extension, avro_build,
                                                                                    tmp_path, capsys):
    source, avro = avro_build
    builds = {"avro": avro, "other": tmp_path / "other"}
    code, _, stderr = run_main(["--input", str(source), "--output", str(builds["other"]), "--quiet", *argv])
    assert code == 0, stderr
    (shard,) = builds["other"].glob("corpus-*")
    assert shard.name == f"corpus-00000-of-00001{extension}"
    assert list(iter_corpus(str(builds["other"]))) == list(iter_corpus(str(builds["avro"])))
    assert [record["url"] for record in iter_corpus(str(builds["other"]))] == [CAPTURES[0].url, CAPTURES[1].url]
    assert verify_main([str(builds["other"])]) == 0

    again = tmp_path / "again"
    code, stdout, stderr = run_main(["--rebuild", str(builds["other"] / "manifest.json"), "--output", str(again),
                                     "--quiet"])
    assert code == 0 and "byte-identical" in stdout, stdout + stderr
    assert (again / shard.name).read_bytes() == shard.read_bytes()

    damaged = bytearray(shard.read_bytes())
    damaged[middle_of_the_records(shard)] ^= 0x01
    shard.write_bytes(bytes(damaged))
    capsys.readouterr()
    assert verify_main([str(builds["other"])]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{shard.name}: file: sha256 differs from the manifest"
    assert lines[1].startswith(f"{shard.name}: ") and len(lines) >= 3
    with pytest.raises(CorruptCorpus, match=shard.name):
        list(iter_corpus(str(builds["other"])))


@pytest.mark.slow
def test_fields_apply_to_parquet(write_warc, tmp_path):
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(write_warc(CAPTURES)), "--output", str(output), "--quiet",
                                "--format", "parquet", "--fields", "text,url"])
    assert code == 0, stderr
    (shard,) = output.glob("corpus-*.parquet")
    assert pq.read_schema(shard).names == ["url", "text", RECORD_DIGEST]
    assert [sorted(record) for record in iter_corpus(str(output))] == [["record_digest", "text", "url"]] * 2


@pytest.mark.slow
def test_read_corpus_transform_reads_parquet_and_json_lines(write_warc, tmp_path):
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to, is_not_empty

    from transforms.corpus.read_corpus import ReadCorpus

    source = write_warc(CAPTURES)
    for file_format in ("parquet", "jsonl"):
        output = tmp_path / file_format
        code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--format", file_format])
        assert code == 0, stderr
        (shard,) = output.glob("corpus-*")
        expected = sorted(record["url"] for record in iter_corpus(str(output)))
        with TestPipeline() as pipeline:
            read = pipeline | f"Read-{file_format}" >> ReadCorpus(str(output))
            assert_that(read.records | beam.Map(lambda record: record["url"]), equal_to(expected))
            assert_that(read.dead_letter, equal_to([]), label="NoDeadLetters")
        damaged = bytearray(shard.read_bytes())
        damaged[middle_of_the_records(shard)] ^= 0x01
        shard.write_bytes(bytes(damaged))
        with TestPipeline() as pipeline:
            read = pipeline | f"ReadDamaged-{file_format}" >> ReadCorpus(str(output))
            assert_that(read.dead_letter, is_not_empty(), label="DeadLetters")
