"""--tokenizer: each document's token count of its readable text, and the tokens kept and dropped per language in
the report and the manifest (`transforms.stages.tokens`)."""

from __future__ import annotations

import json
import pickle
from collections import Counter

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline import cli
from tests import helpers
from tests.helpers import corpus_records, html_capture, tiny_tokenizer_json
from transforms.document import Document
from transforms.report.report import tally_filter_counts, tokens_section
from transforms.stages.filters.filters import filter_document
from transforms.stages.language_transform import IdentifyLanguage
from transforms.stages.tokens import TokenCounter, TokenizerFile
from transforms.vocabulary import FILTER_COUNTS, OTHER_LANGUAGE, SKIPPED, FilterCounts

# Five sentences of the tokenizer's words: C4 keeps the page. One sentence: C4 drops it (min_num_sentences).
KEPT_TEXT = " ".join(["The quick brown fox jumps over the lazy dog."] * 5)
OTHER_TEXT = " ".join(["Every stage keeps this page of text with words enough."] * 5)
DROPPED_TEXT = "A page of text with words enough."


def document(clean_text: str, language: str = "en") -> Document:
    return helpers.document("https://example.org/", "<urn:a>", "2026-01-01T00:00:00Z", "a.warc.gz", 0,
                            clean_text=clean_text, html=f"<div>{clean_text}</div>", language=language, raw_bytes=100)


def test_a_counter_counts_the_texts_tokens_without_special_ones_and_travels_without_its_tokenizer():
    count = TokenCounter(tiny_tokenizer_json())
    assert count("the quick brown fox, a zebra.") == 8  # 6 words, 2 marks; `zebra` is [UNK]
    assert count("") == 0
    assert pickle.loads(pickle.dumps(count))("the lazy dog") == 3


def test_a_page_the_rules_drop_is_counted_in_tokens_by_rule_and_language():
    count = TokenCounter(tiny_tokenizer_json())
    skip, counts = filter_document(document(DROPPED_TEXT, "de"), ("c4",), {}, lambda doc, text: doc, count)
    assert counts["tokens:c4/min_num_sentences"] == count(DROPPED_TEXT) == 8
    assert counts["tokens_of:filtered:de"] == 8
    _, without = filter_document(document(DROPPED_TEXT, "de"), ("c4",), {}, lambda doc, text: doc)
    assert not [name for name in without if name.startswith("tokens")]


def test_the_pages_of_other_languages_are_counted_in_tokens_where_they_are_skipped():
    count = TokenCounter(tiny_tokenizer_json())
    page = document("").replace(cleaned_html=f"<div>{KEPT_TEXT}</div><div>{OTHER_TEXT}</div>")
    with TestPipeline() as pipeline:
        identified = pipeline | beam.Create([page]) | IdentifyLanguage(("de",), count)
        assert_that(identified[FILTER_COUNTS] | beam.Map(lambda counts: counts.counts),
                    equal_to([(("tokens_of:other_language:en", count(f"{KEPT_TEXT}\n{OTHER_TEXT}")),)]))
        assert_that(identified[SKIPPED] | beam.Map(lambda skip: skip.kind), equal_to([OTHER_LANGUAGE]),
                    label="Skipped")


def test_deduplications_tokens_are_those_that_reached_it_less_those_kept():
    tally = Counter()
    tally.update(tally_filter_counts(FilterCounts((("tokens_of:hashed:en", 30), ("tokens_of:hashed:none", 5)))))
    tally.update(tally_filter_counts(FilterCounts((("tokens_of:filtered:en", 7),))))
    tally.update({("tokens", "en", "kept"): 20, ("tokens", "none", "kept"): 5})
    assert tokens_section(tally) == {
        "kept": 25, "dropped": {"language": 0, "quality": 7, "duplicates": 10},
        "languages": {"en": {"kept": 20, "language": 0, "quality": 7, "duplicates": 10},
                      "none": {"kept": 5, "language": 0, "quality": 0, "duplicates": 0}}}


def test_a_file_that_is_no_tokenizer_is_refused_in_one_line_and_nothing_is_written(write_warc, tmp_path, capsys):
    inputs = write_warc([html_capture("https://example.org/a", f"<p>{KEPT_TEXT}</p>")])
    for content in ("not json at all", '{"version": "1.0"}'):
        bad = tmp_path / "tokenizer.json"
        bad.write_text(content)
        assert cli.main(["--input", str(inputs), "--output", str(tmp_path / "out"), "--quiet",
                         "--tokenizer", str(bad)]) == 2
        error = capsys.readouterr().err
        assert len(error.strip().splitlines()) == 1 and "is not a Hugging Face tokenizer.json" in error, error
        assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="is not a Hugging Face tokenizer.json"):
        TokenizerFile.read(str(bad))


@pytest.mark.slow
def test_a_build_counts_each_documents_tokens_and_the_tokens_kept_and_dropped(write_warc, tmp_path, tiny_tokenizer,
                                                                            capsys):
    inputs = write_warc([
        html_capture("https://example.org/kept", f"<p>{KEPT_TEXT}</p>"),
        html_capture("https://example.org/copy", f"<p>{KEPT_TEXT}</p>"),
        html_capture("https://example.org/other", f"<p>{OTHER_TEXT}</p>"),
        html_capture("https://example.org/dropped", f"<p>{DROPPED_TEXT}</p>"),
    ])
    output = tmp_path / "out"
    assert cli.main(["--input", str(inputs), "--output", str(output), "--quiet", "--quality", "c4", "--clean-text",
                     "--tokenizer", str(tiny_tokenizer)]) == 0
    count = TokenCounter(tiny_tokenizer.read_text())
    records = corpus_records(output)
    # The page and its copy are one record (either may be the survivor), the page C4 drops none.
    assert len(records) == 2 and "https://example.org/other" in {record["url"] for record in records}
    assert all(record["token_count"] == count(record["clean_text"]) > 0 for record in records)
    report = json.loads((output / "report.json").read_text())
    language = records[0]["language"] or "none"
    assert report["tokens"]["kept"] == sum(record["token_count"] for record in records)
    assert report["tokens"]["dropped"] == {"language": 0, "quality": count(DROPPED_TEXT),
                                           "duplicates": count(KEPT_TEXT)}
    assert report["tokens"]["languages"][language]["duplicates"] == count(KEPT_TEXT)
    assert report["filters"]["tokens_dropped"] == {"c4/min_num_sentences": count(DROPPED_TEXT)}
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["tokens"] == report["tokens"]
    assert manifest["options"]["tokenizer"]["sha256"] == TokenizerFile.read(str(tiny_tokenizer)).sha256
    assert "Tokens (--tokenizer)" in capsys.readouterr().out

    # --rebuild checks the tokenizer is the file the build used.
    changed = tmp_path / "tokenizer.json"
    changed.write_text(tiny_tokenizer.read_text())
    assert cli.main(["--input", str(inputs), "--output", str(tmp_path / "again"), "--quiet",
                     "--tokenizer", str(changed)]) == 0
    changed.write_text(tiny_tokenizer.read_text().replace('"lazy"', '"idle"'))
    capsys.readouterr()
    assert cli.main(["--rebuild", str(tmp_path / "again" / "manifest.json"), "--output", str(tmp_path / "re"),
                     "--quiet"]) == 2
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1 and "tokenizer" in error and "sha256 differs" in error, error
    assert not (tmp_path / "re").exists()


def test_without_a_tokenizer_a_build_writes_no_token_count_and_its_identity_is_as_before(tiny_tokenizer):
    from pipeline.build_inputs import read_build_inputs
    from pipeline.settings import CorpusSettings

    plain = CorpusSettings(inputs=("in/*.warc.gz",), output="out")
    assert "token_count" not in plain.written_fields() and "tokenizer" not in plain.build_identity()
    counted = CorpusSettings(inputs=("in/*.warc.gz",), output="out", tokenizer=str(tiny_tokenizer))
    assert "token_count" in counted.written_fields()
    assert counted.build_identity(read_build_inputs(counted))["tokenizer"]["path"] == str(tiny_tokenizer)
    with pytest.raises(ValueError, match="--fields token_count needs --tokenizer"):
        CorpusSettings(inputs=("in/*.warc.gz",), output="out", fields=("url", "token_count"))
