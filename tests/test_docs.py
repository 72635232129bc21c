"""What README.md and docs/ show runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
    """A directory where `python -m pipeline`, as the quick start runs it, wrote `webcorpus-out/`."""
    cwd = tmp_path_factory.mktemp("quick-start")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    built = subprocess.run([sys.executable, "-m", "pipeline", "--quiet"], cwd=cwd, env=env, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return cwd


def test_the_readme_snippets_that_read_a_corpus_run_as_written(default_build):
    snippets = code_blocks(section((REPO / "README.md").read_text(), "### Reading the corpus"), "python")
    assert len(snippets) == 3
    for snippet in snippets:
        result = run_python(snippet, default_build)
        assert result.returncode == 0, f"{snippet}\n{result.stderr}"
        assert result.stdout.strip(), snippet
