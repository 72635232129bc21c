"""ReadWarc and ReadAllWarc: the Beam transforms that read WARC files, range by range, with a splittable DoFn.

As Beam's own file sources: files matched, cut into ranges (`SplitWarc`),
spread over workers, and each range read by `ReadWarcRange`, whose
restriction is its byte range, claimed record by record (`read_warc`'s
`claim`), so that a runner may split it while it is read.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker, UnsplittableRestrictionTracker
from apache_beam.transforms.window import GlobalWindows

from transforms.document import Document, Skip, read_at
from transforms.filesystems.http_filesystem import serves_ranges
from transforms.filesystems.locations import redacted
from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.report.progress import ProgressNotes, note_unit_reused
from transforms.stages.read_warc.formats import detect_format
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES, FileToDigest, WarcRange, once_per_file, split_warc
from transforms.stages.read_warc.classify import Screen
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.record_runs import read_runs, runs_digest
from transforms.stages.compress_write.avro_encoding import RecordLayout
from transforms.stages.compress_write.schema import DEFAULT_FIELDS
from transforms.state.unit_check import reusable, warc_input_problem
from transforms.state.unit_ledger import RECORDED
from transforms.stages.read_warc.snapshot import RangeDigest, digest_listed, open_listed
from transforms.stage import counter
from transforms.vocabulary import (DEAD_LETTER, DOCUMENTS, INPUT_FILES, NON_RESPONSE, NOTES, RECORDS_READ, SKIPPED,
                                   UNITS_READ, ReadNote, RecordsRead, UnitRead)
from transforms.vocabulary import READ_WARC as STAGE



# Notes listed for one range of a file; the rest are counted in one more note.
NOTES_PER_RANGE = 100


class SplitWarc(beam.DoFn):
    """Cuts each file into `WarcRange`s; outputs a `FileToDigest` per file too, after every range of the bundle.

    Beam's local runner deals the work items of a stage to its workers in
    turn, in order: a digest after each file's ranges would give one worker
    every range and the other every digest (with files of one range each).
    """

    def __init__(self, range_bytes: int):
        self._range_bytes = range_bytes

    def start_bundle(self):
        self._to_digest: list[FileToDigest] = []

    def process(self, file_and_times_matched):
        file, times_matched = file_and_times_matched
        layout = detect_format(lambda: open_listed(file.path, file.size_in_bytes)).layout
        self._to_digest.append(FileToDigest(file.path, file.size_in_bytes))
        yield from split_warc(file.path, file.size_in_bytes, self._range_bytes, layout, times_matched,
                              serves_ranges(file.path))

    def finish_bundle(self):
        for to_digest in self._to_digest:
            yield GlobalWindows.windowed_value(to_digest)


class FetchedRuns:
    """What the requests of a unit of runs brought: their bytes' SHA-256 (one after the other: what the unit was
    read from), how many, and the size of their file."""

    def __init__(self):
        self.sha256 = hashlib.sha256()
        self.bytes = 0
        self.file_size = 0

    def add(self, data: bytes, file_size: int) -> None:
        self.sha256.update(data)
        self.bytes += len(data)
        self.file_size = file_size


class WholeRange(OffsetRange):
    """A restriction that is never split: a range read from its start, or a file digested in one go."""


class WarcRestrictions(beam.transforms.core.RestrictionProvider):
    """The restriction of a unit of reading: its byte range, on an `OffsetRestrictionTracker`.

    The records of a range are claimed at their offsets (see `read_warc`), so
    a runner can split a range while it is read, at any offset, and knows how
    far it got. A range of a file that cannot start reading mid-file (not
    compressed, or gzipped whole) is a `WholeRange`, as is a file to digest
    (one position). The initial restriction is not split further: the
    ranges are made, and spread over workers, before (`SplitWarc`), as
    units of the corpus's shards.
    """

    def initial_restriction(self, unit: WarcRange | FileToDigest) -> OffsetRange:
        if isinstance(unit, FileToDigest):
            return WholeRange(0, 1)
        return (OffsetRange if unit.splittable else WholeRange)(unit.start, unit.start + unit.size)

    def create_tracker(self, restriction: OffsetRange):
        tracker = OffsetRestrictionTracker(restriction)
        return UnsplittableRestrictionTracker(tracker) if isinstance(restriction, WholeRange) else tracker

    def restriction_size(self, unit: WarcRange | FileToDigest, restriction: OffsetRange) -> int:
        # (Digesting a file reads all of it.)
        return unit.file_size if isinstance(unit, FileToDigest) else restriction.size()


class _Claims:
    """`read_warc`'s `claim` on a restriction tracker.

    An offset at or before the last claimed is not claimed again (warcio's
    offsets go back on garbled input): it is the restriction's, as the last was.
    """

    def __init__(self, tracker):
        self._tracker = tracker
        self._last: int | None = None
        self._held = True

    def __call__(self, offset: int) -> bool:
        if self._last is not None and offset <= self._last:
            return self._held
        self._last = offset
        self._held = self._tracker.try_claim(offset)
        return self._held

    @property
    def reached(self) -> int:
        """The last offset claimed or refused (-1 before any)."""
        return -1 if self._last is None else self._last

    def finish(self) -> None:
        """Claims what is left of the restriction when reading ends: no record starts there."""
        stop = self._tracker.current_restriction().stop
        if self._last is None or self._last < stop:
            self(stop)


class ReadWarcRange(beam.DoFn):
    """Reads the records of a `WarcRange`; digests the file of a `FileToDigest`. A splittable DoFn.

    Digests are work items of their own, spread over workers like the ranges:
    the reader of a file's first range does not read the whole file again.

    With a `progress_dir` (local runs), it leaves notes of how far it got (of a unit replayed, one note).
    `skip_truncated`, `screen`: see `read_warc`. With `units_dir`
    (`transforms.state.unit_ledger`), a range that has a completion record there that
    checks out (`transforms.state.unit_check`, its staging files read as records of
    `staged_fields`) is not read: the record goes to
    `recorded`; a range read gives its `UnitRead` on `units_read`, with the
    digest of the bytes it was read from.
    """

    def __init__(self, progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 skip_truncated: bool = False, screen: Screen | None = None, units_dir: str | None = None,
                 staged_fields: tuple[str, ...] = DEFAULT_FIELDS):
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes
        self._skip_truncated = skip_truncated
        self._screen = screen
        self._units_dir = units_dir
        self._staged_fields = staged_fields

    def setup(self):
        self._layout = RecordLayout(self._staged_fields)
        self._records = counter(STAGE, "records")
        self._documents = counter(STAGE, "documents")
        self._skipped = counter(STAGE, "skipped")
        self._dead = counter(STAGE, "dead_letter")

    def process(self, unit: WarcRange | FileToDigest, tracker=beam.DoFn.RestrictionParam(WarcRestrictions())):
        claims = _Claims(tracker)
        if isinstance(unit, FileToDigest):
            if claims(0):
                yield beam.pvalue.TaggedOutput(INPUT_FILES, replace(digest_listed(unit.path, unit.file_size),
                                                                    path=redacted(unit.path)))
            return
        path = unit.path
        # The name written (records, side files, report, manifest): a URL without its credentials, which only
        # `path` holds, to read it.
        source_file = redacted(path)
        restriction = tracker.current_restriction()
        start = restriction.start
        record = (reusable(self._units_dir, source_file, unit.start, self._layout,
                           warc_input_problem(path, unit.file_size, unit.start, unit.runs))
                  if self._units_dir else None)
        if record:
            claims.finish()
            if self._progress_dir:
                note_unit_reused(self._progress_dir, f"{path}@{start}", restriction.size(), record["records"])
            yield beam.pvalue.TaggedOutput(RECORDED, record)
            return
        notes = ProgressNotes(self._progress_dir, f"{path}@{start}") if self._progress_dir else None
        read = extracted_text = non_response = 0
        warnings: list[ReadNote] = []
        noted = 0
        listed: list[ReadNote] = []

        def listed_notes():
            nonlocal noted
            for warning in warnings:
                noted += 1
                if noted <= NOTES_PER_RANGE:
                    listed.append(warning)
                    yield beam.pvalue.TaggedOutput(NOTES, warning)
            warnings.clear()

        # (A split never moves the start of the restriction that reads a file's first record.)
        if start == 0 and unit.times_matched > 1:
            warnings.append(ReadNote(source_file, None, f"matched {unit.times_matched} times by the input patterns; "
                                                        "read once"))
        if not unit.ranged:
            warnings.append(ReadNote(source_file, None, "the server ignores Range requests: read as one stream "
                                                        "from the start, not in ranges"))
        # What the unit is read from, digested as it is read, for its completion record.
        read_digest = RangeDigest(unit.start) if self._units_dir and not unit.fetched else None
        fetched = FetchedRuns()
        seen = read_digest.seen if read_digest else None
        if unit.fetched:
            outcomes = read_runs(path, source_file, unit.runs, warnings.append, self._max_page_bytes, claims,
                                 self._skip_truncated, self._screen, fetched.add)
        else:
            # (Within the size listed: a file that grows meanwhile is read as its digest says it was.)
            outcomes = read_warc(lambda: open_listed(path, unit.file_size, seen), source_file, start, None,
                                 warnings.append, self._max_page_bytes, claims, self._skip_truncated, self._screen)
        for outcome in outcomes:
            yield from listed_notes()
            self._records.inc()
            read += 1
            if notes is not None:
                notes.update(min(max(read_at(outcome) - start, 0), restriction.size()), read)
            if isinstance(outcome, Document):
                self._documents.inc()
                extracted_text += outcome.is_extracted_text
                yield outcome.replace(capture=outcome.capture.replace(source_range=unit.start))
            elif isinstance(outcome, Skip) and outcome.kind == NON_RESPONSE:
                # (Counted, never listed: one count for the range on `records_read`, not one element each.)
                non_response += 1
            elif isinstance(outcome, Skip):
                self._skipped.inc()
                counter(STAGE, f"skipped:{outcome.kind}").inc()
                yield beam.pvalue.TaggedOutput(SKIPPED, outcome)
            else:
                self._dead.inc()
                yield beam.pvalue.TaggedOutput(DEAD_LETTER, outcome)
        claims.finish()
        yield from listed_notes()
        if non_response:
            self._skipped.inc(non_response)
            counter(STAGE, f"skipped:{NON_RESPONSE}").inc(non_response)
        if read:
            yield beam.pvalue.TaggedOutput(RECORDS_READ, RecordsRead(source_file, read, fetched.bytes, fetched.file_size,
                                                                     extracted_text, non_response))
        if noted > NOTES_PER_RANGE:
            listed.append(ReadNote(source_file, None,
                                   f"{noted - NOTES_PER_RANGE} more notes in the range from offset {start}, not listed"))
            yield beam.pvalue.TaggedOutput(NOTES, listed[-1])
        if self._units_dir:
            # (A runner that split the range gave part of it to another reading, or began this one later.)
            whole = ((restriction.start, restriction.stop) == (unit.start, unit.start + unit.size)
                     and tracker.current_restriction().stop == restriction.stop)
            # (To past its last record: the first offset not claimed, or the end of the restriction.)
            read_to, read_sha256 = ((unit.end, fetched.sha256.hexdigest()) if unit.fetched
                                    else read_digest.finish(path, unit.file_size, claims.reached))
            yield beam.pvalue.TaggedOutput(UNITS_READ, UnitRead(source_file, unit.start, unit.end, read, tuple(listed),
                                                                whole, read_to, read_sha256, fetched.bytes,
                                                                fetched.file_size, extracted_text,
                                                                runs_digest(unit.runs) if unit.fetched else "",
                                                                non_response))
        if notes is not None:
            notes.update(tracker.current_restriction().size(), read, force=True)


class ReadAllWarc(beam.PTransform):
    """Reads the WARC files matched by each file pattern of a PCollection.

    Outputs `documents`, `skipped`, `dead_letter`, `notes` (`ReadNote`s:
    warcio's warnings, files matched more than once), `records_read`
    (`RecordsRead`: the records of each range read) and `input_files` (the
    size and SHA-256 of each file read, `InputDigest`s for the build manifest
    and the report; each file is digested as a work item of its own, in
    parallel with the reading). Each file is read and digested within the
    size it was matched with (`transforms.stages.read_warc.snapshot`). A file that
    several patterns match (or one pattern given twice) is read once. Files
    are cut into ranges of `range_bytes` (as Beam's file sources split
    theirs), and the ranges, not records, are spread over workers: no page
    crosses a shuffle here. Each range is read by a splittable DoFn that a
    runner may split again while it reads (`WarcRestrictions`). `screen`: see `read_warc`.
    `units_dir`, `staged_fields`: see `ReadWarcRange` (outputs `recorded` and `units_read` too).
    """

    def __init__(self, range_bytes: int = DEFAULT_RANGE_BYTES, progress_dir: str | None = None,
                 max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES, skip_truncated: bool = False,
                 screen: Screen | None = None, units_dir: str | None = None,
                 staged_fields: tuple[str, ...] = DEFAULT_FIELDS):
        super().__init__()
        self._range_bytes = range_bytes
        self._progress_dir = progress_dir
        self._max_page_bytes = max_page_bytes
        self._skip_truncated = skip_truncated
        self._screen = screen
        self._units_dir = units_dir
        self._staged_fields = staged_fields

    def expand(self, patterns):
        return (
            patterns
            | "Match" >> fileio.MatchAll()
            | "ByPath" >> beam.Map(lambda file: (file.path, file))
            | "SamePath" >> beam.GroupByKey()
            | "OncePerFile" >> beam.Map(once_per_file)
            | "Split" >> beam.ParDo(SplitWarc(self._range_bytes))
            | "SpreadRanges" >> beam.Reshuffle()
            | "Read" >> self.read_units()
        )

    def read_units(self) -> beam.PTransform:
        """The reading of `WarcRange`s and `FileToDigest`s, with every output."""
        return beam.ParDo(ReadWarcRange(self._progress_dir, self._max_page_bytes, self._skip_truncated, self._screen,
                                        self._units_dir, self._staged_fields)).with_outputs(
            SKIPPED, DEAD_LETTER, NOTES, RECORDS_READ, INPUT_FILES, UNITS_READ, RECORDED, main=DOCUMENTS)


class ReadWarc(beam.PTransform):
    """Reads the WARC files matched by the given file patterns (see `ReadAllWarc`); a capture index's selection is
    read by `pipeline.index_read.ReadIndexed`, with `ReadAllWarc.read_units`."""

    def __init__(self, patterns: list[str] | str, range_bytes: int = DEFAULT_RANGE_BYTES,
                 progress_dir: str | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 skip_truncated: bool = False, screen: Screen | None = None, units_dir: str | None = None,
                 staged_fields: tuple[str, ...] = DEFAULT_FIELDS):
        super().__init__()
        self._patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        self._read_all = ReadAllWarc(range_bytes, progress_dir, max_page_bytes, skip_truncated, screen, units_dir,
                                     staged_fields)

    def expand(self, pbegin):
        return pbegin | "Patterns" >> beam.Create(self._patterns) | self._read_all
