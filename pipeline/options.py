"""Command-line options of `python -m pipeline`, and the settings they make (`pipeline.settings`).

Options that are not webcorpus's own pass through to Beam as pipeline
options (`--runner`, `--direct_num_workers`, `--temp_location`, ...). An
argument that neither webcorpus nor Beam knows is a mistake, reported with
the nearest real flag: Beam would drop it with a warning, and a misspelled
`--ouput` would build into the default directory.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import re
from typing import Callable
from pathlib import Path

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.runners import create_runner

from pipeline.crawl import (CRAWL_BASES, DEFAULT_SOURCE, LISTING_NAME, check_crawl_name, crawl_base, is_listing,
                            listing_url, parse_file_range)
from pipeline.index_options import INDEX_FLAGS, add_index_options, index_choice
from pipeline.launch import program_name
from pipeline.recipes import RECIPES, with_recipe
from pipeline.settings import MIN_RANGE_BYTES, CorpusSettings, load_manifest, settings_from_manifest

from transforms.corpus.corpus_format import RECORD_DIGEST
from transforms.stages.filters.rule_sets import RULE_SETS
from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.stages.clean_html.guard import DEFAULT_PAGE_MEMORY_MIB, ISOLATE_ABOVE_BYTES
from transforms.stages.decontaminate import DEFAULT_FIELDS, DEFAULT_NGRAM
from transforms.stages.language import parse_languages
from transforms.stages.minimize_text import DEFAULT_SCRIPTS, SCRIPTS
from transforms.stages.site_boilerplate import DEFAULT_MIN_PAGES, DEFAULT_MIN_SHARE, SCOPES, SiteBoilerplate
from transforms.stages.near_dedup import (DEFAULT_BANDS, DEFAULT_ROWS, DEFAULT_SHINGLE_SIZE, DEFAULT_THRESHOLD,
                                          MinHashParameters)
from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES
from transforms.report.report_page import DEFAULT_SAMPLE_SIZE
from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL
from transforms.stages.compress_write.formats import ALL_CODECS, CODECS, DEFAULT_CODECS, DEFAULT_FORMAT
from transforms.stages.compress_write.schema import CLEAN_TEXT, FIELD_NAMES

SAMPLE_WARC = Path(__file__).parent / "data" / "sample.warc.gz"
DEFAULT_OUTPUT = "webcorpus-out"
# Short names for runners that Beam only knows by their module path. Beam
# 2.77's own DaskRunner mixes up tagged outputs and loses what DoFns emit in
# finish_bundle, among other faults: pipeline.runners.dask_runner fixes them.
RUNNER_ALIASES = {"DaskRunner": "pipeline.runners.dask_runner.DaskRunner"}


class OneLineErrorParser(argparse.ArgumentParser):
    """Reports a mistake in one line (no usage block), with exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """--languages, --quality and --quality-threshold: what a build keeps, and a selection too (`pipeline.select`)."""
    parser.add_argument(
        "--languages", default=None, metavar="LIST",
        help="Keep only pages identified as one of these languages, e.g. en,ru (implies --language); the others "
             "are skipped as other-language, with their language in skipped-*.jsonl.",
    )
    parser.add_argument(
        "--quality", default=None, metavar="LIST",
        help=f"Quality rule sets to apply, in the order given, to each page's readable text after MinimizeText: "
             f"{', '.join(RULE_SETS)} (e.g. fineweb-recipe). A page a rule drops is skipped as filtered, with its "
             "rule and measured value in skipped-*.jsonl; C4 removes lines, and the corpus holds the filtered text. "
             "Implies --language (English-only rules apply to English pages). See docs/stages.md.",
    )
    parser.add_argument(
        "--quality-threshold", action="append", default=[], metavar="NAME=VALUE", dest="quality_threshold",
        help="Change a --quality threshold, e.g. gopher_quality.min_doc_words=100 (names and defaults: "
             "docs/options.md; every threshold is recorded in the manifest). Repeatable.",
    )


def add_extend_arguments(parser: argparse.ArgumentParser) -> None:
    """--extend and --trust-corpus: the earlier corpora whose contents a build leaves out, and a selection too."""
    parser.add_argument(
        "--extend", action="append", default=[], metavar="CORPUS",
        help="Extend an earlier corpus (the directory of its build): leave out every page whose content (and, with "
             "--near-dedup, near-duplicate) it already holds, reading only its index (index-*.bin), checked against "
             "its manifest. Its manifest must be one a build of this user signed (manifest_hmac), and it must have the "
             "same text-shaping options (--drop-selector, --main-content, --scripts, --quality, --annotate, --pii) and "
             "near-dedup settings. Repeatable.",
    )
    parser.add_argument(
        "--trust-corpus", action="append", default=[], metavar="CORPUS",
        help="With --extend CORPUS (or --rebuild of a build that extended it): take CORPUS though no build of this "
             "user signed its manifest (another user's corpus, an export). Its checksum must still hold, and its "
             "index be the files its manifest lists. Repeatable.",
    )


def add_near_dedup_arguments(parser: argparse.ArgumentParser) -> None:
    """--near-dedup and its parameters (`stage_settings` with `NEAR_DEDUP_FLAGS`), of a build and of a selection."""
    parser.add_argument(
        "--near-dedup", action="store_true", default=None,
        help="Also drop near-duplicates (MinHash over word shingles of the minimized text, LSH in bands): each "
             "cluster keeps one page, chosen like exact duplicates; the dropped pages are listed in "
             "near-duplicates-*.jsonl with their survivor and estimated similarity.",
    )
    parser.add_argument(
        "--near-dedup-threshold", type=float, default=None, metavar="SIMILARITY",
        help=f"Estimated Jaccard similarity from which two pages are near-duplicates (default {DEFAULT_THRESHOLD}).",
    )
    parser.add_argument(
        "--near-dedup-shingle-size", type=int, default=None, metavar="WORDS",
        help=f"Words per shingle (default {DEFAULT_SHINGLE_SIZE}).",
    )
    parser.add_argument(
        "--near-dedup-bands", type=int, default=None, metavar="N",
        help=f"LSH bands (default {DEFAULT_BANDS}); the signature has bands x rows hash values.",
    )
    parser.add_argument(
        "--near-dedup-rows", type=int, default=None, metavar="N",
        help=f"Hash values per LSH band (default {DEFAULT_ROWS}).",
    )


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog=program_name(),
        description=(
            "Turn WARC files into a clean, deduplicated, compressed Avro corpus. "
            "Options not listed here are passed to Apache Beam (for example --runner, "
            "--direct_num_workers, --direct_running_mode, --temp_location); one that Beam "
            "does not know either is an error. --runner=DirectRunner (the default) runs webcorpus's patched "
            "FnApiRunner (pipeline/runners/local_runner.py); --runner=FnApiRunner runs Beam's own, unpatched."
        ),
    )
    parser.add_argument(
        "--recipe", default=None, choices=sorted(RECIPES),
        help="Set the options of a corpus people build (docs/recipes.md lists each one's flags); options given "
             "as well win over the recipe's. The manifest records the recipe and the options it set.",
    )
    parser.add_argument(
        "--input", action="append", default=[], metavar="PATTERN",
        help="WARC files to read: a path or glob on any file system Beam knows (local, gs://, s3://, https://, "
             f"...), or a listing of WARC files ({LISTING_NAME} or a plain .paths file, one file a line). Repeat for "
             "several patterns. Default: the sample WARC shipped with the package.",
    )
    parser.add_argument(
        "--crawl", default=None, metavar="NAME",
        help="A Common Crawl snapshot by name, e.g. CC-MAIN-2024-33: its listing "
             f"(crawl-data/NAME/{LISTING_NAME}) is read and its WARC files are the input (instead of --input).",
    )
    parser.add_argument(
        "--files", default=None, metavar="START:END",
        help="Only lines START to END-1 of the listing (--crawl, or a listing given as --input), 0-based, e.g. 0:100; "
             "either end may be left out.",
    )
    parser.add_argument(
        "--crawl-source", default=None, choices=sorted(CRAWL_BASES),
        help=f"Where Common Crawl's files are read from: https ({CRAWL_BASES['https']}, the default) or s3 "
             f"({CRAWL_BASES['s3']}, for jobs in AWS us-east-1; needs apache-beam[aws]).",
    )
    parser.add_argument(
        "--crawl-base-url", default=None, metavar="URL",
        help="Read the crawl's listing and files under this URL instead (a mirror, or a local copy laid out as "
             "Common Crawl's: URL/crawl-data/NAME/...).",
    )
    parser.add_argument(
        "--output", default=DEFAULT_OUTPUT, metavar="DIR",
        help=f"Directory for the corpus, report and side outputs (default: ./{DEFAULT_OUTPUT}). "
             "A build published there earlier is replaced once the new one is complete; nothing else in it is "
             "touched. It may be beside the inputs, as long as no --input pattern matches the files it writes there.",
    )
    parser.add_argument(
        "--format", default=None, choices=list(CODECS),
        help="File format of the corpus files: avro (the default), parquet (read natively by datasets, DuckDB, "
             "Polars, pandas, Spark) or jsonl (JSON Lines). The same records, fields and shards in each.",
    )
    parser.add_argument(
        "--codec", default=None, choices=ALL_CODECS,
        help="Codec of the corpus files: for avro "
             + ", ".join(CODECS["avro"]) + f" (default {DEFAULT_CODECS['avro']}; use deflate for readers that only "
             "know the codecs every Avro reader must: null and deflate); for parquet "
             + ", ".join(CODECS["parquet"]) + f" (default {DEFAULT_CODECS['parquet']}); for jsonl "
             + ", ".join(CODECS["jsonl"]) + f" (default {DEFAULT_CODECS['jsonl']}: .jsonl.zst; gzip: .jsonl.gz).",
    )
    parser.add_argument(
        "--level", type=int, default=None,
        help="Codec level: deflate 0-9 (default 6), zstandard and zstd 1-22 (default 9), gzip 1-9 (default 6), "
             "xz 0-9 (default 6), bzip2 1-9 (default 9); snappy, null and none have none.",
    )
    parser.add_argument(
        "--drop-selector", action="append", default=[], metavar="CSS", dest="drop_selectors",
        help="CSS selector of extra elements to remove with their content, e.g. 'div.warning'. Repeatable.",
    )
    parser.add_argument(
        "--main-content", action="store_true", default=None,
        help="Keep only the page's main content: CleanHtml drops the blocks of menus, footers, sidebars, comment "
             "threads, share and related blocks and cookie banners, decided on the page's own markup. html, text, "
             "clean_text, the content hash and deduplication derive from it; title, links, lang and meta stay "
             "whole-page. A page where no block stands out keeps all its text.",
    )
    parser.add_argument(
        "--scripts", default=None, metavar="LIST",
        help=f"Scripts whose letters MinimizeText keeps: a comma-separated list of {', '.join(SCRIPTS)}, "
             f"or all (default: {','.join(DEFAULT_SCRIPTS)}). Letters of other scripts become spaces; a page whose "
             "letters are mostly dropped is counted in the report and flagged by its dropped_letter_share.",
    )
    parser.add_argument(
        "--clean-text", action="store_true", default=None,
        help=f"Also write {CLEAN_TEXT}: the cleaned text before minimizing (case, punctuation and every script "
             "kept, whitespace collapsed, one block per line). Deduplication stays on the minimized text.",
    )
    parser.add_argument(
        "--language", action="store_true", default=None,
        help="Identify each page's language from its text (fields language and language_confidence, beside the "
             "declared lang; the report counts documents and bytes per language).",
    )
    add_selection_arguments(parser)
    parser.add_argument(
        "--annotate", action="store_true", default=None,
        help="With --quality: measure every rule of its rule sets on each page and write the values in the field "
             "signals (with clean_text, the readable text they measured), dropping and editing nothing for quality; "
             "beside them the language's confidence, the main content's share, PII counts and the duplicate "
             "clusters' sizes, as asked for. A selection then decides without the WARC files. See docs/output.md.",
    )
    parser.add_argument(
        "--quality-pack", default=None, metavar="FILE", dest="quality_pack",
        help="With --quality fineweb2: the language packs to judge each page by, a file in the format of the ones "
             "webcorpus ships (python -m pipeline.fineweb2_packs writes them); recorded in the manifest with its "
             "SHA-256. See docs/stages.md.",
    )
    parser.add_argument(
        "--quality-model", action="append", default=[], metavar="FILE", dest="quality_model",
        help="Score each page's readable text with this fastText supervised model (.bin or quantized .ftz, e.g. one "
             "trained by python -m pipeline.train_quality): the probability of its label is the signal model/NAME "
             "(NAME: the file's name without its extension), written with --annotate. Repeatable. See docs/stages.md.",
    )
    parser.add_argument(
        "--quality-model-label", action="append", default=[], metavar="NAME=LABEL", dest="quality_model_label",
        help="The label whose probability a --quality-model gives (default __label__positive, train_quality's "
             "positive class), e.g. dclm=__label__hq. Repeatable.",
    )
    parser.add_argument(
        "--quality-model-threshold", action="append", default=[], metavar="NAME=VALUE",
        dest="quality_model_threshold",
        help="Drop a page, as filtered, whose --quality-model NAME scores below VALUE (without --annotate), e.g. "
             "dclm=0.018. Repeatable.",
    )
    parser.add_argument(
        "--decontaminate", action="append", default=[], metavar="FILE", dest="decontaminate",
        help="Drop, as filtered, each page sharing an n-gram of words with an item of this benchmark (JSON Lines, "
             "an item's text in its text field, or plain text, one item a line; normalised as datatrove does); with "
             "--annotate the matches are the signal decontamination/NAME instead. Repeatable. See docs/stages.md.",
    )
    parser.add_argument(
        "--decontaminate-fields", metavar="FIELD,...",
        help="The JSON fields of a --decontaminate item's text (default text), e.g. question,answer.",
    )
    parser.add_argument(
        "--decontaminate-ngram", type=int, metavar="N", help="The words of a --decontaminate n-gram (default 13).",
    )
    parser.add_argument(
        "--url-blocklist", action="append", default=[], metavar="FILE", dest="url_blocklist",
        help="Skip captures whose URL this file lists, as url-blocked, from the record's headers before its payload "
             "is read: one entry a line, a domain (and its subdomains), a host (hosts-file form, 0.0.0.0 HOST) or a "
             "URL prefix (with or without its scheme, as UT1's urls files); # starts a comment. Repeatable.",
    )
    parser.add_argument(
        "--tokenizer", metavar="FILE",
        help="Count each document's tokens of its readable text (clean_text, as written) with this Hugging Face "
             "tokenizer.json (read with the tokenizers package; nothing is downloaded): a token_count field, and "
             "token totals per language, kept and dropped, in the report and the manifest. See docs/output.md.",
    )
    parser.add_argument(
        "--respect-opt-out", action="store_true", default=None,
        help="Skip pages that reserve text and data mining, as opted-out: the HTTP header tdm-reservation: 1 or "
             "<meta name=\"tdm-reservation\" content=\"1\"> (W3C TDMRep), and noai in X-Robots-Tag or "
             "<meta name=\"robots\">. See docs/stages.md.",
    )
    parser.add_argument(
        "--pii", action="store_true", default=None,
        help="Replace e-mail addresses and public IPv4 and IPv6 addresses in html, text and clean_text by fixed "
             "placeholders (email@example.com, 22.214.171.124, 2001:db8::1), before the content hash; private and "
             "reserved addresses, version numbers and dates are left alone. The report counts them per kind.",
    )
    parser.add_argument(
        "--fields", default=None, metavar="LIST",
        help=f"The fields to write, comma-separated, e.g. url,text,{CLEAN_TEXT} (default: all but {CLEAN_TEXT}; "
             f"{RECORD_DIGEST} is always written). Fields: {', '.join(FIELD_NAMES)}.",
    )
    parser.add_argument(
        "--block-size", type=int, default=None, metavar="BYTES", dest="sync_interval",
        help=f"Uncompressed bytes per Avro block; larger blocks compress better (default {DEFAULT_SYNC_INTERVAL}).",
    )
    parser.add_argument(
        "--range-size", type=int, default=None, metavar="BYTES", dest="range_bytes",
        help="Files gzipped per record and bigger than this are read in ranges of this many bytes, in parallel, "
             f"each with its own corpus shard (default {DEFAULT_RANGE_BYTES}, at least {MIN_RANGE_BYTES}).",
    )
    parser.add_argument(
        "--page-timeout", type=float, default=None, metavar="SECONDS",
        help="Pages that could be slow or large to parse (many tags, attributes or unclosed elements, or over "
             f"{ISOLATE_ABOVE_BYTES >> 20} MiB) are cleaned in a child process; one that takes longer than this, or crashes the parser, goes "
             f"to the dead letter (default {DEFAULT_PAGE_TIMEOUT:g}).",
    )
    parser.add_argument(
        "--page-memory", type=int, default=None, metavar="MIB", dest="page_memory",
        help="Memory a page may take in that child process, beyond the child's own; a page that needs more goes "
             f"to the dead letter, 'over the memory limit of N MiB' (default {DEFAULT_PAGE_MEMORY_MIB}).",
    )
    parser.add_argument(
        "--report-sample", type=int, default=None, metavar="PAGES",
        help=f"Kept pages that report.html's page inspector shows, original beside kept text: the same sample on "
             f"every build (default {DEFAULT_SAMPLE_SIZE}; 0 for none).",
    )
    parser.add_argument(
        "--max-page-bytes", type=int, default=None, metavar="BYTES",
        help="A page whose payload decodes (transfer coding and Content-Encoding removed) to more bytes than this "
             f"is skipped as too-large without being read further (default {DEFAULT_MAX_PAGE_BYTES}).",
    )
    parser.add_argument(
        "--skip-truncated", action="store_true", default=None,
        help="Skip pages cut short (WARC-Truncated: Common Crawl cuts payloads over 1 MiB; or cut by the end of "
             "their file) as `truncated`, instead of keeping what was received (each record's `truncated` field "
             "says why and how much).",
    )
    add_near_dedup_arguments(parser)
    parser.add_argument(
        "--site-boilerplate", action="store_true", default=None,
        help="Remove the lines (blocks) that repeat across the pages of a site (its registered domain): a line on at "
             "least --boilerplate-min-pages of the site's distinct pages and at least --boilerplate-min-share of "
             "them, after --main-content and before --quality and deduplication. Such a build does not resume: "
             "each page's text depends on every other page of its site.",
    )
    parser.add_argument(
        "--site-boilerplate-scope", default=None, choices=SCOPES,
        help="Where lines are counted: domain (each registered domain's pages, the default) or crawl (all pages).",
    )
    parser.add_argument(
        "--boilerplate-min-pages", type=int, default=None, metavar="N",
        help=f"Distinct pages of its site a line must be on to be removed, at least 2 (default {DEFAULT_MIN_PAGES}).",
    )
    parser.add_argument(
        "--boilerplate-min-share", type=float, default=None, metavar="SHARE",
        help=f"Share of its site's distinct pages a line must be on to be removed, in [0, 1] "
             f"(default {DEFAULT_MIN_SHARE}).",
    )
    add_extend_arguments(parser)
    parser.add_argument(
        "--verbose", action="store_true",
        help="Show Beam's and its workers' logging on stderr (otherwise it goes to a log file that a failed "
             "build names, and only the progress line and the report reach the terminal).",
    )
    parser.add_argument(
        "--quiet", action="store_true",
        help="No progress display on stderr (it is shown on local runs).",
    )
    parser.add_argument(
        "--no-resume", action="store_true",
        help="Start afresh: do not reuse the units (byte ranges) that an interrupted earlier run of the same build "
             "on --output finished (reused by default; docs/robustness.md).",
    )
    parser.add_argument(
        "--rebuild", metavar="MANIFEST",
        help="Build again from a build's manifest.json (its inputs and options) into --output, and say whether "
             "the result is byte-identical. Takes none of the options above but --output. The manifest must be one "
             "a build of this user signed (manifest_hmac), and its inputs WARC or ARC files.",
    )
    parser.add_argument(
        "--trust-manifest", action="store_true",
        help="With --rebuild: take a manifest that no build of this user signed (another user's, or one from before "
             "builds signed their manifests). Its checksum must still hold, and its inputs be WARC or ARC files.",
    )
    add_index_options(parser)
    return parser


BUILD_FLAGS = {"input": "--input", "format": "--format", "codec": "--codec", "level": "--level", "drop_selectors": "--drop-selector",
               "main_content": "--main-content",
               "sync_interval": "--block-size", "range_bytes": "--range-size", "page_timeout": "--page-timeout",
               "max_page_bytes": "--max-page-bytes", "skip_truncated": "--skip-truncated",
               "page_memory": "--page-memory", "scripts": "--scripts",
               "report_sample": "--report-sample", "near_dedup": "--near-dedup", "clean_text": "--clean-text",
               "fields": "--fields", "language": "--language", "languages": "--languages",
               "quality": "--quality", "quality_threshold": "--quality-threshold", "quality_pack": "--quality-pack",
               "annotate": "--annotate", "pii": "--pii",
               "url_blocklist": "--url-blocklist", "quality_model": "--quality-model",
               "quality_model_label": "--quality-model-label", "quality_model_threshold": "--quality-model-threshold",
               "decontaminate": "--decontaminate", "decontaminate_fields": "--decontaminate-fields",
               "decontaminate_ngram": "--decontaminate-ngram",
               "respect_opt_out": "--respect-opt-out", "tokenizer": "--tokenizer",
               "near_dedup_threshold": "--near-dedup-threshold", "near_dedup_shingle_size": "--near-dedup-shingle-size",
               "near_dedup_bands": "--near-dedup-bands", "near_dedup_rows": "--near-dedup-rows",
               "crawl": "--crawl", "files": "--files", "crawl_source": "--crawl-source",
               "crawl_base_url": "--crawl-base-url", "extend": "--extend", "recipe": "--recipe",
               "site_boilerplate": "--site-boilerplate", "site_boilerplate_scope": "--site-boilerplate-scope",
               "boilerplate_min_pages": "--boilerplate-min-pages", "boilerplate_min_share": "--boilerplate-min-share",
               **INDEX_FLAGS}
NEAR_DEDUP_FLAGS = {"threshold": "near_dedup_threshold", "shingle_size": "near_dedup_shingle_size",
                    "bands": "near_dedup_bands", "rows": "near_dedup_rows"}



def beam_parser() -> argparse.ArgumentParser:
    """The parser of every Beam pipeline option known now: those of each `PipelineOptions` subclass imported.

    Beam has no public way to name the arguments it does not know (`get_all_options` logs them, or keeps
    them as options), nor to list its flags (its options' names are not their flags: the Dask runner's
    --dask_client_address sets `address`), so this takes the parser `get_all_options` builds, through its
    public `add_extra_args_fn` hook, and asks it; and it reports a bad value as an error, not by exiting.
    """
    parsers = []
    PipelineOptions([]).get_all_options(add_extra_args_fn=parsers.append)
    (parser,) = parsers
    parser.exit_on_error = False
    return parser


def runner_mistake(runner: str) -> str | None:
    """Why Beam cannot make the runner `--runner` names, or None.

    `create_runner` is Beam's own resolution of a runner's name (what `beam.Pipeline` calls, and so what the
    build will run), and imports the runner's module, whose options (the Dask runner's --dask_client_address)
    Beam then knows.
    """
    try:
        create_runner(RUNNER_ALIASES.get(runner, runner))
    except ValueError:
        nearest = difflib.get_close_matches(runner, StandardOptions.KNOWN_RUNNER_NAMES + list(RUNNER_ALIASES), n=1)
        return f"unknown runner {runner}" + (f"; did you mean {nearest[0]}?" if nearest else "")
    except (ImportError, AttributeError) as error:
        # A module that is not there, or does not define the runner.
        return f"cannot load --runner {runner}: {error}"
    return None


def unknown_argument(parser: argparse.ArgumentParser, beam_args: list[str]) -> str | None:
    """Why `beam_args` (what webcorpus's own options left) are not all Beam's options, or None.

    Names the first argument that Beam does not know either, or a runner it
    cannot find or load.
    """
    try:
        runner = beam_parser().parse_known_args(beam_args)[0].runner
        mistake = runner and runner_mistake(runner)
        if mistake:
            return mistake
        beam = beam_parser()
        unknown = beam.parse_known_args(beam_args)[1]
    except argparse.ArgumentError as error:
        return str(error)
    if not unknown:
        return None
    argument = unknown[0]
    if not argument.startswith("-"):
        # Most often a glob the shell expanded: `--input crawl/*.warc.gz` is `--input crawl/a.warc.gz crawl/b.warc.gz`.
        return (f"unexpected argument {argument!r}: every argument is an option, and --input takes one pattern: quote "
                "a glob so that the shell leaves it as it is (--input 'crawl/*.warc.gz'), or give --input before "
                "each file")
    name = argument.split("=", 1)[0]
    flags = [flag for known in (parser, beam) for flag in flags_of(known)]
    nearest = difflib.get_close_matches(name, flags, n=1)
    hint = f"; did you mean {nearest[0]}?" if nearest else " (neither webcorpus nor Beam has it)"
    return f"unknown option {name}{hint}"


# An option's line in argparse's help: two spaces, its flags (with their metavars, comma-separated), then its help.
HELP_INVOCATION = re.compile(r"^ {2}(-\S.*?)(?: {2,}|$)", re.MULTILINE)
INVOCATION_FLAG = re.compile(r"(?:^|, )(-{1,2}[A-Za-z][\w-]*)")


def flags_of(parser: argparse.ArgumentParser) -> list[str]:
    """Every flag `parser` takes, as its help lists them: argparse lists its options nowhere else in public."""
    return [flag for invocation in HELP_INVOCATION.findall(parser.format_help())
            for flag in INVOCATION_FLAG.findall(invocation)]


SITE_BOILERPLATE_FLAGS = {"scope": "site_boilerplate_scope", "min_pages": "boilerplate_min_pages",
                          "min_share": "boilerplate_min_share"}


def stage_settings(known: argparse.Namespace, switch: str, flags: dict[str, str], make: Callable):
    """The settings of an optional stage, `make(**given)` from the `flags` given (field -> option's attribute),
    or None without its `switch` (an attribute); a flag of it given without its switch is refused."""
    given = {name: getattr(known, flag) for name, flag in flags.items() if getattr(known, flag) is not None}
    if not getattr(known, switch):
        if given:
            raise ValueError(f"{', '.join(BUILD_FLAGS[flags[name]] for name in given)} need {BUILD_FLAGS[switch]}")
        return None
    return make(**given)


def chosen_inputs(known: argparse.Namespace) -> tuple[tuple[str, ...], str]:
    """The input patterns (a crawl's listing among them) and the base of a crawl's files."""
    if known.crawl_source is not None and known.crawl_base_url is not None:
        raise ValueError("--crawl-source and --crawl-base-url both say where the crawl is; give one")
    base = crawl_base(known.crawl_source or DEFAULT_SOURCE, known.crawl_base_url)
    if known.crawl is not None:
        if known.input:
            raise ValueError("--crawl and --input both name the input; give one")
        return (listing_url(check_crawl_name(known.crawl), base),), base
    if not any(map(is_listing, known.input)):
        given = [flag for name, flag in (("files", "--files"), ("crawl_source", "--crawl-source"),
                                          ("crawl_base_url", "--crawl-base-url")) if getattr(known, name) is not None]
        if given:
            raise ValueError(f"{', '.join(given)} apply to a listing: give --crawl NAME, or a listing ({LISTING_NAME}) "
                             "as --input")
    return tuple(known.input) or (str(SAMPLE_WARC),), base


def parse_known(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """`parser`'s options of `argv`, and the rest, which must be Beam's (exits with status 2 and one line
    otherwise: `unknown_argument`)."""
    known, beam_args = parser.parse_known_args(argv)
    mistake = unknown_argument(parser, beam_args)
    if mistake:
        parser.error(mistake)
    return known, beam_args


def parse_settings(argv: list[str]) -> CorpusSettings:
    """Parses the command line; exits with status 2 and one line on bad input."""
    parser = make_parser()
    known, beam_args = parse_known(parser, argv)
    try:
        if known.rebuild:
            given = [flag for name, flag in BUILD_FLAGS.items() if getattr(known, name) not in (None, [])]
            if given:
                raise ValueError(f"--rebuild takes inputs and options from the manifest; leave out {', '.join(given)}")
            manifest = load_manifest(known.rebuild)
            try:
                return dataclasses.replace(
                    settings_from_manifest(manifest, known.output, tuple(beam_args), known.rebuild, known.quiet,
                                           known.verbose, known.trust_manifest, tuple(known.trust_corpus)),
                    resume=not known.no_resume)
            except (KeyError, TypeError, AttributeError) as error:
                # A manifest is input: one whose options are not a build's is named, not followed.
                raise ValueError(f"--rebuild {known.rebuild}: its options are not a webcorpus build's "
                                 f"({type(error).__name__}: {error})") from error
        if known.trust_manifest:
            raise ValueError("--trust-manifest applies to --rebuild MANIFEST only")
        known = with_recipe(parser, known)
        inputs, base = chosen_inputs(known)
        index = index_choice(known, base)
        if known.sync_interval is not None and (known.format or DEFAULT_FORMAT) != "avro":
            raise ValueError(f"--block-size sets Avro's blocks; --format {known.format} has none")
        return CorpusSettings(
            inputs=() if index else inputs,
            index=index,
            dry_run=known.dry_run,
            output=known.output,
            format=known.format or DEFAULT_FORMAT,
            codec=known.codec,
            level=known.level,
            drop_selectors=tuple(known.drop_selectors),
            main_content=bool(known.main_content),
            sync_interval=DEFAULT_SYNC_INTERVAL if known.sync_interval is None else known.sync_interval,
            range_bytes=DEFAULT_RANGE_BYTES if known.range_bytes is None else known.range_bytes,
            page_timeout=DEFAULT_PAGE_TIMEOUT if known.page_timeout is None else known.page_timeout,
            max_page_bytes=DEFAULT_MAX_PAGE_BYTES if known.max_page_bytes is None else known.max_page_bytes,
            skip_truncated=bool(known.skip_truncated),
            page_memory=DEFAULT_PAGE_MEMORY_MIB if known.page_memory is None else known.page_memory,
            scripts=DEFAULT_SCRIPTS if known.scripts is None else known.scripts,
            report_sample=DEFAULT_SAMPLE_SIZE if known.report_sample is None else known.report_sample,
            near_dedup=stage_settings(known, "near_dedup", NEAR_DEDUP_FLAGS, MinHashParameters),
            site_boilerplate=stage_settings(known, "site_boilerplate", SITE_BOILERPLATE_FLAGS, SiteBoilerplate),
            extend=tuple(known.extend),
            trust_corpora=tuple(known.trust_corpus),
            fields=None if known.fields is None else tuple(filter(None, map(str.strip, known.fields.split(",")))),
            clean_text=bool(known.clean_text),
            language=bool(known.language),
            languages=() if known.languages is None else parse_languages(known.languages),
            quality=() if known.quality is None else tuple(known.quality.split(",")),
            quality_thresholds=tuple(known.quality_threshold),
            annotate=bool(known.annotate),
            pii=bool(known.pii),
            url_blocklists=tuple(known.url_blocklist),
            quality_pack=known.quality_pack or "",
            quality_models=tuple(known.quality_model),
            quality_model_labels=tuple(known.quality_model_label),
            quality_model_thresholds=tuple(known.quality_model_threshold),
            decontaminate=tuple(known.decontaminate),
            decontaminate_fields=DEFAULT_FIELDS if known.decontaminate_fields is None else tuple(
                filter(None, map(str.strip, known.decontaminate_fields.split(",")))),
            decontaminate_ngram=DEFAULT_NGRAM if known.decontaminate_ngram is None else known.decontaminate_ngram,
            respect_opt_out=bool(known.respect_opt_out),
            tokenizer=known.tokenizer or "",
            files=None if known.files is None else parse_file_range(known.files),
            crawl=known.crawl or "",
            crawl_base=base,
            beam_args=tuple(beam_args),
            quiet=known.quiet,
            verbose=known.verbose,
            resume=not known.no_resume,
            recipe=known.recipe or "",
        )
    except ValueError as error:
        parser.error(str(error))
