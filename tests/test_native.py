"""The C accelerators are optional: each failure is one warning line and the pure-Python path
(transforms/native/), which gives the same pages; reading a corpus needs no parser."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lexbor_headers
from transforms.stages import minimize_text
from transforms import native

ROOT = Path(__file__).resolve().parent.parent
PAGE = ("<html lang=en><head><title>T</title><link rel=canonical href=/c></head><body><p>При<b>в</b>ет "
        "<a href=/1>one</a><a href=/2>two</a> &amp;amp; <abbr title='W H O'>WHO</abbr></p><div hidden>no</div>"
        "<p>Ɓ µ ½ straße €5</p></body></html>")
# What a child prints: which path ran, and CleanHtml's and MinimizeText's result for PAGE.
PROBE = f"""
import json
from transforms import native
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.stages.minimize_text import minimize_blocks
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


@pytest.mark.slow
def test_the_environment_variable_forces_the_pure_path_without_a_warning(c_result):
    result, warnings = probe(**{native.PURE_PYTHON_VARIABLE: "1"})
    assert result[0] == "python" and warnings == []
    assert result[1:] == c_result[1:]


@pytest.mark.slow
def test_a_walk_that_cannot_bind_is_one_warning_and_the_pure_path(c_result):
    # selectolax's module seen as another library: lexbor's symbols are missing where the walk looks.
    prelude = "import selectolax.lexbor, transforms.native._links\nselectolax.lexbor.__file__ = transforms.native._links.__file__\n"
    result, warnings = probe(prelude)
    assert result[0] == ("c for _links, _code_page, _ngrams, _classify, _gopher, _line_hashes, _words, _scan, _blocks, "
                         "python for _lexbor_walk")
    assert len(warnings) == 1 and "_lexbor_walk" in warnings[0] and "does not export" in warnings[0]
    assert result[1:] == c_result[1:]


@pytest.mark.parametrize("prelude, reason", [
    # Another selectolax release installed than the one whose lexbor headers the walk was compiled against.
    ("import importlib.metadata\nversion = importlib.metadata.version\n"
     "importlib.metadata.version = lambda name: '1.0.3' if name == 'selectolax' else version(name)\n",
     "selectolax 1.0.3 is installed"),
    # A selectolax built with another lexbor than its sdist's.
    ("import selectolax.lexbor\nselectolax.lexbor.LEXBOR_VERSION_MINOR += 1\n", "runs lexbor 3.2"),
    # A walk built in place by an older webcorpus, without lexbor's headers.
    ("import transforms.native._lexbor_walk as walk\ndel walk.SELECTOLAX_VERSION\n", "built without lexbor's headers"),
])
@pytest.mark.slow
def test_a_walk_compiled_for_another_selectolax_or_lexbor_is_one_warning_and_the_pure_path(c_result, prelude, reason):
    result, warnings = probe(prelude)
    assert result[0] == ("c for _links, _code_page, _ngrams, _classify, _gopher, _line_hashes, _words, _scan, _blocks, "
                         "python for _lexbor_walk")
    assert len(warnings) == 1 and "_lexbor_walk" in warnings[0] and reason in warnings[0], warnings
    assert result[1:] == c_result[1:]


@pytest.mark.slow
def test_the_walk_is_built_for_the_pinned_selectolax(c_result):
    from transforms.native import _lexbor_walk

    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("selectolax")]
    assert pins == [f"selectolax=={lexbor_headers.SELECTOLAX_VERSION}"]
    assert _lexbor_walk.SELECTOLAX_VERSION == lexbor_headers.SELECTOLAX_VERSION
    assert _lexbor_walk.LEXBOR_VERSION[:2] == (3, 1)


def test_lexbor_headers_refuse_an_sdist_of_other_bytes(tmp_path, monkeypatch):
    other = tmp_path / "selectolax-1.0.2.tar.gz"
    other.write_bytes(b"not selectolax")
    monkeypatch.setenv(lexbor_headers.SDIST_VARIABLE, str(other))
    with pytest.raises(lexbor_headers.HeadersUnavailable, match="sha256"):
        lexbor_headers.headers(tmp_path / "build")
    assert not (tmp_path / "build").exists()


def test_lexbor_headers_extract_only_the_headers_of_lexbor_source(tmp_path):
    sdist = tmp_path / "sdist.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        def add(name, data=b"x", kind=tarfile.REGTYPE, target=""):
            member = tarfile.TarInfo(name)
            member.type, member.linkname, member.size = kind, target, len(data) if kind == tarfile.REGTYPE else 0
            archive.addfile(member, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        add("s-1/lexbor/source/lexbor/core/base.h", b"#define LEXBOR_VERSION_MAJOR 3")
        add("s-1/lexbor/source/lexbor/dom/node.h")
        add("s-1/lexbor/source/lexbor/dom/node.c")
        add("s-1/lexbor/source/../../escaped.h")
        add("s-1/lexbor/source/lexbor/link.h", kind=tarfile.SYMTYPE, target="/etc/passwd")
        add("s-1/selectolax/lexbor.h")
    into = tmp_path / "include"
    assert lexbor_headers.extract_headers(sdist, into) == 2
    assert sorted(str(path.relative_to(into)) for path in into.rglob("*") if path.is_file()) == [
        "lexbor/core/base.h", "lexbor/dom/node.h"]
    assert not (tmp_path / "escaped.h").exists()


@pytest.mark.slow
def test_without_lexbor_headers_the_walk_is_not_built_and_the_rest_is(tmp_path):
    """setup.py offline, without a copy of the sdist: one warning, no walk, the other modules built."""
    source = tmp_path / "source"
    shutil.copytree(ROOT / "transforms", source / "transforms", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for name in ("setup.py", "lexbor_headers.py", "requirements.txt", "requirements-languages.txt", "README.md"):
        shutil.copy(ROOT / name, source / name)
    (tmp_path / "empty").write_bytes(b"")
    env = dict(os.environ, **{lexbor_headers.SDIST_VARIABLE: str(tmp_path / "empty")})
    child = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-lib", "lib", "--build-temp", "temp"],
                           cwd=source, env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    built = sorted(path.name.split(".")[0] for path in (source / "lib" / "transforms" / "native").glob("*.so"))
    assert built == ["_blocks", "_classify", "_code_page", "_gopher", "_line_hashes", "_links", "_ngrams", "_scan", "_words"]
    warnings = [line for line in child.stderr.splitlines() if "_lexbor_walk" in line]
    assert len(warnings) == 1 and "no lexbor headers" in warnings[0] and "sha256" in warnings[0], child.stderr[-3000:]


@pytest.mark.slow
def test_modules_that_do_not_import_are_one_warning_line_and_the_pure_path(c_result):
    # A module that is not built imports as this does (sys.modules[name] = None raises ImportError).
    prelude = "import sys\nfor name in ('_lexbor_walk', '_links', '_code_page', '_ngrams', '_classify', '_gopher', '_line_hashes', '_words', '_scan', '_blocks'):\n    sys.modules['transforms.native.' + name] = None\n"
    result, warnings = probe(prelude)
    assert result[0] == "python"
    assert len(warnings) == 1 and all(name in warnings[0] for name in native.ACCELERATORS)
    assert result[1:] == c_result[1:]


@pytest.mark.slow
def test_reading_a_corpus_imports_no_parser():
    child = run_python("import sys, transforms.corpus.read_corpus, pipeline.verify\n"
                       "print(sorted(name for name in sys.modules if name.split('.')[0] == 'selectolax'\n"
                       "             or name == 'transforms.stages.clean_html.clean_html' or name.startswith('transforms.stages.clean_html')))")
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


@pytest.mark.skipif(minimize_text._code_page is None, reason="the C code pages are not in use here")
@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("aZ  \n.,-µªºßÄéñœПриветЁё\u0101\u0131\u0301\u03a3\u03bc\u1e9e日\U0001f642\ufb01\x02"),
                    max_size=30),
       scripts=st.sampled_from([None, ("latin",), ("all",), ("cyrillic", "greek")]))
def test_both_paths_find_the_same_letters_a_text_can_lose(text, scripts):
    rules = minimize_text.script_rules(scripts)
    accelerated = rules.outside_page(text), minimize_text.dropped_letter_share(text, text.lower(), rules)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minimize_text, "_code_page", None)
        assert (rules.outside_page(text), minimize_text.dropped_letter_share(text, text.lower(), rules)) == accelerated


@pytest.mark.skipif(minimize_text._code_page is None, reason="the C code pages are not in use here")
@settings(max_examples=300, deadline=None)
@given(blocks=st.lists(st.text(st.sampled_from("aZ  \t\xa0.,-'µ½…€ßéПриветЁ\u0301\u0101\u0131日本\U0001f642\x02\x01"),
                               max_size=20), max_size=6),
       scripts=st.sampled_from([None, ("latin",), ("all",), ("cyrillic", "greek")]))
def test_both_paths_minimize_pages_with_characters_outside_the_code_pages_alike(blocks, scripts):
    # Such a page's lines are marked (`CodePage.marked_lines`): in C a MARK for each such character, in Python one
    # for each run of them; only the marked lines differ, and they take the rules as written.
    accelerated = minimize_text.minimize_blocks(blocks, scripts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minimize_text, "_code_page", None)
        assert minimize_text.minimize_blocks(blocks, scripts) == accelerated


def test_lexbor_headers_from_the_named_sdist_into_a_build_directory_not_yet_made(tmp_path, monkeypatch):
    """A fresh clone has no build/: the sdist that SDIST_VARIABLE names is extracted there all the same."""
    sdist = tmp_path / "selectolax-1.0.2.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        member = tarfile.TarInfo("s-1/lexbor/source/lexbor/core/base.h")
        member.size = 2
        archive.addfile(member, io.BytesIO(b"/*"))
    monkeypatch.setattr(lexbor_headers, "SDIST_SHA256", hashlib.sha256(sdist.read_bytes()).hexdigest())
    monkeypatch.setenv(lexbor_headers.SDIST_VARIABLE, str(sdist))
    include = lexbor_headers.headers(tmp_path / "clone" / "build")
    assert (include / "lexbor" / "core" / "base.h").read_bytes() == b"/*"


@pytest.mark.skipif(minimize_text._code_page is None, reason="the C code pages are not in use here")
def test_both_letter_counts_agree_on_every_code_point():
    # The C count reads Python's Unicode database as `re`'s `[\W\d_]` does; any character it told otherwise shows here.
    not_letters = re.compile(r"[\W\d_]+")
    differing = [code for code in range(sys.maxunicode + 1)
                 if minimize_text._code_page.letters(chr(code)) != len(not_letters.sub("", chr(code)))]
    assert differing == []
    text = "Straße 12, Привет_мир! 日本語 ½ Ⅳ \u0301é"
    assert minimize_text._letters(text) == len(not_letters.sub("", text))
