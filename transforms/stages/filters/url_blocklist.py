"""URL blocklists (`--url-blocklist FILE`): captures of listed domains, hosts and URLs are skipped as
`url-blocked`, from the record's headers, before the payload is read.

A file has one entry a line; blank lines and lines starting with `#` are comments. An entry is
- a domain (`example.com`): the domain and every subdomain (`www.example.com`, `a.b.example.com`);
- a host, in the hosts-file form blocklists use (`0.0.0.0 ads.example.com`, `127.0.0.1 ...`): that host only;
- a URL with its scheme (`https://example.com/path`) or, as UT1's `urls` files write it, without
  (`example.com/path`): every URL that starts with it, whatever the scheme (host compared in lower case).
UT1's blacklists (a `domains` file and a `urls` file per category) are read as they are.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from transforms.vocabulary import URL_BLOCKED

_HOSTS_FILE_ADDRESSES = ("0.0.0.0", "127.0.0.1", "::", "::1")


def _without_scheme(url: str) -> str:
    """`url` as `host/path...`: scheme and user info dropped, host in lower case, the port kept."""
    rest = url.split("://", 1)[1] if "://" in url else url
    host, slash, path = rest.partition("/")
    host = host.rsplit("@", 1)[-1].lower().rstrip(".")
    return f"{host}{slash}{path}"


@dataclass
class UrlBlocklist:
    """The entries of blocklist files; called as a `read_warc` screen."""

    domains: dict[str, str] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    # host -> [(URL prefix without scheme, file)]
    prefixes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def add_line(self, line: str, source: str) -> None:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            return
        parts = entry.split()
        if len(parts) >= 2 and parts[0] in _HOSTS_FILE_ADDRESSES:
            self.hosts.setdefault(parts[1].lower().rstrip("."), source)
        elif "/" in entry:
            prefix = _without_scheme(entry)
            self.prefixes.setdefault(prefix.partition("/")[0], []).append((prefix, source))
        else:
            self.domains.setdefault(entry.lower().lstrip(".").rstrip("."), source)

    @classmethod
    def load(cls, paths) -> "UrlBlocklist":
        """The entries of the files at `paths` (UTF-8; undecodable bytes replaced); raises OSError for a file
        that cannot be read."""
        blocklist = cls()
        for path in paths:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    blocklist.add_line(line, path)
        return blocklist

    def match(self, url: str) -> str | None:
        """What blocks `url` (`domain D`, `host H`, `URL U`, with its file), or None."""
        try:
            host = (urlsplit(url).hostname or "").rstrip(".")
        except ValueError:
            return None
        if host in self.hosts:
            return f"host {host} ({self.hosts[host]})"
        labels = host.split(".")
        for start in range(len(labels)):
            domain = ".".join(labels[start:])
            if domain in self.domains:
                return f"domain {domain} ({self.domains[domain]})"
        bare = _without_scheme(url)
        for prefix, source in self.prefixes.get(bare.partition("/")[0], ()):
            if bare.startswith(prefix):
                return f"URL {prefix} ({source})"
        return None

    def __call__(self, url: str, http_header) -> tuple[str, str] | None:
        matched = self.match(url)
        return (URL_BLOCKED, matched) if matched else None


def file_digest(path: str) -> str:
    """The SHA-256 of a blocklist file: what the manifest records of it."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
