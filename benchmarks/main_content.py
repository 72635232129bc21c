"""Main content (`--main-content`) against the extractors corpus builders use, on the dev corpus's gold.

    python -m benchmarks.fidelity --sections main-content [--corpus DIR] [--reps N]

Run from `benchmarks.fidelity` (its `main-content` section), on the same pages.
Every tool is measured as a new user would read it: readable text (webcorpus's
`clean_text`, `--clean-text`), case and punctuation kept, words cut at spaces.

- precision: the share of the output's words that are words of the page's
  gold main-content text, pooled over the pages (sum over sum);
- recall: the share of gold words (as a multiset) found in the output, the
  mean over the pages;
- split and glued: as `benchmarks.fidelity` counts them;
- boilerplate dropped: the share of `must_not_contain` snippets (trafilatura's
  eval pages) that are not in the output, and `must_contain` kept;
- ms/page: the median time of the tool on a page; for webcorpus CleanHtml +
  MinimizeText (the charset decode included), with and without the option.

The tools: webcorpus without and with `--main-content`; trafilatura 2.x
`extract` (its defaults, and `favor_recall=True`); datatrove 0.10's
`Trafilatura` extractor, whose call is reproduced here (`extract(html,
favor_precision=True, include_comments=False, deduplicate=True)`: datatrove is
not imported); resiliparse `extract_plain_text(main_content=True)`; jusText
with the stoplist of the page's language (English where it has none). A peer
that cannot be imported is left out with a warning.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks import why_not_imported
from devcorpus.gold import GoldPage, boilerplate_snippets, gold_lines
from devcorpus.measures import KEEP_CASE, measure, normalized_lines, snippet_found, words_of

TARGETS = {"precision": 0.90, "recall": 0.95, "cost_ratio": 1.2}
WITHOUT, WITH = "webcorpus", "webcorpus --main-content"
# jusText's stoplists by the corpus's language codes.
JUSTEXT_LANGUAGES = {
    "en": "English", "de": "German", "la": "Latin", "es": "Spanish", "fr": "French", "pt": "Portuguese",
    "pl": "Polish", "id": "Indonesian", "it": "Italian", "ko": "Korean", "tr": "Turkish", "ru": "Russian",
    "da": "Danish", "cs": "Czech", "ro": "Romanian", "no": "Norwegian_Bokmal",
}


def tools() -> tuple[dict, dict]:
    """(name -> function(page) -> (lines, seconds of the timed part)), (name -> why it is left out)."""
    from transforms.stages.charset import to_utf8
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_blocks

    def webcorpus(cleaner):
        def run(page: GoldPage):
            start = time.perf_counter()
            payload, _, _ = to_utf8(page.raw, page.content_type)
            blocks = cleaner.clean(payload, page.url).blocks
            minimize_blocks(blocks)
            return blocks, time.perf_counter() - start
        return run

    methods = {WITHOUT: webcorpus(HtmlCleaner()), WITH: webcorpus(HtmlCleaner(main_content=True))}
    skipped = {}

    def timed(function):
        def run(page: GoldPage):
            start = time.perf_counter()
            text = function(page)
            return (text or "").split("\n"), time.perf_counter() - start
        return run

    try:
        import logging

        import trafilatura

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)

        def html(page: GoldPage) -> str:
            return page.utf8.decode("utf-8", "replace")

        methods["trafilatura"] = timed(lambda page: trafilatura.extract(html(page), url=page.url or None))
        methods["trafilatura favor_recall"] = timed(
            lambda page: trafilatura.extract(html(page), url=page.url or None, favor_recall=True))
        # datatrove 0.10's Trafilatura extractor (datatrove/pipeline/extractors/trafilatura.py) with its defaults.
        methods["datatrove Trafilatura"] = timed(lambda page: trafilatura.extract(
            html(page), favor_precision=True, include_comments=False, deduplicate=True))
    except ImportError as error:
        skipped["trafilatura"] = why_not_imported("trafilatura", error)
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        methods["resiliparse main_content"] = timed(lambda page: extract_plain_text(
            HTMLTree.parse_from_bytes(page.utf8, "utf-8"), main_content=True))
    except ImportError as error:
        skipped["resiliparse"] = why_not_imported("resiliparse", error)
    try:
        import justext

        stoplists = {}

        def jus_text(page: GoldPage) -> str:
            language = JUSTEXT_LANGUAGES.get(page.lang, "English")
            if language not in stoplists:
                stoplists[language] = justext.get_stoplist(language)
            paragraphs = justext.justext(page.utf8, stoplists[language], encoding="utf-8")
            return "\n".join(paragraph.text for paragraph in paragraphs if not paragraph.is_boilerplate)

        methods["jusText"] = timed(jus_text)
    except ImportError as error:
        skipped["jusText"] = why_not_imported("justext", error)
    return methods, skipped




def run(pages: list[GoldPage], methods: dict, reps: int, boilerplate: dict[str, list[str]]) -> dict:
    """name -> gold set -> counts, over the pages; a failing tool scores an empty output on the page."""
    totals = {name: defaultdict(Counter) for name in methods}
    recalls = {name: defaultdict(list) for name in methods}
    times = {name: [] for name in methods}
    names = list(methods)
    for number, page in enumerate(pages):
        order = names[number % len(names):] + names[:number % len(names)]
        for name in order:
            seconds = []
            runs = []
            for _ in range(reps):
                try:
                    lines, took = methods[name](page)
                except Exception:  # noqa: BLE001 - a failing tool scores zero on the page
                    lines, took = [], 0.0
                runs.append(lines)
                seconds.append(took)
            # The first run's output: trafilatura's `deduplicate` remembers what it saw, and drops it when a page
            # is seen again.
            lines = runs[0]
            times[name].append(statistics.median(seconds))
            total = totals[name][page.dataset]
            output = words_of(normalized_lines(lines, KEEP_CASE), KEEP_CASE)
            if page.gold:
                gold = set(words_of(normalized_lines(gold_lines(page.gold), KEEP_CASE), KEEP_CASE))
                result = measure(page, lines, lines, KEEP_CASE)
                total["output_words"] += len(output)
                total["gold_words_in_output"] += sum(1 for word in output if word in gold)
                total["split"] += len(result["split"])
                total["glued"] += len(result["glued"])
                recalls[name][page.dataset].append(result["recall"])
            haystack = " ".join(output)
            for snippet in page.snippets:
                total["must_contain"] += 1
                total["must_contain_kept"] += snippet_found(snippet, haystack, KEEP_CASE)
            for snippet in boilerplate.get(page.id, ()):
                total["must_not_contain"] += 1
                total["must_not_contain_dropped"] += not snippet_found(snippet, haystack, KEEP_CASE)
    return {name: summarize(totals[name], recalls[name], times[name]) for name in methods}


def _figures(total: Counter, recalls: list[float]) -> dict:
    return {
        "pages": len(recalls),
        "precision": total["gold_words_in_output"] / total["output_words"] if total["output_words"] else None,
        "recall": statistics.fmean(recalls) if recalls else None,
        "split": total["split"],
        "glued": total["glued"],
        "must_contain_kept": total["must_contain_kept"],
        "must_contain": total["must_contain"],
        "must_not_contain_dropped": total["must_not_contain_dropped"],
        "must_not_contain": total["must_not_contain"],
    }


def summarize(by_set: dict[str, Counter], recalls: dict[str, list[float]], times: list[float]) -> dict:
    pooled = sum(by_set.values(), Counter())
    return {
        "sets": {name: _figures(by_set[name], recalls.get(name, [])) for name in sorted(by_set)},
        "pooled": {**_figures(pooled, [recall for values in recalls.values() for recall in values]),
                   "ms_median": statistics.median(times) * 1000 if times else None},
    }


def _fmt(value, digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_summaries(summaries: dict) -> None:
    names = list(summaries)
    width = max(map(len, names)) + 2
    sets = sorted({name for summary in summaries.values() for name in summary["sets"]})
    print("\nMain content (clean_text as read; precision pooled, recall the mean of pages; "
          "must_not_contain: boilerplate snippets dropped)")
    for gold_set in [*sets, "pooled"]:
        print(f"\n  {gold_set}")
        print(f"    {'tool':{width}}{'precision':>10}{'recall':>8}{'split':>7}{'glued':>7}{'must_contain':>14}"
              f"{'must_not_contain':>18}")
        for name in names:
            summary = summaries[name]
            row = summary["pooled"] if gold_set == "pooled" else summary["sets"].get(gold_set)
            if row is None:
                continue
            kept = f"{row['must_contain_kept']}/{row['must_contain']}" if row["must_contain"] else "-"
            dropped = f"{row['must_not_contain_dropped']}/{row['must_not_contain']}" if row["must_not_contain"] else "-"
            print(f"    {name:{width}}{_fmt(row['precision']):>10}{_fmt(row['recall']):>8}{row['split']:>7}"
                  f"{row['glued']:>7}{kept:>14}{dropped:>18}")
    base = summaries.get(WITHOUT, {}).get("pooled", {}).get("ms_median")
    print(f"\n  ms/page (median){'' if not base else f'; ratio to {WITHOUT}'}")
    for name in names:
        ms = summaries[name]["pooled"]["ms_median"]
        ratio = f"  {ms / base:.2f}x" if base and ms is not None else ""
        print(f"    {name:{width}}{_fmt(ms, 2):>8}{ratio}")


def check_targets(summaries: dict) -> list[tuple[str, str, bool]]:
    """The issue's targets for `--main-content`: (what, value, met)."""
    if WITH not in summaries:
        return []
    pooled = summaries[WITH]["pooled"]
    checks = [("pooled precision >= 0.90", pooled["precision"], pooled["precision"] >= TARGETS["precision"]),
              ("mean recall >= 0.95", pooled["recall"], pooled["recall"] >= TARGETS["recall"])]
    base = summaries.get(WITHOUT, {}).get("pooled", {}).get("ms_median")
    if base:
        ratio = pooled["ms_median"] / base
        checks.append(("ms/page <= 1.2x without the option", ratio, ratio <= TARGETS["cost_ratio"]))
    return [(what, _fmt(value), met) for what, value, met in checks]


def main_content_section(pages: list[GoldPage], corpus: Path, reps: int, warn) -> dict:
    """The section of `benchmarks.fidelity`: runs, prints, and returns the summaries."""
    methods, skipped = tools()
    warn(skipped)
    summaries = run(pages, methods, reps, boilerplate_snippets(corpus))
    print_summaries(summaries)
    targets = check_targets(summaries)
    print("\n  Targets of --main-content")
    for what, value, met in targets:
        print(f"    {'met    ' if met else 'NOT met'}  {what}: {value}")
    return {"summaries": summaries, "skipped_tools": skipped,
            "targets": [{"target": what, "value": value, "met": met} for what, value, met in targets]}
