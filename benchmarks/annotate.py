"""`--annotate`'s cost: the CPU of a build measuring every rule of `--quality fineweb-recipe` beside the same
build filtering with it.

    python -m benchmarks.annotate [--runs 3] [--generated-mb 0] [--cc-mb 0]

The input: the developer corpus's WARC files (`$WEBCORPUS_CORPUS`), with `--generated-mb N` also a generated
crawl of about N MB (`benchmarks.extend`'s pages), and with `--cc-mb N` also N MB of Common Crawl's own mix of
records (`--generator`'s, ../shared/tools/make_cc_corpus.py, made once in `--work`, as `benchmarks.cc_cost` makes
it). Each build runs `--runs` times, the builds alternated (ABC, CBA, ...): filtering (`--quality
fineweb-recipe`), filtering with `--clean-text` (the annotated build writes `clean_text` too), and annotating
(`--annotate`). Prints the median wall and CPU seconds (user + system of the
process tree) of each, the records written, and the CPU ratios of annotating to each filtering build.

Then where annotating's extra CPU goes: the rules alone, on the texts the annotated build measured (its records'
`clean_text` and language), as filtering applies them (`apply_rule_sets`, which stops at a page's first drop) and
as annotating measures them (`measure_rule_sets`, every rule), each pass in a fresh process (cold caches, as a
build's worker), alternated, medians; the extra of measuring is their difference, the rest of the builds' is
the rest (writing and compressing 2.7x the records, with `clean_text` and `signals`; the signals' tallies, timed
alone too). The figures are in benchmarks/README.md. Nothing in it is a test.
"""

from __future__ import annotations

import argparse
import glob
import json
import multiprocessing
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import fastavro

from benchmarks import alternated_runs, medians
from benchmarks.cc_cost import cc_corpus
from benchmarks.extend import generate
from benchmarks.throughput import REPO, pipeline_command, run_measured
from devcorpus import default_corpus
from transforms.corpus.read_corpus import iter_corpus

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


def rules_cpu(measuring: bool, pages: list[tuple[str, str]]) -> float:
    """CPU seconds of `--quality fineweb-recipe`'s rules on `pages` (text, language): measured (every rule) or
    applied (as a filtering build: up to a page's first drop). Run in a fresh process: caches as cold as a worker's."""
    from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, apply_rule_sets
    from transforms.stages.filters.signals import measure_rule_sets

    rules = measure_rule_sets if measuring else apply_rule_sets
    start = time.process_time()
    for text, language in pages:
        rules(text, ("fineweb-recipe",), DEFAULT_THRESHOLDS, language)
    return time.process_time() - start


def tally_cpu(records: list[dict]) -> float:
    """CPU seconds of the report's tallies of the records' signals (`tally_record`'s part that only annotating has),
    as a shard adds them up."""
    from transforms.report.signal_histograms import SignalTally
    from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS

    start, signals = time.process_time(), SignalTally(DEFAULT_THRESHOLDS)
    for record in records:
        signals.add(record["signals"], record.get("language", ""), 0)
    signals.add_to(Counter())
    return time.process_time() - start


def compressing_cpu(output: Path) -> float:
    """CPU seconds of compressing a build's corpus blocks again as its writer did (the default codec and level)."""
    from transforms.stages.compress_write.formats import resolve_codec

    codec, level = resolve_codec("avro", None, None)
    blocks = []
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            blocks.extend(block.bytes_.getvalue() for block in fastavro.block_reader(handle))
    assert codec == "zstandard", codec
    try:
        from compression import zstd  # Python 3.14 on, as fastavro takes it
    except ImportError:
        from backports import zstd

    start = time.process_time()
    for block in blocks:
        zstd.compress(block, level=level)
    return time.process_time() - start


def extra_parts(work: Path, runs: int) -> dict[str, float]:
    """The rules' CPU filtering and measuring, the signals' tallies, and compressing the corpus of each build, on
    what the last builds wrote."""
    records = list(iter_corpus(str(work / "annotating")))
    pages = [(record["clean_text"], record.get("language", "")) for record in records]
    spawn = multiprocessing.get_context("spawn")

    def rules(measuring: bool):
        def run() -> dict:
            with spawn.Pool(1) as pool:
                return {"cpu_seconds": pool.apply(rules_cpu, (measuring, pages))}
        return run

    made = alternated_runs({"filtering's rules": rules(False), "annotating's rules": rules(True)}, runs,
                           lambda name, run: f"  {name}: {run['cpu_seconds']:.2f} s CPU")
    parts = {name: medians(made[name], ("cpu_seconds",))["cpu_seconds"] for name in made}
    return dict(parts, **{"signals' tallies": tally_cpu(records),
                          "compressing, filtering": compressing_cpu(work / "filtering"),
                          "compressing, annotating": compressing_cpu(work / "annotating")})


def report_parts(figures: dict[str, dict], parts: dict[str, float]) -> None:
    filtering, annotating = figures["filtering"]["cpu_seconds"], figures["annotating"]["cpu_seconds"]
    measuring = parts["annotating's rules"] - parts["filtering's rules"]
    print("  where annotating's extra CPU goes")
    for name, seconds in parts.items():
        print(f"    {name:<40} {seconds:6.2f} s")
    print(f"    {'extra, all':<40} {annotating - filtering:6.2f} s")
    print(f"    {'extra, measuring every rule':<40} {measuring:6.2f} s")
    print(f"    {'extra, the rest':<40} {annotating - filtering - measuring:6.2f} s")
    print(f"    {'  of it, compressing 2.7x the records':<40} "
          f"{parts['compressing, annotating'] - parts['compressing, filtering']:6.2f} s")
    print(f"    annotating / filtering, were measuring every rule free: {(annotating - measuring) / filtering:.3f}x")


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
    parser.add_argument("--cc-mb", type=int, default=0, help="also this many MB of Common Crawl's mix of records")
    parser.add_argument("--generator", type=Path, default=REPO.parent / "shared" / "tools" / "make_cc_corpus.py",
                        help="make_cc_corpus.py, for --cc-mb (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-annotate-benchmark")
    args = parser.parse_args(argv)
    if args.cc_mb and not args.generator.is_file():
        parser.error(f"--generator {args.generator}: no such file")
    inputs = {"developer corpus": sorted(glob.glob(str(args.corpus / "warc" / "*.warc.gz")))}
    if args.generated_mb:
        inputs[f"generated crawl, {args.generated_mb} MB"] = generate("a", args.generated_mb, args.work / "generated")
    if args.cc_mb:
        inputs[f"Common Crawl's mix, {args.cc_mb} MB"] = cc_corpus(args.generator, args.corpus, args.cc_mb,
                                                                   args.work / f"mix-{args.cc_mb}")
    results, parts = {}, {}
    for title, paths in inputs.items():
        print(f"{title}: {len(paths)} files, runs: {args.runs}", flush=True)
        results[title] = measure(paths, args.work, args.runs)
        parts[title] = extra_parts(args.work, args.runs)
    for title, figures in results.items():
        report(title, figures)
        report_parts(figures, parts[title])
    print(json.dumps({title: dict({name: {key: round(value, 1) for key, value in figure.items()}
                                   for name, figure in figures.items()},
                                  parts={name: round(value, 2) for name, value in parts[title].items()})
                      for title, figures in results.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
