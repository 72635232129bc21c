"""WriteManifest: the build manifest (see `manifest`), written once every output file is digested."""

from __future__ import annotations

import apache_beam as beam

from transforms.report.manifest import build_manifest, write_manifest


class WriteManifest(beam.PTransform):
    """Writes `manifest.json` from PCollections of input and output `FileDigest`s."""

    def __init__(self, output_dir: str, options: dict):
        super().__init__()
        self._output_dir = output_dir
        self._options = options

    def expand(self, digests):
        inputs, outputs = digests
        return (
            inputs
            | "AllInputs" >> beam.combiners.ToList()
            | "Build" >> beam.Map(
                build_manifest,
                beam.pvalue.AsSingleton(outputs | "AllOutputs" >> beam.combiners.ToList()),
                self._options,
            )
            | "Write" >> beam.Map(write_manifest, self._output_dir)
        )
