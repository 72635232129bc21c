"""The whole job side by side: webcorpus against datatrove 0.10 + resiliparse, on the same WARC files.

    python -m benchmarks.peers --datatrove-python /work/venv-datatrove/bin/python [--mb 20] [--reps 3]
        [--sections generated,dev,language,near-dedup]

webcorpus runs its whole default build (`python -m pipeline`, 1 worker), and
beside it the same stage functions in a plain loop (`benchmarks.plain_loop`:
no Beam, no report, one Avro file): the floor that no change around the
stages can go under; datatrove runs WarcReader -> resiliparse `extract_plain_text` -> JsonlWriter
(benchmarks/peers_datatrove.py, in the Python of `--datatrove-python`: a
virtual environment of its own, benchmarks/requirements-datatrove.txt).
Every figure is the median of `--reps` runs of each alternative, alternated
(ABBA), wall time and CPU time (user + sys of the process tree). Sections:

- generated: `--mb` MB of HTML generated as benchmarks/throughput.py does
  (the developer corpus's pages remixed, one gzip member per record): 1
  worker each, and 2 workers each (webcorpus `--direct_num_workers=2
  --direct_running_mode=multi_processing`, datatrove 2 tasks on 2 workers).
- dev: the developer corpus's WARC files, all but those datatrove's reader
  stops on (`DATATROVE_UNREADABLE`), for both.
- language: webcorpus on the developer corpus with and without `--language`:
  what it adds per identified page.
- near-dedup: webcorpus `--near-dedup` against datatrove's extraction then
  its MinHash deduplication (default configuration, four steps), on the
  generated WARC.

Without `--datatrove-python` only webcorpus's runs are made. The defaults
take a few minutes on the project's 2-core machine; benchmarks/README.md has
the figures. The machine is shared and noisy: nothing here is a test.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import alternated_runs, medians, parse_sections
from benchmarks.throughput import (REPO, checked, generate_corpus, pipeline_command, plain_loop_command,
                                   run_measured, worker_processes)
from devcorpus import default_corpus
from devcorpus.pages import load_pages
from transforms.corpus.read_corpus import iter_corpus

SECTIONS = ("generated", "dev", "language", "near-dedup")
# The developer corpus's file whose last record ends inside its gzip member: datatrove's WarcReader raises
# EOFError there and its task fails (webcorpus reads what is whole and reports the rest).
DATATROVE_UNREADABLE = ("dev-06-broken-tail.warc.gz",)
# webcorpus's per-page work alone (benchmarks.plain_loop), measured beside the whole build: the part of a
# ratio that no change to the pipeline around the stage functions can take away.
PLAIN_LOOP = "stage functions in a plain loop"
FLOOR = "(the floor)"


class Alternative:
    """One command measured: how to run it on a clean output folder, and what it wrote (documents). `tree`: the
    checkout whose code it runs (another branch's, measured beside this one); None: this one."""

    def __init__(self, command: list[str], output: Path, written, tree: Path | None = None):
        self.command, self.output, self.written, self.tree = command, output, written, tree

    def run(self) -> dict:
        shutil.rmtree(self.output, ignore_errors=True)
        if self.tree is None:
            return checked(run_measured(self.command), " ".join(self.command[:4]))
        # (`python -m` imports from its working directory first.)
        env = dict(os.environ, PYTHONPATH=str(self.tree))
        return checked(run_measured(self.command, env=env, cwd=self.tree), f"{self.tree}: {' '.join(self.command[:4])}")


def webcorpus(inputs: list[str], output: Path, extra: tuple[str, ...] = (), tree: Path | None = None) -> Alternative:
    return Alternative(pipeline_command(inputs, output, extra), output, lambda: webcorpus_documents(output), tree)


def webcorpus_documents(output: Path) -> int:
    return json.loads((output / "report.json").read_text())["records"]["kept"]


def plain_loop(inputs: list[str], output: Path) -> Alternative:
    """webcorpus's stage functions in a plain loop (`benchmarks.plain_loop`): the same work per page, no Beam."""
    return Alternative(plain_loop_command(inputs, output), output,
                       lambda: sum(1 for _ in iter_corpus(str(output))))  # (its records verified as read)


def datatrove(python: str, folder: Path, pattern: str, work: Path, *flags: str) -> Alternative:
    command = [python, str(REPO / "benchmarks" / "peers_datatrove.py"), str(folder), pattern, str(work), *flags]
    return Alternative(command, work, lambda: datatrove_documents(work))


def datatrove_documents(work: Path) -> int:
    count = 0
    for path in sorted((work / "extracted").glob("*.jsonl.gz")):
        with gzip.open(path, "rb") as lines:
            count += sum(1 for _ in lines)
    return count


def alternated(alternatives: dict[str, Alternative], reps: int) -> dict[str, dict]:
    """Each alternative run `reps` times, alternated (ABBA...); by name: median wall and CPU seconds, documents."""
    runs = alternated_runs({name: alternative.run for name, alternative in alternatives.items()}, reps,
                           lambda name, run: f"  {name:<34} {run['seconds']:7.2f} s wall {run['cpu_seconds']:7.2f} s CPU "
                                             f"(load before {run['load_before']:.1f})")
    return {name: {**medians(name_runs), "runs": [round(run["seconds"], 2) for run in name_runs],
                   "documents": alternatives[name].written()} for name, name_runs in runs.items()}


def datatrove_readable(corpus: Path) -> list[str]:
    """The WARC files of `corpus` but those datatrove's reader stops on."""
    return [str(path) for path in sorted((corpus / "warc").glob("*.warc.gz")) if path.name not in DATATROVE_UNREADABLE]


def linked_inputs(paths: list[str], folder: Path) -> list[str]:
    """`paths` as symbolic links in `folder` (datatrove reads a folder and a pattern); returns the links."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    links = []
    for path in paths:
        link = folder / Path(path).name
        link.symlink_to(os.path.abspath(path))
        links.append(str(link))
    return links


def row(table: list, figure: str, ours: dict, theirs: dict | None, goal: str) -> None:
    ratio = f"{ours['seconds'] / theirs['seconds']:.2f}x" if theirs else "-"
    cpu = f"{ours['cpu_seconds'] / theirs['cpu_seconds']:.2f}x" if theirs else "-"
    table.append((figure, seconds(ours), seconds(theirs) if theirs else "-", ratio, cpu, goal))


def seconds(result: dict) -> str:
    return f"{result['seconds']:.1f} s (CPU {result['cpu_seconds']:.1f} s, {result['documents']:,} docs)"


def developer_corpus(corpus: Path, work: Path, python: str | None, reps: int, table: list,
                     tree: Path | None = None) -> dict:
    """The whole job on the developer corpus (the files datatrove reads): webcorpus, its plain loop, datatrove
    with `python`, and webcorpus of `tree` where given; its rows added to `table`."""
    print("\n== Whole job on the developer corpus", flush=True)
    dev = datatrove_readable(corpus)
    links = linked_inputs(dev, work / "dev-warc")
    alternatives = {"webcorpus": webcorpus(links, work / "wc-dev"), PLAIN_LOOP: plain_loop(links, work / "loop-dev")}
    if tree is not None:
        alternatives[f"webcorpus of {tree}"] = webcorpus(links, work / "wc-dev-tree", tree=tree)
    if python:
        alternatives["datatrove"] = datatrove(python, work / "dev-warc", "*.warc.gz", work / "dt-dev")
    found = alternated(alternatives, reps)
    row(table, f"whole default build, developer corpus ({len(dev)} files)", found["webcorpus"],
        found.get("datatrove"), "<= 1.0x")
    if tree is not None:
        row(table, f"  of {tree}", found[f"webcorpus of {tree}"], found.get("datatrove"), "-")
    row(table, f"  its {PLAIN_LOOP}", found[PLAIN_LOOP], found.get("datatrove"), FLOOR)
    return found


def language_added(inputs: list[str], work: Path, reps: int, table: list) -> dict:
    """webcorpus on `inputs` with and without `--language`; its row (ms added per kept page) added to `table`."""
    found = alternated({"without": webcorpus(inputs, work / "wc-nolang"),
                        "--language": webcorpus(inputs, work / "wc-lang", ("--language",))}, reps)
    pages = found["--language"]["documents"]
    added = found["added_ms_per_page"] = {key: 1000 * (found["--language"][key] - found["without"][key]) / pages
                                          for key in ("seconds", "cpu_seconds")}
    table.append((f"--language added, per page ({pages:,} pages kept)", f"{added['seconds']:.2f} ms",
                  "-", "-", f"CPU {added['cpu_seconds']:.2f} ms", "<= 0.5 ms"))
    return found


def finish(table: list, results: dict, path: Path | None) -> int:
    """Prints the table of medians, and writes `results` with it as JSON to `path` where given."""
    results["table"] = print_table(table)
    if path:
        path.write_text(json.dumps(results, indent=2))
    return 0


def print_table(table: list) -> list[dict]:
    """Prints the table of medians; returns its rows as dicts."""
    print("\n== Medians (ratio: webcorpus / the alternative, wall and CPU)")
    header = ("figure", "webcorpus", "the alternative", "ratio", "CPU ratio", "goal")
    widths = [max(len(str(line[column])) for line in [header, *table]) for column in range(len(header))]
    for line in [header, *table]:
        print("  " + "  ".join(f"{str(cell):<{width}}" for cell, width in zip(line, widths)))
    return [dict(zip(header, line)) for line in table]


def peer_parser(module: str, doc: str, sections: tuple[str, ...], work: str, mb: float, of_what: str,
                reps: int) -> argparse.ArgumentParser:
    """The command line of a benchmark against datatrove (this module's, `benchmarks.cc_cost`'s)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc)
    parser.add_argument("--datatrove-python", help="a Python with datatrove and resiliparse (skipped without)")
    parser.add_argument("--corpus", type=Path, default=default_corpus(),
                        help="the developer corpus (its warc/ folder); default: %(default)s")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / work,
                        help="where the WARC files made and the outputs go (default: %(default)s)")
    parser.add_argument("--mb", type=float, default=mb, help=f"MB of {of_what} (default %(default)s)")
    parser.add_argument("--reps", type=int, default=reps, help="runs of each alternative (default %(default)s)")
    parser.add_argument("--sections", default=",".join(sections),
                        help=f"comma-separated, of {', '.join(sections)} (default: all)")
    parser.add_argument("--results", type=Path, help="also write the results as JSON here")
    return parser


def checked_arguments(parser: argparse.ArgumentParser, argv: list[str] | None, known: tuple[str, ...],
                      title: str) -> tuple[argparse.Namespace, list[str]]:
    """The arguments of `peer_parser`'s command line and its sections, checked; says what is measured, where."""
    args = parser.parse_args(argv)
    sections = parse_sections(parser, args.sections, known)
    if args.datatrove_python and not Path(args.datatrove_python).is_file():
        parser.error(f"--datatrove-python {args.datatrove_python}: no such file")
    print(f"{title}: {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{load:.1f}' for load in os.getloadavg())}; medians of {args.reps} alternated runs", flush=True)
    return args, sections


def main(argv: list[str] | None = None) -> int:
    parser = peer_parser("benchmarks.peers", __doc__, SECTIONS, "webcorpus-peers", 20, "HTML generated", 3)
    args, sections = checked_arguments(parser, argv, SECTIONS, "webcorpus against datatrove + resiliparse")
    python = args.datatrove_python
    work = args.work
    results: dict = {}
    table: list = []

    if {"generated", "near-dedup"} & set(sections):
        corpus_dir = work / "corpus"
        print(f"\nGenerating {args.mb:g} MB of HTML in {corpus_dir} (cached)...", flush=True)
        manifest = generate_corpus(load_pages(args.corpus), args.mb, corpus_dir, max(2, round(args.mb / 8)), 1)
        generated = [str(corpus_dir / name) for name in manifest["files"]]
        results["corpus"] = {key: manifest[key] for key in ("records", "html_bytes", "warc_bytes")}
        print(f"  {manifest['records']} records, {manifest['html_bytes'] / 1e6:.0f} MB of HTML, "
              f"{manifest['warc_bytes'] / 1e6:.0f} MB of WARC.gz, {len(generated)} files")
    if "generated" in sections:
        print("\n== Whole job on the generated WARC, 1 worker and 2", flush=True)
        alternatives = {"webcorpus, 1 worker": webcorpus(generated, work / "wc-1"),
                        "webcorpus, 2 workers": webcorpus(generated, work / "wc-2", worker_processes(2)),
                        PLAIN_LOOP: plain_loop(generated, work / "loop-1")}
        if python:
            alternatives["datatrove, 1 task"] = datatrove(python, corpus_dir, "remix-*.warc.gz", work / "dt-1")
            alternatives["datatrove, 2 tasks"] = datatrove(python, corpus_dir, "remix-*.warc.gz", work / "dt-2",
                                                           "--tasks", "2")
        found = results["generated"] = alternated(alternatives, args.reps)
        row(table, f"whole default build, 1 worker, {args.mb:g} MB of HTML", found["webcorpus, 1 worker"],
            found.get("datatrove, 1 task"), "<= 0.6x")
        row(table, f"  its {PLAIN_LOOP}", found[PLAIN_LOOP], found.get("datatrove, 1 task"), FLOOR)
        one, two = found["webcorpus, 1 worker"], found["webcorpus, 2 workers"]
        table.append(("webcorpus 2 workers / 1 (speed-up)", seconds(two), seconds(one),
                      f"{one['seconds'] / two['seconds']:.2f}x faster", f"{two['cpu_seconds'] / one['cpu_seconds']:.2f}x",
                      ">= 1.7x"))
        if python:
            row(table, "2 workers, webcorpus / datatrove 2 tasks", two, found["datatrove, 2 tasks"], "-")
            # datatrove's pool workers are children of its forkserver, which nobody waits for: uncounted CPU.
            table[-1] = (*table[-1][:4], "n/a", "-")
    if "dev" in sections:
        results["dev"] = developer_corpus(args.corpus, work, python, args.reps, table)
    if "language" in sections:
        print("\n== --language on the developer corpus", flush=True)
        results["language"] = language_added(sorted(map(str, (args.corpus / "warc").glob("*.warc.gz"))), work,
                                             args.reps, table)
    if "near-dedup" in sections:
        print("\n== --near-dedup on the generated WARC", flush=True)
        alternatives = {"webcorpus --near-dedup": webcorpus(generated, work / "wc-near", ("--near-dedup",))}
        if python:
            alternatives["datatrove + MinHash"] = datatrove(python, corpus_dir, "remix-*.warc.gz", work / "dt-near",
                                                            "--minhash")
        found = results["near-dedup"] = alternated(alternatives, args.reps)
        row(table, "--near-dedup against datatrove's MinHash", found["webcorpus --near-dedup"],
            found.get("datatrove + MinHash"), "keep it")

    return finish(table, results, args.results)


if __name__ == "__main__":
    sys.exit(main())
