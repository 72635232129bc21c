"""Damaged input: corrupt gzip members, cut files, non-WARC files, pathological pages, fuzzing.

The fuzz tests run a short round by default; the long round:
    WEBCORPUS_FUZZ_EXAMPLES=10000 python -m pytest tests/test_robustness.py -k fuzz
"""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import cli
from pipeline.sample import Capture, sample_captures, warc_bytes
from tests.helpers import document
from transforms.document import DeadLetter, Document, Skip, read_at
from transforms.isolation import ChildCrashed, ChildProcess, PageTimeout
from transforms.stages.read_warc.read_warc import read_warc

FUZZ_EXAMPLES = int(os.environ.get("WEBCORPUS_FUZZ_EXAMPLES", "300"))


def member_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    while start < len(data):
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        decompressor.decompress(data[start:])
        end = len(data) - len(decompressor.unused_data)
        spans.append((start, end))
        start = end
    return spans


def read_all(data: bytes) -> list:
    return list(read_warc(lambda: io.BytesIO(data), "test.warc.gz"))


def test_a_corrupt_member_mid_file_costs_only_that_member():
    data = warc_bytes(sample_captures())
    spans = member_spans(data)
    start, end = spans[len(spans) // 2]
    damaged = bytearray(data)
    damaged[(start + end) // 2:(start + end) // 2 + 16] = b"\x00" * 16
    intact, outcomes = read_all(data), read_all(bytes(damaged))
    dead = [outcome for outcome in outcomes if isinstance(outcome, DeadLetter)]
    assert len(dead) == 1
    assert dead[0].reason.startswith("corrupt data:")
    assert dead[0].source_offset == start and dead[0].skipped_bytes == end - start
    recovered = len(spans) - len(spans) // 2 - 1
    assert f"{recovered} records recovered" in dead[0].reason
    kept = [outcome for outcome in outcomes if not isinstance(outcome, DeadLetter)]
    assert len(kept) == len(intact) - 1
    assert {read_at(outcome) for outcome in kept} == {read_at(outcome) for outcome in intact} - {start}


@pytest.mark.slow
def test_the_report_names_the_damaged_file_and_the_run_goes_on(tmp_path, capsys):
    data = warc_bytes(sample_captures())
    start, end = member_spans(data)[5]
    damaged = bytearray(data)
    damaged[start + 20:start + 40] = b"\xff" * 20
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "damaged.warc.gz").write_bytes(bytes(damaged))
    (tmp_path / "in" / "notes.warc.gz").write_bytes(b"these are my notes, not a WARC file\n")
    assert cli.main(["--input", str(tmp_path / "in" / "*"), "--output", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["records"]["balanced"]
    files = {Path(path).name: counts for path, counts in report["files"].items()}
    assert any("corrupt data" in error for error in files["damaged.warc.gz"]["errors"])
    assert any("not a WARC record" in error for error in files["notes.warc.gz"]["errors"])
    assert report["corrupt_bytes_skipped"] == end - start
    # The sample's five distinct pages and its truncated capture (kept cut), less the damaged one.
    assert report["records"]["kept"] == 5
    assert "error at offset" in capsys.readouterr().out


def test_a_lone_input_that_is_not_a_warc_file_is_a_usage_error(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a WARC file\n")
    assert cli.main(["--input", str(notes), "--output", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "is not a WARC file" in error[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_output_that_cannot_be_written_is_a_usage_error(tmp_path, capsys):
    occupied = tmp_path / "file"
    occupied.write_text("x")
    assert cli.main(["--output", str(occupied)]) == 2
    assert "is a file; give a directory" in capsys.readouterr().err
    assert cli.main(["--output", str(occupied / "below")]) == 2
    assert "cannot write to --output" in capsys.readouterr().err


def _sleep(seconds):
    time.sleep(seconds)
    return seconds


def _crash():
    os.abort()


def _fail():
    raise ValueError("bad page")


@pytest.mark.slow
def test_a_child_process_times_out_survives_crashes_and_passes_errors_on():
    sleeper = ChildProcess(_sleep, timeout=2)
    try:
        assert sleeper(0) == 0
        with pytest.raises(PageTimeout):
            sleeper(30)
        assert sleeper(0.01) == 0.01  # a fresh child serves the next call
    finally:
        sleeper.close()
    crasher = ChildProcess(_crash, timeout=10)
    with pytest.raises(ChildCrashed):
        crasher()
    crasher.close()
    failing = ChildProcess(_fail, timeout=10)
    with pytest.raises(ValueError, match="bad page"):
        failing()
    failing.close()


def test_a_child_process_started_ahead_serves_its_first_call_and_is_started_once():
    child = ChildProcess(len, timeout=60)
    try:
        child.start()
        started = child._process.pid
        child.start()  # running: nothing more is started
        assert child._process.pid == started
        assert child("page") == 4
        assert child._process.pid == started
    finally:
        child.close()


def test_a_child_process_started_ahead_and_never_called_ends_quietly_with_its_parents_end(capfd):
    child = ChildProcess(len, timeout=60)
    child.start()
    process, connection = child._process, child._connection
    assert connection.poll(60)  # ready, and its READY left unread: the parent's close resets the connection
    connection.close()
    assert process.wait(60) == 0
    assert "Traceback" not in capfd.readouterr().err


MAIN_MODULE_PROBE = """
import sys
with open(sys.argv[1], "a") as imports:
    imports.write(__name__ + "\\n")
if __name__ == "__main__":
    from transforms.isolation import ChildProcess
    child = ChildProcess(len, timeout=60)
    print(child("page"))
    child.close()
"""


def test_a_child_process_does_not_import_its_parents_main_module(tmp_path):
    # A Beam worker's main module is Beam's SDK harness: importing it again cost each worker's child ~2 CPU s.
    (tmp_path / "main_module_probe.py").write_text(MAIN_MODULE_PROBE)
    imports = tmp_path / "imports.txt"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                                os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "main_module_probe", str(imports)], cwd=tmp_path, env=environment,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["4"]
    assert imports.read_text().split() == ["__main__"]


def mutate(data: bytes, operations: list[tuple[str, int, int]]) -> bytes:
    damaged = bytearray(data)
    for kind, position, value in operations:
        if not damaged:
            break
        position %= len(damaged)
        if kind == "flip":
            damaged[position] ^= 1 << (value % 8)
        elif kind == "cut":
            del damaged[position:]
        elif kind == "insert":
            damaged[position:position] = bytes([value % 256]) * (value % 64 + 1)
        else:
            del damaged[position:position + value % 512 + 1]
    return bytes(damaged)


SAMPLES = {
    compression: warc_bytes(sample_captures()[:6], compression=compression)
    for compression in ("record", "file", "none")
}
OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["flip", "cut", "insert", "delete"]), st.integers(0, 1 << 20), st.integers(0, 255)),
    min_size=1, max_size=4,
)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(compression=st.sampled_from(sorted(SAMPLES)), operations=OPERATIONS)
def test_fuzz_read_warc_never_raises_and_accounts_for_every_outcome(compression, operations):
    outcomes = read_all(mutate(SAMPLES[compression], operations))
    assert all(isinstance(outcome, (Document, Skip, DeadLetter)) for outcome in outcomes)


def test_fuzz_read_warc_on_the_dev_corpus_records(corpus_dir):
    """Mutated copies of real records from the dev corpus: no exception escapes."""
    source = (corpus_dir / "warc" / "dev-03-multilingual.warc.gz").read_bytes()
    spans = member_spans(source[:400_000])[:-1]

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(index=st.integers(0, len(spans) - 4), operations=OPERATIONS)
    def fuzz(index, operations):
        data = source[spans[index][0]:spans[index + 3][1]]
        outcomes = read_all(mutate(data, operations))
        assert all(isinstance(outcome, (Document, Skip, DeadLetter)) for outcome in outcomes)

    fuzz()


def test_a_capture_cut_by_the_crawler_is_kept_cut_or_with_skip_truncated_skipped_not_lost():
    page = Capture("https://example.org/long", b"<p>" + b"x" * 5000, warc_headers=(("WARC-Truncated", "length"),))
    kept = [outcome for outcome in read_all(warc_bytes([page])) if isinstance(outcome, Document)]
    assert [(doc.capture.url, doc.truncated) for doc in kept] == [
        ("https://example.org/long", "length: 5003 bytes received")]
    outcomes = list(read_warc(lambda: io.BytesIO(warc_bytes([page])), "test.warc.gz", skip_truncated=True))
    skips = [outcome for outcome in outcomes if isinstance(outcome, Skip) and outcome.kind == "truncated"]
    assert [skip.url for skip in skips] == ["https://example.org/long"]


PATHOLOGICAL = {
    "nul-bytes": b"<p>a\x00b\x00\x00c</p>" * 1000,
    "invalid-utf8": b"<p>\xff\xfe\xc3\x28 caf\xe9 ok</p>",
    "svg-template": b"<svg><template><p>x</p><svg><template><foreignObject><p>in</p></foreignObject></template>"
                    b"</svg></template></svg><template><svg><div>t</div></svg></template><p>after</p>",
    "megabyte-attribute": b'<div title="' + b"a" * 1_000_000 + b'">text</div>',
    "megabyte-style": b'<div style="' + b"x:y;" * 250_000 + b'display:none">hidden</div><p>shown</p>',
    "many-tables": b"<table><tr><td>" * 3000 + b"cell",
    "big-page": b"<html><body>" + b"<p>word word word word</p>" * 400_000,
}


def clean_through_stage(payloads: dict[str, bytes], page_timeout: float, **memory) -> dict[str, list]:
    """The CleanHtml stage's outputs (its DoFn, run directly) for pages given by name; `memory`: the
    `page_memory_mib` of the GuardedCleaner, if not its default."""
    from apache_beam.pvalue import TaggedOutput

    from transforms.stages.clean_html.guard import GuardedCleaner
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stage import DocumentStage

    stage = DocumentStage("clean_html", GuardedCleaner(HtmlCleaner(), page_timeout, **memory))
    stage.setup()
    results = {"documents": [], "dead": []}
    for name, payload in payloads.items():
        doc = document(url=f"http://example.org/{name}", warc_record_id=name, warc_date="", source_file="t",
                       source_offset=0, http_status=200, content_type="text/html", utf8_payload=payload)
        for output in stage.process(doc):
            if isinstance(output, TaggedOutput):
                results["dead"].append(output.value)
            else:
                results["documents"].append(output)
    return results


def test_pathological_pages_are_cleaned_without_a_crash_or_stall():
    results = clean_through_stage(PATHOLOGICAL, page_timeout=60)
    assert results["dead"] == []
    texts = {doc.capture.warc_record_id: doc.cleaned_html for doc in results["documents"]}
    assert set(texts) == set(PATHOLOGICAL)
    assert "shown" in texts["megabyte-style"] and "hidden" not in texts["megabyte-style"]
    assert "after" in texts["svg-template"] and ">t<" not in texts["svg-template"]


@pytest.mark.slow
def test_a_page_that_takes_too_long_goes_to_the_dead_letter_alone():
    deep = b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000
    results = clean_through_stage({"deep": deep, "fine": b"<p>fine page</p>"}, page_timeout=2)
    assert [doc.capture.warc_record_id for doc in results["documents"]] == ["fine"]
    (dead,) = results["dead"]
    assert dead.warc_record_id == "deep" and dead.stage == "clean_html"
    assert dead.reason == "PageTimeout: took longer than 2 s"


def unclosed_formatting(pairs: int) -> bytes:
    """lexbor reopens every unclosed `<b>` (distinct attributes: none is dropped as a repeat) in each
    block that follows: pairs**2 / 2 elements (2,000 pairs: 2 million, 730 MiB)."""
    return b"<body>" + b"".join(b"<p><b id=%d>x" % number for number in range(pairs))


def distinct_attributes(count: int, separator: bytes = b" ", value: bytes = b"=x") -> bytes:
    """One element with `count` attributes of distinct names, which lexbor compares pairwise."""
    return b"<html><body><div " + separator.join(b"a%d%s" % (number, value) for number in range(count)) + b">t</div>"


def test_a_page_over_the_memory_limit_goes_to_the_dead_letter_alone():
    # In the worker's process, the first page takes 730 MiB and the second over 1 GiB; in the child, each
    # stops at the limit.
    pages = {"formatting": unclosed_formatting(2_000), "fine": b"<p>fine page</p>",
             "big": b"<p>word</p>" * 2_000_000, "after": b"<p>a page after them</p>"}
    results = clean_through_stage(pages, page_timeout=60, page_memory_mib=256)
    assert [doc.capture.warc_record_id for doc in results["documents"]] == ["fine", "after"]
    assert {dead.warc_record_id: dead.reason for dead in results["dead"]} == {
        "formatting": "PageOverMemory: over the memory limit of 256 MiB",
        "big": "PageOverMemory: over the memory limit of 256 MiB"}


SLOW_TO_PARSE = {
    # Quadratic in the unclosed formatting elements: 1,000 pairs take 190 MiB, 12,000 over 20 GiB.
    "formatting": unclosed_formatting(1_000),
    "formatting-with-text": b"<body>" + b"".join(b"<p><b id=%d>a line of text" % n for n in range(1_000)),
    "formatting-with-stray-end-tags": b"<body>" + b"".join(b"<p><b id=%d>x</z></z>" % n for n in range(1_000)),
    "formatting-padded-with-text": b"<body>" + b"".join(b"<p><b id=%d>" % n + b"a longer line of text, " * 2
                                                        for n in range(2_500)),
    # Quadratic in an element's distinct attributes: 20,000 take 2 s, 200,000 98 s.
    "attributes": distinct_attributes(20_000),
    "bare-attributes": distinct_attributes(20_000, value=b""),
    "slash-separated-attributes": distinct_attributes(20_000, separator=b"/", value=b""),
    "quote-separated-attributes": distinct_attributes(20_000, separator=b"", value=b'=""'),
    "big": b"<p>" + b"word " * 1_000_000,
}


@pytest.mark.parametrize("name", sorted(SLOW_TO_PARSE))
def test_a_page_that_could_be_slow_or_large_to_parse_is_cleaned_in_the_child(name, monkeypatch):
    from transforms.stages.clean_html import guard
    from transforms.stages.clean_html.guard import GuardedCleaner
    from transforms.stages.clean_html.page import CleanedPage
    from transforms.stages.clean_html.clean_html import HtmlCleaner

    isolated = []

    class RecordingChild:
        def __init__(self, function, timeout, *memory_limit):
            pass

        def start(self):
            pass

        def __call__(self, page, url):
            isolated.append(url)
            return CleanedPage(["cleaned in the child"])

    monkeypatch.setattr(guard, "ChildProcess", RecordingChild)
    cleaner = GuardedCleaner(HtmlCleaner())
    doc = document(url=f"http://example.org/{name}", warc_record_id=name, warc_date="", source_file="t",
                   source_offset=0, http_status=200, content_type="text/html", utf8_payload=SLOW_TO_PARSE[name])
    assert cleaner(doc).cleaned_html == "<div>cleaned in the child</div>"
    assert isolated == [doc.capture.url]
    ordinary = doc.replace(utf8_payload=b"<p>an ordinary page</p>" * 200)
    assert cleaner(ordinary).cleaned_html.count("an ordinary page") == 200
    assert isolated == [doc.capture.url]


def test_the_parsers_child_is_started_at_the_first_page_before_a_page_needs_it(monkeypatch):
    # The first page sent away would otherwise wait for the child's interpreter and imports (about 0.1 s).
    from transforms.stages.clean_html import guard
    from transforms.stages.clean_html.guard import GuardedCleaner
    from transforms.stages.clean_html.clean_html import HtmlCleaner

    started = []

    class StartedChild:
        def __init__(self, function, timeout, *memory_limit):
            pass

        def start(self):
            started.append(True)

    monkeypatch.setattr(guard, "ChildProcess", StartedChild)
    cleaner = GuardedCleaner(HtmlCleaner())
    ordinary = document(url="http://example.org/", warc_record_id="a", warc_date="", source_file="t",
                        source_offset=0, http_status=200, content_type="text/html",
                        utf8_payload=b"<p>an ordinary page</p>")
    assert "an ordinary page" in cleaner(ordinary).cleaned_html
    assert "an ordinary page" in cleaner(ordinary).cleaned_html
    assert started == [True]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from([b"<", b"</", b"/", b"<b>", b"</b>", b"x" * 40, b" ", b"\xff"]), max_size=60),
       name=st.sampled_from([None, *sorted(SLOW_TO_PARSE)]))
def test_both_paths_of_the_guard_send_the_same_pages_to_the_child(pieces, name):
    from transforms.stages.clean_html import guard

    if guard._scan is None:
        pytest.skip("the C scans are not in use here")
    payload = b"".join(pieces) + (SLOW_TO_PARSE[name] if name else b"")
    assert guard._scan.tag_counts(payload) == (payload.count(b"<"), payload.count(b"</"))
    accelerated = guard.isolation_reason(payload)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guard, "_scan", None)
        assert guard.isolation_reason(payload) == accelerated


def test_the_parsers_child_process_loads_its_function_without_beam():
    # The child imports what the function it runs needs; Beam would cost it 1.4 CPU s and 190 MiB, in
    # every worker that meets a page sent away.
    from transforms.stages.clean_html.clean_html_transform import CleanHtml

    function = pickle.dumps(CleanHtml(["div.ad"])._cleaner._cleaner.clean)
    code = ("import pickle, sys\n"
            "clean = pickle.loads(sys.stdin.buffer.read())\n"
            "print(clean('<div class=ad>an ad</div><p>kept', 'https://example.org/').blocks,"
            " sorted({name.split('.')[0] for name in sys.modules} & {'apache_beam', 'grpc', 'numpy'}))")
    child = subprocess.run([sys.executable, "-c", code], input=function, capture_output=True, check=True)
    assert child.stdout.decode().split("\n")[-2] == "['kept'] []"


def test_page_memory_is_an_option_of_the_build():
    from pipeline.options import parse_settings

    settings = parse_settings(["--page-memory", "512"])
    assert settings.page_memory == 512 and settings.build_identity()["page_memory"] == 512
    assert parse_settings([]).page_memory == 2048
    with pytest.raises(SystemExit):
        parse_settings(["--page-memory", "0"])
