"""Token counts in a selection (`--tokenizer` at annotation): a page whose lines C4 removes is counted again with
the source's tokenizer, so a selected corpus's `token_count` and its report's tokens per outcome are the filtering
build's; the tokenizer gone or changed is refused in one line. And `python -m pipeline --rebuild` of a build with `--tokenizer` repeats it."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from pipeline.sample import warc_bytes
from pipeline.select_documents import Selection, select_document
from tests.helpers import corpus_records
from tests.test_cli import run_main
from tests.test_quality_filters import GOOD_VARIANT, PARAGRAPHS, THIN
from tests.test_select import REMINIMIZE, minimized, refused, run_select
from tests.test_select_corpus import compared_files
from transforms.stages.filters.signals import measure_rule_sets


def words(text: str) -> int:
    return len(text.split())


def annotated_page(text: str):
    """A page as an annotated build with C4 and a tokenizer keeps it: measured, and 1000 tokens (a count to tell)."""
    doc = minimized(text)
    return doc.replace(signals=measure_rule_sets(doc.clean_text, ("c4",), Selection().thresholds(), "en").signals,
                       token_count=1000)


def test_a_page_whose_lines_c4_removes_is_counted_again_and_no_other():
    selection = Selection(quality=("c4",))
    lines = PARAGRAPHS.split("\n") + ["Turn on JavaScript for the map."]
    edited = annotated_page("\n".join(lines))
    kept, _ = select_document(edited, selection, selection.thresholds(), REMINIMIZE, words)
    assert "JavaScript" not in kept.clean_text and kept.token_count == words(kept.clean_text) < 1000
    unedited = annotated_page(PARAGRAPHS)
    assert select_document(unedited, selection, selection.thresholds(), REMINIMIZE, words)[0].token_count == 1000


@pytest.fixture(scope="module")
def tokenized(tiny_tokenizer, tmp_path_factory) -> dict[str, Path]:
    """A crawl of a page whose JavaScript line C4 removes (and a thin one), annotated and filtered with C4, both
    counting tokens with a tokenizer of their own."""
    directory = tmp_path_factory.mktemp("tokens")
    (directory / "a.warc.gz").write_bytes(warc_bytes([GOOD_VARIANT, THIN], filename="a.warc.gz"))
    tokenizer = Path(shutil.copy(tiny_tokenizer, directory / "tokenizer.json"))
    made = {"tokenizer": tokenizer}
    for name, options in (("annotated", ("--annotate",)), ("built", ())):
        made[name] = directory / name
        code, _, stderr = run_main(["--input", str(directory / "*.warc.gz"), "--output", str(made[name]), "--quiet",
                                    "--quality", "c4", "--tokenizer", str(tokenizer), *options])
        assert code == 0, stderr
    return made


@pytest.mark.slow
def test_a_selections_token_counts_are_the_filtering_builds(tokenized, tmp_path):
    selected = tmp_path / "selected"
    code, _, stderr = run_select([str(tokenized["annotated"]), "--output", str(selected), "--quality", "c4"])
    assert code == 0, stderr
    built = tokenized["built"]
    assert compared_files(selected) == compared_files(built)
    assert [name for name in compared_files(built) if not filecmp.cmp(built / name, selected / name, shallow=False)] \
        == []
    counts = {record["url"]: record["token_count"] for record in corpus_records(selected)}
    annotated = {record["url"]: record["token_count"] for record in corpus_records(tokenized["annotated"])}
    assert 0 < counts[GOOD_VARIANT.url] < annotated[GOOD_VARIANT.url]
    # The tokens of each outcome, as the filtering build's stages count them.
    reports = [json.loads((corpus / "report.json").read_text()) for corpus in (built, selected)]
    assert reports[0]["tokens"] == reports[1]["tokens"] and reports[0]["tokens"]["dropped"]["quality"] > 0


@pytest.mark.slow
def test_a_builds_rebuild_counts_its_tokens_again(tokenized, tmp_path):
    code, stdout, stderr = run_main(["--rebuild", str(tokenized["built"] / "manifest.json"), "--output",
                                     str(tmp_path / "again"), "--quiet"])
    assert code == 0 and "byte-identical" in stdout, stdout + stderr


@pytest.mark.slow
def test_a_source_whose_tokenizer_is_gone_or_changed_is_refused(tokenized, tmp_path):
    tokenizer = tokenized["tokenizer"]
    kept = tokenizer.read_bytes()
    argv = [str(tokenized["annotated"]), "--output", str(tmp_path / "out"), "--quality", "c4"]
    try:
        tokenizer.write_bytes(kept.replace(b'"[UNK]"', b'"[unk]"'))
        assert "changed since (sha256 differs)" in refused(argv, tmp_path / "out")
        tokenizer.unlink()
        assert "--tokenizer" in refused(argv, tmp_path / "out") and "is gone" in refused(argv, tmp_path / "out")
    finally:
        tokenizer.write_bytes(kept)


@pytest.mark.slow
def test_a_token_budget_orders_by_the_selected_pages_signals(tokenized, tmp_path):
    source, budget = str(tokenized["annotated"]), ["--token-budget", "--budget-by", "c4/min_num_sentences"]
    runs = {name: tmp_path / name for name in ("unbounded", "ample", "one")}
    for name, tokens in (("unbounded", None), ("ample", "1000000"), ("one", "1")):
        options = [] if tokens is None else [budget[0], tokens, *budget[1:]]
        code, _, stderr = run_select([source, "--output", str(runs[name]), "--quality", "c4", *options])
        assert code == 0, stderr
    # A budget that every page fits in keeps what the selection keeps without one.
    shards = [path.name for path in runs["unbounded"].iterdir() if path.name.startswith("corpus-")]
    assert shards and all(filecmp.cmp(runs["unbounded"] / name, runs["ample"] / name, shallow=False) for name in shards)
    assert corpus_records(runs["one"]) == []
    details = [json.loads(line)["detail"] for path in runs["one"].glob("skipped-*.jsonl")
               for line in path.read_text().splitlines()]
    assert any(detail.startswith("select: budget/c4/min_num_sentences: ") and "nan" not in detail
               for detail in details)
