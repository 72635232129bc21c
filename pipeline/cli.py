"""`python -m pipeline`: build a corpus, print the run report."""

from __future__ import annotations

import logging
import os
import sys
import tempfile

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from pipeline.graph import SIDE_OUTPUTS, build_corpus
from pipeline.options import RUNNER_ALIASES, CorpusSettings, load_manifest, parse_settings
from pipeline.progress import ProgressDisplay
from transforms.compress_write import FILE_PREFIX, STAGING_DIR
from transforms.manifest import MANIFEST_NAME, digest_file
from transforms.read_warc import open_uncompressed, starts_like_warc
from transforms.document import describe_error
from transforms.report import REPORT_NAME, format_report, read_report, write_report

IN_PROCESS_RUNNER_NAMES = {None, "DirectRunner", "direct", "directrunner"}


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


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


def make_runner(options: PipelineOptions):
    """The runner for `options`.

    Beam 2.77's DirectRunner first tries to download a Prism binary, which
    fails offline; under that name this uses the in-process FnApiRunner
    (which also runs `--direct_running_mode=multi_processing`).
    """
    standard = options.view_as(StandardOptions)
    if standard.runner in IN_PROCESS_RUNNER_NAMES:
        from apache_beam.portability.api import beam_provision_api_pb2
        from apache_beam.runners.portability.fn_api_runner import fn_runner
        from apache_beam.runners.portability.portable_runner import JobServiceHandle

        encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
        provision = fn_runner.ExtendedProvisionInfo(beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded))
        return fn_runner.FnApiRunner(provision_info=provision)
    standard.runner = RUNNER_ALIASES.get(standard.runner, standard.runner)
    return None


def check_inputs(patterns: tuple[str, ...]) -> int:
    """Every pattern matches a file; a lone input file must be a readable WARC file.

    Among several inputs, a file that is not a WARC is a per-file error in
    the report and the run goes on. Returns the inputs' total size.
    """
    files = []
    total = 0
    for pattern in patterns:
        try:
            matched = FileSystems.match([pattern])[0].metadata_list
        except Exception as error:  # noqa: BLE001 - any file system's failure is a usage error here
            raise UsageError(f"cannot read --input {pattern}: {error}") from error
        if not matched:
            raise UsageError(f"no file matches --input {pattern}; check the path or quote the glob")
        files.extend(meta.path for meta in matched)
        total += sum(meta.size_in_bytes for meta in matched)
    if len(files) == 1:
        try:
            is_warc = starts_like_warc(lambda: open_uncompressed(files[0]))
        except Exception as error:  # noqa: BLE001
            raise UsageError(f"cannot read {files[0]}: {error}") from error
        if not is_warc:
            raise UsageError(f"{files[0]} is not a WARC file (it does not start with a WARC record); "
                             "give WARC or WARC.gz files")
    return total


def remove_outputs(output: str) -> None:
    """Removes every file a build writes in `output`."""
    earlier = [FileSystems.join(output, f"{name}-*") for name in (FILE_PREFIX,) + SIDE_OUTPUTS]
    earlier += [FileSystems.join(output, name) for name in (REPORT_NAME, MANIFEST_NAME, STAGING_DIR)]
    stale = [meta.path for result in FileSystems.match(earlier) for meta in result.metadata_list]
    if stale:
        FileSystems.delete(stale)


class BuildFailed(Exception):
    """The pipeline failed: no output was published, and report.json says so."""


def prepare_output(output: str) -> None:
    """Creates the output directory and removes what an earlier build left in it."""
    try:
        if os.path.isfile(output):
            raise UsageError(f"--output {output} is a file; give a directory")
        if not FileSystems.exists(output):
            FileSystems.mkdirs(output)
        probe = FileSystems.join(output, f"{STAGING_DIR}-probe")
        with FileSystems.create(probe) as handle:
            handle.write(b"")
        FileSystems.delete([probe])
        remove_outputs(output)
    except UsageError:
        raise
    except Exception as error:  # noqa: BLE001
        raise UsageError(f"cannot write to --output {output}: {error}; choose a writable directory") from error


def run(settings: CorpusSettings) -> dict:
    """Builds the corpus that `settings` describe; returns the report."""
    total_bytes = check_inputs(settings.inputs)
    prepare_output(settings.output)
    options = ViewedOnceOptions(list(settings.beam_args))
    runner = make_runner(options)
    try:
        # Progress notes need a directory that every worker sees: local runs only.
        if runner is None or settings.quiet:
            with beam.Pipeline(runner=runner, options=options) as pipeline:
                build_corpus(pipeline, settings)
        else:
            with tempfile.TemporaryDirectory(prefix="webcorpus-progress-") as notes:
                with ProgressDisplay(notes, total_bytes), beam.Pipeline(runner=runner, options=options) as pipeline:
                    build_corpus(pipeline, settings, notes)
    except Exception as error:
        # What was written would look like a build: only the report remains, saying it failed.
        remove_outputs(settings.output)
        write_report({"status": "failed", "error": describe_error(error), "options": settings.build_identity()},
                     settings.output)
        raise BuildFailed(describe_error(error)) from error
    return read_report(settings.output)


def check_inputs_unchanged(manifest: dict) -> None:
    for entry in manifest["inputs"]:
        if not FileSystems.exists(entry["path"]):
            raise UsageError(f"input {entry['path']} of the manifest is missing")
        if digest_file(entry["path"]).sha256 != entry["sha256"]:
            raise UsageError(f"input {entry['path']} changed since the manifest was written (sha256 differs)")


def compare_with_manifest(manifest: dict, output: str) -> list[str]:
    """The outputs of `manifest` that `output` does not reproduce byte for byte."""
    return [
        entry["path"] for entry in manifest["outputs"]
        if not FileSystems.exists(FileSystems.join(output, entry["path"]))
        or digest_file(FileSystems.join(output, entry["path"])).sha256 != entry["sha256"]
    ]


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    settings = parse_settings(sys.argv[1:] if argv is None else argv)
    try:
        manifest = load_manifest(settings.rebuild_of) if settings.rebuild_of else None
        if manifest is not None:
            check_inputs_unchanged(manifest)
        report = run(settings)
    except UsageError as error:
        print(f"python -m pipeline: error: {error}", file=sys.stderr)
        return 2
    except BuildFailed as error:
        logging.getLogger(__name__).debug("build failed", exc_info=True)
        print(f"python -m pipeline: the build failed: {error}\nNothing was published in {settings.output}; "
              f"its {REPORT_NAME} says the build failed.", file=sys.stderr)
        return 1
    print(format_report(report))
    print(f"\nCorpus, report.json, manifest.json and side outputs are in {settings.output}")
    if manifest is None:
        return 0
    different = compare_with_manifest(manifest, settings.output)
    if different:
        print(f"Rebuild differs from {settings.rebuild_of} in: {', '.join(different)}")
        return 1
    print(f"Rebuild is byte-identical to the build of {settings.rebuild_of} ({len(manifest['outputs'])} files)")
    return 0
