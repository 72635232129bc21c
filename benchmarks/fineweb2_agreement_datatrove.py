"""datatrove's filters as FineWeb-2's pipeline script composes them, per language, on a JSON-lines file of
{"id", "text", "fineweb2"} (`fineweb2`: the configuration's name, `iso3_Script`).

Run by benchmarks/fineweb2_agreement.py with the Python of a virtual environment that has datatrove 0.10 and the
word tokenizers of the languages measured (benchmarks/requirements-fineweb2.txt); imports nothing of webcorpus.
Reads each language's configuration from FineWeb-2's CONFIGS folder, as the script does, and writes each
document's decision ({"kept": bool, "reason": str}) and the seconds per language to OUTPUT as JSON.

    python benchmarks/fineweb2_agreement_datatrove.py CONFIGS INPUT.jsonl OUTPUT.json
"""

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml
from datatrove.data import Document
from datatrove.pipeline.filters import FineWebQualityFilter, GopherQualityFilter, GopherRepetitionFilter


def chain(config: dict, language: str) -> list:
    """The filtering step of FineWeb-2's pipeline script (its section 5), for one language."""
    return [
        GopherRepetitionFilter(language=language, dup_para_frac=0, dup_line_char_frac=0, dup_para_char_frac=0,
                               dup_line_frac=config["dup_line_frac"], top_n_grams=config["top_n_grams"],
                               dup_n_grams=config["dup_n_grams"]),
        FineWebQualityFilter(language=language, short_line_thr=999, char_duplicates_ratio=0.1,
                             line_punct_thr=config["line_punct_thr"], new_line_ratio=config["new_line_ratio"]),
        GopherQualityFilter(language=language, max_avg_word_length=config["max_avg_word_length"],
                            min_avg_word_length=config["min_avg_word_length"], stop_words=config["stopwords"],
                            max_non_alpha_words_ratio=config["max_non_alpha_words_ratio"], min_stop_words=2),
    ]


def decide(steps: list, doc: dict) -> dict:
    document = Document(text=doc["text"], id=doc["id"])
    for step in steps:
        try:
            verdict = step.filter(document)
        except Exception as error:  # a tokenizer that is not installed, or that fails on the text
            return {"kept": None, "reason": f"{step.name}: {type(error).__name__}: {error}"[:200]}
        kept, reason = (verdict, "") if isinstance(verdict, bool) else verdict
        if not kept:
            return {"kept": False, "reason": f"{step.name}: {reason}"}
    return {"kept": True, "reason": ""}


def main(configs: str, input_path: str, output: str) -> None:
    by_language = defaultdict(list)
    with open(input_path, encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            by_language[doc["fineweb2"]].append(doc)
    decisions, seconds = {}, {}
    for language, docs in sorted(by_language.items()):
        steps = chain(yaml.safe_load((Path(configs) / f"{language}.yml").read_text(encoding="utf-8")), language)
        decide(steps, {"id": "warm-up", "text": docs[0]["text"]})  # loads the tokenizer
        start = time.perf_counter()
        decisions.update({doc["id"]: decide(steps, doc) for doc in docs})
        seconds[language] = time.perf_counter() - start
    with open(output, "w", encoding="utf-8") as handle:
        json.dump({"decisions": decisions, "seconds": seconds}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
