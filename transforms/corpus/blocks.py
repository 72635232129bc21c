"""The block format of the corpus: a page's text as `<div>` blocks, with no parser.

CleanHtml writes a page's blocks in the `html` field as `<div>` elements
without attributes, one per block, their text escaped (`&`, `<`, `>`);
MinimizeText, `pipeline.verify` and `transforms.corpus.read_corpus` read them back.
Reading needs nothing but this module: a consumer of a finished corpus needs
fastavro, not lexbor.
"""

from __future__ import annotations

# A character that never occurs in parsed text (lexbor turns NUL into U+FFFD)
# marks the boundary between text nodes, and between blocks.
BOUNDARY = "\x00"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """The inverse of `escape` (every `&` of escaped text starts one of its three entities)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def blocks_to_html(blocks: list[str]) -> str:
    if not blocks:
        return ""
    joined = BOUNDARY.join(blocks)
    if joined.count(BOUNDARY) == len(blocks) - 1:
        return "<div>" + escape(joined).replace(BOUNDARY, "</div><div>") + "</div>"
    return "".join(f"<div>{escape(block)}</div>" for block in blocks)


def html_to_blocks(div_html: str) -> list[str]:
    """The blocks of `blocks_to_html`'s output, unescaped."""
    if not div_html:
        return []
    inner = div_html[len("<div>"):-len("</div>")]
    blocks = inner.split("</div><div>")
    if "&" not in inner:
        return blocks
    return [unescape(block) if "&" in block else block for block in blocks]
