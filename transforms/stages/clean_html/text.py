"""The text of the blocks: whitespace collapsed, and the entities a page escaped twice decoded (rule 6)."""

from __future__ import annotations

import html as html_escaping
import re

from transforms.corpus.blocks import BOUNDARY

# An entity left in the text after the parser decoded the page's, written
# twice escaped (`&amp;amp;`, `&amp;nbsp;`): decoded once more.
LEFTOVER_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def utf8_length(text: str) -> int:
    """The bytes of `text` in UTF-8 (without encoding an ASCII text)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def split_blocks(text: str) -> list[str]:
    """The non-empty blocks of BOUNDARY-separated text, whitespace collapsed."""
    return list(filter(None, map(" ".join, map(str.split, text.split(BOUNDARY)))))


def _decode_entity(match) -> str:
    entity = match.group()
    if entity[1] != "#" and entity[1:] not in html_escaping.entities.html5:
        return entity
    return html_escaping.unescape(entity)


def decode_leftover_entities(text: str) -> str:
    """`text` with the entities that a page escaped twice decoded (`&amp;` -> `&`; `AT&T;` stays)."""
    if "&" not in text:
        return text
    for _ in range(3):
        decoded = LEFTOVER_ENTITY.sub(_decode_entity, text)
        if decoded == text:
            break
        text = decoded
    return text
