"""An earlier corpus survives every run that does not complete: staging, publishing, locks, signals, paths."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from apache_beam.io.filesystems import FileSystems

import pipeline.cli
import pipeline.graph
import pipeline.publish
import transforms.report.report
from pipeline import verify
from pipeline.resumable import RESUME_PREFIX
from pipeline.publish import (LOCK_NAME, RUN_STAGING_PREFIX, OutputBusy, OutputRefused, lock_holder, output_lock,
                              publish, publish_begun, recover)
from pipeline.sample import Capture, sample_captures, warc_bytes
from tests.test_cli import REPO, run_main
from transforms.vocabulary import Duplicate

USER_FILES = {"corpus-final.avro": b"the user's own corpus", "corpus-notes.txt": b"notes",
              "skipped-files.csv": b"a,b\n", "duplicates-todo.md": b"# todo\n"}


def snapshot(directory: Path) -> dict[str, str]:
    """sha256 of every file under `directory`, by relative path; not the work an unfinished build keeps to resume
    (tests/test_resume.py)."""
    return {str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.rglob("*")) if path.is_file()
            and not str(path.relative_to(directory)).startswith(RESUME_PREFIX)}


def build_argv(inputs: Path, output: Path) -> list[str]:
    return ["--input", str(inputs / "*.warc.gz"), "--output", str(output), "--quiet"]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("in")
    (directory / "a.warc.gz").write_bytes(warc_bytes(sample_captures(), filename="a.warc.gz"))
    return directory


@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("reference") / "out"
    code, _, stderr = run_main(build_argv(inputs, output))
    assert code == 0, stderr
    return output


@pytest.fixture
def earlier(reference, tmp_path) -> Path:
    """An output directory holding a complete build of `inputs`."""
    return Path(shutil.copytree(reference, tmp_path / "out"))


@pytest.fixture
def other_inputs(tmp_path) -> Path:
    """Inputs that give a different build than `inputs`."""
    directory = tmp_path / "other-in"
    directory.mkdir()
    pages = [Capture(f"https://other.example.org/{index}", f"<p>Another page number {index}</p>".encode())
             for index in range(3)]
    (directory / "b.warc.gz").write_bytes(warc_bytes(pages, filename="b.warc.gz"))
    return directory


# --- a run that fails leaves the earlier corpus as it was -----------------------------------------

@pytest.mark.slow
def test_a_failing_build_leaves_the_earlier_corpus_as_it_was(earlier, other_inputs, monkeypatch):
    before = snapshot(earlier)

    def broken(named_lines, output_dir):
        raise ValueError("a side file cannot be written")

    monkeypatch.setattr(pipeline.graph, "write_json_lines", broken)
    code, _, stderr = run_main(build_argv(other_inputs, earlier))
    assert code == 1
    [line] = error_lines(stderr)
    assert line.startswith("python -m pipeline: the build failed: ") and "a side file cannot be written" in line
    assert "is as it was" in line
    assert snapshot(earlier) == before
    assert verify.main([str(earlier)]) == 0


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_leaves_the_earlier_corpus_as_it_was(earlier, other_inputs, monkeypatch):
    before = snapshot(earlier)

    def full(named_lines, output_dir):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"{output_dir}/{named_lines[0]}-00000-of-00001.jsonl")

    monkeypatch.setattr(pipeline.graph, "write_json_lines", full)
    logged = io.StringIO()
    handler = logging.StreamHandler(logged)
    logging.getLogger().addHandler(handler)
    try:
        code, _, stderr = run_main(build_argv(other_inputs, earlier))
    finally:
        logging.getLogger().removeHandler(handler)
    assert code == 1
    [line] = error_lines(stderr)
    assert line == f"python -m pipeline: the build failed: the disk is full (No space left on device); " \
                   f"nothing was published, {earlier} is as it was"
    assert "Traceback" not in logged.getvalue()  # the runner's log of the error says nothing more
    assert snapshot(earlier) == before


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB file system (tmpfs), where the system lets the tests mount one (as root on Linux)."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True) if sys.platform == "linux" else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root on Linux); the full disk is injected in "
                    "test_a_full_disk_is_one_line_and_leaves_the_earlier_corpus_as_it_was")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=True)


@pytest.mark.slow
def test_a_really_full_disk_is_one_line_and_leaves_the_earlier_corpus_as_it_was(small_disk, reference, big_inputs):
    earlier = Path(shutil.copytree(reference, small_disk / "out"))
    before = snapshot(earlier)
    free = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 200_000))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "pipeline", *build_argv(big_inputs, earlier)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert error_lines(result.stderr) == [f"python -m pipeline: the build failed: the disk is full (No space left on "
                                          f"device); nothing was published, {earlier} is as it was"]
    assert snapshot(earlier) == before


@pytest.mark.slow
def test_accounting_that_does_not_balance_fails_and_publishes_nothing(earlier, inputs, monkeypatch):
    before = snapshot(earlier)
    # A duplicate that nothing counts: its file reads one record more than it accounts for.
    monkeypatch.setitem(transforms.report.report.TALLY_OF_KIND, Duplicate, lambda duplicate: Counter())
    code, _, stderr = run_main(build_argv(inputs, earlier))
    assert code == 1
    [line] = error_lines(stderr)
    assert "the accounting does not balance" in line
    assert f"input {inputs / 'a.warc.gz'}: read 34, kept + duplicates + skipped + dead letter 33 (+1 unaccounted)" \
        in line
    assert "in total: read 34" in line
    assert snapshot(earlier) == before


@pytest.mark.slow
def test_a_new_build_replaces_only_what_the_earlier_build_wrote(earlier, other_inputs):
    for name, data in USER_FILES.items():
        (earlier / name).write_bytes(data)
    old_shards = {path.name for path in earlier.glob("corpus-*-of-*.avro")}
    code, _, stderr = run_main(build_argv(other_inputs, earlier))
    assert code == 0, stderr
    for name, data in USER_FILES.items():
        assert (earlier / name).read_bytes() == data
    manifest = json.loads((earlier / "manifest.json").read_text())
    listed = {entry["path"] for entry in manifest["outputs"]}
    assert {path.name for path in earlier.iterdir()} == listed | {"manifest.json"} | set(USER_FILES)
    assert [Path(entry["path"]).name for entry in manifest["inputs"]] == ["b.warc.gz"]
    assert old_shards == {"corpus-00000-of-00001.avro"} and "corpus-00000-of-00001.avro" in listed
    # The user's files beside the corpus are no part of it: it verifies intact.
    assert verify.main([str(earlier)]) == 0


def test_a_file_in_the_way_that_no_manifest_lists_is_refused_and_kept(inputs, tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    # What an interrupted run of an older webcorpus left: a shard under its final name, no manifest.
    (output / "corpus-00000-of-00001.avro").write_bytes(b"not ours to remove")
    code, _, stderr = run_main(build_argv(inputs, output))
    assert code == 2
    [line] = error_lines(stderr)
    assert "corpus-00000-of-00001.avro is in the way" in line
    assert snapshot(output) == {"corpus-00000-of-00001.avro": hashlib.sha256(b"not ours to remove").hexdigest()}


# --- paths are paths ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name,sibling", [("run?", "runA"), ("victim-*", "victim-1"), ("set[12]", "set1")])
@pytest.mark.slow
def test_an_output_path_with_glob_characters_touches_no_other_directory(reference, inputs, tmp_path, name, sibling,
                                                                        capsys):
    for directory in (sibling, name):
        shutil.copytree(reference, tmp_path / directory)
    before = snapshot(reference)
    code, _, stderr = run_main(build_argv(inputs, tmp_path / name))
    assert snapshot(tmp_path / sibling) == before
    assert code == 0, stderr
    assert snapshot(tmp_path / name) == before  # the earlier build replaced by the same build
    capsys.readouterr()
    assert verify.main([str(tmp_path / name)]) == 0
    assert "1 corpus files" in capsys.readouterr().out  # not the sibling's too


@pytest.mark.parametrize("pattern, where", [("*", "."), ("**", "corpus"), ("*/*/*", "deeper/corpus")])
def test_an_output_whose_files_the_input_pattern_matches_is_refused(inputs, pattern, where):
    before = snapshot(inputs)
    code, _, stderr = run_main(["--input", str(inputs / pattern), "--output", str(inputs / where), "--quiet"])
    assert code == 2
    [line] = error_lines(stderr)
    assert line.startswith(f"python -m pipeline: error: --input {inputs / pattern} would match {inputs}/"), line
    assert snapshot(inputs) == before and sorted(path.name for path in inputs.iterdir()) == ["a.warc.gz"]


# --- one run at a time ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_second_run_on_a_locked_output_refuses_at_once(earlier, other_inputs):
    before = snapshot(earlier)
    with output_lock(str(earlier)):
        code, _, stderr = run_main(build_argv(other_inputs, earlier))
        assert code == 2
        [line] = error_lines(stderr)
        assert "another run is writing to --output" in line
        assert {name: digest for name, digest in snapshot(earlier).items() if name != LOCK_NAME} == before
    assert snapshot(earlier) == before  # the lock file goes with the lock


@pytest.mark.parametrize("target", ["a file elsewhere", "a dangling link"])
def test_a_lock_note_that_is_a_link_is_refused_and_nothing_is_written_through_it(tmp_path, target):
    elsewhere = tmp_path / "elsewhere.txt"
    if target == "a file elsewhere":
        elsewhere.write_text("a user's file")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / LOCK_NAME).symlink_to(elsewhere)
    with pytest.raises(OutputRefused, match=rf"^{tmp_path}/out/{LOCK_NAME} is not a regular file \(a symbolic link\)"):
        with output_lock(str(tmp_path / "out")):
            pass
    assert (elsewhere.read_text() == "a user's file") if target == "a file elsewhere" else not elsewhere.exists()
    assert (tmp_path / "out" / LOCK_NAME).is_symlink()


@pytest.mark.parametrize("pid", ["notanint", 10 ** 26, [1], None, True, -1])
def test_a_lock_note_whose_pid_is_no_process_id_is_taken_over_in_one_line(tmp_path, pid):
    (tmp_path / LOCK_NAME).write_text(json.dumps(dict(lock_holder(), pid=pid)))
    with output_lock(str(tmp_path)) as taken_over:
        assert taken_over == [f"took over {tmp_path}/{LOCK_NAME}, which names no run (no pid, host and start as a "
                              "run writes them)"]
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_lock_whose_note_was_removed_still_holds(tmp_path):
    with output_lock(str(tmp_path)):
        (tmp_path / LOCK_NAME).unlink()
        with pytest.raises(OutputBusy, match="another run is writing to --output"):
            with output_lock(str(tmp_path)):
                pass
        assert not (tmp_path / LOCK_NAME).exists()  # the refused run made none
    with output_lock(str(tmp_path)) as taken_over:
        assert taken_over == []
    assert list(tmp_path.iterdir()) == []


def test_where_a_directory_cannot_be_locked_its_note_is(tmp_path, monkeypatch):
    # As on NFS, where flock is a byte-range lock that an exclusive lock needs a file open for writing for.
    flock = pipeline.publish.fcntl.flock

    def no_directory_locks(descriptor, operation):
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return flock(descriptor, operation)

    monkeypatch.setattr(pipeline.publish.fcntl, "flock", no_directory_locks)
    with output_lock(str(tmp_path)):
        holder = json.loads((tmp_path / LOCK_NAME).read_text())
        with pytest.raises(OutputBusy, match=f"pid {holder['pid']} on "):
            with output_lock(str(tmp_path)):
                pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_second_run_refuses_while_the_first_runs_even_if_its_lock_note_was_removed(earlier, inputs, other_inputs,
                                                                                    monkeypatch):
    build = pipeline.cli.build
    second = []

    def build_while_a_second_run_starts(settings, total_bytes, units_dir=None, found=None, *source):
        (earlier / LOCK_NAME).unlink()
        second.append(subprocess.run([sys.executable, "-m", "pipeline", *build_argv(inputs, earlier)], cwd=REPO,
                                     env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True))
        return build(settings, total_bytes, units_dir, found, *source)

    monkeypatch.setattr(pipeline.cli, "build", build_while_a_second_run_starts)
    code, stdout, stderr = run_main(build_argv(other_inputs, earlier))
    [refused] = second
    assert refused.returncode == 2, refused.stderr
    [line] = error_lines(refused.stderr)
    assert line == (f"python -m pipeline: error: another run is writing to --output {earlier} (it holds the lock); "
                    "wait for it to end or choose another directory")
    assert code == 0 and not error_lines(stderr), stderr
    assert f"Corpus, report.json, report.html, manifest.json and side outputs are in {earlier}" in stdout
    manifest = json.loads((earlier / "manifest.json").read_text())
    assert [Path(entry["path"]).name for entry in manifest["inputs"]] == ["b.warc.gz"]
    assert verify.main([str(earlier)]) == 0
    assert not list(earlier.glob(".webcorpus*"))


# --- signals: sha256 of every file before and after ---------------------------------------------------

@pytest.fixture(scope="module")
def big_inputs(tmp_path_factory) -> Path:
    """A WARC file that takes a few seconds to build: a run is still going when signalled."""
    directory = tmp_path_factory.mktemp("big-in")
    pages = [Capture(f"https://example.org/{index}", f"<p>page {index} {'word ' * 200}</p>".encode())
             for index in range(3000)]
    (directory / "big.warc.gz").write_bytes(warc_bytes(pages, filename="big.warc.gz"))
    return directory


def signalled_run(inputs: Path, output: Path, signum: int, *flags: str) -> subprocess.CompletedProcess:
    """Runs `python -m pipeline`, sends `signum` once its pipeline has staged documents, waits for the end. The
    input is read in ranges of 1 MiB: the first range's staging file appears while the others are still read (with
    one range, the signal could come after the build had ended)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen([sys.executable, "-m", "pipeline", *build_argv(inputs, output), "--range-size",
                                str(1 << 20), *flags], cwd=REPO,
                               env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not list(output.glob(f"{RESUME_PREFIX}*/staged-*")):
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.slow
def test_an_interrupted_run_leaves_the_earlier_corpus_as_it_was(earlier, big_inputs, signum, status):
    before = snapshot(earlier)
    result = signalled_run(big_inputs, earlier, signum)
    assert result.returncode == status, result.stderr
    assert error_lines(result.stderr) == [f"python -m pipeline: interrupted by {signal.Signals(signum).name}; "
                                          f"nothing was published, {earlier} is as it was"]
    assert snapshot(earlier) == before  # the staging directory and the lock file are gone too


@pytest.mark.slow
def test_ctrl_c_with_worker_processes_is_one_line_and_leaves_the_earlier_corpus(earlier, big_inputs):
    # Beam's multi-processing workers end with `RuntimeError: Worker subprocess exited with return code -2`,
    # and log as they start and stop: none of it reaches the terminal.
    before = snapshot(earlier)
    result = signalled_run(big_inputs, earlier, signal.SIGINT, "--direct_num_workers=2",
                           "--direct_running_mode=multi_processing")
    assert result.returncode == 130, result.stderr
    assert error_lines(result.stderr) == [f"python -m pipeline: interrupted by SIGINT; nothing was published, "
                                          f"{earlier} is as it was"]
    assert snapshot(earlier) == before


@pytest.mark.slow
def test_a_killed_run_leaves_the_earlier_corpus_and_the_next_run_cleans_up(earlier, big_inputs, inputs):
    before = snapshot(earlier)
    result = signalled_run(big_inputs, earlier, signal.SIGKILL)
    assert result.returncode == -signal.SIGKILL
    left = snapshot(earlier)
    # The earlier corpus is whole; the killed run's files are all in its staging directory, none under a final name.
    assert {name: digest for name, digest in left.items() if name in before} == before
    assert all(name.startswith(RUN_STAGING_PREFIX) or name == LOCK_NAME for name in set(left) - set(before))
    assert list(earlier.glob(f"{RESUME_PREFIX}*/staged-*"))  # and the work it finished, kept to resume
    assert verify.main([str(earlier)]) == 0
    # The lock of a killed run does not hold; its staging directory goes.
    code, _, stderr = run_main(build_argv(inputs, earlier))
    assert code == 0, stderr
    assert snapshot(earlier) == before  # the same inputs as the earlier build: the same bytes


# --- publishing cut short ----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_publish_cut_short_at_any_step_is_finished_by_the_next_run(earlier, other_inputs, tmp_path, monkeypatch):
    # A complete build, as `run` has it in its staging directory before publishing.
    complete = tmp_path / "complete"
    code, _, stderr = run_main(build_argv(other_inputs, complete))
    assert code == 0, stderr
    expected = snapshot(complete)
    real_rename = FileSystems.rename
    renames = Counter()

    def rename_then_die(sources, targets):
        if renames["done"] == renames["limit"]:
            raise SystemExit("killed")
        real_rename(sources, targets)
        renames["done"] += 1

    monkeypatch.setattr(FileSystems, "rename", rename_then_die)
    for limit in range(100):
        output = tmp_path / f"cut-after-{limit}"
        shutil.copytree(earlier, output)
        shutil.copytree(complete, output / f"{RUN_STAGING_PREFIX}cut")
        renames.update(done=-renames["done"], limit=limit - renames["limit"])
        try:
            publish(str(output / f"{RUN_STAGING_PREFIX}cut"), str(output))
            break
        except SystemExit:
            pass
        renames["limit"] = 1000
        # Until the new manifest is in place, DIR is not taken for a complete build.
        if not (output / "manifest.json").exists():
            assert verify.main([str(output)]) != 0
        # Cut before its journal was written, a publish never began: the earlier build stays. After, it is finished.
        begun = publish_begun(str(output / f"{RUN_STAGING_PREFIX}cut"))
        assert begun == (limit > 0)
        assert len(recover(str(output))) == begun
        assert snapshot(output) == (expected if begun else snapshot(earlier)), f"cut after {limit} renames"
    assert snapshot(output) == expected
    assert limit > 8  # every step was cut once: the journal, the old manifest and files, the new files


@pytest.mark.slow
def test_verify_does_not_take_a_directory_without_its_manifest_for_a_build(earlier, capsys):
    (earlier / "manifest.json").unlink()
    assert verify.main([str(earlier)]) == 1
    out = capsys.readouterr().out
    assert "not a complete build" in out and "intact" not in out


@pytest.mark.slow
def test_recover_removes_what_an_unfinished_run_left(earlier):
    before = snapshot(earlier)
    leftover = earlier / f"{RUN_STAGING_PREFIX}0123456789ab"
    (leftover / ".webcorpus-staging").mkdir(parents=True)
    (leftover / "corpus-00000-of-00001.avro").write_bytes(b"half written")
    assert recover(str(earlier)) == []
    assert snapshot(earlier) == before


def test_names_in_and_escape_glob_take_paths_as_paths(tmp_path):
    from transforms.filesystems.exact_paths import escape_glob, names_in, remove_exactly

    for name in ("run?", "runA", "run[1]", "run1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(b"x")
    matched = FileSystems.match([escape_glob(str(tmp_path / "run?" / "f"))])[0].metadata_list
    assert [meta.path for meta in matched] == [str(tmp_path / "run?" / "f")]
    remove_exactly([str(tmp_path / "run?"), str(tmp_path / "run[1]")])
    assert names_in(str(tmp_path), "run") == ["run1", "runA"]
    assert pipeline.publish.names_a_build_may_write(str(tmp_path))[:3] == ["report.json", "report.html", "manifest.json"]
