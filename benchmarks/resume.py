"""Resume: the time of a rerun after a build was killed at 25 %, 50 % and 90 % of its units, beside the whole build.

    python -m benchmarks.resume [--captures 160000] [--per-file 10000] [--range-size BYTES] [--runs 1]
    python -m benchmarks.resume --input '/work/shared/corpus/warc/*.warc.gz' --range-size 1048576

Builds the input once from scratch (its units: one corpus shard each), then,
for each fraction, starts the same build, kills its process group (SIGKILL)
once that fraction of the units is recorded (the test hook
`WEBCORPUS_TEST_HOLD_AFTER_UNITS` holds the build there, so the kill lands at
a known point), and times the rerun, which must publish the same bytes as
the build from scratch. The input: `--input` patterns, or `--captures`
generated captures (`benchmarks.scale`'s, in files of `--per-file`). Prints
wall and CPU seconds (user + system of the process tree) of each; the
figures are in benchmarks/README.md. Nothing in it is a test.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks import medians
from benchmarks.scale import generate
from benchmarks.throughput import REPO, checked, pipeline_command, run_measured
from pipeline.resumable import RESUME_PREFIX
from transforms.state.unit_ledger import HOLD_AFTER_UNITS, RECORD_SUFFIX, UNITS

FRACTIONS = (0.25, 0.5, 0.9)


def digests(output: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(output.iterdir())
            if path.is_file()}


def recorded(output: Path) -> int:
    return sum(len(list((path / UNITS).glob(f"*{RECORD_SUFFIX}"))) for path in output.glob(f"{RESUME_PREFIX}*"))


def kill_after(command: list[str], output: Path, units: int) -> float:
    """Runs `command` until it recorded `units` units, then kills its process group; returns the seconds it ran."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, **{HOLD_AFTER_UNITS: str(units)}), start_new_session=True)
    while recorded(output) < units and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    if recorded(output) < units:
        raise SystemExit(f"the build ended before it recorded {units} units")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--input", action="append", help="Input patterns (instead of generated captures).")
    parser.add_argument("--captures", type=int, default=160_000)
    parser.add_argument("--per-file", type=int, default=10_000)
    parser.add_argument("--range-size", type=int, default=None)
    parser.add_argument("--runs", type=int, default=1, help="Repeats of each measurement (medians are printed).")
    parser.add_argument("--fractions", type=float, nargs="+", default=FRACTIONS,
                        help="Shares of the units after which a build is killed (default 0.25 0.5 0.9).")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-resume-benchmark")
    args = parser.parse_args(argv)
    inputs = args.input or generate(args.captures, args.per_file, args.work / f"in-{args.captures}")
    extra = ("--range-size", str(args.range_size)) if args.range_size else ()
    size = sum(os.path.getsize(path) for pattern in inputs for path in glob.glob(pattern))
    reference = args.work / "reference"
    output = args.work / "out"
    rows: dict[str, list[dict]] = {"whole build": []}
    for fraction in args.fractions:
        rows[f"rerun after a kill at {fraction:.0%}"] = []
    units = None
    for _ in range(args.runs):
        shutil.rmtree(reference, ignore_errors=True)
        whole = checked(run_measured(pipeline_command(inputs, reference, extra)), "the build from scratch")
        rows["whole build"].append(whole)
        units = len(list(reference.glob("corpus-*")))
        expected = digests(reference)
        for fraction in args.fractions:
            shutil.rmtree(output, ignore_errors=True)
            killed_at = max(1, round(units * fraction))
            kill_after(pipeline_command(inputs, output, extra), output, killed_at)
            rerun = checked(run_measured(pipeline_command(inputs, output, extra)), "the rerun")
            if digests(output) != expected:
                raise SystemExit(f"the rerun after a kill at {fraction:.0%} differs from the build from scratch")
            rerun["units_reused"] = recorded_line(rerun["output"])
            rows[f"rerun after a kill at {fraction:.0%}"].append(rerun)
    print(f"input: {size / 1e6:.0f} MB in {len(inputs)} patterns; {units} units; runs: {args.runs}")
    print(f"{'':<28} {'wall s':>8} {'CPU s':>8} {'vs whole':>9} {'units reused':>13}")
    whole_wall = medians(rows["whole build"])["seconds"]
    for name, runs in rows.items():
        wall, cpu = medians(runs).values()
        reused = runs[0].get("units_reused", "")
        print(f"{name:<28} {wall:8.1f} {cpu:8.1f} {wall / whole_wall:8.0%} {reused:>13}")
    print(json.dumps({name: [{"seconds": round(run["seconds"], 1), "cpu_seconds": round(run["cpu_seconds"], 1)}
                             for run in runs] for name, runs in rows.items()}))
    return 0


def recorded_line(output: str) -> str:
    """The count of reused units the rerun said ("resuming ...: N units ...")."""
    for line in output.splitlines():
        if "resuming the build" in line:
            return line.split(": ")[-1].split(" ", 1)[0]
    return "0"


if __name__ == "__main__":
    raise SystemExit(main())
