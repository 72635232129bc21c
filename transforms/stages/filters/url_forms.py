"""The one spelling of a host and of a URL that `--url-blocklist` compares, on both sides (a list's entries,
a capture's URL), as a browser would read them (WHATWG URL, where practical): the host in lower case, IDNA
to ASCII (UTS #46, as browsers: `bücher.example` and `xn--bcher-kva.example` are one host), without a
trailing dot; the scheme's default port dropped (`:443` for https, `:80` for http); runs of `/` in the path
made one; in the path, the percent-encoded unreserved characters decoded (`%61` is `a`, `%7E` is `~`) and
the other escapes in upper case (`%2f` is `%2F`, which stays encoded: it is no path separator); the
fragment, which no server sees, and user info dropped.
"""

from __future__ import annotations

import re
import string
from urllib.parse import urlsplit

import idna

_DEFAULT_PORTS = {"http": "80", "https": "443"}
# A host name as compared: DNS labels (letters, digits, `-`, and `_`, which real hosts use) in lower case.
HOST_NAME = r"(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
# An ASCII host: a host name or an IP literal.
_ASCII_HOST = re.compile(HOST_NAME + r"|\[[0-9a-f:.]+\]")
_PORT = re.compile(r"[0-9]{1,5}")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_SLASHES = re.compile(r"//+")


def canonical_host(host: str) -> str | None:
    """`host` as compared (lower case, IDNA to ASCII, no trailing dot), or None if it cannot be a host."""
    host = host.rstrip(".")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            return None
    host = host.lower()
    return host if _ASCII_HOST.fullmatch(host) else None


def _unescape_unreserved(match: re.Match) -> str:
    character = chr(int(match.group(1), 16))
    return character if character in _UNRESERVED else match.group().upper()


def canonical_path(path: str) -> str:
    """A URL's path (and query) as compared: `/` runs made one, unreserved escapes decoded, others in upper
    case; the query is left as it is, but for its escapes' case."""
    path, question, query = path.partition("?")
    path = _SLASHES.sub("/", _ESCAPE.sub(_unescape_unreserved, path))
    return f"{path}{question}{_ESCAPE.sub(lambda match: match.group().upper(), query)}"


def canonical_url(url: str) -> tuple[str, str] | None:
    """`url`'s host and `host[:port]/path?query` as compared, from a URL with or without its scheme (UT1's
    `urls` files write none); None if its host cannot be a host."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    try:
        parts = urlsplit(url if scheme else f"//{url}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    host = canonical_host(f"[{host}]" if host and ":" in host else host or "")
    if host is None:
        return None
    authority = host if port is None or _DEFAULT_PORTS.get(scheme) == str(port) else f"{host}:{port}"
    # An empty path is `/`, as a browser sends it.
    return host, authority + canonical_path((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
