"""CleanHtml's cleaner: a page reduced to the text a reader sees, in `<div>` blocks (`HtmlCleaner`).

The rule is in `transforms/stages/clean_html/rules.py`, as data; this module puts
the parts of `transforms/stages/clean_html/` together. It does not import Beam: the
child process that cleans the pages `isolation_reason` sends away imports
it, and starts in a tenth of the time and memory that Beam would take
(`transforms/stages/clean_html/clean_html_transform.py` is the stage).

How it runs: lexbor parses the page; one walk in C over its tree
(`clean_html/c_walk.py`) collects the metadata and writes the blocks.
With `main_content`, the walk also gives each block's features and
`clean_html/main_content.py` keeps the blocks of the page's main content
(the others are the page's `boilerplate`); the pure-Python path collects the
same features (`clean_html/python_features.py`).
Without the C module (not built, refused at bind, or `WEBCORPUS_PURE_PYTHON=1`:
transforms/native/), `clean_html/python_walk.py` carries out the same rules
with lexbor's tree operations; `tests/test_clean_walk.py` checks that both
give the same pages.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from transforms.corpus.blocks import BOUNDARY
from transforms.stages.clean_html import c_walk
from transforms.stages.clean_html.css_selectors import css, validate_selectors
from transforms.stages.clean_html.main_content import RULES, MainContentRules, block_features, keep_blocks
from transforms.stages.clean_html.metadata import page_metadata
from transforms.stages.clean_html.page import CleanedPage, with_cleaned_page
from transforms.stages.clean_html.python_walk import tree_walk
from transforms.stages.clean_html.text import decode_leftover_entities, split_blocks
from transforms.document import Document


class HtmlCleaner:
    """The CleanHtml rules, with the user's extra selectors of elements to drop; with `main_content`, only the
    blocks of the page's main content are kept (`transforms/stages/clean_html/main_content.py`), by `rules` (a
    build's are the defaults; `benchmarks.main_content_folds` tunes others)."""

    def __init__(self, drop_selectors: tuple[str, ...] | list[str] = (), main_content: bool = False,
                 rules: MainContentRules = RULES):
        self.drop_selectors = tuple(drop_selectors)
        validate_selectors(self.drop_selectors)
        self._user_selector = ", ".join(self.drop_selectors)
        self.main_content = main_content
        self._rules = rules

    def _parse(self, page: bytes | str):
        """The page's tree (which holds the document while a walk reads it), root, body and the mem_ids of the
        elements the user's selectors hide."""
        tree = LexborHTMLParser(page)
        root, body = tree.root, tree.body
        user_hidden = None
        if root is not None and self._user_selector and body is not None:
            user_hidden = {node.mem_id for node in css(body, self._user_selector)}
        return tree, root, body, user_hidden

    def clean(self, page: bytes | str, url: str = "") -> CleanedPage:
        if self.main_content:
            blocks, features, metadata = self.featured_blocks(page, url)
            keep = keep_blocks(blocks, features, self._rules)
            return CleanedPage([block for block, kept in zip(blocks, keep) if kept], *metadata,
                               boilerplate=[block for block, kept in zip(blocks, keep) if not kept])
        tree, root, body, user_hidden = self._parse(page)
        if root is None:
            return CleanedPage([], *page_metadata(url, None, [], []))
        if c_walk.WALK is None:
            text, hrefs, events, _ = tree_walk(root, body, user_hidden, False)
            blocks = split_blocks(decode_leftover_entities(text) if text and "&" in text else text or "")
            return CleanedPage(blocks, *page_metadata(url, root, hrefs, events))
        text, may_hold_entities, hrefs, events, _ = c_walk.WALK.walk(
            root.mem_id, body.mem_id if body is not None else 0, user_hidden, False)
        if not text:
            blocks = []  # no body, a hidden one, or no text
        else:
            decoded = decode_leftover_entities(text) if may_hold_entities else text
            # Decoding may make whitespace or empty blocks (`&amp;nbsp;`).
            blocks = text.split(BOUNDARY) if decoded is text else split_blocks(decoded)
        return CleanedPage(blocks, *page_metadata(url, root, hrefs, events))

    def featured_blocks(self, page: bytes | str, url: str = "") -> tuple[list[str], list, tuple]:
        """All the page's blocks, each block's main-content features (what `keep_blocks` decides on) and the
        page's metadata: what `clean` decides on with `main_content`."""
        tree, root, body, user_hidden = self._parse(page)
        if root is None:
            return [], [], page_metadata(url, None, [], [])
        if c_walk.WALK is None:
            text, hrefs, events, features = tree_walk(root, body, user_hidden, True)
            # One feature a block of the text as the C walk writes it: whitespace collapsed, empty blocks out.
            blocks, may_hold_entities = split_blocks(text or ""), bool(text) and "&" in text
        else:
            text, may_hold_entities, hrefs, events, raw = c_walk.WALK.walk(
                root.mem_id, body.mem_id if body is not None else 0, user_hidden, True)
            blocks, features = text.split(BOUNDARY) if text else [], block_features(raw or b"")
        if may_hold_entities:
            # Decoding may empty a block (`&amp;nbsp;`): it goes with its features.
            decoded = [" ".join(decode_leftover_entities(block).split()) for block in blocks]
            pairs = [(block, feature) for block, feature in zip(decoded, features) if block]
            blocks, features = [block for block, _ in pairs], [feature for _, feature in pairs]
        return blocks, features, page_metadata(url, root, hrefs, events)

    def __call__(self, doc: Document) -> Document:
        return with_cleaned_page(doc, self.clean(doc.utf8_payload, doc.capture.url))
