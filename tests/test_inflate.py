"""ReadWarc inflates gzip with zlib-ng: every gzip it reads, and with zlib's bytes and errors where data is damaged."""

from __future__ import annotations

import gzip
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zlib_ng import zlib_ng

from pipeline.sample import warc_bytes
from tests.helpers import outcomes_by_kind, read_bytes
from tests.test_read_warc import CYRILLIC, ENCODED, LATIN

PAGES = [LATIN, CYRILLIC, ENCODED]  # ENCODED: chunked, and gzipped as its Content-Encoding


@pytest.mark.parametrize("compression", ["record", "file"])
def test_every_gzip_that_read_warc_reads_is_inflated_by_zlib_ng(monkeypatch, compression):
    data = warc_bytes(PAGES, compression=compression)
    inflated = []

    class ZlibRefused:  # (warcio makes one when its ArchiveIterator starts, which ReadWarc replaces unused)
        def __init__(self, *args, **kwargs):
            pass

        def decompress(self, *args, **kwargs):
            raise AssertionError("CPython's zlib inflated what ReadWarc read")

    def zlib_ng_decompressobj(*args, _decompressobj=zlib_ng.decompressobj, **kwargs):
        inflated.append(args)
        return _decompressobj(*args, **kwargs)

    monkeypatch.setattr(zlib, "decompressobj", ZlibRefused)
    monkeypatch.setattr(zlib_ng, "decompressobj", zlib_ng_decompressobj)
    docs, _, dead = outcomes_by_kind(read_bytes(data))
    assert not dead
    assert [doc.capture.url for doc in docs] == [capture.url for capture in PAGES]
    assert "Café culture".encode("utf-8") in docs[-1].payload  # its gzip Content-Encoding, inflated too
    # The file's format, its members (or its stream), and the page's Content-Encoding.
    assert (16 + zlib.MAX_WBITS,) in inflated


def inflate(module, data: bytes, piece: int, limit: int) -> tuple:
    """What a decompressor of `module` gives for `data` fed `piece` bytes at a time, at most `limit` out per call."""
    decompressor = module.decompressobj(16 + module.MAX_WBITS)
    pieces = []
    try:
        for start in range(0, len(data), piece):
            pieces.append(decompressor.decompress(data[start:start + piece], limit))
            while decompressor.unconsumed_tail and not decompressor.eof:
                pieces.append(decompressor.decompress(decompressor.unconsumed_tail, limit))
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return "error", type(error).__name__, str(error), pieces
    return "inflated", pieces, decompressor.eof, decompressor.unused_data


MEMBER = gzip.compress(bytes(random.Random(7).choice(b"abcdefgh <p>\n\xd0\xbf") for _ in range(40_000)), mtime=0)


@settings(max_examples=300, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, len(MEMBER) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(0, len(MEMBER))), piece=st.sampled_from([1, 7, 512, 16384]),
       limit=st.sampled_from([0, 100, 1 << 20]))
def test_zlib_ng_gives_a_damaged_member_the_bytes_and_the_error_message_zlib_gives(changes, cut, piece, limit):
    # A dead letter's reason quotes the error: the corpus and its side outputs are the same as with zlib.
    data = bytearray(MEMBER + b"WARC/1.0\r\n")
    for where, value in changes:
        data[where] = value
    data = bytes(data[:cut])
    assert inflate(zlib_ng, data, piece, limit) == inflate(zlib, data, piece, limit)
