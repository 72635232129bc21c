"""Near-duplicate detection: webcorpus's NearDedup against labelled pairs and against datatrove's MinHash.

    WEBCORPUS_CORPUS=/work/shared/corpus python -m benchmarks.near_dedup \\
        [--datatrove-python /work/venv-datatrove/bin/python] [--articles 300] [--sections pairs,cost]

Sections (all by default):

- pairs: a labelled corpus generated from the developer corpus's gold
  article texts (`gold/gold.jsonl`, articles of 150 words or more, drawn
  with a fixed seed). Articles are put on sites of `SITE_SIZE`; a site's
  pages share its template (a banner, a menu, a sidebar and a footer cut
  from another article's text). Each article gives a base page and four
  near-duplicates made by known edits: `date` (the published date changed),
  `counter` (the view counter changed), `banner` (the banner swapped for
  another), `blocks` (10% of the article's blocks, at least one, replaced by
  blocks of another article). The 10 pairs among an article's 5 pages are
  the positives; any pair of pages of two articles of the same site (same
  template, other article) must not match. The pages go through
  `SignDocuments | NearDedup` in Beam (DirectRunner) at each parameter
  setting of `SETTINGS`, and through datatrove's MinHash pipeline with its
  default `MinhashConfig` (5-grams, 14 buckets x 8 hashes, no similarity
  check: a shared bucket is a match) when `--datatrove-python` names a
  Python that has datatrove (benchmarks/requirements.txt; a virtual
  environment of its own, since datatrove brings dill, spacy and others
  into an environment that Beam's pickling depends on). A found pair is any
  two pages of one output cluster. Reported: precision and recall of the
  pairs, recall by edit, agreement with datatrove (pairs both found /
  pairs either found), wall time and peak RSS of each run (a subprocess;
  Beam's start-up, some seconds, is in its time).
- cost: the developer-corpus build (`python -m pipeline`) with and without
  `--near-dedup`, with 1 and with 2 workers (`--direct_num_workers=2
  --direct_running_mode=multi_processing`), alternating, `--reps` each:
  median wall time and peak RSS of the process tree.

The machine is shared and noisy: compare numbers of one run only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks import parse_sections
from benchmarks.throughput import REPO, run_measured, worker_processes

SECTIONS = ("pairs", "cost")
SITE_SIZE = 10
EDITS = ("date", "counter", "banner", "blocks")
MIN_WORDS = 150
# (threshold, shingle size, bands, rows): the default first, then datatrove's bands.
SETTINGS = (
    (0.7, 5, 20, 5),
    (0.7, 5, 14, 8),
    (0.6, 5, 20, 5),
    (0.8, 5, 20, 5),
    (0.7, 3, 20, 5),
)


def load_articles(corpus: Path, count: int, seed: int) -> list[list[str]]:
    """Gold article texts as lists of blocks (paragraphs), of at least MIN_WORDS words; drawn with `seed`."""
    articles = []
    seen = set()
    for line in (corpus / "gold" / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text = record.get("text") or ""
        blocks = [block.strip() for block in re.split(r"\n+", text) if block.strip()]
        if len(text.split()) >= MIN_WORDS and len(blocks) >= 3 and text not in seen:
            seen.add(text)
            articles.append(blocks)
    random.Random(seed).shuffle(articles)
    if len(articles) < count + count // SITE_SIZE * 2 + 4:
        raise SystemExit(f"only {len(articles)} gold articles of {MIN_WORDS}+ words; ask for fewer --articles")
    return articles


def words_of(blocks: list[str], count: int, start: int = 0) -> str:
    return " ".join(" ".join(blocks).split()[start:start + count])


def generate_pages(articles: list[list[str]], count: int, seed: int) -> tuple[list[dict], set, set]:
    """Pages ({"id", "text", "article", "edit"}), the positive pairs and the same-template negative pairs."""
    rng = random.Random(seed)
    bodies, spares = articles[:count], articles[count:]
    pages = []
    for site in range(count // SITE_SIZE):
        template_text = spares[site]
        banners = [words_of(spares[-1 - (site + k) % len(spares)], 25) for k in range(2)]
        menu = words_of(template_text, 20)
        sidebar = words_of(template_text, 40, 20)
        footer = words_of(template_text, 30, 60)
        for article in range(site * SITE_SIZE, (site + 1) * SITE_SIZE):
            blocks = bodies[article]
            date = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            views = rng.randint(100, 99999)

            def page(edit: str, banner=banners[0], date=date, views=views, body=blocks):
                text = "\n".join([banner, menu, f"Published {date}", *body, f"Viewed {views} times", sidebar, footer])
                return {"id": f"s{site:03d}-a{article:04d}-{edit}", "text": text, "article": article, "edit": edit}

            other = bodies[(article + count // 2) % count]
            changed = set(rng.sample(range(len(blocks)), max(1, len(blocks) // 10)))
            edited = [other[i % len(other)] if i in changed else block for i, block in enumerate(blocks)]
            pages += [
                page("base"),
                page("date", date=f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"),
                page("counter", views=views + rng.randint(1, 500)),
                page("banner", banner=banners[1]),
                page("blocks", body=edited),
            ]
    by_article: dict[int, list[str]] = {}
    for page_ in pages:
        by_article.setdefault(page_["article"], []).append(page_["id"])
    positives = {pair for ids in by_article.values() for pair in itertools.combinations(sorted(ids), 2)}
    negatives = set()
    for site in range(count // SITE_SIZE):
        site_ids = [page_["id"] for page_ in pages if page_["id"].startswith(f"s{site:03d}-")]
        negatives |= {(a, b) for a, b in itertools.combinations(sorted(site_ids), 2) if a[5:10] != b[5:10]}
    return pages, positives, negatives


def pairs_of(clusters: list[list[str]]) -> set:
    return {pair for cluster in clusters for pair in itertools.combinations(sorted(cluster), 2)}


def run_webcorpus(pages_path: str, output: str, threshold: float, shingle_size: int, bands: int, rows: int) -> None:
    """`SignDocuments | NearDedup` in Beam on the pages; writes their clusters (survivor first) to `output`."""
    import apache_beam as beam

    from transforms.document import Document
    from transforms.vocabulary import Capture
    from transforms.stages.near_dedup import MinHashParameters
    from transforms.stages.near_dedup_transform import NearDedup, SignDocuments

    parameters = MinHashParameters(shingle_size, bands, rows, threshold)
    docs = []
    for index, line in enumerate(Path(pages_path).read_text(encoding="utf-8").splitlines()):
        page = json.loads(line)
        docs.append(Document(Capture(f"2024-05-18T00:00:{index % 60:02d}Z", f"https://example.com/{page['id']}",
                                     page["id"], "generated", index, 0), http_status=200, content_type="text/html",
                             text=page["text"]))
    with tempfile.TemporaryDirectory() as work:
        with beam.Pipeline() as pipeline:
            near = pipeline | beam.Create(docs) | SignDocuments(parameters) | NearDedup(parameters)
            (near.near_duplicates
             | beam.Map(lambda duplicate: json.dumps([duplicate.survivor_record_id, duplicate.warc_record_id]))
             | beam.io.WriteToText(f"{work}/pairs", num_shards=1))
        clusters: dict[str, list[str]] = {}
        for path in Path(work).glob("pairs*"):
            for line in path.read_text().splitlines():
                survivor, dropped = json.loads(line)
                clusters.setdefault(survivor, [survivor]).append(dropped)
    Path(output).write_text(json.dumps({"clusters": sorted(clusters.values())}))


def score(found: set, positives: set, negatives: set, pages: list[dict]) -> dict:
    edit_of = {page["id"]: page["edit"] for page in pages}
    true = found & positives
    by_edit = {}
    for edit in EDITS:
        wanted = {pair for pair in positives if {edit_of[pair[0]], edit_of[pair[1]]} == {"base", edit}}
        by_edit[edit] = len(wanted & found) / len(wanted)
    return {
        "pairs_found": len(found),
        "precision": len(true) / len(found) if found else None,
        "recall": len(true) / len(positives),
        "same_template_matched": len(found & negatives),
        "recall_by_edit": by_edit,
    }


def measured_clusters(command: list[str], output: Path) -> tuple[list[list[str]], dict]:
    run = run_measured(command)
    if run["code"] != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{run['output'][-3000:]}")
    return json.loads(output.read_text())["clusters"], run


def run_pairs(args, work: Path) -> dict:
    articles = load_articles(Path(args.corpus), args.articles, args.seed)
    pages, positives, negatives = generate_pages(articles, args.articles, args.seed)
    pages_path = work / "pages.jsonl"
    pages_path.write_text("".join(json.dumps({"id": page["id"], "text": page["text"]}) + "\n" for page in pages))
    result = {"pages": len(pages), "articles": args.articles, "positive_pairs": len(positives),
              "negative_pairs": len(negatives), "webcorpus": {}}
    found_by = {}
    for threshold, shingle_size, bands, rows in SETTINGS:
        name = f"t={threshold} n={shingle_size} {bands}x{rows}"
        output = work / f"webcorpus-{len(found_by)}.json"
        clusters, run = measured_clusters(
            [sys.executable, "-m", "benchmarks.near_dedup", "--run-webcorpus", str(pages_path), str(output),
             str(threshold), str(shingle_size), str(bands), str(rows)], output)
        found_by[name] = pairs_of(clusters)
        result["webcorpus"][name] = dict(score(found_by[name], positives, negatives, pages),
                                         seconds=round(run["seconds"], 1), peak_rss_mib=round(run["peak_rss_mib"]))
        print(name, json.dumps(result["webcorpus"][name]), flush=True)
    if args.datatrove_python:
        output = work / "datatrove.json"
        clusters, run = measured_clusters(
            [args.datatrove_python, str(REPO / "benchmarks" / "near_dedup_datatrove.py"), str(pages_path),
             str(work / "datatrove"), str(output)], output)
        found = pairs_of(clusters)
        result["datatrove"] = dict(score(found, positives, negatives, pages), seconds=round(run["seconds"], 1),
                                   peak_rss_mib=round(run["peak_rss_mib"]))
        default = found_by[next(iter(found_by))]
        result["agreement_with_default"] = {
            "both": len(found & default), "webcorpus_only": len(default - found),
            "datatrove_only": len(found - default),
            "jaccard": len(found & default) / len(found | default) if found | default else 1.0,
        }
        print("datatrove", json.dumps(result["datatrove"]), json.dumps(result["agreement_with_default"]), flush=True)
    return result


def run_cost(args, work: Path) -> dict:
    inputs = str(Path(args.corpus) / "warc" / "*.warc.gz")
    two = worker_processes(2)
    variants = {
        "1 worker": (), "1 worker, --near-dedup": ("--near-dedup",),
        "2 workers": two, "2 workers, --near-dedup": two + ("--near-dedup",),
    }
    runs = {name: [] for name in variants}
    for _ in range(args.reps):
        for name, extra in variants.items():
            command = [sys.executable, "-m", "pipeline", "--input", inputs, "--output", str(work / "build"),
                       "--quiet", *extra]
            run = run_measured(command)
            if run["code"] != 0:
                raise SystemExit(f"{' '.join(command)} failed:\n{run['output'][-3000:]}")
            runs[name].append(run)
    result = {name: {"seconds": round(statistics.median(run["seconds"] for run in measured), 1),
                     "peak_rss_mib": round(max(run["peak_rss_mib"] for run in measured))}
              for name, measured in runs.items()}
    print(json.dumps(result, indent=2), flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--run-webcorpus"]:
        pages, output, threshold, shingle_size, bands, rows = argv[1:]
        run_webcorpus(pages, output, float(threshold), int(shingle_size), int(bands), int(rows))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.near_dedup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get("WEBCORPUS_CORPUS"),
                        help="The developer corpus (default: $WEBCORPUS_CORPUS).")
    parser.add_argument("--datatrove-python", help="A Python with datatrove installed (skipped without).")
    parser.add_argument("--articles", type=int, default=150, help="Articles of the labelled corpus (5 pages each).")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--reps", type=int, default=2, help="Builds of each variant in the cost section.")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--json", help="Also write the results to this file.")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error("set WEBCORPUS_CORPUS or --corpus to the developer corpus")
    sections = parse_sections(parser, args.sections, SECTIONS)
    results = {}
    with tempfile.TemporaryDirectory(prefix="near-dedup-") as work:
        if "pairs" in sections:
            results["pairs"] = run_pairs(args, Path(work))
        if "cost" in sections:
            results["cost"] = run_cost(args, Path(work))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
