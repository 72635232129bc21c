"""Watching a run: SIGINT and SIGTERM end it in one line (`RunWatch`), or wait while it publishes
(`signals_held`); a full disk is told apart from other failures (`disk_full`)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import threading

from pipeline.launch import SIGNALS, Interrupted, raise_if_interrupted


class InterruptedWhilePublishing(Exception):
    """SIGINT or SIGTERM arrived while the build was published: the publish was finished first."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signal.Signals(signum)


# The watches of the runs under way: publishing asks them whether a signal came (`signals_held`).
_WATCHING: list[RunWatch] = []


class RunWatch(logging.Filter):
    """While active, SIGINT and SIGTERM stop the run (as Ctrl-C does) and are remembered in `received`.

    Runners pass an interruption or a full disk on wrapped in errors of their
    own, and log it with a traceback; the command says it in one line, so
    those log records are dropped (all of them once a signal came). Handlers
    can only be set in the main thread (Python's rule); elsewhere signals are
    left as they are.
    """

    def __init__(self):
        super().__init__()
        self.received: signal.Signals | None = None
        self._previous = {}

    def _handle(self, signum, frame):
        # (Remembered first: the exception can be lost, as `launch` says; the command asks `received` at its end.)
        self.received = signal.Signals(signum)
        raise Interrupted(signum)

    def filter(self, record: logging.LogRecord) -> bool:
        return self.received is None and not (record.exc_info and disk_full(record.exc_info[1]))

    def __enter__(self):
        # A signal whose exception was lost before (`launch.raise_if_interrupted`) ends the command before the run.
        raise_if_interrupted()
        if threading.current_thread() is threading.main_thread():
            self._previous = {signum: signal.signal(signum, self._handle) for signum in SIGNALS}
        for handler in logging.getLogger().handlers:
            handler.addFilter(self)
        _WATCHING.append(self)
        return self

    def __exit__(self, *exc_info):
        _WATCHING.remove(self)
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        for handler in logging.getLogger().handlers:
            handler.removeFilter(self)
        return False


@contextlib.contextmanager
def signals_held():
    """Publishing is a few renames: a SIGINT or SIGTERM then waits until they are done, and is raised after as
    InterruptedWhilePublishing. So DIR holds the whole new build: the earlier build is moved out by then, and
    putting it back would be as many renames again.

    A signal that came before, while the run was watched, but whose exception was lost (`launch` says where: the
    run went on) raises `Interrupted` here, before the first rename: the user asked for the run to stop."""
    for watch in _WATCHING:
        if watch.received is not None:
            raise Interrupted(watch.received)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    previous = {signum: signal.signal(signum, lambda signum, frame: held.append(signum)) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if held:
        raise InterruptedWhilePublishing(held[0])


def disk_full(error: BaseException | None) -> bool:
    """Whether `error` is, or was caused by, a full disk (runners may pass a worker's error on as text)."""
    seen = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        seen = seen.__cause__ or seen.__context__
    return error is not None and os.strerror(errno.ENOSPC) in str(error)
