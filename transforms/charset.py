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

A declaration is only believed when the bytes agree with it: a page that
declares a legacy single-byte charset but is valid UTF-8 with non-ASCII
bytes is UTF-8 (a common mislabelling); its source then reads
`detected (declared X)`. Labels follow the WHATWG Encoding standard, where
`iso-8859-1` means windows-1252 and `gb2312` means GBK.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

from transforms.document import Document
from transforms.stage import apply_stage

import apache_beam as beam

UTF8 = codecs.lookup("utf-8").name

BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Where the WHATWG Encoding standard (what browsers do) reads a label
# differently from Python's codec of that name, by Python's codec name.
WHATWG_CODECS = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    # A page that says UTF-16 in <meta> was read as ASCII-compatible bytes
    # to find that declaration, so it cannot be UTF-16.
    "utf-16": "utf-8",
    "utf-16-le": "utf-8",
    "utf-16-be": "utf-8",
}
LABEL_ALIASES = {"x-user-defined": "cp1252", "x-sjis": "cp932", "windows-31j": "cp932", "x-gbk": "gbk"}

# Below this share of non-ASCII bytes, detection cannot tell single-byte
# Latin code pages apart (charset-normalizer ties windows-1250, cp852, cp775
# ... and picks one); such pages get the browsers' fallback, windows-1252.
MIN_NON_ASCII_TO_DETECT = 0.005
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
}

HEADER_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
META_SCAN_BYTES = 8192
DETECTION_SAMPLE_BYTES = 256 * 1024


def codec_for_label(label: str) -> str | None:
    """The Python codec for a charset label, or None for an unknown label."""
    label = label.strip().lower()
    try:
        codec = codecs.lookup(LABEL_ALIASES.get(label, label)).name
    except LookupError:
        return None
    return codecs.lookup(WHATWG_CODECS.get(codec, codec)).name


def display_name(codec: str) -> str:
    return DISPLAY_NAMES.get(codec, codec.replace("_", "-"))


def declared_in_header(content_type: str) -> str | None:
    match = HEADER_CHARSET.search(content_type.encode("latin-1", "replace"))
    return match.group(1).decode("ascii") if match else None


def declared_in_meta(payload: bytes) -> str | None:
    match = META_CHARSET.search(payload[:META_SCAN_BYTES])
    return match.group(1).decode("ascii") if match else None


def is_utf8(payload: bytes) -> bool:
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
    if sum(byte > 0x7F for byte in sample) < MIN_NON_ASCII_TO_DETECT * len(sample):
        return SINGLE_BYTE_FALLBACK, "default"
    best = charset_normalizer.from_bytes(sample).best()
    codec = codec_for_label(best.encoding) if best is not None else None
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
    for bom, _ in BOMS:
        if payload.startswith(bom):
            payload = payload[len(bom):]
            break
    if codec == UTF8 and is_utf8(payload):
        return payload, display_name(codec), source
    return payload.decode(codec, errors="replace").encode("utf-8"), display_name(codec), source


def decode_document(doc: Document) -> Document:
    payload, charset, source = to_utf8(doc.payload, doc.content_type)
    return doc.replace(payload=payload, charset=charset, charset_source=source)


class DecodeCharset(beam.PTransform):
    """Transcodes each document's payload to UTF-8 and records its charset."""

    def expand(self, docs):
        return apply_stage(docs, "charset", decode_document)
