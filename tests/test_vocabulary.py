"""The house's ground floor: stages share a vocabulary and import no other stage; a document's fields keep
one meaning each from reading to writing."""

from __future__ import annotations

import ast
import pickle
import dataclasses
import subprocess
import sys
from pathlib import Path

from transforms.corpus.blocks import blocks_to_html
from transforms.stages.charset import decode_document
from transforms.document import Document
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import minimize_document
from transforms.vocabulary import Capture, Duplicate, Fingerprint, NearDuplicate
from tests.helpers import document

REPO = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_stage_module_imports_another_stage_module():
    # A stage module defines a Beam PTransform; what stages share is in `vocabulary` and in modules without one.
    trees = {_module_name(path): ast.parse(path.read_text(encoding="utf-8"))
             for path in sorted((REPO / "transforms").rglob("*.py"))}
    stages = {name for name, tree in trees.items()
              if any(isinstance(node, ast.ClassDef) and any("PTransform" in ast.unparse(base) for base in node.bases)
                     for node in ast.walk(tree))}
    assert {"transforms.stages.hash_dedup_transform", "transforms.report.report_transform",
            "transforms.stages.charset_transform"} <= stages
    imports = sorted(
        f"{name} imports {node.module}" for name, tree in trees.items() if name in stages for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in stages and node.module != name)
    assert imports == []


# The pure parts of the stages (`NAME.py` beside `NAME_transform.py`) that need nothing of Beam, not even its file
# systems (ReadWarc's and CompressWrite's read and write through them).
PURE_STAGE_MODULES = ("charset", "clean_html.clean_html", "language", "minimize_text", "filters.filters", "hash_dedup",
                      "near_dedup")


def test_the_vocabulary_and_the_plain_stage_functions_load_without_beam():
    stages = ", ".join(f"transforms.stages.{name}" for name in PURE_STAGE_MODULES)
    code = ("import sys\nsys.modules['apache_beam'] = None\n"
            f"import transforms.vocabulary, transforms.document, {stages}\n"
            "print('loaded')")
    child = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert child.stdout.strip() == "loaded", child.stderr


def _document(payload: bytes, content_type: str) -> Document:
    return document(url="https://example.org/", warc_record_id="<urn:uuid:1>", warc_date="2026-01-15T10:00:00Z",
                    source_file="t.warc.gz", source_offset=7, http_status=200, content_type=content_type,
                    source_range=3, payload=payload, raw_bytes=len(payload))


def test_each_form_of_the_page_has_its_own_field_emptied_once_the_next_is_made():
    page = "<html><body><p>Привет, Мир!</p><p>Second BLOCK</p></body></html>"
    read = _document(page.encode("windows-1251"), "text/html; charset=windows-1251")

    decoded = decode_document(read)
    assert (decoded.payload, decoded.utf8_payload, decoded.charset) == (b"", page.encode("utf-8"), "windows-1251")

    cleaned = HtmlCleaner()(decoded)
    assert cleaned.utf8_payload == b""
    assert cleaned.cleaned_html == blocks_to_html(["Привет, Мир!", "Second BLOCK"])
    assert cleaned.cleaned_bytes == len(cleaned.cleaned_html.encode("utf-8"))
    assert cleaned.html == ""

    minimized = minimize_document(cleaned, clean_text=True)
    assert minimized.cleaned_html == ""
    assert minimized.html == blocks_to_html(["привет, мир", "second block"])
    assert minimized.text == "привет, мир\nsecond block"
    assert minimized.clean_text == "Привет, Мир!\nSecond BLOCK"


def test_one_capture_value_is_composed_into_documents_and_fingerprints_and_orders_them_by_the_survivor_rule():
    doc = _document(b"<p>x</p>", "text/html")
    capture = doc.capture
    assert capture == Capture("2026-01-15T10:00:00Z", "https://example.org/", "<urn:uuid:1>", "t.warc.gz", 7, 3)
    assert capture.identity == ("t.warc.gz", 3, 7) and Capture.of_rank(capture.rank) == capture
    fingerprint = Fingerprint.of(doc.replace(html="<div>x</div>", content_hash="h"))
    assert fingerprint.capture == capture and fingerprint.identity == capture.identity
    assert [field.name for field in dataclasses.fields(Document)][:1] == ["capture"]
    # The survivor rule: the earliest date, then the smallest URL and record id, then where it was read.
    later = capture.replace(warc_date="2026-01-16T00:00:00Z", url="https://a.example.org/")
    other_url = capture.replace(url="https://a.example.org/", source_offset=99)
    other_id = capture.replace(warc_record_id="<urn:uuid:0>", source_offset=99)
    elsewhere = capture.replace(source_offset=3)
    assert sorted([later, capture, other_url, other_id, elsewhere]) == [other_url, other_id, elsewhere, capture, later]
    assert Fingerprint(capture, "z", "z") < Fingerprint(later, "a", "a")
    # The records about a capture extend it: its fields first, under the same names.
    assert [field.name for field in dataclasses.fields(Duplicate)][:6] == [
        field.name for field in dataclasses.fields(Capture)]
    assert [field.name for field in dataclasses.fields(NearDuplicate)][:6] == [
        field.name for field in dataclasses.fields(Capture)]
    assert isinstance(Duplicate(**vars(capture), content_hash="h", survivor_url="u", survivor_record_id="r",
                                survivor_source_file="f", survivor_source_offset=0), Capture)


def test_a_fingerprint_pickles_flat_and_back_equal():
    fingerprint = Fingerprint(Capture("2026-01-15T10:00:00Z", "https://example.org/", "<urn:uuid:1>", "t.warc.gz", 7,
                                      3), "h", "c")
    pickled = pickle.dumps(fingerprint)
    assert pickle.loads(pickled) == fingerprint and b"Capture" not in pickled


def test_a_documents_replace_is_dataclasses_replace():
    doc = _document(b"<p>x</p>", "text/html")
    changes = dict(payload=b"", utf8_payload=b"<p>x</p>", charset="utf-8", links=["https://example.org/a"])
    replaced, expected = doc.replace(**changes), dataclasses.replace(doc, **changes)
    assert replaced == expected and list(vars(replaced)) == list(vars(expected))
    assert pickle.dumps(replaced) == pickle.dumps(expected) and replaced is not doc and doc.payload == b"<p>x</p>"
    try:
        doc.replace(not_a_field=1)
    except TypeError as error:
        assert "not_a_field" in str(error)
    else:
        raise AssertionError("a name that is no field was taken")
