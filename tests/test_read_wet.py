"""WET files as input: Common Crawl's extracted text (`conversion` records of plain UTF-8 text) read as documents,
through the stages that apply to text, with the report naming what did not apply."""

from __future__ import annotations

import json

import pytest

from tests.helpers import corpus_records, document, input_dir, outcomes_by_kind, read_bytes, wet_bytes
from tests.test_cli import run_main
from transforms.report.report import EXTRACTED_TEXT_RECORDS, NOT_APPLIED_TO_TEXT
from transforms.stages.charset import EXTRACTED_TEXT_SOURCE, decode_document
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.clean_html.guard import GuardedCleaner
from transforms.vocabulary import EMPTY, EXTRACTED_TEXT, NON_RESPONSE

TEXTS = [("https://a.example/one", "The first page of text.\n\nIt has   two paragraphs & a <b> in it.\n"),
         ("https://b.example/two", "Второй текст, по-русски.\nИ ещё одна строка.\n"),
         ("https://c.example/empty", "")]


def test_a_conversion_record_of_text_is_a_document_of_extracted_text():
    docs, skips, dead = outcomes_by_kind(read_bytes(wet_bytes(TEXTS), "in.warc.wet.gz"))
    assert [doc.capture.url for doc in docs] == [url for url, _ in TEXTS[:2]]
    assert all(doc.is_extracted_text and doc.content_type == EXTRACTED_TEXT for doc in docs)
    assert docs[1].payload.decode("utf-8") == TEXTS[1][1]
    assert docs[0].capture.warc_record_id == "<urn:uuid:00000000-0000-0000-0000-000000000001>"
    # The warcinfo record is no page; an empty text is an empty page.
    assert [(skip.kind, skip.record_type) for skip in skips] == [(NON_RESPONSE, "warcinfo"), (EMPTY, "conversion")]
    assert dead == []


def test_extracted_text_is_utf8_as_written_and_its_lines_are_its_blocks():
    text = "A line   with  spaces\r\n\n<p>not markup</p> &amp;\nÿ\xa0end\n".encode("utf-8") + b"\xff\n"
    decoded = decode_document(document(content_type=EXTRACTED_TEXT, payload=text))
    assert (decoded.charset, decoded.charset_source) == ("utf-8", EXTRACTED_TEXT_SOURCE)
    cleaned = GuardedCleaner(HtmlCleaner(main_content=True))(decoded)
    assert cleaned.cleaned_html == ("<div>A line with spaces</div><div>&lt;p&gt;not markup&lt;/p&gt; &amp;amp;</div>"
                                    "<div>ÿ end</div><div>\ufffd</div>")
    assert (cleaned.title, cleaned.links, cleaned.boilerplate_bytes, cleaned.utf8_payload) == ("", [], 0, b"")


@pytest.mark.slow
def test_a_wet_file_builds_through_the_text_stages_and_the_report_names_what_did_not_apply(tmp_path):
    path = input_dir(tmp_path) / "CC-MAIN-test.warc.wet.gz"
    path.write_bytes(wet_bytes(TEXTS, path.name))
    output = tmp_path / "out"
    code, out, err = run_main(["--input", str(path), "--output", str(output), "--language", "--main-content",
                               "--drop-selector", "nav"])
    assert code == 0, err
    records = {record["url"]: record for record in corpus_records(output)}
    assert set(records) == {url for url, _ in TEXTS[:2]}
    # (Its two lines, as MinimizeText minimizes them.)
    assert records[TEXTS[0][0]]["text"] == "the first page of text.\nit has two paragraphs & a b in it."
    assert records[TEXTS[1][0]]["language"] == "ru"
    report = json.loads((output / "report.json").read_text())
    assert report[EXTRACTED_TEXT_RECORDS] == {"records": 2, "not_applied": [*NOT_APPLIED_TO_TEXT, "--main-content",
                                                                            "--drop-selector"]}
    assert report["charsets"] == {f"utf-8 ({EXTRACTED_TEXT_SOURCE})": 2}
    assert "read as extracted text (WET)" in out
    told = [line for line in err.splitlines() if "extracted text" in line]
    assert told == ["python -m pipeline: --main-content, --drop-selector did not apply to the 2 records of extracted text (WET "
                    "conversion records): they are text, not HTML"]
