"""The pipeline on the dev corpus (real WARC files): every manifest row is handled as it expects.

Skipped unless WEBCORPUS_CORPUS points at the corpus directory (manifest.jsonl, warc/*.warc.gz).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import fastavro
import pytest
from warcio.archiveiterator import ArchiveIterator

from transforms.stages.charset import decode_document
from transforms.stages.hash_dedup import hash_document
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import minimize_document
from tests.helpers import document

MAX_EXTRA_MERGES = 25
CYRILLIC_WORD = re.compile(r"[а-яё]{4,}")


def name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def json_lines(output: Path, prefix: str) -> list[dict]:
    return [json.loads(line) for path in sorted(output.glob(f"{prefix}-*.jsonl"))
            for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def build(dev_corpus_build) -> dict:
    """One run of the CLI over every WARC file of the corpus, and what it wrote."""
    output, terminal = dev_corpus_build
    records = []
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            records.extend(fastavro.reader(handle))
    written = {(name(r["source_file"]), r["warc_record_id"]): r for r in records}
    assert len(written) == len(records), "a record is written twice"
    return {
        "output": output,
        "written": written,
        "duplicates": {(name(d["source_file"]), d["warc_record_id"]): d for d in json_lines(output, "duplicates")},
        "skipped": {(name(s["source_file"]), s["warc_record_id"]): s for s in json_lines(output, "skipped")
                    if s["kind"] != "non-response"},
        "dead": json_lines(output, "dead-letter"),
        "report": json.loads((output / "report.json").read_text()),
        "terminal": terminal,
    }


@pytest.fixture(scope="module")
def manifest(corpus_dir) -> list[dict]:
    return [json.loads(line) for line in (corpus_dir / "manifest.jsonl").read_text("utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def not_visible(corpus_dir) -> set[tuple[str, str]]:
    """(file, record id) of the pages whose text the corpus's troubles say a reader does not see."""
    troubles = [json.loads(line) for line in (corpus_dir / "troubles.jsonl").read_text("utf-8").splitlines() if line]
    return {(row["warc_file"], row["record_id"]) for row in troubles if row["trouble"] == "gold-not-visible"}


def dead_letter_for(build: dict, row: dict) -> dict | None:
    for letter in build["dead"]:
        if name(letter["source_file"]) == row["warc_file"] and (
                letter["warc_record_id"] == row["record_id"] or
                (not letter["warc_record_id"] and letter["source_offset"] == row.get("offset"))):
            return letter
    return None


def fate(build: dict, row: dict) -> str:
    key = (row["warc_file"], row["record_id"])
    fates = []
    if key in build["written"]:
        fates.append("written")
    if key in build["duplicates"]:
        fates.append("duplicate")
    if key in build["skipped"]:
        fates.append(f"skip-{build['skipped'][key]['kind']}")
    if dead_letter_for(build, row) is not None:
        fates.append("dead")
    assert len(fates) == 1, (row, fates)
    return fates[0]


@pytest.mark.slow
def test_every_manifest_row_is_handled_as_expected(build, manifest, not_visible):
    wrong = []
    for row in manifest:
        expected, got = row["expected"], fate(build, row)
        key = (row["warc_file"], row["record_id"])
        if expected.startswith("keep (empty document) or skip-empty"):
            ok = got in ("written", "duplicate", "skip-empty")
        elif expected.startswith("keep") and (row["warc_file"], row["record_id"]) in not_visible:
            # No text a reader sees (an unclosed <title> swallows the page, ...): kept if any text is left.
            ok = got in ("written", "duplicate", "skip-no-text")
        elif expected.startswith("keep"):
            ok = got in ("written", "duplicate")
        elif expected.startswith("skip-truncated"):
            # (The corpus lists what --skip-truncated does: by default a page cut short is kept, and says so; one
            # whose text was all after the cut has none.)
            ok = got in ("duplicate", "skip-no-text") or got == "written" and re.fullmatch(
                r"(length|time|disconnect|unspecified): \d+ bytes received", build["written"][key]["truncated"])
        elif expected.startswith("skip-"):
            ok = got == expected.split()[0]
        elif expected.startswith("error"):
            # A record the end of the file cuts: kept with what was received when that is part of a page's body.
            ok = (got == "dead" and "truncated" in dead_letter_for(build, row)["reason"]
                  or got == "written" and build["written"][key]["truncated"].startswith("end-of-file: "))
        else:
            pytest.fail(f"unknown expected handling {expected!r}")
        if not ok:
            wrong.append((row["warc_file"], row["record_id"], row["url"], expected, got))
    assert wrong == [], "\n".join(map(str, wrong))


def test_exact_duplicates_are_dropped_for_their_original(build, manifest):
    groups = [row for row in manifest if row.get("dup_group")]
    assert groups, "the manifest lists no exact duplicates"
    for row in groups:
        key = (row["warc_file"], row["record_id"])
        if row["record_id"] == row["dup_group"]:
            assert key in build["written"], row["url"]
        else:
            assert build["duplicates"][key]["survivor_record_id"] == row["dup_group"], row["url"]


def _pure_content_hash(corpus_dir: Path, warc_file: str, offset: int) -> str:
    """The content hash of the record at `offset`, computed with the pure stage functions."""
    with (corpus_dir / "warc" / warc_file).open("rb") as handle:
        handle.seek(offset)
        record = next(iter(ArchiveIterator(handle)))
        doc = document(url=record.rec_headers.get_header("WARC-Target-URI"), warc_record_id="", warc_date="",
                       source_file=warc_file, source_offset=offset, http_status=200,
                       content_type=record.http_headers.get_header("Content-Type", "") or "",
                       payload=record.content_stream().read())
    return hash_document(minimize_document(HtmlCleaner()(decode_document(doc)))).content_hash


def test_written_is_expected_keeps_less_duplicates_and_a_few_content_merges(build, manifest, corpus_dir):
    # (Pages cut short, by the crawler or by the end of their file, are kept too: the manifest lists them as
    # --skip-truncated handles them.)
    keeps = [row for row in manifest if row["expected"].startswith(("keep", "skip-truncated", "error"))
             and fate(build, row) not in ("skip-empty", "skip-no-text", "dead")]
    exact = {(row["warc_file"], row["record_id"]) for row in manifest
             if row.get("dup_group") and row["record_id"] != row["dup_group"]}
    extra = {key: dup for key, dup in build["duplicates"].items() if key not in exact}
    assert len(build["written"]) == len(keeps) - len(exact) - len(extra)
    assert len(extra) < MAX_EXTRA_MERGES, sorted(dup["url"] for dup in extra.values())
    survivors = {r["warc_record_id"]: r for r in build["written"].values()}
    for (warc_file, _), dup in extra.items():
        survivor = survivors[dup["survivor_record_id"]]
        # Pages that differ as HTML but are equal after cleaning: checked with the pure functions.
        assert _pure_content_hash(corpus_dir, warc_file, dup["source_offset"]) == survivor["content_hash"], dup["url"]
        assert dup["warc_record_id"] in survivor["duplicate_record_ids"]


def _count_records(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        try:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    record.content_stream().read()
                count += 1
        except Exception:  # noqa: BLE001 - a broken tail ends the count
            pass
    return count


def test_report_counts_add_up_to_the_records_in_the_files(build, corpus_dir):
    report = build["report"]
    records = report["records"]
    assert records["read"] == records["kept"] + records["duplicates"] + records["skipped"] + records["dead_letter"]
    assert records["balanced"] is True
    per_file = {path.name: _count_records(path) for path in sorted((corpus_dir / "warc").glob("*.warc.gz"))}
    assert records["read"] == sum(per_file.values())
    assert {name(path): counts["read"] for path, counts in report["files"].items()} == per_file
    assert records["kept"] == len(build["written"])
    assert records["duplicates"] == len(build["duplicates"])
    assert records["dead_letter"] == len(build["dead"])
    assert sum(report["skipped"].values()) == records["skipped"]
    assert records["skipped"] - report["skipped"].get("non-response", 0) == len(build["skipped"])


def test_genuine_cc_windows_1251_page_decodes_to_cyrillic(build):
    [page] = [r for r in build["written"].values()
              if r["source_file"].endswith("genuine-CC-MAIN-2020-34-sample.warc.gz") and "01spb.ru" in r["url"]]
    assert page["charset"] == "windows-1251"
    words = page["text"].split()
    cyrillic = [word for word in words if CYRILLIC_WORD.search(word)]
    assert len(cyrillic) >= 20 and len(cyrillic) > len(words) / 3, page["text"][:500]
    assert "\ufffd" not in page["text"]


def test_charsets_of_the_corpus_are_reported(build):
    charsets = build["report"]["charsets"]
    assert sum(charsets.values()) == len(build["written"])
    assert Counter(f"{r['charset']} ({r['charset_source']})" for r in build["written"].values()) == Counter(charsets)


@pytest.mark.slow
def test_the_figures_the_docs_quote_are_those_of_a_build_today(build, corpus_dir, tmp_path):
    """The docs' figures of the developer corpus, within the tolerances that benchmarks/dev_corpus_figures.py
    states; `python -m benchmarks.dev_corpus_figures --write` refreshes them."""
    from benchmarks import dev_corpus_figures as figures

    docs = figures.quoting_text()
    builds = {(): figures.Build(build["output"], build["terminal"])}
    for index, options in enumerate(figures.needed_builds(docs)[1:]):
        builds[options] = figures.run_build(corpus_dir, tmp_path / f"build-{index}", options)
    assert figures.differences(docs, figures.figures_of(docs, builds, corpus_dir, tmp_path)) == []

