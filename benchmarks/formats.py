"""Reading speed per input format: read_warc over the same captures as WARC.gz, WARC.zst, WARC.lz4, ARC and ARC.gz.

    python -m benchmarks.formats                 # 2,000 captures of the developer corpus's pages
    python -m benchmarks.formats --captures 500 --reps 5

The captures are the HTML pages of the developer corpus (`$WEBCORPUS_CORPUS`,
default `../shared/corpus`), taken round after round under new URLs until
there are `--captures` of them, written with `pipeline.sample` in each
format (the zstd dictionary trained on the first 200 records, as a crawler
would on its first records). Reported per format: records read, stored MB,
and MB/s of stored bytes and of the uncompressed WARC's bytes (median of
`--reps` runs of reading the whole file).
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

from pipeline.sample import Capture, arc_bytes, capture_records, warc_bytes
from transforms.document import Document
from transforms.read_warc import open_uncompressed, read_warc


def corpus_captures(count: int) -> list[Capture]:
    corpus = os.environ.get("WEBCORPUS_CORPUS", str(Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"))
    pages = []
    for path in sorted(glob.glob(f"{corpus}/warc/*.warc.gz")):
        pages += [outcome for outcome in read_warc(lambda path=path: open_uncompressed(path), path, on_note=lambda n: None)
                  if isinstance(outcome, Document)]
    if not pages:
        raise SystemExit(f"no pages in {corpus}/warc: set WEBCORPUS_CORPUS")
    return [Capture(f"{pages[n % len(pages)].url}#round-{n // len(pages)}", pages[n % len(pages)].payload,
                    content_type=pages[n % len(pages)].content_type or None,
                    date=f"2026-01-15T10:{n // 60 % 60:02}:{n % 60:02}Z") for n in range(count)]


def formats(captures: list[Capture]) -> dict[str, bytes]:
    samples = [record for capture in captures[:70] for record in capture_records(capture, "1.0")]
    dictionary = zstandard.train_dictionary(112 << 10, samples).as_bytes()
    return {
        "WARC.gz (per record)": warc_bytes(captures, "record"),
        "WARC.zst": warc_bytes(captures, "zstd"),
        "WARC.zst + dictionary": warc_bytes(captures, "zstd", zstd_dictionary=dictionary),
        "WARC.lz4": warc_bytes(captures, "lz4"),
        "ARC": arc_bytes(captures, "none"),
        "ARC.gz (per record)": arc_bytes(captures, "record"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    captures = corpus_captures(args.captures)
    plain_size = len(warc_bytes(captures, "none"))
    print(f"{len(captures)} captures; uncompressed WARC {plain_size / 1e6:.1f} MB; median of {args.reps}")
    print(f"{'format':24} {'records':>8} {'pages':>6} {'stored MB':>10} {'s':>7} {'MB/s stored':>12} {'MB/s WARC':>10}")
    with tempfile.TemporaryDirectory() as work:
        for name, data in formats(captures).items():
            path = Path(work) / "input"
            path.write_bytes(data)
            times = []
            for _ in range(args.reps):
                started = time.perf_counter()
                outcomes = list(read_warc(lambda: open(path, "rb"), str(path), on_note=lambda n: None))
                times.append(time.perf_counter() - started)
            seconds = statistics.median(times)
            pages = sum(isinstance(outcome, Document) for outcome in outcomes)
            print(f"{name:24} {len(outcomes):>8} {pages:>6} {len(data) / 1e6:>10.1f} {seconds:>7.2f} "
                  f"{len(data) / 1e6 / seconds:>12.1f} {plain_size / 1e6 / seconds:>10.1f}")


if __name__ == "__main__":
    main()
