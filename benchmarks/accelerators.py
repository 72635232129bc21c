"""Both paths of CleanHtml and MinimizeText side by side: the C accelerators and the pure-Python path.

`python -m benchmarks.accelerators [--corpus DIR] [--rounds 3]` times, in one
child process per path (`WEBCORPUS_PURE_PYTHON=1` for the pure one), CleanHtml
and MinimizeText on every page of the developer corpus
(`devcorpus.pages.load_pages`), each page `--rounds` times (the median
of its CPU times counts), and prints per path the mean time per page of each
stage and both together, and the median page. See transforms/native/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from devcorpus import default_corpus


def measure(corpus: Path, rounds: int) -> dict:
    """This process's path, timed on the corpus's pages."""
    from devcorpus.pages import load_pages
    from transforms import native
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.document import Document
    from transforms.vocabulary import Capture
    from transforms.stages.minimize_text import minimize_document

    pages = [Document(Capture("", page.url, "", "", 0, 0), 200, page.content_type, utf8_payload=page.payload)
             for page in load_pages(corpus)]
    cleaner = HtmlCleaner()
    clean_times, minimize_times = [], []
    # CPU time of this process, which other work on a shared machine disturbs less than the wall clock.
    clock = time.process_time
    for page in pages:
        cleans, minimizes = [], []
        for _ in range(rounds):
            start = clock()
            cleaned = cleaner(page)
            middle = clock()
            minimize_document(cleaned)
            cleans.append(middle - start)
            minimizes.append(clock() - middle)
        clean_times.append(statistics.median(cleans))
        minimize_times.append(statistics.median(minimizes))
    return {"accelerator": native.accelerator(), "pages": len(pages),
            "clean_ms": statistics.mean(clean_times) * 1e3, "minimize_ms": statistics.mean(minimize_times) * 1e3,
            "median_page_ms": statistics.median(map(sum, zip(clean_times, minimize_times))) * 1e3}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.corpus, args.rounds)))
        return 0
    results = []
    for pure in ("0", "1"):
        child = subprocess.run([sys.executable, "-m", "benchmarks.accelerators", "--child", "--corpus", str(args.corpus),
                                "--rounds", str(args.rounds)], env=dict(os.environ, WEBCORPUS_PURE_PYTHON=pure),
                               capture_output=True, text=True, check=True)
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    print("| path | pages | CleanHtml ms/page | MinimizeText ms/page | both ms/page | median page ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for result in results:
        print(f"| {result['accelerator']} | {result['pages']} | {result['clean_ms']:.3f} | {result['minimize_ms']:.3f} | "
              f"{result['clean_ms'] + result['minimize_ms']:.3f} | {result['median_page_ms']:.3f} |")
    c, python = results
    print(f"pure Python / C, both stages: {(python['clean_ms'] + python['minimize_ms']) / (c['clean_ms'] + c['minimize_ms']):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
