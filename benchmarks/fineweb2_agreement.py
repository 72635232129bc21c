"""`--quality fineweb2` against datatrove 0.10 running FineWeb-2's filters with the same configuration: agreement per
language, disagreements by rule with the measured values, and the cost per page against `--quality fineweb-recipe`.

    python -m benchmarks.fineweb2_agreement --datatrove-python /tmp/dtvenv/bin/python \
        --configs ../shared/fineweb2/configs [--pages 60] [--limit N]

The texts: the `clean_text` of the developer corpus's pages (`$WEBCORPUS_CORPUS`, as `benchmarks.filters` makes
them) whose identified language has a pack, and `--pages` generated pages in each of ten languages with their own
scripts (ru, de, fr, es, zh, ja, ar, hi, th, el): sentences of the pack's stop words and of words made of their
letters, as prose, menus, repeated lines, lists and pages without stop words, so that every rule decides some. Ours:
the rule set's chain at the page's pack's thresholds (`rule_sets.apply_rule_sets`); theirs, in the Python of
`--datatrove-python` (benchmarks/requirements-fineweb2.txt): `benchmarks/fineweb2_agreement_datatrove.py`, the
filters as FineWeb-2's pipeline script composes them, each language's configuration read from `--configs`. The
language score is left out of both (it compares a number the pages are given). Per language: the segmenter that
counted our words (`segmenters.py`; "missing": not installed, the fallback counted them) and ms per page of ours
(a second pass: the segmenters loaded) and of datatrove's filters. Cost: ms per page of the
`fineweb2` and `fineweb-recipe` chains on the same texts (the pages with a pack), in this process.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.filters import corpus_texts
from devcorpus import default_corpus
from transforms.stages.filters.fineweb2 import read_packs
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, apply_rule_sets
from transforms.stages.filters.segmenters import is_available, word_counting
from transforms.stages.filters.words import is_spaced

HELPER = Path(__file__).with_name("fineweb2_agreement_datatrove.py")
LANGUAGES = ("ru", "de", "fr", "es", "zh", "ja", "ar", "hi", "th", "el")
TERMINALS = {"zh": "。", "ja": "。", "hi": "।", "th": ""}
SHAPES = ("prose", "prose", "menu", "repeated", "list", "no stop words", "short")


def generated_page(language: str, stop_words: list[str], rng: random.Random) -> str:
    """A page of `language`: sentences of its stop words and of words of their letters, in one of `SHAPES`."""
    letters = sorted({character for word in stop_words for character in word if character.isalpha()})
    joiner = " " if is_spaced(language) else ""
    terminal = TERMINALS.get(language, ".")
    shape = rng.choice(SHAPES)

    def word(with_stop_words: bool = True) -> str:
        if with_stop_words and rng.random() < 0.35:
            return rng.choice(stop_words)
        return "".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))

    def sentence(words: int, with_stop_words: bool = True) -> str:
        return joiner.join(word(with_stop_words) for _ in range(words)) + terminal

    if shape == "menu":
        lines = [word() for _ in range(rng.randint(5, 25))] + [sentence(rng.randint(8, 20)) for _ in range(3)]
    elif shape == "repeated":
        line = sentence(rng.randint(6, 14))
        lines = [line] * rng.randint(3, 12) + [sentence(rng.randint(8, 20)) for _ in range(rng.randint(2, 8))]
    elif shape == "list":
        lines = [joiner.join(word() for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(20, 60))]
    elif shape == "no stop words":
        lines = [sentence(rng.randint(8, 20), False) for _ in range(rng.randint(4, 12))]
    elif shape == "short":
        lines = [sentence(rng.randint(3, 10)) for _ in range(rng.randint(1, 4))]
    else:
        lines = [joiner.join(sentence(rng.randint(6, 18)) for _ in range(rng.randint(1, 4)))
                 for _ in range(rng.randint(4, 15))]
    rng.shuffle(lines)
    return "\n".join(lines)


def generated_texts(packs: dict, pages: int, seed: int = 47) -> list[dict]:
    rng = random.Random(seed)
    return [{"id": f"gen-{language}-{index}", "url": "", "language": language,
             "text": generated_page(language, sorted(packs[language].thresholds["gopher_quality.stop_words"]), rng)}
            for language in LANGUAGES for index in range(pages)]


def ours(texts: list[dict], packs: dict, rule_set: str) -> tuple[dict, float, Counter]:
    """Each text's decision by `rule_set` (fineweb2: at its language's pack's thresholds), the seconds taken, and
    the seconds per language."""
    start = time.perf_counter()
    decisions, seconds = {}, Counter()
    for text in texts:
        began = time.perf_counter()
        thresholds = packs[text["language"]].thresholds if rule_set == "fineweb2" else DEFAULT_THRESHOLDS
        drop = apply_rule_sets(text["text"], (rule_set,), thresholds, text["language"]).drop
        decisions[text["id"]] = {"kept": drop is None, "reason": drop.detail() if drop else ""}
        seconds[text["language"]] += time.perf_counter() - began
    return decisions, time.perf_counter() - start, seconds


def theirs(python: str, configs: Path, texts: list[dict], packs: dict, work: Path) -> dict:
    source, output = work / "texts.jsonl", work / "datatrove.json"
    with open(source, "w", encoding="utf-8") as handle:
        for text in texts:
            handle.write(json.dumps({"id": text["id"], "text": text["text"],
                                     "fineweb2": packs[text["language"]].origin}) + "\n")
    # -I: not benchmarks/ first on sys.path (its select.py would shadow the standard library's).
    subprocess.run([python, "-I", str(HELPER), str(configs), str(source), str(output)], check=True)
    return json.loads(output.read_text())


def report(label: str, texts: list[dict], mine: dict, reference: dict, show: int, packs: dict,
           seconds: Counter) -> None:
    by_language: dict[str, Counter] = defaultdict(Counter)
    differing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for text in texts:
        a, b = mine[text["id"]], reference["decisions"][text["id"]]
        counts = by_language[text["language"]]
        counts["pages"] += 1
        counts["kept"] += a["kept"]
        if b["kept"] is None:
            counts["not run"] += 1
            differing[("datatrove could not run", b["reason"])].append(text["id"])
        elif a["kept"] != b["kept"]:
            counts["differing"] += 1
            differing[(a["reason"].split(":")[0] or "kept", b["reason"] or "kept")].append(
                f"{text['id']} ({a['reason'] or 'kept'})")
    print(f"\n{label}\n  {'language':<10}{'pages':>7}{'kept':>7}{'agreement':>11}{'not run':>9}  {'words by':<16}"
          f"{'ours ms/page':>13}{'datatrove':>10}")
    for language, counts in sorted(by_language.items(), key=lambda item: -item[1]["pages"]):
        compared = counts["pages"] - counts["not run"]
        agreement = 1 - counts["differing"] / compared if compared else float("nan")
        words = packs[language].words + ("" if is_available(packs[language].words) else " (missing)")
        theirs_seconds = reference["seconds"].get(packs[language].origin, float("nan"))
        print(f"  {language:<10}{counts['pages']:>7}{counts['kept']:>7}{agreement:>11.2%}{counts['not run']:>9}  "
              f"{words:<16}{seconds[language] * 1000 / counts['pages']:>13.2f}"
              f"{theirs_seconds * 1000 / counts['pages']:>10.2f}")
    for (ours_rule, their_rule), ids in sorted(differing.items(), key=lambda item: -len(item[1])):
        print(f"  ours {ours_rule} / datatrove {their_rule}: {len(ids)}: {'; '.join(ids[:show])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datatrove-python", required=True, metavar="PY",
                        help="a Python with datatrove 0.10 and the tokenizers (benchmarks/requirements-fineweb2.txt)")
    parser.add_argument("--configs", type=Path, required=True, help="FineWeb-2's configs/ folder")
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=60, help="generated pages per language (default 60)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages of the corpus")
    parser.add_argument("--show", type=int, default=4, help="pages named per disagreement (default 4)")
    args = parser.parse_args(argv)
    packs = read_packs()
    dev = [text for text in corpus_texts(args.corpus, args.limit) if text["language"] in packs]
    sets = {"developer corpus (pages with a pack)": dev, f"generated ({args.pages} pages a language)":
            generated_texts(packs, args.pages)}
    with tempfile.TemporaryDirectory(prefix="fineweb2-bench-") as scratch:
        for label, texts in sets.items():
            if not texts:
                continue
            ours(texts, packs, "fineweb2")  # loads the segmenters
            mine, _, seconds = ours(texts, packs, "fineweb2")
            report(label, texts, mine, theirs(args.datatrove_python, args.configs, texts, packs, Path(scratch)),
                   args.show, packs, seconds)
    texts = dev + sets[f"generated ({args.pages} pages a language)"]
    seconds = {rule_set: min(ours(texts, packs, rule_set)[1] for _ in range(3))
               for rule_set in ("fineweb-recipe", "fineweb2")}
    print(f"\nwords counted by {word_counting({language: pack.words for language, pack in packs.items()})['packages']}")
    print(f"cost on {len(texts)} pages (best of 3): fineweb2 {seconds['fineweb2'] * 1000 / len(texts):.3f} ms/page, "
          f"fineweb-recipe {seconds['fineweb-recipe'] * 1000 / len(texts):.3f} ms/page, "
          f"ratio {seconds['fineweb2'] / seconds['fineweb-recipe']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
