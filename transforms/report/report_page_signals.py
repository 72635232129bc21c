"""report.html's sections of --tokenizer and --annotate: the tokens kept and dropped, and "look before choosing":
each signal's distribution over the corpus as a histogram of inline SVG (no script, no fetch), the rule's
threshold marked and the side its rule drops shaded, and the documents and tokens below, at and above it and
dropped and kept by the rule; per language for the rules that depend on it (report.json's `signals`:
`signal_histograms`)."""

from __future__ import annotations

from html import escape

from transforms.report.report import TOKENS_DROPPED
from transforms.report.signal_histograms import ALL_LANGUAGES, SHARE_BINS, SIDES, bin_of, dropped_side

# Languages shown per signal that depends on language (the most documents first); report.json has them all.
LANGUAGES_SHOWN = 8
WIDTH, HEIGHT, MARGIN = 520, 150, 40
BAR_COLOUR, THRESHOLD_COLOUR = "#42a5f5", "#c62828"
# The rows of what a rule drops, in their own style (the page's style sheet stays that of a build without signals).
DROPPED_ROW_STYLE = "background:#fdecea"


def _number(value: float) -> str:
    return f"{value:g}" if value < 1e6 else f"{value:.3g}"


def tokens_html(report: dict) -> str:
    """The tokens kept and dropped, in total and per language (report.json's `tokens`); nothing without it."""
    tokens = report.get("tokens")
    if not tokens:
        return ""
    dropped = list(TOKENS_DROPPED)
    rows = [["all", tokens["kept"], *(tokens["dropped"][name] for name in dropped)]]
    rows += [[language, counts["kept"], *(counts[name] for name in dropped)]
             for language, counts in tokens["languages"].items()] if "language" in report.get("options", {}) else []
    header = ["language", "kept", *(f"dropped: {name}" for name in dropped)]
    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f'<td class="n">{cell:,}</td>' if index else f"<td>{escape(str(cell))}</td>"
                                    for index, cell in enumerate(row)) + "</tr>" for row in rows)
    return (f'<section id="tokens"><h2>Tokens</h2><p class="legend">Tokens of the readable text (clean_text) in '
            f'the --tokenizer\'s tokens.</p><div class="wrap"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div></section>")


def histogram(title: str, counts: dict, edges: list[float], threshold: float | None, drops: str | None = None) -> str:
    """One signal's histogram as inline SVG, over 0 to 1 for a share, else the bins from the first to the last that
    hold a document (or the threshold): a bar a bin, its height the documents in it (the most written on the left);
    the threshold a red line at its place in its bin, the side its rule drops (`drops`: "below" or "above")
    shaded and labelled; each bar's title its range, documents and tokens."""
    documents, tokens = counts["documents"], counts["tokens"]
    filled = [int(index) for index in documents]
    shown = filled + ([bin_of(threshold)] if threshold is not None else [])
    first, last = min(shown), max(shown)
    if last < SHARE_BINS:
        # A share (or a score): its whole range, 0 to 1.
        first, last = 0, SHARE_BINS - 1
    bins = range(first, last + 1)
    step = (WIDTH - 2 * MARGIN) / len(bins)
    tallest = max(documents.values())
    parts = []
    for position, index in enumerate(bins):
        count = documents.get(str(index), 0)
        height = round((HEIGHT - 40) * count / tallest) if count else 0
        x = MARGIN + position * step
        label = f"{_number(edges[index])} to {_number(edges[index + 1])}"
        parts.append(f'<rect class="bin" x="{x:.1f}" y="{HEIGHT - 20 - height}" width="{max(step - 1, 1):.1f}" '
                     f'height="{height}" fill="{BAR_COLOUR}" data-documents="{count}"><title>{escape(str(label))}: '
                     f'{count:,} documents, {tokens.get(str(index), 0):,} tokens</title></rect>')
    parts.append(f'<text x="{MARGIN}" y="{HEIGHT - 5}" font-size="11">{_number(edges[first])}</text>'
                 f'<text x="{WIDTH - MARGIN}" y="{HEIGHT - 5}" font-size="11" text-anchor="end">'
                 f"{_number(edges[last + 1])}</text>"
                 f'<text x="{MARGIN - 4}" y="24" font-size="11" text-anchor="end">{tallest:,}</text>')
    if threshold is not None:
        index = bin_of(threshold)
        within = (threshold - edges[index]) / (edges[index + 1] - edges[index])
        x = MARGIN + (index - first + min(max(within, 0), 1)) * step
        if drops is not None:
            # The side the rule drops, under the bars: from the threshold to the chart's end that side.
            left, right = (MARGIN, x) if drops == "below" else (x, MARGIN + len(bins) * step)
            dropped = f"dropped: {drops} {_number(threshold)}"
            parts.insert(0, f'<rect class="dropped-side" data-drops="{drops}" x="{left:.1f}" y="16" '
                            f'width="{right - left:.1f}" height="{HEIGHT - 36}" fill="{THRESHOLD_COLOUR}" '
                            f'fill-opacity="0.1"><title>{dropped}</title></rect>')
            # Under the threshold's label, on the same side of the line (the one with room), an arrow to the shade.
            arrowed = f"{dropped} \u2192" if drops == "above" else f"\u2190 {dropped}"
            parts.append(f'<text class="dropped-label" x="{x + 3 if x < WIDTH / 2 else x - 3:.1f}" y="26" '
                         f'font-size="11" text-anchor="{"start" if x < WIDTH / 2 else "end"}" '
                         f'fill="{THRESHOLD_COLOUR}">{arrowed}</text>')
        parts.append(f'<line class="threshold" x1="{x:.1f}" x2="{x:.1f}" y1="16" y2="{HEIGHT - 20}" '
                     f'stroke="{THRESHOLD_COLOUR}" stroke-width="2"><title>threshold {_number(threshold)}</title>'
                     f'</line><text x="{x + 3 if x < WIDTH / 2 else x - 3:.1f}" y="12" font-size="11" '
                     f'text-anchor="{"start" if x < WIDTH / 2 else "end"}" fill="{THRESHOLD_COLOUR}">'
                     f"threshold {_number(threshold)}</text>")
    return (f'<svg class="histogram" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
            f'width="{WIDTH}" height="{HEIGHT}">{"".join(parts)}</svg>')


def _row_attributes(outcome: str) -> str:
    return f'class="{outcome}"' + (f' style="{DROPPED_ROW_STYLE}"' if outcome == "dropped" else "")


def _sides(counts: dict, signal: dict, drops: str | None) -> str:
    """The documents and tokens below, at and above the threshold; with the side the rule drops (`drops`), that row
    marked, and the documents and tokens dropped and kept by it."""
    threshold = _number(signal["threshold"])
    rows = "".join(f'<tr {_row_attributes("dropped" if side == drops else "kept")}><td>{side} {threshold}</td>'
                   f'<td class="n side-documents">{counts[side]["documents"]:,}</td>'
                   f'<td class="n">{counts[side]["tokens"]:,}</td></tr>' for side in SIDES)
    totals = ""
    if drops is not None:
        kept = [side for side in SIDES if side != drops]
        totals = "<tfoot>" + "".join(
            f"<tr {_row_attributes(outcome)}><th>{outcome}: {label}</th>"
            + "".join(f'<td class="n">{sum(counts[side][measure] for side in sides):,}</td>'
                      for measure in ("documents", "tokens")) + "</tr>"
            for outcome, label, sides in (("dropped", f"{drops} {threshold}", (drops,)),
                                          ("kept", f"{' or '.join(kept)} {threshold}", kept))) + "</tfoot>"
    return (f'<table class="sides"><thead><tr><th>value ({escape(signal["threshold_name"])})</th><th>documents</th>'
            f"<th>tokens</th></tr></thead><tbody>{rows}</tbody>{totals}</table>")


def _one(title: str, counts: dict, edges: list[float], signal: dict, drops: str | None) -> str:
    sides = _sides(counts, signal, drops) if signal["threshold"] is not None else ""
    chart = histogram(title, counts, edges, signal["threshold"], drops)
    return f'<div class="signal-chart"><h4>{escape(title)}</h4>{chart}{sides}</div>'


def signals_html(report: dict) -> str:
    """"Look before choosing": every signal's histogram over the corpus, its threshold marked, with the documents and
    tokens each side of it; per language (the `LANGUAGES_SHOWN` with most documents) for the rules that depend on
    it. Nothing for a corpus without signals."""
    section = report.get("signals")
    if not section or not section["by_signal"]:
        return ""
    edges, charts = section["edges"], []
    for name, signal in section["by_signal"].items():
        languages = signal["languages"]
        # Which side the rule drops is its definition's, not its name's (`max_non_alpha_words_ratio` drops below).
        drops = dropped_side(name) if signal["threshold"] is not None else None
        overall = _one(f"{name}: all documents", languages[ALL_LANGUAGES], edges, signal, drops)
        by_documents = sorted((language for language in languages if language != ALL_LANGUAGES),
                              key=lambda language: (-sum(languages[language]["documents"].values()), language))
        per_language = "".join(_one(f"{name}: {language}", languages[language], edges, signal, drops)
                               for language in by_documents[:LANGUAGES_SHOWN])
        more = (f'<p class="legend">{len(by_documents) - LANGUAGES_SHOWN} more languages in report.json.</p>'
                if len(by_documents) > LANGUAGES_SHOWN else "")
        languages_html = (f"<details><summary>per language ({len(by_documents)})</summary>"
                          f'<div class="charts">{per_language}</div>{more}</details>') if by_documents else ""
        # (Its width in its own style: the page's style sheet, and so the page of a build without signals, as it was.)
        charts.append(f'<div class="signal" style="flex:0 0 {WIDTH + 10}px" data-signal="{escape(name)}">'
                      f"{overall}{languages_html}</div>")
    return ('<section id="signals"><h2>Signals: look before choosing</h2><p class="legend">Each signal over the '
            "kept documents: a bar per bin (its title gives the range, documents and tokens), the rule's threshold "
            "(--quality-threshold) in red, the side the rule drops shaded, and the documents and tokens below, at and "
            "above it, counted exactly, and dropped and kept by the rule (a value at the threshold is kept). "
            "A rule that depends on the language has it per language too.</p>"
            f'<div class="charts">{"".join(charts)}</div></section>')
