"""The other formats of `--format` beside Avro: Parquet and JSON Lines, each with its codecs, on the same records.

Each setting writes the records with the pipeline's own writer of that format (`transforms.stages.compress_write.formats.row_writer`:
pyarrow's ParquetWriter in row groups of 4096 rows, or JSON Lines through zstd or gzip) into memory, and reads them
back as `read_corpus` does (`scan_parquet`, `scan_jsonl`, without checking digests: the Avro readings do not
either), checking that they come back equal; sizes and costs are measured as the Avro settings' are (`measure`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from benchmarks.compression_study.measure import Measurement, RoundTripError, _ResidentPeak, _run_repeatedly
from transforms.corpus.read_corpus import Problem, scan_shard
from transforms.stages.compress_write.formats import resolve_codec, row_writer, shard_extension
from transforms.stages.compress_write.schema import DEFAULT_FIELDS

# (format, codec, level): each codec of the issue at its default level, and zstd 3 beside zstd 9 for both formats.
FORMAT_SETTINGS = (("parquet", "zstd", 3), ("parquet", "zstd", 9), ("parquet", "snappy", None),
                   ("jsonl", "zstd", 3), ("jsonl", "zstd", 9), ("jsonl", "gzip", 6))


@dataclass(frozen=True)
class FormatSetting:
    file_format: str
    codec: str
    level: int | None
    # Measurement's setting is named and sized as the Avro ones are; a format has no block size.
    block_size: int = 0

    @property
    def name(self) -> str:
        return f"{self.file_format} {self.codec}" + ("" if self.level is None else f" {self.level}")


def write_format(records: list[dict], setting: FormatSetting) -> bytes:
    output = io.BytesIO()
    writer = row_writer(setting.file_format, output, DEFAULT_FIELDS, setting.codec, setting.level)
    for record in records:
        writer.write(record)
    writer.close()
    return output.getvalue()


def read_format(data: bytes, setting: FormatSetting) -> list[dict]:
    name = f"corpus-00000-of-00001{shard_extension(setting.file_format, setting.codec)}"
    records = list(scan_shard(data, name, verify=False))
    problems = [item for item in records if isinstance(item, Problem)]
    if problems:
        raise RoundTripError(f"{setting.name}: {problems[0]}")
    return records


def measure_formats(records: list[dict], repeats: int, single_run_over: float,
                    settings=FORMAT_SETTINGS) -> list[Measurement]:
    """Each (format, codec, level) of `settings` written and read back; RoundTripError when one does not read back
    the records it wrote."""
    peak = _ResidentPeak()
    measurements = []
    for file_format, codec, level in settings:
        setting = FormatSetting(file_format, *resolve_codec(file_format, codec, level))
        written = []
        compress_cost = _run_repeatedly(lambda: written.append(write_format(records, setting)), peak, repeats,
                                        single_run_over)
        data = written[-1]
        if read_format(data, setting) != records:
            raise RoundTripError(f"{setting.name} does not read back its records")
        decompress_cost = _run_repeatedly(lambda: read_format(data, setting), peak, repeats, single_run_over)
        measurements.append(Measurement(setting, len(data), compress_cost, decompress_cost))
    return measurements
