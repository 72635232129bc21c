"""The test files of other WARC readers (`WEBCORPUS_PEER_WARCS`): read, accounted for, never lost.

Many are broken on purpose. Every HTTP 200 HTML response that warcio reads
in them must come out of ReadWarc as a document or as a dead letter (of its
own, or of the stretch of the file it lies in); a build over all of them
exits 0 with balanced accounting; a lone ARC file that warcio reads is exit 0,
and a lone file that is neither WARC nor ARC is exit 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.test_cli import run_main
from transforms.document import DeadLetter, Document, Skip
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc
from transforms.stages.read_warc.formats import starts_like_archive
from transforms.stages.read_warc.classify import HTML_TYPES, media_type

PEER_ENV = "WEBCORPUS_PEER_WARCS"


@pytest.fixture(scope="module")
def peer_files() -> list[Path]:
    value = os.environ.get(PEER_ENV)
    if not value:
        pytest.skip(f"{PEER_ENV} is not set: point it at the directory of other WARC readers' test files "
                    "(shared/peer-warcs) to run these tests")
    files = sorted(path for path in Path(value).iterdir() if path.is_file() and path.name != "README.md")
    if not files:
        pytest.fail(f"{PEER_ENV}={value} holds no files")
    return files


def warcio_html_200(path: Path) -> list[tuple[int, str, str]]:
    """(offset, record id, URL) of each HTTP 200 HTML response warcio reads in a file, up to where it gives up."""
    found = []
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle)
        try:
            for record in iterator:
                headers = record.http_headers
                if (record.rec_type == "response" and headers is not None and headers.get_statuscode() == "200"
                        and media_type(headers.get_header("Content-Type", "") or "") in HTML_TYPES):
                    # An ARC record has no record id; its URL is its `uri`.
                    url = record.rec_headers.get_header("uri" if record.format == "arc" else "WARC-Target-URI", "")
                    found.append((iterator.get_record_offset(), record.rec_headers.get_header("WARC-Record-ID", ""),
                                  url))
        except Exception:  # noqa: BLE001 - warcio gives up on some of these files: what it read so far counts
            pass
    return found


def accounted_for(response: tuple[int, str, str], outcomes: list) -> bool:
    offset, record_id, url = response
    for outcome in outcomes:
        # (A record without an id, as ARC's, is its offset: ReadWarc's URL has spaces escaped, warcio's raw `uri` not.)
        if (isinstance(outcome, Document) and outcome.capture.warc_record_id == record_id
                and (outcome.capture.url == url if record_id else outcome.capture.source_offset == offset)):
            return True
        if isinstance(outcome, DeadLetter):
            if (outcome.warc_record_id or outcome.source_offset == offset) and (
                    outcome.warc_record_id, outcome.url) == (record_id, url):
                return True
            # A dead letter of a stretch of the file: the skipped bytes, or all the rest.
            stretch_end = (float("inf") if "to the end of the file" in outcome.reason or "truncated" in outcome.reason
                           else outcome.source_offset + outcome.skipped_bytes)
            if not outcome.warc_record_id and outcome.source_offset <= offset < stretch_end:
                return True
    return False


def test_every_html_response_warcio_reads_is_a_document_or_a_dead_letter(peer_files):
    lost = {}
    for path in peer_files:
        outcomes = list(read_warc(lambda path=path: open_uncompressed(str(path)), str(path), on_note=lambda note: None))
        assert all(isinstance(outcome, (Document, Skip, DeadLetter)) for outcome in outcomes)
        assert outcomes, f"{path.name}: no outcome at all"
        missing = [response for response in warcio_html_200(path) if not accounted_for(response, outcomes)]
        if missing:
            lost[path.name] = missing
    assert lost == {}


@pytest.mark.slow
def test_a_build_over_every_peer_file_balances(peer_files, tmp_path):
    directory = peer_files[0].parent
    # Two patterns that match every file; `*.gz` and `*.warc.gz` alone would overlap.
    code, _, err = run_main(["--input", str(directory / "jwat__*"), "--input", str(directory / "warcio__*"),
                             "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0, err
    assert err == ""
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["records"]["balanced"]
    assert sorted(report["files"]) == [str(path) for path in peer_files]
    for path in peer_files:
        counts = report["files"][str(path)]
        assert counts["read"] > 0 and counts["read"] == sum(
            counts[name] for name in ("kept", "duplicates", "skipped", "dead_letter")), path.name


def test_a_lone_peer_file_that_is_not_a_warc_is_exit_2(peer_files, tmp_path):
    not_warc = [path for path in peer_files if not starts_like_archive(lambda path=path: open(path, "rb"))]
    assert not_warc
    for path in not_warc:
        code, _, err = run_main(["--input", str(path), "--output", str(tmp_path / path.name), "--quiet"])
        assert code == 2 and "is not a WARC file" in err, path.name


@pytest.mark.slow
def test_a_lone_peer_arc_file_that_warcio_reads_builds(peer_files, tmp_path):
    arc_files = [path for path in peer_files if ".arc" in path.name and warcio_html_200(path)]
    assert len(arc_files) >= 5
    for path in arc_files:
        output = tmp_path / path.name
        code, _, err = run_main(["--input", str(path), "--output", str(output), "--quiet"])
        assert code == 0, (path.name, err)
        counts = json.loads((output / "report.json").read_text())["files"][str(path)]
        # (Which record each page of warcio's became: the test above.)
        assert counts["read"] == sum(counts[name] for name in ("kept", "duplicates", "skipped", "dead_letter"))
        assert counts["kept"] + counts["duplicates"] + counts["dead_letter"] > 0, path.name
