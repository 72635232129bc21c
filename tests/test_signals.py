"""SIGINT and SIGTERM at any moment of a run: one line, the exit status 128 + the signal, DIR consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
import weakref
from pathlib import Path

import pytest

import pipeline.cli
import pipeline.run_watch
from pipeline import launch, verify
from pipeline.run_watch import RunWatch
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


def lose_a_sigterm() -> None:
    """SIGTERM, handled in a weakref callback, where Python ignores the exception its handler raises (so it is when
    importlib drops a module lock while Beam is imported)."""
    class Lock:
        pass

    lock = Lock()
    reference = weakref.ref(lock, lambda ref: os.kill(os.getpid(), signal.SIGTERM))  # noqa: F841 (kept alive)
    del lock


@pytest.fixture
def signal_handlers():
    """The process's SIGINT and SIGTERM handlers, as they were once the test is done."""
    previous = {signum: signal.getsignal(signum) for signum in launch.SIGNALS}
    yield
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def test_a_sigterm_lost_while_the_command_imports_still_ends_it_in_one_line(monkeypatch, capsys, signal_handlers):
    ran = []
    command = types.ModuleType("a_command")
    command.main = lambda argv: ran.append(argv) or 0
    monkeypatch.setitem(sys.modules, "a_command", command)
    monkeypatch.setattr(launch, "import_beam", lose_a_sigterm)
    assert launch.main([], command="a_command") == 128 + signal.SIGTERM
    assert not ran
    assert error_lines(capsys.readouterr().err) == [
        f"{launch.program_name()}: interrupted by SIGTERM before the build began; nothing was written"]


def test_a_sigterm_lost_during_the_run_is_said_once_the_run_ends(tmp_path, capsys, signal_handlers, monkeypatch):
    # (As the command has it, `launch.main`: the lost exception is no traceback.)
    monkeypatch.setattr(sys, "unraisablehook", launch._quiet_lost_interruptions)

    def run():
        lose_a_sigterm()
        return None, {}, [], None

    assert pipeline.cli.run_and_tell(str(tmp_path), run, program="python -m pipeline") == 128 + signal.SIGTERM
    assert error_lines(capsys.readouterr().err) == [
        f"python -m pipeline: interrupted by SIGTERM; the build was published in {tmp_path}"]


def test_a_sigterm_lost_during_the_run_publishes_nothing(reference, other_inputs, tmp_path,  # noqa: F811
                                                        monkeypatch, signal_handlers):
    # Lost as the build ends (a finalizer of the run's last step would lose it alike): the build went on, but the
    # user asked it to stop, and the earlier corpus stays.
    import shutil

    monkeypatch.setattr(sys, "unraisablehook", launch._quiet_lost_interruptions)
    output = Path(shutil.copytree(reference, tmp_path / "out"))
    before = snapshot(output)
    sign_build = pipeline.cli.sign_build

    def sign_build_losing_a_sigterm(staging, key):
        lose_a_sigterm()
        sign_build(staging, key)

    monkeypatch.setattr(pipeline.cli, "sign_build", sign_build_losing_a_sigterm)
    code, _, stderr = run_main(build_argv(other_inputs, output))
    assert code == 128 + signal.SIGTERM, stderr
    assert error_lines(stderr) == [f"python -m pipeline: interrupted by SIGTERM; nothing was published, {output} is "
                                   "as it was"]
    assert snapshot(output) == before


def test_a_sigterm_lost_while_the_run_is_watched_is_sent_again_and_stops_it(monkeypatch, signal_handlers):
    monkeypatch.setattr(sys, "unraisablehook", launch._quiet_lost_interruptions)
    steps = 0
    with pytest.raises(launch.Interrupted), RunWatch() as watch:
        lose_a_sigterm()
        # The run's next steps, a moment each: it stops within a few of them, not at its end.
        for steps in range(1, 10_001):
            time.sleep(0.01)
    assert watch.received == signal.SIGTERM
    assert steps < 10_000


def test_a_signal_lost_as_the_watch_ends_is_not_sent_to_what_follows(monkeypatch, signal_handlers):
    monkeypatch.setattr(sys, "unraisablehook", launch._quiet_lost_interruptions)
    # The watch ends while its thread waits to send the signal again: it sends it as the watch is given up.
    monkeypatch.setattr(pipeline.run_watch, "RESEND_AFTER_SECONDS", 0.3)
    after = []
    signal.signal(signal.SIGTERM, lambda signum, frame: after.append(signum))
    with RunWatch() as watch:
        lose_a_sigterm()
        time.sleep(0.1)
    for _ in range(30):
        time.sleep(0.01)
    assert watch.received == signal.SIGTERM
    assert after == []
    assert sys.unraisablehook is launch._quiet_lost_interruptions


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
