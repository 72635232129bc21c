"""Judged by a model, on the dev corpus's gold pages: a classifier trained by `pipeline.train_quality`, its cost per
page, and decontamination's.

    python -m benchmarks.quality_model [--corpus DIR] [--items 10000] [--train OPTIONS] [--save-model FILE]
                                       [--official-fasttext DIR]

- separation: the gold pages are split in two halves by their id's SHA-256; `train_quality` (its defaults: 100
  dimensions, bigrams, 5 epochs) trains on the first half's gold main-content text (positive) against its
  boilerplate (negative: the blocks CleanHtml keeps that are no line of the gold), and the ROC AUC is that of its
  scores of the other half's examples (target >= 0.9);
- scoring: the time of `quality_model.score` on each page's readable text (CleanHtml's blocks), per page (target
  <= 0.3 ms), beside fastText's own predict of the same lines (the path of a worker without `_classify`; the two
  give the same probabilities on every page) and CleanHtml + MinimizeText's on the same pages;
- decontamination: `--items` generated benchmark items (20 to 40 words of the pages' own vocabulary), the time to
  build their table once, then of `decontaminate.matches` per page (target <= 0.2 ms), beside the pure-Python
  path's (a worker without `_ngrams`; the same matches);
- with `--official-fasttext DIR` (a directory holding the official `fasttext` 0.9.3 package, e.g. `pip install
  --target DIR --no-deps fasttext==0.9.3`), the held-out examples are scored by it too, in a child process, and
  the scores compared with the build's, one by one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from devcorpus import default_corpus
from devcorpus.gold import gold_lines, load_gold_pages

TARGETS = {"roc_auc": 0.9, "score_ms": 0.3, "decontaminate_ms": 0.2}
# Scores the examples of a JSON file with the official library's own predict (its Python predict fails under NumPy 2:
# np.array(copy=False)), printing the probabilities of __label__positive as JSON.
OFFICIAL_SCORES = """
import json, sys, fasttext
model = fasttext.load_model(sys.argv[1])
examples = json.load(open(sys.argv[2]))
print(json.dumps([dict((label, p) for p, label in model.f.predict(text + "\\n", -1, 0.0, "strict"))
                  ["__label__positive"] for text in examples]))
"""


def _key(line: str) -> str:
    return " ".join(line.split())


def examples_of(pages, cleaner) -> list[tuple[str, str, str]]:
    """(page id, gold main text, boilerplate text) of each gold page: its readable text as the build has it."""
    found = []
    for page in pages:
        if not page.gold:
            continue
        gold = gold_lines(page.gold)
        # A block of the gold's text (the gold is segmented into lines otherwise than CleanHtml's blocks).
        whole = _key(page.gold)
        blocks = cleaner.clean(page.utf8, page.url).blocks
        boilerplate = [block for block in blocks if _key(block) not in whole]
        found.append((page.id, "\n".join(gold), "\n".join(boilerplate), "\n".join(blocks)))
    return found


def first_half(page_id: str) -> bool:
    return hashlib.sha256(page_id.encode("utf-8")).digest()[0] % 2 == 0


def per_page_ms(function, texts: list[str], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for text in texts:
            function(text)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000 / len(texts)


def generated_items(texts: list[str], count: int) -> list[str]:
    vocabulary = sorted({word for text in texts for word in text.split()})
    chosen = random.Random(46)
    return [" ".join(chosen.choice(vocabulary) for _ in range(chosen.randint(20, 40))) for _ in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality_model", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=default_corpus())
    parser.add_argument("--items", type=int, default=10_000, help="generated benchmark items to decontaminate against")
    parser.add_argument("--train", default="", metavar="OPTIONS",
                        help="train_quality's options beside its examples, e.g. '--epoch 20'")
    parser.add_argument("--save-model", metavar="FILE", help="keep the model trained (for a build's --quality-model)")
    parser.add_argument("--official-fasttext", metavar="DIR", help="compare with the official fasttext package in DIR")
    args = parser.parse_args(argv)
    from pipeline import train_quality
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages import decontaminate
    from transforms.stages.decontaminate import Benchmark, benchmark_table, matches
    from transforms.stages.minimize_text import minimize_blocks
    from transforms.stages.quality_model import QualityModel, loaded_model, score, scoring_line

    pages, _ = load_gold_pages(Path(args.corpus))
    cleaner = HtmlCleaner()
    examples = examples_of(pages, cleaner)
    training = [example for example in examples if first_half(example[0])]
    held = [example for example in examples if not first_half(example[0])]
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for name, column in (("positive", 1), ("negative", 2)):
            files[name] = os.path.join(folder, f"{name}.jsonl")
            with open(files[name], "w", encoding="utf-8") as out:
                out.writelines(json.dumps({"text": example[column]}) + "\n" for example in training if example[column])
        model_path = os.path.join(folder, "quality.bin")
        start = time.process_time()
        code = train_quality.main(["--positive", files["positive"], "--negative", files["negative"],
                                   "--output", model_path, "--holdout", "0", *args.train.split()])
        trained_s = time.process_time() - start
        if code:
            return code
        if args.save_model:
            shutil.copyfile(model_path, args.save_model)
        model = QualityModel("quality", model_path)
        tests = [(text, truth) for example in held for text, truth in ((example[1], True), (example[2], False)) if text]
        scores = [score(model, text) for text, _ in tests]
        auc = train_quality.roc_auc(scores, [truth for _, truth in tests])
        print(f"{len(examples)} gold pages: trained on {len(training)} ({trained_s:.1f} s of CPU, "
              f"{os.path.getsize(model_path) / 2 ** 20:.0f} MiB model), ROC AUC on the other {len(held)}'s "
              f"{len(tests)} examples {auc:.3f} (target >= {TARGETS['roc_auc']})")
        if args.official_fasttext:
            texts_file = os.path.join(folder, "texts.json")
            with open(texts_file, "w", encoding="utf-8") as out:
                json.dump([" ".join(text.splitlines()) for text, _ in tests], out)
            official = json.loads(subprocess.run(
                [sys.executable, "-c", OFFICIAL_SCORES, model_path, texts_file], check=True, capture_output=True,
                env=dict(os.environ, PYTHONPATH=args.official_fasttext)).stdout)
            same = sum(ours == theirs for ours, theirs in zip(scores, official))
            print(f"the official fasttext's scores equal the build's on {same} of {len(official)} examples")
        readable = [example[3] for example in examples if example[3]]
        fasttext = loaded_model(model_path)
        same = sum(score(model, text) == float(dict(zip(*fasttext.predict(scoring_line(text), k=-1)))[model.label])
                   for text in readable)
        score_ms = per_page_ms(lambda text: score(model, text), readable)
        fasttext_ms = per_page_ms(lambda text: fasttext.predict(scoring_line(text), k=-1), readable)
        clean_ms = per_page_ms(lambda page: minimize_blocks(cleaner.clean(page.utf8, page.url).blocks),
                               [page for page in pages if page.gold], repeats=1)
        words = statistics.mean(len(text.split()) for text in readable)
        print(f"scoring: {score_ms:.3f} ms of CPU per page of {words:,.0f} words on average (target <= "
              f"{TARGETS['score_ms']}), {score_ms / fasttext_ms:.2f}x fastText's own predict's {fasttext_ms:.3f} ms "
              f"(the same scores on {same} of {len(readable)} pages), "
              f"{score_ms / clean_ms:.2f}x CleanHtml + MinimizeText's {clean_ms:.2f} ms")
        items = os.path.join(folder, "items.txt")
        with open(items, "w", encoding="utf-8") as out:
            out.writelines(item + "\n" for item in generated_items(readable, args.items))
        benchmarks = (Benchmark("generated", items),)
        start = time.process_time()
        table = benchmark_table(benchmarks, 13)
        built_s = time.process_time() - start
        decontaminate_ms = per_page_ms(lambda text: matches(text, benchmarks, 13), readable)
        found = [matches(text, benchmarks, 13) for text in readable]
        # The pure path (`_ngrams` not built) builds its own table: its hashes are not the C module's.
        with mock.patch.object(decontaminate, "_ngrams", None):
            benchmark_table.cache_clear()
            benchmark_table(benchmarks, 13)
            pure_ms = per_page_ms(lambda text: matches(text, benchmarks, 13), readable, repeats=1)
            same = sum(matches(text, benchmarks, 13) == counts for text, counts in zip(readable, found))
        benchmark_table.cache_clear()
        print(f"decontamination against {args.items:,} items ({len(table):,} 13-grams, table built in "
              f"{built_s:.2f} s): {decontaminate_ms:.3f} ms of CPU per page (target <= "
              f"{TARGETS['decontaminate_ms']}), {decontaminate_ms / pure_ms:.2f}x the pure-Python path's "
              f"{pure_ms:.3f} ms (the same matches on {same} of {len(readable)} pages), "
              f"{decontaminate_ms / score_ms:.2f}x scoring's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
