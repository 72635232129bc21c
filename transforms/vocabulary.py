"""What stages tell each other and the report: names, and the small records that cross from one to another.

No stage imports another stage: a stage and the report both import from here
(and from `document`, the `Document` that flows, with its `Skip` and
`DeadLetter`). Here are
- the stage names, which name their counters (`webcorpus.STAGE`) and their dead letters;
- the names of the outputs (tags) that stages give and the report counts;
- the skip kinds, with what each means;
- `Capture`, which capture a record is about;
- the records a stage hands to another stage or to the report: `Fingerprint`, `Duplicate`, `Survivor`
  (HashDedup), `NearDuplicate`, `NearSurvivor` (NearDedup), `MostlyDropped` (MinimizeText), `FilterCounts`
  (QualityFilter), `ReadNote`,
  `RecordsRead` (ReadWarc).
This module imports no Beam.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass

# --- Stage names -------------------------------------------------------------

READ_WARC = "read_warc"
CHARSET = "charset"
CLEAN_HTML = "clean_html"
LANGUAGE = "language"
MINIMIZE_TEXT = "minimize_text"
QUALITY_FILTER = "quality_filter"
PII_SCRUB = "pii_scrub"
QUALITY_MODEL = "quality_model"
DECONTAMINATE = "decontaminate"
OPT_OUT = "opt_out"
SITE_BOILERPLATE = "site_boilerplate"
HASH_DEDUP = "hash_dedup"
COUNT_TOKENS = "count_tokens"
NEAR_DEDUP = "near_dedup"
COMPRESS_WRITE = "compress_write"
READ_CORPUS = "read_corpus"
# What a selection of an annotated corpus keeps (`pipeline.select`).
SELECT = "select"

# --- Outputs (tags) ----------------------------------------------------------

DOCUMENTS = "documents"
DEAD_LETTER = "dead_letter"
SKIPPED = "skipped"
INPUT_FILES = "input_files"
NOTES = "notes"
RECORDS_READ = "records_read"
MOSTLY_DROPPED = "mostly_dropped"
NEAR_DUPLICATES = "near_duplicates"
NEAR_SURVIVORS = "near_survivors"
FILTER_COUNTS = "filter_counts"
UNITS_READ = "units_read"
# A stage's outputs of counts per unit of reading: what the report sums and a unit's completion record awaits.
COUNTS = (MOSTLY_DROPPED, FILTER_COUNTS)
# A stage's counts of the whole build (`Counter`s of report tallies), of a stage that works across documents
# (`--site-boilerplate`): the report sums them; no unit's record awaits them.
BUILD_COUNTS = "build_counts"
# `--site-boilerplate`'s (site, line hash) of each line removed, and its report tallies' names.
BOILERPLATE_LINES = "boilerplate_lines"
SITE_BOILERPLATE_DOMAIN = "site_boilerplate_domain"

# --- Extracted text ----------------------------------------------------------

# The content type of a document read from a WARC `conversion` record of plain text (Common Crawl's WET files: the
# text a crawler extracted, in UTF-8): its page is text, not HTML, and the stages that read HTML leave it as it is
# (`Document.is_extracted_text`).
EXTRACTED_TEXT = "text/plain"

# --- Skip kinds --------------------------------------------------------------

NON_RESPONSE = "non-response"
REVISIT = "revisit"
NON_HTTP = "non-http"
REDIRECT = "redirect"
ERROR_STATUS = "error-status"
NON_HTML = "non-html"
TRUNCATED = "truncated"
EMPTY = "empty"
TOO_LARGE = "too-large"
NO_TEXT = "no-text"
OTHER_LANGUAGE = "other-language"
FILTERED = "filtered"
URL_BLOCKED = "url-blocked"
OPTED_OUT = "opted-out"

SKIP_KINDS = {
    NON_RESPONSE: "warcinfo, request, metadata and other records that hold no page",
    REVISIT: "a revisit record: the payload is stored elsewhere or was not modified",
    NON_HTTP: "a response record without HTTP headers (dns:, ftp:, ...)",
    REDIRECT: "an HTTP 3xx response",
    ERROR_STATUS: "an HTTP status other than 200 and 3xx",
    NON_HTML: "a Content-Type other than HTML, or a payload that is not HTML",
    TRUNCATED: "the crawler cut the payload (WARC-Truncated), with --skip-truncated (kept otherwise)",
    EMPTY: "an HTML response (or one with no Content-Type) with no payload",
    TOO_LARGE: "an HTML response whose payload decodes to more than the bound (--max-page-bytes)",
    # Given after MinimizeText, by HashDedup's hashing step (`hash_dedup_transform.HashDocuments`).
    NO_TEXT: "an HTML page with no visible text (JavaScript only, a frameset, letters only in scripts not kept)",
    # Given by IdentifyLanguage, with --languages.
    OTHER_LANGUAGE: "a page whose identified language is not one of --languages",
    # Given by QualityFilter, with --quality.
    FILTERED: "a page a quality rule dropped (--quality): its rule set, rule and measured value in the detail",
    # Given by ReadWarc, from the record's headers, with --url-blocklist.
    URL_BLOCKED: "an HTTP response whose URL a --url-blocklist lists (domain, host or URL): which entry in the detail",
    # Given by ReadWarc (HTTP headers) and RespectOptOut (meta tags), with --respect-opt-out.
    OPTED_OUT: "a page that reserves text and data mining (tdm-reservation, noai: --respect-opt-out): how, in the detail",
}

# --- Records -----------------------------------------------------------------


@functools.cache
def field_names(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass, in order."""
    return tuple(field.name for field in dataclasses.fields(kind))


def flat_fields(record) -> dict:
    """A flat record's fields (strings, numbers and sequences of them: every side record's) by name:
    `dataclasses.asdict`'s dict without its deep copy of every value, most of the time a side record took to write."""
    return {name: getattr(record, name) for name in field_names(type(record))}


@dataclass(frozen=True, order=True)
class Capture:
    """Which capture a record is about: when it was captured, its URL and WARC record, and where it was read.

    One value, composed into every record about a capture (`Document`, `Fingerprint`) or extended by them
    (`Duplicate`, `NearDuplicate`: its fields come first, under the same names everywhere). Ordered by HashDedup's
    survivor rule: the earliest `warc_date`, then `url` and `warc_record_id`, then where it was read, so that two
    captures never tie.
    """

    warc_date: str
    url: str
    warc_record_id: str
    source_file: str
    source_offset: int
    source_range: int

    def replace(self, **changes) -> "Capture":
        return dataclasses.replace(self, **changes)

    @property
    def identity(self) -> tuple[str, int, int]:
        """Where the capture was read (source file, byte range, offset): what tells it from every other capture.
        Never its WARC-Record-ID alone: files in the wild repeat record ids, inside one file and across files."""
        return (self.source_file, self.source_range, self.source_offset)

    @property
    def rank(self) -> Rank:
        """The capture as a tuple in survivor order: a key Beam encodes deterministically (NearDedup's)."""
        return (self.warc_date, self.url, self.warc_record_id, self.source_file, self.source_offset, self.source_range)

    @classmethod
    def of_rank(cls, rank: Rank) -> "Capture":
        return cls(*rank[:6])


# A survivor's record lists at most this many of its duplicates (the first in
# survivor order); `duplicate_count` counts them all, and the duplicates file
# maps every one. Enough for a reader to see what a page was copied as, and a
# bound on the size of a record whatever the crawl.
DUPLICATE_LIST_CAP = 100


def content_check(div_html: str) -> str:
    """A second digest of a content, unrelated to its `content_hash` (BLAKE2b-128), and its length."""
    encoded = div_html.encode("utf-8")
    return f"{len(encoded)}:{hashlib.blake2b(encoded, digest_size=16).hexdigest()}"


@dataclass(frozen=True, order=True, slots=True)
class Fingerprint:
    """What HashDedup needs of a document: its capture and content; ordered by the survivor rule (`Capture`)."""

    capture: Capture
    content_hash: str
    content_check: str

    @classmethod
    def of(cls, doc) -> "Fingerprint":
        """The fingerprint of a hashed `Document` (its `html`: the minimized blocks)."""
        return cls(doc.capture, doc.content_hash, content_check(doc.html))

    @property
    def identity(self) -> tuple[str, int, int]:
        return self.capture.identity

    def __reduce__(self):
        # Pickled flat, as it crosses HashDedup's shuffle: 141 bytes, not the 243 of a nested Capture's pickle.
        return _fingerprint, (*self.capture.rank, self.content_hash, self.content_check)


def _fingerprint(*fields) -> Fingerprint:
    return Fingerprint(Capture(*fields[:6]), *fields[6:])


@dataclass(frozen=True)
class Duplicate(Capture):
    """A dropped capture and the survivor that stands for it."""

    content_hash: str
    survivor_url: str
    survivor_record_id: str
    survivor_source_file: str
    survivor_source_offset: int


# The `source_offset` of a document of an earlier corpus (`--extend`): read from its index, from no WARC file of
# this build (every offset read is 0 or more). Its `source_range` is the earlier corpus's position among them.
EARLIER_OFFSET = -1


def earlier_fingerprint(corpus: int, content_hash: str, content_check: str) -> Fingerprint:
    """The fingerprint of a content of earlier corpus `corpus` (its position among `--extend`): before every
    capture in survivor order (its other fields are empty, and every capture's `source_file` is not), so an
    earlier corpus's content is always the survivor."""
    return Fingerprint(Capture("", "", "", "", EARLIER_OFFSET, corpus), content_hash, content_check)


def is_earlier(fingerprint: Fingerprint) -> bool:
    return fingerprint.capture.source_offset == EARLIER_OFFSET


@dataclass(frozen=True)
class EarlierDuplicate(Duplicate):
    """A dropped capture whose content an earlier corpus (`--extend`) holds: the survivor is that corpus's record
    of `content_hash` (its `survivor_*` fields are empty, and `survivor_source_offset` is -1)."""

    survivor_corpus: str


@dataclass(frozen=True)
class Survivor:
    """A kept capture that stands for others: what its record must list."""

    source_file: str
    source_range: int
    source_offset: int
    warc_record_id: str
    duplicate_count: int
    duplicate_urls: tuple[str, ...]
    duplicate_record_ids: tuple[str, ...]


@dataclass(frozen=True)
class NearDuplicate(Capture):
    """A dropped page, the survivor that stands for it, and their estimated similarity."""

    survivor_url: str
    survivor_record_id: str
    similarity: float


@dataclass(frozen=True)
class EarlierNearDuplicate(NearDuplicate):
    """A dropped page near a document of an earlier corpus (`--extend`): that corpus's record of
    `survivor_content_hash` (`survivor_url` and `survivor_record_id` are empty)."""

    survivor_corpus: str
    survivor_content_hash: str


@dataclass(frozen=True)
class NearSurvivor:
    """A kept page that stands for near-duplicates: how many."""

    source_file: str
    source_offset: int
    source_range: int
    near_duplicate_count: int


@dataclass(frozen=True)
class MostlyDropped:
    """How many documents of a unit of reading (as much of it as a bundle held) most of whose letters MinimizeText
    dropped: counted where they are minimized, not by a step of their own over every document.

    `source_file`, `source_range`: the unit; `first_offset`, `seen`: the first and the number of its documents
    counted here (so that a unit's completion record knows every document of it was: `transforms.state.unit_ledger`).
    """

    documents: int
    source_file: str = ""
    source_range: int = 0
    first_offset: int = 0
    seen: int = 0


@dataclass(frozen=True)
class FilterCounts:
    """What QualityFilter did to a bundle's documents, per rule: `documents:STEP/RULE` and `raw_bytes:STEP/RULE`
    (pages dropped, and their raw HTML bytes), `lines:STEP/RULE` (lines a line rule removed from pages kept or
    dropped); ScrubPersonalData, `replaced:KIND` (e-mail and IP addresses replaced); with --tokenizer,
    `tokens:STEP/RULE` and `tokens_of:OUTCOME:LANGUAGE` (`transforms.stages.tokens`). Counted per unit of reading and
    bundle, like `MostlyDropped` (with its `source_file`, `source_range`, `first_offset`, `seen`)."""

    counts: tuple[tuple[str, int], ...]
    source_file: str = ""
    source_range: int = 0
    first_offset: int = 0
    seen: int = 0


@dataclass(frozen=True)
class ReadNote:
    """Something a reader noticed that costs no record: a warning of warcio's, a file matched twice.

    `source_offset` is the record the warning came with (None: the whole file).
    """

    source_file: str
    source_offset: int | None
    text: str

    def line(self) -> str:
        return self.text if self.source_offset is None else f"offset {self.source_offset}: {self.text}"


@dataclass(frozen=True)
class RecordsRead:
    """How many records (documents, skips and dead letters alike) one reading of a range took from a file.

    Counted once per range rather than once per record, so that the report's count of records read
    costs no step per document.
    """

    source_file: str
    records: int
    # Of a unit of the runs a capture index chose: the bytes its requests fetched, and their file's size as the
    # answers gave it (what the report sets the bytes read against).
    fetched_bytes: int = 0
    file_size: int = 0
    # Of these, the records of extracted text (`EXTRACTED_TEXT`): documents the HTML stages do not apply to.
    extracted_text: int = 0
    # Of these, the records that are not responses (`NON_RESPONSE` skips: two of a Common Crawl capture's three
    # records), counted here and never listed: not one element each through the runner.
    non_response: int = 0


@dataclass(frozen=True)
class UnitRead:
    """One reading of a unit (a `WarcRange`: the records that start in [start, end) of a file; end None: to its
    end) ended: how many records it read, the notes it listed, and whether it read the unit whole (a runner may
    split a range while it is read), and the SHA-256 of the file's bytes from `start` to `read_to` (past its last
    record's end): what the unit was read from. What `transforms.state.unit_ledger` checks a unit's outcomes against."""

    source_file: str
    start: int
    end: int | None
    records: int
    notes: tuple[ReadNote, ...]
    whole: bool
    read_to: int
    read_sha256: str
    # Of a unit of the runs a capture index chose: as `RecordsRead`'s.
    fetched_bytes: int = 0
    file_size: int = 0
    extracted_text: int = 0
    # Of a unit of the runs a capture index chose: which runs (`record_runs.runs_digest`).
    runs_sha256: str = ""
    # Of its records, the `non_response` skips counted, as `RecordsRead`'s: records that end with no outcome of their own.
    non_response: int = 0


# A page in NearDedup: its rank is its capture in HashDedup's survivor order (`Capture.rank`), so two captures
# never tie; an earlier corpus's document's rank adds its content hash (`near_dedup.earlier_rank`).
Rank = tuple  # (warc_date, url, warc_record_id, source_file, source_offset, source_range[, content_hash])


@dataclass(frozen=True)
class Candidate:
    """A page signed for NearDedup: its rank and MinHash signature (`transforms.stages.near_dedup`)."""

    rank: Rank
    signature: bytes

    @property
    def identity(self) -> tuple[str, int, int]:
        return Capture.of_rank(self.rank).identity


def band_keys(signature: bytes, bands: int, rows: int) -> list[bytes]:
    """NearDedup's bucket keys of a signature, one per band: the band's index (2 bytes) and a digest of its
    values (12 bytes). Here because an earlier corpus's signatures are picked by them (`corpus_index_transform`)."""
    width = rows * 4
    return [band.to_bytes(2, "big") + hashlib.blake2b(signature[band * width:(band + 1) * width],
                                                      digest_size=12).digest()
            for band in range(bands)]
