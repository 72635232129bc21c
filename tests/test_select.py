"""`python -m pipeline.select`: what a selection keeps of a document, decided from its signals, is what a filtering
build keeps of it (`select_documents`), and the command's refusals (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from pipeline import cli
from pipeline import select as select_command
from pipeline.select_documents import (Selection, document_of, kept_text, out_of_bounds, parse_bounds,
                                       sample_position, select_document)
from pipeline.graph import reminimize_of
from pipeline.settings import CorpusSettings
from tests import helpers
from tests.test_cli import run_main
from tests.test_quality_signals import TEXTS, thresholds, with_measuring
from transforms.corpus.blocks import blocks_to_html
from transforms.document import Document, Skip
from transforms.stages.filters.filters import filter_document
from transforms.stages.filters.rule_sets import RULE_SETS, apply_rule_sets
from transforms.stages.filters.signals import measure_rule_sets
from transforms.stages.minimize_text import minimize_document
from transforms.vocabulary import FILTERED, OTHER_LANGUAGE

REMINIMIZE = reminimize_of(CorpusSettings(inputs=(), output="out"))


def minimized(text: str, language: str = "en") -> Document:
    """A page of `text` as MinimizeText leaves it for the quality filter (with its readable text)."""
    doc = helpers.document("https://example.com/", "<urn:uuid:1>", "2026-01-01T00:00:00Z", "a.warc.gz", 10,
                           raw_bytes=999, language=language)
    return minimize_document(doc.replace(cleaned_html=blocks_to_html(text.split("\n"))), clean_text=True)


def run_select(argv: list[str]) -> tuple[int, str, str]:
    return run_main(argv, select_command.main)


@settings(max_examples=60, deadline=None)
@given(TEXTS, st.sampled_from(sorted(RULE_SETS)), thresholds(), thresholds(), st.sampled_from(["", "en", "ru"]))
def test_a_selection_keeps_what_a_filtering_build_keeps(text, rule_set, measuring, deciding, language):
    doc = minimized(text, language)
    measured = measure_rule_sets(doc.clean_text, (rule_set,), measuring, language)
    chosen = with_measuring(deciding, measuring)
    selection = Selection(quality=(rule_set,), quality_thresholds=tuple(f"{name}={value}"
                                                                       for name, value in chosen.items()))
    selected, counts = select_document(doc.replace(signals=measured.signals), selection, selection.thresholds(),
                                       REMINIMIZE)
    built, built_counts = filter_document(doc, (rule_set,), selection.thresholds(), REMINIMIZE)
    # The same skip (rule, value, threshold), or the same document: its text, html, hash-to-be, sizes (and its
    # signals, which a selected corpus does not write).
    assert selected == (built.replace(signals=measured.signals) if isinstance(built, Document) else built)
    assert {name: count for name, count in counts.items() if not name.startswith("lines:")} == \
           {name: count for name, count in built_counts.items() if not name.startswith("lines:")}
    # From a corpus that holds the readable text only (an annotated build's): minimized again, the same.
    unminimized = doc.replace(html="", text="", minimized_bytes=0, dropped_letter_share=0.0, signals=measured.signals)
    assert select_document(unminimized, selection, selection.thresholds(), REMINIMIZE,
                           stored_minimized=False) == (selected, counts)


def test_kept_text_is_what_the_line_rules_leave():
    text = "The cat sat on the mat and it was fine.\nEnable JavaScript to see it.\nHome\nA fact [1] is here, it is."
    for rule_set in RULE_SETS:
        outcome = apply_rule_sets(text, (rule_set,), Selection().thresholds(), "en")
        if outcome.drop is None:
            assert kept_text(text, (rule_set,), Selection().thresholds()) == outcome.text


def test_languages_bounds_and_sample_skip_as_filtered_or_other_language():
    doc = minimized("The cat sat on the mat and looked at the door.\nIt was a fine day.").replace(
        signals={"language/score": 0.5, "fineweb/line_punct_ratio": 0.9})
    skip, _ = select_document(doc, Selection(languages=("ru",)), {}, REMINIMIZE)
    assert isinstance(skip, Skip) and skip.kind == OTHER_LANGUAGE
    skip, counts = select_document(doc, Selection(min_signals=(("language/score", 0.65),)), {}, REMINIMIZE)
    assert (skip.kind, skip.detail) == (FILTERED, "select: min/language/score: 0.5 (threshold 0.65)")
    assert counts["documents:min/language/score"] == 1
    skip, _ = select_document(doc, Selection(max_signals=(("fineweb/line_punct_ratio", 0.8),)), {}, REMINIMIZE)
    assert skip.detail == "select: max/fineweb/line_punct_ratio: 0.9 (threshold 0.8)"
    kept, _ = select_document(doc, Selection(min_signals=(("language/score", 0.5),)), {}, REMINIMIZE)
    assert kept == doc
    # Kept without a rule set from a corpus without the minimized text: minimized again.
    kept, _ = select_document(doc.replace(html="", text=""), Selection(min_signals=(("language/score", 0.5),)), {},
                              REMINIMIZE, stored_minimized=False)
    assert kept == doc
    # A document without the signal meets no bound.
    assert math.isnan(out_of_bounds({}, Selection(max_signals=(("pii/email", 1),))).value)
    position = sample_position(doc)
    assert select_document(doc, Selection(sample=min(1.0, position + 0.01)), {}, REMINIMIZE)[0] == doc
    skip, _ = select_document(doc, Selection(sample=position), {}, REMINIMIZE)
    assert skip.detail.startswith("select: sample/content_hash: ")


def test_bounds_and_samples_are_checked():
    assert parse_bounds(["b=2", "a=0.5", "b=3"], "--min-signal") == (("a", 0.5), ("b", 3.0))
    for wrong in ("a", "=1", "a=x", "a=nan", "a=inf"):
        with pytest.raises(ValueError, match="--min-signal"):
            parse_bounds([wrong], "--min-signal")
    for wrong in (0, 1.5, -0.1):
        with pytest.raises(ValueError, match="--sample"):
            Selection(sample=wrong)


def test_a_record_gives_its_document_back_without_its_duplicate_lists():
    record = {"url": "u", "warc_record_id": "r", "warc_date": "d", "source_file": "f", "source_offset": 3,
              "http_status": 200, "content_type": "text/html", "html": "<div>a</div>", "duplicate_count": 2,
              "duplicate_urls": ["x", "y"], "duplicate_record_ids": ["1", "2"], "record_digest": "00",
              "signals": {"c4/min_num_sentences": 1.0}, "near_duplicate_count": 0}
    doc = document_of(record)
    assert (doc.capture.url, doc.capture.source_offset, doc.html, doc.signals) == ("u", 3, "<div>a</div>",
                                                                                 record["signals"])
    assert (doc.duplicate_count, doc.duplicate_urls) == (0, [])


@pytest.fixture(scope="module")
def plain_build(tmp_path_factory):
    """A build of the sample without --annotate: no signals."""
    output = tmp_path_factory.mktemp("plain") / "corpus"
    code, _, stderr = run_main(["--output", str(output), "--quiet"])
    assert code == 0, stderr
    return output


def refused(argv: list[str], output) -> str:
    code, stdout, stderr = run_select(argv)
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1 and stdout == "", stderr
    assert not output.exists()
    return lines[0]


@pytest.mark.slow
def test_a_corpus_without_signals_is_refused(plain_build, tmp_path):
    line = refused([str(plain_build), "--output", str(tmp_path / "out")], tmp_path / "out")
    assert "holds no signals" in line and "--annotate" in line


@pytest.mark.slow
def test_a_source_that_does_not_verify_is_refused(plain_build, tmp_path):
    damaged = shutil.copytree(plain_build, tmp_path / "damaged")
    shard = next(damaged.glob("corpus-*.avro"))
    data = bytearray(shard.read_bytes())
    data[-20] ^= 0xFF
    shard.write_bytes(bytes(data))
    line = refused([str(damaged), "--output", str(tmp_path / "out")], tmp_path / "out")
    assert line.startswith(f"python -m pipeline.select: error: SOURCE {damaged} does not verify: {shard.name}")


@pytest.mark.slow
def test_selecting_into_the_source_is_refused(plain_build):
    before = sorted(path.stat().st_mtime_ns for path in plain_build.iterdir())
    code, _, stderr = run_select([str(plain_build), "--output", str(plain_build)])
    assert code == 2 and "is SOURCE" in stderr
    assert sorted(path.stat().st_mtime_ns for path in plain_build.iterdir()) == before


def test_bad_options_are_refused(tmp_path):
    source, output = str(tmp_path / "annotated"), tmp_path / "out"
    assert "--sample" in refused([source, "--output", str(output), "--sample", "2"], output)
    assert "no rule set" in refused([source, "--output", str(output), "--quality", "gofer"], output)
    assert "go together" in refused([source, "--output", str(output), "--token-budget", "9"], output)
    assert "NAME=VALUE" in refused([source, "--output", str(output), "--min-signal", "c4/lorem_ipsum"], output)
    assert "leave out SOURCE" in refused([source, "--rebuild", "m.json", "--output", str(output)], output)


@pytest.mark.slow
def test_a_build_rebuilds_no_selection_and_a_selection_no_build(plain_build, tmp_path):
    manifest = json.loads((plain_build / "manifest.json").read_text())
    output = tmp_path / "out"
    assert "is a build's manifest" in refused(["--rebuild", str(plain_build / "manifest.json"), "--output",
                                               str(output)], output)
    selection = dict(manifest, options=dict(manifest["options"], select={"source": {}}))
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(selection))
    settings = CorpusSettings(inputs=(), output=str(output), rebuild_of=str(path))
    with pytest.raises(cli.UsageError, match="is a selection's manifest"):
        cli.check_rebuild(selection, settings)
