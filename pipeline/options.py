"""Command-line options of `python -m pipeline`, and the settings they make.

Options that are not webcorpus's own pass through to Beam as pipeline
options (`--runner`, `--direct_num_workers`, `--temp_location`, ...). An
argument that neither webcorpus nor Beam knows is a mistake, reported with
the nearest real flag: Beam would drop it with a warning, and a misspelled
`--ouput` would build into the default directory.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from pipeline.crawl import (CRAWL_BASES, DEFAULT_SOURCE, LISTING_NAME, FileRange, check_crawl_name, crawl_base,
                            is_listing, listing_url, parse_file_range)
from pipeline.launch import program_name

from transforms.corpus_format import RECORD_DIGEST
from transforms.sink.avro_encoding import CODECS, DEFAULT_CODEC, DEFAULT_SYNC_INTERVAL, resolve_level
from transforms.sink.schema import CLEAN_TEXT, FIELD_NAMES, LANGUAGE_FIELDS, resolve_fields
from transforms.html_cleaner import (DEFAULT_PAGE_MEMORY_MIB, DEFAULT_PAGE_TIMEOUT, ISOLATE_ABOVE_BYTES,
                                   validate_selectors)
from transforms.language import parse_languages
from transforms.locations import redacted
from transforms.minimize_text import DEFAULT_SCRIPTS, SCRIPTS, parse_scripts
from transforms.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.near_dedup import (DEFAULT_BANDS, DEFAULT_ROWS, DEFAULT_SHINGLE_SIZE, DEFAULT_THRESHOLD,
                                   MinHashParameters)
from transforms.read_warc import DEFAULT_RANGE_BYTES
from transforms.report_page import DEFAULT_SAMPLE_SIZE

SAMPLE_WARC = Path(__file__).parent / "data" / "sample.warc.gz"
# The smallest --range-size: a range is a work item and a shard; smaller ones only multiply them.
MIN_RANGE_BYTES = 1 << 20
DEFAULT_OUTPUT = "webcorpus-out"
# Short names for runners that Beam only knows by their module path. Beam
# 2.77's own DaskRunner mixes up tagged outputs and loses what DoFns emit in
# finish_bundle, among other faults: pipeline.dask_runner fixes them.
RUNNER_ALIASES = {
    "DaskRunner": "pipeline.dask_runner.DaskRunner",
}


def absolute_pattern(pattern: str) -> str:
    """A local path or glob made absolute (and `~` expanded); a URL (`gs://...`) as it is.

    So a build records where its inputs are, not where they were typed from:
    the same files give the same corpus from any directory, and `--rebuild`
    finds them from anywhere.
    """
    if "://" in pattern:
        return pattern
    return os.path.abspath(os.path.expanduser(pattern))


@dataclass(frozen=True)
class CorpusSettings:
    inputs: tuple[str, ...]
    output: str
    codec: str = DEFAULT_CODEC
    level: int | None = None
    drop_selectors: tuple[str, ...] = ()
    sync_interval: int = DEFAULT_SYNC_INTERVAL
    range_bytes: int = DEFAULT_RANGE_BYTES
    page_timeout: float = DEFAULT_PAGE_TIMEOUT
    # Decoded payload bytes past which a page is a `too-large` skip.
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    # Skip pages cut short (`--skip-truncated`) instead of keeping what was received.
    skip_truncated: bool = False
    # MiB a page may take in CleanHtml's child process.
    page_memory: int = DEFAULT_PAGE_MEMORY_MIB
    # The scripts whose letters MinimizeText keeps (`parse_scripts`).
    scripts: tuple[str, ...] = DEFAULT_SCRIPTS
    # Kept pages shown in report.html's page inspector.
    report_sample: int = DEFAULT_SAMPLE_SIZE
    # The near-duplicate stage's parameters (`--near-dedup`); None: the stage is off.
    near_dedup: MinHashParameters | None = None
    # The fields written (`--fields`); None: the default ones (`transforms.sink.schema.resolve_fields`).
    fields: tuple[str, ...] | None = None
    # Write `clean_text` too (`--clean-text`).
    clean_text: bool = False
    # Identify each page's language (`--language`; implied by `--languages`), and keep only these (`--languages`).
    language: bool = False
    languages: tuple[str, ...] = ()
    # How the inputs were chosen, before the listings among them are read (`pipeline.crawl`): lines of the listings
    # (`--files`), the crawl named (`--crawl`), the base of its files. Not the build's identity: the build records the
    # files the listings name as its inputs.
    files: FileRange | None = field(default=None, compare=False)
    crawl: str = field(default="", compare=False)
    crawl_base: str = field(default=CRAWL_BASES[DEFAULT_SOURCE], compare=False)
    beam_args: tuple[str, ...] = field(default=(), compare=False)
    # The manifest this build repeats (`--rebuild`), if any.
    rebuild_of: str = field(default="", compare=False)
    # Rebuild from a manifest that this user's builds did not sign (`--trust-manifest`, pipeline/signing.py).
    trust_manifest: bool = field(default=False, compare=False)
    quiet: bool = field(default=False, compare=False)
    # Beam's and the workers' logging on the terminal (otherwise kept in a log file, shown on failure).
    verbose: bool = field(default=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(map(absolute_pattern, self.inputs)))
        object.__setattr__(self, "level", resolve_level(self.codec, self.level))
        validate_selectors(self.drop_selectors)
        object.__setattr__(self, "scripts", parse_scripts(self.scripts))
        if self.fields is not None:
            object.__setattr__(self, "fields", tuple(self.fields))
        if self.languages:
            object.__setattr__(self, "languages", parse_languages(self.languages))
        # --languages, or --fields naming a language field, asks for identification too.
        if self.languages or set(self.fields or ()) & set(LANGUAGE_FIELDS):
            object.__setattr__(self, "language", True)
        self.written_fields()
        if self.sync_interval <= 0:
            raise ValueError(f"--block-size must be positive, not {self.sync_interval}")
        if self.range_bytes < MIN_RANGE_BYTES:
            raise ValueError(f"--range-size {self.range_bytes} is below the minimum of {MIN_RANGE_BYTES} bytes "
                             "(1 MiB): a range is a work item and a shard, and smaller ranges only multiply them")
        if self.report_sample < 0:
            raise ValueError(f"--report-sample must be 0 or more, not {self.report_sample}")
        if not self.page_timeout > 0:
            raise ValueError(f"--page-timeout must be positive, not {self.page_timeout}")
        if self.max_page_bytes <= 0:
            raise ValueError(f"--max-page-bytes must be positive, not {self.max_page_bytes}")
        if self.page_memory <= 0:
            raise ValueError(f"--page-memory must be positive, not {self.page_memory}")

    def build_identity(self) -> dict:
        """The settings that shape the output's bytes (not where it is written, nor the runner)."""
        described = asdict(self)
        for name in ("files", "crawl", "crawl_base", "beam_args", "output", "rebuild_of", "trust_manifest", "quiet",
                     "verbose"):
            del described[name]
        # (Without the credentials a URL may hold: the manifest, the report and the shards' sync marker hold it.)
        described["inputs"] = [redacted(path) for path in self.inputs]
        described["drop_selectors"] = list(self.drop_selectors)
        described["scripts"] = list(self.scripts)
        # Builds without the stage, or with the default fields, keep the identity (and so the bytes) they had
        # before these options existed.
        if self.near_dedup is None:
            del described["near_dedup"]
        if self.fields is None:
            del described["fields"]
        else:
            described["fields"] = list(self.fields)
        for name in ("clean_text", "language", "languages"):
            if not described[name]:
                del described[name]
        if self.languages:
            described["languages"] = list(self.languages)
        return described

    def written_fields(self) -> tuple[str, ...]:
        """The fields of the corpus records, in schema order (`record_digest` last)."""
        return resolve_fields(self.fields, self.near_dedup is not None, self.clean_text, self.language)


class OneLineErrorParser(argparse.ArgumentParser):
    """Reports a mistake in one line (no usage block), with exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog=program_name(),
        description=(
            "Turn WARC files into a clean, deduplicated, compressed Avro corpus. "
            "Options not listed here are passed to Apache Beam (for example --runner, "
            "--direct_num_workers, --direct_running_mode, --temp_location); one that Beam "
            "does not know either is an error. --runner=DirectRunner (the default) runs webcorpus's patched "
            "FnApiRunner (pipeline/local_runner.py); --runner=FnApiRunner runs Beam's own, unpatched."
        ),
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
        "--codec", default=None, choices=list(CODECS),
        help=f"Avro codec of the corpus files (default: {DEFAULT_CODEC}; use deflate for readers that only "
             "know the codecs every Avro reader must: null and deflate).",
    )
    parser.add_argument(
        "--level", type=int, default=None,
        help="Codec level: deflate 0-9 (default 6), zstandard 1-22 (default 9), xz 0-9 (default 6), "
             "bzip2 1-9 (default 9); snappy and null have none.",
    )
    parser.add_argument(
        "--drop-selector", action="append", default=[], metavar="CSS", dest="drop_selectors",
        help="CSS selector of extra elements to remove with their content, e.g. 'div.warning'. Repeatable.",
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
    parser.add_argument(
        "--languages", default=None, metavar="LIST",
        help="Keep only pages identified as one of these languages, e.g. en,ru (implies --language); the others "
             "are skipped as other-language, with their language in skipped-*.jsonl.",
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
    return parser


BUILD_FLAGS = {"input": "--input", "codec": "--codec", "level": "--level", "drop_selectors": "--drop-selector",
               "sync_interval": "--block-size", "range_bytes": "--range-size", "page_timeout": "--page-timeout",
               "max_page_bytes": "--max-page-bytes", "skip_truncated": "--skip-truncated",
               "page_memory": "--page-memory", "scripts": "--scripts",
               "report_sample": "--report-sample", "near_dedup": "--near-dedup", "clean_text": "--clean-text",
               "fields": "--fields", "language": "--language", "languages": "--languages",
               "near_dedup_threshold": "--near-dedup-threshold", "near_dedup_shingle_size": "--near-dedup-shingle-size",
               "near_dedup_bands": "--near-dedup-bands", "near_dedup_rows": "--near-dedup-rows",
               "crawl": "--crawl", "files": "--files", "crawl_source": "--crawl-source",
               "crawl_base_url": "--crawl-base-url"}
NEAR_DEDUP_FLAGS = {"threshold": "near_dedup_threshold", "shingle_size": "near_dedup_shingle_size",
                    "bands": "near_dedup_bands", "rows": "near_dedup_rows"}


def settings_from_manifest(manifest: dict, output: str, beam_args: tuple[str, ...], path: str,
                           quiet: bool, verbose: bool = False, trust_manifest: bool = False) -> CorpusSettings:
    options = manifest["options"]
    return CorpusSettings(
        inputs=tuple(options["inputs"]),
        output=output,
        codec=options["codec"],
        level=options["level"],
        drop_selectors=tuple(options["drop_selectors"]),
        sync_interval=options["sync_interval"],
        range_bytes=options["range_bytes"],
        page_timeout=options["page_timeout"],
        # Manifests from before --max-page-bytes were built without a bound; the default is the nearest.
        max_page_bytes=options.get("max_page_bytes", DEFAULT_MAX_PAGE_BYTES),
        # Manifests from before --skip-truncated skipped pages cut short.
        skip_truncated=options.get("skip_truncated", True),
        # Manifests from before --page-memory were built without a memory limit; the default holds them.
        page_memory=options.get("page_memory", DEFAULT_PAGE_MEMORY_MIB),
        # Manifests from before --scripts were built with the default.
        scripts=tuple(options.get("scripts", DEFAULT_SCRIPTS)),
        report_sample=options.get("report_sample", DEFAULT_SAMPLE_SIZE),
        near_dedup=MinHashParameters(**options["near_dedup"]) if "near_dedup" in options else None,
        # Manifests from before --fields and --clean-text wrote the default fields.
        fields=tuple(options["fields"]) if "fields" in options else None,
        clean_text=options.get("clean_text", False),
        language=options.get("language", False),
        languages=tuple(options.get("languages", ())),
        beam_args=beam_args,
        rebuild_of=path,
        trust_manifest=trust_manifest,
        quiet=quiet,
        verbose=verbose,
    )


def load_manifest(path: str) -> dict:
    from transforms.read_corpus import read_bytes

    try:
        manifest = json.loads(read_bytes(path))
        manifest["options"]["inputs"]
    except Exception as error:  # noqa: BLE001 - whatever is wrong, the manifest cannot be used
        raise ValueError(f"--rebuild {path} is not a readable webcorpus manifest: {error}") from error
    return manifest


def beam_parser() -> argparse.ArgumentParser:
    """The parser of every Beam pipeline option known now: those of each `PipelineOptions` subclass imported."""
    parsers = []
    PipelineOptions([]).get_all_options(add_extra_args_fn=parsers.append)
    (parser,) = parsers
    parser.exit_on_error = False
    return parser


def runner_module(runner: str) -> str | None:
    """The module that defines the runner `--runner` names, resolved as Beam resolves it."""
    path = RUNNER_ALIASES.get(runner, runner)
    if "." not in path:
        known = {name.rsplit(".", 1)[-1].lower(): name for name in StandardOptions.ALL_KNOWN_RUNNERS}
        path = known.get(path.lower(), known.get(f"{path.lower()}runner", ""))
    return path.rsplit(".", 1)[0] if "." in path else None


def unknown_argument(parser: argparse.ArgumentParser, beam_args: list[str]) -> str | None:
    """Why `beam_args` (what webcorpus's own options left) are not all Beam's options, or None.

    Names the first argument that Beam does not know either, or a runner it
    cannot find or load.
    """
    beam = beam_parser()
    try:
        runner = beam.parse_known_args(beam_args)[0].runner
        module = runner and runner_module(runner)
        if runner and not module:
            nearest = difflib.get_close_matches(runner, StandardOptions.KNOWN_RUNNER_NAMES + list(RUNNER_ALIASES), n=1)
            return f"unknown runner {runner}" + (f"; did you mean {nearest[0]}?" if nearest else "")
        if module:
            # A runner's module can define options of its own (the Dask runner's --dask_client_address).
            try:
                importlib.import_module(module)
            except ImportError as error:
                return f"cannot load --runner {runner}: {error}"
            beam = beam_parser()
        unknown = beam.parse_known_args(beam_args)[1]
    except argparse.ArgumentError as error:
        return str(error)
    if not unknown:
        return None
    argument = unknown[0]
    if not argument.startswith("-"):
        return f"unexpected argument {argument!r}: every argument is an option (input files follow --input)"
    name = argument.split("=", 1)[0]
    # argparse lists its options nowhere public; Beam reads `_actions` too, to warn of unknown options.
    flags = [flag for known in (parser, beam) for action in known._actions for flag in action.option_strings]
    nearest = difflib.get_close_matches(name, flags, n=1)
    hint = f"; did you mean {nearest[0]}?" if nearest else " (neither webcorpus nor Beam has it)"
    return f"unknown option {name}{hint}"
def near_dedup_parameters(known: argparse.Namespace) -> MinHashParameters | None:
    given = {name: getattr(known, flag) for name, flag in NEAR_DEDUP_FLAGS.items() if getattr(known, flag) is not None}
    if not known.near_dedup:
        if given:
            raise ValueError(f"{', '.join(BUILD_FLAGS[NEAR_DEDUP_FLAGS[name]] for name in given)} "
                             "need --near-dedup")
        return None
    return MinHashParameters(**given)


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


def parse_settings(argv: list[str]) -> CorpusSettings:
    """Parses the command line; exits with status 2 and one line on bad input."""
    parser = make_parser()
    known, beam_args = parser.parse_known_args(argv)
    mistake = unknown_argument(parser, beam_args)
    if mistake:
        parser.error(mistake)
    try:
        if known.rebuild:
            given = [flag for name, flag in BUILD_FLAGS.items() if getattr(known, name) not in (None, [])]
            if given:
                raise ValueError(f"--rebuild takes inputs and options from the manifest; leave out {', '.join(given)}")
            manifest = load_manifest(known.rebuild)
            try:
                return settings_from_manifest(manifest, known.output, tuple(beam_args), known.rebuild, known.quiet,
                                              known.verbose, known.trust_manifest)
            except (KeyError, TypeError, AttributeError) as error:
                # A manifest is input: one whose options are not a build's is named, not followed.
                raise ValueError(f"--rebuild {known.rebuild}: its options are not a webcorpus build's "
                                 f"({type(error).__name__}: {error})") from error
        if known.trust_manifest:
            raise ValueError("--trust-manifest applies to --rebuild MANIFEST only")
        inputs, base = chosen_inputs(known)
        return CorpusSettings(
            inputs=inputs,
            output=known.output,
            codec=known.codec or DEFAULT_CODEC,
            level=known.level,
            drop_selectors=tuple(known.drop_selectors),
            sync_interval=DEFAULT_SYNC_INTERVAL if known.sync_interval is None else known.sync_interval,
            range_bytes=DEFAULT_RANGE_BYTES if known.range_bytes is None else known.range_bytes,
            page_timeout=DEFAULT_PAGE_TIMEOUT if known.page_timeout is None else known.page_timeout,
            max_page_bytes=DEFAULT_MAX_PAGE_BYTES if known.max_page_bytes is None else known.max_page_bytes,
            skip_truncated=bool(known.skip_truncated),
            page_memory=DEFAULT_PAGE_MEMORY_MIB if known.page_memory is None else known.page_memory,
            scripts=DEFAULT_SCRIPTS if known.scripts is None else known.scripts,
            report_sample=DEFAULT_SAMPLE_SIZE if known.report_sample is None else known.report_sample,
            near_dedup=near_dedup_parameters(known),
            fields=None if known.fields is None else tuple(filter(None, map(str.strip, known.fields.split(",")))),
            clean_text=bool(known.clean_text),
            language=bool(known.language),
            languages=() if known.languages is None else parse_languages(known.languages),
            files=None if known.files is None else parse_file_range(known.files),
            crawl=known.crawl or "",
            crawl_base=base,
            beam_args=tuple(beam_args),
            quiet=known.quiet,
            verbose=known.verbose,
        )
    except ValueError as error:
        parser.error(str(error))
