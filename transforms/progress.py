"""Progress notes: how far each reader got, for the progress display of a local run.

Beam's local runners report metrics only when a bundle ends, so each reader
leaves a small note per unit of reading in a local directory, at most every
`NOTE_SECONDS`; `pipeline.progress.ProgressDisplay` sums them.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

NOTE_SECONDS = 1.0


class ProgressNotes:
    """Written by a reader: how far it got in its unit."""

    def __init__(self, directory: str, unit: str):
        self._path = Path(directory) / f"unit-{hashlib.sha256(unit.encode()).hexdigest()[:20]}"
        self._last = 0.0

    def update(self, bytes_read: int, records: int, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= NOTE_SECONDS:
            self._last = now
            temporary = self._path.with_suffix(".tmp")
            temporary.write_text(f"{bytes_read} {records}")
            os.replace(temporary, self._path)


def read_notes(directory: str) -> tuple[int, int]:
    total_bytes = total_records = 0
    for note in Path(directory).glob("unit-*"):
        if note.suffix:
            continue
        try:
            done, records = note.read_text().split()
        except (OSError, ValueError):
            continue  # replaced while being read: counted at the next refresh
        total_bytes += int(done)
        total_records += int(records)
    return total_bytes, total_records
