"""Charset: every page becomes UTF-8 before it is parsed.

lexbor parses bytes as UTF-8, so a page in windows-1251 or GBK must be
transcoded first. The charset is taken, in this order, from:

1. a byte-order mark (`bom`): unambiguous, and browsers let it win;
2. the HTTP `Content-Type` header (`http-header`);
3. a `<meta charset>` or `<meta http-equiv="Content-Type">` declaration in
   the first bytes of the page (`meta`);
4. detection (`detected`): bytes that are valid UTF-8 are UTF-8, anything
   else goes to charset-normalizer;
5. windows-1252 (`default`), the browsers' fallback, when detection finds
   nothing or the page has too few non-ASCII bytes (under 0.5%) for
   detection to tell single-byte Latin code pages apart.

Extracted text (a WET file's conversion records) is not a page: it is UTF-8
as Common Crawl writes it, and no charset is detected (`extracted-text`).

A declaration is only believed when the bytes agree with it: a page that
declares a legacy single-byte charset but is valid UTF-8 with non-ASCII
bytes is UTF-8 (a common mislabelling); its source then reads
`detected (declared X)`. Labels follow the WHATWG Encoding standard, where
`iso-8859-1` means windows-1252 and `gb2312` means GBK; a label that is not
the standard's (utf-7, utf-32, base64, ...) is no label, and a page labelled
with one of its replacement encodings (iso-2022-kr, hz-gb-2312, ...) becomes
one U+FFFD, as in a browser.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

from transforms import native
from transforms.document import Document

UTF8 = codecs.lookup("utf-8").name
# The charset source of extracted text (WET files write it in UTF-8: its bytes are decoded so, invalid ones replaced).
EXTRACTED_TEXT_SOURCE = "extracted-text"

BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# The WHATWG Encoding standard's labels (https://encoding.spec.whatwg.org/#names-and-labels), by the
# Python codec that decodes its encoding: the only labels believed, as browsers believe no other. A
# codec Python has under another label (utf-7, utf-32, base64, unicode_escape, cp037...) is no label:
# utf-7 would turn `+ADw-` into `<`, markup from bytes a browser shows as text.
WHATWG_ENCODINGS = (
    # UTF-8
    ("utf-8", ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8")),
    # IBM866
    ("cp866", ("866", "cp866", "csibm866", "ibm866")),
    # ISO-8859-2
    ("iso8859-2", ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2",
                  "iso_8859-2:1987", "l2", "latin2")),
    # ISO-8859-3
    ("iso8859-3", ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3",
                  "iso_8859-3:1988", "l3", "latin3")),
    # ISO-8859-4
    ("iso8859-4", ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4",
                  "iso_8859-4:1988", "l4", "latin4")),
    # ISO-8859-5
    ("iso8859-5", ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595",
                  "iso_8859-5", "iso_8859-5:1988")),
    # ISO-8859-6
    ("iso8859-6", ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114",
                  "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596",
                  "iso_8859-6", "iso_8859-6:1987")),
    # ISO-8859-7
    ("iso8859-7", ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126",
                  "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek")),
    # ISO-8859-8 and ISO-8859-8-I, which decode alike (they differ in the direction of display).
    ("iso8859-8", ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138",
                  "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988", "visual",
                  "csiso88598i", "iso-8859-8-i", "logical")),
    # ISO-8859-10
    ("iso8859-10", ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6")),
    # ISO-8859-13
    ("iso8859-13", ("iso-8859-13", "iso8859-13", "iso885913")),
    # ISO-8859-14
    ("iso8859-14", ("iso-8859-14", "iso8859-14", "iso885914")),
    # ISO-8859-15
    ("iso8859-15", ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9")),
    # ISO-8859-16
    ("iso8859-16", ("iso-8859-16",)),
    # KOI8-R
    ("koi8-r", ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r")),
    # KOI8-U
    ("koi8-u", ("koi8-ru", "koi8-u")),
    # macintosh
    ("mac-roman", ("csmacintosh", "mac", "macintosh", "x-mac-roman")),
    # windows-874
    ("cp874", ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874")),
    # windows-1250
    ("cp1250", ("cp1250", "windows-1250", "x-cp1250")),
    # windows-1251
    ("cp1251", ("cp1251", "windows-1251", "x-cp1251")),
    # windows-1252, and x-user-defined, whose own decoder (bytes 0x80-0xFF to U+F780-U+F7FF) Python lacks.
    ("cp1252", ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
               "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii",
               "windows-1252", "x-cp1252", "x-user-defined")),
    # windows-1253
    ("cp1253", ("cp1253", "windows-1253", "x-cp1253")),
    # windows-1254
    ("cp1254", ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9",
               "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254")),
    # windows-1255
    ("cp1255", ("cp1255", "windows-1255", "x-cp1255")),
    # windows-1256
    ("cp1256", ("cp1256", "windows-1256", "x-cp1256")),
    # windows-1257
    ("cp1257", ("cp1257", "windows-1257", "x-cp1257")),
    # windows-1258
    ("cp1258", ("cp1258", "windows-1258", "x-cp1258")),
    # x-mac-cyrillic
    ("mac-cyrillic", ("x-mac-cyrillic", "x-mac-ukrainian")),
    # GBK and gb18030: the standard decodes GBK as gb18030, its superset.
    ("gb18030", ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58",
                "x-gbk", "gb18030")),
    # Big5
    ("big5hkscs", ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5")),
    # EUC-JP
    ("euc_jp", ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp")),
    # ISO-2022-JP
    ("iso2022_jp", ("csiso2022jp", "iso-2022-jp")),
    # Shift_JIS
    ("cp932", ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis")),
    # EUC-KR
    ("cp949", ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989",
              "ksc5601", "ksc_5601", "windows-949")),
    # UTF-16BE and UTF-16LE. The standard decodes a page labelled UTF-16 as UTF-16; but a label found in the page was read as
    # ASCII-compatible bytes, and a header's label over bytes that carry no byte-order mark (which wins)
    # is wrong far more often than not: UTF-8.
    ("utf-8", ("unicodefffe", "utf-16be", "csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff",
               "utf-16", "utf-16le")),
    # replacement: encodings whose bytes a browser does not show; the whole page is one U+FFFD, as the
    # standard says.
    # Read as no label, their 7-bit escapes (ISO-2022-KR's `ESC $ ) C`, HZ's `~{`) would be text that no
    # reader saw; decoded, they could hide markup as utf-7 does.
    ("replacement", ("csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "iso-2022-kr", "replacement")),
)
REPLACEMENT = "replacement"
LABEL_CODECS = {label: codec if codec == REPLACEMENT else codecs.lookup(codec).name
                for codec, labels in WHATWG_ENCODINGS for label in labels}
WHATWG_CODECS = frozenset(LABEL_CODECS.values()) - {REPLACEMENT}
# What a page of a replacement encoding decodes to.
REPLACEMENT_PAGE = "\ufffd".encode("utf-8")
# What the standard strips around a label.
ASCII_WHITESPACE = "\t\n\f\r "

# Below this share of non-ASCII bytes, detection cannot tell single-byte
# Latin code pages apart (charset-normalizer ties windows-1250, cp852, cp775
# ... and picks one); such pages get the browsers' fallback, windows-1252.
MIN_NON_ASCII_TO_DETECT = 0.005
NON_ASCII_BYTES = bytes(range(0x80, 0x100))
SINGLE_BYTE_FALLBACK = "cp1252"

DISPLAY_NAMES = {
    "cp1250": "windows-1250",
    "cp1251": "windows-1251",
    "cp1252": "windows-1252",
    "cp1253": "windows-1253",
    "cp1254": "windows-1254",
    "cp1255": "windows-1255",
    "cp1256": "windows-1256",
    "cp1257": "windows-1257",
    "cp1258": "windows-1258",
    "cp874": "windows-874",
    "cp932": "shift_jis",
    "cp949": "euc-kr",
    "big5hkscs": "big5",
}

HEADER_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
META_SCAN_BYTES = 8192
DETECTION_SAMPLE_BYTES = 256 * 1024

_scan = native.load("_scan")


def codec_for_label(label: str) -> str | None:
    """The Python codec (or `REPLACEMENT`) of a WHATWG label, or None for any other label."""
    return LABEL_CODECS.get(label.strip(ASCII_WHITESPACE).lower())


def codec_for_detected(name: str) -> str | None:
    """The Python codec for charset-normalizer's answer (a Python codec name), if it decodes a WHATWG
    encoding (`mac_cyrillic`, `euc_jp`; a label such as `gb2312` keeps its WHATWG meaning)."""
    codec = codec_for_label(name)
    if codec is None:
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            return None
    return codec if codec in WHATWG_CODECS else None


def display_name(codec: str) -> str:
    return DISPLAY_NAMES.get(codec, codec.replace("_", "-"))


def declared_in_header(content_type: str) -> str | None:
    match = HEADER_CHARSET.search(content_type.encode("latin-1", "replace"))
    return match.group(1).decode("ascii") if match else None


def declared_in_meta(payload: bytes) -> str | None:
    match = META_CHARSET.search(payload[:META_SCAN_BYTES])
    return match.group(1).decode("ascii") if match else None


def is_utf8(payload: bytes) -> bool:
    """Whether `payload` decodes as UTF-8 (strict): in C without making its text where `_scan` is built."""
    if _scan is not None:
        return _scan.is_utf8(payload)
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def detect(payload: bytes) -> tuple[str, str]:
    """(codec, source) for a page that declares no charset."""
    if is_utf8(payload):
        return UTF8, "detected"
    sample = payload[:DETECTION_SAMPLE_BYTES]
    # (The bytes over 0x7F counted by what deleting them takes away: one pass in C, not a step per byte.)
    if len(sample) - len(sample.translate(None, NON_ASCII_BYTES)) < MIN_NON_ASCII_TO_DETECT * len(sample):
        return SINGLE_BYTE_FALLBACK, "default"
    best = charset_normalizer.from_bytes(sample).best()
    codec = codec_for_detected(best.encoding) if best is not None else None
    return (codec, "detected") if codec else (SINGLE_BYTE_FALLBACK, "default")


def choose_charset(payload: bytes, content_type: str) -> tuple[str, str]:
    """Returns (Python codec, source) for the payload."""
    for bom, codec in BOMS:
        if payload.startswith(bom):
            return codecs.lookup(codec).name, "bom"
    for source, label in (("http-header", declared_in_header(content_type)), ("meta", declared_in_meta(payload))):
        codec = codec_for_label(label) if label else None
        if codec is None:
            continue
        if codec != UTF8 and not payload.isascii() and is_utf8(payload):
            return UTF8, f"detected (declared {display_name(codec)})"
        return codec, source
    return detect(payload)


def to_utf8(payload: bytes, content_type: str) -> tuple[bytes, str, str]:
    """Returns the payload as UTF-8 bytes, the charset's name and its source.

    Bytes that are invalid in the chosen charset become U+FFFD, as in a
    browser; the page is never rejected for them.
    """
    codec, source = choose_charset(payload, content_type)
    if codec == REPLACEMENT:
        return (REPLACEMENT_PAGE if payload else b""), REPLACEMENT, source
    for bom, _ in BOMS:
        if payload.startswith(bom):
            payload = payload[len(bom):]
            break
    if codec == UTF8 and is_utf8(payload):
        return payload, display_name(codec), source
    return payload.decode(codec, errors="replace").encode("utf-8"), display_name(codec), source


def decode_document(doc: Document) -> Document:
    """`doc` with its payload transcoded to UTF-8 (`utf8_payload`, and `payload` emptied) and its charset; extracted
    text (a WET file's) is UTF-8 as written, its charset not detected (source `EXTRACTED_TEXT_SOURCE`)."""
    if doc.is_extracted_text:
        utf8_payload = doc.payload.decode("utf-8", "replace").encode("utf-8")
        return doc.replace(payload=b"", utf8_payload=utf8_payload, charset=UTF8, charset_source=EXTRACTED_TEXT_SOURCE)
    utf8_payload, charset, source = to_utf8(doc.payload, doc.content_type)
    return doc.replace(payload=b"", utf8_payload=utf8_payload, charset=charset, charset_source=source)
