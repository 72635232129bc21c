"""ReadWarcRange as a splittable DoFn: wherever a runner splits a range, before or while it is read, every
record is read exactly once, in order, and the tracker shows how far reading got."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.io.filesystem import FileMetadata
from apache_beam.io.restriction_trackers import OffsetRange

from pipeline.sample import arc_bytes, sample_captures, warc_bytes
from tests.helpers import about, process_unit
from transforms.document import DeadLetter, Skip
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.formats import detect_format
from transforms.stages.read_warc.ranges import WarcRange, split_warc
from transforms.stages.read_warc.read_warc_transform import ReadWarcRange, SplitWarc, WarcRestrictions
from transforms.vocabulary import NON_RESPONSE, NOTES, RECORDS_READ

CAPTURES = sample_captures()[:8]
SPLITTABLE = {
    "gzip per record": lambda: warc_bytes(CAPTURES),
    "zstd": lambda: warc_bytes(CAPTURES, "zstd"),
    "zstd with a dictionary": lambda: warc_bytes(CAPTURES, "zstd", zstd_dictionary=b"WARC/1.0\r\n" * 40),
    "lz4": lambda: warc_bytes(CAPTURES, "lz4"),
    "ARC gzip per record": lambda: arc_bytes(CAPTURES, "record"),
}
UNSPLITTABLE = {
    "uncompressed": lambda: warc_bytes(CAPTURES, "none"),
    "ARC": lambda: arc_bytes(CAPTURES),
    "whole-file gzip": lambda: warc_bytes(CAPTURES, "file"),
}


def counted(outputs) -> "Reading":
    """ReadWarcRange's outputs but its count of records read, which it checks: one count, of every record output
    (each output but the notes) and of the records it counted without output (`RecordsRead.non_response`)."""
    counts = [output.value for output in outputs
              if isinstance(output, beam.pvalue.TaggedOutput) and output.tag == RECORDS_READ]
    rest = [output for output in outputs
            if not (isinstance(output, beam.pvalue.TaggedOutput) and output.tag == RECORDS_READ)]
    records = [output for output in rest if not (isinstance(output, beam.pvalue.TaggedOutput) and output.tag == NOTES)]
    assert len(counts) <= 1 and (counts or not records), (counts, len(records))
    assert sum(count.records - count.non_response for count in counts) == len(records), (counts, len(records))
    return Reading(rest, sum(count.non_response for count in counts))


class Reading(list):
    """What reading a range listed, in order, and how many records it counted without listing them: the readings
    of a range's pieces add up to the range's (the records counted, too, each once)."""

    def __init__(self, outputs=(), non_response: int = 0):
        super().__init__(outputs)
        self.non_response = non_response

    def __add__(self, other):
        return Reading(list(self) + list(other), self.non_response + getattr(other, "non_response", 0))

    def __eq__(self, other):
        return list(self) == list(other) and self.non_response == getattr(other, "non_response", 0)

    __hash__ = None


def identity(output) -> tuple:
    tag = output.tag if isinstance(output, beam.pvalue.TaggedOutput) else "documents"
    value = output.value if isinstance(output, beam.pvalue.TaggedOutput) else output
    return tag, type(value).__name__, about(value).source_offset, getattr(about(value), "warc_record_id", "")


def the_unit(tmp_path, name: str, data: bytes) -> WarcRange:
    path = tmp_path / name.replace(" ", "-")
    path.write_bytes(data)
    [unit] = split_warc(str(path), len(data), len(data), detect_format(lambda: open(path, "rb")).layout)
    return unit


def read(unit: WarcRange, restriction: OffsetRange | None = None) -> Reading:
    outputs = counted(process_unit(unit, restriction))
    return Reading(map(identity, outputs), outputs.non_response)


def record_offsets(outputs: list[tuple]) -> list[int]:
    return sorted({offset for _, _, offset, _ in outputs})


@pytest.mark.parametrize("name", SPLITTABLE)
def test_a_split_before_reading_at_any_offset_reads_every_record_once(tmp_path, name):
    unit = the_unit(tmp_path, name, SPLITTABLE[name]())
    whole = read(unit)
    assert len(whole) + whole.non_response > 8 and not [output for output in whole if output[1] == DeadLetter.__name__]
    # At each record's offset, a byte either side of it, and every 127th byte between.
    points = sorted({point for offset in record_offsets(whole) for point in (offset - 1, offset, offset + 1)}
                    | set(range(1, unit.size, 127)))
    for point in points:
        if 0 < point < unit.size:
            assert read(unit, OffsetRange(0, point)) + read(unit, OffsetRange(point, unit.size)) == whole, point


@pytest.mark.parametrize("name", SPLITTABLE)
def test_a_split_into_many_pieces_reads_every_record_once(tmp_path, name):
    unit = the_unit(tmp_path, name, SPLITTABLE[name]())
    whole = read(unit)
    for piece_bytes in (100, 257, 1000):
        pieces = sum((read(unit, piece) for piece in OffsetRange(0, unit.size).split(piece_bytes, piece_bytes)),
                     Reading())
        assert pieces == whole, piece_bytes


def read_splitting_after(unit: WarcRange, outputs_before_split: int, fraction: float):
    """Reads a unit, asking its tracker to split (at `fraction` of what is left) after that many outputs;
    the primary's outputs, the split, and the residual's outputs read on their own."""
    provider = WarcRestrictions()
    tracker = provider.create_tracker(provider.initial_restriction(unit))
    reader = ReadWarcRange()
    reader.setup()
    outputs, split = [], None
    for output in reader.process(unit, tracker=tracker):
        outputs.append(output)
        if len(outputs) == outputs_before_split:
            split = tracker.try_split(fraction)
    tracker.check_done()
    primary = counted(outputs)
    primary = Reading(map(identity, primary), primary.non_response)
    residual = read(unit, split[1]) if split else []
    return primary, split, residual


@pytest.mark.parametrize("name", SPLITTABLE)
@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.5, 0.99])
def test_a_split_while_reading_stops_the_primary_and_the_residual_reads_the_rest(tmp_path, name, fraction):
    unit = the_unit(tmp_path, name, SPLITTABLE[name]())
    whole = read(unit)
    splits = 0
    for claimed in range(1, len(whole)):
        primary, split, residual = read_splitting_after(unit, claimed, fraction)
        assert primary + residual == whole, claimed
        if split:
            splits += 1
            primary_range, residual_range = split
            assert primary_range.stop == residual_range.start
            assert all(offset < residual_range.start for _, _, offset, _ in primary)
            assert all(offset >= residual_range.start for _, _, offset, _ in residual)
            assert primary[:claimed] == whole[:claimed]
    # (Near the end of the file, what is left may hold no offset to split at.)
    assert splits >= len(whole) // 2


@pytest.mark.parametrize("name", UNSPLITTABLE)
def test_a_file_that_cannot_start_reading_mid_way_is_never_split(tmp_path, name):
    unit = the_unit(tmp_path, name, UNSPLITTABLE[name]())
    assert not unit.splittable
    whole = read(unit)
    assert len(whole) + whole.non_response > 8
    for claimed in (1, len(whole) // 2, len(whole) - 1):
        primary, split, residual = read_splitting_after(unit, claimed, 0.5)
        assert not split and primary == whole and residual == []


@pytest.mark.parametrize("name", SPLITTABLE)
def test_the_tracker_shows_how_far_reading_got(tmp_path, name):
    unit = the_unit(tmp_path, name, SPLITTABLE[name]())
    provider = WarcRestrictions()
    tracker = provider.create_tracker(provider.initial_restriction(unit))
    reader = ReadWarcRange()
    reader.setup()
    progress = [tracker.current_progress().fraction_completed]
    for output in reader.process(unit, tracker=tracker):
        if not (isinstance(output, beam.pvalue.TaggedOutput) and output.tag == RECORDS_READ):
            progress.append(tracker.current_progress().fraction_completed)
    assert progress[0] == 0 and progress == sorted(progress) and 0.9 < progress[-1] < 1
    assert provider.restriction_size(unit, provider.initial_restriction(unit)) == unit.size


@pytest.mark.slow
def test_a_damaged_range_split_anywhere_reads_as_the_same_fixed_ranges_do(tmp_path):
    data = bytearray(warc_bytes(CAPTURES))
    intact = tmp_path / "intact"
    intact.write_bytes(data)
    # Every record's offset, those a range counts without listing them too.
    offsets = sorted(about(outcome).source_offset for outcome in
                     read_warc(lambda: open(intact, "rb"), str(intact), on_note=lambda note: None))
    # Garble the middle of the fourth record's gzip member.
    middle = (offsets[3] + offsets[4]) // 2
    data[middle:middle + 8] = b"\xff" * 8
    unit = the_unit(tmp_path, "damaged", bytes(data))
    whole = read(unit)
    assert [output for output in whole if output[1] == DeadLetter.__name__]

    def outcomes(restriction: OffsetRange) -> Reading:
        outputs = counted(process_unit(unit, restriction))
        return Reading((output.value if isinstance(output, beam.pvalue.TaggedOutput) else output
                        for output in outputs), outputs.non_response)

    def fixed_range(start: int, end: int | None) -> Reading:
        # The reader's non-response skips, which the range counts and does not list.
        read = list(read_warc(lambda: open(unit.path, "rb"), unit.path, start, end, on_note=lambda note: None))
        listed = [outcome for outcome in read if not (isinstance(outcome, Skip) and outcome.kind == NON_RESPONSE)]
        return Reading(listed, len(read) - len(listed))

    for point in range(offsets[2], offsets[6], 7):
        split = outcomes(OffsetRange(0, point)) + outcomes(OffsetRange(point, unit.size))
        assert split == fixed_range(0, point) + fixed_range(point, None), point
        # (The damage is reported by the range it starts in, after the records it reads.)
        assert sorted(identity(outcome)[1:] for outcome in split) == sorted(output[1:] for output in whole), point


def test_split_warc_gives_each_of_two_workers_dealt_its_items_in_turn_half_the_ranges(tmp_path):
    """Beam's local runner deals a stage's work items to its workers in turn: with files of one range each, the
    ranges must not all fall to one worker (and the digests to the other)."""
    split = SplitWarc(range_bytes=1 << 20)
    split.start_bundle()
    items = []
    for index in range(8):
        path = tmp_path / f"file-{index}.warc.gz"
        path.write_bytes(warc_bytes(CAPTURES[index:index + 1]))
        items += split.process((FileMetadata(str(path), path.stat().st_size), 1))
    items += [item.value for item in split.finish_bundle() or ()]
    assert sorted(type(item).__name__ for item in items) == ["FileToDigest"] * 8 + ["WarcRange"] * 8
    for worker in range(2):
        dealt = items[worker::2]
        assert sum(isinstance(item, WarcRange) for item in dealt) == 4, [type(item).__name__ for item in dealt]
