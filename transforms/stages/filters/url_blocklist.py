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

UT1's lists hold millions of entries, so an entry is kept as a 64-bit hash of its spelling (XXH3, its kind the
seed) with its file's number, in an open-addressing table of two arrays (10 bytes a slot, at most 3/4 full):
10 million entries take 168 MB. A URL is blocked when one of its candidates (its host, its domains, its URL's
prefixes) has an entry's hash: another spelling sharing that hash is blocked too (one chance in 1.8 million
million a candidate, about 5e-13, with 10 million entries; a URL made to collide blocks only itself). The
files may hold at most `MAX_LINES` lines in all, counted before any is read.

A file is read a block of lines at a time (`add_lines`): a line that is a host, or a URL without its scheme,
already as compared (lower-case ASCII labels, a plain path: most lines of UT1's files) is told by array
operations on the block and hashed as it is; the others go through `line_entries`, which gives the same
entries for such a line (the property test in `tests/test_url_blocklist.py`).
"""

from __future__ import annotations

import codecs
import hashlib
import ipaddress
import re
from array import array
from functools import partial
from itertools import compress, repeat

import numpy as np
from xxhash import xxh3_64_intdigest

from transforms.stages.filters.url_forms import HOST_NAME, canonical_host, canonical_url
from transforms.vocabulary import URL_BLOCKED

# 20 million lines make a table of 33.5 million slots: 335 MB.
MAX_LINES = 20_000_000
_MAX_FILES = 1 << 16
# The kinds of entry, each its hash's seed.
_DOMAIN, _HOST, _URL, _URL_HOST = 1, 2, 3, 4
# A byte-order mark, the encoding it names, and a line end in it.
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig", b"\n"), (codecs.BOM_UTF16_LE, "utf-16", b"\n\x00"),
         (codecs.BOM_UTF16_BE, "utf-16", b"\x00\n"))
# Characters a block is read in: its arrays take about a MB (1 << 20: 17 MB more peak RSS, no faster).
_BLOCK = 1 << 18
# What a byte is in a host as compared (`url_forms.HOST_NAME`): 0 none of its, a label's, `-`, `.`; a line end.
_LABEL, _HYPHEN, _DOT, _LINE_END = 1, 2, 3, 4
_HOST_BYTES = np.zeros(256, np.uint8)
_HOST_BYTES[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789_", np.uint8)] = _LABEL
_HOST_BYTES[np.frombuffer(b"-.\n", np.uint8)] = _HYPHEN, _DOT, _LINE_END


def _not_in_host(first: int, second: int) -> bool:
    """Whether bytes of these kinds cannot be next to each other in a line that is a host: a byte not of a host,
    `.` not between labels' bytes, `-` at the line's start or end."""
    return (0 in (first, second) or (second == _DOT and first != _LABEL) or (first == _DOT and second != _LABEL)
            or (second == _HYPHEN and first == _LINE_END) or (first == _HYPHEN and second == _LINE_END))


# `_not_in_host` of two bytes' kinds, at `(first << 3) + second`.
_NOT_IN_HOST = np.array([_not_in_host(pair >> 3, pair & 7) for pair in range(64)])
# A URL without its scheme as compared (`line_entries` gives it back): a host, then a path of bytes that
# `urlsplit` and `canonical_path` leave as they are (no `%`, `?`, `#`, white space), without `//`.
_PLAIN_URL = re.compile(rf"({HOST_NAME})/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]+/)*[A-Za-z0-9._~!$&'()*+,;=:@-]*".encode())


class BlocklistError(ValueError):
    """A blocklist file that cannot be read as one: its file and line, in one line."""


def _key(kind: int, spelling: str) -> int:
    # 0 marks an empty slot.
    return xxh3_64_intdigest(spelling.encode(), kind) or 1


def _keys(kind: int, spellings) -> np.ndarray:
    """`_key` of each of `spellings` (UTF-8 bytes), in one array."""
    keys = np.fromiter(map(xxh3_64_intdigest, spellings, repeat(kind)), np.uint64)
    keys[keys == 0] = 1
    return keys


def _hosts_file_address(token: str) -> bool:
    try:
        ipaddress.ip_address(token.partition("%")[0])
    except ValueError:
        return False
    return True


def _checked(canonical, entry: str):
    if canonical is None:
        raise BlocklistError(f"{entry[:80]!r} cannot be a host or URL")
    return canonical


def line_entries(line: str) -> list[tuple[int, str]]:
    """The entries of `line` (none for a comment) as (kind, spelling as compared); raises BlocklistError for a
    line that cannot be an entry."""
    # Comments too: a file read in the wrong encoding shows it on its first line.
    if "\ufffd" in line:
        raise BlocklistError("not UTF-8, nor UTF-8 or UTF-16 with its byte-order mark")
    if "\x00" in line:
        raise BlocklistError("a NUL character (a UTF-16 file needs its byte-order mark)")
    entry = line.strip()
    if not entry or entry.startswith("#"):
        return []
    parts = entry.split("#", 1)[0].split()
    if len(parts) >= 2 and _hosts_file_address(parts[0]):
        return [(_HOST, _checked(canonical_host(named), entry)) for named in parts[1:]]
    if len(parts) != 1:
        raise BlocklistError(f"{entry[:80]!r} cannot be a host or URL (white space)")
    if "/" in entry:
        host, prefix = _checked(canonical_url(entry), entry)
        return [(_URL_HOST, host), (_URL, prefix)]
    return [(_DOMAIN, _checked(canonical_host(entry.lstrip(".")), entry))]


def plain_hosts(block: bytes) -> np.ndarray:
    """Whether each line of `block` (each ending in `\\n`) is a host as compared already (`url_forms.HOST_NAME`):
    told by the pairs of bytes in it, the line ends included."""
    kinds = np.empty(len(block) + 1, np.uint8)
    kinds[0] = _LINE_END
    np.take(_HOST_BYTES, np.frombuffer(block, np.uint8), out=kinds[1:])
    # Each byte with the one before it.
    pairs = kinds[:-1] << 3
    pairs += kinds[1:]
    ends = np.flatnonzero(kinds[1:] == _LINE_END)
    starts = np.concatenate(([0], ends[:-1] + 1))
    return (ends > starts) & ~np.logical_or.reduceat(_NOT_IN_HOST[pairs], starts)


def _blocks(handle):
    """The text of `handle` in blocks of whole lines, each ending in `\\n` (added to a last line without it)."""
    rest = ""
    for chunk in iter(partial(handle.read, _BLOCK), ""):
        lines, end, rest = (rest + chunk).rpartition("\n")
        if end:
            yield lines + end
    if rest:
        yield rest + "\n"


def _survey(path: str) -> tuple[str, int, str]:
    """The encoding of the file at `path`, by its byte-order mark (UTF-8 without one), its lines at most, and
    its SHA-256 (what the manifest records of it)."""
    sha = hashlib.sha256()
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
            sha.update(block)
    return encoding, lines, sha.hexdigest()


class UrlBlocklist:
    """The entries of blocklist files (`load`); called as a `read_warc` screen."""

    def __init__(self, sources: tuple[str, ...], lines: int, sha256s: tuple[str, ...] = ()):
        self._sources = tuple(sources)
        # Each source file's SHA-256, of the bytes its lines were counted in (`load`).
        self.sha256s = tuple(sha256s)
        self._slots = 1 << max(4, (lines * 3 // 2).bit_length())
        self._keys = array("Q", bytes(8 * self._slots))
        self._files = array("H", bytes(2 * self._slots))
        self._used = 0
        # The lengths of the URL entries (as compared): the prefixes of a URL that are looked for.
        self._prefix_lengths: set[int] = set()

    @classmethod
    def load(cls, paths) -> "UrlBlocklist":
        """The entries of the files at `paths`; raises BlocklistError for a file over the limits or with a line
        that cannot be read (`line_entries`), OSError for a file that cannot be read."""
        paths = tuple(paths)
        if len(paths) > _MAX_FILES:
            raise BlocklistError(f"--url-blocklist: {len(paths)} files, more than {_MAX_FILES}")
        surveys = {path: _survey(path) for path in paths}
        lines = sum(count for _, count, _ in surveys.values())
        if lines > MAX_LINES:
            raise BlocklistError(f"--url-blocklist: {lines:,} lines in all, more than the {MAX_LINES:,} a build "
                                 "may hold (transforms.stages.filters.url_blocklist.MAX_LINES)")
        blocklist = cls(paths, lines, tuple(surveys[path][2] for path in paths))
        for number, path in enumerate(paths):
            with open(path, encoding=surveys[path][0], errors="replace", newline=None) as handle:
                line_number = 1
                for text in _blocks(handle):
                    try:
                        blocklist.add_lines(text, number, line_number)
                    except BlocklistError as error:
                        raise BlocklistError(f"--url-blocklist {path} {error}") from None
                    line_number += text.count("\n")
        return blocklist

    def add_lines(self, text: str, file_number: int, first_line: int = 1) -> None:
        """Adds the entries of the lines of `text` (each ending in `\\n`; the first is line `first_line`) from
        file number `file_number` (of the sources); raises BlocklistError, with the line's number, for a line
        that cannot be an entry."""
        if not text:
            return
        block = text.encode()
        lines = block.split(b"\n")
        plain = plain_hosts(block)
        urls, url_hosts, entries = [], [], []
        for index in np.flatnonzero(~plain).tolist():
            url = _PLAIN_URL.fullmatch(lines[index])
            if url:
                urls.append(url[0])
                url_hosts.append(url[1])
                continue
            try:
                entries += line_entries(lines[index].decode())
            except BlocklistError as error:
                raise BlocklistError(f"line {first_line + index}: {error}") from None
        self._prefix_lengths.update(map(len, urls))
        self._insert(np.concatenate((_keys(_DOMAIN, compress(lines, plain)), _keys(_URL, urls),
                                     _keys(_URL_HOST, url_hosts))), file_number)
        self._add(entries, file_number)

    def add_line(self, line: str, file_number: int) -> None:
        """Adds the entry of `line`, from file number `file_number` (of the sources); raises BlocklistError for a
        line that cannot be an entry."""
        self._add(line_entries(line), file_number)

    def _add(self, entries: list[tuple[int, str]], file_number: int) -> None:
        self._prefix_lengths.update(len(spelling) for kind, spelling in entries if kind == _URL)
        for kind in (_DOMAIN, _HOST, _URL, _URL_HOST):
            spellings = [spelling.encode() for of_kind, spelling in entries if of_kind == kind]
            if spellings:
                self._insert(_keys(kind, spellings), file_number)

    def _insert(self, keys: np.ndarray, files) -> None:
        """Adds `keys` with their file numbers (an array, or one for all), but those in the table already: an
        entry keeps the first file that lists it."""
        keys, first = np.unique(keys, return_index=True)
        files = files[first] if np.ndim(files) else np.full(len(keys), files, np.uint16)
        while (self._used + len(keys)) * 4 > self._slots * 3:
            self._grow()
        table, numbers = np.frombuffer(self._keys, np.uint64), np.frombuffer(self._files, np.uint16)
        mask = np.uint64(self._slots - 1)
        slots = keys & mask
        # Linear probing, all keys a step at a time: of those at one empty slot, one takes it (whichever numpy
        # writes last), the others probe on, as past any other key.
        while len(keys):
            empty = table[slots] == 0
            table[slots[empty]] = keys[empty]
            held = table[slots]
            placed = empty & (held == keys)
            numbers[slots[placed]] = files[placed]
            self._used += int(np.count_nonzero(placed))
            probing = held != keys
            keys, files, slots = keys[probing], files[probing], (slots[probing] + np.uint64(1)) & mask

    def _slot(self, key: int) -> int:
        """Where `key` is, or the empty slot where it would go (linear probing)."""
        mask, keys = self._slots - 1, self._keys
        slot = key & mask
        while keys[slot] and keys[slot] != key:
            slot = (slot + 1) & mask
        return slot

    def _grow(self) -> None:
        keys, files = np.frombuffer(self._keys, np.uint64), np.frombuffer(self._files, np.uint16)
        held = keys != 0
        keys, files = keys[held], files[held]
        self._slots *= 2
        self._keys, self._files = array("Q", bytes(8 * self._slots)), array("H", bytes(2 * self._slots))
        self._used = 0
        self._insert(keys, files)

    def _file_of(self, kind: int, spelling: str) -> str | None:
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
