"""Scale: peak memory per worker stays flat when the input doubles (`--captures` and twice as many).

    python -m benchmarks.scale [--captures 1000000] [--per-file 10000]

Generates `--captures` small captures (and, in a second run, twice as many)
in WARC files of `--per-file` captures each (gzipped per record, written
with `pipeline.sample.warc_bytes`), builds each with 2 workers
(`--direct_num_workers=2 --direct_running_mode=multi_processing`) and prints
the wall time, the peak RSS of the largest worker process, of the runner's
process (Beam's local runner holds what goes through a shuffle: on a cluster
that is the shuffle service's disk), of the whole process tree, and the
side-file shards written. The captures: a page of
its own for 60 %, a hot key for 20 % (one boilerplate page, the same content
under every URL: HashDedup's per-key state and its survivor's duplicate
lists stay bounded), 404s for 20 % (listed in `skipped-*.jsonl`). The
default, a million, takes about 6-11 minutes on the project's 2-core machine,
and twice as many 13-16; benchmarks/README.md has the figures. Nothing in it
is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import fastavro

from benchmarks.throughput import checked, pipeline_command, run_measured, worker_processes
from pipeline.sample import Capture, warc_bytes

HOT_PAGE = b"<html><body><p>Accept cookies to continue.</p><p>This site uses cookies.</p></body></html>"
SIDE_FILE = re.compile(r"^(.*)-\d{5}-of-(\d{5})\.jsonl$")


def capture(index: int) -> Capture:
    url = f"https://site{index % 997}.example.org/page/{index}"
    kind = index % 5
    if kind == 0:
        return Capture(url, HOT_PAGE)
    if kind == 1:
        return Capture(url, b"<html><body><p>Not found.</p></body></html>", status=404)
    return Capture(url, (f"<html><head><title>Page {index}</title></head><body><p>Page {index} of site "
                         f"{index % 997} says {index * 7919 % 104729} things about {index % 31}.</p>"
                         "</body></html>").encode("utf-8"))


def generate(captures: int, per_file: int, directory: Path) -> list[str]:
    """WARC files holding captures 0 .. captures-1 (cached: kept for the same count)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for first in range(0, captures, per_file):
        path = directory / f"scale-{first:09d}.warc.gz"
        if not path.exists():
            written = path.with_suffix(".part")
            written.write_bytes(warc_bytes([capture(k) for k in range(first, min(first + per_file, captures))],
                                           filename=path.name))
            written.rename(path)
        paths.append(str(path))
    return paths


def measure(captures: int, per_file: int, work: Path) -> dict:
    inputs = generate(captures, per_file, work / f"in-{captures}")
    output = work / f"out-{captures}"
    shutil.rmtree(output, ignore_errors=True)
    run = checked(run_measured(pipeline_command(inputs, output, worker_processes(2))), f"the build of {captures} captures")
    shards: dict[str, int] = {}
    for name in os.listdir(output):
        match = SIDE_FILE.match(name)
        if match:
            shards[match.group(1)] = int(match.group(2))
    report = json.loads((output / "report.json").read_text())
    return {"captures": captures, "seconds": round(run["seconds"], 1), "cpu_seconds": round(run["cpu_seconds"], 1),
            "largest_worker_peak_mib": round(run["peak_child_rss_mib"]),
            "runner_peak_mib": round(run["peak_root_rss_mib"]),
            "tree_peak_mib": round(run["peak_rss_mib"]), "side_file_shards": shards,
            "records": report["records"], "hot_key": hot_key(output)}


def hot_key(output: Path) -> dict:
    """The record with the most duplicates (the boilerplate page): its count and how many URLs it lists."""
    hottest = {"duplicate_count": 0, "duplicate_urls": []}
    for path in sorted(output.glob("corpus-*.avro")):
        with open(path, "rb") as handle:
            for record in fastavro.reader(handle):
                if record["duplicate_count"] > hottest["duplicate_count"]:
                    hottest = record
    return {"duplicate_count": hottest["duplicate_count"], "listed_urls": len(hottest["duplicate_urls"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--captures", type=int, default=1_000_000,
                        help="captures of the first run; the second has twice as many (default %(default)s)")
    parser.add_argument("--per-file", type=int, default=10_000, help="captures per WARC file (default %(default)s)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-scale",
                        help="where the generated files and outputs go (default: %(default)s)")
    args = parser.parse_args(argv)
    results = [measure(count, args.per_file, args.work) for count in (args.captures, 2 * args.captures)]
    for result in results:
        print(json.dumps(result))
    for what in ("largest_worker", "runner"):
        growth = results[1][f"{what}_peak_mib"] / results[0][f"{what}_peak_mib"]
        print(f"{what.replace('_', ' ')}: {growth:.2f}x its peak at twice the input")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
