"""Running a function in a child process, with a time limit.

The HTML parser is native code: a Python thread cannot interrupt it, and a
crash in it would take the whole worker down. lexbor is also quadratic on
deep nesting (here, 100,000 nested `<div>`s take about 90 s to parse). So
CleanHtml sends the pages that could be slow (see `clean_html`) to a child
process: a page that takes longer than the limit, or kills the child, costs
that page alone, which goes to the dead letter, and a fresh child serves the
next one.
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Callable

# Beam workers run gRPC threads: forking them is unsafe, spawning is not.
CONTEXT = multiprocessing.get_context("spawn")
READY = "ready"
# Starting a child imports the function's modules (Beam, selectolax): that
# time does not count against a page.
START_TIMEOUT = 120


class PageTimeout(Exception):
    """The function took longer than its time limit."""


class ChildCrashed(Exception):
    """The child process died while running the function."""


def _serve(connection, function: Callable) -> None:
    connection.send(READY)
    while True:
        try:
            args = connection.recv()
        except EOFError:
            return
        try:
            connection.send((True, function(*args)))
        except Exception as error:  # noqa: BLE001 - the parent re-raises it
            connection.send((False, error))


class ChildProcess:
    """Calls `function` in a child process, at most `timeout` seconds a call."""

    def __init__(self, function: Callable, timeout: float):
        self._function = function
        self._timeout = timeout
        self._process = None
        self._connection = None

    def _start(self) -> None:
        self._connection, child_end = CONTEXT.Pipe()
        self._process = CONTEXT.Process(target=_serve, args=(child_end, self._function), daemon=True)
        self._process.start()
        child_end.close()
        if not self._connection.poll(START_TIMEOUT) or self._connection.recv() != READY:
            self.close()
            raise ChildCrashed("the parser's process did not start")

    def __call__(self, *args) -> Any:
        if self._process is None or not self._process.is_alive():
            self._start()
        self._connection.send(args)
        if not self._connection.poll(self._timeout):
            self.close()
            raise PageTimeout(f"took longer than {self._timeout:g} s")
        try:
            succeeded, value = self._connection.recv()
        except (EOFError, OSError):
            self._process.join(1)
            code = self._process.exitcode
            self.close()
            raise ChildCrashed(f"the parser's process died (exit code {code})") from None
        if not succeeded:
            raise value
        return value

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
            self._connection.close()
        self._process = None
        self._connection = None
