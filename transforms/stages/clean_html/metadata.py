"""Rule 1: a page's title, links, language and `<meta>` values, from what the walk collected."""

from __future__ import annotations

from urllib.parse import urljoin

from transforms.stages.clean_html.links import resolve_links
from transforms.stages.clean_html.rules import KIND_BASE, KIND_META, KIND_TITLE, META_NAMES
from transforms.stages.clean_html.text import collapse_whitespace, decode_leftover_entities


def page_metadata(url: str, root, hrefs: list[str], events: list) -> tuple[str, list[str], str, dict[str, str]]:
    """(title, links, lang, meta) from what the walk collected: the hrefs of `a` and `area`, the first title's
    text, the href of the first base and of the first canonical link, and the attributes of every meta with
    content (`events`, each a (kind, value)); `root` is the `html` element, or None."""
    title = ""
    base_href = canonical_href = None
    metas = []
    for kind, value in events:
        if kind == KIND_META:
            metas.append(value)
        elif kind == KIND_TITLE:
            title = decode_leftover_entities(collapse_whitespace(value))
        elif kind == KIND_BASE:
            base_href = value
        else:
            canonical_href = value
    base = urljoin(url, base_href.strip()) if base_href is not None else url
    links = resolve_links(base, hrefs)
    lang = ""
    if root is not None:
        attributes = root.attributes
        lang = (attributes.get("lang") or attributes.get("xml:lang") or "").strip()
    meta = {}
    for attributes in metas:
        name = (attributes.get("name") or attributes.get("property") or attributes.get("http-equiv") or "").strip().lower()
        # As in the text, what the page escaped twice (`Trump&amp;#039;s`) is decoded once more.
        content = decode_leftover_entities(collapse_whitespace(attributes.get("content") or ""))
        if not content:
            continue
        if name == "content-language" and not lang:
            lang = content.split(",")[0].strip()
        elif name in META_NAMES and name not in meta:
            meta[name] = content
    if canonical_href is not None:
        meta["canonical"] = urljoin(base, canonical_href.strip())
    return title, links, lang.lower(), meta


def is_canonical(rel: str | None) -> bool:
    """Whether a `<link>`'s `rel` makes it the canonical link."""
    return rel is not None and rel.isascii() and rel.lower() == "canonical"
