"""Manifests that a build of this user did not sign (pipeline/signing.py) make no build delete, and no rebuild
read, anything."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from pipeline.signing import KEY_VARIABLE, key_path, sign, signing_key
from tests.test_cli import run_main
from tests.test_publish import build_argv, error_lines, snapshot
from transforms.manifest import HMAC_FIELD, MANIFEST_NAME, seal


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    from pipeline.sample import sample_captures, warc_bytes

    directory = tmp_path_factory.mktemp("in")
    (directory / "a.warc.gz").write_bytes(warc_bytes(sample_captures()[:4], filename="a.warc.gz"))
    return directory


@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("reference") / "out"
    code, _, stderr = run_main(build_argv(inputs, output))
    assert code == 0, stderr
    return output


def manifest_of(output: Path) -> dict:
    return json.loads((output / MANIFEST_NAME).read_text())


def forged(names: list[str]) -> dict:
    """A manifest as anyone can write one: its checksum holds, it lists what it likes."""
    return seal({"manifest_version": 1, "inputs": [], "options": {},
                 "outputs": [{"path": name, "size": 1, "sha256": "0" * 64} for name in names]})


@pytest.fixture
def users_dir(tmp_path) -> Path:
    """An output directory where a user keeps files of their own."""
    output = tmp_path / "out"
    (output / "userdir").mkdir(parents=True)
    (output / "userdir" / "notes.txt").write_text("years of work")
    (output / "thesis.txt").write_text("a thesis")
    return output


# --- a build deletes only what its own earlier build wrote -----------------------------------------------

@pytest.mark.parametrize("names", [["userdir", "thesis.txt"], [".webcorpus.lock"], ["corpus-00000-of-00001.avro"]])
def test_a_forged_manifest_makes_a_build_delete_nothing_and_publish_nothing(inputs, users_dir, names):
    (users_dir / MANIFEST_NAME).write_text(json.dumps(forged(names)))
    before = snapshot(users_dir)
    code, _, stderr = run_main(build_argv(inputs, users_dir))
    assert code == 2, stderr
    [line] = error_lines(stderr)
    assert "is not a manifest that a build of this user signed" in line and f"no {HMAC_FIELD}" in line, line
    assert snapshot(users_dir) == before and (users_dir / "userdir" / "notes.txt").read_text() == "years of work"
    assert not list(users_dir.glob("corpus-*"))


def test_a_manifest_signed_with_another_key_is_not_ours(inputs, users_dir):
    (users_dir / MANIFEST_NAME).write_text(json.dumps(sign(forged(["thesis.txt"]), b"someone else's key")))
    before = snapshot(users_dir)
    code, _, stderr = run_main(build_argv(inputs, users_dir))
    assert code == 2
    [line] = error_lines(stderr)
    assert f"its {HMAC_FIELD} does not verify with this user's key" in line, line
    assert snapshot(users_dir) == before


def test_a_signed_manifest_may_only_have_a_build_move_the_files_a_build_writes(inputs, users_dir):
    (users_dir / MANIFEST_NAME).write_text(json.dumps(sign(forged(["thesis.txt"]), signing_key())))
    before = snapshot(users_dir)
    code, _, stderr = run_main(build_argv(inputs, users_dir))
    assert code == 2
    [line] = error_lines(stderr)
    assert "lists 'thesis.txt', which is no file a build writes" in line, line
    assert snapshot(users_dir) == before


def test_a_listed_name_that_is_now_a_directory_is_in_the_way_and_kept(reference, inputs, tmp_path):
    output = Path(shutil.copytree(reference, tmp_path / "out"))
    (output / "report.html").unlink()
    (output / "report.html").mkdir()
    (output / "report.html" / "mine.txt").write_text("kept")
    code, _, stderr = run_main(build_argv(inputs, output))
    assert code == 2
    [line] = error_lines(stderr)
    assert "report.html is in the way: it is not a regular file" in line, line
    assert (output / "report.html" / "mine.txt").read_text() == "kept"


def test_a_build_signs_its_manifest_and_the_next_build_replaces_it(reference, inputs, tmp_path):
    output = Path(shutil.copytree(reference, tmp_path / "out"))
    assert manifest_of(output)[HMAC_FIELD] == sign(manifest_of(output), signing_key())[HMAC_FIELD]
    code, _, stderr = run_main(build_argv(inputs, output))
    assert code == 0, stderr
    assert snapshot(output) == snapshot(reference)


def test_the_key_is_made_once_readable_by_its_user_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    assert signing_key() is None
    key = signing_key(create=True)
    assert key_path() == tmp_path / "config" / "webcorpus" / "seal.key"
    assert stat.S_IMODE(os.stat(key_path()).st_mode) == 0o600 and len(key) == 64
    assert signing_key(create=True) == key == signing_key()
    monkeypatch.setenv(KEY_VARIABLE, "a team's secret")
    assert signing_key() == b"a team's secret"
