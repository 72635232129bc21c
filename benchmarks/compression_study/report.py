"""The study's report: every measurement as JSON-ready data, and the tables printed."""

from __future__ import annotations

from dataclasses import asdict
from importlib import metadata as package_metadata
from typing import Callable

from benchmarks.compression_study.measure import (KIB, MB, MIB, Measurement, OperationCost, default_level,
                                                  uncompressed_size)
from transforms.stages.compress_write.avro_encoding import DEFAULT_CODEC, DEFAULT_SYNC_INTERVAL

# Versions that decide the sizes and speeds, for the report.
LIBRARIES = ("fastavro", "backports.zstd", "cramjam", "pyarrow")


def pareto_front(points: list[tuple[float, float]]) -> list[bool]:
    """For each (size, time) point, whether no other point is at least as
    small and as fast, and smaller or faster."""
    return [
        not any(other[0] <= point[0] and other[1] <= point[1] and other != point for other in points)
        for point in points
    ]


def _per_second(size: int, seconds: float) -> float | None:
    return size / MB / seconds if seconds > 0 else None


def _cost_entry(cost: OperationCost, uncompressed_bytes: int) -> dict:
    return dict(asdict(cost), mb_per_cpu_second=_per_second(uncompressed_bytes, cost.cpu_seconds))


def _library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = package_metadata.version(name)
        except package_metadata.PackageNotFoundError:
            continue
    return versions


def _format_entry(m: Measurement, uncompressed: int, raw_html: int) -> dict:
    return {"name": m.setting.name, "format": m.setting.file_format, "codec": m.setting.codec,
            "level": m.setting.level, "written_bytes": m.written_bytes,
            "ratio_to_records": uncompressed / m.written_bytes, "ratio_to_raw_html": raw_html / m.written_bytes,
            "compress": _cost_entry(m.compress, uncompressed), "decompress": _cost_entry(m.decompress, uncompressed)}


def build_report(records: list[dict], measurements: list[Measurement], corpus_documents: int,
                 format_measurements: list[Measurement] = (), **study) -> dict:
    """The study as JSON-ready data: the measured records (of `corpus_documents`
    in the corpus), how they were measured (`study`), one entry per Avro setting, and one per setting of
    the other formats (`formats`: Parquet and JSON Lines).

    Ratios are size before / size after: against the records in Avro without
    compression (null codec, default block size) and against the raw HTML.
    Speeds are MB (10^6 bytes) of uncompressed records per CPU second. The
    Pareto flags compare the settings at the default block size by size and
    CPU seconds (on a shared machine, wall time also counts waiting for a core).
    """
    uncompressed = uncompressed_size(records)
    raw_html = sum(record["raw_bytes"] for record in records)
    charted = [index for index, m in enumerate(measurements) if m.setting.block_size == DEFAULT_SYNC_INTERVAL]
    fronts = {
        operation: dict(zip(charted, pareto_front([
            (measurements[index].written_bytes, getattr(measurements[index], operation).cpu_seconds)
            for index in charted
        ])))
        for operation in ("compress", "decompress")
    }
    entries = [
        {
            "name": m.setting.name,
            "codec": m.setting.codec,
            "level": m.setting.level,
            "block_size": m.setting.block_size,
            "written_bytes": m.written_bytes,
            "ratio_to_records": uncompressed / m.written_bytes,
            "ratio_to_raw_html": raw_html / m.written_bytes,
            "compress": _cost_entry(m.compress, uncompressed),
            "decompress": _cost_entry(m.decompress, uncompressed),
            "on_chart": m.setting.block_size == DEFAULT_SYNC_INTERVAL,
            "pareto_front": {operation: front.get(index, False) for operation, front in fronts.items()},
        }
        for index, m in enumerate(measurements)
    ]
    return dict(study, corpus_documents=corpus_documents, documents=len(records), raw_html_bytes=raw_html,
                uncompressed_bytes=uncompressed,
                default_block_size=DEFAULT_SYNC_INTERVAL, libraries=_library_versions(), measurements=entries,
                formats=[_format_entry(m, uncompressed, raw_html) for m in format_measurements])


def size_label(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size // KIB} KiB" if size % KIB == 0 else f"{size} B"


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[column]) for row in [header] + rows) for column in range(len(header))]
    lines = [header, ["-" * width for width in widths]] + rows
    return "\n".join("| " + " | ".join(cell.rjust(width) for cell, width in zip(line, widths)) + " |"
                     for line in lines)


def _number(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _mib(size: int | None) -> str:
    return "n/a" if size is None else f"{size / MIB:.1f}"


def _level_table(entries: list[dict], cell: Callable[[dict], str]) -> str:
    """The seed's layout: one row per level, one column per codec; `-` is the codec without levels."""
    codecs = list(dict.fromkeys(entry["codec"] for entry in entries))
    levels = sorted({entry["level"] for entry in entries}, key=lambda level: (level is not None, level or 0))
    cells = {(entry["codec"], entry["level"]): cell(entry) for entry in entries}
    rows = [["-" if level is None else str(level)] + [cells.get((codec, level), "") for codec in codecs]
            for level in levels]
    return _markdown_table(["level"] + codecs, rows)


def _formats_table(formats: list[dict], charted: list[dict], block: str) -> list[str]:
    """The table of the other formats' settings, after Avro's default setting when it was measured."""
    avro_default = [dict(entry, name=f"avro {entry['name']}") for entry in charted
                    if (entry["codec"], entry["level"]) == (DEFAULT_CODEC, default_level(DEFAULT_CODEC))]
    table = _markdown_table(
        ["setting", "MB", "x records", "x raw HTML", "write CPU s", "write MB/s", "read CPU s", "read MB/s",
         "write MiB", "read MiB"],
        [[entry["name"], f"{entry['written_bytes'] / MB:.2f}", f"{entry['ratio_to_records']:.2f}",
          f"{entry['ratio_to_raw_html']:.1f}", _number(entry["compress"]["cpu_seconds"], 3),
          _number(entry["compress"]["mb_per_cpu_second"], 1), _number(entry["decompress"]["cpu_seconds"], 3),
          _number(entry["decompress"]["mb_per_cpu_second"], 1), _mib(entry["compress"]["peak_memory_bytes"]),
          _mib(entry["decompress"]["peak_memory_bytes"])]
         for entry in avro_default + formats],
    )
    return [f"The formats (--format), beside Avro's default (block size {block}); read: every record decoded to a "
            "dict, as read_corpus gives them:\n" + table]


def format_tables(report: dict) -> str:
    """The seed's three tables (size, compress time, decompress time by codec
    and level, at the default block size) and one row per setting with all numbers."""
    charted = [entry for entry in report["measurements"] if entry["on_chart"]]
    block = size_label(report["default_block_size"])
    combined = _markdown_table(
        ["setting", "block", "MB", "x records", "x raw HTML", "comp s", "comp CPU s", "comp MB/s", "comp MiB",
         "dec s", "dec CPU s", "dec MB/s", "dec MiB", "runs"],
        [[entry["name"], size_label(entry["block_size"]), f"{entry['written_bytes'] / MB:.2f}",
          f"{entry['ratio_to_records']:.2f}", f"{entry['ratio_to_raw_html']:.1f}",
          _number(entry["compress"]["wall_seconds"], 3), _number(entry["compress"]["cpu_seconds"], 3),
          _number(entry["compress"]["mb_per_cpu_second"], 1), _mib(entry["compress"]["peak_memory_bytes"]),
          _number(entry["decompress"]["wall_seconds"], 3), _number(entry["decompress"]["cpu_seconds"], 3),
          _number(entry["decompress"]["mb_per_cpu_second"], 1), _mib(entry["decompress"]["peak_memory_bytes"]),
          f"{entry['compress']['runs']}/{entry['decompress']['runs']}"]
         for entry in report["measurements"]],
    )
    format_table = _formats_table(report["formats"], charted, block) if report.get("formats") else []
    return "\n\n".join([
        f"{report['documents']} of the corpus's {report['corpus_documents']} documents: "
        f"{report['raw_html_bytes'] / MB:.1f} MB of raw HTML, "
        f"{report['uncompressed_bytes'] / MB:.1f} MB of uncompressed Avro records.",
        f"Size (MB), block size {block}:\n"
        + _level_table(charted, lambda entry: f"{entry['written_bytes'] / MB:.2f}"),
        f"Compression time (CPU s, median), block size {block}:\n"
        + _level_table(charted, lambda entry: _number(entry["compress"]["cpu_seconds"], 3)),
        f"Decompression time (CPU s, median), block size {block}:\n"
        + _level_table(charted, lambda entry: _number(entry["decompress"]["cpu_seconds"], 3)),
        "All settings (x: times smaller than; MB/s: MB of uncompressed records per CPU second; "
        "MiB: peak memory; runs: compress/decompress runs timed):\n" + combined,
    ] + format_table)
