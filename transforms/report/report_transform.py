"""WriteReport: the run report's tallies, summed in Beam and written as `DIR/report.json` (see `report`)."""

from __future__ import annotations

from collections import Counter

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from transforms.report.report import build_report, tally_of, write_report
from transforms.stage import SumCounters


class TallyBundle(beam.DoFn):
    """The sum of the tallies (`tally_of`) of a bundle's outcomes, one per bundle.

    Summed here, beside the stage that made the outcomes, a tally per bundle
    crosses to the report's sum, not one per record: Beam's local runner does
    not fuse a Flatten into the stages before it, and carried every record's
    (at 1,000,000 captures, 860 MB of skips' tallies through the runner).
    """

    def start_bundle(self):
        self._tally = Counter()

    def process(self, outcome):
        self._tally.update(tally_of(outcome))

    def finish_bundle(self):
        if self._tally:
            yield GlobalWindows.windowed_value(self._tally)


class WriteReport(beam.PTransform):
    """Tallies the outcomes (`tally_of`) of a PCollection, or of a tuple of them, and sums the tallies into
    `output_dir/report.json`; outputs its digest (`FileDigest`)."""

    def __init__(self, output_dir: str, options: dict):
        super().__init__()
        self._output_dir = output_dir
        self._options = options

    def expand(self, outcomes):
        kinds = (outcomes,) if isinstance(outcomes, beam.PCollection) else tuple(outcomes)
        return (
            [kind | f"Tally{index}" >> beam.ParDo(TallyBundle()) for index, kind in enumerate(kinds)]
            | "AllTallies" >> beam.Flatten()
            | "Sum" >> beam.CombineGlobally(SumCounters())
            | "Build" >> beam.Map(build_report, self._options)
            | "Write" >> beam.Map(write_report, self._output_dir)
        )
