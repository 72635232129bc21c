"""Command-line options of `python -m pipeline`, and the settings they make.

Options that are not webcorpus's own pass through to Beam as pipeline
options (`--runner`, `--direct_num_workers`, `--temp_location`, ...).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from transforms.compress_write import CODECS, DEFAULT_CODEC, DEFAULT_SYNC_INTERVAL, resolve_level
from transforms.clean_html import DEFAULT_PAGE_TIMEOUT, ISOLATE_ABOVE_TAGS, validate_selectors
from transforms.minimize_text import DEFAULT_SCRIPTS, SCRIPTS, parse_scripts
from transforms.near_dedup import (DEFAULT_BANDS, DEFAULT_ROWS, DEFAULT_SHINGLE_SIZE, DEFAULT_THRESHOLD,
                                   MinHashParameters)
from transforms.read_warc import DEFAULT_RANGE_BYTES

SAMPLE_WARC = Path(__file__).parent / "data" / "sample.warc.gz"
DEFAULT_OUTPUT = "webcorpus-out"


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
    # The scripts whose letters MinimizeText keeps (`parse_scripts`).
    scripts: tuple[str, ...] = DEFAULT_SCRIPTS
    # The near-duplicate stage's parameters (`--near-dedup`); None: the stage is off.
    near_dedup: MinHashParameters | None = None
    beam_args: tuple[str, ...] = field(default=(), compare=False)
    # The manifest this build repeats (`--rebuild`), if any.
    rebuild_of: str = field(default="", compare=False)
    quiet: bool = field(default=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "level", resolve_level(self.codec, self.level))
        validate_selectors(self.drop_selectors)
        object.__setattr__(self, "scripts", parse_scripts(self.scripts))
        if self.sync_interval <= 0:
            raise ValueError(f"--block-size must be positive, not {self.sync_interval}")
        if self.range_bytes <= 0:
            raise ValueError(f"--range-size must be positive, not {self.range_bytes}")
        if not self.page_timeout > 0:
            raise ValueError(f"--page-timeout must be positive, not {self.page_timeout}")

    def build_identity(self) -> dict:
        """The settings that shape the output's bytes (not where it is written, nor the runner)."""
        described = asdict(self)
        for name in ("beam_args", "output", "rebuild_of", "quiet"):
            del described[name]
        described["inputs"] = list(self.inputs)
        described["drop_selectors"] = list(self.drop_selectors)
        described["scripts"] = list(self.scripts)
        if self.near_dedup is None:
            # Builds without the stage keep the identity (and so the bytes) they had before it existed.
            del described["near_dedup"]
        return described


class OneLineErrorParser(argparse.ArgumentParser):
    """Reports a mistake in one line (no usage block), with exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="python -m pipeline",
        description=(
            "Turn WARC files into a clean, deduplicated, compressed Avro corpus. "
            "Options not listed here are passed to Apache Beam (for example --runner, "
            "--direct_num_workers, --direct_running_mode, --temp_location)."
        ),
    )
    parser.add_argument(
        "--input", action="append", default=[], metavar="PATTERN",
        help="WARC files to read: a path or glob on any file system Beam knows (local, gs://, s3://, ...). "
             "Repeat for several patterns. Default: the sample WARC shipped with the package.",
    )
    parser.add_argument(
        "--output", default=DEFAULT_OUTPUT, metavar="DIR",
        help=f"Directory for the corpus, report and side outputs (default: ./{DEFAULT_OUTPUT}). "
             "Earlier webcorpus output files in it are replaced.",
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
        "--block-size", type=int, default=None, metavar="BYTES", dest="sync_interval",
        help=f"Uncompressed bytes per Avro block; larger blocks compress better (default {DEFAULT_SYNC_INTERVAL}).",
    )
    parser.add_argument(
        "--range-size", type=int, default=None, metavar="BYTES", dest="range_bytes",
        help="Files gzipped per record and bigger than this are read in ranges of this many bytes, in parallel, "
             f"each with its own corpus shard (default {DEFAULT_RANGE_BYTES}).",
    )
    parser.add_argument(
        "--page-timeout", type=float, default=None, metavar="SECONDS",
        help=f"Pages with over {ISOLATE_ABOVE_TAGS:,} tags are cleaned in a child process; one that takes longer "
             f"than this, or crashes the parser, goes to the dead letter (default {DEFAULT_PAGE_TIMEOUT:g}).",
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
        "--quiet", action="store_true",
        help="No progress display on stderr (it is shown on local runs).",
    )
    parser.add_argument(
        "--rebuild", metavar="MANIFEST",
        help="Build again from a build's manifest.json (its inputs and options) into --output, and say whether "
             "the result is byte-identical. Takes none of the options above but --output.",
    )
    return parser


BUILD_FLAGS = {"input": "--input", "codec": "--codec", "level": "--level", "drop_selectors": "--drop-selector",
               "sync_interval": "--block-size", "range_bytes": "--range-size", "page_timeout": "--page-timeout",
               "scripts": "--scripts", "near_dedup": "--near-dedup",
               "near_dedup_threshold": "--near-dedup-threshold", "near_dedup_shingle_size": "--near-dedup-shingle-size",
               "near_dedup_bands": "--near-dedup-bands", "near_dedup_rows": "--near-dedup-rows"}
NEAR_DEDUP_FLAGS = {"threshold": "near_dedup_threshold", "shingle_size": "near_dedup_shingle_size",
                    "bands": "near_dedup_bands", "rows": "near_dedup_rows"}


def settings_from_manifest(manifest: dict, output: str, beam_args: tuple[str, ...], path: str,
                           quiet: bool) -> CorpusSettings:
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
        # Manifests from before --scripts were built with the default.
        scripts=tuple(options.get("scripts", DEFAULT_SCRIPTS)),
        near_dedup=MinHashParameters(**options["near_dedup"]) if "near_dedup" in options else None,
        beam_args=beam_args,
        rebuild_of=path,
        quiet=quiet,
    )


def load_manifest(path: str) -> dict:
    from transforms.read_corpus import read_bytes

    try:
        manifest = json.loads(read_bytes(path))
        manifest["options"]["inputs"]
    except Exception as error:  # noqa: BLE001 - whatever is wrong, the manifest cannot be used
        raise ValueError(f"--rebuild {path} is not a readable webcorpus manifest: {error}") from error
    return manifest


def near_dedup_parameters(known: argparse.Namespace) -> MinHashParameters | None:
    given = {name: getattr(known, flag) for name, flag in NEAR_DEDUP_FLAGS.items() if getattr(known, flag) is not None}
    if not known.near_dedup:
        if given:
            raise ValueError(f"{', '.join(BUILD_FLAGS[NEAR_DEDUP_FLAGS[name]] for name in given)} "
                             "need --near-dedup")
        return None
    return MinHashParameters(**given)


def parse_settings(argv: list[str]) -> CorpusSettings:
    """Parses the command line; exits with status 2 and one line on bad input."""
    parser = make_parser()
    known, beam_args = parser.parse_known_args(argv)
    try:
        if known.rebuild:
            given = [flag for name, flag in BUILD_FLAGS.items() if getattr(known, name) not in (None, [])]
            if given:
                raise ValueError(f"--rebuild takes inputs and options from the manifest; leave out {', '.join(given)}")
            return settings_from_manifest(load_manifest(known.rebuild), known.output, tuple(beam_args), known.rebuild,
                                          known.quiet)
        return CorpusSettings(
            inputs=tuple(known.input) or (str(SAMPLE_WARC),),
            output=known.output,
            codec=known.codec or DEFAULT_CODEC,
            level=known.level,
            drop_selectors=tuple(known.drop_selectors),
            sync_interval=DEFAULT_SYNC_INTERVAL if known.sync_interval is None else known.sync_interval,
            range_bytes=DEFAULT_RANGE_BYTES if known.range_bytes is None else known.range_bytes,
            page_timeout=DEFAULT_PAGE_TIMEOUT if known.page_timeout is None else known.page_timeout,
            scripts=DEFAULT_SCRIPTS if known.scripts is None else known.scripts,
            near_dedup=near_dedup_parameters(known),
            beam_args=tuple(beam_args),
            quiet=known.quiet,
        )
    except ValueError as error:
        parser.error(str(error))
