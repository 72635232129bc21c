"""ReadWarc's framing: where records start and end in damaged files, and what the reader notes on the way."""

from __future__ import annotations

import gzip
import io
import json
import threading

import pytest

from pipeline.sample import Capture, capture_records, warc_bytes
from tests.helpers import html_capture, input_dir, outcomes_by_kind
from tests.test_cli import run_main
from transforms.stages.read_warc.read_warc import BLANK_RUN_LIMIT, read_warc

PAGES = [html_capture(f"https://en.example.org/{n}", f"<p>Page number {n} of the harbour story.</p>",
                      date=f"2026-01-15T10:0{n}:00Z") for n in range(4)]
URLS = [capture.url for capture in PAGES]


def response(capture: Capture) -> bytes:
    """The response record of a capture, uncompressed (no request or metadata record)."""
    return capture_records(capture, "1.0")[1]


def with_content_length(record: bytes, change: int) -> bytes:
    head, rest = record.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    [index] = [i for i, line in enumerate(lines) if line.startswith(b"Content-Length: ")]
    lines[index] = b"Content-Length: %d" % (int(lines[index].split(b": ")[1]) + change)
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def gzip_member(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def read_all(data: bytes, source_file: str = "test.warc") -> tuple[list, list]:
    notes = []
    outcomes = list(read_warc(lambda: io.BytesIO(data), source_file, on_note=notes.append))
    return outcomes, notes


def test_a_record_that_starts_where_the_search_resumes_is_found():
    # A Content-Length 3 bytes short leaves "ml>" and the end of line where a
    # blank line should be; the next record starts right after them.
    data = b"".join([response(PAGES[0]), with_content_length(response(PAGES[1]), -3),
                     response(PAGES[2]), response(PAGES[3])])
    outcomes, _ = read_all(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == URLS
    [damage] = dead
    assert damage.skipped_bytes == len(b"ml>\r\n\r\n")
    assert "2 records recovered" in damage.reason


@pytest.mark.parametrize("damage", ["not-a-record", "short-content-length"])
def test_one_damaged_record_in_a_whole_file_gzip_costs_only_itself(damage):
    second = response(PAGES[1])
    second = (second.replace(b"WARC/1.0", b"WARX/1.0", 1) if damage == "not-a-record"
              else with_content_length(second, -3))
    data = gzip_member(b"".join([response(PAGES[0]), second, response(PAGES[2]), response(PAGES[3])]))
    outcomes, _ = read_all(data, "test.warc.gz")
    docs, _, dead = outcomes_by_kind(outcomes)
    kept = URLS if damage == "short-content-length" else [URLS[0], URLS[2], URLS[3]]
    assert [doc.capture.url for doc in docs] == kept
    [letter] = dead
    assert letter.reason.startswith("corrupt data") and "2 records recovered" in letter.reason
    # Offsets in a whole-file gzip count decompressed bytes.
    assert docs[-1].capture.source_offset == sum(len(response(page)) for page in PAGES[:3])


def test_a_record_split_across_gzip_members_says_so():
    members = [gzip_member(record) for record in [response(PAGES[0])]]
    split = response(PAGES[1])
    members += [gzip_member(split[:-60]), gzip_member(split[-60:]), gzip_member(response(PAGES[2]))]
    outcomes, _ = read_all(b"".join(members), "test.warc.gz")
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [URLS[0], URLS[2]]
    letter, rest = dead
    assert letter.url == URLS[1] and "split across gzip members" in letter.reason
    assert "the file ends" not in letter.reason
    assert "the rest of a record split across gzip members" in rest.reason
    assert rest.source_offset == len(members[0]) + len(members[1])


def test_a_content_length_too_big_does_not_swallow_the_next_record():
    data = b"".join([response(PAGES[0]), with_content_length(response(PAGES[1]), 40),
                     response(PAGES[2]), response(PAGES[3])])
    outcomes, _ = read_all(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [URLS[0], URLS[2], URLS[3]]
    [letter] = dead
    assert letter.url == URLS[1] and "runs past the end of this record" in letter.reason
    assert f"at offset {docs[1].capture.source_offset}" in letter.reason


def test_a_record_whose_lines_end_in_lf_only_does_not_swallow_the_next_record():
    # Content-Length counted CRLF line ends that a text tool turned into LF.
    data = b"".join([response(PAGES[0]).replace(b"\r\n", b"\n"), response(PAGES[1]), response(PAGES[2])])
    outcomes, _ = read_all(data)
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == [URLS[1], URLS[2]]
    [letter] = dead
    assert letter.url == URLS[0] and "runs past the end of this record" in letter.reason


def test_warcio_warnings_are_notes_of_their_file_and_record_not_printed(capsys):
    data = b"".join([response(PAGES[0]), with_content_length(response(PAGES[1]), -3), response(PAGES[2])])
    _, notes = read_all(data, "damaged.warc")
    assert capsys.readouterr().err == ""
    [note] = notes
    assert (note.source_file, note.source_offset) == ("damaged.warc", len(response(PAGES[0])))
    assert "Record not followed by newline" in note.text


def test_warcio_warnings_of_files_read_at_once_on_threads_stay_with_their_file():
    damaged = b"".join([response(PAGES[0]), with_content_length(response(PAGES[1]), -3), response(PAGES[2])])
    intact = b"".join(response(page) for page in PAGES) * 50
    notes = {name: [] for name in ("damaged", "intact")}

    def read(name, data):
        for _ in range(20):
            list(read_warc(lambda: io.BytesIO(data), name, on_note=notes[name].append))

    threads = [threading.Thread(target=read, args=item) for item in (("damaged", damaged), ("intact", intact))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert notes["intact"] == []
    assert len(notes["damaged"]) == 20 and {note.source_file for note in notes["damaged"]} == {"damaged"}


@pytest.mark.slow
def test_quiet_prints_no_warcio_warning_and_the_report_lists_it_with_its_file(tmp_path):
    path = input_dir(tmp_path) / "damaged.warc"
    path.write_bytes(b"".join([warc_bytes([], "none"), response(PAGES[0]),
                               with_content_length(response(PAGES[1]), -3), response(PAGES[2])]))
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    assert "WARNING" not in err and "Content-Length" not in err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [note] = report["files"][str(path)]["notes"]
    assert note.startswith(f"offset {len(warc_bytes([], 'none')) + len(response(PAGES[0]))}: ")
    assert "Record not followed by newline" in note


@pytest.mark.parametrize("twice", ["same-input", "overlapping-patterns"])
@pytest.mark.slow
def test_a_file_matched_twice_is_read_once(tmp_path, twice):
    path = input_dir(tmp_path) / "pages.warc.gz"
    path.write_bytes(warc_bytes(PAGES))
    other = input_dir(tmp_path) / "other.warc.gz"
    other.write_bytes(warc_bytes([html_capture("https://en.example.org/other", "<p>Another page entirely.</p>")]))
    inputs = [str(path), str(path)] if twice == "same-input" else [str(input_dir(tmp_path) / "*.warc.gz"), str(path)]
    code, _, err = run_main([arg for item in inputs for arg in ("--input", item)]
                            + ["--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    pages = len(PAGES) + (twice == "overlapping-patterns")
    assert report["records"]["kept"] == pages and report["records"]["duplicates"] == 0
    assert report["records"]["read"] == report["files"][str(path)]["read"] + 4 * (pages - len(PAGES))
    assert report["files"][str(path)]["read"] == 1 + 3 * len(PAGES)
    assert report["files"][str(path)]["notes"] == ["matched 2 times by the input patterns; read once"]
    if twice == "overlapping-patterns":
        assert report["files"][str(other)]["notes"] == []


@pytest.mark.parametrize("compression", ["record", "none"])
def test_a_long_run_of_blank_lines_after_a_record_is_a_dead_letter_with_its_bytes(compression):
    blank = BLANK_RUN_LIMIT * 3
    records = [response(page) for page in PAGES[:3]]
    records[0] += b"\r\n" * (BLANK_RUN_LIMIT // 4)  # within the limit: nothing to report
    records[1] += b"\n" * blank
    data = (b"".join(gzip_member(record) for record in records) if compression == "record"
            else b"".join(records))
    outcomes, _ = read_all(data, f"test.{compression}")
    docs, _, dead = outcomes_by_kind(outcomes)
    assert [doc.capture.url for doc in docs] == URLS[:3]
    [letter] = dead
    # The record's own end of block (CRLF CRLF) is blank lines too.
    assert letter.skipped_bytes == blank + 4 and "blank lines" in letter.reason
    assert outcomes.index(letter) == 2  # right after the record it follows


def test_warcio_log_warnings_are_notes_too(caplog):
    spaced = Capture("https://en.example.org/a page", PAGES[0].body, date=PAGES[0].date)
    _, notes = read_all(response(spaced))
    assert [note.text for note in notes] == ["Replacing spaces in invalid WARC-Target-URI: https://en.example.org/a page"]
    assert caplog.records == []


@pytest.mark.slow
def test_the_notes_of_a_file_are_bounded(tmp_path):
    # Every record has a space in its target URI: one warning each.
    spaced = [Capture(f"https://en.example.org/page {n}", PAGES[0].body, date=PAGES[0].date) for n in range(150)]
    path = input_dir(tmp_path) / "spaced.warc"
    path.write_bytes(b"".join(response(capture) for capture in spaced))
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    notes = json.loads((tmp_path / "out" / "report.json").read_text())["files"][str(path)]["notes"]
    assert len(notes) == 101
    assert "50 more notes in the range from offset 0, not listed" in notes
