"""The webcorpus graph: ReadWarc -> Charset -> CleanHtml -> MinimizeText -> HashDedup -> CompressWrite.

Beside the corpus, the output directory gets `report.json`, and one JSON
line per record in `dead-letter-*.jsonl` (records a stage could not
process, with stage and reason), `skipped-*.jsonl` (records left out on
purpose, by kind) and `duplicates-*.jsonl` (every dropped duplicate with its
survivor).
"""

from __future__ import annotations

import dataclasses
import json

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from pipeline.options import CorpusSettings
from transforms.charset import DecodeCharset
from transforms.clean_html import CleanHtml
from transforms.compress_write import CompressWrite
from transforms.hash_dedup import HashDedup
from transforms.minimize_text import MinimizeText
from transforms.read_warc import ReadWarc
from transforms.report import (WriteReport, tally_dead_letter, tally_duplicate, tally_kept, tally_read,
                               tally_skip, tally_written)
from transforms.stage import DEAD_LETTER

SIDE_OUTPUTS = ("dead-letter", "skipped", "duplicates")


def to_json_line(record) -> str:
    return json.dumps(dataclasses.asdict(record), ensure_ascii=False, sort_keys=True)


class WriteJsonLines(beam.PTransform):
    def __init__(self, output_dir: str, name: str):
        super().__init__()
        self._prefix = FileSystems.join(output_dir, name)

    def expand(self, records):
        return (
            records
            | "ToJson" >> beam.Map(to_json_line)
            | "Write" >> beam.io.WriteToText(self._prefix, file_name_suffix=".jsonl", num_shards=1,
                                             shard_name_template="-SSSSS-of-NNNNN")
        )


def build_corpus(pipeline: beam.Pipeline, settings: CorpusSettings):
    """Adds the whole corpus build to `pipeline`; returns the PCollection of report paths."""
    read = pipeline | "ReadWarc" >> ReadWarc(settings.inputs)
    decoded = read.documents | "Charset" >> DecodeCharset()
    cleaned = decoded.documents | "CleanHtml" >> CleanHtml(settings.drop_selectors)
    minimized = cleaned.documents | "MinimizeText" >> MinimizeText()
    deduplicated = minimized.documents | "HashDedup" >> HashDedup()
    written = deduplicated.survivors | "CompressWrite" >> CompressWrite(
        settings.output, settings.codec, settings.level, settings.num_shards, settings.sync_interval)

    dead_letters = [stage[DEAD_LETTER] for stage in (read, decoded, cleaned, minimized)]
    dead = dead_letters | "AllDeadLetters" >> beam.Flatten()
    for name, records in zip(SIDE_OUTPUTS, (dead, read.skipped, deduplicated.duplicates)):
        _ = records | f"Write-{name}" >> WriteJsonLines(settings.output, name)

    tallies = [
        read.documents | "TallyRead" >> beam.Map(tally_read),
        read.skipped | "TallySkipped" >> beam.Map(tally_skip),
        dead | "TallyDeadLetter" >> beam.Map(tally_dead_letter),
        deduplicated.survivors | "TallyKept" >> beam.Map(tally_kept),
        deduplicated.duplicates | "TallyDuplicates" >> beam.Map(tally_duplicate),
        written | "TallyWritten" >> beam.Map(tally_written),
    ]
    return tallies | "AllTallies" >> beam.Flatten() | "Report" >> WriteReport(settings.output, settings.describe())
