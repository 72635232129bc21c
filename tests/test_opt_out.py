"""--respect-opt-out: pages that reserve text and data mining (TDMRep, noai) skipped as opted-out."""

from __future__ import annotations

import io
import json

import pytest

from pipeline.options import parse_settings
from pipeline.sample import Capture, warc_bytes
from tests.helpers import page
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.document import Document, Skip
from transforms.stages.filters.opt_out import headers_opt_out, meta_opt_out
from transforms.stages.read_warc.read_warc import read_warc


def headers(**values):
    named = {name.lower().replace("_", "-"): value for name, value in values.items()}
    return lambda name: named.get(name.lower())


def test_http_headers_that_opt_out():
    assert headers_opt_out("u", headers(tdm_reservation=" 1 ")) == ("opted-out", "HTTP header tdm-reservation: 1")
    assert headers_opt_out("u", headers(tdm_reservation="0")) is None
    assert headers_opt_out("u", headers(x_robots_tag="noindex, NoAI"))[0] == "opted-out"
    assert headers_opt_out("u", headers(x_robots_tag="otherbot: noai"))[0] == "opted-out"
    assert headers_opt_out("u", headers(x_robots_tag="noimageai, noindex")) is None
    assert headers_opt_out("u", headers()) is None


def test_meta_tags_that_opt_out():
    assert meta_opt_out(b'<head><META NAME="tdm-reservation" CONTENT="1"></head>') == (
        '<meta name="tdm-reservation" content="1">')
    assert meta_opt_out(b"<meta content='noindex,noai' name=robots>") == '<meta name="robots" content="noindex,noai">'
    assert meta_opt_out(b'<meta name="tdm-reservation" content="0">') is None
    assert meta_opt_out(b'<meta name="googlebot" content="noai">') is None
    assert meta_opt_out(b'<meta name="robots" content="noimageai"><p>noai is a word here</p>') is None


def test_the_reader_skips_a_response_whose_headers_opt_out():
    reserved = Capture("https://a.example/", page("<p>Reserved.</p>").encode("utf-8"),
                       http_headers=(("TDM-Reservation", "1"),))
    open_page = Capture("https://b.example/", page("<p>Open.</p>").encode("utf-8"))
    data = warc_bytes([reserved, open_page])
    outcomes = list(read_warc(lambda: io.BytesIO(data), "t.warc.gz", screen=headers_opt_out))
    assert [(o.url, o.kind) for o in outcomes if isinstance(o, Skip) and o.kind == "opted-out"] == [
        (reserved.url, "opted-out")]
    assert [o.capture.url for o in outcomes if isinstance(o, Document)] == [open_page.url]


def test_without_the_option_the_build_identity_is_as_it_was():
    assert "respect_opt_out" not in parse_settings(["--output", "/tmp/never-written"]).build_identity()


@pytest.mark.slow
def test_respect_opt_out_build_skips_headers_and_meta_and_balances(write_warc, tmp_path):
    source = write_warc([
        Capture("https://a.example/", page("<p>Reserved by header.</p>").encode("utf-8"),
                http_headers=(("X-Robots-Tag", "noai"),)),
        Capture("https://b.example/", page("<p>Reserved by meta.</p>",
                                           head='<meta name="tdm-reservation" content="1">').encode("utf-8")),
        Capture("https://c.example/", page("<p>Open page.</p>").encode("utf-8"))])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--respect-opt-out"])
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == ["https://c.example/"]
    skipped = {line["url"]: line["detail"] for line in json_lines(output, "skipped") if line["kind"] == "opted-out"}
    assert skipped == {"https://a.example/": "HTTP header X-Robots-Tag: noai",
                       "https://b.example/": '<meta name="tdm-reservation" content="1">'}
    report = json.loads((output / "report.json").read_text())
    assert report["skipped"]["opted-out"] == 2 and report["records"]["balanced"]
