"""What the study measures: the settings, and each one's size, time and memory on the records."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import io
import itertools
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import fastavro

from transforms.stages.compress_write.avro_encoding import CODECS, DEFAULT_SYNC_INTERVAL, FILE_METADATA, avro_record
from transforms.stages.compress_write.schema import PARSED_SCHEMA
from transforms.document import Document
from transforms.vocabulary import Capture

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
    probe = [avro_record(Document(Capture("", "https://example.org/", "", "", 0, 0), http_status=200,
                                  content_type="text/html", html="<div>probe</div>"))]
    failures = {}
    for codec in codecs:
        try:
            write_avro(probe, CodecSetting(codec, LEVELS[codec][0], DEFAULT_SYNC_INTERVAL))
        except Exception as error:  # noqa: BLE001 - whatever the failure, the codec cannot be studied here
            failures[codec] = f"{type(error).__name__}: {error}"
    return failures
