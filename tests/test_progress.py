"""The progress display of local runs."""

from __future__ import annotations

import pytest

from pipeline import cli
from pipeline.progress import Progress, progress_line
from transforms.progress import ProgressNotes, note_shard_written, read_notes, read_shard_notes


def test_notes_add_up_over_units(tmp_path):
    first, second = ProgressNotes(str(tmp_path), "a.warc.gz@0"), ProgressNotes(str(tmp_path), "a.warc.gz@64")
    first.update(100, 3, force=True)
    second.update(50, 2, force=True)
    first.update(120, 4)  # within a second of the last note: not written yet
    assert read_notes(str(tmp_path)) == (150, 5)
    first.update(200, 6, force=True)
    assert read_notes(str(tmp_path)) == (250, 8)


def test_shard_notes_count_the_shards_written(tmp_path):
    assert read_shard_notes(str(tmp_path)) == (0, 0)
    note_shard_written(str(tmp_path), "corpus-00000-of-00003.avro", 3)
    note_shard_written(str(tmp_path), "corpus-00002-of-00003.avro", 3)
    note_shard_written(str(tmp_path), "corpus-00002-of-00003.avro", 3)  # a retried writer
    assert read_shard_notes(str(tmp_path)) == (2, 3)
    assert read_notes(str(tmp_path)) == (0, 0)


def test_while_reading_the_line_gives_share_rate_and_time_left_for_the_whole_run():
    line = progress_line(Progress(bytes_read=25_000_000, records=1234, total_bytes=100_000_000, elapsed=10.0))
    # 30 s of reading left, and a quarter of the 40 s of reading for deduplicating and writing.
    assert line == "reading: 1,234 records, 25.0 MB of 100.0 MB (25%), 2.5 MB/s, about 0:00:40 left"
    assert progress_line(Progress(900, 2, 20_500, 0.0)).startswith("reading: 2 records, 900 bytes of 20.5 KB (4%)")


def test_no_time_left_is_shown_before_it_means_something():
    assert "left" not in progress_line(Progress(0, 0, 100, 0.0))
    # 1 % read: a rate from so little says nothing of the run.
    assert "left" not in progress_line(Progress(1_000_000, 10, 100_000_000, 60.0))
    # 50 % read within the first second of reading.
    assert "left" not in progress_line(Progress(50_000_000, 10, 100_000_000, 20.5, reading_started=20.0))
    # The start-up before reading is no part of the rate.
    assert progress_line(Progress(25_000_000, 9, 100_000_000, 30.0, reading_started=20.0)).endswith(
        "2.5 MB/s, about 0:00:40 left")


def test_after_reading_the_line_names_the_phase():
    deduplicating = progress_line(Progress(100, 9, 100, 45.0, reading_ended=40.0))
    assert deduplicating == "deduplicating: 9 records read in 0:00:40, about 0:00:05 left"
    writing = progress_line(Progress(100, 9, 100, 60.0, shards_written=2, shards=6, reading_ended=40.0,
                                     writing_started=50.0))
    assert writing == "writing: 2 of 6 shards, 9 records read, about 0:00:20 left"


@pytest.mark.slow
def test_a_local_run_shows_progress_unless_quiet(tmp_path, capsys):
    assert cli.main(["--output", str(tmp_path / "loud")]) == 0
    shown = capsys.readouterr().err.strip().splitlines()
    assert shown and shown[-1].startswith("done: 34 records") and "shards written" in shown[-1]
    assert cli.main(["--output", str(tmp_path / "quiet"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
