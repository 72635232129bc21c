"""Cost per snapshot: the whole job on Common Crawl's own mix of records, against datatrove 0.10 + resiliparse.

    python -m benchmarks.cc_cost --generator ../shared/tools/make_cc_corpus.py
        [--datatrove-python /work/venv-datatrove/bin/python] [--mb 200] [--reps 5] [--against TREE]
        [--sections whole,not-kept,language,workers,dev]

The crawl is `--generator`'s (`make_cc_corpus.py --mb MB`, made once in
`--work` and reused): for each capture a request, a response and a metadata
record, responses of 30-50 KB, a share of redirects, errors and non-HTML.
Every figure is the median of `--reps` runs of each alternative, alternated
(ABBA), as benchmarks/peers.py measures (its helpers). With `--against TREE`
(a checkout of another branch, its C modules built), that tree's build runs
beside this one's in the same rounds. Sections:

- whole: the whole default build, 1 worker, against datatrove (`peers_datatrove`)
  and against the same stage functions in a plain loop; what the contracts
  that a user can turn off cost, each turned off: resume records
  (`--no-resume`) and report.html's page inspector (`--report-sample 0`).
- not-kept: a crawl of only the records that are not kept (requests,
  metadata, warcinfo, non-HTML, redirects, errors, revisits: each gzip member
  of the mix whose record webcorpus's reader skips), against the first 100
  of them: (difference) / (records more) is the cost per record that is not kept.
- language: the whole build with and without `--language`: what it adds per kept page.
- workers: 2 worker processes against 1 (`--mb 800` for the issue's figure), and so
  for TREE with `--against`.
- dev: the developer corpus, as `benchmarks.peers` measures it.

The machine is shared and noisy: nothing here is a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.beam_import import import_beam

# The reader's modules import Beam: imported as `python -m pipeline` imports it (without what it does not use, and
# without the warnings that brings in this benchmark's output).
import_beam()

from benchmarks.peers import (FLOOR, PLAIN_LOOP, alternated, checked_arguments, datatrove,  # noqa: E402
                              developer_corpus, finish, language_added, peer_parser, plain_loop, row, seconds,
                              webcorpus)
from benchmarks.throughput import REPO, worker_processes  # noqa: E402
from transforms.document import Skip  # noqa: E402
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc  # noqa: E402

SECTIONS = ("whole", "not-kept", "language", "workers", "dev")
MIX = "scale-*.warc.gz"
# The records of the not-kept crawl's fixed-cost run: its start-up and per-file costs, without the records' own.
FIXED_RECORDS = 100


def cc_corpus(generator: Path, corpus: Path, mb: float, folder: Path) -> list[str]:
    """The mix's WARC files, made by `generator` in `folder` unless a run of the same size made them there."""
    summary = folder / "scale-1-summary.json"
    if not (summary.exists() and json.loads(summary.read_text()).get("mb_requested") == mb):
        print(f"Making {mb:g} MB of Common Crawl's mix in {folder}...", flush=True)
        subprocess.run([sys.executable, str(generator), "--mb", str(mb), "--out", str(folder), "--corpus", str(corpus)],
                       check=True, stdout=subprocess.DEVNULL)
    return sorted(map(str, folder.glob(MIX)))


def not_kept_spans(path: str) -> list[tuple[int, int]]:
    """The byte spans (start, end) of the gzip members of `path` (a file gzipped per record) whose record webcorpus's
    reader skips."""
    outcomes = [(outcome.source_offset if isinstance(outcome, Skip) else outcome.capture.source_offset,
                 isinstance(outcome, Skip))
                for outcome in read_warc(lambda: open_uncompressed(path), path, on_note=lambda note: None)]
    ends = [offset for offset, _ in outcomes[1:]] + [os.path.getsize(path)]
    return [(start, end) for (start, skipped), end in zip(outcomes, ends) if skipped]


def copy_members(path: str, spans: list[tuple[int, int]], to: Path) -> None:
    with open(path, "rb") as source, open(to, "wb") as out:
        for start, end in spans:
            source.seek(start)
            out.write(source.read(end - start))


def not_kept_crawl(files: list[str], folder: Path) -> tuple[list[str], list[str], int]:
    """The mix's not-kept records, one file of them per file of the mix, and a file of the first `FIXED_RECORDS` of
    them (in a folder of its own); the records of the first."""
    listing = folder / "records.json"
    wanted = [[path, os.path.getsize(path)] for path in files]
    if listing.exists() and json.loads(listing.read_text())["of"] == wanted:
        records = json.loads(listing.read_text())["records"]
    else:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "fixed").mkdir(exist_ok=True)
        records = 0
        for index, path in enumerate(files):
            spans = not_kept_spans(path)
            copy_members(path, spans, folder / f"not-kept-{index:05d}.warc.gz")
            if index == 0:
                copy_members(path, spans[:FIXED_RECORDS], folder / "fixed" / "not-kept-fixed.warc.gz")
            records += len(spans)
        listing.write_text(json.dumps({"of": wanted, "records": records}))
    return sorted(map(str, folder.glob("not-kept-*.warc.gz"))), [str(folder / "fixed" / "not-kept-fixed.warc.gz")], records


def against(alternatives: dict, name: str, make, tree: Path | None) -> None:
    """Adds `name` made by `make(tree=None)`, and its counterpart of `tree` where one is given."""
    alternatives[name] = make(None)
    if tree is not None:
        alternatives[f"{name} ({tree.name})"] = make(tree)


def workers_row(figure: str, one: dict, two: dict, goal: str) -> tuple:
    """The table's row of 2 workers against 1."""
    return (figure, seconds(two), seconds(one), f"{one['seconds'] / two['seconds']:.2f}x faster",
            f"{two['cpu_seconds'] / one['cpu_seconds']:.2f}x", goal)


def main(argv: list[str] | None = None) -> int:
    parser = peer_parser("benchmarks.cc_cost", __doc__, SECTIONS, "webcorpus-cc-cost", 200, "the mix", 5)
    parser.add_argument("--generator", type=Path, default=REPO.parent / "shared" / "tools" / "make_cc_corpus.py",
                        help="make_cc_corpus.py (default: %(default)s)")
    parser.add_argument("--against", type=Path, help="another checkout whose build runs beside this one's")
    args, sections = checked_arguments(parser, argv, SECTIONS, "webcorpus on Common Crawl's mix")
    python, tree, work = args.datatrove_python, args.against, args.work
    if tree is not None and not (tree / "pipeline").is_dir():
        parser.error(f"--against {tree}: not a checkout of webcorpus")
    if set(sections) - {"dev"} and not args.generator.is_file():
        parser.error(f"--generator {args.generator}: no such file")
    results: dict = {}
    table: list = []
    mix_folder = work / f"mix-{args.mb:g}"
    mix = cc_corpus(args.generator, args.corpus, args.mb, mix_folder) if set(sections) - {"dev"} else []

    if "whole" in sections:
        print(f"\n== Whole job, {args.mb:g} MB of the mix ({len(mix)} files), 1 worker", flush=True)
        alternatives: dict = {}
        against(alternatives, "webcorpus", lambda tree: webcorpus(mix, work / "wc", tree=tree), tree)
        alternatives["--no-resume"] = webcorpus(mix, work / "wc-no-resume", ("--no-resume",))
        alternatives["--report-sample 0"] = webcorpus(mix, work / "wc-no-sample", ("--report-sample", "0"))
        alternatives[PLAIN_LOOP] = plain_loop(mix, work / "loop")
        if python:
            alternatives["datatrove"] = datatrove(python, mix_folder, MIX, work / "dt")
        found = results["whole"] = alternated(alternatives, args.reps)
        theirs = found.get("datatrove")
        row(table, f"whole default build, 1 worker, {args.mb:g} MB of the mix", found["webcorpus"], theirs, "<= 0.6x")
        if tree is not None:
            row(table, f"  of {tree}", found[f"webcorpus ({tree.name})"], theirs, "-")
        row(table, f"  its {PLAIN_LOOP}", found[PLAIN_LOOP], theirs, FLOOR)
        for name, contract in (("--no-resume", "resume records"), ("--report-sample 0", "the page inspector's sample")):
            share = 1 - found[name]["seconds"] / found["webcorpus"]["seconds"]
            table.append((f"  {contract}: what {name} saves", seconds(found[name]), seconds(found["webcorpus"]),
                          f"{share:.1%} of the build", "-", "<= 10%"))
    if "not-kept" in sections:
        print("\n== The records that are not kept, alone", flush=True)
        files, fixed, records = not_kept_crawl(mix, work / f"not-kept-{args.mb:g}")
        alternatives = {}
        against(alternatives, "all", lambda tree: webcorpus(files, work / "wc-not-kept", tree=tree), tree)
        against(alternatives, f"first {FIXED_RECORDS}", lambda tree: webcorpus(fixed, work / "wc-fixed", tree=tree),
                tree)
        found = results["not-kept"] = alternated(alternatives, args.reps)
        for suffix in ("", f" ({tree.name})") if tree is not None else ("",):
            each = {key: 1000 * (found[f"all{suffix}"][key] - found[f"first {FIXED_RECORDS}{suffix}"][key])
                    / (records - FIXED_RECORDS) for key in ("seconds", "cpu_seconds")}
            results["not-kept"][f"ms_per_record{suffix}"] = each
            table.append((f"a record not kept{suffix or ''} ({records:,} of them)", f"{each['seconds']:.4f} ms",
                          seconds(found[f"all{suffix}"]), "-", f"CPU {each['cpu_seconds']:.4f} ms", "<= 0.05 ms"))
    if "language" in sections:
        print("\n== --language on the mix", flush=True)
        results["language"] = language_added(mix, work, args.reps, table)
    if "workers" in sections:
        print("\n== 2 workers against 1 on the mix", flush=True)
        builds: dict = {}
        for count in (1, 2):
            against(builds, str(count), lambda tree, count=count: webcorpus(
                mix, work / (f"wc-w{count}" if tree is None else f"wc-w{count}-{tree.name}"), worker_processes(count),
                tree=tree), tree)
        found = results["workers"] = alternated(builds, args.reps)
        table.append(workers_row(f"2 workers / 1, {args.mb:g} MB of the mix", found["1"], found["2"], ">= 1.7x"))
        if tree is not None:
            table.append(workers_row(f"    of {tree}", found[f"1 ({tree.name})"], found[f"2 ({tree.name})"], "-"))
    if "dev" in sections:
        results["dev"] = developer_corpus(args.corpus, work, python, args.reps, table, tree)

    return finish(table, results, args.results)


if __name__ == "__main__":
    sys.exit(main())
