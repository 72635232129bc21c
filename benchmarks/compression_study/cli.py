"""The study's command line: `python -m benchmarks.compression_study --input ... --output ...`."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from benchmarks.compression_study.chart import chart_unavailable, draw_chart
from benchmarks.compression_study.formats import FORMAT_SETTINGS, measure_formats
from benchmarks.compression_study.measure import (BLOCK_SIZES, DEFAULT_REPEATS, DEFAULT_SAMPLE_MB,
                                                  DEFAULT_SINGLE_RUN_OVER_SECONDS, KIB, LEVELS, MB, MIB,
                                                  QUICK_BLOCK_SIZES, measure, sample_records, study_settings,
                                                  unwritable_codecs)
from benchmarks.compression_study.records import UsageError, load_records
from benchmarks.compression_study.report import build_report, format_tables, size_label
from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL

REPORT_JSON = "compression.json"
REPORT_CHART = "compression.png"


def parse_size(text: str) -> int:
    """Bytes from `65536`, `16K`, `16KiB`, `1M` or `1MiB`."""
    match = re.fullmatch(r"(\d+)\s*(?:([KM])(?:I?B)?)?", text.strip().upper())
    if not match or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(f"not a block size: {text!r} (use bytes, or a number with K or M)")
    return int(match[1]) * {None: 1, "K": KIB, "M": MIB}[match[2]]


def _size_list(text: str) -> list[int]:
    return [parse_size(size) for size in text.split(",")]


def _codec_list(text: str) -> list[str]:
    codecs = list(dict.fromkeys(codec.strip() for codec in text.split(",") if codec.strip()))
    unknown = [codec for codec in codecs if codec not in LEVELS]
    if unknown or not codecs:
        raise argparse.ArgumentTypeError(f"unknown codec(s) {', '.join(unknown) or '(none given)'}; "
                                         f"choose from {', '.join(LEVELS)}")
    return codecs


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.compression_study",
        description="Measure the size, speed and memory of every Avro codec, level and block size on a corpus, and "
                    "of Parquet and JSON Lines with their codecs.",
    )
    parser.add_argument("--input", required=True, metavar="DIR_OR_WARC_PATTERN",
                        help="A directory of corpus-*.avro files the pipeline wrote, or WARC files (path or glob), "
                             "which are run through the pipeline's stages in process.")
    parser.add_argument("--output", required=True, metavar="REPORT_DIR",
                        help=f"Directory for {REPORT_JSON} and {REPORT_CHART}.")
    parser.add_argument("--codecs", type=_codec_list, default=list(LEVELS), metavar="CODEC,...",
                        help=f"Codecs to measure (default: all of {', '.join(LEVELS)}).")
    parser.add_argument("--block-sizes", type=_size_list, default=list(BLOCK_SIZES), metavar="SIZE,...",
                        help="Avro block sizes (sync_interval) of the block-size sweep (default 16K,256K,1M,4M). "
                             "Every level is measured at the pipeline's default "
                             f"({size_label(DEFAULT_SYNC_INTERVAL)}), "
                             "the other sizes at each codec's default level.")
    parser.add_argument("--repeats", type=_positive_int, default=DEFAULT_REPEATS,
                        help=f"Runs per setting and operation; the median is reported (default {DEFAULT_REPEATS}).")
    parser.add_argument("--single-run-over", type=float, default=DEFAULT_SINGLE_RUN_OVER_SECONDS, metavar="SECONDS",
                        help="Time an operation once when its first run takes longer than this "
                             f"(default {DEFAULT_SINGLE_RUN_OVER_SECONDS}).")
    parser.add_argument("--sample-mb", type=float, default=DEFAULT_SAMPLE_MB, metavar="MB",
                        help="Measure evenly spaced documents of about this many MB of uncompressed records "
                             f"(default {DEFAULT_SAMPLE_MB:g}); 0 measures them all.")
    parser.add_argument("--no-formats", action="store_true",
                        help="Measure Avro only, not Parquet and JSON Lines ("
                             + ", ".join(f"{name} {codec}" + ("" if level is None else f" {level}")
                                         for name, codec, level in FORMAT_SETTINGS) + ").")
    parser.add_argument("--quick", action="store_true",
                        help=f"A few levels per codec, block sizes {' and '.join(map(size_label, QUICK_BLOCK_SIZES))} "
                             "only (for tests and a first look).")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    no_chart = chart_unavailable()
    if no_chart:
        print(no_chart, file=sys.stderr)
    try:
        corpus = load_records(args.input)
    except UsageError as error:
        print(f"python -m benchmarks.compression_study: error: {error}", file=sys.stderr)
        return 2
    records = sample_records(corpus, int(args.sample_mb * MB)) if args.sample_mb > 0 else corpus
    unwritable = unwritable_codecs(args.codecs)
    for codec, reason in unwritable.items():
        print(f"skipping codec {codec}: it cannot write here ({reason})", file=sys.stderr)
    codecs = [codec for codec in args.codecs if codec not in unwritable]
    settings = study_settings(codecs, QUICK_BLOCK_SIZES if args.quick else args.block_sizes, args.quick)
    print(f"measuring {len(settings)} settings on {len(records)} of {len(corpus)} documents", file=sys.stderr)
    measurements = measure(records, settings, args.repeats, args.single_run_over)
    format_measurements = [] if args.no_formats else measure_formats(records, args.repeats, args.single_run_over)
    report = build_report(records, measurements, len(corpus), format_measurements, input=args.input,
                          sample_mb=args.sample_mb,
                          repeats=args.repeats, single_run_over_seconds=args.single_run_over,
                          unwritable_codecs=unwritable,
                          study_seconds=round(time.perf_counter() - started, 1))
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    (output / REPORT_JSON).write_text(json.dumps(report, indent=2) + "\n")
    if not no_chart:
        draw_chart(report, output / REPORT_CHART)
    print(format_tables(report))
    print(f"\n{REPORT_JSON}{'' if no_chart else f' and {REPORT_CHART}'} are in {output}")
    return 0
