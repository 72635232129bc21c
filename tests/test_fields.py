"""The fields a build writes (`--fields`) and the readable `clean_text` (`--clean-text`)."""

from __future__ import annotations

import hashlib
import io

import fastavro
import pytest

from pipeline.options import parse_settings
from pipeline.verify import verify
from pipeline.sample import Capture
from tests.helpers import page
from tests.test_cli import corpus_records, run_main
from transforms.corpus.corpus_format import RECORD_DIGEST
from transforms.stages.compress_write.avro_encoding import record_digest
from transforms.stages.compress_write.schema import CORPUS_SCHEMA, DEFAULT_FIELDS, DIGESTED_FIELDS, resolve_fields
from tests.helpers import document
from transforms.stages.minimize_text import minimize_document
from transforms.corpus.read_corpus import iter_corpus, record_problem

BODY = ("<h1>Why “Quotes” (and Brackets)?</h1><p>Читатель спросил: «Где мост?» — Мост откроют в 2027 году.</p>"
        "<p>Ελληνικά   и   日本語 stay.</p>")
CAPTURE = Capture("https://en.example.org/question", page(BODY, title="Question").encode("utf-8"))
READABLE = "Why “Quotes” (and Brackets)?\nЧитатель спросил: «Где мост?» — Мост откроют в 2027 году.\nΕλληνικά и 日本語 stay."


def test_clean_text_keeps_case_punctuation_and_every_script():
    doc = document("u", "id", "d", "f", 0,
                   cleaned_html="<div>Why “Quotes” (and Brackets)?</div><div>A &amp; B &lt;c&gt;</div>")
    minimized = minimize_document(doc, clean_text=True)
    assert minimized.clean_text == "Why “Quotes” (and Brackets)?\nA & B <c>"
    assert minimized.text == "why quotes and brackets\na & b c"
    assert minimize_document(doc).clean_text == ""


@pytest.mark.parametrize("argv, clean_text", [(["--clean-text"], True), (["--fields", "url,text,clean_text"], True),
                                              ([], False)])
@pytest.mark.slow
def test_builds_write_the_chosen_fields(argv, clean_text, write_warc, tmp_path):
    source = write_warc([CAPTURE, Capture("https://mirror.example.org/question", CAPTURE.body)])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", *argv])
    assert code == 0, stderr
    with next(output.glob("corpus-*.avro")).open("rb") as shard:
        names = [field["name"] for field in fastavro.reader(shard).writer_schema["fields"]]
    expected = resolve_fields(tuple(argv[1].split(",")) if "--fields" in argv else None, clean_text=clean_text)
    assert names == list(expected)
    (record,) = corpus_records(output)
    assert list(record) == names
    assert (record.get("clean_text") == READABLE) is clean_text
    # Deduplication stays on the minimized text: the mirror is a duplicate whatever is written.
    assert verify(str(output))[1:] == (1, [])
    assert [r["url"] for r in iter_corpus(str(output))] == [CAPTURE.url]


def test_record_digest_covers_exactly_the_written_fields():
    record = {"url": "https://example.org/", "text": "a b", "clean_text": "A, b?"}
    record[RECORD_DIGEST] = record_digest(record)
    assert record_problem(record) is None
    assert record_problem(dict(record, clean_text="A, b!")) is not None
    # A record of the default fields has the digest it always had.
    default = {name: value for name, value in zip(DEFAULT_FIELDS, ["u", "i", "d", "f", 0, 200, "t", "", "c", "s", "T",
                                                                   [], "", {}, "", "", "h", 0, [], [], 1, 2, 3, 0.0])}
    encoded = io.BytesIO()
    fastavro.schemaless_writer(encoded, fastavro.parse_schema(dict(CORPUS_SCHEMA, fields=DIGESTED_FIELDS)), default)
    assert record_digest(default) == hashlib.sha256(encoded.getvalue()).hexdigest()[:16]
    assert record_digest(default) != record_digest(dict(default, clean_text=""))


def test_default_fields_leave_the_build_identity_as_it_was():
    identity = parse_settings(["--output", "/tmp/never-written"]).build_identity()
    assert "fields" not in identity and "clean_text" not in identity
    chosen = parse_settings(["--output", "/tmp/never-written", "--fields", "text, url", "--clean-text"])
    assert chosen.written_fields() == ("url", "text", "clean_text", RECORD_DIGEST)
    assert chosen.build_identity()["fields"] == ["text", "url"] and chosen.build_identity()["clean_text"] is True


def test_near_duplicate_count_is_written_with_near_dedup_unless_fields_leave_it_out():
    assert "near_duplicate_count" in resolve_fields(None, near_dedup=True)
    assert resolve_fields(("url",), near_dedup=True) == ("url", RECORD_DIGEST)
    with pytest.raises(ValueError, match="near-dedup"):
        resolve_fields(("near_duplicate_count",))
    with pytest.raises(ValueError, match="did you mean clean_text"):
        resolve_fields(("clean_txt",))
