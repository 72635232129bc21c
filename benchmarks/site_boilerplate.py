"""`--site-boilerplate` measured: the lines it removes against a gold, main content with and without it, and its
cost in a build.

    python -m benchmarks.site_boilerplate [--sites 40] [--pages 50] [--cost-sites 400] [--reps 3] [--corpus DIR]

Sections (`--sections`, all by default):
- `generated`: a crawl of `--sites` sites of `--pages` pages (`devcorpus.site_crawl`: menus, cookie notices,
  newsletters, footers and "related" lines repeated, articles not, a third of the sites without the markup
  that tells them apart), built with `--clean-text`, with and without `--main-content`, each with and without
  `--site-boilerplate`. Per build: the share of each kind of gold line kept, and line precision (gold content
  lines over the lines written) and recall (content lines written over content lines); of the lines the option
  removed, the share that is boilerplate.
- `dev`: the developer corpus (`$WEBCORPUS_CORPUS`) built with `--main-content --clean-text`, with and without
  the option; each gold page's written text (a dropped duplicate's: its survivor's) measured as
  `benchmarks.main_content` measures extractors; and the lines removed from the genuine Common Crawl sample.
- `cost`: wall time, CPU time and peak RSS (the process tree's) of a build of a generated crawl of
  `--cost-sites` sites, and of the developer corpus, with and without the option, alternating, `--reps` each;
  the ratio of the medians (target: at most 1.3x); and, a build of 6 pages measuring the fixed part (start-up,
  the graph: the option adds some 25 steps to it), the ratio of what is past it.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks import parse_sections
from benchmarks.main_content import print_summaries, run as measure_pages
from benchmarks.throughput import alternate, checked, pipeline_command, run_measured
from devcorpus import default_corpus
from devcorpus.gold import boilerplate_snippets, load_gold_pages
from devcorpus.site_crawl import CONTENT, KINDS, crawl_warc, generate_crawl

SECTIONS = ("generated", "dev", "cost")
OPTION = ("--site-boilerplate",)
COST_TARGET = 1.3
GENUINE = "genuine-CC-MAIN-2020-34-sample.warc.gz"


def written(output: Path) -> dict[str, dict]:
    """The records of a build's corpus, by URL."""
    from transforms.corpus.read_corpus import iter_corpus

    return {record["url"]: record for record in iter_corpus(str(output))}


def build(inputs: list[str], output: Path, *flags: str) -> dict:
    return checked(run_measured(pipeline_command(inputs, output, ("--clean-text", *flags))), " ".join(flags) or "build")


def run_generated(work: Path, sites: int, pages: int) -> dict:
    crawl = generate_crawl(sites, pages)
    warc = work / "generated.warc.gz"
    warc.write_bytes(crawl_warc(crawl))
    gold = {page.url: page.lines for page in crawl}
    print(f"\n== Generated crawl: {sites} sites of {pages} pages, {warc.stat().st_size / 1e6:.1f} MB of WARC")
    results, kept_by_build = {}, {}
    for name, flags in (("whole page", ()), ("whole page + site", OPTION), ("--main-content", ("--main-content",)),
                        ("--main-content + site", ("--main-content", *OPTION))):
        output = work / f"out-{len(results)}"
        build([str(warc)], output, *flags)
        records = written(output)
        kept = {url: set(record["clean_text"].split("\n")) for url, record in records.items()}
        kept_by_build[name] = kept
        of_kind, total = Counter(), Counter()
        for url, lines in gold.items():
            for line, kind in lines:
                total[kind] += 1
                of_kind[kind] += line in kept.get(url, ())
        content = sum(total[kind] for kind in CONTENT)
        content_kept = sum(of_kind[kind] for kind in CONTENT)
        lines_written = sum(of_kind.values())
        results[name] = {"kept_share": {kind: of_kind[kind] / total[kind] for kind in KINDS if total[kind]},
                         "precision": content_kept / lines_written, "recall": content_kept / content}
    for base, with_option in (("whole page", "whole page + site"), ("--main-content", "--main-content + site")):
        removed = Counter()
        for url, lines in gold.items():
            for line, kind in lines:
                if line in kept_by_build[base].get(url, ()) and line not in kept_by_build[with_option].get(url, ()):
                    removed[kind in CONTENT] += 1
        results[with_option]["removed_boilerplate_share"] = (removed[False] / sum(removed.values())
                                                             if removed else None)
        results[with_option]["removed_lines"] = sum(removed.values())
    print(f"  {'build':<24}" + "".join(f"{kind:>10}" for kind in KINDS)
          + f"{'precision':>11}{'recall':>8}{'removed: boilerplate':>22}")
    for name, result in results.items():
        share = result.get("removed_boilerplate_share")
        removed = "" if share is None and "removed_lines" not in result else (
            f"{share:.3f} of {result['removed_lines']}" if share is not None else "none")
        print(f"  {name:<24}" + "".join(f"{result['kept_share'].get(kind, 0):>10.3f}" for kind in KINDS)
              + f"{result['precision']:>11.3f}{result['recall']:>8.3f}{removed:>22}")
    print("  (each kind: the share of its lines written)")
    return results


def survivors(output: Path) -> dict[str, str]:
    """A dropped duplicate's URL -> its survivor's (duplicates-*.jsonl)."""
    mapped = {}
    for path in sorted(output.glob("duplicates-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            duplicate = json.loads(line)
            mapped[duplicate["url"]] = duplicate["survivor_url"]
    return mapped


def run_dev(work: Path, corpus: Path) -> dict:
    inputs = sorted(glob.glob(str(corpus / "warc" / "*.warc.gz")))
    pages, _ = load_gold_pages(corpus)
    print(f"\n== Developer corpus: {len(inputs)} WARC files, {len(pages)} gold pages; --main-content --clean-text")
    methods, removed = {}, {}
    for name, flags in (("--main-content", ()), ("--main-content --site-boilerplate", OPTION)):
        output = work / f"dev-{len(methods)}"
        build(inputs, output, "--main-content", *flags)
        records, moved = written(output), survivors(output)

        def lines_of(page, records=records, moved=moved):
            record = records.get(page.url) or records.get(moved.get(page.url, ""))
            return (record["clean_text"].split("\n") if record else []), 0.0

        methods[name] = lines_of
        report = json.loads((output / "report.json").read_text())
        removed[name] = report.get("site_boilerplate")
    summaries = measure_pages(pages, methods, 1, boilerplate_snippets(corpus))
    for summary in summaries.values():
        # (Read from a build: no time of its own.)
        summary["pooled"]["ms_median"] = None
    print_summaries(summaries)
    option = removed["--main-content --site-boilerplate"]
    print(f"\n  --site-boilerplate removed {option['lines_removed']:,} lines ({option['bytes_removed']:,} bytes) from "
          f"{option['documents_changed']:,} pages; by domain: "
          + ", ".join(f"{domain['domain']} {domain['lines_removed']}" for domain in option["top_domains"][:8]))
    genuine = [str(corpus / "warc" / GENUINE)]
    output = work / "genuine"
    build(genuine, output, *OPTION)
    on_genuine = json.loads((output / "report.json").read_text())["site_boilerplate"]
    print(f"  on the genuine Common Crawl sample ({GENUINE}): {on_genuine['lines_removed']} lines removed from "
          f"{on_genuine['documents_changed']} pages")
    return {"summaries": summaries, "removed": option, "genuine": on_genuine}


def cost_of(inputs: list[str], work: Path, reps: int, label: str) -> dict:
    """Builds of `inputs` without and with the option, alternating, `reps` each: the medians and their ratios."""
    runs = alternate({"without": pipeline_command(inputs, work / f"{label}-without"),
                      "--site-boilerplate": pipeline_command(inputs, work / f"{label}-with", OPTION)},
                     reps, label)
    figures = {name: {key: statistics.median(run[key] for run in made)
                      for key in ("seconds", "cpu_seconds", "peak_rss_mib")} for name, made in runs.items()}
    ratios = {key: figures["--site-boilerplate"][key] / figures["without"][key] for key in figures["without"]}
    print(f"  {'median':<14}{'without':>10}{'with':>10}")
    for key, ratio in ratios.items():
        print(f"  {key:<14}{figures['without'][key]:>10.1f}{figures['--site-boilerplate'][key]:>10.1f}  {ratio:.2f}x"
              f"  ({'met' if ratio <= COST_TARGET else 'NOT met'}: at most {COST_TARGET}x)")
    return {"figures": figures, "ratios": ratios}


def run_cost(work: Path, sites: int, pages: int, reps: int, corpus: Path) -> dict:
    warc = work / "cost.warc.gz"
    warc.write_bytes(crawl_warc(generate_crawl(sites, pages, seed=7)))
    print(f"\n== Cost: a generated crawl of {sites} sites of {pages} pages, {warc.stat().st_size / 1e6:.1f} MB of WARC, "
          f"{reps} runs each, alternating")
    costs = {"generated": cost_of([str(warc)], work, reps, "cost")}
    dev = sorted(glob.glob(str(corpus / "warc" / "*.warc.gz")))
    print(f"\n== Cost: the developer corpus's {len(dev)} WARC files (real pages), {reps} runs each, alternating")
    costs["dev"] = cost_of(dev, work, reps, "cost-dev")
    tiny = work / "tiny.warc.gz"
    tiny.write_bytes(crawl_warc(generate_crawl(2, 3, seed=7)))
    print(f"\n== Cost: the fixed part, a crawl of 2 sites of 3 pages, {reps} runs each, alternating")
    fixed = cost_of([str(tiny)], work, reps, "cost-tiny")
    print("\n  the cost past the fixed part (median less the tiny crawl's), with over without")
    for name in ("generated", "dev"):
        costs[name]["past_fixed"] = {key: (costs[name]["figures"]["--site-boilerplate"][key]
                                           - fixed["figures"]["--site-boilerplate"][key])
                                     / (costs[name]["figures"]["without"][key] - fixed["figures"]["without"][key])
                                     for key in ("seconds", "cpu_seconds", "peak_rss_mib")}
        print(f"  {name:<10}" + "".join(f"  {key} {ratio:.2f}x" for key, ratio in costs[name]["past_fixed"].items()))
    costs["fixed"] = fixed
    return costs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--sites", type=int, default=40)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--cost-sites", type=int, default=400)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    arguments = parser.parse_args(argv)
    sections = parse_sections(parser, arguments.sections, SECTIONS)
    results = {}
    with tempfile.TemporaryDirectory(prefix="site-boilerplate-") as directory:
        work = Path(directory)
        if "generated" in sections:
            results["generated"] = run_generated(work, arguments.sites, arguments.pages)
        if "dev" in sections:
            results["dev"] = run_dev(work, arguments.corpus or default_corpus())
        if "cost" in sections:
            results["cost"] = run_cost(work, arguments.cost_sites, arguments.pages, arguments.reps,
                                       arguments.corpus or default_corpus())
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
