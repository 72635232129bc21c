"""SIGINT and SIGTERM at any moment of a run: one line, the exit status 128 + the signal, DIR consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pipeline.cli
from pipeline import verify
from tests.test_cli import REPO, run_main
from tests.test_publish import build_argv, error_lines, other_inputs, snapshot  # noqa: F401 (a fixture)
from tests.test_signing import inputs, reference  # noqa: F401 (fixtures)
from transforms.state.unit_ledger import HOLD_AFTER_UNITS


@pytest.mark.parametrize("delay", [0.5, 1.5])  # once Python runs (~50 ms), while it imports Beam, and after
def test_sigterm_while_the_command_starts_is_one_line(tmp_path, delay):
    output = tmp_path / "out"
    # The build holds once its one unit is recorded, so that a signal after the imports still finds it running,
    # however fast the machine.
    process = subprocess.Popen([sys.executable, "-m", "pipeline", "--output", str(output), "--quiet"], cwd=tmp_path,
                               env=dict(os.environ, PYTHONPATH=str(REPO), **{HOLD_AFTER_UNITS: "1"}),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    [line] = error_lines(stderr)
    assert line.startswith("python -m pipeline: interrupted by SIGTERM"), line
    assert not list(output.glob("corpus-*"))


def test_sigterm_while_publishing_finishes_the_publish_then_says_so(reference, other_inputs, tmp_path,  # noqa: F811
                                                                    monkeypatch):
    import shutil

    output = Path(shutil.copytree(reference, tmp_path / "out"))
    publish = pipeline.cli.publish

    def signalled_publish(staging, target):
        os.kill(os.getpid(), signal.SIGTERM)  # handled in this, the main, thread before publish returns
        time.sleep(0.1)
        publish(staging, target)

    monkeypatch.setattr(pipeline.cli, "publish", signalled_publish)
    code, stdout, stderr = run_main(build_argv(other_inputs, output))
    assert code == 128 + signal.SIGTERM, stderr
    [line] = error_lines(stderr)
    assert line == (f"python -m pipeline: interrupted by SIGTERM while publishing; the publish was finished: "
                    f"{output} holds the new build"), line
    manifest = json.loads((output / "manifest.json").read_text())
    assert [Path(entry["path"]).name for entry in manifest["inputs"]] == ["b.warc.gz"]
    assert verify.main([str(output)]) == 0
    assert not [name for name in snapshot(output) if name.startswith(".webcorpus")]


@pytest.mark.slow
def test_a_signal_as_the_lock_is_given_up_after_publishing_says_the_build_was_published(reference,  # noqa: F811
                                                                                        other_inputs, tmp_path,
                                                                                        monkeypatch):
    import contextlib
    import shutil

    output = Path(shutil.copytree(reference, tmp_path / "out"))
    output_lock = pipeline.cli.output_lock

    @contextlib.contextmanager
    def lock_then_signal(directory):
        with output_lock(directory) as taken_over:
            yield taken_over
        os.kill(os.getpid(), signal.SIGINT)  # the build is published, the lock just given up
        time.sleep(0.1)

    monkeypatch.setattr(pipeline.cli, "output_lock", lock_then_signal)
    code, _, stderr = run_main(build_argv(other_inputs, output))
    assert code == 128 + signal.SIGINT, stderr
    assert error_lines(stderr) == [f"python -m pipeline: interrupted by SIGINT while publishing; the publish was "
                                   f"finished: {output} holds the new build"]
    assert verify.main([str(output)]) == 0


@pytest.mark.slow
def test_ctrl_c_once_the_command_told_its_build_does_not_end_it_silently(inputs, tmp_path):  # noqa: F811
    output = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "pipeline", *build_argv(inputs, output)], cwd=tmp_path,
                               env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    for line in process.stdout:
        if line.startswith("Corpus, report.json"):  # the report's last line
            break
    time.sleep(0.05)  # while Python tears down Beam's modules (on exit, a signal ends it by its default action)
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(timeout=60)
    # The command said its last word: the signal cannot take it back (with a status of 130 and no word).
    assert process.returncode == 0 and not error_lines(stderr), (process.returncode, stderr)
    assert verify.main([str(output)]) == 0
