"""What cleaning gives: a `CleanedPage`, and the document it makes of the one it was cleaned from."""

from __future__ import annotations

from dataclasses import dataclass, field

from transforms.corpus.blocks import blocks_to_html
from transforms.document import Document
from transforms.stages.clean_html.text import collapse_whitespace


@dataclass(frozen=True)
class CleanedPage:
    blocks: list[str]
    title: str = ""
    links: list[str] = field(default_factory=list)
    lang: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    # With main content only, the blocks of the page that are not (`transforms/stages/clean_html/main_content.py`).
    boilerplate: list[str] = field(default_factory=list)

    @property
    def html(self) -> str:
        return blocks_to_html(self.blocks)


def with_cleaned_page(doc: Document, page: CleanedPage) -> Document:
    div_html = page.html
    return doc.replace(
        utf8_payload=b"",
        title=page.title,
        links=page.links,
        lang=page.lang,
        meta=page.meta,
        cleaned_html=div_html,
        cleaned_bytes=len(div_html.encode("utf-8")),
        boilerplate_bytes=len(blocks_to_html(page.boilerplate).encode("utf-8")),
    )


def text_page(text: bytes) -> CleanedPage:
    """Extracted text (UTF-8, a WET file's) as a cleaned page: its lines are its blocks, whitespace collapsed, empty
    ones left out; it has no markup to parse, and no title, links or metadata."""
    return CleanedPage([block for block in map(collapse_whitespace, text.decode("utf-8").splitlines()) if block])
