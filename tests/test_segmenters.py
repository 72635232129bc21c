"""Words per language as FineWeb-2 counts them (`--quality fineweb2`'s segmenters, the extra `webcorpus[languages]`).

The tests that run a segmenter skip where the extra is not installed (pip install -r requirements-languages.txt)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from pipeline.build_inputs import segmenters_changed
from tests.test_cli import run_main
from transforms.stages.filters import segmenters
from transforms.stages.filters.segmenters import (japanese_chunks, missing_segmenters, segmenter, word_counting,
                                                  word_splitter)
from transforms.stages.filters.words import split_words


def needs(*modules: str):
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed: the extra "
                                                    "webcorpus[languages] (requirements-languages.txt)")


@pytest.fixture
def nothing_installed(monkeypatch):
    monkeypatch.setattr(segmenters, "installed_version", lambda package: None)


def test_without_its_segmenter_a_spaced_language_is_split_by_rules_and_an_unspaced_one_has_no_words(
        nothing_installed):
    assert word_splitter("de", "spacy:de") is split_words
    assert word_splitter("th", "thai") is None
    # datatrove's Stanza tokenizer has no segmenter here, installed or not.
    assert word_splitter("cy", "stanza:cy") is split_words
    assert missing_segmenters({"th": "thai", "cy": "stanza:cy"}) == {
        "cy": "datatrove's stanza:cy tokenizer has no segmenter here",
        "th": "thai needs pythainlp (pip install 'webcorpus[languages]')"}
    assert word_counting({"th": "thai", "de": "spacy:de"}) == {"packages": {}, "fallback": ["de", "th"]}


def test_japanese_is_cut_in_pieces_of_at_most_40000_bytes_where_datatrove_cuts_it():
    # (The lengths datatrove 0.10's chunk_text_on_bytes gives for these texts.)
    assert list(map(len, japanese_chunks("日本語のテキスト。\n" * 3000))) == [14285, 14285, 1430]
    assert list(map(len, japanese_chunks("abc" * 10 + "あ" * 20000))) == [13346, 6684]
    assert japanese_chunks("") == [] and japanese_chunks("短い。") == ["短い。"]


def test_a_build_for_an_unspaced_language_whose_segmenter_is_not_installed_is_refused(tmp_path, nothing_installed):
    output = tmp_path / "out"
    code, _, stderr = run_main(["--output", str(output), "--quality", "fineweb2", "--languages", "th"])
    assert code == 2 and not output.exists()
    assert stderr.strip().splitlines() == [
        "python -m pipeline: error: --quality fineweb2 --languages th: its word segmenter thai needs pythainlp "
        "(pip install 'webcorpus[languages]')"]


def test_a_rebuild_where_other_segmenters_would_count_the_words_is_refused(nothing_installed):
    settings = type("Settings", (), {"quality_pack": ""})()
    recorded = {"packages": {"spacy": "3.8.18"}, "fallback": []}
    assert segmenters_changed(recorded, settings) == (
        "its words were counted by spacy 3.8.18, here by no segmenter: pip install 'spacy==3.8.18'")
    assert segmenters_changed(None, settings) is None


@needs("spacy")
def test_german_words_are_spacys_blank_german_tokens_chunk_by_chunk_or_whole():
    import spacy

    text = "Das ist z.B. ein Test, oder?\nJa!  Am 3.10. kam's – 1.000 Leute kamen."
    whole = [token.text.strip() for token in spacy.blank("de").tokenizer(text) if token.text.strip()]
    assert segmenter("spacy:de")(text) == tuple(whole) and "z.B." in whole
    # A special case of two chunks, as written: the text is split whole.
    assert "EE. UU." in segmenter("spacy:es")("Los EE. UU. y Europa.")


@needs("jieba", "sudachipy", "pythainlp", "indicnlp")
def test_chinese_japanese_thai_and_hindi_are_segmented():
    assert segmenter("spacy:zh")("我们今天去北京大学。") == ("我们", "今天", "去", "北京大学", "。")
    assert segmenter("spacy:ja")("今日は 良い天気\nですね。") == ("今日", "は", "良い", "天気", "です", "ね", "。")
    assert segmenter("thai")("สวัสดีครับ วันนี้อากาศดี") == ("สวัสดี", "ครับ", "วันนี้", "อากาศ", "ดี")
    assert segmenter("indic:hi")("यह एक परीक्षण है।") == ("यह", "एक", "परीक्षण", "है", "।")
    assert json.loads(json.dumps(word_counting({"zh": "spacy:zh"})))["packages"].keys() == {"jieba"}


@pytest.mark.slow
def test_a_build_for_a_spaced_language_whose_segmenter_is_missing_falls_back_to_the_own_word_rules(
        tmp_path, nothing_installed):
    output = tmp_path / "out"
    code, _, stderr = run_main(["--output", str(output), "--quality", "fineweb2", "--languages", "ru", "--quiet"])
    assert code == 0, stderr
    counting = json.loads((output / "manifest.json").read_text())["options"]["word_segmenters"]
    assert counting["packages"] == {} and "ru" in counting["fallback"]
