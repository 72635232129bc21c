"""The measures of a tool's text against a gold page's: words, recall, split and glued words, order, leftover markup
(what `benchmarks.fidelity` and `benchmarks.main_content` report, and the tests assert on).

Gold text and tool output are both normalized by MinimizeText's `minimize_block` (line by line) and cut into words
at spaces and at the kept symbols (`& - ' . , : % + @ # $ /`); with `scripts=KEEP_CASE`, normalized to NFC with case
and punctuation kept and cut at spaces only.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter

from devcorpus.gold import GoldPage, gold_lines

# `scripts` for the measures of `clean_text`: both sides normalized to NFC with whitespace
# collapsed, case and punctuation kept, words cut at spaces only (`"Yes,"` is no `yes`).
KEEP_CASE = "keep-case"
# Words: runs between spaces and the symbols MinimizeText keeps.
WORD = re.compile(r"[^\s&\-'.,:%+@#$/]+")
# Leftover markup and entities in a tool's text.
LEAK = re.compile(
    r"<\s*/?\s*[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>|<!--|-->"
    r"|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)
MIN_SPLIT_LETTERS = 4
# The HTML standard's phrasing elements that render no box of their own: in the page's
# "inline-joined" view (see `SourceViews`) they join the text around them.
PHRASING_TAGS = (
    "a abbr acronym b bdi bdo big blink cite code data del dfn em font i ins kbd label mark nobr q rb rp rt rtc "
    "ruby s samp small span strike strong sub sup time tt u var wbr"
).split()
_INVISIBLE_SOURCE = re.compile(r"<(script|style|textarea|template|title)\b.*?</\1\s*>|<!--.*?-->|<!\[CDATA\[.*?\]\]>",
                               re.IGNORECASE | re.DOTALL)
_LINK_AFTER_LINK = re.compile(r"</a\s*>\s*<a\b", re.IGNORECASE)
# Where one phrasing element ends and the next starts, with nothing between: CleanHtml's rule 4
# separates them when the text before ends with a lowercase letter and the text after starts with
# an uppercase one (`<span>Политика</span><span>Экономика</span>`).
_PHRASING_SEAM = re.compile(r"(?:</(?:%s)\s*>)+(?:<(?:%s)\b[^>]*>)+" % ("|".join(PHRASING_TAGS), "|".join(PHRASING_TAGS)),
                            re.IGNORECASE)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)[^>]*>")
_PHRASING = frozenset(PHRASING_TAGS)
_ENTITY_NAMES = frozenset(name if name.endswith(";") else name + ";" for name in __import__("html.entities").entities.html5)


class SourceViews:
    """Regex views of a page's source text, independent of any tool, to tell real split and glued words.

    Script, style, textarea, template, title and comments are removed first.
    `inline_joined`: phrasing tags removed, every other tag a space: the words
    a reader sees whole (`tripl<!-- -->e`, `<span>H</span>ong`), but for a
    space where one phrasing element ending lowercase meets one starting
    uppercase (`<span>Credit</span><span>Chang</span>`: CleanHtml's rule 4). `one_word`:
    the words the page writes as one word whatever its markup does (every
    tag a space: `us` of `U.S.`), or across phrasing markup but between two
    links that follow each other (`25<sup>th</sup>`; not `<a>Home</a><a>News</a>`). `counts`: how often each word occurs in the text with
    every tag a space (hidden text included), a cap on what any tool can
    find. `text`: that text, entities decoded, whitespace collapsed.
    """

    def __init__(self, page: GoldPage, scripts=None):
        import html

        source = _INVISIBLE_SOURCE.sub(" ", page.utf8.decode("utf-8", "replace"))
        source = _PHRASING_SEAM.sub(_case_seam, source)
        joined = _TAG.sub(lambda match: "" if match.group(1).lower() in _PHRASING else " ", source)
        joined_but_menus = _TAG.sub(lambda match: "" if match.group(1).lower() in _PHRASING else " ",
                                    _LINK_AFTER_LINK.sub(" ", source))
        text = _TAG.sub(" ", source)
        # Entities decoded as often as they were escaped (`&amp;amp;` -> `&`), as CleanHtml does.
        for _ in range(4):
            decoded = html.unescape(text)
            if decoded == text:
                break
            text = decoded
        self.text = " ".join(text.split())
        spaced = words_of(normalized_lines([self.text], scripts), scripts)
        self.counts = Counter(spaced)
        self.inline_joined = set(words_of(normalized_lines([html.unescape(joined)], scripts), scripts))
        menus_apart = words_of(normalized_lines([html.unescape(joined_but_menus)], scripts), scripts)
        self.one_word = set(spaced) | set(menus_apart)


def _case_seam(match) -> str:
    """A phrasing seam with a space after it where the text changes from lowercase to uppercase across it."""
    source, start, end = match.string, match.start(), match.end()
    if source[start - 1:start].islower() and source[end:end + 1].isupper():
        return match.group() + " "
    return match.group()


def normalized_lines(lines, scripts=None) -> list[str]:
    from transforms.stages.minimize_text import minimize_block

    if scripts == KEEP_CASE:
        return [line for line in (" ".join(unicodedata.normalize("NFC", line).split()) for line in lines) if line]
    if scripts is None:
        return [line for line in map(minimize_block, lines) if line]
    return [line for line in (minimize_block(line, scripts) for line in lines) if line]


def words_of(lines: list[str], scripts=None) -> list[str]:
    if scripts == KEEP_CASE:
        return [word for line in lines for word in line.split()]
    return [word for line in lines for word in WORD.findall(line)]


def lcs_length(first: list[str], second: list[str]) -> int:
    """Length of the longest common subsequence, a row of the table at a time as the bits of one integer (Hyyrö's
    bit-parallel rule: a bit of `row` is clear where the row's length grows): 9 times faster on the dev corpus than
    Hunt-Szymanski, whose bisections a frequent word ("the") multiplies."""
    masks: dict[str, int] = {}
    for index, word in enumerate(second):
        masks[word] = masks.get(word, 0) | 1 << index
    whole = (1 << len(second)) - 1
    row = whole
    for word in first:
        matches = row & masks.get(word, 0)
        row = ((row + matches) | (row - matches)) & whole
    return len(second) - row.bit_count()


def split_words(gold_counts: Counter, output: list[str], output_counts: Counter, views: SourceViews) -> list[str]:
    """Gold words (4+ characters) missing from the output whose pieces are adjacent output words.

    Only words that the page shows whole (`views.inline_joined`): a gold
    word that the page itself writes as two (gold made by hand glues some)
    is no split.
    """
    missing = {word for word, count in gold_counts.items()
               if len(word) >= MIN_SPLIT_LETTERS and output_counts.get(word, 0) < count
               and word in views.inline_joined}
    if not missing:
        return []
    found = set()
    for size in (2, 3, 4):
        for start in range(len(output) - size + 1):
            joined = "".join(output[start:start + size])
            if joined in missing:
                found.add(joined)
    return sorted(found)


def glued_words(gold: list[str], gold_counts: Counter, output_counts: Counter, views: SourceViews) -> list[str]:
    """Output words that are no gold word but two adjacent gold words run together.

    Not a word that the page's text writes as one word anywhere
    (`views.one_word`: `us` of `U.S.`, `25th` of `25<sup>th</sup>`).
    """
    pairs = {first + second for first, second in zip(gold, gold[1:])}
    return sorted(word for word in output_counts
                  if word not in gold_counts and word in pairs and word not in views.one_word)


def leaks(raw_lines: list[str], page: GoldPage, views: SourceViews) -> list[str]:
    """Markup and entities left in the text.

    A tag or comment counts unless the page shows it as text (written
    `&lt;b&gt;`: it is then in `views.text`) or the gold holds it; an entity
    (a name of the HTML standard's list, or a number) always counts: one
    that the page escaped (`&amp;nbsp;`) is a publishing mistake, not text.
    """
    import html

    found = set()
    for line in raw_lines:
        for match in LEAK.finditer(line):
            text = match.group()
            if text in found:
                continue
            if text[0] == "&":
                if text[1] == "#" or text[1:] in _ENTITY_NAMES:
                    found.add(text)
            elif text not in page.gold and " ".join(html.unescape(text).split()) not in views.text:
                found.add(text)
    return sorted(found)


def gold_counts_of(page: GoldPage, gold: list[str], views: SourceViews) -> Counter:
    """The gold's words, each counted at most as often as the page's text has it: some gold (L3S-GN1) repeats
    whole paragraphs that the page has once."""
    return Counter({word: min(count, views.counts.get(word) or count) for word, count in Counter(gold).items()})


def recall_of(gold_counts: Counter, output_counts: Counter) -> float:
    """The share of the gold's words (as a multiset) found in the output's."""
    return sum((gold_counts & output_counts).values()) / sum(gold_counts.values()) if gold_counts else 1.0


def measure(page: GoldPage, lines: list[str], raw_lines: list[str], scripts=None) -> dict:
    gold = words_of(normalized_lines(gold_lines(page.gold), scripts), scripts)
    output = words_of(normalized_lines(lines, scripts), scripts)
    views = page_views(page, scripts)
    gold_counts = gold_counts_of(page, gold, views)
    output_counts = Counter(output)
    return {
        "recall": recall_of(gold_counts, output_counts),
        "gold_words": sum(gold_counts.values()),
        "split": split_words(gold_counts, output, output_counts, views),
        "glued": glued_words(gold, gold_counts, output_counts, views),
        "order": lcs_length(gold, output) / len(gold) if gold else 1.0,
        "leaks": leaks(raw_lines, page, views),
    }


_VIEWS: dict = {}


def page_views(page: GoldPage, scripts=None) -> SourceViews:
    key = (page.id, page.url, scripts)
    if key not in _VIEWS:
        _VIEWS[key] = SourceViews(page, scripts)
    return _VIEWS[key]


def snippet_found(snippet: str, haystack: str, scripts=None) -> bool:
    needle = " ".join(words_of(normalized_lines([snippet], scripts), scripts))
    return not needle or needle in haystack


def charset_agreement(pages: list[GoldPage]) -> dict:
    """The charset Charset chose for each page against the gold's `true_charset`: pages with one, right, and the
    wrong ones as (id, true, chosen)."""
    def canonical(name: str) -> str | None:
        from transforms.stages.charset import codec_for_label

        codec = codec_for_label(name) if name else None
        return codecs.lookup(codec).name if codec else None

    right, wrong = 0, []
    for page in pages:
        truth = canonical(page.true_charset)
        chosen = canonical(page.charset)
        if truth is None:
            continue
        # Bytes decode the same in both (an ASCII page in "utf-8" or "windows-1252") count as right.
        same = chosen == truth or page.raw.decode(truth, "replace") == page.raw.decode(chosen or "utf-8", "replace")
        if same:
            right += 1
        else:
            wrong.append((page.id, page.true_charset, page.charset))
    return {"pages": right + len(wrong), "right": right, "wrong": wrong}
