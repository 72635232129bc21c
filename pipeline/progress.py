"""Progress of a local run on stderr: records and bytes read, rate, time left.

`ProgressDisplay`, in a thread of the command, sums the readers' notes
(`transforms.progress`). On a terminal the line updates in place; otherwise
a line is printed every `LINE_SECONDS`.
"""

from __future__ import annotations

import sys
import threading
import time

from transforms.progress import read_notes

REFRESH_SECONDS = 0.5
LINE_SECONDS = 5.0


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def progress_line(bytes_read: int, records: int, total_bytes: int, elapsed: float) -> str:
    rate = bytes_read / elapsed if elapsed > 0 else 0.0
    share = min(bytes_read / total_bytes, 1.0) if total_bytes else 1.0
    left = (total_bytes - bytes_read) / rate if rate > 0 else None
    return (f"{records:,} records, {bytes_read / 1e6:,.1f} of {total_bytes / 1e6:,.1f} MB read ({share:.0%}), "
            f"{rate / 1e6:.1f} MB/s, {'time left ' + format_duration(left) if left is not None else 'starting'}")


class ProgressDisplay:
    """Shows the readers' progress on `stream` until stopped."""

    def __init__(self, directory: str, total_bytes: int, stream=None):
        self._directory = directory
        self._total = total_bytes
        self._stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start = time.monotonic()
        self._in_place = self._stream.isatty()

    def __enter__(self) -> "ProgressDisplay":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self._show(final=True)

    def _show(self, final: bool = False) -> None:
        bytes_read, records = read_notes(self._directory)
        line = progress_line(bytes_read, records, self._total, time.monotonic() - self._start)
        if self._in_place:
            self._stream.write(f"\r\x1b[K{line}" + ("\n" if final else ""))
        else:
            self._stream.write(f"{line}\n")
        self._stream.flush()

    def _run(self) -> None:
        interval = REFRESH_SECONDS if self._in_place else LINE_SECONDS
        while not self._stop.wait(interval):
            self._show()
