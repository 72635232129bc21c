"""datatrove 0.10's quality filters, at their defaults, on a JSON-lines file of {"id", "text"}.

Run by benchmarks/filters.py with the Python of a virtual environment that has datatrove
(benchmarks/requirements-filters.txt); imports nothing of webcorpus. Writes, per rule set, each document's
decision ({"kept": bool, "reason": str, "text": the text after the chain}) and the seconds the chain took in
all, to OUTPUT as JSON.

    python benchmarks/filters_datatrove.py INPUT.jsonl OUTPUT.json
"""

import json
import sys
import time

from datatrove.data import Document
from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter, GopherQualityFilter,
                                        GopherRepetitionFilter)


def chains() -> dict:
    return {
        "gopher": [GopherRepetitionFilter(), GopherQualityFilter()],
        "c4": [C4QualityFilter()],
        "fineweb": [FineWebQualityFilter()],
        "fineweb-recipe": [GopherRepetitionFilter(), GopherQualityFilter(),
                           C4QualityFilter(filter_no_terminal_punct=False), FineWebQualityFilter()],
    }


def decide(chain: list, doc_id: str, text: str) -> dict:
    doc = Document(text=text, id=doc_id)
    for step in chain:
        verdict = step.filter(doc)
        kept, reason = (verdict, "") if isinstance(verdict, bool) else verdict
        if not kept:
            return {"kept": False, "reason": f"{step.name}: {reason}", "text": text}
    return {"kept": True, "reason": "", "text": doc.text}


def main(input_path: str, output: str) -> None:
    with open(input_path, encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    results = {}
    for name, chain in chains().items():
        decide(chain, "warm-up", "A first text to load the tokenizers. It has two sentences.")
        start = time.perf_counter()
        decisions = {doc["id"]: decide(chain, doc["id"], doc["text"]) for doc in docs}
        results[name] = {"seconds": time.perf_counter() - start, "decisions": decisions}
    with open(output, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
