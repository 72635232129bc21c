"""Every input file is accounted for: read within the size listed at the start, digested as read, and listed
in the report whatever came of it (issue 29)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct

import pytest

from pipeline.sample import warc_bytes
from tests.helpers import corpus_records, html_capture, input_dir, outcomes_by_kind
from tests.test_cli import run_main
from transforms.document import DeadLetter
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.formats import starts_like_archive
from transforms.stages.read_warc.read_warc_transform import SplitWarc

PAGES = [html_capture(f"https://en.example.org/{n}", f"<p>Page {n} of the harbour story.</p>",
                      date=f"2026-01-15T11:{n:02}:00Z") for n in range(3)]
DICTIONARY_MAGIC = struct.pack("<I", 0x184D2A5D)


def with_dictionary_size(data: bytes, size: int) -> bytes:
    """A zstd WARC (without a dictionary) behind a dictionary frame that declares `size` bytes."""
    return DICTIONARY_MAGIC + struct.pack("<I", size) + data


def read_all(data: bytes) -> list:
    return list(read_warc(lambda: io.BytesIO(data), "test.warc.zst", on_note=lambda note: None))


PLAIN_ZSTD = warc_bytes(PAGES, compression="zstd")
# Sizes a dictionary frame may declare: over 16 MiB, past the end of the file, inside the first record's frame.
DAMAGED_SIZES = {"huge": 0xFFFFFFF0, "over-16-MiB": (16 << 20) + 1, "past-the-end": len(PLAIN_ZSTD) + 1,
                 "short": 5}


@pytest.mark.parametrize("damage", DAMAGED_SIZES)
def test_a_zstd_dictionary_frame_of_a_damaged_size_is_a_dead_letter_not_silence(damage):
    outcomes = read_all(with_dictionary_size(PLAIN_ZSTD, DAMAGED_SIZES[damage]))
    _, _, dead = outcomes_by_kind(outcomes)
    assert dead, outcomes
    assert dead[0].source_offset in (0, 8 + DAMAGED_SIZES[damage]), dead
    assert "dictionary" in dead[0].reason or "corrupt data" in dead[0].reason, dead


@pytest.mark.parametrize("damage", ["huge", "past-the-end"])
def test_a_zstd_dictionary_frame_past_the_end_names_its_size(damage):
    size = DAMAGED_SIZES[damage]
    [letter] = [outcome for outcome in read_all(with_dictionary_size(PLAIN_ZSTD, size))
                if isinstance(outcome, DeadLetter)][:1]
    assert f"declares {size:,} bytes" in letter.reason and letter.source_offset == 0


def test_a_lone_zstd_file_with_a_damaged_dictionary_frame_is_refused_with_its_reason(tmp_path):
    path = input_dir(tmp_path) / "crawl.warc.zst"
    path.write_bytes(with_dictionary_size(PLAIN_ZSTD, 0xFFFFFFF0))
    with pytest.raises(ValueError, match="dictionary"):
        starts_like_archive(lambda: io.BytesIO(path.read_bytes()))
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "dictionary" in err and f"{0xFFFFFFF0:,}" in err, err


def test_every_input_file_is_in_the_reports_files_whatever_came_of_it(tmp_path):
    directory = input_dir(tmp_path)
    (directory / "good.warc.gz").write_bytes(warc_bytes(PAGES))
    (directory / "damaged.warc.zst").write_bytes(with_dictionary_size(PLAIN_ZSTD, 0xFFFFFFF0))
    (directory / "empty.warc.gz").write_bytes(b"")
    (directory / "blank.warc").write_bytes(b"\r\n" * 10)
    code, _, err = run_main(["--input", str(directory / "*"), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    listed = {entry["path"] for entry in manifest["inputs"]}
    assert set(report["files"]) == listed == {str(path) for path in directory.iterdir()}
    assert report["files"][str(directory / "damaged.warc.zst")]["errors"], report["files"]
    assert report["files"][str(directory / "empty.warc.gz")]["read"] == 0
    assert report["records"]["balanced"]


MORE_PAGES = [html_capture(f"https://en.example.org/more/{n}", f"<p>Another page {n}, appended later.</p>",
                           date=f"2026-01-15T12:{n:02}:00Z") for n in range(4)]


def change_after_listing(monkeypatch, path, change) -> None:
    """Calls `change(path)` once the build has listed its inputs (and cut them into ranges), before reading them."""
    listed = SplitWarc.process

    def list_then_change(self, file_and_times_matched):
        yield from listed(self, file_and_times_matched)
        change(path)

    monkeypatch.setattr(SplitWarc, "process", list_then_change)


def test_a_file_appended_to_during_the_build_is_read_and_digested_as_listed(tmp_path, monkeypatch):
    path = input_dir(tmp_path) / "crawl.warc.gz"
    listed = warc_bytes(PAGES)
    path.write_bytes(listed)

    def append(grown):
        with open(grown, "ab") as handle:
            handle.write(warc_bytes(MORE_PAGES))

    change_after_listing(monkeypatch, path, append)
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    assert path.stat().st_size > len(listed)  # it did grow
    [entry] = json.loads((tmp_path / "out" / "manifest.json").read_text())["inputs"]
    assert (entry["size"], entry["sha256"]) == (len(listed), hashlib.sha256(listed).hexdigest())
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["files"][str(path)]["read"] == len(read_all(listed))
    assert {record["url"] for record in corpus_records(tmp_path / "out")} == {page.url for page in PAGES}


def test_a_file_cut_short_during_the_build_is_refused_in_one_line(tmp_path, monkeypatch):
    path = input_dir(tmp_path) / "crawl.warc.gz"
    path.write_bytes(warc_bytes(PAGES + MORE_PAGES))
    change_after_listing(monkeypatch, path, lambda cut: os.truncate(cut, 600))
    code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 1 and "changed during the build" in err and str(path) in err, err
    assert len(err.strip().splitlines()) == 1, err
