"""Select: what a selection costs beside the annotated build it reads, and that it equals the filtering build.

    python -m benchmarks.select_cost [--corpus DIR] [--mb 50] [--reps 3] [--work DIR] [--sections cost,equality] [--no-dev]

`cost`: on the developer corpus (`--corpus`, default `$WEBCORPUS_CORPUS`) and on a generated crawl of `--mb`
megabytes (`shared/tools/make_cc_corpus.py`, cached in `--work`), the annotated build
(`--annotate --quality fineweb-recipe`) and the selection that turns it into the FineWeb-recipe corpus
(`python -m pipeline.select ANNOTATED --output DIR --quality fineweb-recipe`), alternated (ABBA) `--reps` times
each; their medians of wall and CPU time (the command's process tree), and the ratio of the CPU times. Beside
them, in the same run, the floor of any selection that writes the filtering build's bytes: starting the command
(`python -m pipeline.select --help`: Python, Beam and webcorpus imported), reading SOURCE's records (decompressed
and decoded, in a fresh process) and compressing the selected corpus's blocks at its codec and level, as its writer
did; none of it is a selection's choice, so a ratio under the floor's cannot be reached.

`equality`: on the same inputs, for each rule set, with and without `--near-dedup`, a build filtering with it
and the selection from the annotated build that measures it (`gopher,fineweb,c4` for gopher, fineweb and c4;
`fineweb-recipe` for itself): every corpus shard, side file and index compared byte for byte, and the records'
content hashes; every difference counted. Nothing in it is a test; docs/select.md has the figures.
"""

from __future__ import annotations

import argparse
import filecmp
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import medians
from benchmarks.annotate import compressing_cpu
from benchmarks.throughput import alternate, checked, run_measured
from devcorpus import default_corpus
from transforms.corpus.read_corpus import iter_corpus

# The annotated build that measures each rule set as a build filtering with it alone would measure it.
ANNOTATIONS = {"gopher": "gopher,fineweb,c4", "fineweb": "gopher,fineweb,c4", "c4": "gopher,fineweb,c4",
               "fineweb-recipe": "fineweb-recipe"}
GENERATOR = default_corpus().parent / "tools" / "make_cc_corpus.py"
# The files that are the same whichever way a corpus was made: all but the report, its page and the manifest.
NOT_COMPARED = ("report.json", "report.html", "manifest.json")


def build_command(inputs: str, output: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "pipeline", "--quiet", "--input", inputs, "--output", str(output), *options]


def select_command(source: Path, output: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.select", str(source), "--output", str(output), *options]


def generated_crawl(work: Path, megabytes: float, corpus: Path) -> str:
    """The WARC files of a generated crawl of `megabytes`, written once into `work`."""
    directory = work / f"crawl-{megabytes:g}mb"
    if not list(directory.glob("*.warc.gz")):
        subprocess.run([sys.executable, str(GENERATOR), "--mb", str(megabytes), "--out", str(directory),
                        "--corpus", str(corpus)], check=True)
    return str(directory / "*.warc.gz")


def reading_cpu(source: str) -> float:
    """CPU seconds of reading every record of the corpus in `source` (decompressed and decoded, not verified)."""
    start = time.process_time()
    for _ in iter_corpus(source, verify=False):
        pass
    return time.process_time() - start


def floor_parts(source: Path, selected: Path) -> dict[str, float]:
    """What a selection from `source` that wrote `selected` cannot leave out, in CPU seconds: starting the command,
    reading SOURCE's records (in a fresh process, as a selection's worker) and compressing what it wrote."""
    started = checked(run_measured(select_command(source, selected, "--help")), "select --help")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        reading = pool.apply(reading_cpu, (str(source),))
    return {"starting": started["cpu_seconds"], "reading SOURCE": reading, "compressing": compressing_cpu(selected)}


def run_cost(name: str, inputs: str, work: Path, reps: int) -> None:
    annotated = work / f"{name}-annotated"
    selected = work / f"{name}-selected"
    commands = {"annotated build": build_command(inputs, annotated, "--annotate", "--quality", "fineweb-recipe"),
                "select fineweb-recipe": select_command(annotated, selected, "--quality", "fineweb-recipe")}
    # The selection reads the annotated build: one is made before the alternation (unless an earlier run left it).
    if not (annotated / "manifest.json").exists():
        checked(run_measured(commands["annotated build"]), f"{name}: annotated build")
    runs = alternate(commands, reps, name)
    build, select = (medians(runs[key], ("seconds", "cpu_seconds", "peak_rss_mib")) for key in commands)
    print(f"{name}: annotated build {build['cpu_seconds']:.1f} s CPU ({build['seconds']:.1f} s wall), select "
          f"{select['cpu_seconds']:.1f} s CPU ({select['seconds']:.1f} s wall): select / build CPU "
          f"{select['cpu_seconds'] / build['cpu_seconds']:.3f}; peak RSS of the process tree: build "
          f"{build['peak_rss_mib']:.0f} MiB, select {select['peak_rss_mib']:.0f} MiB (medians of {reps})")
    floor = floor_parts(annotated, selected)
    parts = ", ".join(f"{part} {seconds:.2f} s" for part, seconds in floor.items())
    least = sum(floor.values())
    own = select["cpu_seconds"] - least
    print(f"{name}: the floor of a selection that writes these bytes: {parts}; {least:.2f} s, "
          f"{least / build['cpu_seconds']:.3f} of the build; the selection's own {own:.2f} s "
          f"({own / build['cpu_seconds']:.3f})", flush=True)


def compared(left: Path, right: Path) -> tuple[list[str], int, int]:
    """The files of `left` and `right` (but `NOT_COMPARED`) that differ or only one has, and the content hashes
    of the records only one has, each way."""
    names = sorted({path.name for path in left.iterdir()} | {path.name for path in right.iterdir()})
    differing = [name for name in names if name not in NOT_COMPARED and not (
        (left / name).is_file() and (right / name).is_file() and filecmp.cmp(left / name, right / name, shallow=False))]
    hashes = [{record["content_hash"] for record in iter_corpus(str(side))} for side in (left, right)]
    return differing, len(hashes[0] - hashes[1]), len(hashes[1] - hashes[0])


def run_equality(name: str, inputs: str, work: Path) -> None:
    for annotation in sorted(set(ANNOTATIONS.values())):
        checked(run_measured(build_command(inputs, work / f"{name}-annotated-{annotation}", "--annotate",
                                           "--quality", annotation)), f"{name}: annotated {annotation}")
    for rule_set, annotation in ANNOTATIONS.items():
        for near in ((), ("--near-dedup",)):
            label = f"{rule_set}{' --near-dedup' if near else ''}"
            built, selected = (work / f"{name}-{kind}-{rule_set}{'-near' if near else ''}"
                               for kind in ("built", "selected"))
            checked(run_measured(build_command(inputs, built, "--quality", rule_set, *near)), f"{name}: {label}")
            checked(run_measured(select_command(work / f"{name}-annotated-{annotation}", selected, "--quality",
                                                rule_set, *near)), f"{name}: select {label}")
            differing, only_built, only_selected = compared(built, selected)
            records = sum(1 for _ in iter_corpus(str(built)))
            verdict = "identical" if not differing else f"differ in {', '.join(differing)}"
            print(f"{name}: {label:<28} {records:6d} records; shards, side files and index {verdict}; content "
                  f"hashes only in the build {only_built}, only in the selection {only_selected}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.select_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="the developer corpus (default: WEBCORPUS_CORPUS)")
    parser.add_argument("--mb", type=float, default=50, help="megabytes of the generated crawl (0: none)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-bench-select")
    parser.add_argument("--sections", default="cost,equality")
    parser.add_argument("--no-dev", action="store_true", help="only the generated crawl, not the developer corpus")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    args.work.mkdir(parents=True, exist_ok=True)
    inputs = {} if args.no_dev else {"dev corpus": str(corpus / "warc" / "*")}
    if args.mb:
        inputs[f"generated {args.mb:g} MB"] = generated_crawl(args.work, args.mb, corpus)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    for name, pattern in inputs.items():
        slug = name.replace(" ", "-")
        if "cost" in args.sections:
            run_cost(slug, pattern, args.work, args.reps)
        if "equality" in args.sections:
            run_equality(slug, pattern, args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
