"""`python -m pipeline.select` on annotated builds (`--annotate`): the corpus a filtering build with the same options
writes, byte for byte (shards, side files, index), for each rule set, with and without `--near-dedup`; verified,
repeated by `--rebuild`, the same after an interrupted run, and the refusals that need an annotated source."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import shutil
from pathlib import Path

import pytest

import pipeline.cli
from pipeline.sample import warc_bytes
from pipeline.verify import verify
from tests.helpers import corpus_records
from tests.test_cli import json_lines, run_main
from tests.test_publish import snapshot
from tests.test_quality_filters import GOOD, GOOD_VARIANT, THIN
from tests.test_select import refused, run_select
from pipeline.select import unmeasured_step
from transforms.stages.filters.rule_sets import steps_of

# GOOD and THIN captured twice, GOOD once more in a file of its own (exact duplicates in the annotated build: a
# copy's fate is its survivor's);
# GOOD_VARIANT is GOOD once C4 removed its JavaScript line (one content in a build filtering with C4), and near it.
CAPTURES = [GOOD, GOOD_VARIANT, THIN, dataclasses.replace(GOOD, url="https://en.example.org/cranes-copy"),
            dataclasses.replace(THIN, url="https://en.example.org/a-thin-copy", date="2026-01-14T10:00:00Z")]
LATE_COPY = dataclasses.replace(GOOD, url="https://en.example.org/cranes-late-copy", date="2026-01-20T10:00:00Z")
# Each rule set, selected from the annotation that measures it as a build filtering with it alone would; with and
# without --near-dedup.
CASES = [("gopher", "gopher,fineweb,c4", ()), ("c4", "gopher,fineweb,c4", ()),
         ("fineweb", "gopher,fineweb,c4", ("--near-dedup",)), ("fineweb-recipe", "fineweb-recipe", ("--near-dedup",))]
COMPARED = ("corpus-", "skipped-", "duplicates-", "near-duplicates-", "dead-letter-", "index-")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("crawl")
    (directory / "a.warc.gz").write_bytes(warc_bytes(CAPTURES, filename="a.warc.gz"))
    # A file of copies only: a filtering build gives it an empty shard; a selection stages none of its captures.
    (directory / "b.warc.gz").write_bytes(warc_bytes([LATE_COPY], filename="b.warc.gz"))
    return directory


@pytest.fixture(scope="module")
def annotated(crawl, tmp_path_factory) -> dict[str, Path]:
    """The annotated builds of the crawl, by the rule sets they measure."""
    builds = {}
    for rule_sets in sorted({annotation for _, annotation, _ in CASES}):
        output = tmp_path_factory.mktemp("annotated") / "corpus"
        code, _, stderr = run_main(["--input", str(crawl / "*.warc.gz"), "--output", str(output), "--quiet",
                                    "--annotate", "--quality", rule_sets])
        assert code == 0, stderr
        builds[rule_sets] = output
    return builds


def compared_files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.startswith(COMPARED))


@pytest.mark.slow
@pytest.mark.parametrize("rule_set, annotation, near", CASES)
def test_a_selection_is_the_filtering_build_byte_for_byte(crawl, annotated, tmp_path, rule_set, annotation, near):
    built, selected = tmp_path / "built", tmp_path / "selected"
    code, _, stderr = run_main(["--input", str(crawl / "*.warc.gz"), "--output", str(built), "--quiet",
                                "--quality", rule_set, *near])
    assert code == 0, stderr
    code, stdout, stderr = run_select([str(annotated[annotation]), "--output", str(selected), "--quality", rule_set,
                                       *near])
    assert code == 0, stderr
    assert compared_files(selected) == compared_files(built)
    assert [name for name in compared_files(built) if not filecmp.cmp(built / name, selected / name, shallow=False)] \
        == []
    assert verify(str(selected))[2] == []
    records = {record["url"]: record for record in corpus_records(selected)}
    if rule_set in ("c4", "fineweb-recipe"):
        # One content once C4 removed the JavaScript lines: GOOD stands for its copy and GOOD_VARIANT.
        assert records[GOOD.url]["duplicate_count"] == 3 and "javascript" not in records[GOOD.url]["text"]
    assert len([name for name in compared_files(selected) if name.startswith("corpus-")]) == 2
    filtered = [line for line in json_lines(selected, "skipped") if line["kind"] == "filtered"]
    # THIN and its copy, each dropped with its rule, value and threshold.
    assert sorted(line["url"] for line in filtered if "thin" in line["url"]) == [
        "https://en.example.org/a-thin-copy", THIN.url] or rule_set in ("gopher", "fineweb")


@pytest.fixture(scope="module")
def selected(annotated, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("selected") / "corpus"
    code, _, stderr = run_select([str(annotated["fineweb-recipe"]), "--output", str(output), "--quality",
                                  "fineweb-recipe", "--min-signal", "gopher_quality/min_doc_words=10"])
    assert code == 0, stderr
    return output


@pytest.mark.slow
def test_a_selection_records_its_source_and_rebuilds_byte_for_byte(annotated, selected, tmp_path, monkeypatch):
    manifest = json.loads((selected / "manifest.json").read_text())
    source = json.loads((annotated["fineweb-recipe"] / "manifest.json").read_text())
    assert manifest["options"]["select"] == {
        "source": {"corpus": str(annotated["fineweb-recipe"]), "manifest_sha256": source["manifest_sha256"]},
        "min_signals": {"gopher_quality/min_doc_words": 10.0}}
    assert [entry["path"] for entry in manifest["inputs"]] == [str(annotated["fineweb-recipe"] / "manifest.json")]
    again = tmp_path / "again"
    code, stdout, stderr = run_select(["--rebuild", str(selected / "manifest.json"), "--output", str(again)])
    assert code == 0 and "byte-identical" in stdout, stdout + stderr
    # SOURCE named relative to the current directory: the same selection.
    monkeypatch.chdir(annotated["fineweb-recipe"].parent)
    relative = tmp_path / "relative"
    assert run_select(["corpus", "--output", str(relative), "--quality", "fineweb-recipe", "--min-signal",
                       "gopher_quality/min_doc_words=10"])[0] == 0
    assert snapshot(relative) == snapshot(selected)


@pytest.mark.slow
def test_an_interrupted_selection_leaves_dest_as_it_was_and_a_rerun_gives_the_same_bytes(annotated, selected,
                                                                                        tmp_path, monkeypatch):
    output = Path(shutil.copytree(selected, tmp_path / "out"))
    before = snapshot(output)
    argv = [str(annotated["fineweb-recipe"]), "--output", str(output), "--quality", "fineweb-recipe", "--min-signal",
            "gopher_quality/min_doc_words=10", "--sample", "0.5"]
    publish = pipeline.cli.publish

    def interrupted(staging, target):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.cli, "publish", interrupted)
    code, _, stderr = run_select(argv)
    assert code == 130 and "interrupted by SIGINT" in stderr
    assert snapshot(output) == before
    monkeypatch.setattr(pipeline.cli, "publish", publish)
    code, _, stderr = run_select(argv)
    assert code == 0, stderr
    rerun = snapshot(output)
    fresh = tmp_path / "fresh"
    assert run_select([*argv[:2], str(fresh), *argv[3:]])[0] == 0
    assert snapshot(fresh) == rerun != before


@pytest.mark.slow
def test_what_an_annotated_source_cannot_decide_is_refused(annotated, tmp_path):
    source, output = str(annotated["fineweb-recipe"]), tmp_path / "out"
    assert "changes what SOURCE" in refused([source, "--output", str(output), "--quality", "c4",
                                             "--quality-threshold", "c4.min_words_per_line=5"], output)
    assert "does not measure the step c4 on the text" in refused(
        [source, "--output", str(output), "--quality", "c4"], output)
    assert "does not measure the step fineweb on the text" in refused(
        [source, "--output", str(output), "--quality", "fineweb"], output)
    assert "have no signal 'gopher_quality/min_doc_word'; did you mean gopher_quality/min_doc_words?" in refused(
        [source, "--output", str(output), "--min-signal", "gopher_quality/min_doc_word=3"], output)
    assert "no token_count" in refused([source, "--output", str(output), "--token-budget", "100", "--budget-by",
                                        "fineweb/line_punct_ratio"], output)


@pytest.mark.parametrize("selected, annotated, unmeasured", [
    ("gopher", "gopher,fineweb,c4", None), ("fineweb", "gopher,fineweb,c4", None), ("c4", "gopher,fineweb,c4", None),
    ("fineweb,gopher", "gopher,fineweb,c4", None), ("fineweb-recipe", "fineweb-recipe", None),
    ("gopher", "fineweb-recipe", None),
    # FineWeb measured on what C4 left; C4 without its terminal-punctuation rule is another step.
    ("fineweb", "fineweb-recipe", "fineweb"), ("c4,fineweb", "gopher,fineweb,c4", "fineweb"),
    ("fineweb-recipe", "gopher,fineweb,c4", "c4_without_terminal_punctuation"), ("c4", "gopher", "c4"),
])
def test_a_step_is_selectable_where_it_was_measured_on_the_text_it_sees(selected, annotated, unmeasured):
    assert unmeasured_step(steps_of(tuple(selected.split(","))), steps_of(tuple(annotated.split(",")))) == unmeasured
