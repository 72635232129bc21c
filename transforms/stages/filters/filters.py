"""The filters applied to a `Document`: the quality rule sets (kept, its text perhaps edited, or a `filtered`
skip) and the replacement of personal data."""

from __future__ import annotations

from collections import Counter
from typing import Callable

from transforms.document import Document, Skip, filtered
from transforms.stages.filters import fineweb2
from transforms.stages.filters.fineweb2 import Pack
from transforms.stages.filters.pii import scrub
from transforms.stages.filters.pii import KINDS
from transforms.stages.filters.rule_sets import apply_rule_sets
from transforms.stages.tokens import FILTERED_TOKENS, tokens_of
from transforms.stages.filters.verdict import Drop
from transforms.stages.filters.segmenters import word_splitter
from transforms.stages.filters.signals import measure_rule_sets


def filter_document(doc: Document, rule_sets: tuple[str, ...], thresholds: dict,
                    reminimize: Callable[[Document, str], Document],
                    count_tokens: Callable[[str], int] | None = None,
                    packs: dict[str, Pack] | None = None) -> tuple[Document | Skip, Counter]:
    """`doc` (as MinimizeText left it, with its `clean_text`) through `rule_sets`, and what the rules did (the
    counts of `FilterCounts`).

    A dropped page is a `filtered` skip whose detail names the rule sets asked for, the rule, the value it
    measured and its threshold. A page whose lines a rule removed is minimized again from the lines kept
    (`reminimize`: MinimizeText's function of a document and its text, `minimize_text.minimize_lines`), so that
    its `html`, `text` and so its content hash are of the filtered text. With `count_tokens` (--tokenizer), a
    dropped page's tokens of its `clean_text` are counted too, by rule (`tokens:STEP/RULE`) and by language
    (`tokens.tokens_of`).

    With `packs` (`--quality fineweb2`: language packs by language code), the thresholds are those of the page's
    language's pack, a page under its pack's `min_confidence` is dropped by `fineweb2/language_score`, a page whose
    language has none is kept unjudged, and each page's outcome is counted per language
    (`language:LANGUAGE:OUTCOME`: the rule that dropped it, `kept`, or `fineweb2.NO_PACK`, `fineweb2.NO_WORDS`).
    """
    if not doc.clean_text.strip():
        # A page without text is HashDedup's `no-text` skip, whatever the rules would say.
        return doc, Counter()
    counts = Counter()
    if packs is not None:
        language = doc.language or "none"
        pack = packs.get(doc.language)
        if pack is None:
            return doc, Counter({f"language:{language}:{fineweb2.NO_PACK}": 1})
        if doc.language_confidence < pack.min_confidence:
            counts[f"language:{language}:{fineweb2.RULE_SET}/language_score"] = 1
            return dropped(doc, rule_sets, Drop(fineweb2.RULE_SET, "language_score", doc.language_confidence,
                                                pack.min_confidence), counts, count_tokens)
        thresholds = pack.thresholds
    outcome = apply_rule_sets(doc.clean_text, rule_sets, thresholds, doc.language)
    counts.update({f"lines:{rule}": removed for rule, removed in outcome.lines_removed.items()})
    if packs is not None:
        kept = fineweb2.KEPT if word_splitter(doc.language, pack.words) else fineweb2.NO_WORDS
        counts[f"language:{language}:{outcome.drop.name if outcome.drop else kept}"] = 1
    if outcome.drop is not None:
        return dropped(doc, rule_sets, outcome.drop, counts, count_tokens)
    return with_text(doc, outcome.text, reminimize), counts


def dropped(doc: Document, rule_sets: tuple[str, ...], drop: Drop, counts: Counter,
            count_tokens: Callable[[str], int] | None = None) -> tuple[Skip, Counter]:
    """The `filtered` skip of `doc`, which `drop` dropped (its detail names the rule sets asked for, the rule, the
    value and the threshold), and `counts` with the page counted under the rule (with `count_tokens`,
    --tokenizer, its tokens too)."""
    skip, counted = filtered(doc, drop.name, f"{','.join(rule_sets)}: {drop.detail()}")
    counts.update(counted)
    if count_tokens is not None:
        tokens = count_tokens(doc.clean_text)
        counts.update({f"tokens:{drop.name}": tokens, **tokens_of(FILTERED_TOKENS, doc.language, tokens)})
    return skip, counts


def with_text(doc: Document, text: str, reminimize: Callable[[Document, str], Document]) -> Document:
    """`doc` (with its `clean_text`) holding `text`, what the line rules kept of it: minimized again where they
    removed lines (`reminimize`: MinimizeText's function of a document and its text, `minimize_text.minimize_lines`),
    so that its `html`, `text` and content hash are of it."""
    if text == doc.clean_text:
        return doc
    return reminimize(doc, text)


def annotate_document(doc: Document, rule_sets: tuple[str, ...], thresholds: dict, language: bool = False,
                      main_content: bool = False, site_boilerplate: bool = False,
                      packs: dict[str, Pack] | None = None) -> tuple[Document, Counter]:
    """`doc` (as MinimizeText left it) with every rule of `rule_sets` measured on its `clean_text` in its `signals`
    (`signals.measure_rule_sets`), kept whatever they say and its text unedited; and beside them, its language's
    confidence (`language/confidence`, with `language`), the share of its cleaned page that the main content
    kept (`main_content/kept_share`, with `main_content`) and the share of what CleanHtml (and the main content)
    kept that SiteBoilerplate removed (`site_boilerplate/removed_share`, with `site_boilerplate`: 0.0 for a page it
    removed nothing from). With `packs` (`--quality fineweb2`), the stop words are those of the page's language's
    pack (none without one)."""
    if not doc.clean_text.strip():
        # A page without text is HashDedup's `no-text` skip: nothing to measure.
        return doc, Counter()
    if packs is not None:
        pack = packs.get(doc.language)
        thresholds = pack.thresholds if pack else {**thresholds, fineweb2.STOP_WORDS: None}
    signals = dict(doc.signals, **measure_rule_sets(doc.clean_text, rule_sets, thresholds, doc.language).signals)
    if language:
        signals["language/confidence"] = doc.language_confidence
    if main_content:
        whole = doc.cleaned_bytes + doc.boilerplate_bytes
        signals["main_content/kept_share"] = doc.cleaned_bytes / whole if whole else 1.0
    if site_boilerplate:
        # Both in `<div>` HTML bytes: `cleaned_bytes` is the page as it reached SiteBoilerplate.
        signals["site_boilerplate/removed_share"] = (doc.site_boilerplate_bytes / doc.cleaned_bytes
                                                     if doc.cleaned_bytes else 0.0)
    return doc.replace(signals=signals), Counter()


def scrub_document(doc: Document, annotate: bool = False) -> tuple[Document, Counter]:
    """`doc` (as MinimizeText, or QualityFilter, left it) with e-mail and public IP addresses replaced in `html`,
    `text` and `clean_text` (`pii.scrub`), and the replacements per kind, as `replaced:KIND` counts of `html`
    (the field the content hash is of). `annotate`: the counts are its signals too, `pii/KIND` (0 for none)."""
    html, counts = scrub(doc.html)
    if annotate:
        doc = doc.replace(signals=dict(doc.signals, **{f"pii/{kind}": float(counts[kind]) for kind in KINDS}))
    if not counts:
        return doc, Counter()
    return doc.replace(html=html, text=scrub(doc.text)[0], clean_text=scrub(doc.clean_text)[0],
                       minimized_bytes=len(html.encode("utf-8"))), Counter(
        {f"replaced:{kind}": count for kind, count in counts.items()})
