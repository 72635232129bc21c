"""Manifests that a build of this user did not sign (pipeline/signing.py) make no build delete, and no rebuild
read, anything."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from pipeline.signing import KEY_VARIABLE, SigningKeyUnavailable, key_path, sign, signature_problem, signing_key
from tests.test_cli import run_main
from tests.test_publish import build_argv, error_lines, snapshot
from transforms.report.manifest import HMAC_FIELD, MANIFEST_NAME, seal


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
    assert stat.S_IMODE(os.stat(key_path().parent).st_mode) == 0o700
    assert signing_key(create=True) == key == signing_key()
    monkeypatch.setenv(KEY_VARIABLE, "a team's secret")
    assert signing_key() == b"a team's secret"


@pytest.fixture
def own_key(tmp_path, monkeypatch) -> Path:
    """The path of this user's key, made, under a config directory of the test's own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    signing_key(create=True)
    return key_path()


def refusal(create: bool = False) -> str:
    with pytest.raises(SigningKeyUnavailable) as refused:
        signing_key(create=create)
    [line] = str(refused.value).splitlines()
    return line


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o644], ids=oct)
def test_a_key_others_may_write_or_read_is_refused_and_how_to_mend_it_is_said(own_key, mode):
    own_key.chmod(mode)
    line = refusal(create=True)
    assert f"can be read or written by others (mode {mode:04o})" in line and f"chmod 600 {own_key}" in line, line
    own_key.chmod(0o600)
    assert signing_key() == own_key.read_bytes().strip()


@pytest.mark.parametrize("which", ["its own", "the config directory", "group-writable"])
def test_a_key_in_a_directory_others_may_write_is_refused(own_key, which):
    directory = own_key.parent if which == "its own" else own_key.parent.parent
    directory.chmod(0o775 if which == "group-writable" else 0o777)
    line = refusal(create=True)
    assert f"the signing key's directory {directory} is writable by others" in line, line
    assert f"chmod go-w {directory}" in line, line
    directory.chmod(0o700)
    assert signing_key() is not None


def test_a_key_directory_others_may_write_is_refused_before_a_key_is_made_in_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    (tmp_path / "config" / "webcorpus").mkdir(parents=True)
    (tmp_path / "config" / "webcorpus").chmod(0o777)
    assert "is writable by others" in refusal(create=True)
    assert not key_path().exists()


@pytest.mark.parametrize("kind", ["a link to a key of ours", "a link to /dev/zero", "a FIFO", "a directory"])
def test_a_key_that_is_no_regular_file_is_not_read(own_key, tmp_path, kind):
    elsewhere = tmp_path / "elsewhere.key"
    own_key.rename(elsewhere)
    if kind == "a FIFO":
        os.mkfifo(own_key, 0o600)
    elif kind == "a directory":
        own_key.mkdir(0o700)
    else:
        own_key.symlink_to(elsewhere if kind == "a link to a key of ours" else "/dev/zero")
    line = refusal(create=True)
    shown = "a symbolic link" if kind.startswith("a link") else kind
    assert f"the signing key {own_key} is not a regular file ({shown}): remove it" in line, line


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
@pytest.mark.parametrize("which", ["the key", "its directory"])
def test_a_key_or_directory_of_another_user_is_refused(own_key, which):
    os.chown(own_key if which == "the key" else own_key.parent, 4321, -1)
    line = refusal()
    assert "belongs to another user (uid 4321)" in line, line


def test_a_refused_key_makes_the_check_of_a_manifest_say_why_in_one_line(own_key):
    own_key.chmod(0o666)
    problem = signature_problem(sign(forged([]), b"a key"))
    assert problem.startswith(f"its {HMAC_FIELD} cannot be checked: ") and "chmod 600" in problem, problem


def test_a_build_with_a_key_others_may_write_refuses_in_one_line(inputs, own_key, tmp_path):
    own_key.chmod(0o666)
    code, _, stderr = run_main(build_argv(inputs, tmp_path / "out"))
    assert code == 2
    [line] = error_lines(stderr)
    assert f"chmod 600 {own_key}" in line, line
    assert not (tmp_path / "out").exists()


# --- a rebuild reads only what a build could have been given ----------------------------------------------

def rebuild(manifest: dict, tmp_path: Path, *flags: str) -> "subprocess.CompletedProcess":
    """`--rebuild` of `manifest` in a process of its own, with a minute and 2 GiB: a file read forever, or
    whole, fails the test instead of the machine."""
    import resource
    import subprocess
    import sys

    from tests.test_cli import REPO

    path = tmp_path / "given-manifest.json"
    path.write_text(json.dumps(manifest))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run([sys.executable, "-m", "pipeline", "--rebuild", str(path), "--output",
                           str(tmp_path / "again"), "--quiet", *flags], preexec_fn=limit, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)


def with_inputs(manifest: dict, paths: list[str]) -> dict:
    options = dict(manifest["options"], inputs=paths)
    return seal(dict(manifest, options=options, inputs=[{"path": path, "size": 0, "sha256": "0" * 64}
                                                         for path in paths]))


def test_a_rebuild_refuses_an_edited_manifest(reference, tmp_path):
    manifest = manifest_of(reference)
    manifest["options"]["report_sample"] = 3
    result = rebuild(manifest, tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "manifest_sha256 differs" in line and "--trust-manifest" not in line, line
    assert not (tmp_path / "again").exists()


@pytest.mark.slow
def test_a_rebuild_refuses_a_manifest_no_build_of_this_user_signed_and_says_how_to_take_it(reference, tmp_path):
    unsigned = {key: value for key, value in manifest_of(reference).items() if key != HMAC_FIELD}
    refused = rebuild(unsigned, tmp_path)
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert f"no {HMAC_FIELD}" in line and "add --trust-manifest" in line, line
    assert not (tmp_path / "again").exists()
    trusted = rebuild(unsigned, tmp_path, "--trust-manifest")
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert "byte-identical" in trusted.stdout


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "not-a-warc"])
def test_a_trusted_manifest_has_only_warc_files_read(reference, tmp_path, kind):
    named = tmp_path / "named"
    if kind == "fifo":
        os.mkfifo(named)
    elif kind == "dev-zero":
        named.symlink_to("/dev/zero")
    else:
        named.write_text("root:secret:19000:0:99999:7:::\n")  # what /etc/shadow holds
    result = rebuild(with_inputs(manifest_of(reference), [str(named)]), tmp_path, "--trust-manifest")
    assert result.returncode == 2, result.stderr[-2000:]
    [line] = result.stderr.splitlines()
    assert str(named) in line and ("regular file" in line or "is not a WARC file" in line), line
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize("name", ["/dev/zero", "../elsewhere.txt", "thesis.txt"])
def test_a_rebuild_compares_only_outputs_a_build_writes(reference, tmp_path, name):
    manifest = manifest_of(reference)
    manifest["outputs"].append({"path": name, "size": 1, "sha256": "0" * 64})
    result = rebuild(sign(seal(manifest), signing_key()), tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    [line] = result.stderr.splitlines()
    assert f"lists the output {name!r}, which is no file a build writes" in line, line


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_manifest_path_that_is_no_regular_file_is_not_read(tmp_path, kind):
    import resource
    import subprocess
    import sys

    from tests.test_cli import REPO

    named = tmp_path / "manifest.json"
    if kind == "fifo":
        os.mkfifo(named)
    else:
        named.symlink_to("/dev/zero")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    result = subprocess.run([sys.executable, "-m", "pipeline", "--rebuild", str(named), "--output",
                             str(tmp_path / "again")], preexec_fn=limit, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "not a regular file" in line, line


def test_a_staging_directory_left_in_dir_with_a_fifo_for_its_journal_is_one_line(inputs, tmp_path):
    import subprocess
    import sys

    from pipeline.publish import JOURNAL_NAME, RUN_STAGING_PREFIX
    from tests.test_cli import REPO

    output = tmp_path / "out"
    (output / f"{RUN_STAGING_PREFIX}000000000000").mkdir(parents=True)
    os.mkfifo(output / f"{RUN_STAGING_PREFIX}000000000000" / JOURNAL_NAME)
    result = subprocess.run([sys.executable, "-m", "pipeline", *build_argv(inputs, output)], timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "not a regular file (a FIFO)" in line, line
