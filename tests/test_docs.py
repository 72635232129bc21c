"""What README.md and docs/ show runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def code_blocks(markdown: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(markdown) if lang == language]


def section(markdown: str, heading: str) -> str:
    """The text under `heading` (a line of #s and the title) up to the next heading of its level or above."""
    level = len(heading.split(" ", 1)[0])
    lines = markdown.splitlines(keepends=True)
    start = lines.index(heading + "\n")
    in_code = False
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(rf"#{{1,{level}}} ", line):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def default_build(tmp_path_factory) -> Path:
    """A directory where `python -m pipeline`, as the quick start runs it, wrote `webcorpus-out/`, and the commands
    of docs/reading.md wrote it in Parquet and JSON Lines."""
    cwd = tmp_path_factory.mktemp("quick-start")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    (formats,) = code_blocks(section((REPO / "docs" / "reading.md").read_text(), "## Parquet and JSON Lines"), "")
    for command in ["python -m pipeline --quiet", *formats.splitlines()]:
        built = subprocess.run(command.replace("python", sys.executable, 1), shell=True, cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, f"{command}\n{built.stderr}"
    return cwd


@pytest.mark.slow
def test_the_snippets_that_read_a_corpus_run_as_written(default_build):
    snippets = code_blocks((REPO / "docs" / "reading.md").read_text(), "python")
    assert len(snippets) == 7
    for snippet in snippets:
        result = run_python(snippet, default_build)
        assert result.returncode == 0, f"{snippet}\n{result.stderr}"
        assert result.stdout.strip(), snippet


# README first: its commands build the corpus that the docs' rebuild and verify name.
DOCUMENTS = ("README.md", *sorted(f"docs/{page.name}" for page in (REPO / "docs").glob("*.md")), "benchmarks/README.md")
COMMAND = re.compile(r"(python|webcorpus|pip|dask|PATH=)")

# Commands the docs show that cannot run in a test here, by what they need, and where they are covered.
NEEDS_A_CLUSTER = re.compile(r"gs://|s3://|DataflowRunner|FlinkRunner|PortableRunner|DaskRunner|SCHEDULER|"
                             r"^dask |worker_pool_main|local_job_service_main")  # tests/test_engines.py runs them
# Commands that read Common Crawl over the internet (a crawl by name, an https:// input): tests/test_crawl.py runs the
# same reading against a local server.
NEEDS_THE_INTERNET = re.compile(r"--crawl |https?://")
INSTALLS = re.compile(r"^(python -m )?pip install|^python -m venv ")  # .ci/run installs; their files must exist
RUNS_THE_TESTS = "python -m pytest"
# Measurements that take minutes (the benchmarks, the study of the whole dev corpus): their --help is run.
MEASURES = re.compile(r"^python -m benchmarks\.(?!compression_study )"
                      r"|^python -m benchmarks\.compression_study --input '\.\./shared")


def documented_commands() -> list[tuple[str, str]]:
    """(document, command) for every command line in a fenced block of the docs, continuations joined."""
    commands = []
    for document in DOCUMENTS:
        for language, body in FENCE.findall((REPO / document).read_text()):
            if language:
                continue
            for line in re.sub(r"\\\n\s*", " ", body).splitlines():
                line = line.split("  #", 1)[0].strip()
                for part in line.split(" && "):
                    if COMMAND.match(part):
                        commands.append((document, part.strip()))
    return commands


def test_every_documented_command_is_known_to_this_test():
    commands = documented_commands()
    assert len(commands) >= 25
    for document, command in commands:
        cluster = bool(NEEDS_A_CLUSTER.search(command))
        kinds = [cluster, bool(NEEDS_THE_INTERNET.search(command)) and not cluster, bool(INSTALLS.match(command)),
                 command == RUNS_THE_TESTS, bool(MEASURES.match(command))]
        assert sum(kinds) <= 1, (document, command)


def test_the_files_the_install_commands_name_exist():
    for _, command in documented_commands():
        if INSTALLS.match(command):
            for requirements in re.findall(r"-r (\S+)", command):
                assert (REPO / requirements).is_file(), command


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """A directory where the docs' example inputs exist: crawl/ and warc/ hold generated WARC files, wet/ a WET
    file."""
    from pipeline.sample import Capture, sample_captures, warc_bytes
    from tests.helpers import wet_bytes

    directory = tmp_path_factory.mktemp("docs")
    for folder, name in (("crawl", "a.warc.gz"), ("crawl", "b.warc.gz"), ("warc", "a.warc.gz")):
        (directory / folder).mkdir(exist_ok=True)
        captures = sample_captures() if name == "a.warc.gz" else [
            Capture("https://other.example.org/", b"<html><body><div class=warning>x</div><p>Other</p></body></html>")]
        (directory / folder / name).write_bytes(warc_bytes(captures, filename=name))
    (directory / "wet").mkdir()
    (directory / "wet" / "a.warc.wet.gz").write_bytes(wet_bytes([
        ("https://example.org/", "A page of text that a crawler extracted, with words enough to be one.")]))
    return directory


# The documents after README run two at a time: each command is a process of its own, mostly Beam starting, and the
# machine the suite is timed on has two cores. A document's commands still run one after the other, in its order.
AT_ONCE = 2


def local_commands() -> dict[str, list[str]]:
    """{document: its commands that run here, in its order}; a measurement's --help in place of the measurement."""
    commands = {}
    for document, command in documented_commands():
        if (NEEDS_A_CLUSTER.search(command) or NEEDS_THE_INTERNET.search(command) or INSTALLS.match(command)
                or command == RUNS_THE_TESTS):
            continue
        measured = bool(MEASURES.match(command))
        commands.setdefault(document, []).append(re.sub(r" \[.*", "", command) + " --help" if measured else command)
    return commands


def run_in_order(lines: list[str], cwd: Path) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Runs the lines one after the other, up to the first that fails."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    results = []
    for line in lines:
        results.append((line, subprocess.run(line, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                                             timeout=600)))
        if results[-1][1].returncode != 0:
            break
    return results


@pytest.mark.slow
def test_every_local_command_of_the_docs_runs_as_written(sandbox):
    """README's first, in its order (its rebuild and verify follow the build they name; the other documents read
    the corpus its first command writes); then every other document's, in each document's order."""
    commands = local_commands()
    readme = commands.pop(DOCUMENTS[0])
    runs = {DOCUMENTS[0]: run_in_order(readme, sandbox)}
    if all(result.returncode == 0 for _, result in runs[DOCUMENTS[0]]):
        with ThreadPoolExecutor(AT_ONCE) as pool:
            runs.update(zip(commands, pool.map(run_in_order, commands.values(), [sandbox] * len(commands))))
    ran = []
    for document, results in runs.items():
        for line, result in results:
            assert result.returncode == 0, f"{document}: {line}\n{result.stderr[-3000:]}"
            ran.append(line)
    assert ran == [line for lines in [readme, *commands.values()] for line in lines]  # every one, none skipped
    assert any(line.startswith("python -m pipeline.verify") for line in ran)
    assert any("--rebuild" in line for line in ran)


def test_the_license_is_apache_2_in_the_repository_the_package_and_the_readme():
    assert (REPO / "LICENSE").read_text().split()[:3] == ["Apache", "License", "Version"]
    metadata = subprocess.run([sys.executable, "setup.py", "--license", "--classifiers"], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
    assert metadata.returncode == 0, metadata.stderr
    assert metadata.stdout.splitlines()[:2] == ["Apache-2.0", "License :: OSI Approved :: Apache Software License"]
    assert "LICENSE" in (REPO / "MANIFEST.in").read_text().split()
    assert "Apache License 2.0 ([LICENSE](LICENSE))" in section((REPO / "README.md").read_text(), "## License")


def test_the_quick_start_says_what_text_holds_and_which_options_change_it():
    """A newcomer reads the quick start only: it says that `text` is minimized, that `--clean-text` is the
    readable text, and that the whole page is kept (menus too), naming options that exist."""
    from pipeline.options import make_parser

    quick_start = section((REPO / "README.md").read_text(), "## Quick start")
    paragraph = next(part for part in quick_start.split("\n\n") if "`text`" in part)
    for words in ("minimized", "`--clean-text`", "`clean_text`", "menus"):
        assert words in paragraph, words
    known = set(re.findall(r"--[a-z-]+", make_parser().format_help()))
    named = set(re.findall(r"`(--[a-z-]+)", paragraph))
    assert {"--clean-text", "--scripts", "--drop-selector"} <= named <= known, named - known


# A path the docs cite: in the repository (one of its directories first), or in the developer data beside it.
CITED_PATH = re.compile(r"(?<![\w/.:-])((?:pipeline|transforms|tests|benchmarks|docs|shared|\.ci)(?:/[\w.-]+)+)")
DEVELOPER_DATA = ("shared/corpus", "shared/peer-warcs")


def test_every_file_the_docs_cite_is_in_the_repository_or_the_developer_data():
    for document in DOCUMENTS:
        for cited in CITED_PATH.findall((REPO / document).read_text()):
            cited = cited.rstrip(".")
            if cited.startswith("shared/"):
                assert cited.startswith(DEVELOPER_DATA), f"{document} cites {cited}, outside the repository"
            else:
                assert (REPO / cited).exists() or "*" in cited, f"{document} cites {cited}, which is not there"


def test_the_compression_doc_says_the_block_size_the_study_charts():
    from benchmarks.compression_study.report import size_label
    from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL

    charted = re.search(r"one point per codec and level at (?:the pipeline's default block size, )?(\d+ [KM]iB)",
                        re.sub(r"\s+", " ", (REPO / "docs" / "compression.md").read_text()))
    assert charted[1] == size_label(DEFAULT_SYNC_INTERVAL)


@pytest.mark.parametrize("index", range(9))
@pytest.mark.slow
def test_each_reproduction_of_an_upstream_bug_still_shows_it(index):
    """docs/upstream.md's reproductions run as written and their bug is still there (each asserts it): when one
    fails, the library has fixed it, and the workaround in its compat module can go."""
    reproductions = code_blocks((REPO / "docs" / "upstream.md").read_text(), "python")
    assert len(reproductions) == 9
    result = subprocess.run([sys.executable, "-c", reproductions[index]], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{reproductions[index]}\n{result.stderr[-3000:]}"


README_LINES = 250  # a README, not a manual: the manual is docs/


def test_the_readme_is_short_and_its_map_links_every_page_of_docs():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < README_LINES
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", section(readme, "## Documentation")))
    pages = {f"docs/{page.name}" for page in (REPO / "docs").glob("*.md")}
    assert pages - linked == set(), "README's map of docs/ lacks these pages"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown`: lowercase, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", FENCE.sub("", markdown), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_every_link_of_the_docs_leads_to_a_file_and_a_heading_that_exist():
    for document in DOCUMENTS:
        path = REPO / document
        for target in LINK.findall(FENCE.sub("", path.read_text())):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file) if file else path
            assert linked.exists(), f"{document} links to {target}, which is not there"
            if anchor:
                assert anchor in heading_anchors(linked.read_text()), f"{document} links to {target}: no such heading"


def avro_type_in_words(avro_type) -> str:
    """A field's Avro type as the schema table writes it: `long`, `array of string`, `map of string`."""
    if isinstance(avro_type, dict):
        kind = avro_type["type"]
        return f"{kind} of {avro_type_in_words(avro_type['items' if kind == 'array' else 'values'])}"
    return avro_type


def markdown_table(markdown: str, header: str) -> list[list[str]]:
    """The cells of the rows of the table under `header` (its first line), up to the first line that is no row."""
    lines = markdown.splitlines()
    rows = []
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("| "):
            break
        rows.append([cell.strip() for cell in line[2:].removesuffix(" |").split(" | ")])
    return rows


def test_the_schema_table_of_the_docs_is_the_schema_the_code_writes():
    """A row per field a record can have, in the schema's order, with its name and type."""
    from transforms.stages.compress_write.schema import FIELD_NAMES, corpus_schema

    schema = corpus_schema(FIELD_NAMES)
    heading = f"## The Avro schema (`{schema['namespace']}.{schema['name']}`)"
    rows = markdown_table(section((REPO / "docs" / "output.md").read_text(), heading), "| field | type | meaning |")
    assert [(name, avro_type) for name, avro_type, _ in rows] == [
        (f"`{field['name']}`", avro_type_in_words(field["type"])) for field in schema["fields"]]
    assert all(meaning for _, _, meaning in rows)
