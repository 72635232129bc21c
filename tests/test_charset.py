"""Charset: every page to UTF-8, with the charset and where it came from."""

from __future__ import annotations

import codecs
import itertools

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.sample import CP1251_ARTICLE, KOI8R_ARTICLE
from transforms.stages import charset
from transforms.stages.charset import choose_charset, codec_for_label, to_utf8
from transforms.stages.charset_transform import DecodeCharset
from transforms.document import Document
from tests import helpers

RUSSIAN = (
    "<html><head><title>Новости</title></head><body><p>Завтра в столице ожидается снег и до минус "
    "пятнадцати градусов. Синоптики советуют одеваться теплее и не выходить из дома без необходимости. "
    "Учёные из Новосибирска вырастили кристалл размером с ладонь.</p></body></html>"
)


def decoded(payload: bytes, content_type: str = "text/html") -> tuple[str, str, str]:
    utf8, charset, source = to_utf8(payload, content_type)
    return utf8.decode("utf-8"), charset, source


def document(payload, content_type="text/html", url="https://example.org/") -> Document:
    return helpers.document(url=url, warc_record_id=f"<urn:uuid:{url}>", warc_date="2026-01-15T10:00:00Z",
                    source_file="test.warc.gz", source_offset=0, http_status=200, content_type=content_type,
                    payload=payload, raw_bytes=len(payload) if isinstance(payload, bytes) else 0)


# --- where the charset comes from ------------------------------------------------------------

def test_seed_windows_1251_page_declared_in_meta_http_equiv():
    text, charset, source = decoded(CP1251_ARTICLE.encode("windows-1251"))
    assert text == CP1251_ARTICLE
    assert (charset, source) == ("windows-1251", "meta")


@pytest.mark.parametrize("label,codec", [("koi8-r", "koi8-r"), ("windows-1251", "windows-1251"),
                                         ("KOI8-R", "koi8-r"), ('"windows-1251"', "windows-1251")])
def test_header_charset(label, codec):
    text, charset, source = decoded(RUSSIAN.encode(codec), f"text/html; charset={label}")
    assert text == RUSSIAN
    assert (charset, source) == (codec, "http-header")


def test_header_charset_wins_over_meta():
    page = '<meta charset="koi8-r">' + RUSSIAN
    text, charset, source = decoded(page.encode("windows-1251"), "text/html; charset=windows-1251")
    assert text == page
    assert (charset, source) == ("windows-1251", "http-header")


def test_an_unknown_header_label_falls_back_to_meta():
    page = '<meta charset="koi8-r">' + RUSSIAN
    text, charset, source = decoded(page.encode("koi8-r"), "text/html; charset=no-such-charset")
    assert text == page
    assert (charset, source) == ("koi8-r", "meta")


@pytest.mark.parametrize("meta", ['<meta charset="koi8-r">', "<meta charset=koi8-r>", "<META CHARSET='KOI8-R'>",
                                  '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">',
                                  '<meta content="text/html;charset=koi8-r" http-equiv="content-type">'])
def test_meta_charset(meta):
    page = meta + RUSSIAN
    text, charset, source = decoded(page.encode("koi8-r"))
    assert text == page
    assert (charset, source) == ("koi8-r", "meta")


@pytest.mark.parametrize("bom,codec", [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                                       (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_byte_order_mark_wins_and_is_removed(bom, codec):
    page = '<meta charset="windows-1251">' + RUSSIAN
    text, charset, source = decoded(bom + page.encode(codec), "text/html; charset=koi8-r")
    assert text == page
    assert source == "bom"
    assert codecs.lookup(charset).name == codecs.lookup(codec).name


@pytest.mark.parametrize("codec", ["windows-1251", "koi8-r"])
def test_undeclared_russian_is_detected(codec):
    text, charset, source = decoded(RUSSIAN.encode(codec))
    assert text == RUSSIAN
    assert (charset, source) == (codec, "detected")


def test_sample_koi8r_page_without_declaration_is_detected():
    text, charset, source = decoded(KOI8R_ARTICLE.encode("koi8-r"))
    assert text == KOI8R_ARTICLE
    assert source == "detected"


@pytest.mark.parametrize("payload", ["<p>plain ascii</p>".encode(), "<p>Grüße aus Köln</p>".encode("utf-8"), b""])
def test_undeclared_utf8_and_ascii_are_utf8(payload):
    text, charset, source = decoded(payload)
    assert text == payload.decode("utf-8")
    assert (charset, source) == ("utf-8", "detected")


# --- WHATWG labels ---------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["iso-8859-1", "ISO-8859-1", "latin1", "us-ascii"])
def test_iso_8859_1_label_means_windows_1252(label):
    payload = b"<p>\x93Quoted\x94 \x80 5 \x96 caf\xe9</p>"
    text, charset, source = decoded(payload, f"text/html; charset={label}")
    assert text == "<p>\u201cQuoted\u201d \u20ac 5 \u2013 caf\u00e9</p>"
    assert (charset, source) == ("windows-1252", "http-header")


@pytest.mark.parametrize("label", ["gb2312", "GB2312", "gbk"])
def test_gb2312_label_decodes_gbk(label):
    page = "<p>繁體字與简体字：镕、瑺、喆。</p>"  # characters GB2312 lacks
    with pytest.raises(UnicodeEncodeError):
        page.encode("gb2312")
    text, _, source = decoded(page.encode("gbk"), f"text/html; charset={label}")
    assert text == page
    assert source == "http-header"


def test_valid_utf8_labelled_iso_8859_1_is_utf8():
    page = "<p>Grüße, naïve café — Привет</p>"
    text, charset, source = decoded(page.encode("utf-8"), "text/html; charset=iso-8859-1")
    assert text == page
    assert (charset, source) == ("utf-8", "detected (declared windows-1252)")


def test_valid_utf8_declared_windows_1251_in_meta_is_utf8():
    page = '<meta charset="windows-1251">' + RUSSIAN
    text, charset, source = decoded(page.encode("utf-8"))
    assert text == page
    assert (charset, source) == ("utf-8", "detected (declared windows-1251)")


def test_ascii_only_page_keeps_its_declared_charset():
    text, charset, source = decoded(b"<p>only ascii</p>", "text/html; charset=iso-8859-1")
    assert text == "<p>only ascii</p>"
    assert (charset, source) == ("windows-1252", "http-header")


@pytest.mark.parametrize("label,codec", [("iso-8859-1", "cp1252"), ("gb2312", "gb18030"), ("shift_jis", "cp932"),
                                         ("UTF8", "utf-8"), (" koi8-r\t", "koi8-r"), ("iso-8859-8-i", "iso8859-8"),
                                         ("big5", "big5hkscs"), ("x-mac-cyrillic", "mac-cyrillic"),
                                         ("no-such-thing", None), ("", None), ("utf-7", None), ("utf-32", None),
                                         ("base64", None), ("unicode_escape", None), ("cp037", None)])
def test_codec_for_label(label, codec):
    expected = codecs.lookup(codec).name if codec else None
    assert codec_for_label(label) == expected


UTF7_MARKUP = b"<p>+ADw-a href=+ACI-https://evil.example/+ACI-+AD4-click+ADw-/a+AD4- in C++</p>"


@pytest.mark.parametrize("label", ["utf-7", "UTF-7", "utf-32", "base64", "unicode_escape", "rot13", "cp037"])
def test_a_label_outside_the_whatwg_list_is_no_label(label):
    text, charset, source = decoded(UTF7_MARKUP, f"text/html; charset={label}")
    assert text == UTF7_MARKUP.decode("ascii")  # no `<a href>`, and C++ stays
    assert (charset, source) == ("utf-8", "detected")
    page = f'<meta charset="{label}">'.encode() + UTF7_MARKUP
    assert decoded(page) == (page.decode("ascii"), "utf-8", "detected")


@pytest.mark.parametrize("label", ["iso-2022-kr", "csISO2022KR", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext"])
def test_a_replacement_encoding_makes_the_page_one_replacement_character(label):
    # ISO-2022-KR: ESC $ ) C, then Korean between shift-out and shift-in.
    payload = b"\x1b$)C<p>\x0e0!\x0f ~{<:Ky~}</p>"
    assert decoded(payload, f"text/html; charset={label}") == ("\ufffd", "replacement", "http-header")
    assert decoded(b"", f"text/html; charset={label}") == ("", "replacement", "http-header")


# --- invalid bytes ---------------------------------------------------------------------------

def test_invalid_bytes_become_replacement_characters():
    text, charset, source = decoded(b"<p>abc \xff\xfe def</p>", "text/html; charset=utf-8")
    assert text == "<p>abc \ufffd\ufffd def</p>"
    assert (charset, source) == ("utf-8", "http-header")


def test_bytes_undefined_in_the_declared_charset_become_replacement_characters():
    # 0x81 is undefined in windows-1252; 0x98 in windows-1251.
    assert decoded(b"<p>a\x81b</p>", "text/html; charset=windows-1252")[0] == "<p>a\ufffdb</p>"
    assert decoded(b"<p>a\x98b</p>", "text/html; charset=windows-1251")[0] == "<p>a\ufffdb</p>"


LABELS = ["", "text/html", "text/html; charset=utf-8", "text/html; charset=iso-8859-1",
          "text/html; charset=windows-1251", "text/html; charset=koi8-r", "text/html; charset=gb2312",
          "text/html; charset=shift_jis", "text/html; charset=utf-16", "text/html; charset=bogus"]


@settings(max_examples=200, deadline=None)
@given(payload=st.binary(max_size=300), content_type=st.sampled_from(LABELS), meta=st.sampled_from(["", "koi8-r", "utf-16", "x"]))
def test_any_bytes_become_valid_utf8_without_raising(payload, content_type, meta):
    if meta:
        payload = f'<meta charset="{meta}">'.encode() + payload
    utf8, charset, source = to_utf8(payload, content_type)
    utf8.decode("utf-8")  # valid UTF-8
    assert charset and source
    assert choose_charset(payload, content_type)[1] == source


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
@pytest.mark.slow
def test_utf8_text_round_trips(text):
    payload = text.encode("utf-8")
    if payload.startswith(codecs.BOM_UTF8):
        return
    utf8, charset, _ = to_utf8(payload, "text/html; charset=utf-8")
    assert (utf8, charset) == (payload, "utf-8")


# --- DecodeCharset in a pipeline -------------------------------------------------------------

def test_decode_charset_transform():
    docs = [
        document(CP1251_ARTICLE.encode("windows-1251"), url="https://a.example.org/"),
        document(RUSSIAN.encode("koi8-r"), "text/html; charset=koi8-r", url="https://b.example.org/"),
        document(b"<p>\x93hi\x94</p>", "text/html; charset=iso-8859-1", url="https://c.example.org/"),
        document(None, url="https://broken.example.org/"),  # not bytes: the stage fails
    ]
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(docs) | DecodeCharset()
        assert_that(result.documents | "Docs" >> beam.Map(
            lambda d: (d.capture.url, d.utf8_payload.decode("utf-8"), d.charset, d.charset_source, d.raw_bytes)),
            equal_to([("https://a.example.org/", CP1251_ARTICLE, "windows-1251", "meta", docs[0].raw_bytes),
                      ("https://b.example.org/", RUSSIAN, "koi8-r", "http-header", docs[1].raw_bytes),
                      ("https://c.example.org/", "<p>\u201chi\u201d</p>", "windows-1252", "http-header",
                       docs[2].raw_bytes)]),
            label="documents")
        assert_that(result.dead_letter | "Dead" >> beam.Map(lambda d: (d.stage, d.url, d.warc_record_id)),
                    equal_to([("charset", "https://broken.example.org/", "<urn:uuid:https://broken.example.org/>")]),
                    label="dead")


def _decodes_as_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Every lead byte with the continuation bytes at the edges of what it takes (overlongs, surrogates, past U+10FFFF).
UTF8_EDGES = bytes([0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
                    0xF0, 0xF4, 0xF5, 0xFF])


@pytest.mark.skipif(charset._scan is None, reason="the C UTF-8 check is not in use here")
def test_the_c_utf8_check_agrees_with_python_on_every_short_sequence():
    for first in range(256):
        for second in range(256):
            pair = bytes([first, second])
            assert charset.is_utf8(pair) == _decodes_as_utf8(pair), pair
    for first in range(0x80, 0x100):
        for rest in itertools.product(UTF8_EDGES, repeat=3):
            sequence = bytes([first, *rest])
            # Past a run of ASCII read eight bytes at a time, and cut short.
            for data in (b"ascii ok" + sequence, b"x" * 13 + sequence[:3]):
                assert charset.is_utf8(data) == _decodes_as_utf8(data), data


@pytest.mark.skipif(charset._scan is None, reason="the C UTF-8 check is not in use here")
@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.one_of(st.binary(max_size=12), st.text(max_size=12).map(lambda text: text.encode("utf-8")),
                                 st.sampled_from([b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x9f\xbf", b"\xc0\xaf",
                                                  b"\xef\xbf\xbd", b"\xf0\x9f\x98\x80", b"\xe2\x82"])), max_size=12))
def test_the_c_utf8_check_agrees_with_python_on_any_bytes(pieces):
    data = b"".join(pieces)
    assert charset.is_utf8(data) == _decodes_as_utf8(data)
    assert charset.is_utf8(bytearray(data)) == _decodes_as_utf8(data)
