"""The progress display of local runs."""

from __future__ import annotations

from pipeline import cli
from pipeline.progress import progress_line
from transforms.progress import ProgressNotes, read_notes


def test_notes_add_up_over_units(tmp_path):
    first, second = ProgressNotes(str(tmp_path), "a.warc.gz@0"), ProgressNotes(str(tmp_path), "a.warc.gz@64")
    first.update(100, 3, force=True)
    second.update(50, 2, force=True)
    first.update(120, 4)  # within a second of the last note: not written yet
    assert read_notes(str(tmp_path)) == (150, 5)
    first.update(200, 6, force=True)
    assert read_notes(str(tmp_path)) == (250, 8)


def test_progress_line_gives_share_rate_and_time_left():
    line = progress_line(bytes_read=25_000_000, records=1234, total_bytes=100_000_000, elapsed=10.0)
    assert line == "1,234 records, 25.0 of 100.0 MB read (25%), 2.5 MB/s, time left 0:00:30"
    assert progress_line(0, 0, 100, 0.0).endswith("starting")


def test_a_local_run_shows_progress_unless_quiet(tmp_path, capsys):
    assert cli.main(["--output", str(tmp_path / "loud")]) == 0
    shown = capsys.readouterr().err.strip().splitlines()
    assert shown and "(100%)" in shown[-1] and "34 records" in shown[-1]
    assert cli.main(["--output", str(tmp_path / "quiet"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
