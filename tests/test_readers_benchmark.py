"""benchmarks.readers reads every file each way and compares what zlib and zlib-ng inflate (no timing here)."""

import pytest

import benchmarks.readers as readers
from pipeline.sample import Capture, warc_bytes
from tests.helpers import page

CAPTURES = [Capture(f"https://en.example.org/{n}", page(f"<p>Page {n} of the harbour.</p>").encode("utf-8"))
            for n in range(3)]


def test_each_reader_reads_every_record_of_the_files_and_both_inflaters_the_same_bytes(tmp_path, capsys):
    for name, captures in (("a.warc.gz", CAPTURES), ("b.warc.gz", CAPTURES[:1])):
        (tmp_path / name).write_bytes(warc_bytes(captures))
    assert readers.main(["--input", str(tmp_path / "*.warc.gz"), "--reps", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[next(at for at, line in enumerate(lines) if line.startswith("reader ")) + 1:]
    rows = {line[:18].strip(): line[18:].split() for line in table if not line.startswith("fastwarc: not installed")}
    # A warcinfo per file, and each capture's request, response and metadata: read_warc gives one outcome per record.
    assert rows["read_warc"][-1] == rows["warcio"][-1] == str(1 + 3 * len(CAPTURES) + 1 + 3)
    assert rows["inflate, zlib"][-1] == rows["inflate, zlib-ng"][-1]


def test_files_that_match_nothing_are_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as error:
        readers.main(["--input", str(tmp_path / "*.warc.gz")])
    assert error.value.code == 2
    assert "no file matches --input" in capsys.readouterr().err
