"""`python -m pipeline`: build a corpus, print the run report."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import re
import signal
import stat
import sys
import tempfile
from typing import Callable

import apache_beam as beam
from apache_beam.io.filesystem import FileSystem
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions, TypeOptions

from pipeline import resumable
from pipeline.build_inputs import BuildInputs, read_build_inputs, segmenters_changed
from pipeline.runners.fn_api_patches import remembered_dofn_specs
from pipeline.crawl import ListingError, expand_inputs
from pipeline.graph import WARC_SOURCE, DocumentSource, build_corpus
from pipeline.index_select import count_selection, describe_selection
from pipeline.launch import program_name
from pipeline.runners.local_runner import (IN_PROCESS_RUNNER_NAMES, cores_per_worker, describe_runner, make_local_runner,
                                           worker_processes)
from pipeline.options import RUNNER_ALIASES, parse_settings
from pipeline.settings import CorpusSettings, load_manifest
from pipeline.progress import ProgressDisplay, progress_notes
from pipeline.recipes import unreadable_text_note
from pipeline.publish import (OutputRefused, check_nothing_in_the_way, example_paths, is_output_name,
                              names_a_build_may_write, new_staging_dir, output_lock, publish, publish_begun, recover,
                              sign_build)
from pipeline.runner_check import flink_job_server_missing
from pipeline.run_watch import InterruptedWhilePublishing, RunWatch, disk_full, signals_held
from pipeline.signing import SigningKeyUnavailable, checksum_holds, signature_problem, signing_key
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.document import describe_error
from transforms.filesystems.exact_paths import escape_glob, is_local, remove_exactly
from transforms.stages.filters.url_blocklist import BlocklistError
from transforms.filesystems.http_filesystem import RemoteReadError
from transforms.filesystems.locations import redacted
from transforms.report.manifest import digest_file
from transforms.stages.read_warc.read_warc import open_uncompressed
from transforms.stages.read_warc.formats import starts_like_archive
from transforms.filesystems.regular_files import kind_of
from transforms.report.report import format_report, html_options_not_applied, imbalances, read_report

# A pattern up to its first glob character.
GLOB_PREFIX = re.compile(r"[^[*?]*")


class ViewedOnceOptions(PipelineOptions):
    """PipelineOptions whose view of each options class is made once.

    Beam asks for a view (`view_as(TypeOptions)`, ...) at every transform it
    applies, about 900 times for this graph, and each builds an argparse
    parser: half a second of every run's start. Views share the options'
    values, so one view per class serves them all.
    """

    def view_as(self, cls):
        views = self.__dict__.get("_views")
        if views is None:
            views = {}
            object.__setattr__(self, "_views", views)
        view = views.get(cls)
        if view is None:
            view = views[cls] = super().view_as(cls)
        return view

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_views", None)
        return state


def build_options(beam_args: list[str]) -> ViewedOnceOptions:
    """A build's Beam options: `beam_args`, with Beam's type inference while the graph is made off
    (`--no_pipeline_type_check`) unless they name one of its type-check options.

    Beam infers each step's output type by disassembling its DoFn or function, about 0.15 s of every command's
    start; it checks webcorpus's own graph, which the tests make with it on (`tests/test_graph.py`, ...), and the
    corpus is the same bytes either way.
    """
    options = ViewedOnceOptions(beam_args)
    if not any("type_check" in argument for argument in beam_args):
        options.view_as(TypeOptions).pipeline_type_check = False
    return options


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


def make_runner(options: PipelineOptions):
    """The runner for `options`: for the DirectRunner (or none named), `pipeline.runners.local_runner`'s."""
    standard = options.view_as(StandardOptions)
    if standard.runner in IN_PROCESS_RUNNER_NAMES:
        return make_local_runner(options)
    standard.runner = RUNNER_ALIASES.get(standard.runner, standard.runner)
    return None


def expand_listings(settings: CorpusSettings) -> CorpusSettings:
    """`settings` with the listings among its inputs (a crawl's, or given as `--input`) replaced by their files."""
    try:
        inputs = expand_inputs(settings.inputs, settings.crawl_base, settings.files, settings.crawl or None)
    except ListingError as error:
        raise UsageError(str(error)) from error
    return dataclasses.replace(settings, inputs=inputs, files=None)


def check_inputs(patterns: tuple[str, ...], each_an_archive: bool = False) -> tuple[int, list]:
    """Every pattern matches a file, every local one a regular file; a lone input file must be a readable WARC
    (or ARC) file, and so must each file with `each_an_archive` (a rebuild's, told by their first bytes).

    Otherwise, among several inputs, a file that is not a WARC is a per-file
    error in the report and the run goes on. Returns the inputs' total size
    and the files matched (Beam's `FileMetadata`: path, size, time).
    """
    matches = []
    total = 0
    for pattern in patterns:
        try:
            matched = FileSystems.match([pattern])[0].metadata_list
        except Exception as error:  # noqa: BLE001 - any file system's failure is a usage error here
            raise UsageError(f"cannot read --input {redacted(pattern)}: {error}") from error
        if not matched:
            raise UsageError(f"no file matches --input {redacted(pattern)}; check the path or quote the glob")
        for meta in matched:
            # A FIFO or a device (/dev/zero) would block the reader, or never end.
            mode = os.stat(meta.path).st_mode if is_local(meta.path) else stat.S_IFREG
            if not stat.S_ISREG(mode):
                matched_by = "" if pattern == escape_glob(meta.path) else f"--input {pattern} matches "
                raise UsageError(f"{matched_by}{meta.path} is not a regular file ({kind_of(mode)}): not read; "
                                 "give WARC or ARC files")
        matches.extend(matched)
        total += sum(meta.size_in_bytes for meta in matched)
    for path in [meta.path for meta in matches] if each_an_archive or len(matches) == 1 else []:
        try:
            is_warc = starts_like_archive(lambda: open_uncompressed(path))
        except RemoteReadError as error:
            # The network failed, not the input: the build fails (exit 1), as when a worker cannot read a file.
            raise BuildFailed(describe_failure(error)) from error
        except Exception as error:  # noqa: BLE001
            raise UsageError(f"cannot read {redacted(path)}: {error}") from error
        if not is_warc:
            raise UsageError(f"{redacted(path)} is not a WARC file (it does not start with a WARC or ARC record); "
                             "give WARC files (uncompressed, gzip, zstd or LZ4) or ARC files (uncompressed or gzip)")
    return total, matches


def resolved_path(path: str) -> str:
    """A local path resolved (links followed), a URL without its trailing slash: what tells two outputs apart."""
    return os.path.realpath(path) if is_local(path) else path.rstrip("/")


def _as_matched(pattern: str) -> list[re.Pattern]:
    """The regular expressions by which Beam matches `pattern`, with its directory as given and, on a local
    disk, resolved (a build's files are found by either way to them)."""
    if pattern.endswith(("/", "\\")):
        pattern += "*"  # as FileSystems.match reads it
    forms = {pattern}
    if is_local(pattern):
        directory = os.path.dirname(GLOB_PREFIX.match(pattern).group(0))
        forms.add(os.path.join(os.path.realpath(directory), pattern[len(directory):].lstrip("/")))
    return [re.compile(FileSystem.translate_pattern(form)) for form in forms]


def _first_match(pattern: str, paths: list[str]) -> str | None:
    """The first of `paths` that the input pattern `pattern` matches, or None."""
    if GLOB_PREFIX.match(pattern).group(0) == pattern and not pattern.endswith(("/", "\\")):
        # A path, not a pattern (a crawl's listing gives 100,000 of them): it matches itself alone.
        return next((path for path in paths if path in (pattern, resolved_path(pattern))), None)
    return next((path for expression in _as_matched(pattern) for path in paths if expression.match(path)), None)


def check_inputs_apart_from_output(patterns: tuple[str, ...], output: str) -> None:
    """Refuses an input pattern that would match a file the build writes in `output`: the corpus, its side files,
    its staging directory would be read as its own input, by this run or the next one with the same --input."""
    bases = {output.rstrip("/")} | ({os.path.abspath(output), os.path.realpath(output)} if is_local(output) else set())
    written = [path for base in sorted(bases) for path in example_paths(base)]
    for pattern in patterns:
        matched = _first_match(pattern, written)
        if matched:
            raise UsageError(f"--input {pattern} would match {matched}, a file this build writes in --output "
                             f"{output}: the build would read its own output; give a pattern that matches only "
                             "WARC files, or an --output it does not match")


def check_extend_is_no_output(settings: CorpusSettings) -> None:
    """No `--extend` corpus is the output directory, whose build this one replaces."""
    for path in settings.extend:
        if resolved_path(path) == resolved_path(settings.output):
            raise UsageError(f"--extend {path} is --output: a build replaces the corpus in its output directory; "
                             "give the extended corpus another --output")


def check_output_is_no_input(output: str, input_files: list[str]) -> None:
    target = resolved_path(output)
    for path in input_files:
        if resolved_path(path) == target:
            raise UsageError(f"--output {output} is the input file {redacted(path)}; give a directory for the corpus")


def found_inputs(settings: CorpusSettings) -> BuildInputs:
    """The earlier corpora of `--extend` (each checked against its manifest) and the `--url-blocklist` files, read
    once before anything is written (`pipeline.build_inputs`): what cannot be read or extended is a usage error."""
    try:
        return read_build_inputs(settings)
    except (ValueError, BlocklistError, OSError) as error:
        raise UsageError(str(error)) from error


def check_selected(found: BuildInputs) -> None:
    """A selection through an index chose some capture to read."""
    if found.index_plan is not None and not found.index_plan.units:
        raise UsageError(f"the selection matches none of the {found.index_plan.listed:,} captures the index lists "
                         "(no row group's statistics admit it)")


def dry_run(settings: CorpusSettings) -> int:
    """`--dry-run`: what the index selects, and an estimate of reading it; nothing is read or written."""
    FileSystems.set_options(ViewedOnceOptions(list(settings.beam_args)))
    found = found_inputs(settings)
    check_selected(found)
    print(describe_selection(found.index_plan, count_selection(settings.index, found.index_plan)))
    return 0


class BuildFailed(Exception):
    """The pipeline failed, or its accounting does not balance: nothing was published."""


class PublishCutShort(Exception):
    """Publishing failed half-way: its journal stays, and the next run on the output directory finishes it."""


def prepare_output(output: str) -> list[str]:
    """Creates the output directory (nothing in it is changed before the build is complete).

    Returns the local directories it made, deepest first: a build that fails removes them again.
    """
    if is_local(output) and os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"--output {output} is a file; give a directory")
    made = []
    if is_local(output):
        missing = os.path.abspath(output)
        while not os.path.lexists(missing):
            made.append(missing)
            missing = os.path.dirname(missing)
    try:
        if not FileSystems.exists(output):
            FileSystems.mkdirs(output)
    except Exception as error:  # noqa: BLE001
        raise UsageError(f"cannot write to --output {output}: {error}; choose a writable directory") from error
    return made


def remove_made(directories: list[str]) -> None:
    """Removes the directories `prepare_output` made, deepest first, as long as they are empty."""
    for directory in directories:
        try:
            os.rmdir(directory)
        except OSError:
            return


@contextlib.contextmanager
def runner_output_to(log_path: str):
    """Sends what is written to stderr, by the runner's logging and by its worker processes, to `log_path`.

    Yields the stream of the terminal's stderr, for the progress line. The
    redirection is of file descriptor 2, so worker processes (multi-processing,
    Dask) inherit it; where `sys.stderr` is not that descriptor (a test's
    capture), that is yielded.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(log_path, "ab") as log:
            os.dup2(log.fileno(), 2)
        with os.fdopen(os.dup(saved), "w", buffering=1) as terminal:
            yield terminal if sys.stderr is sys.__stderr__ else sys.stderr
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def build(settings: CorpusSettings, total_bytes: int, units_dir: str | None = None,
          found: BuildInputs | None = None, source: DocumentSource = WARC_SOURCE) -> dict:
    """Runs the pipeline that writes the build `settings` describe into `settings.output`; returns its report,
    with the runner that built it (`runner`: not in report.json, which is the same whatever the runner).

    Unless `--verbose`, what Beam and its workers log goes to a log file,
    named when the build fails and removed when it succeeds. `units_dir`, `found`: see
    `pipeline.graph.build_corpus`; `source`: where its documents come from (`pipeline.graph.DocumentSource`).
    """
    options = build_options(list(settings.beam_args))
    runner_description = describe_runner(options.view_as(StandardOptions).runner)
    log_descriptor, log_path = tempfile.mkstemp(prefix="webcorpus-", suffix=".log")
    os.close(log_descriptor)
    try:
        # (In the try: a runner that cannot run this Beam release says so as a failed build, in one line.)
        runner = make_runner(options)
        with contextlib.nullcontext(sys.stderr) if settings.verbose else runner_output_to(log_path) as terminal:
            # Progress notes need a directory that every worker sees (pipeline.progress.progress_notes).
            with progress_notes(settings.output, runner is not None, settings.quiet) as notes:
                with ProgressDisplay(notes, total_bytes, terminal, worker_processes(options))\
                        if notes else contextlib.nullcontext(), remembered_dofn_specs(), \
                        beam.Pipeline(runner=runner, options=options) as pipeline:
                    build_corpus(pipeline, settings, notes, units_dir=units_dir, found=found, source=source,
                                 compressing_threads=cores_per_worker(options))
    except Exception as error:
        logged = os.path.getsize(log_path) > 0
        if not logged:
            os.remove(log_path)
        raise BuildFailed(describe_failure(error) + (f" (the runner's log: {log_path})" if logged else "")) \
            from error
    except BaseException:
        os.remove(log_path)
        raise
    os.remove(log_path)
    return dict(read_report(settings.output), runner=runner_description)


def describe_failure(error: BaseException) -> str:
    """One line: what went wrong, all of its first line; a full disk is said as such, wherever it happened."""
    if disk_full(error):
        return f"the disk is full ({os.strerror(errno.ENOSPC)})"
    return describe_error(error, limit=None)


def run(settings: CorpusSettings) -> tuple[dict, list[str]]:
    """Builds the corpus that `settings` describe and publishes it; returns the report and notes for the user.

    The build is written in a staging directory of its own inside `--output`
    (`pipeline.publish`); whatever goes wrong before it is published, the
    output directory is left as it was.
    """
    # The launcher reads listings and matches inputs before any pipeline exists: file systems that take Beam's
    # options (s3://'s region and credentials, ...) get them now.
    options = ViewedOnceOptions(list(settings.beam_args))
    FileSystems.set_options(options)
    missing = flink_job_server_missing(options)
    if missing:
        raise UsageError(missing)
    settings = expand_listings(settings)
    check_inputs_apart_from_output(settings.inputs, settings.output)
    total_bytes, input_files = check_inputs(settings.inputs, each_an_archive=bool(settings.rebuild_of))
    check_output_is_no_input(settings.output, [meta.path for meta in input_files])
    check_extend_is_no_output(settings)
    found = found_inputs(settings)
    check_selected(found)
    made = prepare_output(settings.output)
    try:
        return publish_build(settings, total_bytes, input_files, found)
    except BaseException:
        remove_made(made)
        raise


def publish_build(settings: CorpusSettings, total_bytes: int, input_files: list,
                  found: BuildInputs | None = None, source: DocumentSource = WARC_SOURCE) -> tuple[dict, list[str]]:
    """Builds into a staging directory of the output directory, and publishes the build there (`run`); resumes
    the build that an earlier run of it left unfinished (`pipeline.resumable`; `input_files`: `check_inputs`';
    `found`: `found_inputs`'). `source`: where the documents come from (`pipeline.graph.DocumentSource`)."""
    found = found if found is not None else found_inputs(settings)
    try:
        key = signing_key(create=True)
    except SigningKeyUnavailable as error:
        raise UsageError(str(error)) from error
    published = False
    try:
        with output_lock(settings.output) as taken_over:
            notes = recover(settings.output)
            check_nothing_in_the_way(settings.output, names_a_build_may_write(settings.output))
            units_dir, resumed = resumable.prepare(
                settings.output, resumable.build_identity(settings, found, input_files, source.resumed_under),
                settings.resume, source.units_are)
            # Said now: whether this run reuses earlier work matters while it runs.
            for note in taken_over + resumed:
                print(f"{program_name()}: {note}", file=sys.stderr)
            staging = new_staging_dir(settings.output)
            try:
                try:
                    report = build(dataclasses.replace(settings, output=staging), total_bytes, units_dir, found,
                                   source)
                finally:
                    checked_out = units_dir and resumable.not_reused(units_dir)
                    if checked_out:
                        print(f"{program_name()}: {checked_out}", file=sys.stderr)
                unbalanced = imbalances(report)
                if unbalanced:
                    raise BuildFailed(f"the accounting does not balance: {'; '.join(unbalanced)}")
                sign_build(staging, key)
                with signals_held():
                    try:
                        publish(staging, settings.output)
                    except Exception as error:
                        raise PublishCutShort(describe_failure(error)) from error
                    if units_dir:
                        resumable.finish(units_dir)
                    published = True
            except BaseException:
                # A publish that began is finished by the next run (it may have moved the earlier build).
                if not publish_begun(staging):
                    remove_exactly([staging])
                    if units_dir:
                        resumable.keep_if_finished_any(units_dir)
                raise
    except KeyboardInterrupt as interruption:
        # Once published, whatever ends the run (releasing the lock) says so: DIR holds the new build.
        if published:
            raise InterruptedWhilePublishing(getattr(interruption, "signum", signal.SIGINT)) from None
        raise
    except OutputRefused as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise UsageError(f"cannot write to --output {settings.output}: {error}; choose a writable directory") \
            from error
    return report, notes


def check_rebuild(manifest: dict, settings: CorpusSettings) -> None:
    """A manifest to rebuild from is input: its checksum holds, a build of this user signed it (unless
    `--trust-manifest`), it lists only outputs a build writes, and its inputs are WARC or ARC files (told by their
    first bytes, as a lone --input is, before anything is hashed) that are as they were."""
    path = settings.rebuild_of
    if "select" in manifest["options"]:
        raise UsageError(f"--rebuild {path} is a selection's manifest (python -m pipeline.select): repeat it with "
                         f"python -m pipeline.select --rebuild {path} --output DIR")
    if not checksum_holds(manifest):
        raise UsageError(f"--rebuild {path} was changed since its build wrote it (manifest_sha256 differs): it cannot "
                         "say what that build was")
    problem = None if settings.trust_manifest else signature_problem(manifest)
    if problem:
        raise UsageError(f"--rebuild {path} is not a manifest that a build of this user signed: {problem}; to rebuild "
                         "from it all the same, add --trust-manifest (its inputs must still be WARC or ARC files)")
    try:
        inputs = [(entry["path"], entry["sha256"]) for entry in manifest["inputs"]]
        outputs = [entry["path"] for entry in manifest["outputs"]]
        if not all(isinstance(value, str) for pair in inputs for value in pair):
            raise TypeError("an input's path or sha256 is not a string")
    except (KeyError, TypeError) as error:
        raise UsageError(f"--rebuild {path}: its inputs and outputs are not a webcorpus build's "
                         f"({type(error).__name__}: {error})") from error
    strange = [name for name in outputs if not is_output_name(name)]
    if strange:
        raise UsageError(f"--rebuild {path} lists the output {strange[0]!r}, which is no file a build writes")
    options = manifest["options"]
    for option, entry in [*(("--quality-model", model) for model in options.get("quality_models", ())),
                          *(("--decontaminate", benchmark)
                            for benchmark in options.get("decontaminate", {}).get("benchmarks", ())),
                          *([("--tokenizer", options["tokenizer"])] if options.get("tokenizer") else []),
                          *([("--quality-pack", options["quality_pack"])] if options.get("quality_pack") else [])]:
        if not os.path.isfile(entry["path"]) or digest_file(entry["path"]).sha256 != entry["sha256"]:
            raise UsageError(f"--rebuild {path}: its {option} {entry['path']} is missing or changed since the "
                             "manifest was written (sha256 differs)")
    problem = segmenters_changed(options.get("word_segmenters"), settings)
    if problem:
        raise UsageError(f"--rebuild {path}: {problem}")
    for input_path, sha256 in inputs:
        try:
            if not FileSystems.exists(input_path):
                raise UsageError(f"input {input_path} of the manifest is missing")
            check_inputs((escape_glob(input_path) if is_local(input_path) else input_path,), each_an_archive=True)
            if digest_file(input_path).sha256 != sha256:
                raise UsageError(f"input {input_path} changed since the manifest was written (sha256 differs)")
        except (RemoteReadError, BuildFailed) as error:
            # A manifest names URLs without their credentials (transforms.filesystems.locations).
            raise BuildFailed(f"{error if isinstance(error, BuildFailed) else describe_failure(error)} (a manifest "
                              "names URLs without credentials: give them in ~/.netrc)") from error


def compare_with_manifest(manifest: dict, output: str) -> list[str]:
    """The outputs of `manifest` that `output` does not reproduce byte for byte."""
    return [
        entry["path"] for entry in manifest["outputs"]
        if not FileSystems.exists(FileSystems.join(output, entry["path"]))
        or digest_file(FileSystems.join(output, entry["path"])).sha256 != entry["sha256"]
    ]


def main(argv: list[str] | None = None) -> int:
    settings = parse_settings(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO if settings.verbose else logging.WARNING)

    if settings.dry_run:
        try:
            return dry_run(settings)
        except UsageError as error:
            print(f"{program_name()}: error: {error}", file=sys.stderr)
            return 2

    def launch() -> tuple[CorpusSettings, dict, list[str], dict | None]:
        manifest = load_manifest(settings.rebuild_of) if settings.rebuild_of else None
        if manifest is not None:
            check_rebuild(manifest, settings)
        return (settings, *run(settings), manifest)

    return run_and_tell(settings.output, launch)


def run_and_tell(output: str, launch: Callable[[], tuple[CorpusSettings, dict, list[str], dict | None]],
                 program: str | None = None, advise: bool = True) -> int:
    """Runs `launch` (which checks what it was asked, builds into `output` and publishes: the settings built, the
    report, notes, and the manifest a rebuild repeats), says how it went in one line or the report, and returns
    the exit status. `program`: the command's name in what it says (`program_name()`'s by default); `advise`: say
    what the options given could do better (a build's options)."""
    program = program or program_name()
    unchanged = f"nothing was published, {output} is as it was"
    with RunWatch() as signals:
        try:
            settings, report, notes, manifest = launch()
        except UsageError as error:
            print(f"{program}: error: {error}", file=sys.stderr)
            return 2
        except PublishCutShort as error:
            print(f"{program}: publishing was cut short: {error}; the next run on {output} "
                  "finishes it", file=sys.stderr)
            return 1
        except InterruptedWhilePublishing as error:
            print(f"{program}: interrupted by {error.signum.name} while publishing; the publish was finished: "
                  f"{output} holds the new build", file=sys.stderr)
            return 128 + error.signum
        except (BuildFailed, KeyboardInterrupt) as error:
            if signals.received is None and isinstance(error, BuildFailed):
                logging.getLogger(__name__).debug("build failed", exc_info=True)
                print(f"{program}: the build failed: {error}; {unchanged}", file=sys.stderr)
                return 1
            received = signals.received or signal.SIGINT
            print(f"{program}: interrupted by {received.name}; {unchanged}", file=sys.stderr)
            return 128 + received
        if signals.received is not None:
            # Its exception was lost (pipeline.launch says where) once publishing began (before, `signals_held`
            # stops it): the build was published.
            print(f"{program}: interrupted by {signals.received.name}; the build was published in {output}",
                  file=sys.stderr)
            return 128 + signals.received
        try:
            return tell_the_build(settings, report, notes, manifest, advise)
        except KeyboardInterrupt:
            received = signals.received or signal.SIGINT
            print(f"{program}: interrupted by {received.name}; the build was published in {output}",
                  file=sys.stderr)
            return 128 + received


def tell_the_build(settings: CorpusSettings, report: dict, notes: list[str], manifest: dict | None,
                   advise: bool = True) -> int:
    """Prints the report of a published build and, for a rebuild, whether it is byte-identical; the exit status."""
    # Not for a rebuild: it repeats its manifest's options as they are.
    unreadable = None if manifest is not None or not advise else unreadable_text_note(settings)
    for note in notes + [note for note in (unreadable, html_options_not_applied(report)) if note]:
        print(f"{program_name()}: {note}", file=sys.stderr)
    print(format_report(report))
    print(f"\nBuilt by the runner {report['runner']}")
    print(f"Corpus, report.json, report.html, manifest.json and side outputs are in {settings.output}")
    if manifest is None:
        return 0
    different = compare_with_manifest(manifest, settings.output)
    if different:
        print(f"Rebuild differs from {settings.rebuild_of} in: {', '.join(different)}")
        return 1
    print(f"Rebuild is byte-identical to the build of {settings.rebuild_of} ({len(manifest['outputs'])} files)")
    return 0
