"""`python -m pipeline`: build a corpus, print the run report."""

from __future__ import annotations

import logging
import sys

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from pipeline.graph import SIDE_OUTPUTS, build_corpus
from pipeline.options import CorpusSettings, parse_settings
from transforms.compress_write import FILE_PREFIX
from transforms.report import REPORT_NAME, format_report, read_report

# Short names for runners that Beam only knows by their module path.
RUNNER_ALIASES = {
    "DaskRunner": "apache_beam.runners.dask.dask_runner.DaskRunner",
}
IN_PROCESS_RUNNER_NAMES = {None, "DirectRunner", "direct", "directrunner"}


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


def check_inputs(patterns: tuple[str, ...]) -> None:
    for pattern in patterns:
        try:
            matched = FileSystems.match([pattern])[0].metadata_list
        except Exception as error:  # noqa: BLE001 - any file system's failure is a usage error here
            raise UsageError(f"cannot read --input {pattern}: {error}") from error
        if not matched:
            raise UsageError(f"no file matches --input {pattern}; check the path or quote the glob")


def prepare_output(output: str) -> None:
    """Creates the output directory and removes what an earlier build left in it."""
    try:
        if not FileSystems.exists(output):
            FileSystems.mkdirs(output)
        earlier = [FileSystems.join(output, f"{name}-*") for name in (FILE_PREFIX,) + SIDE_OUTPUTS]
        earlier.append(FileSystems.join(output, REPORT_NAME))
        stale = [meta.path for result in FileSystems.match(earlier) for meta in result.metadata_list]
        if stale:
            FileSystems.delete(stale)
    except Exception as error:  # noqa: BLE001
        raise UsageError(f"cannot write to --output {output}: {error}") from error


def run(settings: CorpusSettings) -> dict:
    """Builds the corpus that `settings` describe; returns the report."""
    check_inputs(settings.inputs)
    prepare_output(settings.output)
    options = PipelineOptions(list(settings.beam_args))
    with beam.Pipeline(runner=make_runner(options), options=options) as pipeline:
        build_corpus(pipeline, settings)
    return read_report(settings.output)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    settings = parse_settings(sys.argv[1:] if argv is None else argv)
    try:
        report = run(settings)
    except UsageError as error:
        print(f"python -m pipeline: error: {error}", file=sys.stderr)
        return 2
    print(format_report(report))
    print(f"\nCorpus, report.json and side outputs are in {settings.output}")
    return 0
