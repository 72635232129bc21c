"""Progress of a run on stderr: the phase, records and bytes read, rate, time left.

`ProgressDisplay`, in a thread of the command, sums the readers' and the
shard writers' notes (`transforms.report.progress`). On a terminal the line updates
in place; otherwise a line is printed every `LINE_SECONDS`. Until the first
record is read (or reused), the line says that the workers are starting.

A resumed run (`transforms.state.unit_ledger`) replays the units an earlier run
finished: their bytes count as done, and the line says which share of the
input was reused; the rate and the time left are of the bytes read in this run.

The notes are files (`progress_notes`): the in-process runner's workers leave
them in a temporary directory; the workers of other runners (Dask, a portable
runner's worker pool), which all write the build's directory, leave them in it
while the build runs, when it is on this machine's file system (a local disk
or a shared mount). A build in an object store shows no progress here: its
runner's own console does.

A run reads, then deduplicates, then writes its shards. The time left is for
the whole run, and is only shown once it means something: while reading,
after `ESTIMATE_AFTER_SHARE` of the input left to read and `ESTIMATE_AFTER_SECONDS` of
reading, as the reading left at the rate since the first bytes were read plus `AFTER_READING_SHARE` of the time
reading the whole input would take, for the phases after it (they run over every unit, reused or read); while
writing, from the rate of the shards written so far.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Iterator

from transforms.filesystems.exact_paths import is_local
from transforms.report.progress import NotesReader

REFRESH_SECONDS = 0.5
LINE_SECONDS = 5.0
ESTIMATE_AFTER_SHARE = 0.05
ESTIMATE_AFTER_SECONDS = 3.0
# Deduplicating and writing take about a fifth of a run of the dev corpus,
# a quarter of its reading time.
AFTER_READING_SHARE = 0.25
# In the build's directory, beside what it writes; never published (publish moves the files a manifest lists).
NOTES_DIR = ".webcorpus-progress"


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class Progress:
    """What the notes say, and when the display saw the phases change (seconds since the start)."""

    # Read in this run; `records` are those read or reused.
    bytes_read: int
    records: int
    total_bytes: int
    elapsed: float
    shards_written: int = 0
    shards: int = 0
    # When the first bytes were seen read: what comes before (imports, the graph, workers starting) is no
    # part of the reading rate.
    reading_started: float = 0.0
    reading_ended: float | None = None
    writing_started: float | None = None
    # Worker processes the runner starts, where it is known (the local runner's multi_processing mode).
    workers: int | None = None
    # Of the units an earlier run finished, replayed instead of read.
    bytes_reused: int = 0


def format_size(size: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size:,.0f} bytes"


def _left(seconds: float | None) -> str:
    return f", about {format_duration(seconds)} left" if seconds is not None and seconds >= 0 else ""


def _reused(progress: Progress) -> str:
    return f", {progress.bytes_reused / progress.total_bytes:.0%} reused" if progress.bytes_reused else ""


def progress_line(progress: Progress) -> str:
    records = f"{progress.records:,} records"
    if not progress.bytes_read and not progress.bytes_reused and not progress.records \
            and progress.reading_ended is None:
        # Imports, the graph and the workers' start: seconds with 2 worker processes, more on a cluster.
        workers = "workers" if progress.workers is None else f"{progress.workers} worker process" + (
            "es" if progress.workers > 1 else "")
        return f"starting {workers}: {format_duration(progress.elapsed)}, {format_size(progress.total_bytes)} to read"
    if progress.reading_ended is None:
        elapsed = progress.elapsed - progress.reading_started
        rate = progress.bytes_read / elapsed if elapsed > 0 else 0.0
        done = progress.bytes_read + progress.bytes_reused
        share = min(done / progress.total_bytes, 1.0) if progress.total_bytes else 1.0
        to_read = progress.total_bytes - progress.bytes_reused
        left = None
        if rate > 0 and progress.bytes_read >= ESTIMATE_AFTER_SHARE * to_read and elapsed >= ESTIMATE_AFTER_SECONDS:
            left = (progress.total_bytes - done) / rate + progress.total_bytes / rate * AFTER_READING_SHARE
        # (Before this run reads its first bytes, there is no rate to show.)
        speed = f", {format_size(rate)}/s" if progress.bytes_read else ""
        return (f"reading: {records}, {format_size(done)} of {format_size(progress.total_bytes)} "
                f"({share:.0%}{_reused(progress)}){speed}{_left(left)}")
    if progress.writing_started is None:
        # The phases after reading take a share of the time that reading the whole input would have taken.
        read = progress.total_bytes - progress.bytes_reused
        left = None if read <= 0 else (progress.reading_ended * (1 + AFTER_READING_SHARE * progress.total_bytes / read)
                                       - progress.elapsed)
        return f"deduplicating: {records} read in {format_duration(progress.reading_ended)}{_left(left)}"
    writing = progress.elapsed - progress.writing_started
    left = None
    if progress.shards_written and writing > 0:
        left = writing / progress.shards_written * (progress.shards - progress.shards_written)
    return f"writing: {progress.shards_written:,} of {progress.shards:,} shards, {records} read{_left(left)}"


def final_line(progress: Progress) -> str:
    done = progress.bytes_read + progress.bytes_reused
    reused = f" ({progress.bytes_reused / done:.0%} reused)" if progress.bytes_reused else ""
    return (f"done: {progress.records:,} records, {format_size(done)} read{reused}, "
            f"{progress.shards_written:,} shards written in {format_duration(progress.elapsed)}")


class ProgressDisplay:
    """Shows the readers' progress on `stream` until stopped."""

    def __init__(self, directory: str, total_bytes: int, stream=None, workers: int | None = None):
        self._notes = NotesReader(directory)
        self._workers = workers
        self._total = total_bytes
        self._stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start = time.monotonic()
        self._in_place = self._stream.isatty()
        self._interval = REFRESH_SECONDS if self._in_place else LINE_SECONDS
        self._reading_started: float | None = None
        self._reading_ended: float | None = None
        self._writing_started: float | None = None

    def __enter__(self) -> "ProgressDisplay":
        self._thread.start()
        return self

    def __exit__(self, error_type, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self._show(final=True, complete=error_type is None)

    def _progress(self, final: bool = False) -> Progress:
        totals = self._notes.totals(afresh=final)
        elapsed = time.monotonic() - self._start
        if self._reading_started is None and totals.bytes_read:
            self._reading_started = max(elapsed - self._interval, 0.0)
        if self._reading_ended is None and (totals.bytes_read + totals.bytes_reused >= self._total
                                            or totals.shards_written):
            self._reading_ended = elapsed
        if self._writing_started is None and totals.shards_written:
            # The first shard is seen written: writing started about a refresh before.
            self._writing_started = max(elapsed - self._interval, self._reading_ended)
        return Progress(totals.bytes_read, totals.records + totals.records_reused, self._total, elapsed,
                        totals.shards_written, totals.shards, self._reading_started or 0.0, self._reading_ended,
                        self._writing_started, self._workers, totals.bytes_reused)

    def _show(self, final: bool = False, complete: bool = False) -> None:
        progress = self._progress(final)
        line = final_line(progress) if complete else progress_line(progress)
        if self._in_place:
            self._stream.write(f"\r\x1b[K{line}" + ("\n" if final else ""))
        else:
            self._stream.write(f"{line}\n")
        self._stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._show()


@contextlib.contextmanager
def progress_notes(build_dir: str, in_process: bool, quiet: bool) -> Iterator[str | None]:
    """The directory the readers and shard writers of a build in `build_dir` leave their notes in, while it runs;
    None for no progress display (`--quiet`, or a build in an object store)."""
    if quiet:
        yield None
    elif in_process:
        with tempfile.TemporaryDirectory(prefix="webcorpus-progress-") as notes:
            yield notes
    elif is_local(build_dir):
        notes = os.path.abspath(os.path.join(build_dir, NOTES_DIR))
        os.makedirs(notes, exist_ok=True)
        try:
            yield notes
        finally:
            shutil.rmtree(notes, ignore_errors=True)
    else:
        yield None

