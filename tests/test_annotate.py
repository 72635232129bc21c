"""`--annotate`: every rule of `--quality` measured and written in `signals`, nothing dropped or edited for quality;
read back in every format, by `read_corpus`, `pipeline.verify`, DuckDB, pandas and `datasets`; extended and
rebuilt as a build is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.options import parse_settings
from pipeline.sample import Capture
from pipeline.verify import main as verify_main
from tests.helpers import corpus_records, document, page
from tests.test_cli import json_lines, run_main
from tests.test_quality_filters import GOOD, GOOD_VARIANT, THIN
from transforms.corpus.read_corpus import iter_corpus
from transforms.stages.filters.filters import annotate_document
from transforms.stages.filters.rule_sets import DEFAULT_THRESHOLDS, apply_rule_sets
from transforms.stages.filters.signals import decide

# A page with an e-mail address that C4 keeps whole.
CONTACT = Capture("https://en.example.org/contact", page(
    "".join(f"<p>{line}</p>" for line in [
        "The museum is open every day of the week from nine in the morning.",
        "Tickets can be bought at the door or in advance on the phone.",
        "Groups of more than ten people should write to the office first.",
        "The office answers letters within two days of their arrival here.",
        "You can reach the office at office@museum-example.org for questions."])).encode("utf-8"))


def build(output: Path, source: Path, *flags: str) -> None:
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", *flags])
    assert code == 0, stderr


@pytest.mark.parametrize("argv, refusal", [
    (["--annotate"], "--annotate needs --quality"),
    (["--annotate", "--quality", "c4,fineweb-recipe"], "two steps of the rule sets are c4"),
    (["--fields", "url,signals"], "--fields signals needs --annotate"),
])
def test_annotate_without_rules_to_measure_is_refused_in_one_line(argv, refusal, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_settings(["--output", "/tmp/never-written", *argv])
    assert exit_.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert refusal in line


def test_an_annotated_build_writes_the_readable_text_and_not_its_minimized_forms():
    def written(*argv: str) -> set[str]:
        return set(parse_settings(["--output", "/tmp/never-written", *argv]).written_fields())

    annotated = written("--annotate", "--quality", "c4")
    # A selection minimizes again what it keeps of `clean_text` (`pipeline.select_documents.minimized`).
    assert {"clean_text", "signals", "content_hash"} <= annotated and not {"html", "text"} & annotated
    # --pii replaces addresses in each text field apart, and named fields are written: both keep them.
    assert {"html", "text"} <= written("--annotate", "--quality", "c4", "--pii")
    assert "html" in written("--annotate", "--quality", "c4", "--fields", "url,html")
    assert {"html", "text"} <= written("--quality", "c4")


def test_the_share_site_boilerplate_removed_is_a_signal_with_the_option():
    # 300 of the 1,200 bytes of `<div>` HTML CleanHtml kept went as the site's repeated lines.
    doc = document(clean_text="An article of its own.", cleaned_bytes=1200, site_boilerplate_bytes=300)
    signals = annotate_document(doc, ("c4",), DEFAULT_THRESHOLDS, site_boilerplate=True)[0].signals
    assert signals["site_boilerplate/removed_share"] == 0.25
    untouched = annotate_document(doc.replace(site_boilerplate_bytes=0), ("c4",), DEFAULT_THRESHOLDS,
                                  site_boilerplate=True)[0]
    assert untouched.signals["site_boilerplate/removed_share"] == 0.0
    # Without the option, no such signal.
    assert "site_boilerplate/removed_share" not in annotate_document(doc, ("c4",), DEFAULT_THRESHOLDS)[0].signals


@pytest.mark.slow
def test_an_annotated_build_keeps_every_page_unedited_with_the_values_its_rules_measured(write_warc, tmp_path):
    source = write_warc([GOOD, GOOD_VARIANT, THIN, CONTACT])
    output = tmp_path / "out"
    build(output, source, "--quality", "c4", "--annotate", "--pii", "--near-dedup")
    records = {record["url"]: record for record in corpus_records(output)}
    # Kept whatever the rules say; GOOD_VARIANT, a near-duplicate of GOOD, is in GOOD's cluster.
    assert sorted(records) == sorted(capture.url for capture in (GOOD, THIN, CONTACT))
    assert records[GOOD.url]["signals"]["dedup/near_cluster"] == 2
    assert not [line for line in json_lines(output, "skipped") if line["kind"] == "filtered"]
    for record in records.values():
        # The decision a selection takes from the signals is the one the filtering build takes of the text.
        filtered = apply_rule_sets(record["clean_text"], ("c4",), DEFAULT_THRESHOLDS, record["language"])
        assert decide(record["signals"], ("c4",), DEFAULT_THRESHOLDS) == filtered.drop
        assert record["signals"]["language/confidence"] == record["language_confidence"]
        assert record["signals"]["dedup/exact_cluster"] == 1 + record["duplicate_count"]
        assert record["signals"]["dedup/near_cluster"] == 1 + record["near_duplicate_count"]
        assert list(record["signals"]) == sorted(record["signals"])
    good = records[GOOD.url]
    # C4's line rule measured, the line kept in the text written.
    assert good["signals"]["c4/lines_removed/javascript"] == 1 and "JavaScript" in good["clean_text"]
    assert records[THIN.url]["signals"]["c4/min_num_sentences"] == 2
    assert records[CONTACT.url]["signals"]["pii/email"] == 1 and "email@example.com" in records[CONTACT.url]["text"]
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["options"]["annotate"] is True
    again = tmp_path / "again"
    code, stdout, stderr = run_main(["--rebuild", str(output / "manifest.json"), "--output", str(again), "--quiet"])
    assert code == 0 and "byte-identical" in stdout, stdout + stderr


@pytest.mark.slow
def test_signals_are_an_ordinary_column_in_parquet_and_json_lines(write_warc, tmp_path):
    import duckdb
    import pandas
    from datasets import load_dataset

    source = write_warc([GOOD, THIN])
    read = {}
    for file_format, extension in (("parquet", "parquet"), ("jsonl", "jsonl.zst")):
        output = tmp_path / file_format
        build(output, source, "--quality", "gopher", "--annotate", "--format", file_format)
        read[file_format] = list(iter_corpus(str(output)))
        assert verify_main([str(output)]) == 0
        shards = str(output / f"corpus-*.{extension}")
        if file_format == "parquet":
            rows = duckdb.sql(f"SELECT url, map_from_entries(signals)['gopher_quality/min_doc_words'] AS words "
                              f"FROM read_parquet('{shards}') ORDER BY url").fetchall()
            frame = pandas.read_parquet(next(output.glob("corpus-*.parquet")), columns=["url", "signals"])
            signals = dict((entry["key"], entry["value"]) for entry in frame["signals"][0])
        else:
            rows = duckdb.sql(f"SELECT url, signals->>'$.\"gopher_quality/min_doc_words\"' AS words "
                              f"FROM read_json('{shards}') ORDER BY url").fetchall()
            frame = pandas.read_json(next(output.glob("corpus-*.jsonl.zst")), lines=True, compression="zstd")
            signals = frame["signals"][0]
        assert [(url, float(words)) for url, words in rows] == [(GOOD.url, 91.0), (THIN.url, 7.0)]
        assert signals["gopher_quality/min_doc_words"] in (91.0, 7.0)
        dataset = load_dataset(file_format if file_format == "parquet" else "json", data_files=shards,
                               split="train", cache_dir=str(tmp_path / "cache"))
        assert "signals" in dataset.column_names and len(dataset) == 2
    # read_corpus gives the same records, their signals a dict, from either format.
    assert read["parquet"] == read["jsonl"] and read["jsonl"][0]["signals"]["gopher_repetition/empty"] > 0


@pytest.mark.slow
def test_an_annotated_corpus_extends_an_annotated_one_and_no_other(write_warc, tmp_path):
    earlier, plain = tmp_path / "earlier", tmp_path / "plain"
    build(earlier, write_warc([GOOD], name="a.warc.gz"), "--quality", "c4", "--annotate")
    build(plain, write_warc([GOOD], name="a.warc.gz"), "--quality", "c4")
    later = write_warc([GOOD_VARIANT, THIN, Capture("https://en.example.org/copy", GOOD.body)], name="b.warc.gz")
    extended = tmp_path / "extended"
    build(extended, later, "--quality", "c4", "--annotate", "--extend", str(earlier))
    # The copy of the earlier corpus's page is left out; the pages it would filter are kept, annotated.
    assert sorted(record["url"] for record in corpus_records(extended)) == [GOOD_VARIANT.url, THIN.url]
    code, _, stderr = run_main(["--input", str(later), "--output", str(tmp_path / "mixed"), "--quiet",
                                "--quality", "c4", "--annotate", "--extend", str(plain)])
    assert code == 2
    assert stderr.strip().splitlines()[-1].startswith(f"python -m pipeline: error: --extend {plain} was built with "
                                                      "--annotate off, this build with on")
