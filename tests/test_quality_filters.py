"""--quality: Gopher's, C4's and FineWeb's rules on the readable text, each drop a counted `filtered` skip."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.options import parse_settings
from pipeline.sample import Capture
from tests.helpers import document, page
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.document import Document, Skip
from transforms.stages.filters import c4, fineweb, gopher
from transforms.stages.filters.filters import filter_document
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, apply_rule_sets, parse_quality, parse_thresholds
from transforms.stages.filters.words import count_sentences, split_words
from transforms.report.manifest import write_manifest
from transforms.stages.minimize_text import minimize_document, minimize_lines
from transforms.corpus.blocks import blocks_to_html

PROSE = ("The council voted on Tuesday to restore the old cranes that have stood on the quay for a hundred years. "
         "Engineers said the work would take two summers and that the river would stay open to boats. "
         "Residents of the harbour district welcomed the decision with a small festival on the water. "
         "The mayor thanked the volunteers who had kept the cranes painted and oiled for decades. "
         "Visitors will be able to climb one of the cranes once the work is finished next year.")
PARAGRAPHS = "\n".join(sentence.strip() + "." for sentence in PROSE.split(".") if sentence.strip())


def test_prose_is_kept_by_every_rule_set():
    for rule_set in ("gopher", "c4", "fineweb", "fineweb-recipe"):
        outcome = apply_rule_sets(PARAGRAPHS, (rule_set,), DEFAULT_THRESHOLDS)
        assert outcome.drop is None, (rule_set, outcome.drop)
        assert outcome.text == PARAGRAPHS


def test_each_rule_set_drops_by_the_rule_that_fails():
    short = "Buy now. The best prices."
    assert gopher.quality(short, {}).rule == "min_doc_words" and gopher.quality(short, {}).value == 5
    no_stop_words = " ".join(["cranes harbour river quay engineers summer festival volunteers"] * 8)
    assert gopher.quality(no_stop_words + ".", {}).rule == "min_stop_words"
    repeated = "\n".join(["Click here to subscribe to the newsletter today."] * 5 + [PROSE])
    assert gopher.repetition(repeated, {}).rule == "dup_line_frac"
    assert c4.c4(PARAGRAPHS + "\nLorem ipsum dolor sit amet, consectetur.", {}).drop.rule == "lorem_ipsum"
    assert c4.c4("One line only, and a sentence.", {}).drop.rule == "min_num_sentences"
    menu = "\n".join(["Home", "About us", "Contact", "Products", "Blog"] + [PROSE])
    assert fineweb.fineweb(menu, {}).rule == "short_line_thr"


def test_c4_removes_failing_lines_and_counts_them_per_rule():
    text = "\n".join([PARAGRAPHS, "Please enable JavaScript to view the comments.", "Read our privacy policy here.",
                      "Menu", "The cranes were built in 1890 [1] by the harbour board."])
    outcome = c4.c4(text, {})
    assert outcome.drop is None
    assert outcome.lines_removed == {"javascript": 1, "policy": 1, "terminal_punctuation": 1}
    assert outcome.text.endswith("The cranes were built in 1890  by the harbour board.")
    # FineWeb's recipe keeps lines without terminal punctuation.
    assert c4.c4(text, {}, terminal_punctuation=False).lines_removed == {"javascript": 1, "policy": 1,
                                                                          "min_words_per_line": 1}


def test_english_only_rules_leave_other_languages_alone():
    russian = " ".join(["Городской совет решил во вторник отремонтировать старый мост через реку."] * 1)
    text = "\n".join(f"{russian} Это предложение номер {n} о мосте и реке." for n in range(8))
    assert gopher.quality(text, {}, language="").rule == "min_stop_words"
    assert gopher.quality(text, {}, language="ru") is None
    # Word rules mean nothing where words are not separated by spaces.
    chinese = "\n".join(f"市议会周二投票决定修复旧起重机和码头第{n}句。" for n in range(8))
    assert gopher.quality(chinese, {}, language="zh") is None


def test_thresholds_are_options_with_the_published_defaults():
    assert DEFAULT_THRESHOLDS["gopher_quality.min_doc_words"] == 50
    assert DEFAULT_THRESHOLDS["gopher_repetition.dup_10_gram"] == 0.10
    assert DEFAULT_THRESHOLDS["fineweb.line_punct_thr"] == 0.12 and DEFAULT_THRESHOLDS["c4.min_num_sentences"] == 5
    assert parse_thresholds(["c4.min_num_sentences=2"])["c4.min_num_sentences"] == 2
    assert c4.c4("One. Two. Three.", {"min_num_sentences": 2}).drop is None
    with pytest.raises(ValueError, match="unknown threshold"):
        parse_thresholds(["c4.min_sentences=2"])
    with pytest.raises(ValueError, match="number"):
        parse_thresholds(["c4.min_num_sentences=many"])
    assert parse_quality("fineweb-recipe, c4") == ("fineweb-recipe", "c4")
    with pytest.raises(ValueError, match="--quality"):
        parse_quality("gopher,refinedweb")


def test_words_and_sentences_as_the_reference_counts_them():
    assert list(split_words("Don't stop: it's 3.14, see U.S. well-known...")) == [
        "Do", "n't", "stop", ":", "it", "'s", "3.14", ",", "see", "U.S.", "well", "-", "known", "..."]
    assert count_sentences("One. Two! Three? And 3.14 is a number.") == 4


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("ab .!?\n#•-…{}[]1'\"") + ["the ", "of ", "javascript ", "\n\n"]),
                max_size=200).map("".join))
def test_rule_sets_decide_every_text_and_only_remove_whole_lines(text):
    for rule_set in ("gopher", "c4", "fineweb", "fineweb-recipe"):
        outcome = apply_rule_sets(text, (rule_set,), DEFAULT_THRESHOLDS)
        if outcome.drop is None and outcome.text != text:
            # C4 keeps lines (stripped, citations removed), in order; it never adds one.
            kept = outcome.text.split("\n")
            original = [c4.CITATION.sub("", line.strip()) for line in text.splitlines()]
            assert all(line in original for line in kept)


def _document(clean_text: str) -> Document:
    doc = document("https://example.org/a", "<urn:uuid:1>", "2024-01-01T00:00:00Z", "a.warc.gz", 10,
                   raw_bytes=1234, cleaned_html=blocks_to_html(clean_text.split("\n")))
    return minimize_document(doc, clean_text=True)


def test_a_dropped_document_is_a_filtered_skip_and_a_kept_one_is_minimized_again():
    dropped, counts = filter_document(_document("Buy now at the best prices in town today."), ("gopher",), DEFAULT_THRESHOLDS,
                                      minimize_lines)
    assert isinstance(dropped, Skip) and dropped.kind == "filtered"
    assert dropped.detail == "gopher: gopher_repetition/top_3_gram: 0.2439 (threshold 0.18)"
    assert counts == {"documents:gopher_repetition/top_3_gram": 1, "raw_bytes:gopher_repetition/top_3_gram": 1234}
    doc = _document(PARAGRAPHS + "\nPlease enable JavaScript to see the map.")
    kept, counts = filter_document(doc, ("c4",), DEFAULT_THRESHOLDS, minimize_lines)
    assert counts == {"lines:c4/javascript": 1}
    assert "javascript" not in kept.text and "javascript" not in kept.html.lower()
    assert kept.clean_text == PARAGRAPHS and kept.html != doc.html


def test_without_quality_the_build_identity_is_as_it_was_and_with_it_every_threshold_is_recorded():
    identity = parse_settings(["--output", "/tmp/never-written"]).build_identity()
    assert not {"quality", "quality_thresholds"} & set(identity)
    chosen = parse_settings(["--output", "/tmp/never-written", "--quality", "fineweb-recipe",
                             "--quality-threshold", "fineweb.short_line_length=40"])
    recorded = chosen.build_identity()
    assert recorded["quality"] == ["fineweb-recipe"] and recorded["language"] is True
    assert recorded["quality_thresholds"] == dict(DEFAULT_THRESHOLDS, **{"fineweb.short_line_length": 40})


def test_bad_quality_options_are_one_line_errors():
    for argv, message in ((["--quality", "gopher,nope"], "--quality gopher,nope: no rule set 'nope' (rule sets: "),
                          (["--quality-threshold", "c4.min_num_sentences=3"], "needs --quality"),
                          (["--quality", "c4", "--quality-threshold", "c4.x=1"], "unknown threshold")):
        code, _, stderr = run_main(["--output", "/tmp/never-written", *argv])
        assert code == 2 and message in stderr and len(stderr.strip().splitlines()) == 1


def test_a_misspelled_rule_set_is_one_line_with_the_nearest_name():
    code, _, stderr = run_main(["--output", "/tmp/never-written", "--quality", "gopehr"])
    assert code == 2
    assert stderr.splitlines() == ["python -m pipeline: error: --quality gopehr: no rule set 'gopehr'; did you mean "
                                   "gopher? (see python -m pipeline --help)"]
    with pytest.raises(ValueError, match=r"^--quality c4,finweb: no rule set 'finweb'; did you mean fineweb\?$"):
        parse_quality(("c4", "finweb"))


@pytest.mark.parametrize("assignment,meaning", [
    ("gopher_repetition.dup_para_frac=nan", "a share: a finite number, from 0 to 1"),
    ("gopher_repetition.dup_para_frac=1e400", "a share: a finite number, from 0 to 1"),
    ("fineweb.line_punct_thr=1.5", "a share: a finite number, from 0 to 1"),
    ("gopher_quality.max_non_alpha_words_ratio=-0.1", "a share: a finite number, from 0 to 1"),
    ("gopher_quality.min_doc_words=inf", "a count or a length: a finite number, 0 or more"),
    ("c4.min_num_sentences=-1", "a count or a length: a finite number, 0 or more"),
    ("fineweb.new_line_ratio=Infinity", "a ratio: a finite number, 0 or more"),
])
def test_a_threshold_is_a_finite_number_in_the_range_of_what_it_measures(assignment, meaning):
    with pytest.raises(ValueError) as raised:
        parse_thresholds([assignment])
    assert str(raised.value) == f"--quality-threshold {assignment!r}: {assignment.split('=')[0]} is {meaning}"
    # Ratios that are no share (newlines, symbols per word) may pass 1.
    assert parse_thresholds(["fineweb.new_line_ratio=2.5", "gopher_quality.max_symbol_word_ratio=1.5"])[
        "fineweb.new_line_ratio"] == 2.5


@pytest.mark.parametrize("value", ["nan", "1e400", "inf"])
def test_a_threshold_that_is_no_finite_number_is_one_line_and_writes_nothing(value, tmp_path):
    code, _, stderr = run_main(["--output", str(tmp_path / "out"), "--quality", "gopher",
                                "--quality-threshold", f"gopher_quality.min_doc_words={value}"])
    assert code == 2 and len(stderr.splitlines()) == 1, stderr
    assert "a finite number" in stderr and not (tmp_path / "out").exists()


def test_the_manifest_writer_refuses_what_is_no_json(tmp_path):
    for number in (math.nan, math.inf):
        with pytest.raises(ValueError, match="not JSON compliant"):
            write_manifest({"options": {"quality_thresholds": {"fineweb.line_punct_thr": number}}}, str(tmp_path))


GOOD = Capture("https://en.example.org/cranes", page("".join(f"<p>{line}</p>" for line in PARAGRAPHS.split("\n"))
                                                   + "<p>Please enable JavaScript to view the comments.</p>",
                                                   title="Cranes").encode("utf-8"))
# GOOD with another line that C4 removes: the same filtered text, so a duplicate of it.
GOOD_VARIANT = Capture("https://en.example.org/cranes-again", page(
    "".join(f"<p>{line}</p>" for line in PARAGRAPHS.split("\n")) + "<p>Turn on JavaScript for the map.</p>",
    title="Cranes").encode("utf-8"))
THIN = Capture("https://en.example.org/thin", page("<p>Buy now. The best prices in town.</p>").encode("utf-8"))


@pytest.mark.slow
def test_quality_build_skips_counts_and_writes_the_filtered_text(write_warc, tmp_path):
    source = write_warc([GOOD, GOOD_VARIANT, THIN])
    output = tmp_path / "out"
    code, stdout, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--quality", "c4",
                                     "--fields", "url,text,clean_text"])
    assert code == 0, stderr
    (record,) = corpus_records(output)
    assert record["url"] == GOOD.url and "JavaScript" not in record["clean_text"]
    assert "javascript" not in record["text"]
    (skip,) = [line for line in json_lines(output, "skipped") if line["kind"] == "filtered"]
    assert skip["url"] == THIN.url and skip["detail"].startswith("c4: c4/min_num_sentences: ")
    report = json.loads((output / "report.json").read_text())
    assert report["skipped"]["filtered"] == 1 and report["records"]["balanced"]
    # The content hash is of the filtered text: the variant is a duplicate.
    assert report["records"]["duplicates"] == 1
    assert report["filters"]["documents_dropped"] == {"c4/min_num_sentences": 1}
    assert report["filters"]["lines_removed"]["c4/javascript"] == 2
    assert report["options"]["quality_thresholds"]["c4.min_num_sentences"] == 5
    assert "Filters (--quality" in stdout
    html = (output / "report.html").read_text()
    assert '<section id="filters">' in html and "c4/min_num_sentences" in html and "c4/javascript" in html
