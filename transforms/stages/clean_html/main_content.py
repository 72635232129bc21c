"""Main content (`--main-content`): which of CleanHtml's blocks are the page's own text, and which its boilerplate.

The walk gives each block, beside its text, three features collected as it
writes it (the C walk's `walk(..., features=True)`, the pure-Python path's
`python_features`): the flags of the elements its text is below (landmarks
by tag, `role` and `itemprop`, class and id names: the `*_FLAGS` tables),
the bytes of its text inside links (`<a href>`), and its bytes.
`keep_blocks` decides on them, a pure function of the blocks, their
features and the thresholds (`MainContentRules`); lengths are in UTF-8 bytes (a CJK character says about as much as a
word of Latin letters):

1. A block below boilerplate (`nav`, `aside`, `footer`, a `header` but for
   headings, `role=navigation`..., a class or id naming a menu, sidebar,
   comments, sharing, related items, a cookie banner, an ad) is boilerplate,
   unless too little of the page's long text lies outside that flag
   (under `min_outside_share` of it and `min_outside_bytes`: a
   `<div id="main-nav-wrapper">` around everything says nothing). Comments
   are apart from an article once `comments_apart_bytes` of long text lie
   outside them, however long the thread (a page of comments alone, a
   forum thread, keeps its posts). Main
   content (`main`, `role=main`, `itemprop=articleBody`, class names such as
   `entry-content`) clears the boilerplate flags of what is around it, not
   those of what is inside it (its comments, its share bar);
   an `<article>` counts as content but clears nothing (a sidebar's teasers
   are articles too). A block mostly of link text (`max_link_share`) is
   boilerplate, but a heading outside a list item (a post's linked title).
2. A long block (`long_bytes`, or `paragraph_bytes` in a `<p>` or
   in main content) is content, and so is any other block of main content.
   Where main content holds a good share of the page (`main_share`), the
   short blocks outside it but headings are boilerplate.
3. The span from the first to the last content block grows over the medium
   blocks next to it (paragraphs between `<br>`s); the short blocks inside it
   stay (a caption, a subheading, a one-line paragraph) but those between two
   boilerplate blocks (a "Related" heading over its links), and so do the
   headings up to `headings_before` blocks before it (the headline above the
   article); the short blocks outside it go.
4. A page where no block is content (a short page, a list, a forum of short
   posts), or whose content would be under `min_kept_share` of its text (a
   page misread; of its text outside comments set apart), keeps all its
   blocks: a corpus builder can filter a page out later, not bring its text
   back.

What is decided is only which blocks stay: their text is CleanHtml's, and
title, links, language and metadata are taken from the whole page.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Sequence

from selectolax.lexbor import LexborHTMLParser

from transforms.stages.clean_html.text import utf8_length

# The flags of a block: what the elements its text is below are.
LINK = 1 << 0
NAV = 1 << 1
ASIDE = 1 << 2
FOOTER = 1 << 3
HEADER = 1 << 4
COMMENT = 1 << 5
SHARE = 1 << 6
COOKIE = 1 << 7
AD = 1 << 8
MAIN = 1 << 9
HEADING = 1 << 10
LIST_ITEM = 1 << 11
PARAGRAPH = 1 << 12
# An `<article>`: main content, but also a teaser in a sidebar, so it does not clear the boilerplate flags around it.
ARTICLE = 1 << 13
CONTENT = MAIN | ARTICLE
BOILERPLATE = NAV | ASIDE | FOOTER | HEADER | COMMENT | SHARE | COOKIE | AD
BOILERPLATE_FLAGS = (NAV, ASIDE, FOOTER, HEADER, COMMENT, SHARE, COOKIE, AD)
# The flags of an element that clear the boilerplate flags it inherits (not ARTICLE's).
CLEARS_BOILERPLATE = MAIN

TAG_FLAGS = {
    "nav": NAV, "aside": ASIDE, "footer": FOOTER, "header": HEADER, "main": MAIN, "article": ARTICLE,
    "h1": HEADING, "h2": HEADING, "h3": HEADING, "h4": HEADING, "h5": HEADING, "h6": HEADING,
    "li": LIST_ITEM, "p": PARAGRAPH,
}
# Exact values of `role` and `itemprop` (ASCII case ignored).
ROLE_FLAGS = {
    "navigation": NAV, "menu": NAV, "menubar": NAV, "complementary": ASIDE, "contentinfo": FOOTER,
    "banner": HEADER, "main": MAIN, "article": ARTICLE, "articlebody": MAIN, "alertdialog": COOKIE, "dialog": COOKIE,
}
# Substrings of `class` and `id` (ASCII case ignored), lowercase.
CLASS_FLAGS = {
    "nav": NAV, "menu": NAV, "breadcrumb": NAV, "pagination": NAV, "pager": NAV, "skip-link": NAV,
    "sidebar": ASIDE, "related": ASIDE, "recommend": ASIDE, "popular": ASIDE, "trending": ASIDE,
    "footer": FOOTER, "copyright": FOOTER,
    "header": HEADER, "masthead": HEADER,
    "comment": COMMENT, "disqus": COMMENT, "respond": COMMENT,
    "share": SHARE, "social": SHARE, "newsletter": SHARE, "subscribe": SHARE,
    "cookie": COOKIE, "consent": COOKIE, "gdpr": COOKIE,
    "advert": AD, "sponsor": AD, "promo": AD,
    "articlebody": MAIN, "article-body": MAIN, "article__body": MAIN, "article-content": MAIN,
    "entry-content": MAIN, "post-content": MAIN, "post-body": MAIN, "story-body": MAIN,
}

@dataclass(frozen=True)
class MainContentRules:
    """The thresholds of `keep_blocks` (see the module's docstring); the defaults are the build's."""

    max_link_share: float = 0.6
    long_bytes: int = 150
    paragraph_bytes: int = 60
    main_share: float = 0.25
    # A boilerplate flag outside which less than this share of the page's long blocks' text, and less than these
    # bytes, lie says nothing.
    min_outside_share: float = 0.2
    min_outside_bytes: int = 2000
    # Comments go, however much of the page they are, when this much of its long text lies outside them: an
    # article and its readers' thread, not a page of comments alone (None: as every other flag). Two long blocks'
    # worth: one (150 bytes, the best on all the gold sets) would take a comment page's posts for a line of intro.
    comments_apart_bytes: int | None = 300
    # The headings kept just before the first content block: at most this many blocks before it.
    headings_before: int = 6
    # A page whose main content would be less than this share of its text keeps it all (rule 4).
    min_kept_share: float = 0.05


RULES = MainContentRules()

BOILERPLATE_BLOCK, SHORT_BLOCK, MEDIUM_BLOCK, MAIN_BLOCK, CONTENT_BLOCK = range(5)


def tag_flags_by_id() -> dict[int, int]:
    """`TAG_FLAGS` by lexbor's tag id (both walks look an element's up by it)."""
    factory = LexborHTMLParser("")
    return {factory.create_node(name).tag_id: flags for name, flags in TAG_FLAGS.items()}


def tag_flag_table() -> bytes:
    """The flags by lexbor's tag id, as native uint32s (the C walk's table)."""
    by_id = tag_flags_by_id()
    table = array("I", bytes(4 * (max(by_id) + 1)))
    for identifier, flags in by_id.items():
        table[identifier] = flags
    return table.tobytes()


def bind(walk) -> None:
    """Gives the C walk the features' tables (`python_features` reads the same ones)."""
    walk.bind_features(tag_flag_table(),
                       tuple((text.encode("ascii"), flags) for text, flags in CLASS_FLAGS.items()),
                       tuple((text.encode("ascii"), flags) for text, flags in ROLE_FLAGS.items()),
                       LINK, CLEARS_BOILERPLATE, BOILERPLATE)


def block_features(raw: bytes) -> list[tuple[int, int, int]]:
    """The C walk's features, (flags, link bytes, bytes) a block."""
    values = array("I", raw)
    return list(zip(values[0::3], values[1::3], values[2::3]))


def keep_blocks(blocks: Sequence[str], features: Sequence[tuple[int, int, int]],
                rules: MainContentRules = RULES) -> list[bool]:
    """Which of a page's blocks are its main content (the module's docstring says how), one bool a block."""
    count = len(blocks)
    if count == 0:
        return []
    # In UTF-8 bytes: a CJK character says as much as a word of Latin letters does.
    lengths = [utf8_length(block) for block in blocks]
    total = sum(lengths)
    # The long blocks' bytes by their boilerplate flags, and the bytes of main content.
    long_by_flags: dict[int, int] = {}
    main_length = 0
    for length, (flags, _, _) in zip(lengths, features):
        if length >= rules.long_bytes:
            key = flags & BOILERPLATE
            long_by_flags[key] = long_by_flags.get(key, 0) + length
        if flags & CONTENT:
            main_length += length
    long_total = sum(long_by_flags.values())
    # Rule 1's flags with too little of the page's long text outside them say nothing on it.
    ignored = 0
    # The comments set apart from an article (their flag, or 0).
    apart = 0
    for flag in BOILERPLATE_FLAGS:
        outside = sum(length for flags, length in long_by_flags.items() if not flags & flag)
        if flag == COMMENT and rules.comments_apart_bytes is not None and outside >= rules.comments_apart_bytes:
            apart = COMMENT
            continue
        if outside < rules.min_outside_share * long_total and outside < rules.min_outside_bytes:
            ignored |= flag
    has_main = main_length >= rules.main_share * total
    kinds = []
    for length, (flags, link_bytes, size) in zip(lengths, features):
        boilerplate = flags & BOILERPLATE & ~ignored
        if flags & (CONTENT | HEADING):
            boilerplate &= ~HEADER  # an article's own header holds its headline, and a page's header may
        # A heading that is a link (a post's title) is no menu, but in a list item (a list of teasers).
        linked_title = flags & (HEADING | LIST_ITEM) == HEADING
        if boilerplate or (size and link_bytes > rules.max_link_share * size and not linked_title):
            kinds.append(BOILERPLATE_BLOCK)
        elif length >= rules.long_bytes or (flags & (PARAGRAPH | CONTENT) and length >= rules.paragraph_bytes):
            kinds.append(CONTENT_BLOCK)
        elif has_main and not flags & (CONTENT | HEADING):
            kinds.append(BOILERPLATE_BLOCK)
        elif flags & CONTENT:
            kinds.append(MAIN_BLOCK)
        else:
            kinds.append(MEDIUM_BLOCK if length >= rules.paragraph_bytes else SHORT_BLOCK)
    content = [index for index, kind in enumerate(kinds) if kind == CONTENT_BLOCK]
    if not content:
        return [True] * count
    first, last = content[0], content[-1]
    # The span grows over the medium blocks next to it (paragraphs written without `<p>`, between `<br>`s).
    while first > 0 and kinds[first - 1] == MEDIUM_BLOCK:
        first -= 1
    while last < count - 1 and kinds[last + 1] == MEDIUM_BLOCK:
        last += 1
    before, after = nearest_not_short(kinds)
    keep = []
    for index, kind in enumerate(kinds):
        if kind == CONTENT_BLOCK or kind == MAIN_BLOCK:
            keep.append(True)
        elif kind == BOILERPLATE_BLOCK:
            keep.append(False)
        elif first <= index <= last:
            # A short block between boilerplate (a "Related" heading over a list of links) goes with it.
            keep.append(kind != SHORT_BLOCK or before[index] != BOILERPLATE_BLOCK or after[index] != BOILERPLATE_BLOCK)
        else:
            keep.append(first - rules.headings_before <= index < first and bool(features[index][0] & HEADING))
    # (An article's long thread is not the page misread.)
    beside = sum(length for length, (flags, _, _) in zip(lengths, features) if flags & apart) if apart else 0
    if sum(length for length, kept in zip(lengths, keep) if kept) < rules.min_kept_share * (total - beside):
        return [True] * count
    return keep


def nearest_not_short(kinds: list[int]) -> tuple[list, list]:
    """For each block, the kind of the nearest block before it and after it that is not short (None: none)."""
    count = len(kinds)
    before, after = [None] * count, [None] * count
    previous = following = None
    for index in range(count):
        before[index] = previous
        if kinds[index] != SHORT_BLOCK:
            previous = kinds[index]
        back = count - 1 - index
        after[back] = following
        if kinds[back] != SHORT_BLOCK:
            following = kinds[back]
    return before, after
