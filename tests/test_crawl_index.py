"""Selecting captures through a capture index (`--index`, `--crawl` with `--index-*`), offline, as a user runs it.

A server on 127.0.0.1 (`tests.test_crawl.CrawlServer`, which logs every request and its Range) serves generated
WARC files and an index in Common Crawl's schema (`tests.index_crawl`); the tests count what it served.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import build_inputs, index_select
from pipeline.index_select import (IndexChoice, check_pattern, count_selection, parse_codes, plan_selection,
                                   record_digest, record_runs, window_unit)
from tests.helpers import corpus_records
from tests.index_crawl import make_crawl
from tests.test_crawl import CrawlServer, RangeHandler
from tests.test_cli import run_main
from tests.test_resume import PIPELINE, REPO, killed_after, records_in
from transforms.filesystems import http_session
from transforms.report.report import records_digest

CRAWL = "CC-TEST-2026-10"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    return make_crawl(tmp_path_factory.mktemp("indexed"), CRAWL)


@pytest.fixture()
def server(indexed):
    served = CrawlServer(indexed.root)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


def served_bytes(server: CrawlServer, suffix: str) -> tuple[int, int]:
    """(GET requests, bytes asked for) of the files whose path ends with `suffix`."""
    gets = [wanted for command, path, wanted in server.requests if command == "GET" and path.endswith(suffix)]
    spans = [wanted.removeprefix("bytes=").split("-") for wanted in gets]
    return len(gets), sum(int(last) - int(first) + 1 for first, last in spans)


def same_fields(record: dict) -> dict:
    """A corpus record but where it was read from (a URL here, a path there; a run's shard, a file's)."""
    kept = {name: value for name, value in record.items() if name not in ("source_file", "source_range",
                                                                          "record_digest")}
    return dict(kept, source_file=record["source_file"].rsplit("/", 1)[1])


def index_flags(server: CrawlServer, *selection: str) -> list[str]:
    # (No page inspector: report.html's re-reads its sampled pages from their files, past their records.)
    return ["--crawl", CRAWL, "--crawl-base-url", server.base, "--report-sample", "0", *selection]


@pytest.mark.slow
def test_a_build_reads_only_the_matching_records_and_keeps_the_full_builds_documents_of_them(indexed, server,
                                                                                             tmp_path):
    code, out, err = run_main([*index_flags(server, "--index-languages", "rus"), "--output", str(tmp_path / "index"),
                               "--quiet"])
    assert code == 0, err
    rows = [row for row in indexed.rows if row[1] == "rus"]
    # Each matching record's bytes, once, one request a record at most; nothing else of the WARC files.
    requests, read = served_bytes(server, ".warc.gz")
    assert read == sum(row[4] for row in rows)
    assert requests <= len(rows)
    assert all(wanted is not None for command, path, wanted in server.requests
               if command == "GET" and path.endswith(".parquet"))
    selected = {record["url"]: record for record in corpus_records(tmp_path / "index")}
    assert set(selected) == indexed.urls("rus")
    code, _, err = run_main(["--input", str(indexed.root / "crawl-data" / CRAWL / "segments" / "*" / "warc" / "*.gz"),
                             "--report-sample", "0", "--output", str(tmp_path / "full"), "--quiet"])
    assert code == 0, err
    full = {record["url"]: record for record in corpus_records(tmp_path / "full") if record["url"] in selected}
    assert {url: same_fields(record) for url, record in selected.items()} == \
           {url: same_fields(record) for url, record in full.items()}
    index = json.loads((tmp_path / "index" / "report.json").read_text())["index"]
    # The records' digest needs no order: the sum of each record's.
    digest = records_digest(sum(record_digest(*row[2:]) for row in rows))
    assert index == {"captures_listed": len(indexed.rows), "captures_matched": len(rows), "matched_bytes": read,
                     "requests": requests, "records_bytes_read": read, "warc_files": 3,
                     "warc_files_bytes": indexed.warc_bytes(), "records_digest": digest,
                     "index_files_bytes": sum(path.stat().st_size for path in indexed.root.glob("cc-index/**/*.parquet"))}
    assert json.loads((tmp_path / "index" / "manifest.json").read_text())["index"] == index
    assert f"bytes of records read{read:>{12 + 36 - len('bytes of records read')},}" in out


@pytest.mark.slow
def test_a_rebuild_reads_the_same_records(indexed, server, tmp_path):
    first = tmp_path / "first"
    assert run_main([*index_flags(server, "--index-tlds", "ru,de", "--index-limit", "5"), "--output", str(first),
                     "--quiet"])[0] == 0
    server.reset()
    code, out, err = run_main(["--rebuild", str(first / "manifest.json"), "--output", str(tmp_path / "again")])
    assert code == 0, err
    assert "byte-identical" in out
    assert served_bytes(server, ".warc.gz")[0] <= 5


def test_dry_run_says_what_it_would_read_and_reads_no_record(indexed, server, tmp_path):
    code, out, err = run_main([*index_flags(server, "--index-languages", "rus"), "--dry-run",
                               "--output", str(tmp_path / "none")])
    assert code == 0, err
    matched = [row for row in indexed.rows if row[1] == "rus"]
    assert f"Matched: {len(matched)} captures in 3 WARC files, {sum(row[4] for row in matched):,} bytes" in out
    assert "Estimate: reading about" in out
    assert served_bytes(server, ".warc.gz") == (0, 0)
    assert not (tmp_path / "none").exists()


class IgnoresRange(RangeHandler):
    def _answer(self, with_body: bool) -> None:
        if self.path.endswith(".parquet") and self.command == "GET":
            data = (self.server.root / self.path.lstrip("/")).read_bytes()
            self._send(200, data, with_body)
            return
        super()._answer(with_body)


def test_an_index_server_that_ignores_range_is_refused_in_one_line(indexed, tmp_path):
    served = CrawlServer(indexed.root)
    served.RequestHandlerClass = IgnoresRange
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        code, _, err = run_main([*index_flags(served, "--index-languages", "rus"), "--output", str(tmp_path)])
    finally:
        served.shutdown()
        served.server_close()
    assert code == 2
    assert err.count("\n") == 1 and "ignores Range requests: an index is read by the column chunks" in err


@pytest.mark.parametrize("flags, said", [
    (["--index-languages", "rus,xqz"], "'xqz' is no ISO 639-3 language code"),
    (["--index-url", "page/(["], "is not a regular expression"),
    (["--index-status", "ok"], "--index-status takes HTTP status codes"),
])
def test_a_bad_selection_is_refused_in_one_line(flags, said, tmp_path):
    code, _, err = run_main(["--crawl", CRAWL, *flags, "--output", str(tmp_path)])
    assert code == 2 and said in err and err.count("\n") == 1


def rewritten_index(indexed, tmp_path: Path, change) -> Path:
    """A copy of the index's first file, its table changed by `change`."""
    path = next(indexed.root.glob("cc-index/**/*.parquet"))
    target = tmp_path / "changed" / "subset=warc" / path.name
    target.parent.mkdir(parents=True)
    pq.write_table(change(pq.read_table(path)), target, row_group_size=4)
    return target.parent.parent


def test_an_index_without_a_needed_column_is_refused(indexed, tmp_path):
    index = rewritten_index(indexed, tmp_path, lambda table: table.drop_columns(["content_languages"]))
    code, _, err = run_main(["--index", str(index), "--index-base", str(indexed.root), "--index-languages", "rus",
                             "--output", str(tmp_path / "out")])
    assert code == 2 and "has no column content_languages, which the selection needs" in err


def test_an_index_naming_a_file_outside_the_crawl_is_refused(indexed, tmp_path):
    def foreign(table):
        names = table["warc_filename"].to_pylist()
        names[0] = "crawl-data/CC-OTHER-2020-01/segments/x/warc/a.warc.gz"
        return table.set_column(table.schema.get_field_index("warc_filename"), "warc_filename", [names])

    index = rewritten_index(indexed, tmp_path, foreign)
    code, _, err = run_main(["--crawl", CRAWL, "--index", str(index), "--index-base", str(indexed.root),
                             "--output", str(tmp_path / "out"), "--quiet"])
    # (Found where the rows are read, in the pipeline: the build fails, and nothing is published.)
    assert code == 1 and "row 0, names crawl-data/CC-OTHER-2020-01/" in err and "not another crawl's" in err
    assert err.count("\n") == 1 and not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.slow
def test_a_row_outside_its_file_or_not_at_a_record_is_a_dead_letter_naming_it(indexed, tmp_path):
    def outside(table):
        offsets = table["warc_record_offset"].to_pylist()
        offsets[1] = 10_000_000
        offsets[2] += 7
        return table.set_column(table.schema.get_field_index("warc_record_offset"), "warc_record_offset",
                                [offsets])

    index = rewritten_index(indexed, tmp_path, outside)
    output = tmp_path / "out"
    code, _, err = run_main(["--index", str(index), "--index-base", str(indexed.root), "--output", str(output),
                             "--quiet"])
    assert code == 0, err
    dead = [json.loads(line) for path in output.glob("dead-letter-*.jsonl") for line in path.read_text().splitlines()]
    table = pq.read_table(next(indexed.root.glob("cc-index/**/*.parquet")))
    shifted = table["warc_record_offset"][2].as_py() + 7
    assert sorted((entry["source_offset"], entry["reason"].split(" of length")[0]) for entry in dead) == sorted([
        (10_000_000, "index row: the record at offset 10000000"), (shifted, f"index row: the record at offset {shifted}")])
    assert "is not there whole: unreadable" in " ".join(entry["reason"] for entry in dead)
    assert len(corpus_records(output)) == len(table) - 2


def test_adjacent_records_are_one_run_and_the_records_of_a_window_one_unit():
    # (The records of one file: a run is (start, end) in it.)
    assert record_runs([(0, 10), (10, 5), (20, 5), (25, -1), (3 << 20, 5)]) == [
        (0, 15), (20, 25), (25, 24), (3 << 20, (3 << 20) + 5)]
    unit = window_unit("http://x/", "a.warc.gz", [(0, 10), (10, 5), (20, 5)])
    assert (unit.path, unit.start, unit.end, unit.runs) == ("http://x/a.warc.gz", 0, 25, ((0, 15), (20, 25)))
    unit = window_unit("http://x/", "b.warc.gz", [(15, 5), (20, -1)])
    assert (unit.start, unit.end, unit.runs) == (15, 20, ((15, 20), (20, 19)))


def test_row_groups_that_cannot_match_are_not_read(indexed, server):
    # (The generated index is sorted by SURT key, as Common Crawl's: a TLD's rows are in a few row groups.)
    choice = IndexChoice(server.base + indexed.listing, server.base, tlds=("com", "de", "ru"))
    count_selection(choice, plan_selection(choice))
    every_group = served_bytes(server, ".parquet")
    server.reset()
    plan = plan_selection(IndexChoice(server.base + indexed.listing, server.base, tlds=("zz",)))
    assert plan.units == () and plan.listed == len(indexed.rows)
    # Each file's footer, and no column chunk.
    assert served_bytes(server, ".parquet")[0] == len(list(indexed.root.glob("cc-index/**/*.parquet"))) < every_group[0]


def test_limit_and_sample_are_deterministic(indexed):
    source = str(indexed.root / indexed.listing)

    def rows(**selection) -> list:
        choice = IndexChoice(source, str(indexed.root) + "/", **selection)
        return [row for unit in plan_selection(choice).units for row in index_select.matching_rows(choice, unit)]

    choice = IndexChoice(source, str(indexed.root) + "/", limit=4)
    assert count_selection(choice, plan_selection(choice)).matched == 4
    sampled = [rows(sample=0.5) for _ in range(2)]
    assert sampled[0] == sampled[1] and 0 < len(sampled[0]) < len(rows())


def test_codes_and_patterns_are_checked():
    assert parse_codes("ukr, rus") == ("rus", "ukr")
    assert check_pattern(r"\.ru/") == r"\.ru/"
    assert index_select.RUN_BYTES_LIMIT >= 1 << 20


@pytest.mark.slow
def test_a_killed_index_build_resumes_reusing_the_units_it_finished(indexed, server, tmp_path):
    output = tmp_path / "out"
    args = [*index_flags(server, "--index-languages", "rus,eng"), "--output", str(output), "--quiet"]
    killed_after(args, output, 1)
    finished = records_in(output)
    server.reset()
    result = subprocess.run([*PIPELINE, *args], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    urls = {record["url"] for record in corpus_records(output)}
    assert urls == indexed.urls("rus") | indexed.urls("eng")
    assert f"{finished} units (byte ranges of the inputs) it finished are reused" in result.stderr
    # A finished unit's runs are not asked for again (its completion record names them, and their bytes' digest):
    # at least one request a finished unit fewer than the runs of the whole selection.
    requests = json.loads((output / "report.json").read_text())["index"]["requests"]
    assert served_bytes(server, ".warc.gz")[0] <= requests - finished


def test_the_launcher_holds_units_of_row_groups_not_the_matching_records(indexed):
    """What the launcher hands the pipeline is the same whatever the rows match: the pipeline's graph does not grow
    with the matches (they are read, matched and grouped into runs in the pipeline: `pipeline.index_read`)."""
    source, base = str(indexed.root / indexed.listing), str(indexed.root) + "/"
    plans = [plan_selection(IndexChoice(source, base, languages=languages)) for languages in (("rus",), ("zho",))]
    assert plans[0] == plans[1] and plans[0].units
    assert {type(unit) for unit in plans[0].units} == {index_select.RowGroups}
    assert sum(len(unit.groups) for unit in plans[0].units) == sum(
        pq.ParquetFile(path).num_row_groups for path in indexed.root.glob("cc-index/**/*.parquet"))


def test_a_unit_reads_many_footers_worth_of_column_chunks_or_is_its_files_last(indexed):
    """Each unit opens its index file again and reads its footer: a unit of small row groups holds enough of them
    that the footer is a small part of what it reads (the tests' index: row groups of 8 rows)."""
    source, base = str(indexed.root / indexed.listing), str(indexed.root) + "/"
    choice = IndexChoice(source, base, languages=("rus",))
    plan = plan_selection(choice)
    for unit in plan.units:
        metadata = pq.ParquetFile(unit.path).metadata
        names = [metadata.schema.column(index).path for index in range(metadata.num_columns)]
        size = sum(metadata.row_group(group).column(names.index(column)).total_compressed_size
                   for group in unit.groups for column in choice.columns())
        last = max(unit.groups) == max(other for each in plan.units if each.path == unit.path for other in each.groups)
        assert len(unit.groups) >= index_select.ROW_GROUPS_PER_UNIT or last, unit
        assert size >= index_select.FOOTERS_PER_UNIT * metadata.serialized_size or last, (unit, size)


def test_the_index_is_read_by_exact_ranges_and_a_read_cut_short_is_asked_for_again(indexed, server, monkeypatch):
    """The index files are read by the https:// file system's stream in exact mode: each read is one Range GET of
    its bytes alone, and a body that breaks off is asked for again from the byte it reached."""
    monkeypatch.setattr(http_session, "BACKOFF", 0.01)
    choice = IndexChoice(server.base + indexed.listing, server.base, languages=("rus",))
    whole = count_selection(choice, plan_selection(choice))
    asked = [wanted for command, path, wanted in server.requests if command == "GET" and path.endswith(".parquet")]
    dropped: set[str] = set()

    def drop_once(fault: str, path: str) -> bool:
        if fault != "drop" or not path.endswith(".parquet") or path in dropped:
            return False
        dropped.add(path)
        return True

    server.reset()
    monkeypatch.setattr(server, "fault_once", drop_once)
    assert count_selection(choice, plan_selection(choice)) == whole
    assert len(server.dropped_at) == 2
    again = [wanted for command, path, wanted in server.requests if command == "GET" and path.endswith(".parquet")]
    # (Each cut read once more, from where it broke off.)
    assert len(again) == len(asked) + 2
    assert all(wanted is not None for wanted in again)


@pytest.mark.slow
def test_an_index_file_changed_since_the_launcher_read_it_fails_the_build_in_one_line(indexed, server, tmp_path,
                                                                                        monkeypatch):
    """A unit of row groups reads its index file as the launcher's plan described it (size and ETag), asking no HEAD:
    a file rewritten in between (here: its ETag, from its modification time) fails the build, nothing published."""
    index_file = next(indexed.root.glob("cc-index/**/*.parquet"))
    before = index_file.stat()

    def planned_then_changed(choice):
        plan = plan_selection(choice)
        os.utime(index_file, ns=(before.st_atime_ns, before.st_mtime_ns + 10 ** 9))
        return plan

    monkeypatch.setattr(build_inputs, "plan_selection", planned_then_changed)
    try:
        code, _, err = run_main([*index_flags(server, "--index-languages", "rus"), "--output", str(tmp_path / "out"),
                                 "--quiet"])
    finally:
        os.utime(index_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert code == 1 and err.count("\n") == 1, err
    assert f"{index_file.name}: the file changed while it was read (ETag" in err
    assert not (tmp_path / "out" / "manifest.json").exists()
    # (The launcher's HEAD of each index file, and none of a unit's.)
    heads = [path for command, path, _ in server.requests if command == "HEAD" and path.endswith(".parquet")]
    assert len(heads) == len(list(indexed.root.glob("cc-index/**/*.parquet")))


def test_a_rebuild_whose_index_now_selects_other_records_is_refused(indexed):
    source, base = str(indexed.root / indexed.listing), str(indexed.root) + "/"
    rows = [row for row in indexed.rows if row[1] == "rus"]
    digest = records_digest(sum(record_digest(*row[2:]) for row in rows))
    index_select.check_recorded(IndexChoice(source, base, recorded_digest=digest), digest)
    with pytest.raises(index_select.IndexRefused, match="selects other records than the build being repeated"):
        index_select.check_recorded(IndexChoice(source, base, recorded_digest=digest),
                                    records_digest(sum(record_digest(*row[2:]) for row in rows[1:])))
