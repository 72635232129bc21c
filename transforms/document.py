"""The records that flow through the pipeline.

One `Document` type travels from ReadWarc to CompressWrite; each stage fills
in its own fields, and a field means one thing from reading to writing. The
page in its successive forms has one field per form (`payload`,
`utf8_payload`, `cleaned_html`, `html`); each is emptied once the next stage
has made the next form of it, so that a document holds one form of its page at
a time and the raw page never crosses a shuffle. Records that leave the main
path are `Skip` (a counted, expected decision such as "this is a redirect")
or `DeadLetter` (a record that could not be processed, with the stage and the
reason). The names of stages, outputs and skip kinds, and the records stages
hand to each other, are in `vocabulary`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from transforms.vocabulary import EXTRACTED_TEXT, FILTERED, Capture


@dataclass
class Document:
    # Where the record came from: its URL, WARC record and date, and where it was read (the source file, the
    # offset of its record, and the start of the byte range it was read in: the unit its corpus shard is written
    # for).
    capture: Capture
    http_status: int
    content_type: str
    # The HTTP payload after transfer and content decoding, in its own charset (ReadWarc); emptied once
    # DecodeCharset has transcoded it to `utf8_payload`.
    payload: bytes = b""
    raw_bytes: int = 0
    # How much of a page cut short was received (ReadWarc): "" for a whole capture, else "REASON: N bytes received"
    # (WARC-Truncated's reason) or "end-of-file: N of M bytes received" ("end-of-member": its gzip member ended).
    truncated: str = ""
    # DecodeCharset: the charset the payload was read in and how it was chosen, and the payload transcoded to
    # UTF-8; `utf8_payload` is emptied once CleanHtml has cleaned it to `cleaned_html`.
    charset: str = ""
    charset_source: str = ""
    utf8_payload: bytes = b""
    # CleanHtml: the page's metadata, and its visible text as `<div>` blocks (`cleaned_html`, emptied once
    # MinimizeText has minimized it to `html`) and their size in UTF-8 (`cleaned_bytes`).
    title: str = ""
    links: list[str] = field(default_factory=list)
    lang: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    cleaned_html: str = ""
    cleaned_bytes: int = 0
    # With --main-content, the size of the blocks CleanHtml dropped as boilerplate, as `<div>` HTML in UTF-8 (not a
    # corpus field: the report counts it).
    boilerplate_bytes: int = 0
    # With --site-boilerplate, the size of the blocks SiteBoilerplate removed from `cleaned_html` as its site's
    # repeated lines, in the same measure (`<div>` HTML in UTF-8; 0 for a page it removed nothing from): the share of
    # `cleaned_bytes` that --annotate records (not a corpus field).
    site_boilerplate_bytes: int = 0
    # IdentifyLanguage (with --language or --languages): the language identified from the text, and how sure.
    language: str = ""
    language_confidence: float = 0.0
    # MinimizeText: the minimized blocks as `<div>` HTML (`html`: what the corpus's `html` field holds) and as
    # plain text, one block a line (`text`).
    html: str = ""
    text: str = ""
    # CleanHtml's blocks as plain text, one per line, before minimizing (MinimizeText, only with --clean-text or
    # --fields).
    clean_text: str = ""
    minimized_bytes: int = 0
    # The share of the page's letters that MinimizeText dropped (letters of
    # scripts not kept, see `--scripts`): 0.0 for a page in the kept scripts.
    dropped_letter_share: float = 0.0
    # HashDedup.
    content_hash: str = ""
    duplicate_count: int = 0
    duplicate_urls: list[str] = field(default_factory=list)
    duplicate_record_ids: list[str] = field(default_factory=list)
    # CountTokens (with --tokenizer): the tokens of `clean_text` as written (`transforms.stages.tokens`).
    token_count: int = 0
    # the measured values of the rules asked for and per-document signals, by name (--annotate)
    signals: dict[str, float] = field(default_factory=dict)

    def replace(self, **changes) -> "Document":
        """`dataclasses.replace(self, **changes)`: a copy of its fields, `changes` among them (a name that is not a
        field is a TypeError, as there), without calling `__init__` with every field (a fourth of the time)."""
        if not changes.keys() <= _DOCUMENT_FIELDS:
            return dataclasses.replace(self, **changes)
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__)
        copied.__dict__.update(changes)
        return copied

    @property
    def is_extracted_text(self) -> bool:
        """Whether the page is text a crawler extracted (a WET file's), not HTML: ReadWarc keeps no other
        response of a plain-text type."""
        return self.content_type == EXTRACTED_TEXT

    def fields(self) -> dict:
        """The document's fields by name, its capture's among them: what a corpus record is written from."""
        return {**vars(self.capture), **vars(self)}


_DOCUMENT_FIELDS = frozenset(field.name for field in dataclasses.fields(Document))


@dataclass(frozen=True)
class Skip:
    """A record deliberately left out, by kind (redirect, non-html, ...)."""

    kind: str
    source_file: str
    source_offset: int
    record_type: str
    warc_record_id: str
    url: str
    detail: str = ""

    @classmethod
    def for_document(cls, kind: str, doc: Document, detail: str = "") -> "Skip":
        """The skip of a document's HTTP response (a stage's decision after reading)."""
        capture = doc.capture
        return cls(kind, capture.source_file, capture.source_offset, "response", capture.warc_record_id, capture.url,
                   detail)


def filtered(doc: Document, name: str, detail: str) -> tuple[Skip, Counter]:
    """`doc` as a `filtered` skip of the rule or signal `name` (`detail`: why), and the page counted under it."""
    return Skip.for_document(FILTERED, doc, detail), Counter({f"documents:{name}": 1,
                                                              f"raw_bytes:{name}": doc.raw_bytes})


@dataclass(frozen=True)
class DeadLetter:
    """A record that a stage could not process."""

    stage: str
    reason: str
    source_file: str
    source_offset: int
    warc_record_id: str
    url: str
    # Bytes of a damaged region that reading skipped to resynchronize.
    skipped_bytes: int = 0

    @classmethod
    def for_document(cls, stage: str, doc: Document, error: BaseException) -> "DeadLetter":
        capture = doc.capture
        return cls(stage=stage, reason=describe_error(error), source_file=capture.source_file,
                   source_offset=capture.source_offset, warc_record_id=capture.warc_record_id, url=capture.url)


def read_at(outcome: Document | Skip | DeadLetter) -> int:
    """The offset of the record an outcome of reading is about (a document's: its capture's)."""
    return outcome.capture.source_offset if isinstance(outcome, Document) else outcome.source_offset


MAX_REASON = 200


def describe_error(error: BaseException, limit: int | None = MAX_REASON) -> str:
    """The error's type and the first line of its message, cut at `limit` characters (None: whole)."""
    message = str(error).strip().splitlines()
    if not message:
        return type(error).__name__
    first = message[0] if limit is None or len(message[0]) <= limit else f"{message[0][:limit]}..."
    return f"{type(error).__name__}: {first}"
