"""URL blocklists (`--url-blocklist FILE`): captures of listed domains, hosts and URLs are skipped as
`url-blocked`, from the record's headers, before the payload is read.

A file has one entry a line; blank lines and lines starting with `#` are comments. An entry is
- a domain (`example.com`): the domain and every subdomain (`www.example.com`, `a.b.example.com`);
- a host, in the hosts-file form blocklists use (`0.0.0.0 ads.example.com`, `127.0.0.1 ...`): that host only;
- a URL with its scheme (`https://example.com/path`) or, as UT1's `urls` files write it, without
  (`example.com/path`): every URL that starts with it, whatever the scheme.
Hosts and URLs are compared in one spelling on both sides (`url_forms`). UT1's blacklists (a `domains` file and
a `urls` file per category) are read as they are. A file is UTF-8, or UTF-8 or UTF-16 with a byte-order mark;
a line that is not, or cannot be a host or URL, is refused with its file and line (`BlocklistError`).

UT1's lists hold millions of entries, so an entry is kept as a 64-bit BLAKE2b hash of its kind and spelling
with its file's number, in an open-addressing table of two arrays (10 bytes a slot, at most 3/4 full): 10
million entries take 168 MB. A URL is blocked when one of its candidates (its host, its domains, its URL's
prefixes) has an entry's hash: another spelling sharing that hash is blocked too (one chance in 1.8 million
million a candidate, with 10 million entries). The files may hold at most `MAX_LINES` lines in all, counted
before any is read.
"""

from __future__ import annotations

import codecs
import hashlib
import ipaddress
from array import array

from transforms.filters.url_forms import canonical_host, canonical_url
from transforms.vocabulary import URL_BLOCKED

# 20 million lines make a table of 33.5 million slots: 335 MB.
MAX_LINES = 20_000_000
_MAX_FILES = 1 << 16
_DOMAIN, _HOST, _URL, _URL_HOST = b"d", b"h", b"u", b"s"
# A byte-order mark, the encoding it names, and a line end in it.
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig", b"\n"), (codecs.BOM_UTF16_LE, "utf-16", b"\n\x00"),
         (codecs.BOM_UTF16_BE, "utf-16", b"\x00\n"))


class BlocklistError(ValueError):
    """A blocklist file that cannot be read as one: its file and line, in one line."""


def _key(kind: bytes, spelling: str) -> int:
    # 0 marks an empty slot.
    return int.from_bytes(hashlib.blake2b(kind + spelling.encode(), digest_size=8).digest(), "little") or 1


def _hosts_file_address(token: str) -> bool:
    try:
        ipaddress.ip_address(token.partition("%")[0])
    except ValueError:
        return False
    return True


def _encoding(path: str) -> tuple[str, int]:
    """The encoding of the file at `path`, by its byte-order mark (UTF-8 without one), and its lines at most."""
    with open(path, "rb") as handle:
        start = handle.read(4)
        encoding, line_end = next(((name, end) for bom, name, end in _BOMS if start.startswith(bom)),
                                  ("utf-8", b"\n"))
        handle.seek(0)
        # Blocks overlap by a byte, so that a two-byte line end across blocks is counted: at most once more.
        lines, last = 1, b""
        for block in iter(lambda: handle.read(1 << 20), b""):
            lines += (last + block).count(line_end)
            last = block[-1:]
    return encoding, lines


class UrlBlocklist:
    """The entries of blocklist files (`load`); called as a `read_warc` screen."""

    def __init__(self, sources: tuple[str, ...], lines: int):
        self._sources = tuple(sources)
        self._slots = 1 << max(4, (lines * 3 // 2).bit_length())
        self._keys = array("Q", bytes(8 * self._slots))
        self._files = array("H", bytes(2 * self._slots))
        self._used = 0
        # The lengths of the URL entries (as compared): the prefixes of a URL that are looked for.
        self._prefix_lengths: set[int] = set()

    @classmethod
    def load(cls, paths) -> "UrlBlocklist":
        """The entries of the files at `paths`; raises BlocklistError for a file over the limits or with a line
        that cannot be read (`add_line`), OSError for a file that cannot be read."""
        paths = tuple(paths)
        if len(paths) > _MAX_FILES:
            raise BlocklistError(f"--url-blocklist: {len(paths)} files, more than {_MAX_FILES}")
        encodings = {path: _encoding(path) for path in paths}
        lines = sum(count for _, count in encodings.values())
        if lines > MAX_LINES:
            raise BlocklistError(f"--url-blocklist: {lines:,} lines in all, more than the {MAX_LINES:,} a build "
                                 "may hold (transforms.filters.url_blocklist.MAX_LINES)")
        blocklist = cls(paths, lines)
        for number, path in enumerate(paths):
            with open(path, encoding=encodings[path][0], errors="replace", newline=None) as handle:
                for line_number, line in enumerate(handle, 1):
                    try:
                        blocklist.add_line(line, number)
                    except BlocklistError as error:
                        raise BlocklistError(f"--url-blocklist {path} line {line_number}: {error}") from None
        return blocklist

    def add_line(self, line: str, file_number: int) -> None:
        """Adds the entry of `line`, from file number `file_number` (of the sources); raises BlocklistError for a
        line that cannot be an entry."""
        # Comments too: a file read in the wrong encoding shows it on its first line.
        if "\ufffd" in line:
            raise BlocklistError("not UTF-8, nor UTF-8 or UTF-16 with its byte-order mark")
        if "\x00" in line:
            raise BlocklistError("a NUL character (a UTF-16 file needs its byte-order mark)")
        entry = line.strip()
        if not entry or entry.startswith("#"):
            return
        parts = entry.split("#", 1)[0].split()
        if len(parts) >= 2 and _hosts_file_address(parts[0]):
            for named in parts[1:]:
                self._add(_HOST, self._checked(canonical_host(named), entry), file_number)
            return
        if len(parts) != 1:
            raise BlocklistError(f"{entry[:80]!r} cannot be a host or URL (white space)")
        if "/" in entry:
            host, prefix = self._checked(canonical_url(entry), entry)
            self._add(_URL_HOST, host, file_number)
            self._add(_URL, prefix, file_number)
            self._prefix_lengths.add(len(prefix))
        else:
            self._add(_DOMAIN, self._checked(canonical_host(entry.lstrip(".")), entry), file_number)

    @staticmethod
    def _checked(canonical, entry: str):
        if canonical is None:
            raise BlocklistError(f"{entry[:80]!r} cannot be a host or URL")
        return canonical

    def _add(self, kind: bytes, spelling: str, file_number: int) -> None:
        if (self._used + 1) * 4 > self._slots * 3:
            self._grow()
        key = _key(kind, spelling)
        slot = self._slot(key)
        if not self._keys[slot]:
            self._keys[slot], self._files[slot] = key, file_number
            self._used += 1

    def _slot(self, key: int) -> int:
        """Where `key` is, or the empty slot where it would go (linear probing)."""
        mask, keys = self._slots - 1, self._keys
        slot = key & mask
        while keys[slot] and keys[slot] != key:
            slot = (slot + 1) & mask
        return slot

    def _grow(self) -> None:
        keys, files = self._keys, self._files
        self._slots *= 2
        self._keys, self._files = array("Q", bytes(8 * self._slots)), array("H", bytes(2 * self._slots))
        for key, file_number in zip(keys, files):
            if key:
                slot = self._slot(key)
                self._keys[slot], self._files[slot] = key, file_number

    def _file_of(self, kind: bytes, spelling: str) -> str | None:
        slot = self._slot(_key(kind, spelling))
        return self._sources[self._files[slot]] if self._keys[slot] else None

    def match(self, url: str) -> str | None:
        """What blocks `url` (`domain D`, `host H`, `URL U`, with its file), or None."""
        canonical = canonical_url(url)
        if canonical is None:
            return None
        host, bare = canonical
        source = self._file_of(_HOST, host)
        if source:
            return f"host {host} ({source})"
        labels = host.split(".")
        for start in range(len(labels)):
            domain = ".".join(labels[start:])
            source = self._file_of(_DOMAIN, domain)
            if source:
                return f"domain {domain} ({source})"
        if self._file_of(_URL_HOST, host):
            for length in sorted(self._prefix_lengths):
                if length > len(bare):
                    break
                source = self._file_of(_URL, bare[:length])
                if source:
                    return f"URL {bare[:length]} ({source})"
        return None

    def __call__(self, url: str, http_header) -> tuple[str, str] | None:
        matched = self.match(url)
        return (URL_BLOCKED, matched) if matched else None


def file_digest(path: str) -> str:
    """The SHA-256 of a blocklist file: what the manifest records of it."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
