"""`python -m pipeline` end to end, on WARC files the tests write."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import cli
from pipeline.options import SAMPLE_WARC
from pipeline.sample import CP1251_ARTICLE, Capture, sample_captures, warc_bytes
from tests.helpers import corpus_records, page, read_bytes

REPO = Path(__file__).resolve().parents[1]
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01" + bytes(range(256)) * 4

LATIN = Capture("https://en.example.org/harbour",
                page("<h1>Harbour cranes</h1><p>The council voted to restore the cranes &amp; the quay.</p>",
                     title="Harbour").encode("utf-8"), date="2026-01-15T10:00:00Z")
CYRILLIC = Capture("https://ru.example.org/most",
                   page("<h1>Новый мост</h1><div>При<b>в</b>ет, читатель! Мост откроют в 2027 году.</div>",
                        title="Мост", lang="ru").encode("utf-8"), content_type="text/html",
                   date="2026-01-15T10:01:00Z")
CP1251 = Capture("https://pogoda.example.org/moskva", CP1251_ARTICLE.encode("windows-1251"),
                 content_type="text/html", date="2026-01-15T10:02:00Z")
DUPLICATE = Capture("https://mirror.example.org/harbour", LATIN.body, date="2026-01-15T11:00:00Z")
REDIRECT = Capture("https://en.example.org/old", b"", status=301,
                   http_headers=(("Location", "https://en.example.org/harbour"),), date="2026-01-15T10:03:00Z")
TEXT = Capture("https://en.example.org/robots.txt", b"User-agent: *\n", content_type="text/plain",
               date="2026-01-15T10:04:00Z")
IMAGE = Capture("https://en.example.org/logo.jpg", JPEG, content_type="text/html", date="2026-01-15T10:05:00Z")
NOT_FOUND = Capture("https://en.example.org/gone", page("<p>Not here</p>").encode(), status=404,
                    date="2026-01-15T10:06:00Z")
# A record cut short inside its HTTP headers: a dead letter (cut inside its body, what was stored would be kept).
CUT = Capture("https://en.example.org/cut", page("<p>" + "word " * 400 + "</p>").encode(), cut_block_to=40,
              date="2026-01-15T10:07:00Z")
FIRST_FILE = [LATIN, CYRILLIC, REDIRECT, TEXT]
SECOND_FILE = [CP1251, DUPLICATE, IMAGE, CUT, NOT_FOUND]
KEPT = {LATIN.url, CYRILLIC.url, CP1251.url}
SKIPPED = {REDIRECT.url: "redirect", TEXT.url: "non-html", IMAGE.url: "non-html", NOT_FOUND.url: "error-status"}
COUNTS = ("read", "kept", "duplicates", "skipped", "dead_letter")
RECORDS = 2 + 3 * (len(FIRST_FILE) + len(SECOND_FILE))  # a warcinfo per file, three records per capture


def run_main(argv: list[str], main=None) -> tuple[int, str, str]:
    """`main(argv)` (the build's command, `cli.main`, by default): its exit status, what it printed and said."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = (main or cli.main)(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def run_module(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def json_lines(output: Path, name: str) -> list[dict]:
    files = sorted(output.glob(f"{name}-*.jsonl"))
    assert files, f"no {name}-*.jsonl in {output}"
    return [json.loads(line) for path in files for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("cli-in")
    (directory / "first.warc.gz").write_bytes(warc_bytes(FIRST_FILE, filename="first.warc.gz"))
    (directory / "second.warc.gz").write_bytes(warc_bytes(SECOND_FILE, filename="second.warc.gz"))
    return directory


@pytest.fixture(scope="module")
def built(inputs, tmp_path_factory) -> tuple[Path, str]:
    output = tmp_path_factory.mktemp("cli-out")
    code, stdout, stderr = run_main(["--input", str(inputs / "*.warc.gz"), "--output", str(output),
                                     "--drop-selector", "h4.warning"])
    assert code == 0, stderr
    return output, stdout


@pytest.mark.slow
def test_corpus_holds_the_kept_pages(built):
    output, _ = built
    records = corpus_records(output)
    by_url = {record["url"]: record for record in records}
    assert len(records) == len(by_url) == len(KEPT)
    assert set(by_url) == KEPT
    latin = by_url[LATIN.url]
    assert latin["duplicate_count"] == 1
    assert latin["duplicate_urls"] == [DUPLICATE.url]
    assert latin["duplicate_record_ids"] == [DUPLICATE.record_id]
    assert latin["html"] == ("<div>harbour cranes</div>"
                             "<div>the council voted to restore the cranes &amp; the quay.</div>")
    assert latin["title"] == "Harbour" and latin["lang"] == "en"
    cyrillic = by_url[CYRILLIC.url]
    assert cyrillic["text"] == "новый мост\nпривет, читатель мост откроют в 2027 году."
    assert cyrillic["lang"] == "ru" and cyrillic["charset"] == "utf-8"
    cp1251 = by_url[CP1251.url]
    assert (cp1251["charset"], cp1251["charset_source"]) == ("windows-1251", "meta")
    assert "завтра в столице ожидается снег" in cp1251["text"]
    assert cp1251["title"] == "Погода в Москве"
    for record in records:
        assert record["raw_bytes"] > record["cleaned_bytes"] >= record["minimized_bytes"] > 0
        assert record["minimized_bytes"] == len(record["html"].encode("utf-8"))


@pytest.mark.slow
def test_report_counts_add_up(built, inputs):
    output, stdout = built
    report = json.loads((output / "report.json").read_text())
    records = {name: report["records"][name] for name in COUNTS + ("balanced",)}
    assert records == {"read": RECORDS, "kept": 3, "duplicates": 1, "skipped": RECORDS - 5, "dead_letter": 1,
                       "balanced": True}
    assert report["skipped"] == {"non-response": 2 + 2 * 9, "redirect": 1, "non-html": 2, "error-status": 1}
    assert report["dead_letter"] == {"read_warc": 1}
    files = {Path(name).name: {key: counts[key] for key in COUNTS} for name, counts in report["files"].items()}
    assert files == {
        "first.warc.gz": {"read": 13, "kept": 2, "duplicates": 0, "skipped": 11, "dead_letter": 0},
        "second.warc.gz": {"read": 16, "kept": 1, "duplicates": 1, "skipped": 13, "dead_letter": 1},
    }
    # read = the records of the input files, counted independently.
    assert records["read"] == sum(len(read_bytes(path.read_bytes())) for path in inputs.glob("*.warc.gz"))
    assert report["bytes"]["written"] == sum(path.stat().st_size for path in output.glob("corpus-*.avro"))
    assert "Records" in stdout and str(output) in stdout
    balance = next(line for line in stdout.splitlines() if "read = kept" in line)
    assert balance.split()[-1] == "yes"


@pytest.mark.slow
def test_side_outputs(built):
    output, _ = built
    listed = {entry["url"]: entry["kind"] for entry in json_lines(output, "skipped") if entry["kind"] != "non-response"}
    assert listed == SKIPPED
    [duplicate] = json_lines(output, "duplicates")
    assert (duplicate["url"], duplicate["warc_record_id"]) == (DUPLICATE.url, DUPLICATE.record_id)
    assert (duplicate["survivor_url"], duplicate["survivor_record_id"]) == (LATIN.url, LATIN.record_id)
    [letter] = json_lines(output, "dead-letter")
    assert (letter["url"], letter["warc_record_id"], letter["stage"]) == (CUT.url, CUT.record_id, "read_warc")
    assert "truncated" in letter["reason"]


@pytest.mark.parametrize("runner, built_by", [
    ("DirectRunner", "DirectRunner (webcorpus's patched FnApiRunner, pipeline/runners/local_runner.py)"),
    ("FnApiRunner", "FnApiRunner"),  # Beam's own, unpatched
])
@pytest.mark.slow
def test_python_m_pipeline_gives_the_same_corpus(built, inputs, tmp_path, runner, built_by):
    output, _ = built
    result = run_module(f"--runner={runner}", "--input", str(inputs / "*.warc.gz"), "--output",
                        str(tmp_path / "out"), "--drop-selector", "h4.warning")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"Built by the runner {built_by}\n" in result.stdout
    assert corpus_records(tmp_path / "out") == corpus_records(output)
    assert json.loads((tmp_path / "out" / "report.json").read_text())["records"] == \
        json.loads((output / "report.json").read_text())["records"]


@pytest.mark.slow
def test_help_mentions_every_flag():
    result = run_module("--help")
    assert result.returncode == 0
    for flag in ("--input", "--output", "--codec", "--level", "--drop-selector", "--block-size"):
        assert flag in result.stdout, flag
    for codec in ("deflate", "snappy", "zstandard", "xz", "bzip2", "null"):
        assert codec in result.stdout
    help_text = " ".join(result.stdout.split())
    assert "--runner=DirectRunner (the default) runs webcorpus's patched FnApiRunner" in help_text
    assert "--runner=FnApiRunner runs Beam's own, unpatched" in help_text


@pytest.mark.slow
def test_without_input_it_builds_the_shipped_sample(tmp_path):
    code, stdout, stderr = run_main(["--output", str(tmp_path / "out")])
    assert code == 0, stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [Path(name).name for name in report["files"]] == ["sample.warc.gz"]
    assert report["records"]["read"] == len(read_bytes(SAMPLE_WARC.read_bytes())) == 1 + 3 * len(sample_captures())
    assert report["records"]["balanced"]
    urls = {record["url"] for record in corpus_records(tmp_path / "out")}
    assert "https://harbour-gazette.example.org/2026/01/cranes" in urls
    assert "https://mirror.example.org/harbour/cranes" not in urls  # its duplicate
    assert "https://pogoda.example.org/moskva" in urls


def test_shipped_sample_is_what_sample_py_writes():
    assert SAMPLE_WARC.read_bytes() == warc_bytes(sample_captures(), filename="sample.warc.gz")


def test_sample_py_has_a_command_line_that_writes_only_the_file_it_is_given(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def sample(*args):
        return subprocess.run([sys.executable, "-m", "pipeline.sample", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    shown = sample("--help")
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m pipeline.sample"), shown
    wrong = sample("--out", "x.warc.gz")
    assert wrong.returncode == 2 and len(wrong.stderr.splitlines()) == 1, wrong
    assert list(tmp_path.iterdir()) == []
    written = sample("copy.warc.gz")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "copy.warc.gz").read_bytes() == warc_bytes(sample_captures(), filename="copy.warc.gz")


# --- bad input -------------------------------------------------------------------------------

BAD = {
    "no-match": (["--input", "{tmp}/nothing-*.warc.gz"], "nothing-"),
    "unknown-codec": (["--codec", "lz4"], "lz4"),
    "level-out-of-range": (["--level", "99"], "99"),
    "level-for-deflate-out-of-range": (["--codec", "deflate", "--level", "12"], "12"),
    "level-for-xz-out-of-range": (["--codec", "xz", "--level", "10"], "10"),
    "level-without-levels": (["--codec", "snappy", "--level", "3"], "snappy"),
    "bad-selector": (["--drop-selector", "div["], "div["),
    "zero-block-size": (["--block-size", "0"], "block-size"),
    "negative-block-size": (["--block-size", "-5"], "block-size"),
    "unknown-field": (["--fields", "url,txet"], "txet"),
    "near-duplicate-count-without-near-dedup": (["--fields", "url,near_duplicate_count"],
                                                "near_duplicate_count needs --near-dedup"),
}


def _error_lines(stderr: str) -> list[str]:
    """stderr without argparse's usage block."""
    lines, kept, in_usage = stderr.splitlines(), [], False
    for line in lines:
        if line.startswith("usage:"):
            in_usage = True
        elif not (in_usage and line.startswith(" ")):
            in_usage = False
            kept.append(line)
    return kept


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_2_with_one_error_line(case, tmp_path):
    args, culprit = BAD[case]
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    code, stdout, stderr = run_main(args + ["--output", str(tmp_path / "out")])
    assert code == 2, (stdout, stderr)
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, stderr
    assert errors[0].startswith("python -m pipeline: error: ") and culprit in errors[0]
    assert list(tmp_path.glob("out/corpus-*")) == []  # nothing was built


@pytest.mark.parametrize("case", ["no-match", "unknown-codec"])
@pytest.mark.slow
def test_bad_input_stderr_holds_nothing_but_the_error(case, tmp_path):
    args, _ = BAD[case]
    result = run_module(*[arg.replace("{tmp}", str(tmp_path)) for arg in args], "--output", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = _error_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("python -m pipeline: error: "), result.stderr


def test_viewed_once_options_behave_as_beams_views():
    import pickle

    from apache_beam.options.pipeline_options import DirectOptions, StandardOptions

    from pipeline.cli import ViewedOnceOptions

    options = ViewedOnceOptions(["--runner=DirectRunner", "--direct_num_workers=2"])
    standard = options.view_as(StandardOptions)
    assert options.view_as(StandardOptions) is standard
    standard.runner = "SomeRunner"
    # A change through one view is seen by every view and by the options, as with Beam's own views.
    assert options.view_as(StandardOptions).runner == "SomeRunner"
    assert options.get_all_options()["runner"] == "SomeRunner"
    assert options.view_as(DirectOptions).direct_num_workers == 2
    copy = pickle.loads(pickle.dumps(options))
    assert copy.get_all_options() == options.get_all_options()


def test_a_build_makes_its_graph_without_beams_type_inference_unless_a_type_check_is_asked_for(tmp_path,
                                                                                                 monkeypatch):
    from apache_beam.options.pipeline_options import DirectOptions, TypeOptions

    from pipeline.settings import CorpusSettings

    assert not cli.build_options([]).view_as(TypeOptions).pipeline_type_check
    asked = cli.build_options(["--type_check_strictness=ALL_REQUIRED", "--direct_num_workers=2"])
    assert asked.view_as(TypeOptions).pipeline_type_check
    assert asked.view_as(TypeOptions).type_check_strictness == "ALL_REQUIRED"
    assert asked.view_as(DirectOptions).direct_num_workers == 2
    # What the graph of a build is made under.
    seen = []

    def made(pipeline, *args, **kwargs):
        seen.append(pipeline.options.view_as(TypeOptions).pipeline_type_check)
        raise RuntimeError("graph seen")

    monkeypatch.setattr(cli, "build_corpus", made)
    for beam_args, checked in (((), False), (("--type_check_additional=all",), True)):
        settings = CorpusSettings(inputs=("unused.warc.gz",), output=str(tmp_path / "out"), beam_args=beam_args)
        with pytest.raises(cli.BuildFailed, match="graph seen"):
            cli.build(settings, 0)
        assert seen.pop() is checked


@pytest.mark.slow
def test_the_webcorpus_console_script_is_the_pipeline_under_its_own_name(tmp_path):
    script = Path(sys.executable).parent / "webcorpus"
    if not script.exists():
        pytest.skip(f"no {script}: `python -m pip install -e .` installs the console script")
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: webcorpus ")
    wrong = subprocess.run([str(script), "--codec", "lz4", "--output", str(tmp_path / "out")], capture_output=True,
                           text=True, timeout=120)
    assert wrong.returncode == 2 and wrong.stderr.startswith("webcorpus: error:")


@pytest.mark.slow
def test_with_worker_processes_only_the_progress_line_reaches_the_terminal_unless_verbose(tmp_path):
    workers = ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]
    quiet = run_module("--output", str(tmp_path / "out"), *workers)
    assert quiet.returncode == 0, quiet.stderr
    lines = [line for line in quiet.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith(("reading:", "deduplicating:", "writing:", "done:")) for line in lines), lines
    verbose = run_module("--output", str(tmp_path / "loud"), "--verbose", *workers)
    assert verbose.returncode == 0 and "INFO:" in verbose.stderr
