"""Throughput and memory of webcorpus, measured side by side in one run.

    python -m benchmarks.throughput [--mb 400] [--sections extract,pipeline,workers,memory,size]

Sections (all by default):

- extract: per page, on the developer corpus's real pages: CleanHtml +
  MinimizeText (`HtmlCleaner().clean` + `minimize_blocks`) against the seed
  article's selectolax recipe on lexbor (remove script and style,
  `body.text('\\n')`), lexbor's bare parse (the floor), BeautifulSoup(lxml)
  `get_text`, PyQuery `.text()`, the regex `<.*?>` and resiliparse
  `extract_plain_text`. Every page goes through every method in turn, in
  a rotating order, `--reps` times; a page's time is its median.
- pipeline: `python -m pipeline --runner=DirectRunner` against
  `benchmarks.plain_loop` (the same pure functions in a plain loop) on a
  generated corpus of `--mb` MB of HTML, alternating, `--pipeline-reps` each.
- workers: the pipeline with `--direct_num_workers=2
  --direct_running_mode=multi_processing` against 1 worker in the same mode,
  alternating.
- memory: peak RSS of the pipeline's whole process tree (polled with
  psutil, children included) at 1x, 2x and 4x input (a quarter, a half and
  all of the generated files).
- size: raw HTML bytes over written bytes with the default codec, from the
  run report (`report.json`), and what the written records are made of.

The generated corpus remixes the developer corpus's pages (its exact
duplicates taken once), round after round in a new order: real markup, and
the letters of the text (outside tags and entities) permuted by a
permutation drawn for the round, so that the records of a round share their
vocabulary as a crawl's pages do (and so its compressibility), while no two
records share text; 0.6% of the records are exact duplicates of an earlier
one under another URL. Files are gzipped per record, written with
`pipeline.sample.warc_bytes`, and cached in `--work` for the same options.

The machine is shared and noisy: only ratios of alternatives measured side
by side mean something; no number here is a test.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import gc
import glob
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from pathlib import Path

from benchmarks import alternated_runs, medians, parse_sections
from devcorpus import default_corpus
from devcorpus.pages import Page, load_pages

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = default_corpus()
SECTIONS = ("extract", "pipeline", "workers", "memory", "size")
MIB = 1024 * 1024

# Targets (ratios on the project's 2-core machine).
TARGETS = {
    "extract_vs_recipe": 2.0,      # CleanHtml+MinimizeText <= 2.0x the recipe per page
    "extract_vs_bs4": 15.0,        # >= 15x faster than BeautifulSoup
    "pipeline_vs_loop": 1.15,      # pipeline <= 1.15x the plain loop
    "two_workers": 1.7,            # 2 workers >= 1.7x faster than 1
    "memory_growth": 1.2,          # peak at 4x <= 1.2x the peak at 1x
    "memory_mib": 600,             # and < 600 MiB
    "size_ratio": 20.0,            # raw HTML >= 20x the written bytes
}


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


# --------------------------------------------------------------------------
# Generated corpus

_MARKUP = re.compile(r"(<[^>]*>|&#?[A-Za-z0-9]+;)")
_LOWER_LATIN = "abcdefghijklmnopqrstuvwxyz"
_LOWER_CYRILLIC = "абвгдежзийклмнопрстуфхцчшщъыьэюя"
DUPLICATE_SHARE = 0.006


def _permutation_table(rng: random.Random) -> dict[int, str]:
    table = {}
    for alphabet in (_LOWER_LATIN, _LOWER_CYRILLIC):
        shuffled = list(alphabet)
        rng.shuffle(shuffled)
        for original, new in zip(alphabet, shuffled):
            table[ord(original)] = new
            table[ord(original.upper())] = new.upper()
    return table


def remix(html: str, table: dict[int, str]) -> str:
    """`html` with the letters of its text permuted by `table` (`_permutation_table`); tags and entities stay."""
    parts = _MARKUP.split(html)
    parts[0::2] = [part.translate(table) for part in parts[0::2]]
    return "".join(parts)


def _remix_url(url: str, index: int) -> str:
    url = url or "http://remix.example.org/"
    return f"{url}{'&' if '?' in url else '?'}remix={index}"


def generate_corpus(pages: list[Page], mb: float, out_dir: Path, files: int, seed: int) -> dict:
    """Writes about `mb` MB of HTML payload in `files` WARC files; returns the manifest."""
    from pipeline.sample import Capture, warc_bytes

    manifest_path = out_dir / "manifest.json"
    wanted = {"mb": mb, "files": files, "seed": seed, "pages": len(pages),
              "page_bytes": sum(len(page.payload) for page in pages), "version": 3}
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("wanted") == wanted and all((out_dir / name).exists() for name in manifest["files"]):
            return manifest
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    per_file = target / files
    first_of_payload = {}
    for page in pages:
        first_of_payload.setdefault(page.payload, page)
    pages = list(first_of_payload.values())
    texts = [page.payload.decode("utf-8", "replace") for page in pages]
    order = list(range(len(pages)))
    taken = 0  # pages remixed so far
    start = time.perf_counter()
    written_files, captures, file_bytes = [], [], 0
    total_bytes = records = duplicates = 0
    bodies = []  # (url, body) of earlier records, for duplicates

    def flush():
        nonlocal captures, file_bytes
        if not captures:
            return
        name = f"remix-{len(written_files):05d}.warc.gz"
        (out_dir / name).write_bytes(warc_bytes(captures, compression="record", filename=name))
        written_files.append(name)
        captures, file_bytes = [], 0

    while total_bytes < target:
        if taken % len(order) == 0:
            # A new round: a new order, and a new permutation for all its pages. With one per
            # record instead, every record would have a vocabulary of its own, which no crawl
            # has: the corpus would compress 16.7x instead of 20.1x like the developer corpus.
            rng.shuffle(order)
            permutation = _permutation_table(random.Random(seed * 1_000_003 + taken))
        minute = records % (60 * 24 * 28)
        date = f"2026-02-{1 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"
        if bodies and rng.random() < DUPLICATE_SHARE:
            original_url, body = bodies[rng.randrange(len(bodies))]
            url = f"{original_url}&mirror={records}"
            duplicates += 1
        else:
            index = order[taken % len(order)]
            taken += 1
            body = remix(texts[index], permutation).encode("utf-8")
            url = _remix_url(pages[index].url, records)
            bodies.append((url, body))
            if len(bodies) > 200:
                bodies.pop(rng.randrange(len(bodies)))
        captures.append(Capture(url, body, content_type="text/html; charset=utf-8", date=date))
        records += 1
        total_bytes += len(body)
        file_bytes += len(body)
        if file_bytes >= per_file:
            flush()
    flush()
    manifest = {"wanted": wanted, "files": written_files, "records": records, "duplicates": duplicates,
                "html_bytes": total_bytes, "warc_bytes": sum((out_dir / name).stat().st_size for name in written_files),
                "seconds": round(time.perf_counter() - start, 1)}
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return manifest


# --------------------------------------------------------------------------
# Section: extract (per page)


def extractors() -> dict:
    """name -> function(page) for every method compared per page."""
    from selectolax.lexbor import LexborHTMLParser

    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_blocks

    cleaner = HtmlCleaner()

    def webcorpus(page: Page):
        return minimize_blocks(cleaner.clean(page.payload, page.url).blocks)

    def recipe(page: Page):
        # The seed article's get_text_selectolax, on selectolax 1.x's lexbor backend.
        tree = LexborHTMLParser(page.payload)
        if tree.body is None:
            return None
        for tag in tree.css("script"):
            tag.decompose()
        for tag in tree.css("style"):
            tag.decompose()
        return tree.body.text(separator="\n")

    def lexbor_parse(page: Page):
        return LexborHTMLParser(page.payload)

    methods = {"webcorpus": webcorpus, "recipe": recipe, "lexbor parse": lexbor_parse}

    try:
        import warnings

        from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

        warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)

        def bs4_lxml(page: Page):
            # The seed article's get_text_bs.
            tree = BeautifulSoup(page.payload, "lxml")
            body = tree.body
            if body is None:
                return None
            for tag in body.select("script"):
                tag.decompose()
            for tag in body.select("style"):
                tag.decompose()
            return body.get_text(separator="\n")

        methods["bs4 (lxml)"] = bs4_lxml
    except ImportError:
        pass

    try:
        from pyquery import PyQuery

        def pyquery(page: Page):
            return PyQuery(page.payload).text()

        methods["pyquery"] = pyquery
    except ImportError:
        pass

    tags = re.compile(r"<.*?>")

    def regex(page: Page):
        return tags.sub("", page.payload.decode("utf-8", "replace"))

    methods["regex <.*?>"] = regex

    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        def resiliparse(page: Page):
            return extract_plain_text(HTMLTree.parse_from_bytes(page.payload, "utf-8"))

        methods["resiliparse"] = resiliparse
    except ImportError:
        pass
    return methods


def run_extract(pages: list[Page], reps: int) -> dict:
    methods = extractors()
    names = list(methods)
    times = {name: [[] for _ in pages] for name in names}
    failures = {name: 0 for name in names}
    clock = time.perf_counter
    gc.collect()
    for rep in range(reps):
        for index, page in enumerate(pages):
            # A rotating order, so that no method always runs first (or after another).
            shift = (index + rep) % len(names)
            for name in names[shift:] + names[:shift]:
                function = methods[name]
                start = clock()
                try:
                    function(page)
                except Exception:  # noqa: BLE001 - a method that fails on a page is counted, not fatal
                    failures[name] += rep == 0
                times[name][index].append(clock() - start)
    total_bytes = sum(len(page.payload) for page in pages)
    per_page = {name: [statistics.median(samples) for samples in times[name]] for name in names}
    results = {}
    for name in names:
        results[name] = {
            "median_ms": statistics.median(per_page[name]) * 1000,
            "mean_ms": statistics.mean(per_page[name]) * 1000,
            "mb_per_s": total_bytes / 1e6 / sum(per_page[name]),
            "failures": failures[name],
        }
    recipe = results["recipe"]
    for name in names:
        results[name]["median_vs_recipe"] = results[name]["median_ms"] / recipe["median_ms"]
        results[name]["throughput_vs_recipe"] = recipe["mb_per_s"] / results[name]["mb_per_s"]
    ours = per_page["webcorpus"]
    results["webcorpus"]["per_page_ratio_median"] = statistics.median(
        mine / theirs for mine, theirs in zip(ours, per_page["recipe"]))
    return {"pages": len(pages), "html_mb": total_bytes / 1e6, "reps": reps, "methods": results}


def print_extract(result: dict) -> list[tuple[str, str, bool]]:
    methods = result["methods"]
    print(f"\n== Per page: {result['pages']} pages, {result['html_mb']:.1f} MB of HTML, median of {result['reps']} "
          f"interleaved runs per page")
    print(f"  {'method':<16}{'ms/page (median)':>18}{'MB/s':>9}{'x recipe (median)':>19}{'x recipe (MB/s)':>17}"
          f"{'failed':>8}")
    for name, row in methods.items():
        print(f"  {name:<16}{row['median_ms']:>18.3f}{row['mb_per_s']:>9.1f}{row['median_vs_recipe']:>19.2f}"
              f"{row['throughput_vs_recipe']:>17.2f}{row['failures']:>8}")
    ours = methods["webcorpus"]
    checks = [("CleanHtml+MinimizeText vs recipe (median ms/page)", f"{ours['median_vs_recipe']:.2f}x <= "
               f"{TARGETS['extract_vs_recipe']}x", ours["median_vs_recipe"] <= TARGETS["extract_vs_recipe"])]
    print(f"  webcorpus / recipe, median of per-page ratios: {ours['per_page_ratio_median']:.2f}x")
    if "bs4 (lxml)" in methods:
        faster = methods["bs4 (lxml)"]["median_ms"] / ours["median_ms"]
        checks.append(("CleanHtml+MinimizeText vs BeautifulSoup (median ms/page)",
                       f"{faster:.1f}x faster >= {TARGETS['extract_vs_bs4']}x", faster >= TARGETS["extract_vs_bs4"]))
    return checks


# --------------------------------------------------------------------------
# Running commands with the peak RSS of their process tree


# The packages of a checkout that its commands import.
TREE_PACKAGES = ("pipeline", "transforms", "devcorpus", "benchmarks")


@functools.cache
def compile_tree(tree: Path) -> None:
    """The modules of the checkout `tree` in Python's bytecode cache, as installing it would put them (pip compiles
    what it installs, the peers' modules too). Where the environment turns the cache off
    (PYTHONDONTWRITEBYTECODE), each measured run would otherwise compile webcorpus's ~170 modules again: about 0.1 s
    that no user's run pays, and no peer's."""
    for package in TREE_PACKAGES:
        if (tree / package).is_dir():
            compileall.compile_dir(tree / package, quiet=1)


def run_measured(command: list[str], poll: float = 0.05, env: dict | None = None, companions=None,
                 cwd: Path = REPO) -> dict:
    """Runs `command` in `cwd`; returns its wall time, CPU time, exit code, output, the peak RSS of its process tree, of
    the command's own process (with Beam's workers: the runner, which holds what goes through a shuffle) and of
    its largest child process (a worker).

    `companions`: a function that lists processes the command works with (a Dask cluster's, as
    `psutil.Process`es): their RSS counts in the tree's and as children, their CPU time in the command's."""
    import resource

    import psutil

    compile_tree(Path(cwd).resolve())
    companions = companions or list
    companion_cpu = _cpu_seconds(companions())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    peak = 0
    root_peak = 0
    child_peak = 0
    output = []
    reader = threading.Thread(target=lambda: output.append(process.stdout.read()), daemon=True)
    reader.start()
    try:
        root = psutil.Process(process.pid)
        while process.poll() is None:
            total = 0
            try:
                tree = [root] + root.children(recursive=True) + companions()
            except psutil.NoSuchProcess:
                break
            for member in tree:
                try:
                    rss = member.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
                total += rss
                if member is root:
                    root_peak = max(root_peak, rss)
                else:
                    child_peak = max(child_peak, rss)
            peak = max(peak, total)
            time.sleep(poll)
    except psutil.NoSuchProcess:
        pass
    code = process.wait()
    wall = time.perf_counter() - start
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time of the command and of the processes it waited for (Beam's workers).
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu += _cpu_seconds(companions()) - companion_cpu
    text = output[0].decode("utf-8", "replace") if output else ""
    return {"seconds": wall, "cpu_seconds": cpu, "load_before": load, "code": code, "peak_rss_mib": peak / MIB,
            "peak_root_rss_mib": root_peak / MIB, "peak_child_rss_mib": child_peak / MIB, "output": text}


def _cpu_seconds(processes) -> float:
    """User and system CPU time of `processes` (psutil's), those that still run."""
    import psutil

    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def worker_processes(count: int) -> tuple[str, str]:
    """The options of a build on `count` worker processes of the local runner."""
    return f"--direct_num_workers={count}", "--direct_running_mode=multi_processing"


def pipeline_command(inputs: list[str], output: Path, extra: tuple[str, ...] = ()) -> list[str]:
    command = [sys.executable, "-m", "pipeline", "--runner=DirectRunner", "--quiet", "--output", str(output)]
    for path in inputs:
        command += ["--input", path]
    return command + list(extra)


def plain_loop_command(inputs: list[str], output: Path) -> list[str]:
    command = [sys.executable, "-m", "benchmarks.plain_loop", "--output", str(output)]
    for path in inputs:
        command += ["--input", path]
    return command


def checked(run: dict, what: str) -> dict:
    if run["code"] != 0:
        print(run["output"][-3000:])
        raise SystemExit(f"{what} failed with exit code {run['code']}")
    return run


def alternate(commands: dict[str, list[str]], reps: int, label: str) -> dict[str, list[dict]]:
    """Runs each command `reps` times, alternating (ABBA...), and returns the runs by name."""
    return alternated_runs(
        {name: lambda name=name: checked(run_measured(commands[name]), f"{label}: {name}") for name in commands},
        reps, lambda name, run: f"  {label}: {name:<26} {run['seconds']:7.1f} s wall {run['cpu_seconds']:7.1f} s CPU "
                                f"(load before {run['load_before']:.1f})  peak {run['peak_rss_mib']:5.0f} MiB")


# --------------------------------------------------------------------------
# The sections that run the pipeline


def fixed_cost_commands(corpus: Path, work: Path) -> dict[str, list[str]]:
    """The pipeline and the plain loop on the smallest WARC file of `corpus`: the fixed cost of each (start-up,
    imports, graph)."""
    paths = sorted(glob.glob(str(corpus / "warc" / "*.warc.gz")), key=os.path.getsize)
    if not paths:
        raise SystemExit(f"no WARC files in {corpus / 'warc'}; set --corpus or WEBCORPUS_CORPUS")
    return {"pipeline, smallest dev file": pipeline_command(paths[:1], work / "out-tiny-pipeline"),
            "plain loop, smallest dev file": plain_loop_command(paths[:1], work / "out-tiny-loop")}


def run_pipeline_vs_loop(inputs: list[str], corpus: Path, work: Path, reps: int, html_mb: float) -> dict:
    print(f"\n== Pipeline vs plain loop: {len(inputs)} files, {html_mb:.0f} MB of HTML, {reps} runs each, alternating")
    runs = alternate({
        "pipeline (DirectRunner)": pipeline_command(inputs, work / "out-pipeline"),
        "plain loop": plain_loop_command(inputs, work / "out-loop"),
    }, reps, "pipeline vs loop")
    pipeline, loop = runs["pipeline (DirectRunner)"], runs["plain loop"]
    fixed = alternate(fixed_cost_commands(corpus, work), 2, "fixed cost")
    loop_counts = json.loads(loop[-1]["output"].strip().splitlines()[-1])
    report = json.loads((work / "out-pipeline" / "report.json").read_text())
    pipeline_median, loop_median = medians(pipeline), medians(loop)
    return {
        "pipeline_s": pipeline_median["seconds"], "loop_s": loop_median["seconds"],
        "ratio": pipeline_median["seconds"] / loop_median["seconds"],
        "pipeline_runs": [run["seconds"] for run in pipeline], "loop_runs": [run["seconds"] for run in loop],
        "pipeline_peak_mib": max(run["peak_rss_mib"] for run in pipeline),
        "loop_peak_mib": max(run["peak_rss_mib"] for run in loop),
        "html_mb": html_mb, "report": report, "loop_counts": loop_counts,
        "pipeline_cpu": pipeline_median["cpu_seconds"], "loop_cpu": loop_median["cpu_seconds"],
        "pipeline_fixed_s": medians(fixed["pipeline, smallest dev file"])["seconds"],
        "loop_fixed_s": medians(fixed["plain loop, smallest dev file"])["seconds"],
    }


def run_workers(inputs: list[str], work: Path, reps: int, html_mb: float) -> dict:
    print(f"\n== Two workers vs one (multi_processing): {len(inputs)} files, {html_mb:.0f} MB of HTML, {reps} runs each")
    runs = alternate({
        "1 worker": pipeline_command(inputs, work / "out-1w", worker_processes(1)),
        "2 workers": pipeline_command(inputs, work / "out-2w", worker_processes(2)),
    }, reps, "workers")
    one, two = medians(runs["1 worker"]), medians(runs["2 workers"])
    return {"one_s": one["seconds"], "two_s": two["seconds"], "speedup": one["seconds"] / two["seconds"],
            "html_mb": html_mb, "one_cpu": one["cpu_seconds"], "two_cpu": two["cpu_seconds"],
            "one_runs": [run["seconds"] for run in runs["1 worker"]],
            "two_runs": [run["seconds"] for run in runs["2 workers"]],
            "two_peak_mib": max(run["peak_rss_mib"] for run in runs["2 workers"])}


def run_memory(files: list[str], work: Path, html_mb: float) -> dict:
    print("\n== Memory: peak RSS of the pipeline's process tree at 1x, 2x, 4x input (in-process runner)")
    sizes = {}
    # Interleaved: 4x, 1x, 2x, so that none runs on a warmer machine than the others.
    for multiple in (4, 1, 2):
        chosen = files[:max(1, round(len(files) * multiple / 4))]
        run = checked(run_measured(pipeline_command(chosen, work / f"out-mem-{multiple}x")), f"memory {multiple}x")
        report = json.loads((work / f"out-mem-{multiple}x" / "report.json").read_text())
        sizes[multiple] = {"files": len(chosen), "html_mb": report["bytes"]["raw_html"] / 1e6,
                           "peak_mib": run["peak_rss_mib"], "seconds": run["seconds"]}
        print(f"  {multiple}x: {len(chosen):3} files, {sizes[multiple]['html_mb']:7.0f} MB of HTML  "
              f"peak {run['peak_rss_mib']:6.0f} MiB  {run['seconds']:6.1f} s", flush=True)
    return {"sizes": sizes, "growth": sizes[4]["peak_mib"] / sizes[1]["peak_mib"]}


def parts_codec() -> str:
    from benchmarks.plain_loop import DEFAULT_CODEC

    return DEFAULT_CODEC


def composition(output: Path) -> dict:
    """What the written records are made of: each field's values deflated alone (level 6), and the whole
    corpus rewritten as one Avro file (the default codec, level and block size) as it is, without `text`
    (the same blocks as `html`), and without `text` and `links`."""
    import io
    import zlib

    import fastavro

    from benchmarks.plain_loop import DEFAULT_CODEC
    from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL, resolve_level
    from transforms.stages.compress_write.schema import PARSED_SCHEMA

    records = []
    for path in sorted(output.glob("corpus-*.avro")):
        with open(path, "rb") as handle:
            records.extend(fastavro.reader(handle))
    fields = {}
    for name in (records[0] if records else {}):
        values = [value.encode("utf-8") if isinstance(value, str) else json.dumps(value, ensure_ascii=False).encode()
                  for value in (record[name] for record in records)]
        raw = b"\n".join(values)
        fields[name] = {"raw": len(raw), "deflated": len(zlib.compress(raw, 6))}

    def rewritten(change: dict) -> int:
        buffer = io.BytesIO()
        fastavro.writer(buffer, PARSED_SCHEMA, (dict(record, **change) for record in records), codec=DEFAULT_CODEC,
                        codec_compression_level=resolve_level(DEFAULT_CODEC, None), sync_interval=DEFAULT_SYNC_INTERVAL)
        return buffer.tell()

    variants = {"as written": rewritten({}), "without text": rewritten({"text": ""}),
                "without text and links": rewritten({"text": "", "links": []})}
    return {"fields": fields, "variants": variants, "codec": DEFAULT_CODEC}


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="the developer corpus (its warc/ folder holds the pages); default: %(default)s")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-bench",
                        help="where the generated corpus and outputs go (default: %(default)s)")
    parser.add_argument("--mb", type=float, default=400,
                        help="MB of HTML in the generated corpus (default %(default)s; 2 workers need ~400+)")
    parser.add_argument("--files", type=int, default=0, help="WARC files to generate (default: one per ~8 MB of HTML)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated, of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--reps", type=int, default=3, help="runs per page and method in `extract` (default 3)")
    parser.add_argument("--pages", type=int, default=0, help="use every n-th page so that about this many remain")
    parser.add_argument("--pipeline-reps", type=int, default=2, help="runs of each alternative in `pipeline` and "
                        "`workers` (default 2)")
    parser.add_argument("--results", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sections = parse_sections(parser, args.sections, SECTIONS)

    sys.path.insert(0, str(REPO))
    print(f"webcorpus throughput benchmark: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {', '.join(f'{load:.1f}' for load in os.getloadavg())}")
    pages = load_pages(args.corpus)
    results: dict = {"args": {key: str(value) for key, value in vars(args).items()}}
    checks: list[tuple[str, str, bool]] = []

    if "extract" in sections:
        chosen = pages[::max(1, len(pages) // args.pages)] if args.pages else pages
        results["extract"] = run_extract(chosen, args.reps)
        checks += print_extract(results["extract"])

    if set(sections) & {"pipeline", "workers", "memory", "size"}:
        files = args.files or max(4, round(args.mb / 8))
        corpus_dir = args.work / "corpus"
        print(f"\nGenerating {args.mb:.0f} MB of HTML in {files} WARC files in {corpus_dir} (cached)...", flush=True)
        manifest = generate_corpus(pages, args.mb, corpus_dir, files, args.seed)
        inputs = [str(corpus_dir / name) for name in manifest["files"]]
        html_mb = manifest["html_bytes"] / 1e6
        print(f"  {manifest['records']} records ({manifest['duplicates']} exact duplicates), {html_mb:.0f} MB of HTML, "
              f"{manifest['warc_bytes'] / 1e6:.0f} MB of WARC.gz")
        results["corpus"] = manifest

        if "pipeline" in sections or "size" in sections:
            result = run_pipeline_vs_loop(inputs, args.corpus, args.work,
                                          args.pipeline_reps if "pipeline" in sections else 1, html_mb)
            results["pipeline"] = {key: value for key, value in result.items() if key != "report"}
            report = result["report"]
            if "pipeline" in sections:
                print(f"  median: pipeline {result['pipeline_s']:.1f} s ({html_mb / result['pipeline_s']:.1f} MB/s), "
                      f"plain loop {result['loop_s']:.1f} s ({html_mb / result['loop_s']:.1f} MB/s): "
                      f"{result['ratio']:.2f}x")
                print(f"  CPU time: pipeline {result['pipeline_cpu']:.1f} s, plain loop {result['loop_cpu']:.1f} s "
                      f"({result['pipeline_cpu'] / result['loop_cpu']:.2f}x); fixed cost (smallest file): pipeline "
                      f"{result['pipeline_fixed_s']:.1f} s, loop {result['loop_fixed_s']:.1f} s; without it: "
                      f"{(result['pipeline_s'] - result['pipeline_fixed_s']) / (result['loop_s'] - result['loop_fixed_s']):.2f}x")
                print(f"  records kept: pipeline {report['records']['kept']}, loop {result['loop_counts']['kept']}; "
                      f"duplicates: pipeline {report['records']['duplicates']}, "
                      f"loop {result['loop_counts']['duplicates']}")
                checks.append(("pipeline vs plain loop (median wall time)",
                               f"{result['ratio']:.2f}x <= {TARGETS['pipeline_vs_loop']}x",
                               result["ratio"] <= TARGETS["pipeline_vs_loop"]))
            if "size" in sections:
                raw, written = report["bytes"]["raw_html"], report["bytes"]["written"]
                ratio = raw / written
                codec = (report.get("options") or report.get("build") or {}).get("codec", parts_codec())
                print(f"\n== Output size (default codec: {codec})")
                for name in ("raw_html", "cleaned", "minimized", "written"):
                    print(f"  {name:<12}{report['bytes'][name]:>16,} bytes  {raw / report['bytes'][name]:7.2f}x")
                parts = composition(args.work / "out-pipeline")
                total = sum(part["deflated"] for part in parts["fields"].values())
                print("  written records by field (each field's values deflated alone, level 6):")
                for name, part in sorted(parts["fields"].items(), key=lambda item: -item[1]["deflated"])[:6]:
                    print(f"    {name:<22}{part['raw']:>14,} raw {part['deflated']:>12,} deflated "
                          f"({part['deflated'] / total:5.1%})")
                print(f"  the records rewritten as one Avro file ({parts['codec']}, default level and block size):")
                for name, size in parts["variants"].items():
                    print(f"    {name:<24}{size:>14,} bytes  raw HTML / this: {raw / size:6.2f}x")
                results["size"] = {"raw_html": raw, "written": written, "ratio": ratio,
                                   "bytes": report["bytes"], "composition": parts}
                checks.append(("raw HTML / written bytes (default codec)", f"{ratio:.1f}x >= {TARGETS['size_ratio']}x",
                               ratio >= TARGETS["size_ratio"]))

        if "workers" in sections:
            result = run_workers(inputs, args.work, args.pipeline_reps, html_mb)
            results["workers"] = result
            print(f"  median: 1 worker {result['one_s']:.1f} s, 2 workers {result['two_s']:.1f} s: "
                  f"{result['speedup']:.2f}x faster; CPU busy on average: 1 worker "
                  f"{result['one_cpu'] / result['one_s']:.2f}, 2 workers {result['two_cpu'] / result['two_s']:.2f} cores")
            if "pipeline" in results:
                in_process = results["pipeline"]["pipeline_s"]
                print(f"  (in-process runner, 1 worker: {in_process:.1f} s; 2 workers are "
                      f"{in_process / result['two_s']:.2f}x faster than that)")
            checks.append(("2 workers vs 1 (median wall time)", f"{result['speedup']:.2f}x >= {TARGETS['two_workers']}x",
                           result["speedup"] >= TARGETS["two_workers"]))

        if "memory" in sections:
            result = run_memory(inputs, args.work, html_mb)
            results["memory"] = result
            peak4 = result["sizes"][4]["peak_mib"]
            print(f"  peak at 4x / peak at 1x: {result['growth']:.2f}x; peak at 4x: {peak4:.0f} MiB")
            checks.append(("peak RSS at 4x / at 1x", f"{result['growth']:.2f}x <= {TARGETS['memory_growth']}x",
                           result["growth"] <= TARGETS["memory_growth"]))
            checks.append(("peak RSS at 4x", f"{peak4:.0f} MiB < {TARGETS['memory_mib']} MiB",
                           peak4 < TARGETS["memory_mib"]))

    if checks:
        print("\n== Targets")
        for name, value, met in checks:
            print(f"  {name:<58}{value:>26}  {verdict(met)}")
    results["targets"] = [{"name": name, "value": value, "met": met} for name, value, met in checks]
    if args.results:
        args.results.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
