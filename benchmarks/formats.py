"""Reading speed per input format: read_warc over the same captures as WARC(.gz, .zst, .lz4), ARC and ARC.gz.

    python -m benchmarks.formats                 # 2,000 captures of the developer corpus's pages
    python -m benchmarks.formats --captures 500 --reps 3

The captures are the HTML pages of the developer corpus (`$WEBCORPUS_CORPUS`,
default `devcorpus.default_corpus()`), taken round after round under new URLs until
there are `--captures` of them, written with `pipeline.sample` in each
format (the zstd dictionary trained on the first 200 records, as a crawler
would on its first records; ARC gzipped per record and as one stream).
Reported per format: records read, pages, stored MB, the MB of its
uncompressed records (WARC's, or ARC's: an ARC file holds only the
responses), the median CPU time of `--reps` reads of the whole file (one read of
each file a round; CPU time, since the machine is shared: wall time moves
with the other tenants' load), MB/s of
stored and of uncompressed bytes, and the speed relative to WARC.gz (the
same pages: WARC.gz's time over the format's).
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import tempfile
import time
from pathlib import Path

import zstandard

from devcorpus import default_corpus
from pipeline.sample import Capture, arc_bytes, capture_records, warc_bytes
from transforms.document import Document
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc

REFERENCE = "WARC.gz (per record)"


def corpus_captures(count: int) -> list[Capture]:
    corpus = default_corpus()
    pages = []
    for path in sorted(glob.glob(f"{corpus}/warc/*.warc.gz")):
        pages += [outcome for outcome in read_warc(lambda path=path: open_uncompressed(path), path, on_note=lambda n: None)
                  if isinstance(outcome, Document)]
    if not pages:
        raise SystemExit(f"no pages in {corpus}/warc: set WEBCORPUS_CORPUS")
    return [Capture(f"{pages[n % len(pages)].url}#round-{n // len(pages)}", pages[n % len(pages)].payload,
                    content_type=pages[n % len(pages)].content_type or None,
                    date=f"2026-01-15T10:{n // 60 % 60:02}:{n % 60:02}Z") for n in range(count)]


def formats(captures: list[Capture]) -> dict[str, tuple[bytes, int]]:
    """Each format's file of the captures, and the size of its uncompressed records (WARC's or ARC's)."""
    samples = [record for capture in captures[:70] for record in capture_records(capture, "1.0")]
    dictionary = zstandard.train_dictionary(112 << 10, samples).as_bytes()
    warc_size = len(warc_bytes(captures, "none"))
    arc_size = len(arc_bytes(captures, "none"))
    return {
        REFERENCE: (warc_bytes(captures, "record"), warc_size),
        "WARC": (warc_bytes(captures, "none"), warc_size),
        "WARC.zst": (warc_bytes(captures, "zstd"), warc_size),
        "WARC.zst + dictionary": (warc_bytes(captures, "zstd", zstd_dictionary=dictionary), warc_size),
        "WARC.lz4": (warc_bytes(captures, "lz4"), warc_size),
        "ARC": (arc_bytes(captures, "none"), arc_size),
        "ARC.gz (per record)": (arc_bytes(captures, "record"), arc_size),
        "ARC.gz (whole stream)": (arc_bytes(captures, "file"), arc_size),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    captures = corpus_captures(args.captures)
    print(f"{len(captures)} captures; median of {args.reps} reads of each file; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'format':24} {'records':>8} {'pages':>6} {'stored MB':>10} {'records MB':>11} {'CPU s':>7} "
          f"{'MB/s stored':>12} {'MB/s records':>13} {'x ' + REFERENCE:>24}")
    with tempfile.TemporaryDirectory() as work:
        files = {}
        for number, (name, (data, records_size)) in enumerate(formats(captures).items()):
            path = Path(work) / f"input-{number}"
            path.write_bytes(data)
            files[name] = path, len(data), records_size
        # Round after round, each file read once a round: the other tenants' load falls on every format alike.
        times = {name: [] for name in files}
        records = {}
        for _ in range(args.reps):
            for name, (path, _, _) in files.items():
                started = time.process_time()
                outcomes = list(read_warc(lambda path=path: open(path, "rb"), str(path), on_note=lambda n: None))
                times[name].append(time.process_time() - started)
                records[name] = len(outcomes), sum(isinstance(outcome, Document) for outcome in outcomes)
    reference_seconds = statistics.median(times[REFERENCE])
    for name, (_, stored_size, records_size) in files.items():
        seconds = statistics.median(times[name])
        read, pages = records[name]
        print(f"{name:24} {read:>8} {pages:>6} {stored_size / 1e6:>10.1f} {records_size / 1e6:>11.1f} "
              f"{seconds:>7.2f} {stored_size / 1e6 / seconds:>12.1f} {records_size / 1e6 / seconds:>13.1f} "
              f"{reference_seconds / seconds:>24.2f}")

if __name__ == "__main__":
    main()
