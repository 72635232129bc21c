"""WriteManifest: the build manifest (see `manifest`), written once every output file is digested."""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.report.manifest import build_manifest, write_manifest


def report_sections(report_written, names: tuple[str, ...]) -> dict:
    """The sections `names` of report.json (`report_written`: its digest), as written."""
    with FileSystems.open(report_written.path) as handle:
        report = json.loads(handle.read())
    return {name: report[name] for name in names}


class WriteManifest(beam.PTransform):
    """Writes `manifest.json` from PCollections of input and output `FileDigest`s and report.json's digest, with the
    report's `sections` (the token totals of --tokenizer, the selection of --index)."""

    def __init__(self, output_dir: str, options: dict, sections: tuple[str, ...] = ()):
        super().__init__()
        self._output_dir = output_dir
        self._options = options
        self._sections = sections

    def expand(self, digests):
        inputs, outputs, report = digests
        names = self._sections
        sections = [beam.pvalue.AsSingleton(report | "ReportSections" >> beam.Map(report_sections, names))] \
            if names else []
        return (
            inputs
            | "AllInputs" >> beam.combiners.ToList()
            | "Build" >> beam.Map(
                build_manifest,
                # (A view: Beam's default for no outputs, computed here, not in a stage of its own.)
                outputs | "AllOutputs" >> beam.CombineGlobally(beam.combiners.ToListCombineFn()).as_singleton_view(),
                self._options,
                *sections,
            )
            | "Write" >> beam.Map(write_manifest, self._output_dir)
        )
