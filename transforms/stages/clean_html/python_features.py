"""Main content's features on the pure-Python path: each block's (flags, link bytes, bytes), as the C walk gives them.

`python_walk.tree_walk` reads them before it changes the tree, with the
same tables (`main_content`: `TAG_FLAGS`, `CLASS_FLAGS`, `ROLE_FLAGS`) and
the same steps as `_lexbor_walk.c`: the blocks are the runs of text between
block boundaries that hold a character other than whitespace; a block's
flags are those of the elements each piece of its text is below, its bytes
those of its pieces in UTF-8 (whitespace, the spaces before links and the
abbreviations' expansions; not rule 4's case spaces, which the C walk adds
uncounted), its link bytes those below a link. The C walk counts lexbor's
bytes and this module the UTF-8 of selectolax's text: the same on valid
UTF-8, which is what DecodeCharset gives CleanHtml.
"""

from __future__ import annotations

import re
import string

from transforms.stages.clean_html.main_content import (BOILERPLATE, CLASS_FLAGS, CLEARS_BOILERPLATE, LINK, ROLE_FLAGS,
                                                       tag_flags_by_id)
from transforms.stages.clean_html.rules import (KIND_ABBREVIATION, KIND_ANCHOR, KIND_BLOCK, KIND_DROP, KIND_INLINE,
                                                KIND_TITLE, KINDS)
from transforms.stages.clean_html.text import collapse_whitespace, utf8_length

TAG_FLAGS_BY_ID = tag_flags_by_id()
# The C walk compares attribute names and values ignoring ASCII case only (`str.lower` maps `K`, U+212A, to `k`).
# The parser lowercases the names (and in foreign content changes only others, `viewBox`, `xlink:href`): they are
# looked up as they are.
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
SUBSTRING_ATTRIBUTES = ("class", "id")  # holding `CLASS_FLAGS`' keywords
VALUE_ATTRIBUTES = ("role", "itemprop")  # one of `ROLE_FLAGS`'
# Whether a class or id holds any keyword at all: most hold none, and are passed over in one search.
ANY_CLASS_KEYWORD = re.compile("|".join(map(re.escape, CLASS_FLAGS)))


def element_flags(node, tag_id: int, kind: int, inherited: int) -> int:
    """An element's flags: its own (by tag, a link's href, class and id substrings, role and itemprop values) and
    `inherited`, its parent's, less their boilerplate flags below main content."""
    own = TAG_FLAGS_BY_ID.get(tag_id, 0)
    if kind == KIND_ANCHOR:
        if "href" in node.attributes:
            own |= LINK  # not an `<a name>`, which old pages leave open around all their text
    elif kind == KIND_BLOCK:
        attributes = node.attributes
        if attributes:
            for name in SUBSTRING_ATTRIBUTES:
                value = attributes.get(name)
                if value:
                    value = value.translate(ASCII_LOWER)
                    if ANY_CLASS_KEYWORD.search(value):
                        for keyword, flags in CLASS_FLAGS.items():
                            if keyword in value:
                                own |= flags
            for name in VALUE_ATTRIBUTES:
                value = attributes.get(name)
                if value:
                    own |= ROLE_FLAGS.get(value.translate(ASCII_LOWER), 0)
    if own & CLEARS_BOILERPLATE:
        inherited &= ~BOILERPLATE
    return inherited | own


class _Frame:
    """A kept element being walked, as the C walk's `Frame` (what the features need of it)."""

    __slots__ = ("node", "transparent", "flags", "expansion", "has_kept_child", "previous_is_shown_inline",
                 "link_space_pending")

    def __init__(self, node, transparent: bool, flags: int, expansion: str = "", link_space_pending: bool = False):
        self.node = node
        self.transparent = transparent  # an inline element: no block boundary
        self.flags = flags
        self.expansion = expansion  # an abbreviation's title, whitespace collapsed
        self.has_kept_child = False
        self.previous_is_shown_inline = False  # the last kept child is an inline element with content
        self.link_space_pending = link_space_pending  # a link after a shown inline element: a space before its content


class _Blocks:
    """The features of the blocks written so far, and of the one being written."""

    def __init__(self):
        self.features: list[tuple[int, int, int]] = []
        self.flags = self.link_bytes = self.bytes = 0
        self.has_word = False

    def write(self, text: str, flags: int) -> None:
        if not text:
            return
        length = utf8_length(text)
        self.flags |= flags
        self.bytes += length
        if flags & LINK:
            self.link_bytes += length
        if not self.has_word and not text.isspace():
            self.has_word = True

    def end(self) -> None:
        """A block boundary: the block has features if it has text (the empty ones are left out)."""
        if not self.bytes:
            return  # nothing written since the last boundary
        if self.has_word:
            self.features.append((self.flags, self.link_bytes, self.bytes))
        self.flags = self.link_bytes = self.bytes = 0
        self.has_word = False


def block_features(body, hidden: set[int]) -> list[tuple[int, int, int]]:
    """The (flags, link bytes, bytes) of each block of `body`, with the elements in `hidden` (mem_ids) and those that
    rule 2 drops left out; the tree is read, not changed."""
    blocks = _Blocks()
    kinds, kinds_length = KINDS, len(KINDS)
    frames = [_Frame(body, False, 0)]

    def keep_child(parent: _Frame) -> None:
        """`parent` gets a child that stays: a pending link space goes before it."""
        if parent.link_space_pending and not parent.has_kept_child:
            blocks.write(" ", parent.flags)
        parent.has_kept_child = True

    def leave(frame: _Frame, parent: _Frame) -> None:
        if not frame.transparent:
            parent.previous_is_shown_inline = False
            blocks.end()
            return
        if frame.expansion:
            for piece in (" (", frame.expansion, ")"):
                blocks.write(piece, parent.flags)
        parent.previous_is_shown_inline = frame.has_kept_child or bool(frame.expansion)

    node = body.first_child
    while True:
        if node is None:
            if len(frames) == 1:
                break
            frame = frames.pop()
            leave(frame, frames[-1])
            node = frame.node.next
            continue
        parent = frames[-1]
        following = node.next
        if node.is_text_node:
            keep_child(parent)
            text = node.text_content
            if text:
                blocks.write(text, parent.flags)
            parent.previous_is_shown_inline = False
        elif not node.is_element_node:
            if not node.is_comment_node:  # a processing instruction stays in the tree, and separates blocks
                parent.previous_is_shown_inline = False
                keep_child(parent)
                blocks.end()
        else:
            tag_id = node.tag_id
            kind = kinds[tag_id] if tag_id < kinds_length else KIND_BLOCK
            if kind != KIND_DROP and kind < KIND_TITLE and node.mem_id not in hidden:
                keep_child(parent)
                transparent = kind == KIND_INLINE or kind == KIND_ANCHOR or kind == KIND_ABBREVIATION
                expansion = ""
                if kind == KIND_ABBREVIATION:
                    expansion = collapse_whitespace(node.attributes.get("title") or "")
                frame = _Frame(node, transparent, element_flags(node, tag_id, kind, parent.flags), expansion,
                               kind == KIND_ANCHOR and parent.previous_is_shown_inline)
                if not transparent:
                    blocks.end()
                child = node.first_child
                if child is not None:
                    frames.append(frame)
                    node = child
                    continue
                leave(frame, parent)
        node = following
    blocks.end()  # the body's end
    return blocks.features
