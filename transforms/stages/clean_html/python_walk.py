"""The pure-Python path of CleanHtml's walk: the rules carried out with lexbor's own tree operations.

It runs where the C walk does not (not built, refused at bind, or
`WEBCORPUS_PURE_PYTHON=1`: transforms/native/); `tests/test_clean_walk.py`
checks that both give the same pages.
"""

from __future__ import annotations

from transforms.corpus.blocks import BOUNDARY
from transforms.stages.clean_html.css_selectors import css
from transforms.stages.clean_html.metadata import is_canonical
from transforms.stages.clean_html.python_features import block_features
from transforms.stages.clean_html.rules import (HIDING_CANDIDATES, KIND_ABBREVIATION, KIND_ANCHOR, KIND_AREA, KIND_BASE,
                                                KIND_BLOCK, KIND_DROP, KIND_INLINE, KIND_META, KIND_TITLE, KINDS,
                                                is_hidden_element)
from transforms.stages.clean_html.text import collapse_whitespace

# See `unwrap_inline`: below this many nested inline elements, the pure path unwraps them one by one.
NESTED_INLINE_LIMIT = 16


def tree_walk(root, body, user_hidden: set[int] | None,
              features: bool = False) -> tuple[str | None, list[str], list, list | None]:
    """The pure-Python path of the C walk, with lexbor's tree operations; the same (text, hrefs, events), and
    with `features` each block's (flags, link bytes, bytes) for main content (`python_features`; else None).

    It removes the dropped and hidden subtrees, adds the abbreviations'
    expansions and the spaces between adjacent links, unwraps the inline
    elements, merges the adjacent text nodes and asks lexbor for the text,
    BOUNDARY between text nodes (None for a hidden body or none). The tree
    is changed.
    """
    hidden = set(user_hidden) if user_hidden else set()
    if body is not None:
        for node in css(body, HIDING_CANDIDATES):
            if is_hidden_element(node):
                hidden.add(node.mem_id)
    body_shown = body is not None and body.mem_id not in hidden
    hrefs, events = [], []
    kinds = KINDS
    kinds_length = len(kinds)
    firsts = set()  # of title, base and the canonical link
    for top in root.iter():
        if body is not None and top.mem_id == body.mem_id and not body_shown:
            continue  # nothing of a hidden body is read, not even its metadata
        for node in top.traverse():
            tag_id = node.tag_id
            kind = kinds[tag_id] if tag_id < kinds_length else KIND_BLOCK
            if kind < KIND_ANCHOR or kind == KIND_ABBREVIATION:
                continue
            attributes = node.attributes
            if kind == KIND_ANCHOR or kind == KIND_AREA:
                href = attributes.get("href")
                if href:
                    hrefs.append(href)
            elif kind == KIND_META:
                if "content" in attributes:
                    events.append((kind, attributes))
            elif kind in firsts:
                continue
            elif kind == KIND_TITLE:
                firsts.add(kind)
                events.append((kind, node.text()))
            elif "href" in attributes and (kind == KIND_BASE or is_canonical(attributes.get("rel"))):
                firsts.add(kind)
                events.append((kind, attributes["href"] or ""))
    if not body_shown:
        return None, hrefs, events, [] if features else None
    # Read before the tree changes.
    found = block_features(body, hidden) if features else None
    dropped, inline, anchors, abbreviations = [], [], [], []
    # The body's elements in document order, not below a dropped one.
    pending = [body.iter(include_text=False)]
    # How many inline elements the children of each of `pending` are below; the most any inline element is.
    inline_above, most_inline_above = [0], 0
    while pending:
        node = next(pending[-1], None)
        if node is None:
            pending.pop()
            inline_above.pop()
            continue
        tag_id = node.tag_id
        kind = kinds[tag_id] if tag_id < kinds_length else KIND_BLOCK
        if node.is_comment_node or kind == KIND_DROP or KIND_TITLE <= kind or node.mem_id in hidden:
            dropped.append(node)
            continue
        above = inline_above[-1]
        if kind == KIND_INLINE or kind == KIND_ANCHOR or kind == KIND_ABBREVIATION:
            inline.append(node)
            most_inline_above = max(most_inline_above, above)
            above += 1
            if kind == KIND_ANCHOR:
                anchors.append(node)
            elif kind == KIND_ABBREVIATION:
                expansion = collapse_whitespace(node.attributes.get("title") or "")
                if expansion:
                    abbreviations.append((node, expansion))
        pending.append(node.iter(include_text=False))
        inline_above.append(above)
    for node in dropped:
        node.decompose()
    for abbreviation, expansion in abbreviations:
        abbreviation.insert_child(f" ({expansion})")
    for link in anchors:
        # A link right after a shown inline element (both with content).
        previous = link.prev
        if (previous is not None and previous.is_element_node and previous.first_child is not None
                and link.first_child is not None and previous.tag_id < kinds_length
                and kinds[previous.tag_id] in (KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION)):
            link.insert_before(" ")
    for node in inline:
        # Any other inline element right after a shown inline element whose text ends with a
        # lowercase letter, when its own text starts with an uppercase one (after the link spaces,
        # which its text may start with).
        previous = node.prev
        if (kinds[node.tag_id] != KIND_ANCHOR and previous is not None and previous.is_element_node
                and previous.tag_id < kinds_length
                and kinds[previous.tag_id] in (KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION)
                and previous.text()[-1:].islower() and node.text()[:1].isupper()):
            node.insert_before(" ")
    unwrap_inline(inline, most_inline_above)
    body.merge_text_nodes()
    return body.text(separator=BOUNDARY, skip_empty=True), hrefs, events, found


def unwrap_inline(inline: list, most_inline_above: int) -> None:
    """Replaces each of the `inline` elements (in document order) by its children, as `unwrap(delete_empty=True)`
    on each in turn does; `most_inline_above`: the most inline elements that one of them is below.

    lexbor walks the subtree of every node it inserts (its insertion steps), so unwrapping the elements one
    by one walks a node once for every inline element above it: 20,000 nested `<span>`s took 30 s. Where
    none is below `NESTED_INLINE_LIMIT` others, that is at most so many walks a node, in C, and they are
    unwrapped one by one (most pages: it is the faster). Otherwise each node below an inline element is taken
    out of its parent, and its own children out of it, before it is inserted where unwrapping would leave it:
    every node is inserted once, with nothing below it, from Python. (Each insertion also checks, as
    selectolax does for a move, that the new parent is not below the node: a walk up the new parent's
    ancestors, as deep as the parser has already gone.)
    """
    if most_inline_above < NESTED_INLINE_LIMIT:
        for node in inline:
            node.unwrap(delete_empty=True)
        return
    unwrapped = {node.mem_id for node in inline}
    for top in inline:
        if top.parent is None:
            continue  # below an inline element unwrapped before, and moved with its content
        # (where a node goes, the children left to place there)
        pending = [(top.insert_before, iter(_take_children(top)))]
        while pending:
            insert, children = pending[-1]
            child = next(children, None)
            if child is None:
                pending.pop()
                continue
            if child.first_child is None:  # a text, most of them: nothing below it to take out
                if child.mem_id not in unwrapped:
                    insert(child, move=True)
                continue
            grandchildren = _take_children(child)
            if child.mem_id in unwrapped:
                pending.append((insert, iter(grandchildren)))
                continue
            insert(child, move=True)
            pending.append((child.insert_child, iter(grandchildren)))
        top.decompose(recursive=False)


def _take_children(node) -> list:
    """The children of `node`, taken out of it (each keeps its own)."""
    children = []
    child = node.first_child
    while child is not None:
        children.append(child)
        child = child.next
    for child in children:
        child.decompose(recursive=False)
    return children
