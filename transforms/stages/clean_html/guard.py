"""The pages cleaned in a child process: which (`isolation_reason`) and how (`GuardedCleaner`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from transforms import native
from transforms.stages.clean_html.page import text_page, with_cleaned_page
from transforms.document import Document
from transforms.isolation import DEFAULT_PAGE_TIMEOUT, ChildProcess

if TYPE_CHECKING:
    from transforms.stages.clean_html.clean_html import HtmlCleaner

_scan = native.load("_scan")

# See `isolation_reason`.
ISOLATE_ABOVE_TAGS = 25_000
ISOLATE_ABOVE_BYTES = 4 * 1024 * 1024
CHECK_DENSITY_ABOVE_TAGS = 1_500
DENSE_BYTES_PER_TAG = 24
CHECK_UNCLOSED_ABOVE_TAGS = 4_000
ISOLATE_ABOVE_REOPENINGS = 8_000_000
SPARSE_CHECK_ABOVE_BYTES = 64 * 1024
SPARSE_BYTES_PER_TAG = 1024
# What may start another attribute of an element.
ATTRIBUTE_SEPARATORS = b" \t\n\r\f/\"'"
ISOLATE_ABOVE_SEPARATORS = 20_000
# The memory a page may take in the child process, beyond the child's own.
DEFAULT_PAGE_MEMORY_MIB = 2048


def _tag_counts(payload: bytes) -> tuple[int, int]:
    """How many `<` and `</` the page has: in one pass, in C, where `_scan` is built."""
    if _scan is not None:
        return _scan.tag_counts(payload)
    return payload.count(b"<"), payload.count(b"</")


def isolation_reason(payload: bytes) -> str | None:
    """Why lexbor could take long or much memory on this page, from counts that cost far less than parsing
    it (a pass or two over its bytes); None for the pages it parses in a time and memory proportional to
    their size. These are estimates: what bounds a page sent away is the child's limits.

    - Nesting: depth costs lexbor quadratic time (100,000 nested `<div>`s take about 90 s) and is bounded
      by the count of `<`; the most on the dev corpus is 19,252, and below `ISOLATE_ABOVE_TAGS` the worst
      nesting parses in about 5 s.
    - Unclosed formatting elements (`<b id=1>`, `<font color=...>`: the HTML standard's list of active
      formatting elements, which holds at most 3 identical ones but any number with distinct attributes)
      are reopened inside every block that follows: `<p><b id=N>x` repeated 2,000 times makes 2 million
      elements and takes 730 MiB, 12,000 times over 20 GiB. Markup denser than `DENSE_BYTES_PER_TAG`
      with over `CHECK_DENSITY_ABOVE_TAGS` tags (the dev corpus's densest such page has 14.6 bytes a
      tag, the repeated `<p><b id=N>x` 6.5) goes to the child; so does a page with over
      `CHECK_UNCLOSED_ABOVE_TAGS` tags whose elements left open, estimated by the tags less twice the
      end tags (`</`), times its tags exceed `ISOLATE_ABOVE_REOPENINGS` (the most on the dev corpus is
      11.7 million, two pages over 8 million). Counting `</` costs as much as counting `<`, so the pages
      with fewer tags are not asked. What this misses: formatting elements padded with text to 24 bytes
      a tag in a page of 1,500 to 4,000 tags (at most about 2,000 of them: 730 MiB), and, above that,
      padded ones whose end tags are made up by stray ones (`</z>`).
    - An element's attributes: lexbor compares each new attribute's name with the element's others,
      quadratic in their count (20,000 distinct ones take 2 s, 200,000 take 98 s). A page with few tags
      for its size (over `SPARSE_BYTES_PER_TAG`) and more than `ISOLATE_ABOVE_SEPARATORS` characters
      that can start an attribute goes to the child. What this misses: such an element in a page with
      more tags than a 1,024th of its bytes (tags added to hide it).
    - Size: memory is about 15 bytes a byte of page; pages over `ISOLATE_ABOVE_BYTES` (the dev corpus's
      biggest is 1 MiB) go to the child, whose memory limit holds them.
    """
    size = len(payload)
    if size > ISOLATE_ABOVE_BYTES:
        return f"over {ISOLATE_ABOVE_BYTES:,} bytes"
    tags, end_tags = _tag_counts(payload)
    if tags > ISOLATE_ABOVE_TAGS:
        return f"over {ISOLATE_ABOVE_TAGS:,} tags"
    if tags > CHECK_DENSITY_ABOVE_TAGS and size < DENSE_BYTES_PER_TAG * tags:
        return f"under {DENSE_BYTES_PER_TAG} bytes a tag"
    if tags > CHECK_UNCLOSED_ABOVE_TAGS and (tags - 2 * end_tags) * tags > ISOLATE_ABOVE_REOPENINGS:
        return "many unclosed elements"
    if size > SPARSE_CHECK_ABOVE_BYTES and size > SPARSE_BYTES_PER_TAG * tags:
        if size - len(payload.translate(None, ATTRIBUTE_SEPARATORS)) > ISOLATE_ABOVE_SEPARATORS:
            return "long tags"
    return None


class GuardedCleaner:
    """Cleans the pages that `isolation_reason` finds could be slow or large in a child process, at most
    `page_timeout` seconds and `page_memory_mib` MiB a page.

    lexbor, as native code, can neither be interrupted by a Python thread nor kept from taking the worker
    down if it crashes or exhausts the memory: a page over either limit goes to the dead letter alone. The
    child (a Python with selectolax and CleanHtml's modules: about 21 MiB) is started at the first page.
    Extracted text (a WET file's) is not HTML: its lines are its blocks (`text_page`), nothing is parsed.
    """

    def __init__(self, cleaner: HtmlCleaner, page_timeout: float = DEFAULT_PAGE_TIMEOUT,
                 page_memory_mib: int = DEFAULT_PAGE_MEMORY_MIB):
        self._cleaner = cleaner
        self._page_timeout = page_timeout
        self._page_memory_mib = page_memory_mib
        self._child = None

    def __getstate__(self):
        return {**self.__dict__, "_child": None}

    def __call__(self, doc: Document) -> Document:
        if doc.is_extracted_text:
            return with_cleaned_page(doc, text_page(doc.utf8_payload))
        if self._child is None:
            # Started at the first page, beside the pages before the first that needs it, which would otherwise
            # wait for it to start.
            self._child = ChildProcess(self._cleaner.clean, self._page_timeout, self._page_memory_mib << 20)
            self._child.start()
        if isolation_reason(doc.utf8_payload) is None:
            return self._cleaner(doc)
        return with_cleaned_page(doc, self._child(doc.utf8_payload, doc.capture.url))

