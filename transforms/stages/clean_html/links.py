"""Rule 1's links: a page's hrefs resolved to absolute http(s) URLs (`resolve_links`)."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from transforms import native

LINK_SCHEMES = frozenset({"http", "https"})
# An href with any of these takes urljoin: urlsplit removes tabs and
# newlines, `;` starts parameters, brackets an IPv6 host.
_JOIN_UNSAFE_CHARACTERS = "\t\r\n;[]"
_JOIN_UNSAFE = re.compile(f"[{re.escape(_JOIN_UNSAFE_CHARACTERS)}]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_REJECT = ""  # _fast_join's answer for a link whose scheme is not http(s)


def resolve_links(base: str, hrefs: list[str]) -> list[str]:
    """The absolute http(s) URLs of `hrefs`, in order, without repeats.

    Each is `urljoin(base, href)` with the scheme checked by `urlsplit`; the
    common hrefs are joined by `_fast_join`, which gives the same answers.
    """
    parts = _base_parts(base) if _FAST_JOIN else None
    if parts is not None and _links is not None:
        # The commonest hrefs (a path from the root, an absolute http(s) URL with a host) are joined inline, in C;
        # one of those that needs urljoin for its characters, an empty query or fragment, or a dot segment is
        # checked on its own (`general`), and every other href is `_other_link`'s. The lines below give the same
        # answers.
        return _links.resolve(parts[1], hrefs, lambda href: _other_link(base, parts, href, href[0] in "/h"),
                              lambda href: _other_link(base, parts, href, False))
    unique = dict.fromkeys(map(str.strip, hrefs))
    unique.pop("", None)
    # Checked at once for the hrefs that `_fast_join` may take as safe.
    # Searching for one character is many times faster than for two: the
    # two-character checks only run where their first character occurs.
    joined = "\x00" + "\x00".join([href for href in unique if href[0] in "/h"]) + "\x00"
    plain = (_FAST_JOIN and joined.isascii()
             and ("?" not in joined or ("?#" not in joined and "?\x00" not in joined))
             and ("#" not in joined or "#\x00" not in joined)
             and not any(character in joined for character in _JOIN_UNSAFE_CHARACTERS))
    resolved = (_other_link(base, parts, href, plain and href[0] in "/h") for href in unique)
    return list(dict.fromkeys(filter(None, resolved)))


def _other_link(base: str, parts, href: str, safe: bool) -> str | None:
    """`href` (stripped, not empty) resolved against `base`, or None; `safe`: see `_fast_join`."""
    if href[0] == "#":
        return None
    absolute = _fast_join(parts, href, safe) if _FAST_JOIN else None
    if absolute is None:
        try:
            absolute = urljoin(base, href)
            if urlsplit(absolute).scheme not in LINK_SCHEMES:
                return None
        except ValueError:
            return None
    return absolute or None  # _REJECT is ""


def _base_parts(base: str) -> tuple[str, str, str, str] | None:
    """(scheme, "scheme://netloc", path, directory) of an http(s) base that `_fast_join` can join to, else None."""
    if not base.isascii() or _JOIN_UNSAFE.search(base):
        return None
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    path = parts.path
    if (parts.scheme not in LINK_SCHEMES or not parts.netloc or not base.startswith(parts.scheme + "://")
            or (path and not path.startswith("/")) or "//" in path or "/." in path):
        return None
    return parts.scheme, f"{parts.scheme}://{parts.netloc}", path, path[:path.rfind("/") + 1] or "/"


def _fast_join(parts: tuple[str, str, str, str] | None, href: str, safe: bool = False) -> str | None:
    """urljoin's answer for a common href: an http(s) URL, or _REJECT for another scheme; None: ask urljoin.

    `href` is stripped, not empty and not a fragment alone; `safe` says that
    it is ASCII without `_JOIN_UNSAFE`'s characters nor an empty query or
    fragment.
    """
    # urljoin reassembles the URL from its parts, which drops an empty query
    # or fragment (`?#`, a trailing `?` or `#`) and resolves dot segments.
    plain = safe or (href.isascii() and not _JOIN_UNSAFE.search(href) and href[-1] not in "?#" and "?#" not in href)
    first = href[0]
    if first == "/":
        if not plain or parts is None:
            return None
        if href.startswith("//"):
            return parts[0] + ":" + href if len(href) > 2 and href[2] not in "/?#" else None
        return parts[1] + href if "/." not in href else None
    if href.startswith(("https://", "http://")):
        # An absolute URL with a host comes back as it is.
        rest = href[8:] if href[4] == "s" else href[7:]
        return href if plain and rest and rest[0] not in "/?#" else None
    scheme = _SCHEME.match(href)
    if scheme is not None:
        # mailto:, javascript:, tel:, ... whatever the base.
        return _REJECT if scheme.group()[:-1].lower() not in LINK_SCHEMES else None
    if not plain or parts is None:
        return None
    if first == "?":
        return parts[1] + parts[2] + href
    if first == "." or "/." in href or "//" in href:
        return None
    return parts[1] + parts[3] + href


def _fast_join_agrees() -> bool:
    """Whether `_fast_join` gives urljoin's answers on this Python (a cheap check at import)."""
    bases = ("https://example.org/a/b.html?x=1#top", "http://Example.org:8080", "https://u@example.org/dir/",
             "http://example.org/")
    hrefs = ("/", "/x/y.html", "/x?q=1&b=2", "/x#frag", "/x?q#f", "//cdn.example.org/s.js", "//h",
             "http://other.example/x", "https://e.org", "https://e.org?x", "http://E.ORG/A%20B#c?d",
             "https://e.org/a b", "/a/b/c/", "/~user/x.php?a=b/c", "c.html", "c/d/e.html?x=1#y", "?page=2",
             "?a=b#c", "x:y", "mailto:a@example.org", "JavaScript:void(0)", "a%20b")
    for base in bases:
        parts = _base_parts(base)
        for href in hrefs:
            fast = _fast_join(parts, href)
            if fast is None:
                continue
            try:
                joined = urljoin(base, href)
                expected = joined if urlsplit(joined).scheme in LINK_SCHEMES else _REJECT
            except ValueError:
                expected = _REJECT
            if fast != expected:
                return False
    return True


_FAST_JOIN = True
_FAST_JOIN = _fast_join_agrees()
_links = native.load("_links")
