"""Engines side by side: the local runner with 1 and 2 workers, and Dask on a scheduler and 2 worker processes.

    python -m benchmarks.engines [--mb 200,800] [--reps 3] [--engines local-1,local-2,dask-2]

For each size of `--mb` (MB of HTML; `benchmarks.throughput`'s generated
corpus, cached in `--work`: 800 MB of HTML is about 175 MB of WARC.gz in
100 files, 7,238 captures), builds the corpus with each engine of
`--engines`, alternating (ABC, CBA, ...), `--reps` times each, the input given
as one glob pattern:

- local-1: `--direct_num_workers=1 --direct_running_mode=multi_processing`
  (what the local runner's one worker costs, in the mode that 2 workers use);
- local-2: the same with `--direct_num_workers=2`;
- dask-2: `--runner=DaskRunner` on a fresh cluster per run, `dask scheduler`
  and `dask worker --nworkers 2 --nthreads 1` on 127.0.0.1, as docs/engines.md
  shows (the cluster's start is not timed).

Prints, per run and as medians: wall time, CPU time (user + system of the
command's process tree and of the cluster's processes), the peak RSS of all
those processes together (polled with psutil), and whether every engine
wrote the same files (their SHA-256 in the manifests). Then the ratios to
local-1 and, with two sizes, each engine's peak at the larger size over its
peak at the smaller. The machine is shared: only runs side by side compare,
and nothing here is a test. benchmarks/README.md has the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import alternated_runs, medians, parse_sections
from benchmarks.throughput import (REPO, checked, generate_corpus, pipeline_command, run_measured,
                                   worker_processes)
from devcorpus import default_corpus
from devcorpus.pages import load_pages

ENGINES = ("local-1", "local-2", "dask-2")
START_TIMEOUT = 120


@contextlib.contextmanager
def dask_cluster(work: Path):
    """A scheduler and `dask worker --nworkers 2 --nthreads 1` on 127.0.0.1: yields (address, processes())."""
    import psutil
    from distributed import Client

    scheduler_file = work / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    python = sys.executable
    logs = open(work / "dask-cluster.log", "ab")
    commands = [
        [python, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(scheduler_file)],
        [python, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
         "--nworkers", "2", "--nthreads", "1", "--no-dashboard", "--local-directory", str(work / "dask-workers")],
    ]
    started = []
    try:
        for command in commands:
            started.append(subprocess.Popen(command, cwd=REPO, stdout=logs, stderr=subprocess.STDOUT))
            deadline = time.monotonic() + START_TIMEOUT
            while not scheduler_file.exists():
                if time.monotonic() > deadline or started[0].poll() is not None:
                    raise SystemExit(f"the Dask scheduler did not start: {work / 'dask-cluster.log'}")
                time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        with Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
        roots = [psutil.Process(process.pid) for process in started]

        def processes():
            found = []
            for root in roots:
                with contextlib.suppress(psutil.NoSuchProcess):
                    found += [root] + root.children(recursive=True)
            return found

        yield address.removeprefix("tcp://"), processes
    finally:
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        logs.close()


def run_engine(engine: str, pattern: str, output: Path, work: Path) -> dict:
    shutil.rmtree(output, ignore_errors=True)
    if engine == "dask-2":
        with dask_cluster(work) as (address, processes):
            command = pipeline_command([pattern], output, ("--runner=DaskRunner", f"--dask_client_address={address}"))
            # (pipeline_command names the DirectRunner first; the last --runner counts.)
            return checked(run_measured(command, companions=processes), engine)
    workers = int(engine.removeprefix("local-"))
    return checked(run_measured(pipeline_command([pattern], output, worker_processes(workers))), engine)


def measure_size(mb: float, engines: list[str], reps: int, work: Path, pages) -> dict:
    files = max(4, round(mb / 8))
    corpus_dir = work / f"corpus-{mb:g}"
    manifest = generate_corpus(pages, mb, corpus_dir, files, seed=1)
    print(f"\n== {mb:g} MB of HTML: {manifest['records']} captures, {manifest['warc_bytes'] / 1e6:.0f} MB of WARC.gz "
          f"in {len(manifest['files'])} files; {reps} runs each, alternating", flush=True)
    pattern = str(corpus_dir / "*.warc.gz")
    runs = alternated_runs(
        {engine: lambda engine=engine: run_engine(engine, pattern, work / f"out-{mb:g}-{engine}", work)
         for engine in engines}, reps,
        lambda engine, run: f"  {engine:<8} {run['seconds']:6.1f} s wall {run['cpu_seconds']:6.1f} s CPU  peak "
                            f"{run['peak_rss_mib']:6.0f} MiB  (load before {run['load_before']:.1f})")
    same = len({digest(work / f"out-{mb:g}-{engine}") for engine in engines}) == 1
    return {"mb": mb, "captures": manifest["records"], "warc_mb": manifest["warc_bytes"] / 1e6,
            "medians": {engine: medians(engine_runs, ("seconds", "cpu_seconds", "peak_rss_mib"))
                        for engine, engine_runs in runs.items()},
            "same_output": same}


def digest(output: Path) -> str:
    """The SHA-256 of every file the build wrote, as its manifest lists them."""
    manifest = json.loads((output / "manifest.json").read_text())
    return json.dumps(sorted((entry["path"], entry["sha256"]) for entry in manifest["outputs"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engines", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--corpus", type=Path, default=default_corpus(),
                        help="the developer corpus, whose pages are remixed (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-engines",
                        help="where the generated corpora and outputs go (default: %(default)s)")
    parser.add_argument("--mb", default="200,800", help="MB of HTML of each generated corpus (default %(default)s)")
    parser.add_argument("--reps", type=int, default=3, help="runs of each engine per size (default %(default)s)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, of {', '.join(ENGINES)}")
    args = parser.parse_args(argv)
    engines = parse_sections(parser, args.engines, ENGINES)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"webcorpus engines benchmark: {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{load:.1f}' for load in os.getloadavg())}")
    pages = load_pages(args.corpus)
    results = [measure_size(float(mb), engines, args.reps, args.work, pages) for mb in args.mb.split(",")]
    for result in results:
        print(f"\n{result['mb']:g} MB of HTML ({result['warc_mb']:.0f} MB of WARC.gz), medians; the same corpus from "
              f"every engine: {'yes' if result['same_output'] else 'NO'}")
        base = result["medians"].get("local-1")
        for engine, median in result["medians"].items():
            ratio = f"  {base['seconds'] / median['seconds']:.2f}x local-1's speed" if base else ""
            print(f"  {engine:<8} {median['seconds']:6.1f} s wall {median['cpu_seconds']:6.1f} s CPU  peak "
                  f"{median['peak_rss_mib']:6.0f} MiB{ratio}")
    if len(results) > 1:
        for engine in engines:
            growth = results[-1]["medians"][engine]["peak_rss_mib"] / results[0]["medians"][engine]["peak_rss_mib"]
            print(f"{engine}: peak {growth:.2f}x at {results[-1]['mb'] / results[0]['mb']:g}x the input")
    return 0 if all(result["same_output"] for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
