"""--quality fineweb2: each page judged by the thresholds and stop words of its own language (FineWeb-2's packs)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pipeline.fineweb2_packs import build_packs, main
from tests.helpers import document
from tests.test_cli import run_main
from transforms.stages.filters import fineweb as fineweb_rules
from transforms.stages.filters import fineweb2, gopher, segmenters
from transforms.stages.filters.filters import annotate_document, filter_document
from transforms.stages.filters.fineweb2 import DEFAULT_PACKS, read_packs
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, parse_quality, thresholds_of

RUSSIAN = ("Совет города во вторник проголосовал за восстановление старых кранов, которые стоят на набережной "
           "уже сто лет. Инженеры сказали, что работа займёт два лета и что река останется открытой для лодок. "
           "Жители портового района встретили это решение небольшим праздником на воде. Мэр поблагодарил "
           "добровольцев, которые десятилетиями красили и смазывали краны. Посетители смогут подняться на один "
           "из кранов, как только работы будут закончены в следующем году, а музей при нём откроется летом.")
PARAGRAPHS = "\n".join(sentence.strip() + "." for sentence in RUSSIAN.split(".") if sentence.strip())
RULE_SETS = ("fineweb2",)


def judged(text: str, language: str, confidence: float = 0.99, packs=None):
    doc = document(clean_text=text, language=language, language_confidence=confidence)
    return filter_document(doc, RULE_SETS, DEFAULT_THRESHOLDS, lambda doc, text: doc,
                           packs=read_packs() if packs is None else packs)


def test_the_shipped_packs_are_fineweb2s_numbers_for_the_languages_lid176_gives():
    packs = read_packs()
    assert {"ru", "de", "fr", "es", "zh", "ja", "ar", "hi", "th", "el"} <= set(packs) and "en" not in packs
    russian = packs["ru"]
    assert russian.origin == "rus_Cyrl" and russian.language_score == 0.9
    assert russian.thresholds["fineweb.line_punct_thr"] == 0.231
    assert russian.thresholds["gopher_repetition.dup_5_gram"] == 0.168
    assert {"и", "в", "что"} <= russian.thresholds[fineweb2.STOP_WORDS]
    # What the pipeline script sets for every language: paragraphs off, FineWeb's repeated lines at 0.1.
    assert russian.thresholds["gopher_repetition.dup_para_frac"] == 1.0
    assert russian.thresholds["fineweb.char_duplicates_ratio"] == 0.1
    assert packs["zh"].origin == "cmn_Hani" and packs["sq"].origin == "als_Latn" and packs["als"].origin == "gsw_Latn"
    assert json.loads(DEFAULT_PACKS.read_text(encoding="utf-8"))["notice"].startswith("Thresholds, stop words")


def configuration(stop_words: list[str], line_punct_thr: float = 0.2, dup_line_frac: float = 0.3) -> str:
    return json.dumps({"dup_line_frac": dup_line_frac, "line_punct_thr": line_punct_thr, "new_line_ratio": 0.2,
                       "max_avg_word_length": 12, "min_avg_word_length": 2, "max_non_alpha_words_ratio": 0.7,
                       "language_score": 0.8, "stopwords": stop_words,
                       "top_n_grams": [[2, 0.2], [3, 0.18], [4, 0.16]],
                       "dup_n_grams": [[n, 0.1] for n in range(5, 11)]})


def write_tokenizers(folder) -> None:
    """datatrove's table of word tokenizers (its columns; a Whitespace tokenizer is spaCy's multilingual one)."""
    (folder / "tokenizers.csv").write_text(
        "code_3,code_1,script,name,family,type,tok_code,proxy,auto_assigned,default_code_1,default_script\n"
        + "".join(f"{iso3},,{script},x,x,{kind},{code},FALSE,FALSE,FALSE,TRUE\n" for iso3, script, kind, code in (
            ("rus", "Cyrl", "SpaCyTokenizer", "ru"), ("srp", "Cyrl", "SpaCyTokenizer", "sr"),
            ("als", "Latn", "StanzaTokenizer", "sq"), ("gsw", "Latn", "SpaCyTokenizer", "de"),
            ("ekk", "Latn", "WhitespaceTokenizer", ""))))


def test_the_generator_maps_lid176_codes_to_fineweb2_configurations(tmp_path):
    # (JSON is YAML.) Serbian in two scripts: lid.176's is Cyrillic; Albanian is Tosk (als), Alemannic gsw.
    for name, words in (("rus_Cyrl", ["и"]), ("srp_Cyrl", ["и", "у"]), ("srp_Latn", ["i"]), ("als_Latn", ["e"]),
                        ("gsw_Latn", ["und"]), ("ekk_Latn", ["ja"])):
        (tmp_path / f"{name}.yml").write_text(configuration(words, dup_line_frac=0.0 if name == "ekk_Latn" else 0.3))
    write_tokenizers(tmp_path)
    content = build_packs(tmp_path, tmp_path / "tokenizers.csv")
    assert {code: pack["fineweb2"] for code, pack in content["packs"].items()} == {
        "ru": "rus_Cyrl", "sr": "srp_Cyrl", "sq": "als_Latn", "als": "gsw_Latn", "et": "ekk_Latn"}
    assert {code: pack["words"] for code, pack in content["packs"].items()} == {
        "ru": "spacy:ru", "sr": "spacy:sr", "sq": "stanza:sq", "als": "spacy:de", "et": "spacy:xx"}
    assert content["packs"]["sr"]["stop_words"] == ["и", "у"] and content["configurations"] == 6
    assert content["packs"]["ru"]["thresholds"]["gopher_repetition.dup_7_gram"] == 0.1
    # datatrove leaves a duplicate-line share of 0 unapplied: so does the pack.
    (tmp_path / "packs.json").write_text(json.dumps(content))
    assert read_packs(tmp_path / "packs.json")["et"].thresholds["gopher_repetition.dup_line_frac"] == 1.0


def test_the_generator_writes_each_languages_min_confidence_from_the_measured_table(tmp_path, capsys):
    for name in ("rus_Cyrl", "srp_Cyrl", "ekk_Latn", "gsw_Latn"):
        (tmp_path / f"{name}.yml").write_text(configuration(["и"]))
    write_tokenizers(tmp_path)
    # lid.176 measured less sure of Russian than FineWeb-2's 0.8 assumes, surer of Serbian, on too few Estonian pages.
    (tmp_path / "confidence.json").write_text(json.dumps({"languages": {
        "ru": {"pages": 20, "median": 0.62, "p5": 0.4, "sd": 0.1},
        "sr": {"pages": 20, "median": 0.99, "p5": 0.97, "sd": 0.01},
        "et": {"pages": 3, "median": 0.5, "p5": 0.45, "sd": 0.02}}}))
    assert main(["--tokenizers", str(tmp_path / "tokenizers.csv"), "--confidence", str(tmp_path / "confidence.json"),
                 "--output", str(tmp_path / "packs.json"), str(tmp_path)]) == 0
    packs = json.loads((tmp_path / "packs.json").read_text())["packs"]
    assert {code: (pack["language_score"], pack["min_confidence"]) for code, pack in packs.items()} == {
        "ru": (0.8, 0.52), "sr": (0.8, 0.8), "et": (0.8, 0.8), "als": (0.8, 0.8)}
    assert packs["ru"]["min_confidence_origin"].startswith("FineWeb-2's rule on lid.176's confidence over 20 ")
    assert packs["sr"]["min_confidence_origin"].startswith("FineWeb-2's GlotLID score, not raised to 0.9: ")
    assert packs["et"]["min_confidence_origin"] == ("FineWeb-2's GlotLID score (lid.176's confidence measured on too "
                                                    "few pages: 3, under 10)")
    assert packs["als"]["min_confidence_origin"] == "FineWeb-2's GlotLID score (lid.176's confidence not measured)"
    assert read_packs(tmp_path / "packs.json")["ru"].min_confidence == 0.52
    capsys.readouterr()


def test_the_language_score_applied_is_the_packs_min_confidence():
    # lid.176 is surer of German pages (median 0.987 on the developer corpus's) than FineWeb-2's 0.821 assumes.
    german = json.loads(DEFAULT_PACKS.read_text(encoding="utf-8"))["packs"]["de"]
    assert (german["language_score"], german["min_confidence"]) == (0.821, 0.821)
    assert german["min_confidence_origin"].startswith("FineWeb-2's GlotLID score, not raised to 0.9: ")
    pack = {**json.loads(DEFAULT_PACKS.read_text(encoding="utf-8"))["packs"]["ru"], "min_confidence": 0.8}
    packs = {"ru": fineweb2.pack_rules(pack)}
    kept, counts = judged(PARAGRAPHS, "ru", confidence=0.85, packs=packs)
    assert kept.clean_text == PARAGRAPHS and counts["language:ru:kept"] == 1
    skip, _ = judged(PARAGRAPHS, "ru", confidence=0.75, packs=packs)
    assert skip.detail == "fineweb2: fineweb2/language_score: 0.75 (threshold 0.8)"


def test_a_russian_page_is_judged_by_russian_stop_words_and_thresholds():
    kept, counts = judged(PARAGRAPHS, "ru")
    assert kept.clean_text == PARAGRAPHS and counts == Counter({"language:ru:kept": 1})
    # The same words without Russian stop words: Gopher's English rule set would not look, FineWeb-2's drops it.
    without = " ".join(word for word in RUSSIAN.split() if word not in read_packs()["ru"].thresholds[
        fineweb2.STOP_WORDS])
    skip, counts = judged(without, "ru")
    assert skip.detail.startswith("fineweb2: gopher_quality/min_stop_words: ")
    assert counts["language:ru:gopher_quality/min_stop_words"] == 1
    assert counts["documents:gopher_quality/min_stop_words"] == 1


def test_a_page_under_its_languages_score_is_dropped_and_one_without_a_pack_is_counted_unjudged():
    skip, counts = judged(PARAGRAPHS, "ru", confidence=0.85)
    assert skip.detail == "fineweb2: fineweb2/language_score: 0.85 (threshold 0.9)"
    assert counts["language:ru:fineweb2/language_score"] == 1
    kept, counts = judged("One line.", "en")
    assert kept.clean_text == "One line." and counts == Counter({f"language:en:{fineweb2.NO_PACK}": 1})
    # Chinese, its segmenter missing (here one datatrove has that none stands for): no word rules.
    packs = {"zh": fineweb2.pack_rules({**json.loads(DEFAULT_PACKS.read_text(encoding="utf-8"))["packs"]["zh"],
                                        "words": "stanza:zh"})}
    kept, counts = judged("\n".join(["今天的天气很好，我们去公园散步。"] * 1 + ["他在学校学习中文和数学。"]), "zh",
                          packs=packs)
    assert counts == Counter({f"language:zh:{fineweb2.NO_WORDS}": 1})


def test_annotate_measures_the_stop_words_of_the_pages_language():
    doc = document(clean_text=PARAGRAPHS, language="ru", language_confidence=0.99)
    annotated, _ = annotate_document(doc, RULE_SETS, DEFAULT_THRESHOLDS, packs=read_packs())
    assert annotated.signals["gopher_quality/min_stop_words"] >= 2
    assert "gopher_quality/min_stop_words" not in annotate_document(
        document(clean_text=PARAGRAPHS, language="en"), RULE_SETS, DEFAULT_THRESHOLDS,
        packs={})[0].signals


def test_fineweb2_applies_alone():
    with pytest.raises(ValueError, match="fineweb2 applies alone"):
        parse_quality("gopher,fineweb2")


def pack_file(tmp_path, change) -> str:
    content = json.loads(DEFAULT_PACKS.read_text(encoding="utf-8"))
    content["packs"] = {"ru": content["packs"]["ru"]}
    change(content["packs"]["ru"])
    path = tmp_path / "packs.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("change,message", [
    (lambda pack: pack.pop("stop_words"), "pack 'ru' has no 'stop_words'"),
    (lambda pack: pack["thresholds"].pop("fineweb.line_punct_thr"), "pack 'ru' has no threshold "
                                                                    "'fineweb.line_punct_thr'"),
    (lambda pack: pack["thresholds"].update({"fineweb.new_line_ratio": "high"}),
     "pack 'ru': threshold fineweb.new_line_ratio is 'high', not a number"),
    (lambda pack: pack.update(language_score=2), "pack 'ru': language_score 2 is not a number from 0 to 1"),
    (lambda pack: pack.update(min_confidence="high"), "pack 'ru': min_confidence 'high' is not a number from 0 to 1"),
    (lambda pack: pack.update(words="icu:ru"), "pack 'ru': no word segmenter 'icu:ru'"),
])
def test_a_bad_pack_file_is_one_line_exit_2_and_nothing_written(tmp_path, change, message):
    output = tmp_path / "out"
    path = pack_file(tmp_path, change)
    code, _, stderr = run_main(["--output", str(output), "--quality", "fineweb2", "--quality-pack", path])
    assert code == 2 and len(stderr.strip().splitlines()) == 1
    assert f"--quality-pack {path}: {message}" in stderr
    assert not output.exists()


def test_quality_pack_needs_fineweb2_and_fineweb2_takes_no_threshold(tmp_path):
    path = pack_file(tmp_path, lambda pack: None)
    for argv, message in ((["--quality", "gopher", "--quality-pack", path], "--quality-pack needs --quality fineweb2"),
                          (["--quality", "fineweb2", "--quality-threshold", "fineweb.line_punct_thr=0.1"],
                           "--quality-threshold with --quality fineweb2")):
        code, _, stderr = run_main(["--output", str(tmp_path / "out"), *argv])
        assert code == 2 and message in stderr and len(stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_build_records_its_pack_and_counts_each_language(tmp_path, monkeypatch):
    path = pack_file(tmp_path, lambda pack: pack["thresholds"].update({"fineweb.line_punct_thr": 0.0}))
    output = tmp_path / "out"
    code, _, stderr = run_main(["--output", str(output), "--quality", "fineweb2", "--quality-pack", path, "--quiet"])
    assert code == 0, stderr
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["options"]["quality_pack"]["path"] == path
    assert len(manifest["options"]["quality_pack"]["sha256"]) == 64
    assert set(manifest["options"]["word_segmenters"]) == {"packages", "fallback"}
    per_language = json.loads((output / "report.json").read_text())["filters"]["per_language"]
    assert per_language["en"] == {fineweb2.NO_PACK: 4} and "ru" in per_language
    assert "fineweb2" in (output / "report.html").read_text()
    code, _, stderr = run_main(["--rebuild", str(output / "manifest.json"), "--output", str(tmp_path / "again"),
                                "--quiet"])
    assert code == 0, stderr
    # Other versions of the segmenters would count other words: refused, in one line.
    monkeypatch.setattr(segmenters, "installed_version", lambda package: "0.0.1")
    code, _, stderr = run_main(["--rebuild", str(output / "manifest.json"), "--output", str(tmp_path / "other")])
    assert code == 2 and len(stderr.strip().splitlines()) == 1 and "its words were counted by" in stderr
    monkeypatch.undo()
    with open(path, "a", encoding="utf-8") as pack:
        pack.write(" ")
    code, _, stderr = run_main(["--rebuild", str(output / "manifest.json"), "--output", str(tmp_path / "third")])
    assert code == 2 and f"its --quality-pack {path} is missing or changed" in stderr


def test_fineweb2_measures_with_datatroves_punctuation():
    # datatrove counts `©` and `€` as words and ends a sentence with Khmer's `៖`; Unicode's categories do not.
    limits = thresholds_of("gopher_quality", read_packs()["ru"].thresholds)
    words = dict(gopher.quality_measures("© € слово", limits, "ru"))["min_doc_words"]
    assert words == 3 and dict(gopher.quality_measures("© € слово", {}, "ru"))["min_doc_words"] == 1
    lines = "ពាក្យ៖\nពាក្យ"
    fineweb_limits = {**fineweb_rules.DEFAULTS, **thresholds_of("fineweb", read_packs()["km"].thresholds)}
    assert dict(fineweb_rules.measures(lines, fineweb_limits, "km"))["line_punct_thr"] == 0.5
    assert dict(fineweb_rules.measures(lines, fineweb_rules.DEFAULTS, "km"))["line_punct_thr"] == 0
