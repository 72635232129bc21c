"""CSS selectors on lexbor's tree: one CSS parser a thread, and the user's selectors checked."""

from __future__ import annotations

import threading

from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser

# A document's css() creates lexbor's CSS parser anew, which costs about as
# much as the search; one per thread serves every document.
_FINDERS = threading.local()


def css(node, selector: str) -> list:
    """`node.css(selector)`, with this thread's CSS parser."""
    finder = getattr(_FINDERS, "finder", None)
    if finder is None:
        finder = _FINDERS.finder = LexborCSSSelector()
    return finder.find(selector, node)


def validate_selectors(selectors: tuple[str, ...]) -> None:
    probe = LexborHTMLParser("<div></div>")
    for selector in selectors:
        try:
            probe.css(selector)
        except Exception as error:
            raise ValueError(f"invalid CSS selector {selector!r}: {error}") from error
