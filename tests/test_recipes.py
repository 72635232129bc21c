"""`--recipe NAME`: the options it sets, the user's own winning, the manifest recording them; and the note of a build
with language-model rules that writes no readable text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.options import parse_settings
from pipeline.recipes import RECIPES, unreadable_text_note
from pipeline.settings import settings_from_manifest
from tests.test_cli import run_main

REPO = Path(__file__).resolve().parent.parent


def test_a_recipe_sets_the_options_it_names():
    settings = parse_settings(["--recipe", "llm-english"])
    assert settings == parse_settings(["--recipe", "llm-english", *RECIPES["llm-english"]])
    assert (settings.languages, settings.quality, settings.format) == (("en",), ("fineweb-recipe",), "parquet")
    assert settings.clean_text and settings.pii and settings.respect_opt_out and settings.near_dedup is not None
    assert "clean_text" in settings.written_fields() and "html" not in settings.written_fields()


def test_the_users_own_options_win_over_the_recipes():
    settings = parse_settings(["--recipe", "llm-english", "--languages", "de", "--format", "jsonl",
                               "--fields", "url,text"])
    assert (settings.languages, settings.format, settings.fields) == (("de",), "jsonl", ("url", "text"))
    assert settings.quality == ("fineweb-recipe",)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_recipe_is_a_valid_build_with_readable_text(name):
    settings = parse_settings(["--recipe", name])
    assert settings.recipe == name
    assert "clean_text" in settings.written_fields()
    assert unreadable_text_note(settings) is None


def test_the_manifest_records_the_recipe_and_its_options_expanded_and_a_rebuild_repeats_them():
    settings = parse_settings(["--recipe", "search-index"])
    identity = settings.build_identity()
    assert identity["recipe"] == "search-index"
    assert (identity["format"], identity["main_content"], identity["fields"]) == (
        "jsonl", True, ["url", "warc_date", "title", "meta", "clean_text"])
    again = settings_from_manifest({"options": identity}, "out", (), "manifest.json", quiet=True)
    assert again.build_identity() == identity
    # A build without a recipe records none: its identity, and so its bytes, are what they were.
    assert "recipe" not in parse_settings([]).build_identity()


def test_a_manifest_naming_no_recipe_is_refused_in_one_line():
    identity = parse_settings([]).build_identity()
    with pytest.raises(ValueError, match=r"^no recipe 'llm-klingon' \(recipes: archive, llm-english"):
        settings_from_manifest({"options": dict(identity, recipe="llm-klingon")}, "out", (), "m.json", quiet=True)


@pytest.mark.parametrize("argv, message", [
    (["--recipe", "llm-englsh"], "argument --recipe: invalid choice: 'llm-englsh'"),
    (["--rebuild", "corpus/manifest.json", "--recipe", "archive"], "leave out --recipe"),
])
def test_a_wrong_recipe_is_one_line(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(argv)
    assert code == 2 and len(stderr.splitlines()) == 1 and message in stderr, stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, noted", [
    (["--quality", "fineweb"], True),
    (["--quality", "fineweb", "--fields", "url,text"], True),
    (["--quality", "fineweb", "--clean-text"], False),
    (["--quality", "fineweb", "--fields", "url,clean_text"], False),
    (["--language"], False),
    ([], False),
])
def test_language_model_rules_without_readable_text_are_noted(argv, noted):
    note = unreadable_text_note(parse_settings(argv))
    assert bool(note) == noted
    if noted:
        assert "\n" not in note and "--clean-text" in note and "--recipe" in note


def test_the_recipes_page_shows_each_recipe_and_its_flags():
    page = (REPO / "docs" / "recipes.md").read_text()
    for name, flags in RECIPES.items():
        assert f"python -m pipeline --recipe {name}" in page, name
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        assert f"`{' '.join(flags)}`" in row, name


@pytest.mark.slow
def test_a_recipe_build_rebuilds_byte_for_byte_and_a_quality_build_without_readable_text_says_so(tmp_path,
                                                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)  # (the builds run in this process: Beam starting in one of its own is not the point)
    code, _, err = run_main(["--recipe", "llm-russian", "--quiet", "--output", str(tmp_path / "ru")])
    assert code == 0, err
    assert "note:" not in err
    options = json.loads((tmp_path / "ru" / "manifest.json").read_text())["options"]
    assert (options["recipe"], options["languages"], options["format"]) == ("llm-russian", ["ru"], "parquet")
    code, out, err = run_main(["--rebuild", str(tmp_path / "ru" / "manifest.json"), "--quiet", "--output",
                               str(tmp_path / "again")])
    assert code == 0, out + err
    assert "Rebuild is byte-identical" in out
    code, _, err = run_main(["--quality", "gopher", "--quiet", "--output", str(tmp_path / "plain")])
    assert code == 0, err
    (note,) = [line for line in err.splitlines() if "note:" in line]
    assert re.match(r"python -m pipeline: note: --quality without --clean-text: the corpus holds only the minimized "
                    r"text", note)
