"""A run of records that a capture index named: its bytes fetched by one request, its records read from them.

A build that selects through an index (`pipeline.index_select`) reads no
more of a WARC file than the records it chose: a run is [start, end) of a
file compressed per record, adjacent records together, asked for with one
Range GET (`bytes=start-(end-1)`, by the https:// file system's reader in
exact mode: retries with backoff, Retry-After and 503 honoured, a body that
breaks off or stalls asked for again from the byte it reached, each answer
checked to be the range asked for of the same file), up to `RUNS_IN_FLIGHT`
runs of a unit at once, in order. Its records are read from
those bytes as from a file of their own (`read_warc`), and every offset said
of them (outcomes, notes) is the offset in the WARC file. A run whose range
lies outside its file, or whose bytes hold no record where the index said,
is a dead letter that names the file, offset and length (the index's row),
and nothing else is lost.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from typing import Callable, Iterator

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.document import DeadLetter, Document, Skip
from transforms.filesystems.http_filesystem import HttpReadStream, PastTheEnd
from transforms.filesystems.locations import redacted
from transforms.stages.read_warc.classify import Screen
from transforms.stages.read_warc.read_warc import read_warc
from transforms.vocabulary import READ_WARC as STAGE
from transforms.vocabulary import ReadNote


# Requests of one reader in flight at once (each worker reads one unit at a time).
RUNS_IN_FLIGHT = 8


def fetch_run(path: str, start: int, end: int) -> tuple[bytes, int]:
    """(the bytes [start, end) of the file `path`, its size), by one request over HTTP (`HttpReadStream.read_range`:
    no HEAD, and each retry's answer checked against the first's range, size and ETag); raises `PastTheEnd`, or
    RemoteReadError (after `http_session.ATTEMPTS` attempts, each from the byte reached)."""
    if not path.startswith(("http://", "https://")):
        # (A local file, or s3:// and gs:// by Beam's file systems, whose streams read by ranges themselves.)
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
            size = handle.seek(0, os.SEEK_END)
            if start < 0 or end <= start or end > size:
                raise PastTheEnd(f"{redacted(path)}: no bytes from {start} to {end}", size)
            handle.seek(start)
            return handle.read(end - start), size
    with HttpReadStream(path, exact=True) as stream:
        return stream.read_range(start, end), stream.size


def _fetched_or_outside(path: str, start: int, end: int) -> tuple[bytes | None, int | None]:
    """`fetch_run`'s (bytes, file size), or (None, the file's size if known) for a run outside its file."""
    try:
        return fetch_run(path, start, end)
    except PastTheEnd as outside:
        return None, outside.size


def fetched_in_order(path: str, runs: tuple[tuple[int, int], ...], in_flight: int = RUNS_IN_FLIGHT):
    """((start, end), `_fetched_or_outside`'s) of each run, in order, at most `in_flight` requests at a time: a
    request's latency, not its bytes, is most of a record's time (about 20 KB each), so runs are asked for ahead
    of the one read, a few at once (and held no longer than that)."""
    with ThreadPoolExecutor(in_flight) as pool:
        ahead = iter(runs)
        pending = deque((run, pool.submit(_fetched_or_outside, path, *run)) for run in islice(ahead, in_flight))
        while pending:
            run, answer = pending.popleft()
            for following in islice(ahead, 1):
                pending.append((following, pool.submit(_fetched_or_outside, path, *following)))
            yield run, answer.result()


def runs_digest(runs: tuple[tuple[int, int], ...]) -> str:
    """SHA-256 of a unit's runs (start-end, a line each): which records a unit was read from, for its completion
    record. A resumed build reuses the unit when its runs are the same, without asking for them again: the build's
    identity holds the index files it selects by (their sizes and ETags), and a crawl's WARC files do not change."""
    return hashlib.sha256("".join(f"{start}-{end}\n" for start, end in runs).encode("ascii")).hexdigest()


def read_runs(path: str, source_file: str, runs: tuple[tuple[int, int], ...], on_note: Callable[[ReadNote], None],
              max_page_bytes: int, claim: Callable[[int], bool], skip_truncated: bool, screen: Screen | None,
              fetched: Callable[[bytes, int], None]) -> Iterator[Document | Skip | DeadLetter]:
    """The outcomes of the records of each run (start, end) of `path`, one request a run (`read_warc`'s, at their
    offsets in the file); `fetched` is given each run's bytes and the file's size, `claim` each record's offset."""
    for (start, end), (data, size) in fetched_in_order(path, runs):
        if data is None:
            of = "" if size is None else f" of {size:,} bytes"
            yield DeadLetter(STAGE, f"index row: the record at offset {start} of length {end - start} lies outside "
                                    f"its file{of}", source_file, start, "", "")
            continue
        fetched(data, size)
        yield from _read_run(data, source_file, start, on_note, max_page_bytes, claim, skip_truncated, screen)


def _read_run(data: bytes, source_file: str, start: int, on_note: Callable[[ReadNote], None], max_page_bytes: int,
              claim: Callable[[int], bool], skip_truncated: bool, screen: Screen | None):
    def noted(note: ReadNote) -> None:
        on_note(note if note.source_offset is None else dataclasses.replace(note,
                                                                            source_offset=note.source_offset + start))

    # (The run's last offset is claimed as where its records end: the next run's first record is not the tracker's
    # to refuse, as it starts at that offset or past it.)
    for outcome in read_warc(lambda: io.BytesIO(data), source_file, 0, None, noted, max_page_bytes,
                             lambda offset: offset == len(data) or claim(start + offset), skip_truncated, screen):
        if isinstance(outcome, Document):
            yield outcome.replace(capture=outcome.capture.replace(source_offset=outcome.capture.source_offset + start))
        elif isinstance(outcome, DeadLetter):
            # (Said of the bytes the index row named: what reading them met, its offsets within them.)
            yield dataclasses.replace(outcome, source_offset=outcome.source_offset + start, reason=(
                f"index row: the record at offset {start} of length {len(data)} is not there whole: "
                f"{outcome.reason} (offsets within the row's bytes)"))
        else:
            yield dataclasses.replace(outcome, source_offset=outcome.source_offset + start)
