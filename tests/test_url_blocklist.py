"""--url-blocklist: captures of listed domains, hosts and URLs skipped as url-blocked from their headers."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.sample import Capture, warc_bytes
from tests.helpers import page
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.document import Document, Skip
from transforms.stages.filters import url_blocklist
from transforms.stages.filters.url_blocklist import BlocklistError, UrlBlocklist, plain_hosts
from transforms.stages.read_warc.read_warc import read_warc

LIST = """# a comment, then a domain, a hosts-file host, a UT1 url and a URL with its scheme
blocked.example
0.0.0.0 ads.example.org

example.net/private/
https://example.com/secret
"""


def blocklist() -> UrlBlocklist:
    rules = UrlBlocklist(("list.txt",), 16)
    for line in LIST.splitlines():
        rules.add_line(line, 0)
    return rules


def load(tmp_path, data: bytes) -> UrlBlocklist:
    listing = tmp_path / "list.txt"
    listing.write_bytes(data)
    return UrlBlocklist.load([str(listing)])


def test_domains_match_their_subdomains_hosts_only_themselves_urls_as_prefixes():
    rules = blocklist()
    assert rules.match("https://blocked.example/a") == "domain blocked.example (list.txt)"
    assert rules.match("http://WWW.Blocked.Example:8080/") == "domain blocked.example (list.txt)"
    assert rules.match("https://notblocked.example/") is None
    assert rules.match("https://ads.example.org/x") == "host ads.example.org (list.txt)"
    assert rules.match("https://www.ads.example.org/x") is None and rules.match("https://example.org/") is None
    assert rules.match("http://example.net/private/page.html") == "URL example.net/private/ (list.txt)"
    assert rules.match("https://example.net/public") is None
    assert rules.match("http://example.com/secret?x=1").startswith("URL example.com/secret")
    assert rules.match("not a url") is None


@pytest.mark.parametrize("encoded", [LIST.encode("utf-8-sig"), LIST.encode("utf-16"),
                                     b"\xfe\xff" + LIST.encode("utf-16-be"), LIST.replace("\n", "\r\n").encode()])
def test_a_list_is_decoded_by_its_byte_order_mark(tmp_path, encoded):
    # A UTF-16 list read as UTF-8 matched nothing, without a word.
    rules = load(tmp_path, encoded)
    assert rules.match("https://www.blocked.example/").startswith("domain blocked.example")
    assert rules.match("https://ads.example.org/").startswith("host ads.example.org")
    assert rules.match("https://example.com/secret/x").startswith("URL example.com/secret")


@pytest.mark.parametrize("data, line, says", [
    ("blocked.example\n".encode("utf-16-le"), 1, "a NUL character"),
    (b"ok.example\ncaf\xe9.example\n", 2, "not UTF-8"),
    (b"ok.example\n\nbad host.example\n", 3, "cannot be a host or URL"),
    (b"# fine\n*.example.com\n", 2, "cannot be a host or URL"),
    (b"https://exa mple.com/x\n", 1, "cannot be a host or URL"),
])
def test_a_line_that_cannot_be_an_entry_is_refused_with_its_file_and_line(tmp_path, data, line, says):
    with pytest.raises(BlocklistError) as refused:
        load(tmp_path, data)
    message = str(refused.value)
    assert "\n" not in message and f"{tmp_path / 'list.txt'} line {line}: " in message and says in message


def test_too_many_lines_are_refused_before_any_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(url_blocklist, "MAX_LINES", 3)
    # The fourth line could not be read: the count refuses first.
    with pytest.raises(BlocklistError, match="more than the 3 a build may hold"):
        load(tmp_path, b"a.example\nb.example\nc.example\n\xff\n")


def test_entries_take_a_few_bytes_each_whatever_their_length(tmp_path):
    # Dicts of strings took about 400 bytes an entry: 10 million, 4 GB.
    rules = load(tmp_path, "".join(f"host{n}.{'long-label-' * 8}example\n" for n in range(20_000)).encode())
    table_bytes = sum(len(part) * part.itemsize for part in (rules._keys, rules._files))
    assert table_bytes <= 20_000 * 3 * 10 and rules.match(f"http://host7.{'long-label-' * 8}example/")


SPELLINGS = [
    ("https://example.com/a", "https://example.com:443/a"),
    ("http://example.com/a", "http://example.com:80/a"),
    ("https://example.com/a/b", "https://example.com//a///b"),
    ("https://example.com/abc", "https://example.com/%61%62c"),
    ("https://example.com/~x", "https://example.com/%7ex"),
    ("https://example.com/a%2Fb", "https://example.com/a%2fb"),
    ("https://bücher.example/", "https://xn--bcher-kva.example/"),
    ("https://xn--bcher-kva.example/", "https://BÜCHER.example./"),
    ("https://example.com/", "https://EXAMPLE.Com"),
    ("https://example.com/a", "https://user@example.com/a#part"),
]


@pytest.mark.parametrize("entry, url", SPELLINGS + [(after, before) for before, after in SPELLINGS])
def test_a_url_entry_matches_every_spelling_of_its_url(entry, url):
    rules = UrlBlocklist(("list.txt",), 4)
    rules.add_line(entry, 0)
    assert rules.match(url), (entry, url)


_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=10)
_SEGMENT = st.text("abcxyzAZ09-._~", min_size=1, max_size=8)


def _respelled(draw, host: str, segments: list[str], scheme: str) -> str:
    """A spelling of https or http://host/segments a browser reads as the same URL."""
    host = "".join(letter.upper() if draw(st.booleans()) else letter for letter in host)
    port = draw(st.sampled_from(["", {"https": ":443", "http": ":80"}[scheme]]))
    path = "".join(draw(st.sampled_from(["/", "//", "///"])) + "".join(
        f"%{ord(letter):02x}" if draw(st.booleans()) else letter for letter in segment) for segment in segments)
    return f"{scheme}://{host}{draw(st.sampled_from(['', '.']))}{port}{path}"


@settings(max_examples=200, deadline=None)
@given(st.data(), st.lists(_LABEL, min_size=1, max_size=3), st.sampled_from(["", "ü", "é"]),
       st.lists(_SEGMENT, min_size=1, max_size=3), st.sampled_from(["https", "http"]))
def test_equivalent_spellings_match_each_other(data, labels, accent, segments, scheme):
    host = ".".join([labels[0] + accent] + labels[1:] + ["example"])
    entry = _respelled(data.draw, host, segments, scheme)
    url = _respelled(data.draw, host, segments, scheme)
    rules = UrlBlocklist(("list.txt",), 4)
    rules.add_line(entry, 0)
    assert rules.match(url), (entry, url)


def test_the_reader_skips_a_blocked_capture_without_reading_its_payload():
    # A payload that would be a dead letter if it were read (gzip declared, not gzip).
    blocked = Capture("https://www.blocked.example/", b"not gzip at all", http_headers=(("Content-Encoding", "gzip"),))
    kept = Capture("https://open.example/", page("<p>Open page.</p>").encode("utf-8"))
    data = warc_bytes([blocked, kept])
    outcomes = list(read_warc(lambda: io.BytesIO(data), "t.warc.gz", screen=blocklist()))
    skips = [outcome for outcome in outcomes if isinstance(outcome, Skip) and outcome.kind == "url-blocked"]
    assert [(skip.url, skip.detail) for skip in skips] == [(blocked.url, "domain blocked.example (list.txt)")]
    assert [outcome.capture.url for outcome in outcomes if isinstance(outcome, Document)] == [kept.url]


@pytest.mark.slow
def test_url_blocklist_build_counts_lists_and_records_the_list(write_warc, tmp_path):
    source = write_warc([Capture("https://blocked.example/a", page("<p>Blocked page.</p>").encode("utf-8")),
                         Capture("https://open.example/", page("<p>Open page.</p>").encode("utf-8"))])
    listing = tmp_path / "list.txt"
    listing.write_text(LIST)
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet",
                                "--url-blocklist", str(listing)])
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == ["https://open.example/"]
    (skip,) = [line for line in json_lines(output, "skipped") if line["kind"] == "url-blocked"]
    assert skip["url"] == "https://blocked.example/a"
    report = json.loads((output / "report.json").read_text())
    assert report["skipped"]["url-blocked"] == 1 and report["records"]["balanced"]
    (recorded,) = report["options"]["url_blocklists"]
    assert recorded["path"] == str(listing) and len(recorded["sha256"]) == 64
    code, _, stderr = run_main(["--output", str(tmp_path / "never"), "--url-blocklist", str(tmp_path / "nope.txt")])
    assert code == 2 and "no such file" in stderr
    # A UTF-16 list without its byte-order mark: refused in one line, before any input is read.
    listing.write_bytes(LIST.encode("utf-16-le"))
    code, _, stderr = run_main(["--input", str(source), "--output", str(tmp_path / "never"), "--quiet",
                                "--url-blocklist", str(listing)])
    assert code == 2 and f"--url-blocklist {listing} line 1: a NUL character" in stderr
    assert len(stderr.strip().splitlines()) == 1 and not (tmp_path / "never").exists()


def _table(rules: UrlBlocklist) -> list[tuple[int, int]]:
    return sorted((key, file) for key, file in zip(rules._keys, rules._files) if key)


_PLAIN_HOSTS = st.lists(st.sampled_from(["a", "b0", "_", "x-y"]), min_size=1, max_size=3).map(".".join)
_PLAIN_PATHS = st.lists(st.sampled_from(["", "p", "A~", "-", "."]), max_size=3).map(
    lambda segments: "".join(f"/{segment}" for segment in segments))
# Where the fast path's rules change: dots and hyphens at labels' ends, `/`, case, a non-ASCII letter, `//`,
# escapes, a port, a query, white space, a comment, a scheme, a hosts-file address.
_NUDGES = ("", ".", "-", "/", "Z", "ü", "//", "%61", "%2f", "?q", ":80", ":443", " ", "#", "https://", "0.0.0.0 ")


@st.composite
def _nudged(draw) -> list[str]:
    """A host, or a URL without its scheme, as compared, with each nudge at its start, at its end and inside."""
    line = draw(_PLAIN_HOSTS) + draw(_PLAIN_PATHS)
    inside = draw(st.integers(0, len(line)))
    return [line[:at] + nudge + line[at:] for at in (0, inside, len(line)) for nudge in _NUDGES]


@settings(max_examples=60, deadline=None)
@given(st.lists(_nudged(), min_size=1, max_size=3).map(lambda nudged: sum(nudged, [])))
def test_lines_read_in_blocks_give_the_entries_they_give_one_by_one(lines):
    # A block's plain hosts and URLs are hashed as they are, without url_forms: each must give the keys that
    # line_entries gives it, and be refused where it is refused; so must the lines together.
    accepted = []
    for line in lines:
        one_by_one, in_block = UrlBlocklist(("list.txt",), 16), UrlBlocklist(("list.txt",), 16)
        try:
            one_by_one.add_line(line, 0)
        except BlocklistError:
            with pytest.raises(BlocklistError, match="^line 1: "):
                in_block.add_lines(f"{line}\n", 0)
            continue
        in_block.add_lines(f"{line}\n", 0)
        assert (_table(in_block), in_block._prefix_lengths) == (_table(one_by_one), one_by_one._prefix_lengths)
        accepted.append(line)
    one_by_one, in_block = UrlBlocklist(("list.txt",), 4 * len(accepted)), UrlBlocklist(("list.txt",), 16)
    for line in accepted:
        one_by_one.add_line(line, 0)
    in_block.add_lines("".join(f"{line}\n" for line in accepted), 0)
    assert (_table(in_block), in_block._prefix_lengths) == (_table(one_by_one), one_by_one._prefix_lengths)


@pytest.mark.parametrize("line, plain", [("example.com", True), ("a-b.c_d.0", True), ("Example.com", False),
                                         ("example.com.", False), (".example.com", False), ("a-.com", False),
                                         ("-a.com", False), ("a..com", False), ("a.com/x", False), ("", False)])
def test_plain_hosts_are_told_by_their_bytes(line, plain):
    assert plain_hosts(f"x.example\n{line}\n".encode()).tolist() == [True, plain]


def test_a_loaded_blocklist_gives_each_files_sha256_from_the_read_that_counts_its_lines(tmp_path):
    """The manifest records each --url-blocklist file by the SHA-256 of the bytes read at launch: the read that
    counts its lines also digests it (no other read of the file for its digest)."""
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_bytes(b"example.org\nexample.net/path\n")
    second.write_bytes("пример.рф\r\n".encode("utf-16"))
    blocklist = UrlBlocklist.load([str(first), str(second)])
    assert blocklist.sha256s == tuple(hashlib.sha256(path.read_bytes()).hexdigest() for path in (first, second))
