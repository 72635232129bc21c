"""The run report: what happened to every record, and bytes at every stage.

Each outcome that leaves a stage (a skip, a dead letter, a duplicate, a
written shard's tally) is turned into a small tally (`tally_of`), and the
tallies of a bundle are summed where the outcomes are made
(`report_transform.TallyBundle`); what every document has, it is counted
where the work is done, not by a step over the documents: ReadWarc's
`RecordsRead` per range, MinimizeText's `MostlyDropped` per bundle,
CompressWrite's tallies per shard. The bundles' tallies are summed by one
CombineGlobally (`report_transform.WriteReport`: so the report never holds
documents), built into the report (`build_report`) and written as
`DIR/report.json`. `format_report` renders it as a table. This module holds
no Beam transform: stages import it (CompressWrite tallies its records with
`tally_record`).

The counts add up: `read = kept + duplicates + skipped + dead_letter`, in
total and for each input file; with `--near-dedup`, `near_duplicates` is a
fifth outcome, counted apart from the exact `duplicates`. Each file also
lists its read `errors` (dead letters of the reader) and `notes` (what the
reader noticed that costs no record: warcio's warnings, a file matched by
more than one input pattern). Every input file is listed, from the digests
the manifest lists (`InputDigest`), whatever came of its records.
"""

from __future__ import annotations

import json
from collections import Counter

from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms import native
from transforms.document import DeadLetter, Skip
from transforms.filesystems.locations import redacted
from transforms.report.manifest import DigestingHandle, FileDigest
from transforms.report.signal_histograms import BIN_KEY, SignalTally, signals_section
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS
from transforms.stages.tokens import FILTERED_TOKENS, HASHED_TOKENS, OTHER_LANGUAGE_TOKENS, TOKENS_OF
from transforms.stages.compress_write.schema import CLEAN_TEXT, resolve_fields
from transforms.stages.read_warc.snapshot import InputDigest
from transforms.vocabulary import (DEAD_LETTER, NEAR_DUPLICATES, NON_RESPONSE, READ_WARC, SITE_BOILERPLATE, SITE_BOILERPLATE_DOMAIN,
                                   SKIPPED, Duplicate, EarlierDuplicate,
                                   EarlierNearDuplicate, FilterCounts, MostlyDropped, NearDuplicate, ReadNote,
                                   RecordsRead)

REPORT_NAME = "report.json"
# With --extend: of the duplicates and near-duplicates, those of a document of an earlier corpus.
IN_EARLIER_CORPORA = "in_earlier_corpora"
# With --extend: the same, per earlier corpus, in --extend order.
EARLIER_CORPORA = "earlier_corpora"
OUTCOMES = ("kept", "duplicates", SKIPPED, DEAD_LETTER)
# --main-content's counts: the bytes of boilerplate blocks dropped, and the pages whose main content is all their text.
BOILERPLATE = "boilerplate_dropped"
WHOLE_PAGE_CONTENT = "main_content_whole_page"
# Bytes that the requests of a selection through a capture index fetched of the WARC files.
FETCHED_BYTES = "fetched_bytes"
# A selection through a capture index (`pipeline.index_read`): its report section, and its counts per window of a
# file's records chosen: records, their bytes, the requests that read them, their file, and the records' digest (a
# sum of the records' SHA-256, `pipeline.index_select.record_digest`).
INDEX = "index"
INDEX_MATCHED = "index_matched"
INDEX_MATCHED_BYTES = "index_matched_bytes"
INDEX_REQUESTS = "index_requests"
INDEX_WARC_FILE = "index_warc_file"
INDEX_DIGEST = "index_digest"
DIGEST_SPACE = 1 << 256
# Records of extracted text read (a WET file's conversion records), and what does not apply to them, as the report
# names it: the stages' work on HTML, and the options that shape HTML (by their key in the options).
EXTRACTED_TEXT_RECORDS = "extracted_text"
NOT_APPLIED_TO_TEXT = ("charset detection (DecodeCharset: UTF-8 as written)",
                       "CleanHtml's HTML parsing (its lines are its blocks)")
HTML_OPTIONS = {"main_content": "--main-content", "drop_selectors": "--drop-selector"}
# Pages written though cut short (their `truncated` field says how: ReadWarc keeps them unless --skip-truncated).
TRUNCATED_KEPT = "truncated_kept"
BYTE_STAGES = (
    ("raw_html", "raw HTML"),
    ("cleaned", "cleaned (div-only HTML)"),
    ("minimized", "minimized"),
    ("written", "written (Avro files)"),
)
# The files a build of another `--format` writes (its options name the format; an Avro build's do not).
# The fields that each hold the page's text, minimized or readable.
TEXT_FIELDS = ("html", "text", CLEAN_TEXT)
FORMAT_FILES = {"parquet": "Parquet files", "jsonl": "JSON Lines files"}
# With --tokenizer: the report's token totals (`tokens_section`), kept and dropped by each step that drops.
TOKENS = "tokens"
KEPT_TOKENS = "kept"
TOKENS_DROPPED = ("language", "quality", "duplicates")


def byte_stages(options: dict) -> tuple[tuple[str, str], ...]:
    """BYTE_STAGES, with the written files named as the build's format."""
    files = FORMAT_FILES.get(options.get("format"))
    return tuple((name, f"written ({files})" if files and name == "written" else label)
                 for name, label in BYTE_STAGES)


def text_copies(options: dict) -> str | None:
    """A line saying how many times the written files hold the page's text, where more than once: "minimized" counts
    `html` alone, and Parquet compresses each column apart, so its files can come out larger than that."""
    fields = resolve_fields(None if options.get("fields") is None else tuple(options["fields"]),
                            "near_dedup" in options, options.get("clean_text", False), options.get("language", False),
                            options.get("annotate", False), pii=options.get("pii", False))
    texts = [name for name in TEXT_FIELDS if name in fields]
    if len(texts) < 2:
        return None
    apart = ", in columns compressed apart" if options.get("format") == "parquet" else ""
    return f"  the text is in {len(texts)} fields ({', '.join(texts)}){apart}; --fields url,title,clean_text: in 1"


def _tally(source_file: str, *names: str, **amounts: int) -> Counter:
    tally = Counter({("total", name): 1 for name in names})
    tally.update({("file", source_file, name): 1 for name in names if name in OUTCOMES + ("read", NEAR_DUPLICATES)})
    tally.update({("bytes", name): amount for name, amount in amounts.items()})
    return tally


def tally_records_read(read: RecordsRead) -> Counter:
    """The records ReadWarc read from a range: every record is counted as read here, and by its outcome
    elsewhere."""
    tally = Counter({("total", "read"): read.records, ("file", read.source_file, "read"): read.records})
    if read.fetched_bytes:
        # (A file's size once, however many of its units read from it.)
        tally.update({("total", FETCHED_BYTES): read.fetched_bytes, ("file_size", read.source_file, read.file_size): 1})
    if read.extracted_text:
        tally[("total", EXTRACTED_TEXT_RECORDS)] += read.extracted_text
    if read.non_response:
        # (Each as its skip would be tallied, had it been listed: `tally_skip`.)
        tally.update({key: count * read.non_response
                      for key, count in _tally(read.source_file, "skipped", f"skipped:{NON_RESPONSE}").items()})
    return tally


def tally_skip(skip: Skip) -> Counter:
    """A record skipped, by ReadWarc or after reading (`no-text`)."""
    return _tally(skip.source_file, "skipped", f"skipped:{skip.kind}")


def tally_dead_letter(dead: DeadLetter) -> Counter:
    tally = Counter()
    if dead.stage == READ_WARC:
        # What went wrong reading a file (a cut tail, corrupt data) is listed with the file.
        tally[("error", dead.source_file, f"offset {dead.source_offset}: {dead.reason}")] += 1
    tally.update(_tally(dead.source_file, "dead_letter", f"dead_letter:{dead.stage}",
                        skipped_corrupt=dead.skipped_bytes))
    return tally


def tally_input(digest: InputDigest) -> Counter:
    """An input file of the build: listed with its file, whatever came of its records (none at all, even)."""
    return Counter({("input", digest.path): 1})


def tally_note(note: ReadNote) -> Counter:
    """A note of the reader's (a warning of warcio's, a file matched twice), listed with its file; not a record."""
    return Counter({("note", note.source_file, note.line()): 1})


def tally_record(record: dict, thresholds: dict | None = None, into: Counter | None = None,
                 signals_into: SignalTally | None = None) -> Counter:
    """What a record written to the corpus adds (`record`: its staging record, `RecordLayout.staged`); with
    --tokenizer its tokens, with --annotate its signals' bins (`signal_histograms`, each side of `thresholds`:
    every --quality threshold by name); added to `into` (a shard's tally), or to a new Counter. The signals' bins go
    to `signals_into` (a shard's, added to its tally at the shard's end) where it is given."""
    tally = _tally(record["source_file"], "kept", f"charset:{record['charset']} ({record['charset_source']})",
                   raw_html=record["raw_bytes"], cleaned=record["cleaned_bytes"], minimized=record["minimized_bytes"])
    if record["truncated"]:
        tally[("total", TRUNCATED_KEPT)] += 1
    # With --main-content: the boilerplate dropped, and the pages that had none (main content was the whole page).
    tally[("bytes", BOILERPLATE)] += record.get("boilerplate_bytes", 0)
    if not record.get("boilerplate_bytes"):
        tally[("total", WHOLE_PAGE_CONTENT)] += 1
    if "language" in record:
        language = record["language"] or "none"
        tally.update({("language", language, "documents"): 1, ("language", language, "raw_bytes"): record["raw_bytes"],
                      ("language", language, "minimized_bytes"): record["minimized_bytes"]})
    if "token_count" in record:
        tally[(TOKENS, record.get("language") or "none", KEPT_TOKENS)] += record["token_count"]
    if record.get("signals"):
        signals = SignalTally(thresholds or {}) if signals_into is None else signals_into
        signals.add(record["signals"], record.get("language", ""), record.get("token_count", 0))
        if signals_into is None:
            tally = signals.add_to(tally)
    if into is None:
        return tally
    into.update(tally)
    return into


def tally_mostly_dropped(mostly_dropped: MostlyDropped) -> Counter:
    """Documents most of whose letters MinimizeText dropped (their scripts are not kept: --scripts)."""
    return Counter({("total", "mostly_dropped"): mostly_dropped.documents})


def tally_filter_counts(filter_counts: FilterCounts) -> Counter:
    """What QualityFilter did to a bundle: documents and raw bytes dropped per rule, lines removed per line rule;
    and the tokens of each outcome per language (`tokens_of:OUTCOME:LANGUAGE`, QualityFilter's and CountTokens')."""
    tally = Counter()
    for name, amount in filter_counts.counts:
        measure, _, outcome_language = name.partition(":")
        if measure == TOKENS_OF:
            outcome, _, language = outcome_language.partition(":")
            tally[(TOKENS, language, outcome)] += amount
        else:
            tally[("filter", name)] += amount
    return tally


def tally_duplicate(duplicate: Duplicate) -> Counter:
    return _tally(duplicate.source_file, "duplicates")


def _tally_earlier(source_file: str, name: str, corpus: str) -> Counter:
    tally = _tally(source_file, name, f"{IN_EARLIER_CORPORA}:{name}")
    # By the corpus as the manifest's options name it.
    tally[(EARLIER_CORPORA, redacted(corpus), name)] += 1
    return tally


def tally_earlier_duplicate(duplicate: EarlierDuplicate) -> Counter:
    return _tally_earlier(duplicate.source_file, "duplicates", duplicate.survivor_corpus)


def tally_written(shard: FileDigest) -> Counter:
    return Counter({("bytes", "written"): shard.size, ("total", "output_files"): 1})


def tally_near_duplicate(duplicate: NearDuplicate) -> Counter:
    return _tally(duplicate.source_file, NEAR_DUPLICATES)


def tally_earlier_near_duplicate(duplicate: EarlierNearDuplicate) -> Counter:
    return _tally_earlier(duplicate.source_file, NEAR_DUPLICATES, duplicate.survivor_corpus)


# The tally of each kind of outcome that the report counts (a Counter is already a tally: CompressWrite's).
TALLY_OF_KIND = {
    RecordsRead: tally_records_read,
    Skip: tally_skip,
    DeadLetter: tally_dead_letter,
    ReadNote: tally_note,
    InputDigest: tally_input,
    MostlyDropped: tally_mostly_dropped,
    FilterCounts: tally_filter_counts,
    Duplicate: tally_duplicate,
    EarlierDuplicate: tally_earlier_duplicate,
    NearDuplicate: tally_near_duplicate,
    EarlierNearDuplicate: tally_earlier_near_duplicate,
    FileDigest: tally_written,
    Counter: Counter,
}


def tally_of(outcome) -> Counter:
    """The tally of any outcome the report counts (`TALLY_OF_KIND`)."""
    return TALLY_OF_KIND[type(outcome)](outcome)


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def outcomes_of(options: dict) -> tuple[str, ...]:
    return OUTCOMES + (NEAR_DUPLICATES,) if "near_dedup" in options else OUTCOMES


def build_report(tally: Counter, options: dict) -> dict:
    outcomes = outcomes_of(options)
    totals = {key[1]: value for key, value in tally.items() if key[0] == "total"}
    counts = {name: totals.get(name, 0) for name in ("read",) + outcomes}
    files: dict[str, dict] = {}
    for key, value in tally.items():
        if key[0] in ("file", "error", "note", "input"):
            per_file = files.setdefault(key[1], dict({name: 0 for name in ("read",) + outcomes}, errors=[], notes=[]))
            if key[0] == "file":
                per_file[key[2]] = value
            elif key[0] != "input":
                per_file[f"{key[0]}s"].append(key[2])
    for per_file in files.values():
        per_file["errors"].sort()
        per_file["notes"].sort()

    def by_prefix(prefix: str) -> dict[str, int]:
        return dict(sorted((name[len(prefix):], value) for name, value in totals.items() if name.startswith(prefix)))

    sizes = {name: tally.get(("bytes", name), 0) for name, _ in BYTE_STAGES}
    languages: dict[str, dict[str, int]] = {}
    for key, value in sorted(tally.items()):
        if key[0] == "language":
            languages.setdefault(key[1], {})[key[2]] = value
    optional = {"languages": languages} if "language" in options else {}
    if {"quality", "pii", "quality_models", "decontaminate"} & set(options):
        optional["filters"] = filter_section(tally, "tokenizer" in options)
    if "tokenizer" in options:
        optional[TOKENS] = tokens_section(tally)
    if any(key[0] == BIN_KEY for key in tally):
        optional["signals"] = signals_section(tally, options.get("quality_thresholds", DEFAULT_THRESHOLDS))
    if options.get("main_content"):
        optional["main_content"] = {"boilerplate_bytes_dropped": tally.get(("bytes", BOILERPLATE), 0),
                                    "whole_page_documents": totals.get(WHOLE_PAGE_CONTENT, 0)}
    if INDEX in options:
        optional[INDEX] = index_section(options[INDEX], tally)
    if "site_boilerplate" in options:
        optional[SITE_BOILERPLATE] = site_boilerplate_section(tally)
    if totals.get(EXTRACTED_TEXT_RECORDS):
        optional[EXTRACTED_TEXT_RECORDS] = extracted_text_section(totals[EXTRACTED_TEXT_RECORDS], options)
    if "extend" in options:
        # Counted among `duplicates` (and `near_duplicates`) too.
        left_out = [name for name in outcomes if name in ("duplicates", NEAR_DUPLICATES)]
        optional[IN_EARLIER_CORPORA] = {name: totals.get(f"{IN_EARLIER_CORPORA}:{name}", 0) for name in left_out}
        optional[EARLIER_CORPORA] = [dict(corpus=earlier["corpus"], **{
            name: tally.get((EARLIER_CORPORA, earlier["corpus"], name), 0) for name in left_out})
            for earlier in options["extend"]]
    return {
        **optional,
        "status": "complete",
        "records": dict(counts, balanced=counts["read"] == sum(counts[name] for name in outcomes) and all(
            per_file["read"] == sum(per_file[name] for name in outcomes) for per_file in files.values())),
        "skipped": by_prefix("skipped:"),
        "dead_letter": by_prefix("dead_letter:"),
        "charsets": by_prefix("charset:"),
        # Documents most of whose letters MinimizeText dropped (their scripts are not kept: --scripts),
        # counted before deduplication; each record tells its share in `dropped_letter_share`.
        "mostly_dropped": totals.get("mostly_dropped", 0),
        TRUNCATED_KEPT: totals.get(TRUNCATED_KEPT, 0),
        "bytes": sizes,
        "corrupt_bytes_skipped": tally.get(("bytes", "skipped_corrupt"), 0),
        "ratios": {
            "raw_html/cleaned": _ratio(sizes["raw_html"], sizes["cleaned"]),
            "cleaned/minimized": _ratio(sizes["cleaned"], sizes["minimized"]),
            "minimized/written": _ratio(sizes["minimized"], sizes["written"]),
            "raw_html/written": _ratio(sizes["raw_html"], sizes["written"]),
        },
        "output_files": totals.get("output_files", 0),
        "files": dict(sorted(files.items())),
        "options": options,
        # Which path of the C accelerators ran (transforms/native/): the corpus is the same either way.
        "accelerator": native.accelerator(),
    }


def index_section(selection: dict, tally: Counter) -> dict:
    """A selection through a capture index: the captures it listed and matched, the bytes of records read, and
    the bytes of the whole WARC files they were read from; the requests that read them, and the records' digest
    (what a rebuild checks: the manifest gives this section too)."""
    return {"captures_listed": selection["listed"], "captures_matched": tally[("total", INDEX_MATCHED)],
            "matched_bytes": tally[("total", INDEX_MATCHED_BYTES)], "requests": tally[("total", INDEX_REQUESTS)],
            "records_bytes_read": tally[("total", FETCHED_BYTES)],
            "warc_files": sum(1 for key in tally if key[0] == INDEX_WARC_FILE),
            "warc_files_bytes": sum(key[2] for key in tally if key[0] == "file_size"),
            "index_files_bytes": sum(file["size"] for file in selection["index_files"]),
            "records_digest": records_digest(tally[("total", INDEX_DIGEST)])}


def records_digest(total: int) -> str:
    """The records' digest from the sum of their SHA-256 (as numbers): the sum modulo 2^256, in hex."""
    return f"{total % DIGEST_SPACE:064x}"


def extracted_text_section(records: int, options: dict) -> dict:
    """The records read as extracted text, and what did not apply to them: the stages' work on HTML, and the options
    given that shape HTML."""
    given = [flag for name, flag in HTML_OPTIONS.items() if options.get(name)]
    return {"records": records, "not_applied": list(NOT_APPLIED_TO_TEXT) + given}


def html_options_not_applied(report: dict) -> str | None:
    """One line for the user where options that shape HTML were given and records of extracted text were read."""
    section = report.get(EXTRACTED_TEXT_RECORDS)
    given = [name for name in section["not_applied"] if name.startswith("--")] if section else []
    if not given:
        return None
    return (f"{', '.join(given)} did not apply to the {section['records']:,} records of extracted text (WET "
            "conversion records): they are text, not HTML")


def filter_section(tally: Counter, tokens: bool = False) -> dict:
    """Per rule (`STEP/RULE`): documents dropped, their raw HTML bytes (and with `tokens`, --tokenizer, their
    tokens), and lines removed by line rules; per kind (`email`, `ipv4`, `ipv6`), the addresses --pii replaced; with
    `--quality fineweb2`, per language, the documents kept and dropped by each rule (`per_language`)."""
    section = {"documents": {}, "raw_bytes": {}, "lines": {}, "replaced": {}, "tokens": {}}
    per_language: dict[str, dict] = {}
    for key, value in sorted(tally.items()):
        if key[0] == "filter":
            measure, _, rule = key[1].partition(":")
            if measure == "language":
                language, _, outcome = rule.partition(":")
                per_language.setdefault(language, {})[outcome] = value
            else:
                section[measure][rule] = value
    return {"documents_dropped": section["documents"], "raw_bytes_dropped": section["raw_bytes"],
            "lines_removed": section["lines"], "pii_replaced": section["replaced"],
            **({"tokens_dropped": section["tokens"]} if tokens else {}),
            **({"per_language": per_language} if per_language else {})}


def tokens_section(tally: Counter) -> dict:
    """With --tokenizer: the tokens kept and dropped (by language selection, --languages; by the quality rules; by
    deduplication: exact and near), in total and per language (`none`: not identified). Deduplication's are the
    tokens of the documents that reached it (`tokens_of:hashed`) less those kept."""
    languages: dict[str, Counter] = {}
    for key, value in tally.items():
        if key[0] == TOKENS:
            languages.setdefault(key[1], Counter())[key[2]] += value
    per_language = {language: {KEPT_TOKENS: counts[KEPT_TOKENS], "language": counts[OTHER_LANGUAGE_TOKENS],
                               "quality": counts[FILTERED_TOKENS],
                               "duplicates": counts[HASHED_TOKENS] - counts[KEPT_TOKENS]}
                    for language, counts in sorted(languages.items())}
    total = Counter()
    for counts in per_language.values():
        total.update(counts)
    return {KEPT_TOKENS: total[KEPT_TOKENS], "dropped": {name: total[name] for name in TOKENS_DROPPED},
            "languages": per_language}


def site_boilerplate_section(tally: Counter) -> dict:
    """What --site-boilerplate removed: lines, their bytes (UTF-8 text) and the documents they were removed from,
    in all and for each of the domains most removed from (by bytes), most first."""
    names = {"lines": "lines_removed", "bytes": "bytes_removed", "documents": "documents_changed"}
    domains: dict[str, dict] = {}
    for key, value in tally.items():
        if key[0] == SITE_BOILERPLATE_DOMAIN:
            domains.setdefault(key[1], {})[names[key[2]]] = value
    top = sorted(domains.items(), key=lambda item: (-item[1]["bytes_removed"], item[0]))
    return {**{names[name]: tally.get((SITE_BOILERPLATE, name), 0) for name in names},
            "top_domains": [dict(domain=domain, **counts) for domain, counts in top]}


def imbalances(report: dict) -> list[str]:
    """Where `read = kept + duplicates + skipped + dead_letter` (+ near duplicates) does not hold: each file's,
    then the total's."""
    outcomes = outcomes_of(report.get("options", {}))
    outcome_names = " + ".join(name.replace("_", " ") for name in outcomes)
    counted = [(f"input {path}", counts) for path, counts in report["files"].items()]
    lines = []
    for where, counts in counted + [("in total", report["records"])]:
        accounted = sum(counts[name] for name in outcomes)
        if counts["read"] != accounted:
            lines.append(f"{where}: read {counts['read']:,}, {outcome_names} {accounted:,} "
                         f"({counts['read'] - accounted:+,} unaccounted)")
    return lines


def format_report(report: dict) -> str:
    records = report["records"]
    outcomes = outcomes_of(report.get("options", {}))
    lines = ["Records", f"  {'read':<36}{records['read']:>12,}"]
    for name in outcomes:
        lines.append(f"  {name.replace('_', ' '):<36}{records[name]:>12,}")
        details = report.get(name, {}) if name in ("skipped", "dead_letter") else {}
        lines.extend(f"    {detail:<34}{count:>12,}" for detail, count in details.items())
    balance = "yes" if records["balanced"] else "NO"
    balance_rule = "read = " + " + ".join(name.replace("_", " ") for name in outcomes)
    lines.append(f"  {balance_rule:<48} {balance}")
    if report.get("mostly_dropped"):
        lines.append(f"  {'most letters not in --scripts':<36}{report['mostly_dropped']:>12,}")
    if report.get(TRUNCATED_KEPT):
        lines.append(f"  {'kept though cut short (truncated)':<36}{report[TRUNCATED_KEPT]:>12,}")
    for name, count in report.get(IN_EARLIER_CORPORA, {}).items():
        lines.append(f"  {name.replace('_', ' ') + ' in an earlier corpus':<36}{count:>12,}")
    for earlier in report.get(EARLIER_CORPORA, []):
        counts = {name: count for name, count in earlier.items() if name != "corpus"}
        lines.append(f"  {earlier['corpus']} left out {sum(counts.values()):,} pages that it holds ("
                     + ", ".join(f"{count:,} {name.replace('_', '-')}" for name, count in counts.items()) + ")")
    if report.get(EXTRACTED_TEXT_RECORDS):
        text = report[EXTRACTED_TEXT_RECORDS]
        lines.append(f"  {'read as extracted text (WET)':<36}{text['records']:>12,}  not applied to them: "
                     + "; ".join(text["not_applied"]))
    if report.get("index"):
        index = report["index"]
        share = index["records_bytes_read"] / index["warc_files_bytes"] if index["warc_files_bytes"] else 0
        lines += ["", "Index", f"  {'captures listed':<36}{index['captures_listed']:>12,}",
                  f"  {'captures matched':<36}{index['captures_matched']:>12,}",
                  f"  {'bytes of records read':<36}{index['records_bytes_read']:>12,}  ({share:.2%} of the "
                  f"{index['warc_files_bytes']:,} bytes of their {index['warc_files']:,} WARC files)"]
    lines += ["", "Bytes (kept documents)", f"  {'stage':<28}{'bytes':>16}{'step':>10}{'total':>10}"]
    previous = None
    first = report["bytes"]["raw_html"]
    for name, label in byte_stages(report.get("options", {})):
        size = report["bytes"][name]
        step = f"{previous / size:.2f}x" if previous and size else ""
        total = f"{first / size:.2f}x" if previous and size else ""
        lines.append(f"  {label:<28}{size:>16,}{step:>10}{total:>10}")
        previous = size
    copies = text_copies(report.get("options", {}))
    if copies:
        lines.append(copies)
    if report.get("languages"):
        lines += ["", "Languages (kept documents, identified)",
                  f"  {'language':<28}{'documents':>16}{'raw HTML bytes':>16}"]
        by_documents = sorted(report["languages"].items(), key=lambda item: (-item[1]["documents"], item[0]))
        lines.extend(f"  {language:<28}{counts['documents']:>16,}{counts['raw_bytes']:>16,}"
                     for language, counts in by_documents)
    if report.get("filters"):
        filters = report["filters"]
        lines += ["", "Filters (--quality, --quality-model, --decontaminate, --pii)",
                  f"  {'rule':<44}{'documents':>12}{'raw bytes':>14}"]
        lines.extend(f"  {rule:<44}{count:>12,}{filters['raw_bytes_dropped'].get(rule, 0):>14,}"
                     for rule, count in filters["documents_dropped"].items())
        lines.extend(f"  {rule + ' (lines removed)':<44}{count:>12,}" for rule, count in filters["lines_removed"].items())
        lines.extend(f"  {'--pii: ' + kind + ' replaced':<44}{count:>12,}"
                     for kind, count in filters["pii_replaced"].items())
    if report.get(TOKENS):
        lines += ["", "Tokens (--tokenizer)", f"  {'language':<28}{'kept':>16}" + "".join(
            f"{'dropped: ' + name:>22}" for name in TOKENS_DROPPED)]
        rows = [("all", {KEPT_TOKENS: report[TOKENS][KEPT_TOKENS], **report[TOKENS]["dropped"]})]
        rows += list(report[TOKENS]["languages"].items()) if "language" in report.get("options", {}) else []
        lines.extend(f"  {language:<28}{counts[KEPT_TOKENS]:>16,}" + "".join(
            f"{counts[name]:>22,}" for name in TOKENS_DROPPED) for language, counts in rows)
    if report.get("main_content"):
        main_content = report["main_content"]
        dropped, whole = main_content["boilerplate_bytes_dropped"], main_content["whole_page_documents"]
        lines += ["", "Main content (--main-content)",
                  f"  {'boilerplate dropped (div-only HTML bytes)':<44}{dropped:>16,}",
                  f"  {'documents whose main content is all their text':<48}{whole:>12,}"]
    if report.get(SITE_BOILERPLATE):
        removed = report[SITE_BOILERPLATE]
        lines += ["", "Site boilerplate (--site-boilerplate)",
                  f"  {'lines removed':<44}{removed['lines_removed']:>16,}",
                  f"  {'bytes removed (text)':<44}{removed['bytes_removed']:>16,}",
                  f"  {'documents changed':<44}{removed['documents_changed']:>16,}"]
        lines.extend(f"    {domain['domain'][:40]:<42}{domain['lines_removed']:>10,} lines{domain['bytes_removed']:>12,} bytes"
                     for domain in removed["top_domains"])
    if "accelerator" in report:
        lines += ["", f"  {'C accelerators (transforms/native/)':<40}{report['accelerator']:>8}"]
    if report["files"]:
        columns = ("read",) + outcomes
        # (A column at least one wider than its name: `near_duplicates` is not run into `dead_letter`.)
        widths = [max(12, len(column) + 1) for column in columns]
        lines += ["", "Input files",
                  f"  {'file':<44}" + "".join(f"{column:>{width}}" for column, width in zip(columns, widths))]
        for path, counts in report["files"].items():
            name = path.rsplit("/", 1)[-1]
            lines.append(f"  {name[:43]:<44}"
                         + "".join(f"{counts[column]:>{width},}" for column, width in zip(columns, widths)))
            lines.extend(f"    error at {error}" for error in counts["errors"])
            lines.extend(f"    note: {note}" for note in counts["notes"])
    return "\n".join(lines)


def write_report(report: dict, output_dir: str) -> FileDigest:
    """Writes `output_dir/report.json`; returns its digest, taken as it is written."""
    path = FileSystems.join(output_dir, REPORT_NAME)
    with DigestingHandle(FileSystems.create(path)) as handle:
        handle.write(json.dumps(report, indent=2, sort_keys=True).encode("utf-8"))
    return handle.digest(path)


def read_report(output_dir: str) -> dict:
    with FileSystems.open(FileSystems.join(output_dir, REPORT_NAME)) as handle:
        return json.loads(handle.read())
