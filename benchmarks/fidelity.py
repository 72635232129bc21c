"""Text fidelity of CleanHtml + MinimizeText against other extractors, on the dev corpus's gold.

    python -m benchmarks.fidelity [--corpus DIR] [--tools webcorpus,recipe,...] [--reps N] [--json FILE]
                                  [--sections fidelity,snippets,charset,noscript] [--show-worst N]

The pages are those of the corpus's `gold/gold.jsonl` (full gold text) and
`gold/snippets.jsonl` (`must_contain` snippets), found in the WARC files by
record id with `read_warc` (pages that ReadWarc does not keep, such as
captures cut at 1 MiB, are left out and counted: read with `skip_truncated`,
since the gold text of a cut capture is of the whole page). Every tool gets the same
page: for webcorpus the raw payload (its time includes the charset decode),
for the others the payload as `transforms.stages.charset` decoded it to UTF-8.

The tools:

- webcorpus: `to_utf8` + `HtmlCleaner().clean` + `minimize_blocks`.
- recipe: the seed's selectolax recipe (LexborHTMLParser, remove script and
  style, `body.text(separator='\\n')`).
- bs4: BeautifulSoup(lxml) without script and style, `get_text(separator='\\n')`.
- resiliparse: `extract_plain_text` (whole page, its defaults).
- trafilatura: `extract` (main content, its defaults).

A tool that cannot be imported (not installed, or installed without what it
imports) is left out with a warning on stderr; one named in `--tools` is an
error, exit status 2.

What is measured (`devcorpus.measures`), per page, with gold text and tool output both normalized
by MinimizeText's `minimize_block` (line by line) and cut into words at
spaces and at the kept symbols (`& - ' . , : % + @ # $ /`):

- recall: the share of gold words (as a multiset) found in the output;
- split: gold words of 4+ characters missing from the output whose pieces
  are adjacent words of the output (`tripl e` for `triple`);
- glued: output words that are no gold word but two adjacent gold words
  run together (`homenews`);
- order: the longest common subsequence of the gold words and the output
  words, over the number of gold words;
- leaks: pages whose output (before minimizing) holds a tag, a comment or
  an entity (`<b>`, `<!--`, `&amp;`, `&#x41;`) that the gold text does not;
- ms/page: the median time of the tool on the page over `--reps` runs.

`visible_recall` of the gold (the share of gold words in the page's visible
text) tells pages whose gold is not visible in the HTML: a page below 0.95
recall is excused when its `visible_recall` is below 0.95 too.

Sections: `fidelity` (the table above, per tool, per dataset, per
language), `snippets` (every `must_contain` snippet found in the
normalized output), `charset` (the charset chosen against `true_charset`),
`noscript` (what `<noscript>` holds on these pages: gold words found only
there against its other words), `main-content` (`--main-content` against
main-content extractors: `benchmarks/main_content.py`).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks import parse_sections, why_not_imported
from devcorpus import default_corpus
from devcorpus.gold import GoldPage, gold_lines, load_gold_pages
from devcorpus.measures import KEEP_CASE, charset_agreement, measure, normalized_lines, snippet_found, words_of

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = default_corpus()
SECTIONS = ("fidelity", "snippets", "charset", "noscript", "main-content")

TARGETS = {
    "recall_mean": 0.998,
    "recall_min": 0.95,  # unless visible_recall < 0.95
}


# --------------------------------------------------------------------------
# The tools: page -> list of text lines (before normalization).


def warn_left_out(left_out: dict) -> None:
    for name, why in left_out.items():
        print(f"WARNING: {name} is left out of the comparison: {why}", file=sys.stderr)


def tools(scripts=None) -> tuple[dict, dict]:
    """(name -> function(page) -> lines, name -> why it is skipped)."""
    from selectolax.lexbor import LexborHTMLParser

    from transforms.stages.charset import to_utf8
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_blocks

    cleaner = HtmlCleaner()
    minimize_options = {} if scripts is None else {"scripts": scripts}

    def webcorpus(page: GoldPage):
        payload, _, _ = to_utf8(page.raw, page.content_type)
        cleaned = cleaner.clean(payload, page.url).blocks
        return minimize_blocks(cleaned, **minimize_options), cleaned

    def recipe(page: GoldPage):
        tree = LexborHTMLParser(page.utf8)
        if tree.body is None:
            return []
        for tag in tree.css("script"):
            tag.decompose()
        for tag in tree.css("style"):
            tag.decompose()
        return tree.body.text(separator="\n").split("\n")

    methods = {"webcorpus": webcorpus, "recipe": recipe}
    skipped = {}
    try:
        from bs4 import BeautifulSoup

        def bs4(page: GoldPage):
            tree = BeautifulSoup(page.utf8, "lxml", from_encoding="utf-8")
            body = tree.body
            if body is None:
                return []
            for tag in body.select("script, style"):
                tag.decompose()
            return body.get_text(separator="\n").split("\n")

        methods["bs4"] = bs4
    except ImportError as error:
        skipped["bs4"] = why_not_imported("bs4", error)
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        def resiliparse(page: GoldPage):
            return extract_plain_text(HTMLTree.parse_from_bytes(page.utf8, "utf-8")).split("\n")

        methods["resiliparse"] = resiliparse
    except ImportError as error:
        skipped["resiliparse"] = why_not_imported("resiliparse", error)
    try:
        import logging

        import trafilatura

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)

        def trafilatura_extract(page: GoldPage):
            return (trafilatura.extract(page.utf8.decode("utf-8", "replace"), url=page.url or None) or "").split("\n")

        methods["trafilatura"] = trafilatura_extract
    except ImportError as error:
        skipped["trafilatura"] = why_not_imported("trafilatura", error)
    return methods, skipped


CLEAN_TEXT = "clean_text"


def clean_text_tool():
    """webcorpus's `clean_text` field: CleanHtml's blocks, one a line, before MinimizeText (measure with KEEP_CASE)."""
    from transforms.stages.charset import to_utf8
    from transforms.stages.clean_html.clean_html import HtmlCleaner

    cleaner = HtmlCleaner()

    def clean_text(page: GoldPage):
        payload, _, _ = to_utf8(page.raw, page.content_type)
        return cleaner.clean(payload, page.url).blocks

    return clean_text


# The attributes that hide an element (for the diagnosis of pages of low recall).
_UNHIDE = re.compile(r"""\s(?:hidden|aria-hidden|style)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?(?=[\s/>])""", re.IGNORECASE)


# --------------------------------------------------------------------------
# Runs


def run_tools(pages: list[GoldPage], methods: dict, reps: int, scripts=None) -> dict:
    """name -> list of per-page results (None where the tool failed)."""
    results = {name: [] for name in methods}
    names = list(methods)
    for number, page in enumerate(pages):
        # A rotating order, so that no tool always runs on a warm cache.
        order = names[number % len(names):] + names[:number % len(names)]
        for name in order:
            times = []
            output = None
            error = None
            for _ in range(reps):
                start = time.perf_counter()
                try:
                    output = methods[name](page)
                except Exception as failure:  # noqa: BLE001 - a failing tool scores zero on the page
                    error = f"{type(failure).__name__}: {failure}"
                    break
                times.append(time.perf_counter() - start)
            if error is not None:
                results[name].append({"page": page, "error": error})
                continue
            lines, raw_lines = output if isinstance(output, tuple) else (output, output)
            result = measure(page, lines, raw_lines, scripts) if page.gold else {}
            if page.snippets:
                haystack = " ".join(words_of(normalized_lines(lines, scripts), scripts))
                result["snippets_missing"] = [s for s in page.snippets if not snippet_found(s, haystack, scripts)]
            if name == "webcorpus" and (result.get("recall", 1.0) < TARGETS["recall_min"]
                                        or result.get("snippets_missing")):
                # Is the gold inside elements hidden by attribute or inline style?
                unhidden = GoldPage(**{**page.__dict__, "raw": _UNHIDE.sub(" ", page.utf8.decode("utf-8", "replace")).encode(),
                                   "content_type": "text/html; charset=utf-8"})
                lines, _ = methods[name](unhidden)
                if "recall" in result:
                    result["recall_with_hidden"] = measure(page, lines, [], scripts)["recall"]
                if result.get("snippets_missing"):
                    haystack = " ".join(words_of(normalized_lines(lines, scripts), scripts))
                    hidden = [s for s in result["snippets_missing"] if snippet_found(s, haystack, scripts)]
                    # The corpus's visible_recall of a snippet page: the share of its snippets in the visible text.
                    invisible = round((1 - (page.visible_recall or 0.0)) * len(page.snippets))
                    result["snippets_excused"] = min(len(result["snippets_missing"]), len(hidden) + invisible)
            result["page"] = page
            result["ms"] = statistics.median(times) * 1000
            results[name].append(result)
    return results


def excuse(row: dict) -> str:
    """Why a page's low recall is no fault of the cleaner ("" if it is)."""
    visible = row["page"].visible_recall
    if visible is not None and visible < TARGETS["recall_min"]:
        return f"gold not visible (visible_recall {visible:.3f})"
    if row.get("recall_with_hidden", 0.0) >= TARGETS["recall_min"]:
        return f"gold in elements hidden by attribute or inline style (recall {row['recall_with_hidden']:.3f} with them)"
    return ""


def summarize(rows: list[dict], excused_pages: frozenset = frozenset()) -> dict:
    """A tool's figures over `rows`; `recall_visible_mean` leaves out `excused_pages` (ids) for every tool alike."""
    gold_rows = [row for row in rows if "recall" in row]
    recalls = [row["recall"] for row in gold_rows]
    visible = [row["recall"] for row in gold_rows if row["page"].id not in excused_pages]
    low = [row for row in gold_rows if row["recall"] < TARGETS["recall_min"]]
    excused = [row for row in low if excuse(row)]
    snippet_rows = [row for row in rows if "snippets_missing" in row]
    return {
        "pages": len(gold_rows),
        "failed": sum(1 for row in rows if "error" in row),
        "recall_mean": statistics.fmean(recalls) if recalls else None,
        "recall_min": min(recalls) if recalls else None,
        "recall_visible_mean": statistics.fmean(visible) if visible else None,
        "visible_pages": len(visible),
        "below_min": len(low),
        "below_min_unexcused": len(low) - len(excused),
        "split": sum(len(row["split"]) for row in gold_rows),
        "glued": sum(len(row["glued"]) for row in gold_rows),
        "order": statistics.fmean(row["order"] for row in gold_rows) if gold_rows else None,
        "leak_pages": sum(1 for row in gold_rows if row["leaks"]),
        "snippets": sum(len(row["page"].snippets) for row in snippet_rows),
        "snippets_missing": sum(len(row["snippets_missing"]) for row in snippet_rows),
        "snippets_excused": sum(row.get("snippets_excused", 0) for row in snippet_rows),
        "ms_median": statistics.median(row["ms"] for row in rows if "ms" in row) if rows else None,
        "ms_mean": statistics.fmean(row["ms"] for row in rows if "ms" in row) if rows else None,
    }


def _fmt(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_table(summaries: dict[str, dict]) -> None:
    header = (f"  {'tool':<13}{'pages':>6}{'recall':>8}{'min':>8}{'<0.95':>7}{'visible':>9}{'split':>7}{'glued':>7}"
              f"{'order':>8}{'leaks':>7}{'snip miss':>10}{'ms/page':>9}{'(mean)':>8}{'fail':>6}")
    print(header)
    for name, row in summaries.items():
        print(f"  {name:<13}{row['pages']:>6}{_fmt(row['recall_mean']):>8}{_fmt(row['recall_min']):>8}"
              f"{row['below_min']:>7}{_fmt(row['recall_visible_mean']):>9}{row['split']:>7}{row['glued']:>7}{_fmt(row['order']):>8}"
              f"{row['leak_pages']:>7}{row['snippets_missing']:>5}/{row['snippets']:<4}"
              f"{_fmt(row['ms_median'], 2):>9}{_fmt(row['ms_mean'], 2):>8}{row['failed']:>6}")


def excused_pages(results: dict) -> frozenset:
    """Ids of the pages whose gold is not visible, or lies in hidden elements (found on webcorpus's rows)."""
    rows = results.get("webcorpus") or next(iter(results.values()), [])
    return frozenset(row["page"].id for row in rows if "recall" in row and row["recall"] < TARGETS["recall_min"]
                     and excuse(row))


def grouped(results: dict, key) -> dict[str, dict[str, dict]]:
    """group -> tool -> summary."""
    groups = defaultdict(lambda: defaultdict(list))
    for name, rows in results.items():
        for row in rows:
            groups[key(row["page"])][name].append(row)
    excused = excused_pages(results)
    return {group: {name: summarize(rows, excused) for name, rows in tools_rows.items()}
            for group, tools_rows in sorted(groups.items())}


def print_groups(title: str, groups: dict[str, dict[str, dict]], tool_names: list[str]) -> None:
    print(f"\n{title}: recall mean (min) / split / glued, per tool")
    print(f"  {'':<14}{'pages':>6}" + "".join(f"{name:>30}" for name in tool_names))
    for group, summaries in groups.items():
        pages = max(row["pages"] + (1 if row["snippets"] else 0) * 0 for row in summaries.values())
        cells = []
        for name in tool_names:
            row = summaries.get(name)
            if row is None or not row["pages"]:
                cells.append(f"{'snippets ' + str(row['snippets'] - row['snippets_missing']) + '/' + str(row['snippets']) if row else '-':>30}")
                continue
            cells.append(f"{_fmt(row['recall_mean'], 3) + ' (' + _fmt(row['recall_min'], 2) + ') / ' + str(row['split']) + ' / ' + str(row['glued']):>30}")
        print(f"  {group:<14}{pages:>6}" + "".join(cells))


def check_targets(summaries: dict[str, dict]) -> list[tuple[str, str, bool]]:
    ours = summaries["webcorpus"]
    others = {name: row for name, row in summaries.items() if name not in ("webcorpus", CLEAN_TEXT)}
    checks = [
        ("recall mean >= 0.998 (all pages)", _fmt(ours["recall_mean"]), ours["recall_mean"] >= TARGETS["recall_mean"]),
        (f"recall mean >= 0.998 (the {ours['visible_pages']} pages whose gold is visible)",
         _fmt(ours["recall_visible_mean"]), ours["recall_visible_mean"] >= TARGETS["recall_mean"]),
        ("no page below 0.95 but where the gold is not visible",
         f"{ours['below_min_unexcused']} unexcused of {ours['below_min']}", ours["below_min_unexcused"] == 0),
        ("highest recall of all tools (all pages)", _fmt(ours["recall_mean"]),
         all(ours["recall_mean"] >= row["recall_mean"] for row in others.values() if row["recall_mean"] is not None)),
        ("highest recall of all tools (pages whose gold is visible)", _fmt(ours["recall_visible_mean"]),
         all(ours["recall_visible_mean"] >= row["recall_visible_mean"] for row in others.values()
             if row["recall_visible_mean"] is not None)),
        ("fewest split words", str(ours["split"]), all(ours["split"] <= row["split"] for row in others.values())),
        ("fewest glued words", str(ours["glued"]), all(ours["glued"] <= row["glued"] for row in others.values())),
        ("no page with leftover markup or entities", str(ours["leak_pages"]), ours["leak_pages"] == 0),
        ("every must_contain snippet found", f"{ours['snippets'] - ours['snippets_missing']}/{ours['snippets']}",
         ours["snippets_missing"] == 0),
        ("every must_contain snippet found but those not visible or in hidden elements",
         f"{ours['snippets_missing'] - ours['snippets_excused']} missing", ours["snippets_missing"] == ours["snippets_excused"]),
    ]
    return checks


def print_worst(results: dict, count: int) -> None:
    rows = sorted((row for row in results["webcorpus"] if "recall" in row), key=lambda row: row["recall"])
    print(f"\nwebcorpus: the {count} pages of lowest recall")
    for row in rows[:count]:
        page = row["page"]
        print(f"  {row['recall']:.4f} (visible {page.visible_recall}) {page.id} {excuse(row) if row['recall'] < TARGETS['recall_min'] else ''}")
    for kind in ("split", "glued", "leaks"):
        listed = [(row["page"].id, row[kind]) for row in results["webcorpus"] if row.get(kind)]
        print(f"\nwebcorpus: {kind} ({sum(len(items) for _, items in listed)} on {len(listed)} pages)")
        for page_id, items in listed[:count]:
            print(f"  {page_id}: {' '.join(items[:12])}")
    missing = [(row["page"], row["snippets_missing"], row.get("snippets_excused", 0))
               for row in results["webcorpus"] if row.get("snippets_missing")]
    if missing:
        print("\nwebcorpus: must_contain snippets not found")
        for page, snippets, excused in missing:
            print(f"  {page.id} (visible_recall {page.visible_recall}; {excused} not visible or in hidden elements): "
                  f"{snippets}")


# --------------------------------------------------------------------------
# Noscript


def run_noscript(pages: list[GoldPage], scripts=None) -> dict:
    """What the `<noscript>` elements of the pages hold, split by CleanHtml's rule (kept: long text, no markup).

    For the dropped ones: the gold words they hold that the output lacks
    (what keeping them would gain) against their other words (what it
    would add); for the kept ones: their words, and the must_contain
    snippets found in them.
    """
    from selectolax.lexbor import LexborHTMLParser

    from transforms.stages.clean_html.rules import NOSCRIPT_MIN_CHARACTERS
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_blocks

    cleaner = HtmlCleaner()
    minimize_options = {} if scripts is None else {"scripts": scripts}
    counts = Counter()
    gains = []
    kept_elements = []
    texts = Counter()
    for page in pages:
        tree = LexborHTMLParser(page.utf8)
        if tree.body is None:
            continue
        nodes = tree.body.css("noscript")
        if not nodes:
            continue
        counts["pages_with_noscript"] += 1
        elements = [" ".join(node.text(separator=" ").split()) for node in nodes]
        elements = [text for text in elements if text]
        if not elements:
            continue
        counts["pages_with_noscript_text"] += 1
        gold = Counter(words_of(normalized_lines(gold_lines(page.gold), scripts), scripts)) if page.gold else None
        output = Counter(words_of(minimize_blocks(cleaner.clean(page.utf8, page.url).blocks, **minimize_options)))
        for text in elements:
            words = Counter(words_of(normalized_lines([text], scripts), scripts))
            markup = "<" in text
            kept = not markup and len(text.replace(" ", "")) >= NOSCRIPT_MIN_CHARACTERS
            kind = "kept" if kept else "dropped"
            counts[f"{kind}_elements"] += 1
            counts[f"{kind}_words"] += sum(words.values())
            counts[f"{kind}_javascript"] += "javascript" in text.lower()
            counts[f"{kind}_markup_as_text"] += markup
            texts[" ".join(words_of(normalized_lines([text], scripts), scripts))[:60]] += 1
            if kept:
                haystack = " ".join(words_of(normalized_lines([text], scripts), scripts))
                found = [snippet for snippet in page.snippets if snippet_found(snippet, haystack, scripts)]
                kept_elements.append((page.id, sum(words.values()), len(found)))
                continue
            if gold is None:
                counts["dropped_words_on_snippet_pages"] += sum(words.values())
                counts["dropped_snippets_only_there"] += sum(
                    1 for snippet in page.snippets if snippet_found(snippet, " ".join(words_of(normalized_lines([text], scripts), scripts)), scripts)
                    and not snippet_found(snippet, " ".join(output), scripts))
                continue
            gained = sum((words & (gold - output)).values())
            counts["dropped_gold_words_gained_if_kept"] += gained
            counts["dropped_other_words"] += sum((words - gold).values())
            if gained:
                gains.append((page.id, gained, sum(gold.values())))
    return dict(counts, pages=len(pages), gains=sorted(gains, key=lambda item: -item[1]), kept=kept_elements,
                commonest_texts=texts.most_common(12))


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tools", default="", help="comma-separated subset of the tools (default: all installed)")
    parser.add_argument("--reps", type=int, default=1, help="runs per page and tool; the time is their median")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--scripts", default=None, help="MinimizeText's scripts for both sides (default: its default)")
    parser.add_argument("--show-worst", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write the summaries here")
    args = parser.parse_args(argv)
    sections = parse_sections(parser, args.sections, SECTIONS)
    scripts = None
    if args.scripts:
        from transforms.stages.minimize_text import parse_scripts

        scripts = parse_scripts(args.scripts)
    sys.path.insert(0, str(REPO))
    methods, skipped = tools(scripts) if "fidelity" in sections or "snippets" in sections else ({}, {})
    if args.tools:
        wanted = [name.strip() for name in args.tools.split(",") if name.strip()]
        for name in wanted:
            if name in skipped:
                parser.exit(2, f"{parser.prog}: error: {name} is {skipped[name]}\n")
            if name not in methods:
                parser.error(f"--tools: no tool {name}; the tools: {', '.join([*methods, *skipped])}")
        methods, skipped = {name: methods[name] for name in wanted}, {}
    else:
        warn_left_out(skipped)
    start = time.perf_counter()
    pages, missing = load_gold_pages(args.corpus)
    gold_pages = sum(1 for page in pages if page.gold)
    snippet_pages = sum(1 for page in pages if page.snippets)
    print(f"{len(pages)} pages ({gold_pages} with full gold, {snippet_pages} with snippets) "
          f"loaded in {time.perf_counter() - start:.1f} s; left out: {missing or 'none'}")
    report = {"pages": len(pages), "left_out": missing}

    if "fidelity" in sections or "snippets" in sections:
        for name, why in skipped.items():
            print(f"  left out: {name}: {why}")
        results = run_tools(pages, methods, args.reps, scripts)
        if "webcorpus" in methods:
            # webcorpus's readable text, with case and punctuation kept on both sides.
            results.update(run_tools(pages, {CLEAN_TEXT: clean_text_tool()}, args.reps, KEEP_CASE))
        excused = excused_pages(results)
        summaries = {name: summarize(rows, excused) for name, rows in results.items()}
        print("\nAll gold pages (recall, split, glued, order, leaks on full gold; snippets on snippet pages)")
        print_table(summaries)
        names = list(results)
        print_groups("Per dataset", grouped(results, lambda page: page.dataset), names)
        print_groups("Per language", grouped(results, lambda page: page.lang), names)
        report["summaries"] = summaries
        report["skipped_tools"] = skipped
        if "webcorpus" in summaries:
            print("\nTargets")
            for what, value, met in check_targets(summaries):
                print(f"  {'met    ' if met else 'NOT met'}  {what}: {value}")
            report["targets"] = [{"target": what, "value": value, "met": met}
                                 for what, value, met in check_targets(summaries)]
            if args.show_worst:
                print_worst(results, args.show_worst)

    if "charset" in sections:
        charset = charset_agreement(pages)
        print(f"\nCharset: right on {charset['right']} of {charset['pages']} pages with a true_charset")
        for item in charset["wrong"]:
            print(f"  wrong: {item}")
        report["charset"] = charset

    if "noscript" in sections:
        noscript = run_noscript(pages, scripts)
        get = noscript.get
        print(f"\nNoscript: {get('pages_with_noscript', 0)} of {noscript['pages']} pages have <noscript> in the body, "
              f"{get('pages_with_noscript_text', 0)} with text")
        print(f"  dropped by the rule: {get('dropped_elements', 0)} elements, {get('dropped_words', 0)} words "
              f"({get('dropped_javascript', 0)} mention JavaScript, {get('dropped_markup_as_text', 0)} hold markup as "
              f"text); on full-gold pages keeping them would gain {get('dropped_gold_words_gained_if_kept', 0)} gold "
              f"words ({len(noscript['gains'])} pages) and add {get('dropped_other_words', 0)} other words; "
              f"must_contain snippets only there: {get('dropped_snippets_only_there', 0)}")
        for page_id, gained, total in noscript["gains"][:5]:
            print(f"    {page_id}: {gained} of {total} gold words")
        print(f"  kept by the rule: {get('kept_elements', 0)} elements, {get('kept_words', 0)} words")
        for page_id, words, snippets in noscript["kept"]:
            print(f"    {page_id}: {words} words, {snippets} must_contain snippets in it")
        print("  commonest noscript texts:")
        for text, count in noscript["commonest_texts"]:
            print(f"    {count:>4}  {text}")
        report["noscript"] = noscript

    if "main-content" in sections:
        from benchmarks.main_content import main_content_section

        report["main_content"] = main_content_section(pages, args.corpus, args.reps, warn_left_out)

    if args.json:
        def default(value):
            if isinstance(value, GoldPage):
                return value.id
            raise TypeError(type(value))

        args.json.write_text(json.dumps(report, indent=2, default=default, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
