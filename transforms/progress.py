"""Progress notes: how far each reader got, and which shards are written, for the progress display of a local run.

Beam's local runners report metrics only when a bundle ends, so each reader
leaves a small note per unit of reading in a local directory, at most every
`NOTE_SECONDS`, and each shard writer one note when its shard is written;
a reader that replays a unit's completion record (`transforms.unit_ledger`)
leaves one note of the unit's bytes and records, reused.
`pipeline.progress.ProgressDisplay` sums them.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

NOTE_SECONDS = 1.0


def _write_note(path: Path, text: str) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _note_path(directory: str, kind: str, name: str) -> Path:
    return Path(directory) / f"{kind}-{hashlib.sha256(name.encode()).hexdigest()[:20]}"


class ProgressNotes:
    """Written by a reader: how far it got in its unit."""

    def __init__(self, directory: str, unit: str):
        self._path = _note_path(directory, "unit", unit)
        self._last = 0.0

    def update(self, bytes_read: int, records: int, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= NOTE_SECONDS:
            self._last = now
            _write_note(self._path, f"{bytes_read} {records}")


def note_unit_reused(directory: str, unit: str, unit_bytes: int, records: int) -> None:
    """Written by a reader that replays a unit's completion record instead of reading it."""
    _write_note(_note_path(directory, "reused", unit), f"{unit_bytes} {records}")


def note_shard_written(directory: str, shard: str, shards: int) -> None:
    """Written by a shard writer when its shard (one of `shards`) is written."""
    _write_note(_note_path(directory, "shard", shard), str(shards))


def _notes(directory: str, kind: str):
    for note in Path(directory).glob(f"{kind}-*"):
        if note.suffix:
            continue
        try:
            yield note.read_text().split()
        except OSError:
            continue  # replaced while being read: counted at the next refresh


def read_notes(directory: str, reused: bool = False) -> tuple[int, int]:
    """Bytes and records read, over every unit; with `reused`, those of the units replayed instead."""
    total_bytes = total_records = 0
    for fields in _notes(directory, "reused" if reused else "unit"):
        if len(fields) == 2:
            total_bytes += int(fields[0])
            total_records += int(fields[1])
    return total_bytes, total_records


def read_shard_notes(directory: str) -> tuple[int, int]:
    """Shards written, and how many there are (0, 0 before the first is written)."""
    counts = [int(fields[0]) for fields in _notes(directory, "shard") if len(fields) == 1]
    return len(counts), max(counts, default=0)
