"""Names of files as they are written: a URL's credentials never are, and where a URL's file is served from.

A URL may carry credentials (`http://user:password@mirror/...`): they are
used to read it, and `redacted` leaves them out of every name written
(records' `source_file`, side files, the report, the manifest, error
lines). Give them in `~/.netrc` instead (requests reads it: see
docs/robustness.md), and the names written are the URLs as they are read.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# A URL's scheme, then its userinfo: whatever comes before an `@` in the authority (which ends at `/`, `?` or `#`).
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def redacted(path: str) -> str:
    """`path` without the credentials a URL holds: `http://alice:pw@mirror/a` is `http://mirror/a`."""
    return _USERINFO.sub(r"\1", path, count=1)


def readable_by_name(paths) -> dict[str, str]:
    """The paths among `paths` that hold credentials, by the name written for each: what reads a file again by
    its written name (the report page's inspector) reads it with them."""
    return {redacted(path): path for path in paths if redacted(path) != path}


def origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL, the default port for http and https filled in; None for a local path."""
    if "://" not in url:
        return None
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)
