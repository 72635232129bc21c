"""The progress display of local runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipeline import cli
from pipeline.runners.local_runner import worker_processes
from pipeline.progress import Progress, final_line, progress_line, progress_notes
from transforms.report.progress import NotesReader, NoteTotals, ProgressNotes, note_shard_written, note_unit_reused


def read(directory) -> NoteTotals:
    return NotesReader(str(directory)).totals()


def test_notes_add_up_over_units(tmp_path):
    first, second = ProgressNotes(str(tmp_path), "a.warc.gz@0"), ProgressNotes(str(tmp_path), "a.warc.gz@64")
    first.update(100, 3, force=True)
    second.update(50, 2, force=True)
    first.update(120, 4)  # within a second of the last note: not written yet
    assert (read(tmp_path).bytes_read, read(tmp_path).records) == (150, 5)
    first.update(200, 6, force=True)
    assert (read(tmp_path).bytes_read, read(tmp_path).records) == (250, 8)


def test_the_units_a_resumed_run_replays_are_noted_apart_from_those_read(tmp_path):
    ProgressNotes(str(tmp_path), "a.warc.gz@0").update(100, 3, force=True)
    note_unit_reused(str(tmp_path), "a.warc.gz@64", 64, 7)
    note_unit_reused(str(tmp_path), "b.warc.gz@0", 30, 2)
    note_unit_reused(str(tmp_path), "b.warc.gz@0", 30, 2)  # a retried reader
    assert read(tmp_path) == NoteTotals(bytes_read=100, records=3, bytes_reused=94, records_reused=9)


def test_a_resumed_run_counts_the_reused_bytes_as_done_and_its_rate_on_those_read():
    # 30 MB reused, 15 MB read in 10 s: 55 MB left at 1.5 MB/s, and a quarter of reading all 100 MB at that rate.
    line = progress_line(Progress(15_000_000, 1234, 100_000_000, 10.0, bytes_reused=30_000_000))
    assert line == "reading: 1,234 records, 45.0 MB of 100.0 MB (45%, 30% reused), 1.5 MB/s, about 0:00:53 left"
    # Only replayed units so far: no rate yet.
    assert progress_line(Progress(0, 40, 100_000_000, 6.0, bytes_reused=30_000_000)) == (
        "reading: 40 records, 30.0 MB of 100.0 MB (30%, 30% reused)")
    # Reading 60 % of the input took 24 s; the phases after it take a quarter of the 40 s that all of it would.
    assert progress_line(Progress(60, 9, 100, 30.0, reading_ended=24.0, bytes_reused=40)) == (
        "deduplicating: 9 records read in 0:00:24, about 0:00:04 left")
    assert final_line(Progress(60, 9, 100, 50.0, shards_written=2, shards=2, bytes_reused=40)) == (
        "done: 9 records, 100 bytes read (40% reused), 2 shards written in 0:00:50")


def test_shard_notes_count_the_shards_written(tmp_path):
    assert read(tmp_path) == NoteTotals()
    note_shard_written(str(tmp_path), "corpus-00000-of-00003.avro", 3)
    note_shard_written(str(tmp_path), "corpus-00002-of-00003.avro", 3)
    note_shard_written(str(tmp_path), "corpus-00002-of-00003.avro", 3)  # a retried writer
    assert read(tmp_path) == NoteTotals(shards_written=2, shards=3)


def test_a_refresh_reads_again_only_the_notes_that_changed(tmp_path, monkeypatch):
    for k in range(50):
        ProgressNotes(str(tmp_path), f"a.warc.gz@{k}").update(k, 1, force=True)
    note_shard_written(str(tmp_path), "corpus-00000-of-00002.avro", 2)
    notes = NotesReader(str(tmp_path))
    assert notes.totals() == NoteTotals(bytes_read=sum(range(50)), records=50, shards_written=1, shards=2)
    reads = []
    read_text = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda path, *args: reads.append(path.name) or read_text(path, *args))
    ProgressNotes(str(tmp_path), "a.warc.gz@7").update(1007, 2, force=True)
    assert notes.totals() == NoteTotals(bytes_read=sum(range(50)) + 1000, records=51, shards_written=1, shards=2)
    assert len(reads) == 1
    # The last line of a build reads every note again.
    assert notes.totals(afresh=True).records == 51 and len(reads) == 1 + 51


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


def test_before_the_first_record_is_read_the_line_says_workers_are_starting():
    assert progress_line(Progress(0, 0, 100_000_000, 6.0)) == "starting workers: 0:00:06, 100.0 MB to read"
    assert progress_line(Progress(900, 2, 20_500, 7.0, reading_started=6.5)).startswith("reading: 2 records")


def test_the_line_says_how_many_worker_processes_the_local_runner_starts():
    assert progress_line(Progress(0, 0, 100_000_000, 6.0, workers=2)) == (
        "starting 2 worker processes: 0:00:06, 100.0 MB to read")
    two = PipelineOptions(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    assert worker_processes(two) == 2
    assert worker_processes(PipelineOptions(["--direct_num_workers=0", "--direct_running_mode=multi_processing"])) \
        == os.cpu_count()
    assert worker_processes(PipelineOptions([])) is None  # in process: no process to start
    assert worker_processes(PipelineOptions(["--runner=DaskRunner", "--direct_running_mode=multi_processing"])) is None


def test_runners_with_workers_of_their_own_leave_their_notes_beside_the_build(tmp_path):
    """The in-process runner's notes go to a temporary directory; another runner's workers (Dask, a portable
    runner's) all write the build's directory, so their notes go there while it runs, and go with the run."""
    build = tmp_path / "out" / ".webcorpus-staging-1"
    build.mkdir(parents=True)
    with progress_notes(str(build), in_process=False, quiet=False) as notes:
        assert Path(notes).parent == build and Path(notes).is_dir() and Path(notes).is_absolute()
        ProgressNotes(notes, "a.warc.gz@0").update(100, 3, force=True)
        assert (read(notes).bytes_read, read(notes).records) == (100, 3)
    assert list(build.iterdir()) == []
    with progress_notes(str(build), in_process=True, quiet=False) as notes:
        assert not Path(notes).is_relative_to(tmp_path) and Path(notes).is_dir()
    with progress_notes("gs://bucket/corpus/.webcorpus-staging-1", in_process=False, quiet=False) as notes:
        assert notes is None  # an object store is no place for notes rewritten every second
    with progress_notes(str(build), in_process=True, quiet=True) as notes:
        assert notes is None
