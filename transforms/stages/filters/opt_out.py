"""Text-and-data-mining opt-outs (`--respect-opt-out`): pages that reserve their use are skipped as `opted-out`.

Honoured, exactly:
- the HTTP header `tdm-reservation` with the value `1` (W3C TDMRep, section 3.2), and the `<meta
  name="tdm-reservation" content="1">` of the page (TDMRep's HTML form);
- the directive `noai` in an HTTP `X-Robots-Tag` header (any of its comma-separated directives, whether or not a
  user agent prefixes them: `X-Robots-Tag: otherbot: noai` counts), and in the `content` of a
  `<meta name="robots">` (not of a meta naming one robot, `<meta name="googlebot">`).
Names and values are compared without regard to case or surrounding spaces. Not honoured: `noimageai` (this
corpus holds no images), TDMRep's `/.well-known/tdmrep.json` and `tdm-policy` (they need a fetch), robots.txt
(the crawler's business, before the capture).
The headers are read by ReadWarc before the payload (`headers_opt_out`, a screen); the meta tags from the decoded
page, before it is cleaned (`meta_opt_out`).
"""

from __future__ import annotations

import re
from collections import Counter

from transforms.document import Document, Skip
from transforms.vocabulary import OPTED_OUT

_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(rb"""([a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE)


def _directives(value: str) -> set[str]:
    """The directives of a robots value, a user agent's prefix (`bot: noai`) dropped."""
    return {part.rsplit(":", 1)[-1].strip().lower() for part in value.split(",")}


def headers_opt_out(url: str, http_header) -> tuple[str, str] | None:
    """A `read_warc` screen: the skip of a response whose HTTP headers opt out, or None."""
    reservation = http_header("tdm-reservation")
    if reservation is not None and reservation.strip() == "1":
        return OPTED_OUT, "HTTP header tdm-reservation: 1"
    robots = http_header("X-Robots-Tag")
    if robots and "noai" in _directives(robots):
        return OPTED_OUT, f"HTTP header X-Robots-Tag: {robots.strip()[:100]}"
    return None


def meta_opt_out(page: bytes) -> str | None:
    """Why the page's `<meta>` tags opt it out, or None."""
    lowered = page.lower()
    if b"tdm-reservation" not in lowered and b"noai" not in lowered:
        return None
    for tag in _META.finditer(page):
        attributes = {match.group(1).lower(): (match.group(2) or match.group(3) or match.group(4) or b"")
                      for match in _ATTRIBUTE.finditer(tag.group())}
        name = attributes.get(b"name", b"").strip().lower()
        content = attributes.get(b"content", b"").decode("utf-8", "replace")
        if name == b"tdm-reservation" and content.strip() == "1":
            return '<meta name="tdm-reservation" content="1">'
        if name == b"robots" and "noai" in _directives(content):
            return f'<meta name="robots" content="{content.strip()[:100]}">'
    return None


def opt_out_document(doc: Document) -> tuple[Document | Skip, Counter]:
    """`doc` (as Charset left it), or its `opted-out` skip when its meta tags opt out."""
    why = meta_opt_out(doc.utf8_payload)
    if why is None:
        return doc, Counter()
    return Skip.for_document(OPTED_OUT, doc, why), Counter()
