"""read_warc: every record of a WARC file (or of a byte range of it) as a Document, a Skip or a DeadLetter.

The pure reader, without Beam's transforms (`read_warc_transform` wraps it): it
reads a file through warcio (`warcio_compat.RecordIterator`), turns each
record into its outcome (`classify.read_record`), and after damage resumes
at the next intact record (`recovery`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.document import DeadLetter, Document, Skip, describe_error
from transforms.filesystems.http_filesystem import RemoteReadError
from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.stages.read_warc.classify import Screen, read_record
from transforms.vocabulary import READ_WARC as STAGE
from transforms.vocabulary import ReadNote
from transforms.stages.read_warc.formats import WARC, Format, detect_format
from transforms.stages.read_warc.gzip_stream import CutStream, GunzipStream, decompressed
from transforms.stages.read_warc.recovery import (DamagedData, check_tail, damage_report, ends_inside_a_member,
                                                  find_next_record, member_starts_record)
from transforms.stages.read_warc.skim import skim, skims
from transforms.stages.read_warc.warcio_compat import WARCIO_SYS, RecordIterator
from transforms.stages.read_warc.snapshot import FileChanged

# Records in a row that `skim` leaves to warcio before warcio reads the rest of the segment.
SKIM_MISSES = 8
# Blank lines between two records beyond this many bytes are a dead letter (they are skipped all the same).
BLANK_RUN_LIMIT = 1 << 16


class WarningSink:
    """Collects what is written to it, one warning per write, until it hands them on as notes."""

    def __init__(self):
        self.warnings: list[str] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.warnings.append(" ".join(text.split()))
        return len(text)

    def flush(self) -> None:
        pass

    def hand_on(self, note: Callable[[ReadNote], None], source_file: str, offset: int) -> None:
        for text in self.warnings:
            note(ReadNote(source_file, offset, text))
        self.warnings.clear()


def _every_offset(offset: int) -> bool:
    return True


@dataclass
class _Progress:
    """How far reading a file got: records yielded, and where the last good record ended."""

    emitted: int = 0
    next_offset: int = 0
    # Whether the record that starts at an offset is this range's to read (see `read_warc`).
    claim: Callable[[int], bool] = _every_offset
    # A claim failed: the records from there on are another range's.
    handed_on: bool = False
    form: Format = WARC
    # The stored size of a file gzipped per record: a member that ends inside its record is split, not cut, before it.
    file_size: int | None = None
    # (record id, URL) of the record whose header is read and whose outcome is not yet given: damage names it.
    reading: tuple[str, str] | None = None
    # Skip pages cut short (`read_warc`'s `skip_truncated`).
    skip_truncated: bool = False
    # `read_warc`'s `screen`.
    screen: Screen | None = None


def _iterate(stream: BinaryIO, source_file: str, progress: _Progress, records_file: Callable[[], BinaryIO],
             note: Callable[[ReadNote], None], max_page_bytes: int,
             one_record: bool = False, known_format: str | None = None) -> Iterator[Document | Skip | DeadLetter]:
    """The records from the stream's position on, through warcio; with `one_record`, the first only, where its gzip
    member ends with it (else on, as without). Returns whether the file ended (False: a record is left, or another
    range's). `known_format`: what warcio took the segment's records for, when records of it were read before this
    iterator (it reads on as it would have).
    """
    # warcio is lenient where a corpus must not be: it reads ARC (in a WARC
    # file) and garbage as records, skips a line it cannot parse with only a warning, and reads
    # a record without Content-Length into the next ones.
    iterator = RecordIterator(stream, progress.form)
    iterator.known_format = known_format
    records = iter(iterator)
    sink = WarningSink()
    while True:
        # Warnings are redirected while warcio reads, never across a yield:
        # another generator may read another file on this thread meanwhile.
        record_offset = progress.next_offset
        # Until the next record is read, the iterator's offset is where it starts (where the file ends, when
        # none does). It is claimed first: another range's record is not read here, not even its headers.
        if not progress.claim(iterator.offset):
            progress.handed_on = True
            return False
        previous = WARCIO_SYS.redirect(sink)
        try:
            iterator.loader.forget()
            try:
                record = next(records, None)
            except Exception:
                # (A record whose WARC headers were read, and whose HTTP headers were not: the damage names it.)
                progress.reading = iterator.loader.last_read()
                raise
            if record is None:
                return True
            record_offset = iterator.offset
            if record.format != "warc":
                raise DamagedData(f"not a WARC record (read as {record.format})")
            if progress.form.arc:
                # (warcio gives an ARC record a random WARC-Record-ID: an ARC record has none.)
                record.rec_headers.remove_header("WARC-Record-ID")
            progress.reading = (record.rec_headers.get_header("WARC-Record-ID", ""),
                                record.rec_headers.get_header("WARC-Target-URI", ""))
            declared_length = record.rec_headers.get_header("Content-Length")
            if declared_length is None:
                raise DamagedData("a WARC record without Content-Length")
            warnings = iterator.err_count
            if isinstance(stream, GunzipStream):
                # (What the end of a whole-file gzip cuts of this block is read as its end: `classify.read_record`.)
                stream.quiet_cut = True
            outcome = read_record(iterator, record, source_file, max_page_bytes, progress.skip_truncated,
                                   progress.file_size, progress.screen)
        finally:
            WARCIO_SYS.redirect(previous)
            sink.hand_on(note, source_file, record_offset)
        not_followed_by_blank_line = iterator.err_count > warnings
        if not_followed_by_blank_line and progress.form.layout != "record":
            # A Content-Length too big (or counted with CRLF in a file whose
            # lines now end in LF) runs into the next record: find it there.
            inside = find_next_record(records_file, record_offset + 1, progress.form, stop=iterator.offset)
            if inside is not None:
                progress.next_offset = inside
                progress.emitted += 1
                yield DeadLetter(STAGE, f"Content-Length {declared_length} runs past the end of this record: "
                                 f"the next record starts inside it, at offset {inside}", source_file, record_offset,
                                 *progress.reading)
                progress.reading = None
                raise DamagedData("a Content-Length too big", resume_at=inside)
        # warcio's offsets go wrong on garbled input (even negative): never backwards.
        progress.next_offset = max(progress.next_offset, iterator.offset)
        progress.emitted += 1
        missing = getattr(record.raw_stream, "limit", 0)
        # The file goes on after the gzip member that ends inside this record.
        member_cut = missing > 0 and progress.file_size is not None and iterator.offset < progress.file_size
        split = member_cut and not member_starts_record(records_file, iterator.offset, progress.form)
        # (A page kept with what its member holds is kept: `classify.read_record`.)
        if split or member_cut and not isinstance(outcome, Document):
            outcome = DeadLetter(STAGE, (
                f"split across gzip members: this record's gzip member ends {missing} bytes before the end of the "
                "record (by its Content-Length), and the next member holds its rest" if split else
                f"truncated: this record's gzip member ends {missing} bytes before the end of the record "
                "(by its Content-Length), and the next member starts another record"), source_file, record_offset,
                *progress.reading)
        progress.reading = None
        yield outcome
        if iterator.blank_run > BLANK_RUN_LIMIT:
            yield DeadLetter(STAGE, f"{iterator.blank_run} bytes of blank lines after this record "
                             f"(more than {BLANK_RUN_LIMIT}), skipped", source_file, record_offset, "", "",
                             skipped_bytes=iterator.blank_run)
        if split:
            raise DamagedData("the rest of a record split across gzip members", after_good_record=True)
        if not_followed_by_blank_line:
            # (In a file gzipped per record, warcio's offset of the garbage is not one of the file.)
            raise DamagedData("bytes that are not a WARC record after this record", after_good_record=True,
                              damaged_at=None if progress.form.layout == "record" else iterator.garbage_at)
        if one_record and iterator.at_member_end():
            return False


def _records(stream: BinaryIO, source_file: str, progress: _Progress, records_file: Callable[[], BinaryIO],
             note: Callable[[ReadNote], None], max_page_bytes: int) -> Iterator[Document | Skip | DeadLetter]:
    """The records from `progress.next_offset` on: those `skim` reads skimmed, each other one read through warcio
    (`_iterate`) on the same stream."""
    if not skims(progress.form):
        stream.seek(progress.next_offset)
        yield from _iterate(stream, source_file, progress, records_file, note, max_page_bytes)
        return
    misses = 0  # records left to warcio since one was skimmed
    first = progress.emitted
    while True:
        skimmed = progress.emitted
        if (yield from skim(stream, source_file, progress, max_page_bytes)) or progress.handed_on:
            return
        misses = 0 if progress.emitted > skimmed else misses + 1
        stream.seek(progress.next_offset)
        # (A file of responses only is read on through warcio, as a file that is not skimmed.)
        if (yield from _iterate(stream, source_file, progress, records_file, note, max_page_bytes,
                                misses < SKIM_MISSES, "warc" if progress.emitted > first else None)):
            return


def _print_note(note: ReadNote) -> None:
    print(f"{note.source_file}: {note.line()}", file=sys.stderr)


def _file_size(open_file: Callable[[], BinaryIO]) -> int:
    with open_file() as raw:
        raw.seek(0, 2)
        return raw.tell()


def read_warc(open_file: Callable[[], BinaryIO], source_file: str, start: int = 0,
              end: int | None = None, on_note: Callable[[ReadNote], None] = _print_note,
              max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
              claim: Callable[[int], bool] | None = None,
              skip_truncated: bool = False, screen: Screen | None = None) -> Iterator[Document | Skip | DeadLetter]:
    """Reads one WARC file; `open_file` opens it (again) as a seekable binary stream.

    With `start` and `end`, reads the records that start in that byte range
    of a file compressed per record: the range begins at the first gzip member
    (zstd, LZ4 frame) holding a record at or after `start`, and its last
    record may end past `end`. Reading every range of a file reads every
    record once. With `claim` instead of `end`, a record is read when
    `claim(its offset)` is true, and reading stops at the first that is not
    (a restriction tracker's `try_claim`: where the range ends may change
    while it is read). Offsets are claimed rising, before each record is
    parsed, and once more where the records run out (the end of the file).
    A whole-file gzip stream claims none: its offsets count uncompressed
    bytes, and it is only ever read whole.

    Damage inside a file (a corrupt gzip member, a garbled record) costs only
    the damaged part: reading resumes at the next record that starts intact
    (in a whole-file gzip, in its decompressed stream), and one `DeadLetter`
    says how many bytes were skipped and how many records were recovered
    after them. warcio's warnings go to `on_note` (by default, to stderr with
    the file's name). A page whose payload decodes to more than
    `max_page_bytes` is a `too-large` skip. A page cut short (WARC-Truncated,
    or a record the end of the file or of its gzip member cuts) is kept with
    what was received, its `truncated` saying why and how much; with
    `skip_truncated`, it is a `truncated` skip (a cut record: a dead letter). `screen` may skip a response
    from its URL and HTTP headers, before its payload is read (`classify.read_record`).
    """
    form = detect_format(open_file)
    layout = form.layout
    whole_file_gzip = layout == "file"
    records_file = decompressed(open_file) if whole_file_gzip else open_file
    # (The first range reads from where records start: what is there is read, or reported, never searched past.)
    first_range = start <= form.records_start
    start = max(start, form.records_start)
    if whole_file_gzip or (claim is None and end is None):
        claim = _every_offset
    elif claim is None:
        claim = lambda offset: offset < end
    progress = _Progress(next_offset=start, claim=claim, form=form,
                         file_size=_file_size(open_file) if layout == "record" else None, skip_truncated=skip_truncated,
                         screen=screen)
    if form.damage and first_range:
        yield DeadLetter(STAGE, form.damage, source_file, 0, "", "")
    if form.damage or not first_range:
        progress.next_offset = find_next_record(open_file, start, form)
        if progress.next_offset is None:
            return
    damage = None  # (where it started, where reading resumed, the error, records before, (record id, URL))
    while True:
        segment_start = progress.next_offset
        try:
            with records_file() as stream:
                yield from _records(stream, source_file, progress, records_file, on_note, max_page_bytes)
            failure = None
        except (RemoteReadError, FileChanged):
            # The network failed, or the file changed under the build, not the data: the work item fails (the
            # runner retries it), no record is lost.
            raise
        except Exception as error:  # noqa: BLE001 - whatever broke, the rest of the file may be readable
            failure = error
        # The record the failure cut short, when its header was read.
        named, progress.reading = progress.reading or ("", ""), None
        if damage is not None:
            yield damage_report(source_file, *damage, recovered=progress.emitted - damage[3])
            damage = None
        if failure is None:
            if not whole_file_gzip and not progress.handed_on:
                yield from check_tail(open_file, source_file, progress.next_offset)
            return
        if getattr(failure, "resume_at", None) is not None:
            progress.next_offset = failure.resume_at
            continue
        search_from = progress.next_offset + (0 if getattr(failure, "after_good_record", False) else 1)
        # Each attempt starts past the last one, so garbled offsets cannot loop.
        search_from = max(search_from, segment_start + 1)
        resume = find_next_record(records_file, search_from, form)
        if resume is None:
            yield unreadable_rest(open_file, source_file, progress, failure, form, named)
            return
        # (A resumed record that is another range's cannot be claimed: the damage is reported, recovering none.)
        damaged_at = getattr(failure, "damaged_at", None)
        damaged_at = progress.next_offset if damaged_at is None else min(damaged_at, progress.next_offset)
        damage = (damaged_at, resume, failure, progress.emitted, named)
        progress.next_offset = resume


def unreadable_rest(open_file, source_file: str, progress: _Progress, failure: BaseException,
                    form: Format, named: tuple[str, str]) -> DeadLetter:
    cut = isinstance(failure, (CutStream, EOFError)) or (
        form.layout == "record" and ends_inside_a_member(open_file, progress.next_offset, form.framing))
    if cut:
        reason = f"truncated: the file ends inside a record, after {progress.emitted} records"
    else:
        reason = (f"unreadable from offset {progress.next_offset} to the end of the file after "
                  f"{progress.emitted} records: {describe_error(failure)}")
    return DeadLetter(STAGE, reason, source_file, progress.next_offset, *named)


def open_uncompressed(path: str) -> BinaryIO:
    # Compression is ReadWarc's business: per-record gzip must reach warcio
    # as it is stored, so Beam must not decompress by file extension.
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
