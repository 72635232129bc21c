"""The quality rule sets (`--quality`) against datatrove 0.10's filters on the same texts: agreement and time.

    python -m benchmarks.filters --datatrove-python /work/venv-datatrove/bin/python [--rounds 2] [--limit N]

The texts are the `clean_text` of every HTML page of the developer corpus (`$WEBCORPUS_CORPUS`), as the pipeline
makes it (read_warc, decode_document, HtmlCleaner, minimize_document), with the language IdentifyLanguage gives
it; and a generated crawl: `--rounds` remixes of those texts, their letters permuted per round as
`benchmarks.throughput` generates its corpus (the same lines, lengths, punctuation and repeats, no real words).
Each rule set (`gopher`, `c4`, `fineweb`, `fineweb-recipe`) runs here and, in the Python of
`--datatrove-python` (benchmarks/requirements-filters.txt), as datatrove's chain of `GopherRepetitionFilter`,
`GopherQualityFilter`, `C4QualityFilter` and `FineWebQualityFilter` at their defaults. Printed per rule set and
text set: agreement (the same keep or drop; for kept pages whose lines C4 removed, the same text too), every
disagreement with both reasons, and ms per page of each. Agreement is over English pages (identified `en`) and
over all; on other languages the English-only rules are not applied here (docs/stages.md, 4b), by design.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from devcorpus import default_corpus
from benchmarks.throughput import _permutation_table, remix
from transforms.stages.charset import decode_document
from transforms.document import Document
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, RULE_SETS, apply_rule_sets
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.language import identify
from transforms.stages.minimize_text import minimize_document
from transforms.stages.read_warc.read_warc import read_warc

HELPER = Path(__file__).with_name("filters_datatrove.py")


def corpus_texts(corpus: Path, limit: int | None) -> list[dict]:
    """{"id", "url", "text", "language"} of every page of the corpus with text."""
    cleaner = HtmlCleaner()
    texts = []
    for path in sorted(glob.glob(str(corpus / "warc" / "*.warc.gz"))):
        for outcome in read_warc(lambda: open(path, "rb"), path):
            if isinstance(outcome, Document):
                doc = minimize_document(cleaner(decode_document(outcome)), clean_text=True)
                if doc.clean_text.strip():
                    language = identify(doc.clean_text)[0]
                    texts.append({"id": f"dev-{len(texts)}", "url": doc.capture.url, "text": doc.clean_text,
                                  "language": language})
    return texts[:limit] if limit else texts


def generated_texts(texts: list[dict], rounds: int, seed: int = 7) -> list[dict]:
    """`rounds` remixes of `texts`, letters permuted per round (`benchmarks.throughput`'s generated corpus)."""
    rng = random.Random(seed)
    generated = []
    for round_index in range(rounds):
        table = _permutation_table(rng)
        generated.extend({"id": f"gen{round_index}-{text['id']}", "url": text["url"],
                          "text": remix(text["text"], table), "language": text["language"]} for text in texts)
    return generated


def ours(texts: list[dict], rule_set: str) -> tuple[dict, float]:
    start = time.perf_counter()
    decisions = {}
    for text in texts:
        outcome = apply_rule_sets(text["text"], (rule_set,), DEFAULT_THRESHOLDS, text["language"])
        decisions[text["id"]] = {"kept": outcome.drop is None,
                                 "reason": outcome.drop.detail() if outcome.drop else "", "text": outcome.text}
    return decisions, time.perf_counter() - start


def theirs(python: str, texts: list[dict], work: Path) -> dict:
    source, output = work / "texts.jsonl", work / "datatrove.json"
    with open(source, "w", encoding="utf-8") as handle:
        for text in texts:
            handle.write(json.dumps({"id": text["id"], "text": text["text"]}) + "\n")
    # -I: not benchmarks/ first on sys.path (its select.py would shadow the standard library's).
    subprocess.run([python, "-I", str(HELPER), str(source), str(output)], check=True)
    return json.loads(output.read_text())


def compare(texts: list[dict], mine: dict, reference: dict) -> dict:
    english = {text["id"] for text in texts if text["language"] == "en"}
    differing = []
    for text in texts:
        a, b = mine[text["id"]], reference[text["id"]]
        if a["kept"] != b["kept"] or (a["kept"] and a["text"] != b["text"]):
            why = "same decision, other text" if a["kept"] == b["kept"] else (
                f"ours {'keeps' if a['kept'] else 'drops: ' + a['reason']}; "
                f"datatrove {'keeps' if b['kept'] else 'drops: ' + b['reason']}")
            differing.append((text["id"], text["language"], text["url"], why))
    english_differing = sum(1 for item in differing if item[0] in english)
    return {"pages": len(texts), "english": len(english), "differing": differing,
            "agreement": 1 - len(differing) / len(texts) if texts else 1.0,
            "english_agreement": 1 - english_differing / len(english) if english else 1.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datatrove-python", required=True, metavar="PY",
                        help="a Python with datatrove 0.10 (benchmarks/requirements-filters.txt)")
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--rounds", type=int, default=2, help="remixes of the corpus's texts (default 2)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages of the corpus")
    parser.add_argument("--show", type=int, default=30, help="disagreements printed per rule set (default 30)")
    args = parser.parse_args(argv)
    dev = corpus_texts(args.corpus, args.limit)
    sets = {"developer corpus": dev, f"generated ({args.rounds} remixes)": generated_texts(dev, args.rounds)}
    print(f"{'rule set':<16}{'texts':<26}{'pages':>7}{'English':>9}{'agree en':>10}{'agree all':>10}"
          f"{'ms/page':>9}{'datatrove':>11}")
    details = []
    with tempfile.TemporaryDirectory(prefix="filters-bench-") as scratch:
        for label, texts in sets.items():
            if not texts:
                continue
            reference = theirs(args.datatrove_python, texts, Path(scratch))
            for rule_set in RULE_SETS:
                mine, seconds = ours(texts, rule_set)
                result = compare(texts, mine, reference[rule_set]["decisions"])
                theirs_ms = reference[rule_set]["seconds"] * 1000 / len(texts)
                print(f"{rule_set:<16}{label:<26}{result['pages']:>7}{result['english']:>9}"
                      f"{result['english_agreement']:>10.2%}{result['agreement']:>10.2%}"
                      f"{seconds * 1000 / len(texts):>9.3f}{theirs_ms:>11.3f}")
                details.append((rule_set, label, result["differing"]))
    for rule_set, label, differing in details:
        if differing:
            print(f"\n{rule_set} on {label}: {len(differing)} disagreements"
                  + (f" (first {args.show})" if len(differing) > args.show else ""))
            for doc_id, language, url, why in differing[:args.show]:
                print(f"  {doc_id} [{language or '?'}] {url[:70]}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
