"""`python -m pipeline.select SOURCE --output DEST`: a corpus selected from an annotated build, without its WARC files.

SOURCE is the output directory of a build made with `--annotate` (every document kept, with the values its
quality rules measured in `signals`). The selection keeps what a build with the same `--quality`,
`--quality-threshold` and `--languages` would have kept, decided from those values, and what only stored signals
allow (`--min-signal`, `--max-signal`, `--sample`); `--near-dedup` deduplicates what it keeps. DEST gets a corpus
like a build's (`pipeline.select_graph`): shards, side files, index, report, report page and a manifest that
records SOURCE by its manifest's digest and the selection, so that `--rebuild DEST/manifest.json` repeats it and
`python -m pipeline.verify DEST` checks it. SOURCE is checked against its manifest first; what cannot be selected
is refused in one line (exit 2) before anything is written, and DEST is published as a build is
(`pipeline.publish`): an interrupted selection leaves it as it was. docs/select.md tells more.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # `python -m pipeline.select`: the launcher first, before this module's imports (Beam's among them), as
    # `python -m pipeline` does: SIGINT and SIGTERM taken from the first instant, Beam imported without the libraries
    # it loads for nothing webcorpus uses (`pipeline.beam_import`). It imports this module as `pipeline.select` and runs its `main`.
    from pipeline.launch import main as launch_main

    sys.exit(launch_main(command="pipeline.select"))

import argparse
import dataclasses
import difflib
import itertools
import logging
import os
from typing import NamedTuple

from apache_beam.io.filesystems import FileSystems

from pipeline.build_inputs import BuildInputs
from pipeline.cli import (UsageError, check_extend_is_no_output, prepare_output, publish_build, remove_made,
                          resolved_path, run_and_tell)
from pipeline.extend import earlier_corpus
from pipeline.options import (NEAR_DEDUP_FLAGS, OneLineErrorParser, add_extend_arguments, add_near_dedup_arguments,
                              add_selection_arguments, parse_known, stage_settings)
from pipeline.select_documents import Selection, parse_bounds
from pipeline.select_graph import annotated_source
from pipeline.select_units import source_shards
from pipeline.settings import CorpusSettings, load_manifest, settings_from_manifest
from pipeline.signing import checksum_holds, signature_problem
from pipeline.verify import check_manifest, check_outputs
from transforms.corpus.read_corpus import iter_corpus
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.exact_paths import escape_glob
from transforms.report.manifest import MANIFEST_NAME, digest_file
from transforms.stages.compress_write.schema import MINIMIZED_FIELDS
from transforms.stages.filters.rule_sets import C4_STEPS, DEFAULT_THRESHOLDS, steps_of
from transforms.stages.filters.signals import MEASURING_THRESHOLDS
from transforms.stages.filters.url_blocklist import UrlBlocklist
from transforms.stages.language import parse_languages
from transforms.stages.near_dedup import MinHashParameters
from transforms.stages.read_warc.snapshot import InputDigest
from transforms.stages.tokens import TokenizerFile

PROGRAM = "python -m pipeline.select"
# The field of a document's tokens (--tokenizer), which a token budget counts.
TOKEN_COUNT = "token_count"
# The documents whose signals tell which signals a corpus has: the first ones of its first shards.
SIGNALS_LOOKED_AT = 200
# The manifest's record of a selection, beside a build's options.
SELECT = "select"


class SelectRequest(NamedTuple):
    """What `python -m pipeline.select` was asked: from which corpus, into which directory, what to keep."""

    source: str
    output: str
    selection: Selection
    near_dedup: MinHashParameters | None
    beam_args: tuple[str, ...]
    verbose: bool = False
    rebuild_of: str = ""
    # The manifest of `rebuild_of`, as read and checked when the request was made of it.
    rebuilt_manifest: dict | None = None
    trust_manifest: bool = False
    # The corpora whose contents the selection leaves out (`--extend`), and those taken unsigned (`--trust-corpus`).
    extend: tuple[str, ...] = ()
    trust_corpora: tuple[str, ...] = ()
    # Whether the units an interrupted run of the same selection finished are reused (`--no-resume`: not).
    resume: bool = True


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog=PROGRAM, description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", metavar="SOURCE",
                        help="The output directory of a build made with --annotate.")
    parser.add_argument("--output", required=True, metavar="DIR", help="Where the selected corpus is written.")
    add_selection_arguments(parser)
    parser.add_argument(
        "--min-signal", action="append", default=[], metavar="NAME=VALUE", dest="min_signal",
        help="Keep only documents whose signal NAME is at least VALUE (a document without it is dropped), e.g. "
             "language/confidence=0.65. Repeatable.")
    parser.add_argument(
        "--max-signal", action="append", default=[], metavar="NAME=VALUE", dest="max_signal",
        help="Keep only documents whose signal NAME is at most VALUE. Repeatable.")
    parser.add_argument(
        "--token-budget", type=int, default=None, metavar="N",
        help="Keep the documents best by --budget-by until their tokens (token_count: annotate with --tokenizer) "
             "would pass N; a content counts once, a tie at the cut stays out.")
    parser.add_argument(
        "--budget-by", default="", metavar="SIGNAL",
        help="The signal whose highest values fill --token-budget first, e.g. fineweb/line_punct_ratio.")
    parser.add_argument(
        "--sample", type=float, default=None, metavar="FRACTION",
        help="Keep this fraction of the contents, chosen by content hash: the same documents on every run, every "
             "capture of a content alike.")
    add_near_dedup_arguments(parser)
    add_extend_arguments(parser)
    parser.add_argument(
        "--rebuild", metavar="MANIFEST",
        help="Select again as the selection whose manifest.json this is (its source and options) into --output, and "
             "say whether the result is byte-identical. Takes no SOURCE and no selection options.")
    parser.add_argument("--trust-manifest", action="store_true",
                        help="With --rebuild: take a manifest that no run of this user signed.")
    parser.add_argument(
        "--no-resume", action="store_true", dest="no_resume",
        help="Start afresh: do not reuse the units (shards of SOURCE) that an interrupted earlier run of the same "
             "selection on --output finished (reused by default; docs/select.md).")
    parser.add_argument("--verbose", action="store_true", help="Show Beam's logging on stderr.")
    return parser


def parse_request(argv: list[str]) -> SelectRequest:
    """The command line's request; exits with status 2 and one line on bad input."""
    parser = make_parser()
    known, beam_args = parse_known(parser, argv)
    try:
        if known.rebuild:
            given = [flag for flag, value in (("SOURCE", known.source), ("--quality", known.quality),
                                              ("--quality-threshold", known.quality_threshold),
                                              ("--languages", known.languages), ("--min-signal", known.min_signal),
                                              ("--max-signal", known.max_signal), ("--sample", known.sample),
                                              ("--token-budget", known.token_budget),
                                              ("--near-dedup", known.near_dedup), ("--extend", known.extend))
                     if value not in (None, [])]
            if given:
                raise ValueError(f"--rebuild takes the source and the selection from the manifest; leave out "
                                 f"{', '.join(given)}")
            return request_of_manifest(known.rebuild, known.output, known.trust_manifest)._replace(
                beam_args=tuple(beam_args), verbose=known.verbose, trust_corpora=tuple(known.trust_corpus),
                resume=not known.no_resume)
        if known.trust_manifest:
            raise ValueError("--trust-manifest applies to --rebuild MANIFEST only")
        if known.source is None:
            raise ValueError("give SOURCE, the directory of an annotated build (or --rebuild MANIFEST)")
        selection = Selection(
            quality=() if known.quality is None else tuple(filter(None, map(str.strip, known.quality.split(",")))),
            quality_thresholds=tuple(known.quality_threshold),
            languages=() if known.languages is None else parse_languages(known.languages),
            min_signals=parse_bounds(known.min_signal, "--min-signal"),
            max_signals=parse_bounds(known.max_signal, "--max-signal"), sample=known.sample,
            token_budget=known.token_budget, budget_by=known.budget_by)
        # The build's own checks of the rule sets and thresholds named.
        CorpusSettings(inputs=(), output=known.output, quality=selection.quality,
                       quality_thresholds=selection.quality_thresholds)
        near_dedup = stage_settings(known, "near_dedup", NEAR_DEDUP_FLAGS, MinHashParameters)
        return SelectRequest(known.source, known.output, selection, near_dedup, tuple(beam_args), known.verbose,
                             extend=tuple(known.extend), trust_corpora=tuple(known.trust_corpus),
                             resume=not known.no_resume)
    except ValueError as error:
        parser.error(str(error))


def request_of_manifest(path: str, output: str, trust_manifest: bool) -> SelectRequest:
    """The selection a selected corpus's manifest records, to repeat it (`--rebuild`)."""
    manifest = load_manifest(path)
    problem = None if trust_manifest else signature_problem(manifest)
    if not checksum_holds(manifest) or problem:
        raise ValueError(f"--rebuild {path} is not a manifest that a run of this user signed: "
                         f"{problem or 'its checksum differs'}; add --trust-manifest to take it all the same")
    options = manifest["options"]
    if SELECT not in options:
        raise ValueError(f"--rebuild {path} is a build's manifest, not a selection's: rebuild it with "
                         f"python -m pipeline --rebuild {path}")
    try:
        chosen = options[SELECT]
        selection = Selection(
            quality=tuple(options.get("quality", ())),
            quality_thresholds=tuple(f"{name}={value}" for name, value in options.get("quality_thresholds", {}).items()),
            languages=tuple(options.get("languages", ())),
            min_signals=tuple(sorted(chosen.get("min_signals", {}).items())),
            max_signals=tuple(sorted(chosen.get("max_signals", {}).items())), sample=chosen.get("sample"),
            token_budget=chosen.get("token_budget"), budget_by=chosen.get("budget_by", ""))
        near = MinHashParameters(**options["near_dedup"]) if "near_dedup" in options else None
        return SelectRequest(chosen["source"]["corpus"], output, selection, near, (), rebuild_of=path,
                             rebuilt_manifest=manifest, trust_manifest=trust_manifest,
                             extend=tuple(entry["corpus"] for entry in options.get("extend", ())))
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"--rebuild {path}: its selection is not one python -m pipeline.select records "
                         f"({type(error).__name__}: {error})") from error


def checked_source(source: str) -> dict:
    """SOURCE's manifest, once every file it lists is as it lists it (`pipeline.verify`'s checks of the files);
    UsageError otherwise."""
    manifest, problems = check_manifest(source)
    if manifest is not None:
        problems += check_outputs(source, manifest)
    if problems:
        raise UsageError(f"SOURCE {source} does not verify: {problems[0]} ({len(problems)} problem(s); "
                         f"python -m pipeline.verify {source} lists them)")
    return manifest


def fields_and_signals(source: str) -> tuple[set[str], set[str]]:
    """The fields and the signals of the first documents of SOURCE's shards."""
    fields, signals = set(), set()
    for record in itertools.islice(iter_corpus(source, verify=False), SIGNALS_LOOKED_AT):
        fields.update(record)
        signals.update(record.get("signals") or ())
    return fields, signals


def unmeasured_step(selected: list[str], annotated: list[str]) -> str | None:
    """The first of the `selected` steps whose signals the `annotated` steps did not measure on the text it sees: a
    step the annotation lacks, or one after other C4 steps (whose line rules edit the text) than in the selection."""
    for position, step in enumerate(selected):
        if step not in annotated or [edit for edit in selected[:position] if edit in C4_STEPS] != [
                edit for edit in annotated[:annotated.index(step)] if edit in C4_STEPS]:
            return step
    return None


def check_selection(request: SelectRequest, manifest: dict) -> None:
    """What SOURCE's signals cannot decide is refused: a rule set it was not annotated with, a threshold that changes
    what was measured, a signal it lacks, languages it did not identify; and sources whose documents were already
    left out by what a selection decides anew (near-duplicates, earlier corpora)."""
    options, selection, source = manifest["options"], request.selection, request.source
    if not options.get("annotate"):
        raise UsageError(f"SOURCE {source} holds no signals: a selection reads the corpus of a build made with "
                         "--annotate")
    for name, flag in (("near_dedup", "--near-dedup"), ("extend", "--extend")):
        if name in options:
            raise UsageError(f"SOURCE {source} was built with {flag}: the pages it dropped are gone before any "
                             f"selection; annotate without {flag}, and select with {flag}")
    measured, thresholds = options.get("quality_thresholds", {}), selection.thresholds()
    for name in sorted(MEASURING_THRESHOLDS):
        if thresholds[name] != measured.get(name, DEFAULT_THRESHOLDS[name]):
            raise UsageError(f"--quality-threshold {name}={thresholds[name]:g} changes what SOURCE {source} measured "
                             f"(with {measured.get(name, DEFAULT_THRESHOLDS[name]):g}): annotate again with it")
    step = unmeasured_step(steps_of(selection.quality), steps_of(tuple(options.get("quality", ()))))
    if step is not None:
        raise UsageError(f"--quality {','.join(selection.quality)}: SOURCE {source} was annotated with "
                         f"--quality {','.join(options.get('quality', ())) or '(none)'}, which does not measure the "
                         f"step {step} on the text it would see; annotate with the rule sets to select by")
    if selection.languages and not options.get("language"):
        raise UsageError(f"--languages: SOURCE {source} has no identified language; annotate with --language")
    fields, known = fields_and_signals(source)
    if selection.token_budget is not None and TOKEN_COUNT not in fields:
        raise UsageError(f"--token-budget: SOURCE {source}'s documents have no {TOKEN_COUNT}; annotate with "
                         "--tokenizer FILE")
    for name in sorted(selection.named_signals() - known):
        nearest = difflib.get_close_matches(name, known, n=1)
        raise UsageError(f"SOURCE {source}'s documents have no signal {name!r}"
                         + (f"; did you mean {nearest[0]}?" if nearest else f" (signals: {', '.join(sorted(known))})"))


def recorded_tokenizer(source: str, options: dict) -> TokenizerFile | None:
    """The tokenizer SOURCE counted its tokens with (`--tokenizer`), as its manifest records it, to count again the
    pages whose lines C4 removes; UsageError if the file is gone or changed."""
    entry = options.get("tokenizer")
    if not entry:
        return None
    tokenizer = TokenizerFile.read(entry["path"]) if os.path.isfile(entry["path"]) else None
    if tokenizer is None or tokenizer.sha256 != entry["sha256"]:
        raise UsageError(f"SOURCE {source} counted its tokens with --tokenizer {entry['path']}, which is "
                         f"{'gone' if tokenizer is None else 'changed since (sha256 differs)'}: a selection counts "
                         "the tokens of what C4 leaves of a page with it; put it back")
    return tokenizer


def source_fields(manifest: dict) -> tuple[str, ...]:
    """The fields of SOURCE's records, as its build wrote them."""
    return settings_from_manifest(manifest, "", (), "", quiet=True).written_fields()


def selected_settings(request: SelectRequest, manifest: dict) -> CorpusSettings:
    """The settings of the build that the selection equals: SOURCE's, filtering with the selection's rule sets,
    thresholds and languages, deduplicating near-duplicates as asked, and extending the corpora asked."""
    source_settings = settings_from_manifest(manifest, request.output, request.beam_args, "", quiet=True,
                                             verbose=request.verbose)
    selection = request.selection
    return dataclasses.replace(source_settings, annotate=False, quality=selection.quality,
                               quality_thresholds=selection.quality_thresholds, languages=selection.languages,
                               near_dedup=request.near_dedup, rebuild_of=request.rebuild_of, extend=request.extend,
                               trust_corpora=request.trust_corpora, resume=request.resume)


def select(request: SelectRequest) -> tuple[CorpusSettings, dict, list[str], dict | None]:
    """Checks SOURCE and the selection, then selects into DEST and publishes it there (`pipeline.cli`'s
    `publish_build`): the settings of the equal build, the report, notes, and the manifest a rebuild repeats."""
    source = request.source
    if resolved_path(request.output) == resolved_path(source):
        raise UsageError(f"--output {request.output} is SOURCE: a selection writes a corpus of its own beside its "
                         "source; give another --output")
    manifest = checked_source(source)
    check_selection(request, manifest)
    repeated = request.rebuilt_manifest
    if repeated is not None:
        recorded = repeated["options"][SELECT]["source"]["manifest_sha256"]
        if manifest["manifest_sha256"] != recorded:
            raise UsageError(f"SOURCE {source} changed since the selection of {request.rebuild_of} "
                             "(its manifest_sha256 differs)")
    options = manifest["options"]
    tokenizer = recorded_tokenizer(source, options)
    try:
        settings = selected_settings(request, manifest)
        check_extend_is_no_output(settings)
        # Each checked against its manifest and the selection's settings, as a build's (`pipeline.extend`).
        earlier = tuple(earlier_corpus(path, settings) for path in settings.extend)
    except ValueError as error:
        raise UsageError(str(error)) from error
    digests = tuple(entry["sha256"] for entry in options.get("url_blocklists", ()))
    # The source's blocklists left their captures out already: the selection only names them, as its build did.
    found = BuildInputs(earlier, UrlBlocklist(settings.url_blocklists, 0, digests) if digests else None,
                        tokenizer=tokenizer)
    # By its resolved path: the report and manifest are the same however SOURCE was named.
    source_manifest = digest_file(f"{resolved_path(source)}/{MANIFEST_NAME}")
    # Its size and modification time are the selection's inputs' in the identity that a rerun resumes under.
    (matched,) = FileSystems.match([escape_glob(source_manifest.path)])
    recorded = {SELECT: {"source": {"corpus": resolved_path(source), "manifest_sha256": manifest["manifest_sha256"]},
                         **request.selection.recorded()}}
    made = prepare_output(request.output)
    try:
        report, notes = publish_build(settings, 0, matched.metadata_list, found, annotated_source(
            source, InputDigest(source_manifest.path, source_manifest.size, source_manifest.sha256),
            request.selection, recorded, source_shards(source, manifest),
            {entry["path"]: entry["size"] for entry in manifest["inputs"]},
            set(MINIMIZED_FIELDS) <= set(source_fields(manifest))))
    except BaseException:
        remove_made(made)
        raise
    return settings, report, notes, repeated


def main(argv: list[str] | None = None) -> int:
    request = parse_request(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO if request.verbose else logging.WARNING)
    # (Whether the corpus holds its readable text is SOURCE's options': the build's advice would not apply.)
    return run_and_tell(request.output, lambda: select(request), PROGRAM, advise=False)

