"""The run report: every record counted once, and the counts add up."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import applied_transforms
from transforms.document import DeadLetter, Skip
from transforms.report.manifest import digest_file
from transforms.report.report import (OUTCOMES, build_report, format_report, read_report, tally_of, tally_record,
                                      tally_records_read, tally_written, text_copies)
from transforms.report.report_transform import TallyBundle, WriteReport
from transforms.stage import SumCounters
from transforms.vocabulary import Duplicate, RecordsRead


def kept_record(source_file: str, raw: int, cleaned: int, minimized: int, charset: str = "utf-8",
                source: str = "http-header", truncated: str = "") -> dict:
    return {"source_file": source_file, "charset": charset, "charset_source": source, "raw_bytes": raw,
            "cleaned_bytes": cleaned, "minimized_bytes": minimized, "truncated": truncated}


def skip(source_file: str, kind: str) -> Skip:
    return Skip(kind, source_file, 0, "response", "<urn:uuid:s>", "https://example.org/s")


def dead(source_file: str, stage: str) -> DeadLetter:
    return DeadLetter(stage, "ValueError: broken", source_file, 0, "<urn:uuid:d>", "https://example.org/d")


def duplicate(source_file: str) -> Duplicate:
    values = {"url": "https://example.org/dup", "warc_record_id": "<urn:uuid:dup>", "warc_date": "2026-01-16T00:00:00Z",
              "source_file": source_file, "content_hash": "0" * 64, "survivor_url": "https://example.org/0",
              "survivor_record_id": "<urn:uuid:0>"}
    # Fields this test does not care about (offsets, ranges) are zero.
    return Duplicate(**{f.name: values.get(f.name, 0) for f in dataclasses.fields(Duplicate)})


def run_tallies(outcomes: dict[str, list[str]]) -> Counter:
    """Tallies as the pipeline makes them (`tally_of` each outcome), for each file's list of record fates.

    Fates: kept, duplicate, skip:KIND, dead-read (a record ReadWarc could not read), dead:STAGE (a read
    document that a later stage failed on), no-text (a read document without text). The records read are
    counted as ReadWarc counts them, per range: here the first half of a file's records and the rest.
    """
    total = Counter()
    for source_file, fates in outcomes.items():
        half = len(fates) // 2
        for records in (half, len(fates) - half):
            if records:
                total.update(tally_of(RecordsRead(source_file, records)))
        for index, fate in enumerate(fates):
            if fate == "no-text":
                outcome = skip(source_file, "no-text")
            elif fate == "kept":
                outcome = tally_record(kept_record(source_file, 100 + index, 40, 30))
            elif fate == "duplicate":
                outcome = duplicate(source_file)
            elif fate.startswith("skip:"):
                outcome = skip(source_file, fate[5:])
            elif fate == "dead-read":
                outcome = dead(source_file, "read_warc")
            else:
                outcome = dead(source_file, fate[5:])
            total.update(tally_of(outcome))
    return total


EXAMPLE = {
    "/in/a.warc.gz": ["kept", "kept", "duplicate", "skip:non-response", "skip:redirect", "dead-read"],
    "/in/b.warc.gz": ["kept", "dead:clean_html", "skip:non-response"],
}


def test_build_report_counts_every_record_once():
    report = build_report(run_tallies(EXAMPLE), {"codec": "deflate"})
    assert report["records"] == {"read": 9, "kept": 3, "duplicates": 1, "skipped": 3, "dead_letter": 2,
                                 "balanced": True}
    assert report["skipped"] == {"non-response": 2, "redirect": 1}
    assert report["dead_letter"] == {"read_warc": 1, "clean_html": 1}
    assert report["charsets"] == {"utf-8 (http-header)": 3}
    assert {name: {key: counts[key] for key in ("read",) + OUTCOMES} for name, counts in report["files"].items()} == {
        "/in/a.warc.gz": {"read": 6, "kept": 2, "duplicates": 1, "skipped": 2, "dead_letter": 1},
        "/in/b.warc.gz": {"read": 3, "kept": 1, "duplicates": 0, "skipped": 1, "dead_letter": 1},
    }
    assert report["bytes"]["raw_html"] == 100 + 101 + 100 and report["bytes"]["cleaned"] == 120
    assert report["bytes"]["minimized"] == 90 and report["bytes"]["written"] == 0
    assert report["ratios"]["raw_html/cleaned"] == round(301 / 120, 2)
    assert report["ratios"]["minimized/written"] is None
    assert report["options"] == {"codec": "deflate"}
    json.dumps(report)  # it is written as JSON


FATES = st.one_of(st.sampled_from(["kept", "duplicate", "no-text", "dead-read", "dead:charset", "dead:clean_html"]),
                  st.sampled_from(["non-response", "redirect", "non-html", "empty"]).map(lambda k: f"skip:{k}"))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["/a.warc.gz", "/b.warc.gz", "gs://x/c.warc.gz"]),
                       st.lists(FATES, max_size=15), max_size=3))
def test_counts_add_up_in_total_and_per_file(outcomes):
    report = build_report(run_tallies(outcomes), {})
    records = report["records"]
    fates = [fate for file_fates in outcomes.values() for fate in file_fates]
    assert records["read"] == len(fates)
    assert records["read"] == sum(records[name] for name in OUTCOMES)
    assert records["balanced"] is True
    assert sum(report["skipped"].values()) == records["skipped"]
    assert sum(report["dead_letter"].values()) == records["dead_letter"]
    for source_file, counts in report["files"].items():
        assert counts["read"] == len(outcomes[source_file])
        assert counts["read"] == sum(counts[name] for name in OUTCOMES)
    assert set(report["files"]) == {name for name, fates in outcomes.items() if fates}
    assert sum(counts["read"] for counts in report["files"].values()) == records["read"]
    text = format_report(report)
    assert any(line.split() == ["read", f"{records['read']:,}"] for line in text.splitlines())
    balance = next(line for line in text.splitlines() if "read = kept" in line)
    assert balance.split()[-1] == "yes"


def test_a_record_that_went_nowhere_unbalances_the_report():
    tally = run_tallies(EXAMPLE)
    tally.update(tally_records_read(RecordsRead("/in/a.warc.gz", 1)))  # read, then lost
    report = build_report(tally, {})
    assert report["records"]["read"] == 10 and report["records"]["balanced"] is False
    balance = next(line for line in format_report(report).splitlines() if "read = kept" in line)
    assert balance.split()[-1] == "NO"


@pytest.mark.parametrize("options, line", [
    ({}, "  the text is in 2 fields (html, text); --fields url,title,clean_text: in 1"),
    ({"format": "parquet", "clean_text": True},
     "  the text is in 3 fields (html, text, clean_text), in columns compressed apart; --fields url,title,clean_text: in 1"),
    ({"format": "parquet", "fields": ["url", "title", "clean_text"]}, None),
])
def test_the_report_says_how_many_times_the_files_hold_the_text(options, line):
    # "minimized" counts html alone: a Parquet build's files of html and text, compressed column by column, come out
    # larger than it ("0.81x" on the sample).
    assert text_copies(options) == line
    report = build_report(run_tallies(EXAMPLE), options)
    assert (line in format_report(report).splitlines()) if line else "the text is in" not in format_report(report)


def test_a_document_without_text_is_read_once_and_skipped():
    tally = run_tallies({"/in/a.warc.gz": ["kept", "no-text", "no-text"]})
    report = build_report(tally, {})
    assert report["records"] == {"read": 3, "kept": 1, "duplicates": 0, "skipped": 2, "dead_letter": 0,
                                 "balanced": True}
    assert report["skipped"] == {"no-text": 2}
    assert report["files"]["/in/a.warc.gz"]["skipped"] == 2


def test_read_errors_are_listed_with_their_file():
    tally = run_tallies(EXAMPLE)
    report = build_report(tally, {})
    errors = {name: counts.get("errors", []) for name, counts in report["files"].items()}
    # Only what went wrong reading a file is listed with it, at its offset.
    assert errors == {"/in/a.warc.gz": ["offset 0: ValueError: broken"], "/in/b.warc.gz": []}


def test_format_report_renders_counts_bytes_and_files():
    tally = run_tallies(EXAMPLE)
    tally.update({("bytes", "written"): 45, ("total", "output_files"): 1})
    text = format_report(build_report(tally, {}))
    lines = text.splitlines()
    assert lines[0] == "Records"
    assert any(line.split() == ["read", "9"] for line in lines)
    assert any(line.split() == ["kept", "3"] for line in lines)
    assert any(line.split() == ["duplicates", "1"] for line in lines)
    assert any(line.split() == ["dead", "letter", "2"] for line in lines)
    assert any(line.split() == ["redirect", "1"] for line in lines)
    assert any(line.split() == ["read_warc", "1"] for line in lines)
    assert any(line.strip().startswith("read = kept + duplicates + skipped + dead letter") and
               line.split()[-1] == "yes" for line in lines)
    assert any(line.split()[:3] == ["raw", "HTML", "301"] for line in lines)
    written = next(line for line in lines if line.strip().startswith("written (Avro files)"))
    assert written.split()[-2:] == ["2.00x", f"{301 / 45:.2f}x"]
    assert any(line.split() == ["a.warc.gz", "6", "2", "1", "2", "1"] for line in lines)
    assert any(line.split() == ["b.warc.gz", "3", "1", "0", "1", "1"] for line in lines)


def test_large_counts_use_thousands_separators():
    tally = Counter({("total", "read"): 1234567, ("total", "kept"): 1234567})
    text = format_report(build_report(tally, {}))
    assert any(line.split() == ["read", "1,234,567"] for line in text.splitlines())


def test_tally_written_counts_the_file_size(tmp_path):
    path = tmp_path / "corpus-00000-of-00001.avro"
    path.write_bytes(b"x" * 1234)
    assert tally_written(digest_file(str(path), 3)) == Counter({("bytes", "written"): 1234,
                                                              ("total", "output_files"): 1})


def test_sum_tallies_and_write_report(tmp_path):
    outcomes = [RecordsRead("/a.warc.gz", 2), RecordsRead("/b.warc.gz", 1),
                tally_record(kept_record("/a.warc.gz", 10, 5, 4)),
                skip("/a.warc.gz", "redirect"), dead("/b.warc.gz", "read_warc")]
    tallies = [tally_of(outcome) for outcome in outcomes]
    fn = SumCounters()
    merged = fn.merge_accumulators([fn.add_input(fn.create_accumulator(), tallies[0]),
                                    fn.add_input(fn.add_input(fn.create_accumulator(), tallies[1]), tallies[2]),
                                    fn.add_input(fn.add_input(fn.create_accumulator(), tallies[3]), tallies[4])])
    assert fn.extract_output(merged) == sum(tallies, Counter())
    with TestPipeline() as pipeline:
        _ = pipeline | beam.Create(outcomes) | WriteReport(str(tmp_path), {"codec": "xz", "level": 6})
    report = read_report(str(tmp_path))
    assert report["records"] == {"read": 3, "kept": 1, "duplicates": 0, "skipped": 1, "dead_letter": 1,
                                 "balanced": True}
    assert report["options"] == {"codec": "xz", "level": 6}


@pytest.mark.slow
def test_the_reports_sum_gets_a_tally_per_bundle_of_each_kind_not_one_per_record(tmp_path):
    # Beam's local runner does not fuse a Flatten into the stages before it: with a tally per record, every
    # record's crossed it (at 1,000,000 captures, 860 MB through the runner).
    skips = [skip("/a.warc.gz", "redirect")] * 1000 + [RecordsRead("/a.warc.gz", 1000)]
    expected = sum((tally_of(outcome) for outcome in skips), Counter())

    def one_tally_per_bundle(tallies):
        assert len(tallies) < len(skips) / 100 and sum(tallies, Counter()) == expected

    with TestPipeline() as pipeline:
        tallies = pipeline | beam.Create(skips) | beam.ParDo(TallyBundle())
        assert_that(tallies, one_tally_per_bundle)

    pipeline = beam.Pipeline()
    kinds = (pipeline | "Skips" >> beam.Create(skips[:1]), pipeline | "Reads" >> beam.Create(skips[-1:]))
    _ = kinds | "Report" >> WriteReport(str(tmp_path), {})
    _, leaves = applied_transforms(pipeline)
    producers = {output: node for node in leaves for output in node.outputs.values()}
    summed = next(node for node in leaves if node.full_label == "Report/AllTallies")
    assert [type(producers[pcoll].transform.fn).__name__ for pcoll in summed.inputs] == ["TallyBundle"] * 2


def test_the_report_counts_the_truncated_pages_it_kept():
    tally = tally_record(kept_record("/a.warc.gz", 10, 5, 4, truncated="length: 10 bytes received"))
    tally.update(tally_record(kept_record("/a.warc.gz", 10, 5, 4)))
    report = build_report(tally, {})
    assert report["truncated_kept"] == 1 and report["records"]["kept"] == 2
    assert "kept though cut short (truncated)" in format_report(report)


def test_the_input_files_table_keeps_a_space_between_its_columns_with_near_duplicates():
    report = build_report(run_tallies(EXAMPLE), {"near_dedup": {}})
    lines = format_report(report).splitlines()
    header = lines[lines.index("Input files") + 1]
    assert header.split() == ["file", "read", "kept", "duplicates", "skipped", "dead_letter", "near_duplicates"]
    row = lines[lines.index("Input files") + 2]
    assert len(row) == len(header) and row.split()[0] == "a.warc.gz"


@pytest.mark.parametrize("options, written", [({}, "written (Avro files)"), ({"format": "parquet"}, "written (Parquet files)"),
                                              ({"format": "jsonl"}, "written (JSON Lines files)")])
def test_the_report_names_the_files_written_as_the_builds_format(options, written):
    text = format_report(build_report(run_tallies(EXAMPLE), options))
    assert [line.split("  ")[1].strip() for line in text.splitlines() if line.startswith("  written")] == [written]
