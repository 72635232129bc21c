"""Gopher's repetition rules per page, their n-gram measures in C (`transforms/native/_gopher.c`) and in Python.

    python -m benchmarks.gopher_ngrams [--corpus DIR] [--rounds 3] [--limit N]

The texts: the `clean_text` of every page of the developer corpus with its language (`benchmarks.filters`'
`corpus_texts`). Each round times, alternated (C, Python, Python, C, ...), in this process's CPU time: every
repetition rule measured (`gopher.repetition_measures`, as `--annotate` measures them) and the n-gram measures
alone (top 2-4-grams and repeated 5-10-grams of the page's words, split beforehand), with `gopher.NGrams` the C
type and then the pure path's `JoinedNGrams`. Prints the median of the rounds, in ms per page, and checks that
both paths measured the same values.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks import alternated_runs
from benchmarks.filters import corpus_texts
from devcorpus import default_corpus
from transforms.stages.filters import gopher
from transforms.stages.filters.segmenters import word_splitter

PATHS = {"C": gopher.NGrams, "Python": gopher.JoinedNGrams}


def ngram_measures(ngrams, words) -> list[int]:
    return ([ngrams.top_characters(n) for n in (2, 3, 4) if len(words) >= n]
            + [ngrams.repeated_characters(n) for n in range(5, 11)])


def timed(path: str, pages: list[tuple[str, str]], words: list) -> dict:
    """CPU seconds of every repetition rule on `pages`, and of the n-gram measures alone on `words`, with `path`."""
    gopher.NGrams = PATHS[path]
    limits = dict(gopher.REPETITION_DEFAULTS)
    start = time.process_time()
    rules = [list(gopher.repetition_measures(text, limits, language)) for text, language in pages]
    middle = time.process_time()
    ngrams = [ngram_measures(gopher.NGrams(page_words), page_words) for page_words in words]
    return {"rules": middle - start, "ngrams": time.process_time() - middle, "values": (rules, ngrams)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages")
    args = parser.parse_args(argv)
    if gopher._gopher is None:
        raise SystemExit("transforms.native._gopher is not built or is not in use: python setup.py build_ext --inplace")
    pages = [(text["text"], text["language"]) for text in corpus_texts(args.corpus, args.limit)]
    splits = [(word_splitter(language, None), text) for text, language in pages]
    words = [split(text) for split, text in splits if split is not None]
    print(f"{len(pages)} pages, {len(words)} with words; rounds: {args.rounds}", flush=True)
    made = alternated_runs({path: lambda path=path: timed(path, pages, words) for path in PATHS}, args.rounds,
                           lambda path, run: f"  {path}: rules {run['rules']:.2f} s, n-grams {run['ngrams']:.2f} s")
    values = made["C"][0]["values"]
    assert all(run["values"] == values for runs in made.values() for run in runs), "C and Python measured differently"
    per_page = {path: {part: statistics.median(run[part] for run in runs) * 1000 / count
                       for part, count in (("rules", len(pages)), ("ngrams", len(words)))}
                for path, runs in made.items()}
    print(f"  {'ms per page':<32} {'C':>8} {'Python':>8} {'Python / C':>11}")
    for part, name in (("rules", "every repetition rule"), ("ngrams", "the n-gram measures alone")):
        c, python = per_page["C"][part], per_page["Python"][part]
        print(f"  {name:<32} {c:8.3f} {python:8.3f} {python / c:10.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
