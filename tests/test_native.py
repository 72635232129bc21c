"""The C accelerators are optional: each failure is one warning line and the pure-Python path
(transforms/native.py), which gives the same pages; reading a corpus needs no parser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms import minimize_text, native

ROOT = Path(__file__).resolve().parent.parent
PAGE = ("<html lang=en><head><title>T</title><link rel=canonical href=/c></head><body><p>При<b>в</b>ет "
        "<a href=/1>one</a><a href=/2>two</a> &amp;amp; <abbr title='W H O'>WHO</abbr></p><div hidden>no</div>"
        "<p>Ɓ µ ½ straße €5</p></body></html>")
# What a child prints: which path ran, and CleanHtml's and MinimizeText's result for PAGE.
PROBE = f"""
import json
from transforms import native
from transforms.clean_html import HtmlCleaner
from transforms.minimize_text import minimize_blocks
page = HtmlCleaner().clean({PAGE!r}, "https://example.org/a/")
print(json.dumps([native.accelerator(), page.blocks, page.title, page.links, page.lang, page.meta,
                  minimize_blocks(page.blocks)]))
"""


def run_python(code: str, **environment: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != native.PURE_PYTHON_VARIABLE}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(env, **environment), capture_output=True,
                          text=True, check=True)


def warnings_of(child: subprocess.CompletedProcess) -> list[str]:
    return [line for line in child.stderr.splitlines() if "accelerator" in line]


def probe(prelude: str = "", **environment: str) -> tuple[list, list[str]]:
    child = run_python(prelude + PROBE, **environment)
    return json.loads(child.stdout.splitlines()[-1]), warnings_of(child)


@pytest.fixture(scope="module")
def c_result():
    result, warnings = probe()
    if result[0] != "c":
        pytest.skip(f"the C accelerators are not all in use here ({result[0]}): {warnings}")
    assert warnings == []
    return result


def test_the_environment_variable_forces_the_pure_path_without_a_warning(c_result):
    result, warnings = probe(**{native.PURE_PYTHON_VARIABLE: "1"})
    assert result[0] == "python" and warnings == []
    assert result[1:] == c_result[1:]


def test_a_walk_that_cannot_bind_is_one_warning_and_the_pure_path(c_result):
    # selectolax's module seen as another library: lexbor's symbols are missing where the walk looks.
    prelude = "import selectolax.lexbor, transforms._links\nselectolax.lexbor.__file__ = transforms._links.__file__\n"
    result, warnings = probe(prelude)
    assert result[0] == "c for _links, _code_page, python for _lexbor_walk"
    assert len(warnings) == 1 and "_lexbor_walk" in warnings[0] and "does not export" in warnings[0]
    assert result[1:] == c_result[1:]


def test_modules_that_do_not_import_are_one_warning_line_and_the_pure_path(c_result):
    # A module that is not built imports as this does (sys.modules[name] = None raises ImportError).
    prelude = "import sys\nfor name in ('_lexbor_walk', '_links', '_code_page'):\n    sys.modules['transforms.' + name] = None\n"
    result, warnings = probe(prelude)
    assert result[0] == "python"
    assert len(warnings) == 1 and all(name in warnings[0] for name in native.ACCELERATORS)
    assert result[1:] == c_result[1:]


def test_reading_a_corpus_imports_no_parser():
    child = run_python("import sys, transforms.read_corpus, pipeline.verify\n"
                       "print(sorted(name for name in sys.modules if name.split('.')[0] == 'selectolax'\n"
                       "             or name == 'transforms.clean_html'))")
    assert child.stdout.split()[-1] == "[]"


@pytest.mark.skipif(minimize_text._code_page is None, reason="the C code pages are not in use here")
@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("aZ  \n\t\xa0.,-'\u00ad\u200bµ½™…€ßÄéñœšžПриветЁё\u0301\u2013\u2019日\x02\x01"), max_size=40),
       scripts=st.sampled_from([None, ("latin",), ("all",), ("cyrillic", "greek")]))
def test_both_code_page_paths_give_the_same_lines(text, scripts):
    pages = minimize_text.script_rules(scripts).code_pages
    accelerated = [page.lines(text) for page in pages]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minimize_text, "_code_page", None)
        assert [page.lines(text) for page in pages] == accelerated
