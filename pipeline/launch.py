"""The command's entry point: SIGINT and SIGTERM are taken from its first instant.

Importing Beam takes seconds; a signal then would end the process without a
word (SIGTERM's default) or with a traceback (SIGINT's). Until `pipeline.cli`
watches the run itself (`run_watch.RunWatch`), a signal ends it with one line. Once the
command said its last word, signals are ignored: Python's teardown of Beam's
modules takes a moment, in which a signal would end the process silently,
with another exit status. This module imports nothing heavy.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading

from pipeline.beam_import import import_beam
from pipeline.runners.worker_fork import start_early

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: `signum`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signal.Signals(signum)


# The signals that arrived before the run was watched. An exception a handler raises can be lost: Python ignores
# one raised in a weakref callback or a finalizer, where a signal is handled as anywhere else (importing, importlib
# drops its module locks through weakref callbacks), and the command would go on as if none had come.
_RECEIVED: list[signal.Signals] = []


def _interrupt(signum, frame):
    _RECEIVED.append(signal.Signals(signum))
    raise Interrupted(signum)


def _quiet_lost_interruptions(unraisable) -> None:
    """`sys.unraisablehook` while the command runs: a signal's exception that Python could not raise is remembered
    (`_RECEIVED`, `run_watch.RunWatch.received`) and said in the command's one line, not as a traceback."""
    if not isinstance(unraisable.exc_value, Interrupted):
        sys.__unraisablehook__(unraisable)


def raise_if_interrupted() -> None:
    """Raises `Interrupted` for the first signal that arrived before the run was watched (its own exception may have
    been lost); nothing if none did."""
    if _RECEIVED:
        raise Interrupted(_RECEIVED[0])


# The commands started through `main`, by the name of what Python runs (`sys.argv[0]`); any other is the build's.
COMMANDS = {"webcorpus": "webcorpus", "select.py": "python -m pipeline.select"}


def program_name() -> str:
    """How the user called the command: the `webcorpus` console script, `python -m pipeline.select`, or
    `python -m pipeline`."""
    return COMMANDS.get(os.path.basename(sys.argv[0]), "python -m pipeline")


def main(argv: list[str] | None = None, command: str = "pipeline.cli") -> int:
    """Runs the `main` of the module `command` (the build's, or `pipeline.select`) once Beam is imported."""
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            signal.signal(signum, _interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, _quiet_lost_interruptions
    try:
        return _run(argv, command)
    finally:
        sys.unraisablehook = previous_hook
        _RECEIVED.clear()


def _run(argv: list[str] | None, command: str) -> int:
    try:
        # Before Beam is imported here: the worker processes' server imports it meanwhile (pipeline/runners/worker_fork.py).
        start_early(sys.argv[1:] if argv is None else argv)
        import_beam()
        command_main = importlib.import_module(command).main
        raise_if_interrupted()
        status = command_main(argv)
    except KeyboardInterrupt as interruption:
        # Only before the run is watched: pipeline.cli says every later interruption itself.
        signum = getattr(interruption, "signum", signal.SIGINT)
        print(f"{program_name()}: interrupted by {signum.name} before the build began; nothing was written",
              file=sys.stderr)
        return 128 + signum
    # The command said its last word (a build published, or why not). Python's teardown of Beam's modules takes
    # a moment after, where a signal would end the process by its default action, without a word and with another
    # status: it is ignored instead, as the process ends anyway.
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    return status
