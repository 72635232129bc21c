"""WriteManifest: the build manifest (see `manifest`), written once every output file is digested."""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.report.manifest import build_manifest, write_manifest
from transforms.report.report import TOKENS


def token_totals(report_written) -> dict:
    """The token totals of report.json (`report_written`: its digest), as written."""
    with FileSystems.open(report_written.path) as handle:
        return json.loads(handle.read())[TOKENS]


class WriteManifest(beam.PTransform):
    """Writes `manifest.json` from PCollections of input and output `FileDigest`s, and with a third, report.json's
    digest (--tokenizer), the report's token totals."""

    def __init__(self, output_dir: str, options: dict):
        super().__init__()
        self._output_dir = output_dir
        self._options = options

    def expand(self, digests):
        inputs, outputs, *report = digests
        tokens = [beam.pvalue.AsSingleton(report[0] | "TokenTotals" >> beam.Map(token_totals))] if report else []
        return (
            inputs
            | "AllInputs" >> beam.combiners.ToList()
            | "Build" >> beam.Map(
                build_manifest,
                beam.pvalue.AsSingleton(outputs | "AllOutputs" >> beam.combiners.ToList()),
                self._options,
                *tokens,
            )
            | "Write" >> beam.Map(write_manifest, self._output_dir)
        )
