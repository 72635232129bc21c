"""Reading on after damage: where the next intact record starts, and the dead letters that say what was lost.

`read_warc` resumes at `find_next_record` after damage, and reports the
bytes skipped with `damage_report`; `check_tail` tells a file cut inside a
record's first bytes, which reads as complete.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Callable, Iterator

from transforms.document import DeadLetter, describe_error
from transforms.vocabulary import READ_WARC as STAGE
from transforms.stages.read_warc.formats import GZIP_ERROR, RECORD_MARKERS, RESYNC_CHUNK, RESYNC_PROBE, Format, Framing
from transforms.stages.read_warc.gzip_stream import CutStream

class DamagedData(Exception):
    """Bytes where a WARC record should be that are not one."""

    def __init__(self, message: str, after_good_record: bool = False, resume_at: int | None = None,
                 damaged_at: int | None = None):
        super().__init__(message)
        # Garbage after an intact record: the next record may start right
        # after it, so resynchronizing starts there, not one byte later.
        self.after_good_record = after_good_record
        # Where the damage starts, when that is before where reading stopped.
        self.damaged_at = damaged_at
        # Where the next record is known to start (the damage is already reported).
        self.resume_at = resume_at


def member_starts_record(open_file: Callable[[], BinaryIO], offset: int, form: Format) -> bool:
    with open_file() as raw:
        raw.seek(offset)
        return form.frame_starts_record(raw.read(RESYNC_PROBE))


def find_next_record(open_file: Callable[[], BinaryIO], start: int, form: Format,
                     stop: int | None = None) -> int | None:
    """The offset of the first intact-looking record at or after `start` (and before `stop`), or None.

    In a file compressed per record that is a gzip member (zstd, LZ4 frame)
    whose data starts like a record; in an uncompressed one (or the
    decompressed stream of a whole-file gzip), a `WARC/1.` line (an ARC
    record's first line). The search reads the file once, a chunk at a time.
    """
    framed = form.layout == "record"
    marker = re.compile(re.escape(form.framing.magic)) if framed else RECORD_MARKERS[form.arc]
    # An uncompressed record starts after a newline, or at the start of the file:
    # the byte before `start` is searched too, so a record at `start` is found.
    lead = 0 if framed else 1
    with open_file() as raw:
        raw.seek(max(start - lead, 0))
        carried, base = (b"\n", -1) if start < lead else (b"", start - lead)
        while True:
            try:
                chunk = raw.read(RESYNC_CHUNK)
            except (CutStream, GZIP_ERROR):  # a whole-file gzip stream that ends or breaks here
                chunk = b""
            data = carried + chunk
            match = marker.search(data)
            while match and (len(data) - match.start() >= RESYNC_PROBE or not chunk):
                found = match.start()
                offset = base + found + lead
                if stop is not None and offset >= stop:
                    return None
                if not framed or form.frame_starts_record(data[found:found + RESYNC_PROBE]):
                    return offset
                match = marker.search(data, found + 1)
            if not chunk or (stop is not None and base + len(data) >= stop + RESYNC_PROBE):
                return None
            keep = max(len(data) - RESYNC_PROBE, 0) if match is None else match.start()
            carried, base = data[keep:], base + keep


def ends_inside_a_member(open_file: Callable[[], BinaryIO], offset: int, framing: Framing) -> bool:
    """Whether the bytes from `offset` are the start of a frame that the end of the file cuts short."""
    with open_file() as raw:
        raw.seek(offset)
        return framing.cut_short(raw)


def check_tail(open_file: Callable[[], BinaryIO], source_file: str, end: int) -> Iterator[DeadLetter]:
    """A file cut inside a record's first bytes reads as complete; what is left after the last record tells."""
    with open_file() as raw:
        raw.seek(end)
        tail = raw.read(RESYNC_PROBE)
    if tail.strip(b"\r\n"):
        yield DeadLetter(STAGE, "truncated: the file ends inside a record that starts at this offset",
                         source_file, end, "", "")


def damage_report(source_file: str, damaged_at: int, resumed_at: int, error: BaseException, emitted_before: int,
                  named: tuple[str, str], recovered: int) -> DeadLetter:
    return DeadLetter(
        STAGE,
        f"corrupt data: {describe_error(error)}; skipped {resumed_at - damaged_at} bytes to the next intact record "
        f"at offset {resumed_at}; {recovered} records recovered after it",
        source_file, damaged_at, *named, skipped_bytes=resumed_at - damaged_at,
    )
