"""The corpus records' Avro schema: every field a record can have, the default ones, and the `--fields` checks."""

from __future__ import annotations

import difflib
import functools

import fastavro

from transforms.corpus.corpus_format import HASH_ALGORITHM, RECORD_DIGEST
from transforms.vocabulary import DUPLICATE_LIST_CAP


def _string(name: str, doc: str) -> dict:
    return {"name": name, "type": "string", "doc": doc}


def _strings(name: str, doc: str) -> dict:
    return {"name": name, "type": {"type": "array", "items": "string"}, "doc": doc}


def _long(name: str, doc: str) -> dict:
    return {"name": name, "type": "long", "doc": doc}


# The fields of a page as read, cleaned and deduplicated: everything a
# record holds but its record_digest, which is computed from them.
DIGESTED_FIELDS = [
    _string("url", "WARC-Target-URI of the capture."),
    _string("warc_record_id", "WARC-Record-ID of the response record."),
    _string("warc_date", "WARC-Date of the response record (ISO 8601)."),
    _string("source_file", "Path of the WARC file the record was read from."),
    _long("source_offset", "Offset of the record in that file (of its gzip member when gzipped per record)."),
    {"name": "http_status", "type": "int", "doc": "HTTP status code (always 200 for kept pages)."},
    _string("content_type", "HTTP Content-Type header as sent."),
    _string("truncated", "Empty for a whole capture. For a page cut short, why and how much of its HTTP body (as "
                         "stored, before decoding) was received: '<reason>: N bytes received', the reason being "
                         "WARC-Truncated's (length, time, disconnect, unspecified, ...), or 'end-of-file: N of M "
                         "bytes received' for a record the end of its WARC file cuts ('end-of-member': the end of its "
                         "gzip member). Pages cut short are skipped instead with --skip-truncated."),
    _string("charset", "Charset the page was decoded from (WHATWG name)."),
    _string("charset_source", "Where the charset came from: bom, http-header, meta, detected, default."),
    _string("title", "Text of <title>, whitespace collapsed."),
    _strings("links", "Absolute http(s) links of the page, in document order, without repeats."),
    _string("lang", "Language declared by <html lang> or Content-Language <meta>, lowercased; empty if none."),
    {"name": "meta", "type": {"type": "map", "values": "string"},
     "doc": "Selected <meta> values (description, keywords, og:*, ...) and the canonical link."},
    _string("html", "The page reduced to <div> blocks of minimized text (the corpus's content)."),
    _string("text", "The same blocks as plain text, one per line."),
    _string("content_hash", f"{HASH_ALGORITHM} of `html` in UTF-8, lowercase hex."),
    {"name": "duplicate_count", "type": "int", "doc": "Number of other captures with the same content."},
    _strings("duplicate_urls", f"URLs of the first {DUPLICATE_LIST_CAP} of those captures, in survivor order "
                               "(the duplicates file lists them all)."),
    _strings("duplicate_record_ids", "WARC-Record-IDs of the same captures, in the same order."),
    _long("raw_bytes", "Bytes of the HTTP payload after transfer and content decoding."),
    _long("cleaned_bytes", "Bytes of the div-only HTML after CleanHtml."),
    _long("minimized_bytes", "Bytes of `html` after MinimizeText."),
    {"name": "dropped_letter_share", "type": "double",
     "doc": "Share of the page's letters that MinimizeText dropped because their script is not kept "
            "(--scripts); over 0.5: the page is mostly in other scripts (counted as mostly_dropped in the report)."},
]
CLEAN_TEXT = "clean_text"
NEAR_DUPLICATE_COUNT = "near_duplicate_count"
TOKEN_COUNT = "token_count"
SIGNALS = "signals"
# The minimized text, as `<div>` blocks and as lines: an annotated build leaves them out, a selection makes them
# again from the readable text it keeps (`CorpusSettings.written_fields`, `pipeline.select_documents`).
MINIMIZED_FIELDS = ("html", "text")


def _document_schema(fields: list[dict]) -> dict:
    return {"type": "record", "name": "Document", "namespace": "webcorpus",
            "doc": "One deduplicated web page of a webcorpus build.", "fields": fields}


RECORD_DIGEST_FIELD = _string(
    RECORD_DIGEST, "The first 64 bits of the SHA-256 of the Avro binary encoding of every other field of the "
                   "record, in schema order, with the entries of `meta` sorted by key; lowercase hex.")
_NAMES = [field["name"] for field in DIGESTED_FIELDS]
_LANG_INDEX, _TEXT_INDEX = _NAMES.index("lang"), _NAMES.index("text")
LANGUAGE_FIELDS = ("language", "language_confidence")
# Every field a record can have, in the order every schema gives them: the default ones, `language` and
# `language_confidence` (with --language or --languages) after `lang`, `clean_text` (with --clean-text or
# --fields) after `text`, `token_count` (with --tokenizer), `near_duplicate_count` (with --near-dedup), `signals` (with
# --annotate) and `record_digest` last.
ALL_FIELDS = (
    DIGESTED_FIELDS[:_LANG_INDEX + 1]
    + [_string("language", "Language identified from the page's text (fastText lid.176; ISO 639-1 where there is "
                           "one); empty for a page without text."),
       {"name": "language_confidence", "type": "double", "doc": "The identifier's probability for `language`."}]
    + DIGESTED_FIELDS[_LANG_INDEX + 1:_TEXT_INDEX + 1]
    + [_string(CLEAN_TEXT, "The cleaned text before minimizing: CleanHtml's blocks as plain text, one per line, "
                           "case, punctuation and every script kept, whitespace collapsed.")]
    + DIGESTED_FIELDS[_TEXT_INDEX + 1:]
    + [_long(TOKEN_COUNT, "Tokens of the readable text (`clean_text`, as written whether or not the field is) in the "
                          "--tokenizer's tokens, without the special tokens its template adds."),
       {"name": NEAR_DUPLICATE_COUNT, "type": "int",
        "doc": "Number of near-duplicate pages this one stands for (--near-dedup; listed in near-duplicates-*.jsonl)."},
       {"name": SIGNALS, "type": {"type": "map", "values": "double"},
        "doc": "What --annotate measured of the page, by name: every rule of --quality (FAMILY/RULE, the value it "
               "compares with its threshold) and per-document signals (language/, main_content/, pii/, dedup/); "
               "keys in sorted order. See docs/output.md."},
       RECORD_DIGEST_FIELD]
)
FIELD_NAMES = tuple(field["name"] for field in ALL_FIELDS)
FIELDS_BY_NAME = {field["name"]: field for field in ALL_FIELDS}
DEFAULT_FIELDS = tuple(field["name"] for field in DIGESTED_FIELDS) + (RECORD_DIGEST,)


def corpus_schema(fields: tuple[str, ...]) -> dict:
    """The Avro schema of records with these fields (names of FIELD_NAMES, in its order)."""
    return _document_schema([FIELDS_BY_NAME[name] for name in fields])


def resolve_fields(fields: tuple[str, ...] | None, near_dedup: bool = False, clean_text: bool = False,
                   language: bool = False, signals: bool = False, tokens: bool = False,
                   pii: bool = False) -> tuple[str, ...]:
    """The fields a build writes, in schema order; raises ValueError for a name the schema lacks.

    `fields` None: the default ones (and `near_duplicate_count` with `near_dedup`). `clean_text` adds it,
    `language` the language fields, `signals` (--annotate) it and the readable text its signals measured, without
    `MINIMIZED_FIELDS` (a selection makes them again from what it keeps) unless `pii` (--pii's replacements are made
    in each field), `tokens` `token_count` (--tokenizer).
    `record_digest` is always written: it lets `pipeline.verify` and `read_corpus` check every record,
    whichever fields it has.
    """
    if fields is None:
        chosen = set(DEFAULT_FIELDS) - (set(MINIMIZED_FIELDS) if signals and not pii else set()) | (
            {NEAR_DUPLICATE_COUNT} if near_dedup else set())
    else:
        chosen = set(fields)
        for name in fields:
            if name not in FIELDS_BY_NAME:
                nearest = difflib.get_close_matches(name, FIELD_NAMES, n=1)
                hint = f"did you mean {nearest[0]}? " if nearest else ""
                raise ValueError(f"--fields: the schema has no field {name!r}; {hint}"
                                 f"(fields: {', '.join(FIELD_NAMES)})")
    if NEAR_DUPLICATE_COUNT in chosen and not near_dedup:
        raise ValueError(f"--fields {NEAR_DUPLICATE_COUNT} needs --near-dedup")
    chosen |= {RECORD_DIGEST} | ({CLEAN_TEXT} if clean_text or signals else set()) | (set(LANGUAGE_FIELDS) if language else set())
    chosen |= ({SIGNALS} if signals else set()) | ({TOKEN_COUNT} if tokens else set())
    return tuple(name for name in FIELD_NAMES if name in chosen)


CORPUS_SCHEMA = corpus_schema(DEFAULT_FIELDS)
PARSED_SCHEMA = fastavro.parse_schema(CORPUS_SCHEMA)
SCHEMA_FIELDS = DEFAULT_FIELDS


@functools.lru_cache(maxsize=None)
def parsed_schema(fields: tuple[str, ...]):
    """`corpus_schema(fields)` parsed by fastavro, once per choice of fields."""
    return fastavro.parse_schema(corpus_schema(fields))


DUPLICATE_FIELDS = ("duplicate_count", "duplicate_urls", "duplicate_record_ids")
