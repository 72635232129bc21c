"""The block format of the corpus: a page's text as `<div>` blocks, with no parser.

CleanHtml writes a page's blocks in the `html` field as `<div>` elements
without attributes, one per block, their text escaped (`&`, `<`, `>`);
MinimizeText, `pipeline.verify` and `transforms.corpus.read_corpus` read them back.
Reading needs nothing but this module (and, where it is built, its C path:
`transforms/native/_blocks.c`): a consumer of a finished corpus needs
fastavro, not lexbor.
"""

from __future__ import annotations

from transforms import native

# `blocks_to_html` and `blocks_text` in one pass (transforms/native/_blocks.c), or None for the lines below.
_blocks = native.load("_blocks")

# A character that never occurs in parsed text (lexbor turns NUL into U+FFFD)
# marks the boundary between text nodes, and between blocks.
BOUNDARY = "\x00"
# What is between two blocks in `blocks_to_html`'s output (their text escapes `<`: nowhere else).
BLOCK_BOUNDARY = "</div><div>"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """The inverse of `escape` (every `&` of escaped text starts one of its three entities)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def blocks_to_html(blocks: list[str]) -> str:
    if _blocks is not None:
        return _blocks.to_html(blocks)
    if not blocks:
        return ""
    joined = BOUNDARY.join(blocks)
    if joined.count(BOUNDARY) == len(blocks) - 1:
        return "<div>" + escape(joined).replace(BOUNDARY, BLOCK_BOUNDARY) + "</div>"
    return "".join(f"<div>{escape(block)}</div>" for block in blocks)


def blocks_text(div_html: str) -> tuple[str, int]:
    """The blocks of `blocks_to_html`'s output joined by newlines, unescaped, and how many they are (for an empty
    output, "" and 1): what MinimizeText and `leading_text` read, without making the list."""
    inner = div_html[len("<div>"):-len("</div>")]
    if _blocks is not None:
        return _blocks.to_text(inner)
    # Its text escapes `<`, so the only `</div><div>` are the boundaries.
    text = inner.replace(BLOCK_BOUNDARY, "\n")
    return (unescape(text) if "&" in text else text), inner.count(BLOCK_BOUNDARY) + 1


def leading_text(div_html: str, characters: int) -> str:
    """The first blocks of `blocks_to_html`'s output joined by newlines, as many as hold its text's first
    `characters` characters (all of them where it has fewer): what reads the start of a page only, without
    unescaping the rest."""
    cut = characters
    while (boundary := div_html.find(BLOCK_BOUNDARY, cut)) >= 0:
        text = blocks_text(div_html[:boundary] + "</div>")[0]
        if len(text) >= characters:
            return text
        # (Tags and entities took more of the markup than the text: a longer start, twice as long each time.)
        cut = max(boundary + 1, 2 * cut)
    return blocks_text(div_html)[0]


def html_to_blocks(div_html: str) -> list[str]:
    """The blocks of `blocks_to_html`'s output, unescaped."""
    if not div_html:
        return []
    inner = div_html[len("<div>"):-len("</div>")]
    blocks = inner.split(BLOCK_BOUNDARY)
    if "&" not in inner:
        return blocks
    return [unescape(block) if "&" in block else block for block in blocks]
