"""The command line's options that select captures through a capture index (`pipeline.index_select`)."""

from __future__ import annotations

import argparse

from pipeline.index_files import table_listing_url
from pipeline.index_select import IndexChoice, parse_codes, parse_names

# The options that choose captures of an index, by their attribute on the parsed namespace.
SELECTION_FLAGS = {"index_languages": "--index-languages", "index_domains": "--index-domains",
                   "index_tlds": "--index-tlds", "index_url": "--index-url", "index_mime": "--index-mime",
                   "index_status": "--index-status", "index_limit": "--index-limit", "index_sample": "--index-sample"}
INDEX_FLAGS = {"index": "--index", "index_base": "--index-base", **SELECTION_FLAGS}


def add_index_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "selecting captures through a capture index (Common Crawl's cc-index table; docs/robustness.md)")
    group.add_argument("--index", default=None, metavar="URL_OR_PATH",
                       help="The index's Parquet files: a file, a directory, or a listing of them (.paths, .paths.gz); "
                            "local or http(s). With --crawl NAME and a selection option, Common Crawl's table of that "
                            "crawl (crawl-data/NAME/cc-index-table.paths.gz).")
    group.add_argument("--index-base", default=None, metavar="URL",
                       help="Where each row's warc_filename lies (default: the crawl's base, Common Crawl's own).")
    group.add_argument("--index-languages", default=None, metavar="CODES",
                       help="Keep captures whose main detected language (content_languages, ISO 639-3) is one of "
                            "these, e.g. rus,ukr.")
    group.add_argument("--index-domains", default=None, metavar="DOMAINS",
                       help="Keep captures of these registered domains: example.com,example.org or @FILE.")
    group.add_argument("--index-tlds", default=None, metavar="TLDS", help="Keep captures of these TLDs: ru,ua or @FILE.")
    group.add_argument("--index-url", default=None, metavar="REGEX",
                       help="Keep captures whose URL contains a match of this RE2 regular expression.")
    group.add_argument("--index-mime", default=None, metavar="TYPES",
                       help="Keep captures of these detected MIME types, e.g. text/html,application/xhtml+xml.")
    group.add_argument("--index-status", default=None, metavar="CODES",
                       help="Keep captures of these fetch statuses, e.g. 200.")
    group.add_argument("--index-limit", default=None, type=int, metavar="N",
                       help="Keep the first N matching captures, in the index's order.")
    group.add_argument("--index-sample", default=None, type=float, metavar="FRACTION",
                       help="Keep this fraction of the matching captures, chosen by their URL's hash (the same on "
                            "every run).")
    group.add_argument("--dry-run", action="store_true",
                       help="Print the captures, WARC files and bytes the index selects, with an estimate of the "
                            "time and cost of reading them; read no record, write nothing.")


def _list(value: str | None) -> tuple[str, ...]:
    return () if value is None else tuple(sorted({part.strip() for part in value.split(",") if part.strip()}))


def _statuses(value: str | None) -> tuple[int, ...]:
    codes = _list(value)
    if not all(code.isdigit() for code in codes):
        raise ValueError(f"--index-status takes HTTP status codes, e.g. 200 or 200,301; not {value!r}")
    return tuple(sorted(map(int, codes)))


def index_choice(known: argparse.Namespace, crawl_base: str) -> IndexChoice | None:
    """The selection the options ask for, or None (no index option given)."""
    selecting = [flag for name, flag in SELECTION_FLAGS.items() if getattr(known, name) is not None]
    if known.index is None and not selecting:
        for name, flag in (("index_base", "--index-base"), ("dry_run", "--dry-run")):
            if getattr(known, name):
                raise ValueError(f"{flag} applies to a selection through an index: give --index, or --crawl NAME "
                                 "with --index-languages (or another --index-* option)")
        return None
    if known.input:
        raise ValueError("--input and a selection through an index both name the input; give one")
    if known.files is not None:
        raise ValueError("--files chooses files of a listing; a selection through an index chooses records")
    if known.index is None and known.crawl is None:
        raise ValueError(f"{selecting[0]} selects through an index: give --index URL_OR_PATH, or --crawl NAME")
    source = known.index or table_listing_url(known.crawl, crawl_base)
    return IndexChoice(
        source=source,
        base=(known.index_base or crawl_base).rstrip("/") + "/",
        crawl=known.crawl or "",
        languages=() if known.index_languages is None else parse_codes(known.index_languages),
        domains=() if known.index_domains is None else parse_names(known.index_domains, "--index-domains"),
        tlds=() if known.index_tlds is None else parse_names(known.index_tlds, "--index-tlds"),
        url_pattern=known.index_url or "",
        mimes=_list(known.index_mime),
        statuses=_statuses(known.index_status),
        limit=known.index_limit,
        sample=known.index_sample,
    )


def recorded_choice(manifest: dict) -> IndexChoice | None:
    """The selection a manifest's options record (`IndexChoice.described`), with the digest of the records it chose
    (the manifest's `index` section), or None."""
    if "index" not in manifest["options"]:
        return None
    selection = manifest["options"]["index"]
    if "index" not in manifest:
        raise ValueError("the manifest records its selection through an index as an earlier release did (records_sha256 "
                         "of the records in order): rebuild it with that release")
    return IndexChoice(
        source=selection["index"], base=selection["index_base"], crawl=selection.get("crawl", ""),
        languages=tuple(selection.get("languages", ())), domains=tuple(selection.get("domains", ())),
        tlds=tuple(selection.get("tlds", ())), url_pattern=selection.get("url_pattern", ""),
        mimes=tuple(selection.get("mimes", ())), statuses=tuple(selection.get("statuses", ())),
        limit=selection.get("limit"), sample=selection.get("sample"),
        recorded_digest=manifest["index"]["records_digest"])
