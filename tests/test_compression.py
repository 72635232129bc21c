"""The compression study: its command, its measurements and its chart."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import fastavro
import pytest

from benchmarks.compression_study import chart, cli
from benchmarks.compression_study.measure import (LEVELS, QUICK_BLOCK_SIZES, CodecSetting, RoundTripError, measure,
                                                  sample_records, study_settings, write_avro)
from benchmarks.compression_study.formats import FORMAT_SETTINGS, FormatSetting, read_format, write_format
from benchmarks.compression_study.records import load_records
from benchmarks.compression_study.report import pareto_front
from pipeline.sample import sample_captures
from transforms.stages.compress_write.avro_encoding import CODECS, DEFAULT_SYNC_INTERVAL, resolve_level

REPO = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
QUICK_SETTINGS = study_settings(LEVELS, QUICK_BLOCK_SIZES, quick=True)


@pytest.fixture
def sample_warc(write_warc):
    return write_warc(sample_captures(), name="sample.warc.gz")


@pytest.fixture
def warc_records(sample_warc):
    return load_records(str(sample_warc))


@pytest.mark.slow
def test_quick_study_reports_every_setting_and_charts_those_at_the_default_block_size(sample_warc, tmp_path,
                                                                                      capsys, monkeypatch):
    charts = []
    draw_chart = cli.draw_chart
    monkeypatch.setattr(cli, "draw_chart", lambda report, path: charts.append(draw_chart(report, path)))
    output = tmp_path / "report"
    assert cli.main(["--input", str(sample_warc), "--output", str(output), "--quick", "--repeats", "2"]) == 0

    report = json.loads((output / "compression.json").read_text())
    measured = [(entry["codec"], entry["level"], entry["block_size"]) for entry in report["measurements"]]
    assert measured == [(setting.codec, setting.level, setting.block_size) for setting in QUICK_SETTINGS]
    assert report["documents"] == 6  # the sample's distinct pages, its truncated capture among them (kept cut)
    for entry in report["measurements"]:
        assert entry["written_bytes"] > 0
        assert entry["ratio_to_records"] == pytest.approx(report["uncompressed_bytes"] / entry["written_bytes"])
        assert 1 <= entry["compress"]["runs"] <= 2 and entry["compress"]["cpu_seconds"] >= 0

    assert (output / "compression.png").read_bytes().startswith(PNG_SIGNATURE)
    (points,) = charts
    charted = [entry["name"] for entry in report["measurements"] if entry["block_size"] == DEFAULT_SYNC_INTERVAL]
    assert [point.name for point in points] == charted
    assert any(point.on_compress_front for point in points) and any(point.on_decompress_front for point in points)

    printed = capsys.readouterr().out
    for title in ("Size (MB)", "Compression time", "Decompression time", "All settings"):
        assert title in printed


def test_warc_input_gives_the_records_the_pipeline_writes(warc_records):
    by_url = {record["url"]: record for record in warc_records}
    # The mirror's copy of the harbour article is a later duplicate: left out, listed by the survivor.
    survivor = by_url["https://harbour-gazette.example.org/2026/01/cranes"]
    assert "https://mirror.example.org/harbour/cranes" not in by_url
    assert survivor["duplicate_count"] == 1
    assert survivor["duplicate_urls"] == ["https://mirror.example.org/harbour/cranes"]
    assert all(record["html"].startswith("<div>") for record in warc_records)


@pytest.mark.slow
def test_warc_input_gives_field_for_field_the_records_of_a_build(sample_warc, warc_records, tmp_path):
    """The study runs the pipeline's stage functions in process (docs/compression.md): its records are those
    `python -m pipeline` writes, in the study's order (input files, then file order)."""
    built = subprocess.run([sys.executable, "-m", "pipeline", "--input", str(sample_warc), "--output",
                            str(tmp_path / "built"), "--quiet"], env=dict(os.environ, PYTHONPATH=str(REPO)),
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    in_file_order = sorted(load_records(str(tmp_path / "built")), key=lambda record: record["source_offset"])
    assert warc_records == in_file_order


def test_a_directory_of_corpus_files_is_read_as_it_is(warc_records, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "corpus-00000-of-00001.avro").write_bytes(
        write_avro(warc_records, CodecSetting("deflate", 6, DEFAULT_SYNC_INTERVAL)))
    assert load_records(str(corpus)) == warc_records


def test_an_input_without_documents_is_a_usage_error(tmp_path, capsys):
    status = cli.main(["--input", str(tmp_path / "nothing-*.warc.gz"), "--output", str(tmp_path / "out")])
    assert status == 2
    assert "holds no document" in capsys.readouterr().err


def test_every_setting_reads_back_the_records_it_wrote(warc_records):
    for setting in QUICK_SETTINGS:
        data = write_avro(warc_records, setting)
        assert list(fastavro.reader(io.BytesIO(data))) == warc_records, setting.name

    measurements = measure(warc_records, QUICK_SETTINGS, repeats=2)
    assert [m.setting for m in measurements] == QUICK_SETTINGS
    for m in measurements:
        assert m.written_bytes == len(write_avro(warc_records, m.setting))


def test_records_that_do_not_read_back_are_an_error(warc_records):
    # A field that the corpus schema lacks is not written, so it cannot come back.
    records = [dict(record, extra="not in the schema") for record in warc_records]
    with pytest.raises(RoundTripError):
        measure(records, [CodecSetting("null", None, DEFAULT_SYNC_INTERVAL)], repeats=1)


def test_the_study_measures_only_what_the_pipeline_can_write():
    for codec, levels in LEVELS.items():
        for level in levels:
            assert resolve_level(codec, level) == level, (codec, level)
    assert set(LEVELS) == set(CODECS)


def test_without_matplotlib_the_study_says_so_first_and_writes_the_json_and_tables(sample_warc, tmp_path, capsys,
                                                                                    monkeypatch):
    # None in sys.modules makes `import matplotlib` raise ImportError.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    output = tmp_path / "report"
    assert cli.main(["--input", str(sample_warc), "--output", str(output), "--quick", "--repeats", "1",
                             "--codecs", "null,deflate"]) == 0
    captured = capsys.readouterr()
    first_line = captured.err.splitlines()[0]
    assert "matplotlib is not installed" in first_line and "pip install" in first_line
    assert (output / "compression.json").is_file() and not (output / "compression.png").exists()
    assert "Size (MB)" in captured.out


def test_chart_labels_do_not_overlap():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 4))
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    # Settings close together, as the levels of one codec lie on the chart.
    labels = [(f"deflate {level}", 1.0 + level * 0.01, 5.0 - level * 0.01) for level in range(6)]
    axes.scatter([x for _, x, _ in labels], [y for *_, y in labels])
    axes.set_xlim(0.5, 1.5)
    axes.set_ylim(4.0, 6.0)
    placed = chart.place_labels(axes, labels)
    renderer = figure.canvas.get_renderer()
    boxes = [annotation.get_window_extent(renderer) for annotation in placed]
    assert len(boxes) == len(labels)
    assert not any(first.overlaps(second) for index, first in enumerate(boxes) for second in boxes[index + 1:])


def test_a_sample_is_evenly_spaced_and_keeps_order(warc_records):
    records = [dict(warc_records[index % len(warc_records)], url=f"https://example.org/{index}")
               for index in range(100)]
    whole = len(write_avro(records, CodecSetting("null", None, DEFAULT_SYNC_INTERVAL)))
    assert sample_records(records, whole) == records
    quarter = sample_records(records, whole // 4 + 1)
    assert [record["url"] for record in quarter] == [f"https://example.org/{index}" for index in range(3, 100, 4)]


def test_pareto_front_keeps_the_points_nothing_beats():
    points = [(1.0, 3.0), (2.0, 2.0), (3.0, 1.0), (3.0, 3.0), (2.0, 2.5)]
    assert pareto_front(points) == [True, True, True, False, False]


@pytest.mark.parametrize("text, size", [("65536", 65536), ("16K", 16 * 1024), ("16KiB", 16 * 1024),
                                        ("1M", 1024 * 1024), ("4mib", 4 * 1024 * 1024)])
def test_block_sizes_are_read_with_units(text, size):
    assert cli.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "0", "1G", "one"])
def test_bad_block_sizes_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_size(text)


@pytest.mark.slow
def test_the_study_measures_parquet_and_json_lines_beside_avro(sample_warc, tmp_path, capsys):
    output = tmp_path / "report"
    assert cli.main(["--input", str(sample_warc), "--output", str(output), "--quick", "--repeats", "1",
                     "--codecs", "zstandard"]) == 0
    report = json.loads((output / "compression.json").read_text())
    assert [entry["name"] for entry in report["formats"]] == [
        "parquet zstd 3", "parquet zstd 9", "parquet snappy", "jsonl zstd 3", "jsonl zstd 9", "jsonl gzip 6"]
    for entry in report["formats"]:
        assert entry["written_bytes"] > 0 and entry["compress"]["runs"] == 1
        assert entry["ratio_to_records"] == pytest.approx(report["uncompressed_bytes"] / entry["written_bytes"])
    assert "| parquet snappy |" in capsys.readouterr().out.replace("  ", " ").replace("  ", " ")


def test_each_format_of_the_study_reads_back_the_records_it_wrote(warc_records):
    for setting in map(lambda values: FormatSetting(*values), FORMAT_SETTINGS):
        assert read_format(write_format(warc_records, setting), setting) == warc_records
    damaged = bytearray(write_format(warc_records, FormatSetting("jsonl", "gzip", 6)))
    damaged[len(damaged) // 2] ^= 0x01
    with pytest.raises(RoundTripError):
        read_format(bytes(damaged), FormatSetting("jsonl", "gzip", 6))
