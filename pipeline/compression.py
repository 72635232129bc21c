"""The compression study: what each Avro codec, level and block size costs on a corpus.

    python -m pipeline.compression --input DIR_OR_WARC_PATTERN --output REPORT_DIR

`--input` is either a directory of `corpus-*.avro` files that the pipeline
wrote, or WARC files, which are run through the pipeline's stage functions
in process (read_warc, decode_document, HtmlCleaner, minimize_document,
hash_document, then one document per content hash) to get the same records.

Every setting writes the records into memory with the pipeline's own Avro
writer (schema, record conversion, file metadata and block writers of
`transforms.compress_write`) and reads them back with `fastavro.reader`,
checking that they come back equal. For each setting it records the
written size and, for writing and for reading, the median wall and CPU
seconds over `--repeats` runs (one run when the first takes over
`--single-run-over` seconds) and the peak memory (growth of the process's
peak resident memory, Linux only). All levels of every codec are measured
at the pipeline's default block size; the other block sizes at each codec's
default level. By default an evenly spaced sample of the documents, about
`--sample-mb` MB of records, is measured, which keeps the study of the dev
corpus within minutes; `--sample-mb 0` measures every document.

REPORT_DIR gets `compression.json` (every measurement) and
`compression.png` (size against compression and decompression CPU time,
with the Pareto front). docs/compression.md has the results on the dev corpus.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import io
import itertools
import json
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata as package_metadata
from pathlib import Path
from typing import Callable, Iterable

import fastavro
from apache_beam.io.filesystems import FileSystems

from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.charset import decode_document
from transforms.compress_write import CODECS, DEFAULT_SYNC_INTERVAL, FILE_METADATA, PARSED_SCHEMA, avro_record
from transforms.document import Document
from transforms.hash_dedup import Fingerprint, deduplicate, has_text, hash_document
from transforms.html_cleaner import HtmlCleaner
from transforms.minimize_text import minimize_document
from transforms.read_corpus import corpus_files, iter_corpus
from transforms.read_warc import open_uncompressed, read_warc

REPORT_JSON = "compression.json"
REPORT_CHART = "compression.png"

KIB = 1024
MIB = 1024 * KIB
MB = 1000 * 1000

# The levels studied per codec: only what the pipeline writes (`--codec`
# and `--level`, checked by `resolve_level`), so that every setting on the
# chart and its front can be chosen. None for a codec without levels.
LEVELS: dict[str, tuple[int | None, ...]] = {
    "null": (None,),
    "deflate": tuple(range(0, 10)),
    "snappy": (None,),
    "zstandard": (1, 3, 6, 9, 12, 15, 19, 22),
    "xz": tuple(range(0, 10)),
    "bzip2": tuple(range(1, 10)),
}
QUICK_LEVELS: dict[str, tuple[int | None, ...]] = {
    "null": (None,),
    "deflate": (1, 6),
    "snappy": (None,),
    "zstandard": (3,),
    "xz": (0,),
    "bzip2": (1,),
}
BLOCK_SIZES = (16 * KIB, 256 * KIB, MIB, 4 * MIB)
QUICK_BLOCK_SIZES = (16 * KIB, MIB)
DEFAULT_REPEATS = 3
# Eight blocks of the default size and two of the largest: enough to estimate
# ratio and speed (docs/compression.md compares it with the whole dev corpus),
# and it keeps the study of the dev corpus's 27 MB of records within minutes.
DEFAULT_SAMPLE_MB = 8.0
# An operation whose first run takes longer than this is timed once: such a
# run is long against the timer's and the scheduler's noise, and timing the
# slow settings (xz, bzip2, zstandard 19, deflate 5-9) once keeps the study
# within minutes.
DEFAULT_SINGLE_RUN_OVER_SECONDS = 0.5

# Versions that decide the sizes and speeds, for the report.
LIBRARIES = ("fastavro", "backports.zstd", "cramjam")


@dataclass(frozen=True)
class CodecSetting:
    codec: str
    level: int | None
    block_size: int

    @property
    def name(self) -> str:
        return self.codec if self.level is None else f"{self.codec} {self.level}"


@dataclass(frozen=True)
class OperationCost:
    """One operation (writing or reading all records) of one setting."""

    wall_seconds: float  # median over the runs
    cpu_seconds: float  # median over the runs
    # Largest growth of the process's peak resident memory in a run (the
    # output goes to a buffer allocated before); None where the platform
    # cannot tell.
    peak_memory_bytes: int | None
    runs: int


@dataclass(frozen=True)
class Measurement:
    setting: CodecSetting
    written_bytes: int
    compress: OperationCost
    decompress: OperationCost


class RoundTripError(AssertionError):
    """Records read back from a setting's output differ from those written."""


def default_level(codec: str) -> int | None:
    """The level the pipeline writes `codec` with when given none."""
    levels = CODECS.get(codec)
    return levels[2] if levels else None


def study_settings(codecs: Iterable[str], block_sizes: Iterable[int], quick: bool = False) -> list[CodecSetting]:
    """Every level of each codec at the pipeline's default block size, then
    each codec's default level at the other block sizes."""
    levels = QUICK_LEVELS if quick else LEVELS
    codecs = list(codecs)
    settings = [CodecSetting(codec, level, DEFAULT_SYNC_INTERVAL) for codec in codecs for level in levels[codec]]
    for block_size in sorted(set(block_sizes) - {DEFAULT_SYNC_INTERVAL}):
        settings += [CodecSetting(codec, default_level(codec), block_size) for codec in codecs]
    return settings


class _OutputBuffer:
    """An in-memory file over one buffer allocated up front and reused, so
    that what a write measures is the writer's own memory, not the growth
    and fragmentation of a buffer holding the output."""

    def __init__(self, capacity: int = 0):
        self._buffer = bytearray(capacity)
        self.size = 0

    def clear(self) -> None:
        self.size = 0

    def write(self, data) -> None:
        end = self.size + len(data)
        self._buffer[self.size:end] = data  # grows the buffer only when the output outruns it
        self.size = end

    def flush(self) -> None:
        pass

    def seekable(self) -> bool:
        return False

    def getvalue(self) -> bytes:
        return bytes(memoryview(self._buffer)[:self.size])


def _write_to(output, records: list[dict], setting: CodecSetting) -> None:
    # The writer, arguments and metadata CompressWrite writes a shard with;
    # its fixed sync marker changes no size.
    writer = fastavro.write.Writer(output, PARSED_SCHEMA, codec=setting.codec, compression_level=setting.level,
                                   sync_interval=setting.block_size, metadata=FILE_METADATA)
    for record in records:
        writer.write(record)
    writer.flush()


def write_avro(records: list[dict], setting: CodecSetting) -> bytes:
    """The Avro file the pipeline would write for `records` with `setting`."""
    output = _OutputBuffer()
    _write_to(output, records, setting)
    return output.getvalue()


def uncompressed_size(records: list[dict]) -> int:
    """Bytes of `records` in an Avro file without compression, at the default block size."""
    return len(write_avro(records, CodecSetting("null", None, DEFAULT_SYNC_INTERVAL)))


def _reads_back(data: bytes, records: list[dict]) -> bool:
    decoded = fastavro.reader(io.BytesIO(data))
    return all(read == written for read, written in itertools.zip_longest(decoded, records))


def _read_through(data: bytes) -> None:
    # Decodes every record and keeps none, as a consumer streaming the file does.
    for _ in fastavro.reader(io.BytesIO(data)):
        pass


class _ResidentPeak:
    """Growth of the process's peak resident memory over an operation.

    Linux only: writing 5 to /proc/self/clear_refs resets the peak (VmHWM) to
    the current resident size. malloc_trim first returns freed heap memory
    to the system, so that an operation reusing it still shows as growth.
    """

    _STATUS = Path("/proc/self/status")
    _CLEAR_REFS = Path("/proc/self/clear_refs")

    def __init__(self):
        libc_name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(libc_name) if libc_name else None
        self._malloc_trim = getattr(libc, "malloc_trim", None)
        self.available = self._STATUS.exists() and self._CLEAR_REFS.exists()
        self._start = 0

    def _status_bytes(self, key: str) -> int:
        for line in self._STATUS.read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * KIB
        raise LookupError(key)

    def start(self) -> None:
        if not self.available:
            return
        if self._malloc_trim is not None:
            self._malloc_trim(0)
        try:
            self._CLEAR_REFS.write_text("5")
        except OSError:
            self.available = False
            return
        self._start = self._status_bytes("VmRSS")

    def growth(self) -> int | None:
        return self._status_bytes("VmHWM") - self._start if self.available else None


def _run_repeatedly(operation: Callable[[], None], peak: _ResidentPeak, repeats: int,
                    single_run_over: float) -> OperationCost:
    walls, cpus, memories = [], [], []
    for _ in range(repeats):
        gc.collect()  # the previous run's garbage, not to be collected inside this one
        peak.start()
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        operation()
        walls.append(time.perf_counter() - wall_start)
        cpus.append(time.process_time() - cpu_start)
        growth = peak.growth()
        if growth is not None:
            memories.append(growth)
        if walls[0] > single_run_over:
            break
    return OperationCost(statistics.median(walls), statistics.median(cpus), max(memories) if memories else None,
                         len(walls))


def measure(records: list[dict], settings: Iterable[CodecSetting], repeats: int = DEFAULT_REPEATS,
            single_run_over: float = DEFAULT_SINGLE_RUN_OVER_SECONDS) -> list[Measurement]:
    """Writes `records` (Avro records of the corpus schema) with each setting and reads them back.

    Raises RoundTripError when a setting does not read back the records it
    wrote, and what fastavro raises for a codec it cannot write.
    """
    uncompressed = uncompressed_size(records)
    # Room for the output of any codec: none grows data by more than a few percent.
    output = _OutputBuffer(capacity=uncompressed + uncompressed // 8 + MIB)
    peak = _ResidentPeak()
    measurements = []
    # The records and everything imported stay alive throughout: frozen, the
    # garbage collector no longer walks them, neither in a timed run (a
    # reader or writer on its own does not hold a whole corpus) nor in the
    # collection before each run.
    gc.freeze()
    try:
        for setting in settings:
            def compress(setting=setting) -> None:
                output.clear()
                _write_to(output, records, setting)

            compress_cost = _run_repeatedly(compress, peak, repeats, single_run_over)
            data = output.getvalue()
            # Also the untimed first read, which warms up the reader for the timed ones.
            if not _reads_back(data, records):
                raise RoundTripError(f"{setting.name} at block size {setting.block_size} "
                                     "does not read back its records")
            decompress_cost = _run_repeatedly(lambda: _read_through(data), peak, repeats, single_run_over)
            measurements.append(Measurement(setting, len(data), compress_cost, decompress_cost))
    finally:
        gc.unfreeze()
    return measurements


def sample_records(records: list[dict], max_bytes: int) -> list[dict]:
    """Evenly spaced records, in their order, of about `max_bytes` of
    uncompressed Avro; all of them when they are no more.

    Avro compresses each block on its own, so ratio and speed are properties
    of blocks of documents, which a sample spread over the whole corpus
    estimates with less work."""
    fraction = min(1.0, max_bytes / uncompressed_size(records))
    return [record for index, record in enumerate(records) if int((index + 1) * fraction) > int(index * fraction)]


def unwritable_codecs(codecs: Iterable[str]) -> dict[str, str]:
    """The codecs that fail to write here (a missing library, a broken block writer), with the error."""
    probe = [avro_record(Document(url="https://example.org/", warc_record_id="", warc_date="", source_file="",
                                  source_offset=0, http_status=200, content_type="text/html", html="<div>probe</div>"))]
    failures = {}
    for codec in codecs:
        try:
            write_avro(probe, CodecSetting(codec, LEVELS[codec][0], DEFAULT_SYNC_INTERVAL))
        except Exception as error:  # noqa: BLE001 - whatever the failure, the codec cannot be studied here
            failures[codec] = f"{type(error).__name__}: {error}"
    return failures


# --- Input -------------------------------------------------------------------

class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


def corpus_documents(warc_paths: Iterable[str]) -> list[Document]:
    """The documents the pipeline writes for these WARC files, in its order
    (input files in the given order, each file's documents in file order),
    from its stage functions run in process: a document a stage fails on is
    left out (the pipeline's dead letters), duplicates are left out, and
    survivors list their duplicates, by HashDedup's own rule; a document
    without text is left out (the pipeline's no-text skips)."""
    stages = (decode_document, HtmlCleaner(), minimize_document)
    documents = []
    for path in warc_paths:
        for outcome in read_warc(lambda path=path: open_uncompressed(path), path):
            if not isinstance(outcome, Document):
                continue
            try:
                for stage in stages:
                    outcome = stage(outcome)
            except Exception:  # noqa: BLE001 - the pipeline sends such a document to the dead letters
                continue
            if has_text(outcome):
                documents.append(hash_document(outcome))

    notes, duplicates = deduplicate(Fingerprint.of(document) for document in documents)
    notes = {(note.source_file, note.source_offset): note for note in notes}
    dropped = {(duplicate.source_file, duplicate.source_offset) for duplicate in duplicates}
    survivors = []
    for document in documents:
        key = (document.source_file, document.source_offset)
        if key in dropped:
            continue
        if key in notes:
            document = document.replace(duplicate_count=notes[key].duplicate_count,
                                        duplicate_urls=list(notes[key].duplicate_urls),
                                        duplicate_record_ids=list(notes[key].duplicate_record_ids))
        survivors.append(document)
    return survivors


def load_records(location: str) -> list[dict]:
    """The corpus records of a directory (or pattern) of Avro corpus files,
    or of the WARC files a pattern matches."""
    try:
        avro_files = [path for path in corpus_files(location) if path.endswith(".avro")]
        if avro_files:
            records = list(iter_corpus(location))
        else:
            warc_files = sorted(meta.path for meta in FileSystems.match([location])[0].metadata_list)
            records = [avro_record(document) for document in corpus_documents(warc_files)]
    except Exception as error:  # noqa: BLE001 - any file system's or reader's failure is a usage error here
        raise UsageError(f"cannot read --input {location}: {type(error).__name__}: {error}") from error
    if not records:
        raise UsageError(f"--input {location} holds no document: give a directory of corpus-*.avro files "
                         "or a pattern that matches WARC files")
    return records


# --- Report ------------------------------------------------------------------

def pareto_front(points: list[tuple[float, float]]) -> list[bool]:
    """For each (size, time) point, whether no other point is at least as
    small and as fast, and smaller or faster."""
    return [
        not any(other[0] <= point[0] and other[1] <= point[1] and other != point for other in points)
        for point in points
    ]


def _per_second(size: int, seconds: float) -> float | None:
    return size / MB / seconds if seconds > 0 else None


def _cost_entry(cost: OperationCost, uncompressed_bytes: int) -> dict:
    return dict(asdict(cost), mb_per_cpu_second=_per_second(uncompressed_bytes, cost.cpu_seconds))


def _library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = package_metadata.version(name)
        except package_metadata.PackageNotFoundError:
            continue
    return versions


def build_report(records: list[dict], measurements: list[Measurement], corpus_documents: int, **study) -> dict:
    """The study as JSON-ready data: the measured records (of `corpus_documents`
    in the corpus), how they were measured (`study`), and one entry per setting.

    Ratios are size before / size after: against the records in Avro without
    compression (null codec, default block size) and against the raw HTML.
    Speeds are MB (10^6 bytes) of uncompressed records per CPU second. The
    Pareto flags compare the settings at the default block size by size and
    CPU seconds (on a shared machine, wall time also counts waiting for a core).
    """
    uncompressed = uncompressed_size(records)
    raw_html = sum(record["raw_bytes"] for record in records)
    charted = [index for index, m in enumerate(measurements) if m.setting.block_size == DEFAULT_SYNC_INTERVAL]
    fronts = {
        operation: dict(zip(charted, pareto_front([
            (measurements[index].written_bytes, getattr(measurements[index], operation).cpu_seconds)
            for index in charted
        ])))
        for operation in ("compress", "decompress")
    }
    entries = [
        {
            "name": m.setting.name,
            "codec": m.setting.codec,
            "level": m.setting.level,
            "block_size": m.setting.block_size,
            "written_bytes": m.written_bytes,
            "ratio_to_records": uncompressed / m.written_bytes,
            "ratio_to_raw_html": raw_html / m.written_bytes,
            "compress": _cost_entry(m.compress, uncompressed),
            "decompress": _cost_entry(m.decompress, uncompressed),
            "on_chart": m.setting.block_size == DEFAULT_SYNC_INTERVAL,
            "pareto_front": {operation: front.get(index, False) for operation, front in fronts.items()},
        }
        for index, m in enumerate(measurements)
    ]
    return dict(study, corpus_documents=corpus_documents, documents=len(records), raw_html_bytes=raw_html,
                uncompressed_bytes=uncompressed,
                default_block_size=DEFAULT_SYNC_INTERVAL, libraries=_library_versions(), measurements=entries)


def _size_label(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size // KIB} KiB" if size % KIB == 0 else f"{size} B"


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[column]) for row in [header] + rows) for column in range(len(header))]
    lines = [header, ["-" * width for width in widths]] + rows
    return "\n".join("| " + " | ".join(cell.rjust(width) for cell, width in zip(line, widths)) + " |"
                     for line in lines)


def _number(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _mib(size: int | None) -> str:
    return "n/a" if size is None else f"{size / MIB:.1f}"


def _level_table(entries: list[dict], cell: Callable[[dict], str]) -> str:
    """The seed's layout: one row per level, one column per codec; `-` is the codec without levels."""
    codecs = list(dict.fromkeys(entry["codec"] for entry in entries))
    levels = sorted({entry["level"] for entry in entries}, key=lambda level: (level is not None, level or 0))
    cells = {(entry["codec"], entry["level"]): cell(entry) for entry in entries}
    rows = [["-" if level is None else str(level)] + [cells.get((codec, level), "") for codec in codecs]
            for level in levels]
    return _markdown_table(["level"] + codecs, rows)


def format_tables(report: dict) -> str:
    """The seed's three tables (size, compress time, decompress time by codec
    and level, at the default block size) and one row per setting with all numbers."""
    charted = [entry for entry in report["measurements"] if entry["on_chart"]]
    block = _size_label(report["default_block_size"])
    combined = _markdown_table(
        ["setting", "block", "MB", "x records", "x raw HTML", "comp s", "comp CPU s", "comp MB/s", "comp MiB",
         "dec s", "dec CPU s", "dec MB/s", "dec MiB", "runs"],
        [[entry["name"], _size_label(entry["block_size"]), f"{entry['written_bytes'] / MB:.2f}",
          f"{entry['ratio_to_records']:.2f}", f"{entry['ratio_to_raw_html']:.1f}",
          _number(entry["compress"]["wall_seconds"], 3), _number(entry["compress"]["cpu_seconds"], 3),
          _number(entry["compress"]["mb_per_cpu_second"], 1), _mib(entry["compress"]["peak_memory_bytes"]),
          _number(entry["decompress"]["wall_seconds"], 3), _number(entry["decompress"]["cpu_seconds"], 3),
          _number(entry["decompress"]["mb_per_cpu_second"], 1), _mib(entry["decompress"]["peak_memory_bytes"]),
          f"{entry['compress']['runs']}/{entry['decompress']['runs']}"]
         for entry in report["measurements"]],
    )
    return "\n\n".join([
        f"{report['documents']} of the corpus's {report['corpus_documents']} documents: "
        f"{report['raw_html_bytes'] / MB:.1f} MB of raw HTML, "
        f"{report['uncompressed_bytes'] / MB:.1f} MB of uncompressed Avro records.",
        f"Size (MB), block size {block}:\n"
        + _level_table(charted, lambda entry: f"{entry['written_bytes'] / MB:.2f}"),
        f"Compression time (CPU s, median), block size {block}:\n"
        + _level_table(charted, lambda entry: _number(entry["compress"]["cpu_seconds"], 3)),
        f"Decompression time (CPU s, median), block size {block}:\n"
        + _level_table(charted, lambda entry: _number(entry["decompress"]["cpu_seconds"], 3)),
        "All settings (x: times smaller than; MB/s: MB of uncompressed records per CPU second; "
        "MiB: peak memory; runs: compress/decompress runs timed):\n" + combined,
    ])


# --- Chart -------------------------------------------------------------------

@dataclass(frozen=True)
class ChartPoint:
    name: str
    codec: str
    written_mb: float
    compress_cpu_seconds: float
    decompress_cpu_seconds: float
    on_compress_front: bool
    on_decompress_front: bool


# Where a label may stand against its point, in points, tried in this order.
LABEL_OFFSETS = tuple((dx, dy) for dy in (2, -8, 9, -15, 16, -22, 23, -29, 30, -36) for dx in (3, -3))


def place_labels(axes, labels: list[tuple[str, float, float]]) -> list:
    """Annotates each (text, x, y) at the first offset where it overlaps no label placed before it
    (nor its own point's neighbours' labels); returns the annotations. The axes' limits must be final."""
    renderer = axes.figure.canvas.get_renderer()
    placed, taken = [], []
    for text, x, y in labels:
        for dx, dy in LABEL_OFFSETS:
            annotation = axes.annotate(text, (x, y), fontsize=6, xytext=(dx, dy), textcoords="offset points",
                                       ha="left" if dx > 0 else "right")
            box = annotation.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in taken):
                break
            annotation.remove()
        else:
            # Nowhere free: the first place, so that the label is there at all.
            dx, dy = LABEL_OFFSETS[0]
            annotation = axes.annotate(text, (x, y), fontsize=6, xytext=(dx, dy), textcoords="offset points")
            box = annotation.get_window_extent(renderer)
        placed.append(annotation)
        taken.append(box)
    return placed


def chart_unavailable() -> str | None:
    """Why the chart cannot be drawn here (its optional extra is missing), or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ("matplotlib is not installed, so compression.png is not drawn; compression.json and the tables are "
                "(pip install 'matplotlib>=3.8,<4', or the project's extra: pip install -e '.[study]')")
    return None


def draw_chart(report: dict, path: Path) -> list[ChartPoint]:
    """Draws size against compression and against decompression CPU time,
    one point per setting at the default block size, the Pareto front joined
    by a line; returns the points drawn."""
    # Imported here: matplotlib is an optional extra that only the chart needs.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import ScalarFormatter

    points = [
        ChartPoint(entry["name"], entry["codec"], entry["written_bytes"] / MB, entry["compress"]["cpu_seconds"],
                   entry["decompress"]["cpu_seconds"], entry["pareto_front"]["compress"],
                   entry["pareto_front"]["decompress"])
        for entry in report["measurements"] if entry["on_chart"]
    ]
    figure = Figure(figsize=(14, 6.5))
    figure.subplots_adjust(left=0.05, right=0.99, bottom=0.09, top=0.94, wspace=0.12)
    FigureCanvasAgg(figure)  # renders with Agg, without pyplot's global state
    codecs = list(dict.fromkeys(point.codec for point in points))
    panels = (("compress_cpu_seconds", "on_compress_front", "compression"),
              ("decompress_cpu_seconds", "on_decompress_front", "decompression (full read-back)"))
    for axes, (seconds, on_front, title) in zip(figure.subplots(1, 2), panels):
        for index, codec in enumerate(codecs):
            mine = [point for point in points if point.codec == codec]
            axes.scatter([getattr(point, seconds) for point in mine], [point.written_mb for point in mine],
                         color=f"C{index}", label=codec, s=28, zorder=3)
        front = sorted((getattr(point, seconds), point.written_mb) for point in points if getattr(point, on_front))
        axes.step([x for x, _ in front], [y for _, y in front], where="post", color="black", linewidth=1,
                  linestyle="--", label="Pareto front", zorder=2)
        axes.scatter([x for x, _ in front], [y for _, y in front], facecolors="none", edgecolors="black", s=90,
                     zorder=4)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(ScalarFormatter())
        axes.yaxis.set_minor_formatter(ScalarFormatter())
        axes.set_xlabel(f"{title}: CPU seconds, median (log scale)")
        axes.set_ylabel("written size (MB, log scale)")
        axes.set_title(f"Size against {title} time, block size {_size_label(report['default_block_size'])}")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
        # Where a label fits depends on the final limits of the axes.
        axes.autoscale_view()
        place_labels(axes, [(point.name, getattr(point, seconds), point.written_mb) for point in points])
    figure.savefig(path, dpi=110)
    return points


# --- Command line ------------------------------------------------------------

def parse_size(text: str) -> int:
    """Bytes from `65536`, `16K`, `16KiB`, `1M` or `1MiB`."""
    match = re.fullmatch(r"(\d+)\s*(?:([KM])(?:I?B)?)?", text.strip().upper())
    if not match or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(f"not a block size: {text!r} (use bytes, or a number with K or M)")
    return int(match[1]) * {None: 1, "K": KIB, "M": MIB}[match[2]]


def _size_list(text: str) -> list[int]:
    return [parse_size(size) for size in text.split(",")]


def _codec_list(text: str) -> list[str]:
    codecs = list(dict.fromkeys(codec.strip() for codec in text.split(",") if codec.strip()))
    unknown = [codec for codec in codecs if codec not in LEVELS]
    if unknown or not codecs:
        raise argparse.ArgumentTypeError(f"unknown codec(s) {', '.join(unknown) or '(none given)'}; "
                                         f"choose from {', '.join(LEVELS)}")
    return codecs


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.compression",
        description="Measure the size, speed and memory of every Avro codec, level and block size on a corpus.",
    )
    parser.add_argument("--input", required=True, metavar="DIR_OR_WARC_PATTERN",
                        help="A directory of corpus-*.avro files the pipeline wrote, or WARC files (path or glob), "
                             "which are run through the pipeline's stages in process.")
    parser.add_argument("--output", required=True, metavar="REPORT_DIR",
                        help=f"Directory for {REPORT_JSON} and {REPORT_CHART}.")
    parser.add_argument("--codecs", type=_codec_list, default=list(LEVELS), metavar="CODEC,...",
                        help=f"Codecs to measure (default: all of {', '.join(LEVELS)}).")
    parser.add_argument("--block-sizes", type=_size_list, default=list(BLOCK_SIZES), metavar="SIZE,...",
                        help="Avro block sizes (sync_interval) of the block-size sweep (default 16K,256K,1M,4M). "
                             "Every level is measured at the pipeline's default "
                             f"({_size_label(DEFAULT_SYNC_INTERVAL)}), "
                             "the other sizes at each codec's default level.")
    parser.add_argument("--repeats", type=_positive_int, default=DEFAULT_REPEATS,
                        help=f"Runs per setting and operation; the median is reported (default {DEFAULT_REPEATS}).")
    parser.add_argument("--single-run-over", type=float, default=DEFAULT_SINGLE_RUN_OVER_SECONDS, metavar="SECONDS",
                        help="Time an operation once when its first run takes longer than this "
                             f"(default {DEFAULT_SINGLE_RUN_OVER_SECONDS}).")
    parser.add_argument("--sample-mb", type=float, default=DEFAULT_SAMPLE_MB, metavar="MB",
                        help="Measure evenly spaced documents of about this many MB of uncompressed records "
                             f"(default {DEFAULT_SAMPLE_MB:g}); 0 measures them all.")
    parser.add_argument("--quick", action="store_true",
                        help=f"A few levels per codec, block sizes {' and '.join(map(_size_label, QUICK_BLOCK_SIZES))} "
                             "only (for tests and a first look).")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    no_chart = chart_unavailable()
    if no_chart:
        print(no_chart, file=sys.stderr)
    try:
        corpus = load_records(args.input)
    except UsageError as error:
        print(f"python -m pipeline.compression: error: {error}", file=sys.stderr)
        return 2
    records = sample_records(corpus, int(args.sample_mb * MB)) if args.sample_mb > 0 else corpus
    unwritable = unwritable_codecs(args.codecs)
    for codec, reason in unwritable.items():
        print(f"skipping codec {codec}: it cannot write here ({reason})", file=sys.stderr)
    codecs = [codec for codec in args.codecs if codec not in unwritable]
    settings = study_settings(codecs, QUICK_BLOCK_SIZES if args.quick else args.block_sizes, args.quick)
    print(f"measuring {len(settings)} settings on {len(records)} of {len(corpus)} documents", file=sys.stderr)
    measurements = measure(records, settings, args.repeats, args.single_run_over)
    report = build_report(records, measurements, len(corpus), input=args.input, sample_mb=args.sample_mb,
                          repeats=args.repeats, single_run_over_seconds=args.single_run_over,
                          unwritable_codecs=unwritable,
                          study_seconds=round(time.perf_counter() - started, 1))
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    (output / REPORT_JSON).write_text(json.dumps(report, indent=2) + "\n")
    if not no_chart:
        draw_chart(report, output / REPORT_CHART)
    print(format_tables(report))
    print(f"\n{REPORT_JSON}{'' if no_chart else f' and {REPORT_CHART}'} are in {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
