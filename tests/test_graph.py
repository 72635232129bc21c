"""The graph's stages on documents: a stage is one entry of `pipeline.graph.DOCUMENT_STAGES`, and what it declares
beside its documents reaches the side files, the report and the resume ledger without another edit."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pytest

from pipeline import graph
from pipeline.graph import DOCUMENT_STAGES, DocumentStage, build_corpus
from pipeline.settings import CorpusSettings
from tests.helpers import applied_transforms, html_capture
from transforms.document import DeadLetter, Skip
from transforms.state.unit_check import record_json
from transforms.state.unit_ledger import RECORD_SUFFIX, UNITS, decode
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, FILTERED, SKIPPED

SKIP_MARK = "unwelcome"
FAIL_MARK = "unreadable"
MARKED = "FlagMarked"


class FlagMarked(beam.DoFn):
    def process(self, doc):
        if FAIL_MARK in doc.html:
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(MARKED, doc, ValueError(FAIL_MARK)))
        elif SKIP_MARK in doc.html:
            yield beam.pvalue.TaggedOutput(SKIPPED, Skip.for_document(FILTERED, doc, f"it says {SKIP_MARK}"))
        else:
            yield doc


class FlagMarkedPages(beam.PTransform):
    """A new stage as one would write it: pages saying SKIP_MARK are skipped, those saying FAIL_MARK fail."""

    OUTPUTS = (SKIPPED, DEAD_LETTER)

    def expand(self, docs):
        return docs | beam.ParDo(FlagMarked()).with_outputs(*self.OUTPUTS, main=DOCUMENTS)


def side_lines(output: Path, name: str) -> list[dict]:
    return [json.loads(line) for path in sorted(output.glob(f"{name}-*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_a_stage_added_as_one_entry_reaches_the_side_files_the_report_and_the_ledger(write_warc, tmp_path,
                                                                                    monkeypatch):
    added = DocumentStage(MARKED, lambda settings, found: FlagMarkedPages())
    # The one edit a new stage needs: its entry, here before the content hash.
    hash_stage = [stage.label for stage in DOCUMENT_STAGES].index("Hash")
    monkeypatch.setattr(graph, "DOCUMENT_STAGES", (*DOCUMENT_STAGES[:hash_stage], added,
                                                   *DOCUMENT_STAGES[hash_stage:]))
    inputs = write_warc([
        html_capture("https://example.org/kept", "<p>A page that every stage keeps, with words enough.</p>"),
        html_capture("https://example.org/skipped", f"<p>A page the new stage finds {SKIP_MARK}.</p>"),
        html_capture("https://example.org/failed", f"<p>A page the new stage finds {FAIL_MARK}.</p>"),
    ])
    output, units = tmp_path / "out", tmp_path / "units"
    settings = CorpusSettings(inputs=(str(inputs),), output=str(output))
    with beam.Pipeline() as pipeline:
        build_corpus(pipeline, settings, units_dir=str(units))

    [dead] = side_lines(output, "dead-letter")
    assert (dead["stage"], dead["url"]) == (MARKED, "https://example.org/failed")
    [skipped] = [skip for skip in side_lines(output, "skipped") if skip["kind"] == FILTERED]
    assert skipped["url"] == "https://example.org/skipped" and SKIP_MARK in skipped["detail"]
    report = json.loads((output / "report.json").read_text())
    assert report["records"]["balanced"] and (report["records"]["kept"], report["records"]["dead_letter"]) == (1, 1)
    assert (report["skipped"][FILTERED], report["dead_letter"]) == (1, {MARKED: 1})
    [record_file] = (units / UNITS).glob(f"*{RECORD_SUFFIX}")
    outcomes = [decode(outcome) for outcome in json.loads(record_json(str(record_file)))["outcomes"]]
    assert [outcome.url for outcome in outcomes if isinstance(outcome, DeadLetter)] == ["https://example.org/failed"]
    assert "https://example.org/skipped" in [outcome.url for outcome in outcomes if isinstance(outcome, Skip)]


def test_each_stage_declares_what_it_gives_and_a_build_takes_those_it_asks_for(tiny_tokenizer):
    from pipeline.build_inputs import read_build_inputs
    from pipeline.options import parse_settings
    from transforms.vocabulary import BOILERPLATE_LINES, BUILD_COUNTS, COUNTS

    everything = parse_settings(["--output", "/tmp/never-written", "--respect-opt-out", "--language", "--quality",
                                 "gopher", "--pii", "--site-boilerplate", "--tokenizer", str(tiny_tokenizer)])
    plain = parse_settings(["--output", "/tmp/never-written"])
    assert len({stage.label for stage in DOCUMENT_STAGES}) == len(DOCUMENT_STAGES)
    found = read_build_inputs(everything)
    for stage in DOCUMENT_STAGES:
        transform = stage.make(everything, found)
        assert transform.OUTPUTS and set(transform.OUTPUTS) <= {DEAD_LETTER, SKIPPED, *COUNTS, BUILD_COUNTS,
                                                              BOILERPLATE_LINES}, stage.label
    assert [stage.label for stage in DOCUMENT_STAGES if stage.wanted(everything)] == [
        "Charset", "RespectOptOut", "CleanHtml", "IdentifyLanguage", "SiteBoilerplate", "MinimizeText", "QualityFilter",
        "ScrubPersonalData", "Hash", "CountTokens"]
    assert [stage.label for stage in DOCUMENT_STAGES if stage.wanted(plain)] == [
        "Charset", "CleanHtml", "MinimizeText", "Hash"]


def test_a_global_combine_read_only_as_a_side_input_has_no_stage_for_its_default(write_warc, tmp_path):
    # Beam gives an empty global combine its default in a stage of its own (`DoOnce`), a bundle that costs the local
    # runner about 10 ms: where the result is read only as a side input, the side input's default stands for it.
    inputs = write_warc([html_capture("https://example.org/a", "<p>A page that every stage keeps, with words.</p>")])
    pipeline = beam.Pipeline()
    build_corpus(pipeline, CorpusSettings(inputs=(str(inputs),), output=str(tmp_path / "out")))
    _, leaves = applied_transforms(pipeline)
    defaults = sorted({node.full_label.split("/DoOnce")[0] for node in leaves if "/DoOnce/" in node.full_label})
    # Each of these feeds a main input, which needs an element even when nothing came in.
    assert defaults == ["CompressWrite/AllShards/AllShards", "Index/Count/CombineGlobally(CountCombineFn)",
                        "Manifest/AllInputs/AllInputs", "Report/Sum"]
