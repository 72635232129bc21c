"""The local runner's repairs that are for speed only, each measured by turning it off in the same run.

`python -m benchmarks.runner_repairs` builds the developer corpus (or `--input`) with each repair as it is and
with that one repair undone, alternated (ABBA...), and prints the medians and the share of the build's wall time
the repair saves. pipeline/runners/ keeps a speed-only repair only where it saves at least 3% of the builds it
acts on (docs/engines.md gives the figures):

- `dofn-specs`: Beam's answer to a DoFn's state and timer specs remembered per DoFn class
  (`fn_api_patches.remembered_dofn_specs`): every build, on any runner;
- `close-at-once`: the worker handlers closed at once at the end of a run (`fn_api_patches.close_all_at_once`):
  builds with worker processes (`--direct_running_mode=multi_processing`);
- `worker-fork`: worker processes forked from a server that has imported Beam and webcorpus
  (`pipeline/runners/worker_fork.py`): builds with worker processes;
- `sampler-period`: a bundle's state sampler woken every 10 ms, not 200 ms, so that the bundle's end waits less for
  it (`fn_api_patches.SAMPLING_PERIOD_MS`): every build (undone here in the runner's own process).

The repairs that keep records or bound memory (the other patches of `fn_api_patches`) are not speed repairs and are
not measured here: tests/test_local_runner.py shows each fault they mend.
"""

from __future__ import annotations

import argparse
import glob
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import alternated_runs, medians
from devcorpus import default_corpus
from benchmarks.throughput import checked, run_measured, worker_processes

# What undoes each repair in the build's own process, before the command runs.
UNDO = {
    "dofn-specs": ("import contextlib; from pipeline.runners import fn_api_patches; "
                   "fn_api_patches.remembered_dofn_specs = contextlib.nullcontext"),
    "close-at-once": ("from pipeline.runners import fn_api_patches; "
                      "from apache_beam.runners.portability.fn_api_runner import worker_handlers; "
                      "fn_api_patches.close_all_at_once = worker_handlers.WorkerHandlerManager.close_all"),
    "worker-fork": ("from pipeline.runners import worker_fork, local_runner; "
                    "worker_fork.start_early = lambda argv: None; local_runner.ForkServer = lambda: None"),
    "sampler-period": "from pipeline.runners import fn_api_patches; fn_api_patches.SAMPLING_PERIOD_MS = 200",
}
# The builds each repair acts on.
NEEDS_WORKERS = {"dofn-specs": False, "close-at-once": True, "worker-fork": True, "sampler-period": False}


def build_command(inputs: list[str], output: Path, extra: tuple[str, ...], undo: str | None) -> list[str]:
    """`python -m pipeline` on `inputs`, run through its entry point with `undo` done first (if any)."""
    argv = ["--runner=DirectRunner", "--quiet", "--output", str(output), *extra]
    for path in inputs:
        argv += ["--input", path]
    code = "; ".join(filter(None, (f"import sys; sys.argv = ['python -m pipeline', *{argv!r}]", undo,
                                   "from pipeline.launch import main; sys.exit(main())")))
    return [sys.executable, "-c", code]


def measure(repair: str, inputs: list[str], reps: int, workers: int, work: Path) -> dict:
    extra = worker_processes(workers) if NEEDS_WORKERS[repair] else ()
    commands = {"as it is": build_command(inputs, work / "kept", extra, None),
                "undone": build_command(inputs, work / "undone", extra, UNDO[repair])}

    def run(name: str) -> dict:
        shutil.rmtree(work / ("kept" if name == "as it is" else "undone"), ignore_errors=True)
        return checked(run_measured(commands[name]), f"{repair}: {name}")

    runs = alternated_runs({name: (lambda name=name: run(name)) for name in commands}, reps,
                           lambda name, made: f"  {repair:<14} {name:<9} {made['seconds']:6.2f} s wall "
                                              f"{made['cpu_seconds']:6.2f} s CPU")
    kept, undone = medians(runs["as it is"]), medians(runs["undone"])
    return {"repair": repair, "workers": workers if extra else 1, "kept": kept, "undone": undone,
            "saves": (undone["seconds"] - kept["seconds"]) / undone["seconds"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.runner_repairs", description=__doc__.split("\n")[0])
    parser.add_argument("--input", action="append", help="WARC files (default: the developer corpus's)")
    parser.add_argument("--repairs", default=",".join(UNDO), help=f"comma-separated, of {', '.join(UNDO)}")
    parser.add_argument("--reps", type=int, default=5, help="alternated runs of each (default 5)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes where a repair needs them")
    args = parser.parse_args(argv)
    repairs = [name.strip() for name in args.repairs.split(",") if name.strip()]
    unknown = set(repairs) - set(UNDO)
    if unknown:
        parser.error(f"unknown repairs: {', '.join(sorted(unknown))}; choose from {', '.join(UNDO)}")
    inputs = args.input or sorted(glob.glob(str(default_corpus() / "warc" / "*.warc.gz")))
    if not inputs:
        parser.error("no input: give --input or set WEBCORPUS_CORPUS")
    with tempfile.TemporaryDirectory(prefix="runner-repairs-") as work:
        rows = [measure(repair, inputs, args.reps, args.workers, Path(work)) for repair in repairs]
    print(f"\n{'repair':<14} {'workers':>7} {'as it is':>10} {'undone':>10} {'saves':>7}  (median wall, {args.reps} runs)")
    for row in rows:
        print(f"{row['repair']:<14} {row['workers']:>7} {row['kept']['seconds']:>9.2f}s {row['undone']['seconds']:>9.2f}s "
              f"{row['saves']:>6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
