"""`--annotate`'s cost: the CPU of a build measuring every rule of `--quality fineweb-recipe` beside the same
build filtering with it.

    python -m benchmarks.annotate [--runs 3] [--generated-mb 0]

The input: the developer corpus's WARC files (`$WEBCORPUS_CORPUS`), and with `--generated-mb N` also a generated
crawl of about N MB (`benchmarks.extend`'s pages). Each build runs `--runs` times, the builds alternated (ABC,
CBA, ...): filtering (`--quality fineweb-recipe`), filtering with `--clean-text` (the annotated build writes
`clean_text` too), and annotating (`--annotate`). Prints the median wall and CPU seconds (user + system of the
process tree) of each, the records written, and the CPU ratios of annotating to each filtering build. The
figures are in benchmarks/README.md. Nothing in it is a test.
"""

from __future__ import annotations

import argparse
import glob
import json
import shutil
import tempfile
from pathlib import Path

from benchmarks import alternated_runs, medians
from benchmarks.extend import generate
from benchmarks.throughput import pipeline_command, run_measured
from devcorpus import default_corpus

BUILDS = {
    "filtering": ("--quality", "fineweb-recipe"),
    "filtering, --clean-text": ("--quality", "fineweb-recipe", "--clean-text"),
    "annotating": ("--quality", "fineweb-recipe", "--annotate"),
}


def records_written(output: Path) -> int:
    return json.loads((output / "report.json").read_text())["records"]["kept"]


def measure(inputs: list[str], work: Path, runs: int) -> dict[str, dict]:
    """Each build of `BUILDS` on `inputs`, `runs` times alternated: the medians, and the records written."""
    def build(name: str):
        def run() -> dict:
            output = work / name.replace(",", "").replace(" ", "-")
            shutil.rmtree(output, ignore_errors=True)
            result = run_measured(pipeline_command(inputs, output, ("--no-resume", *BUILDS[name])))
            if result["code"] != 0:
                raise SystemExit(f"the {name} build failed:\n{result['output'][-3000:]}")
            return dict(result, records=records_written(output))
        return run

    made = alternated_runs({name: build(name) for name in BUILDS}, runs,
                           lambda name, run: f"  {name}: {run['seconds']:.1f} s, {run['cpu_seconds']:.1f} s CPU")
    return {name: dict(medians(made[name]), records=made[name][0]["records"]) for name in BUILDS}


def report(title: str, figures: dict[str, dict]) -> None:
    print(title)
    print(f"  {'':<26} {'wall s':>8} {'CPU s':>8} {'records':>8} {'annotating CPU /':>17}")
    annotating = figures["annotating"]["cpu_seconds"]
    for name, figure in figures.items():
        ratio = "" if name == "annotating" else f"{annotating / figure['cpu_seconds']:.3f}x"
        print(f"  {name:<26} {figure['seconds']:8.1f} {figure['cpu_seconds']:8.1f} {figure['records']:8,} {ratio:>17}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--runs", type=int, default=3, help="runs of each build, alternated (medians are printed)")
    parser.add_argument("--generated-mb", type=int, default=0, help="also a generated crawl of about this many MB")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-annotate-benchmark")
    args = parser.parse_args(argv)
    inputs = {"developer corpus": sorted(glob.glob(str(args.corpus / "warc" / "*.warc.gz")))}
    if args.generated_mb:
        inputs[f"generated crawl, {args.generated_mb} MB"] = generate("a", args.generated_mb, args.work / "generated")
    results = {}
    for title, paths in inputs.items():
        print(f"{title}: {len(paths)} files, runs: {args.runs}", flush=True)
        results[title] = measure(paths, args.work, args.runs)
    for title, figures in results.items():
        report(title, figures)
    print(json.dumps({title: {name: {key: round(value, 1) for key, value in figure.items()}
                              for name, figure in figures.items()} for title, figures in results.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
