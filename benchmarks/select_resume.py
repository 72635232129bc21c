"""Select's resume: the time of a selection rerun after it was killed at about half of its units, beside the whole
selection, on the developer corpus's annotated build.

    python -m benchmarks.select_resume [--corpus DIR] [--mb MB] [--range-size BYTES] [--fraction 0.5] [--reps 3] [--work DIR]

Makes the annotated build of the developer corpus (`--corpus`, default `$WEBCORPUS_CORPUS`), or of a generated crawl
of `--mb` megabytes (`benchmarks.select_cost.generated_crawl`), once (`--annotate --quality fineweb-recipe`, with
`--range-size` when given: smaller ranges, more units), then, `--reps` times: the
selection `python -m pipeline.select ANNOTATED --output DIR --quality fineweb-recipe` from scratch; the same
selection killed (SIGKILL, its process group) once `--fraction` of its units (SOURCE's shards) are recorded
(`benchmarks.resume.kill_after`); and its rerun, which must publish the bytes of the selection from scratch. Prints
the medians of wall and CPU seconds (the process tree's) of each and the rerun's share of the whole; the figures are
in docs/select.md. Nothing in it is a test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import medians
from benchmarks.resume import digests, kill_after, recorded_line
from benchmarks.select_cost import build_command, generated_crawl, select_command
from benchmarks.throughput import checked, run_measured
from devcorpus import default_corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=None, help="The developer corpus (default $WEBCORPUS_CORPUS).")
    parser.add_argument("--mb", type=float, default=None, help="A generated crawl of this size in place of the corpus.")
    parser.add_argument("--range-size", type=int, default=None, help="The annotated build's --range-size.")
    parser.add_argument("--fraction", type=float, default=0.5, help="The share of units after which it is killed.")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-select-resume")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    ranges = ("--range-size", str(args.range_size)) if args.range_size else ()
    inputs = generated_crawl(args.work, args.mb, corpus) if args.mb else str(corpus / "warc" / "*.warc.gz")
    annotated = args.work / (f"annotated-{args.mb:g}mb" if args.mb else "annotated") / (
        f"ranges-{args.range_size}" if args.range_size else "ranges-default")
    if not (annotated / "manifest.json").exists():
        checked(run_measured(build_command(inputs, annotated, "--annotate", "--quality", "fineweb-recipe", *ranges)),
                "the annotated build")
    whole, rerun = args.work / "whole", args.work / "rerun"
    units = len(list(annotated.glob("corpus-*")))
    killed_at = max(1, round(units * args.fraction))
    rows: dict[str, list[dict]] = {"whole selection": [], f"rerun after a kill at {killed_at}/{units} units": []}
    reused = ""
    for _ in range(args.reps):
        shutil.rmtree(whole, ignore_errors=True)
        rows["whole selection"].append(checked(run_measured(select_command(annotated, whole, "--quality",
                                                                           "fineweb-recipe")), "the selection"))
        shutil.rmtree(rerun, ignore_errors=True)
        command = select_command(annotated, rerun, "--quality", "fineweb-recipe")
        kill_after(command, rerun, killed_at)
        run = checked(run_measured(command), "the rerun")
        if digests(rerun) != digests(whole):
            raise SystemExit("the rerun differs from the selection from scratch")
        reused = recorded_line(run["output"])
        rows[f"rerun after a kill at {killed_at}/{units} units"].append(run)
    print(f"annotated build of {inputs}: {units} units (shards); {args.reps} runs each, medians; "
          f"units reused by the rerun: {reused}")
    whole_wall, whole_cpu = medians(rows["whole selection"]).values()
    for name, runs in rows.items():
        wall, cpu = medians(runs).values()
        print(f"  {name:<36} {wall:6.2f} s wall ({wall / whole_wall:4.0%})  {cpu:6.2f} s CPU ({cpu / whole_cpu:4.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
