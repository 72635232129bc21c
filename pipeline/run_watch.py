"""Watching a run: SIGINT and SIGTERM end it in one line (`RunWatch`), or wait while it publishes
(`signals_held`); a full disk is told apart from other failures (`disk_full`)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import sys
import threading
import time

from pipeline.launch import SIGNALS, Interrupted, raise_if_interrupted


class InterruptedWhilePublishing(Exception):
    """SIGINT or SIGTERM arrived while the build was published: the publish was finished first."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signal.Signals(signum)


# The watches of the runs under way: publishing asks them whether a signal came (`signals_held`).
_WATCHING: list[RunWatch] = []
# How long a watch waits to send again a signal whose exception was lost: the main thread is out of the finalizer
# that lost it by then (one lost again is sent again).
RESEND_AFTER_SECONDS = 0.01


class RunWatch(logging.Filter):
    """While active, SIGINT and SIGTERM stop the run (as Ctrl-C does) and are remembered in `received`.

    Runners pass an interruption or a full disk on wrapped in errors of their
    own, and log it with a traceback; the command says it in one line, so
    those log records are dropped (all of them once a signal came). Handlers
    can only be set in the main thread (Python's rule); elsewhere signals are
    left as they are.

    A signal's exception is lost where Python cannot raise it (`launch` says
    where), and the run would go on. Python hands it to `sys.unraisablehook`
    instead: while the watch is active, that has the watch's thread send the
    signal to the main thread again, and the run stops there. (What stops the
    run's publish in any case is `signals_held`.)
    """

    def __init__(self):
        super().__init__()
        self.received: signal.Signals | None = None
        self._previous = {}
        self._previous_hook = None
        self._lost = threading.Event()
        self._closing = False
        self._resender: threading.Thread | None = None

    def _handle(self, signum, frame):
        if self._closing:
            return  # sent again as the watch ends: `received` holds it
        # (Remembered first: the exception can be lost; the command asks `received` at its end.)
        self.received = signal.Signals(signum)
        raise Interrupted(signum)

    def _unraisable(self, unraisable) -> None:
        # (No lock, no new thread here: Python may have been anywhere in the main thread when it lost the exception.)
        if isinstance(unraisable.exc_value, Interrupted) and self.received is not None:
            self._lost.set()
        self._previous_hook(unraisable)

    def _resend_lost(self) -> None:
        """The watch's thread: sends `received` to the main thread again each time its exception was lost."""
        main = threading.main_thread().ident
        while True:
            self._lost.wait()
            if self._closing:
                return
            self._lost.clear()
            time.sleep(RESEND_AFTER_SECONDS)
            signal.pthread_kill(main, self.received)

    def filter(self, record: logging.LogRecord) -> bool:
        return self.received is None and not (record.exc_info and disk_full(record.exc_info[1]))

    def __enter__(self):
        # A signal whose exception was lost before (`launch.raise_if_interrupted`) ends the command before the run.
        raise_if_interrupted()
        if threading.current_thread() is threading.main_thread():
            self._previous = {signum: signal.signal(signum, self._handle) for signum in SIGNALS}
            self._previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
            self._resender = threading.Thread(target=self._resend_lost, name="webcorpus-resend-lost-signal",
                                              daemon=True)
            self._resender.start()
        for handler in logging.getLogger().handlers:
            handler.addFilter(self)
        _WATCHING.append(self)
        return self

    def __exit__(self, *exc_info):
        _WATCHING.remove(self)
        if self._resender is not None:
            self._closing = True
            self._lost.set()
            self._resender.join()
            # A signal it sent last was delivered while it was joined; Python runs its handler (`_handle`, which
            # now ignores it) at the next call of a Python function, before the handlers are given back.
            _let_pending_handlers_run()
            sys.unraisablehook = self._previous_hook
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        for handler in logging.getLogger().handlers:
            handler.removeFilter(self)
        return False


def _let_pending_handlers_run() -> None:
    """Nothing: calling it lets Python run the signal handlers pending in this thread."""


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
