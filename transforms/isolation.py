"""Running a function in a child process, with a time and a memory limit: what a stage does with a page that
could be slow, large or crash its worker (CleanHtml's parser, a filter's rules on a very large page).

The HTML parser is native code: a Python thread cannot interrupt it, and a
crash in it would take the whole worker down. lexbor is also quadratic on
deep nesting (here, 100,000 nested `<div>`s take about 90 s to parse), on
an element's attributes and on unclosed formatting elements (see
`transforms/stages/clean_html/guard.py`'s `isolation_reason`). So CleanHtml sends the pages that could be
slow or large to a child process: a page that takes longer than the time
limit, more memory than the memory limit, or kills the child, costs that
page alone, which goes to the dead letter, and a fresh child serves the
next one.

The memory limit caps the child's address space (`RLIMIT_AS`) at what it
holds once started (for CleanHtml, Python and selectolax: about 26 MiB)
plus the limit; lexbor reports the allocation that fails as a parse error,
Python as a MemoryError, and the child, which may be left fragmented, ends
after either.
"""

from __future__ import annotations

import multiprocessing.connection
import resource
import subprocess
import sys
from typing import Any, Callable

# The child is a fresh interpreter that imports only what the function needs. Forking a Beam worker (it runs
# gRPC threads) is unsafe; multiprocessing's spawn would import the parent's main module again in the child
# (in a Beam worker that is all of Beam's SDK harness, about 2 CPU s a child), and its forkserver does not
# pass the parent's sys.path on (Python 3.11).
_BOOTSTRAP = ("import sys; sys.path[:] = {path!r}; "
              "from transforms.isolation import _serve_inherited; _serve_inherited({fd})")
READY = "ready"
# The seconds a page may take in a child process (--page-timeout's default).
DEFAULT_PAGE_TIMEOUT = 30.0
# Starting a child imports the function's modules (for CleanHtml, selectolax and
# transforms.stages.clean_html.clean_html): that time does not count against a page.
START_TIMEOUT = 120


class PageTimeout(Exception):
    """The function took longer than its time limit."""


class ChildCrashed(Exception):
    """The child process died while running the function."""


class PageOverMemory(Exception):
    """The function needed more memory than the child's limit."""


def _address_space(field: str = "VmSize") -> int:
    """This process's address space (`VmSize`) or its peak (`VmPeak`), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def _serve(connection, function: Callable, memory_limit: int | None,
           prepare: Callable[[], Any] | None = None) -> None:
    if prepare is not None:
        prepare()
    if memory_limit is not None:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        ceiling = _address_space() + memory_limit
        if hard != resource.RLIM_INFINITY:
            ceiling = min(ceiling, hard)
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    connection.send(READY)
    while True:
        try:
            args = connection.recv()
        except (EOFError, ConnectionResetError):
            # The parent closed its end: a reset where it closed it with this child's READY unread (a child started
            # ahead that no page needed).
            return
        try:
            outcome = (True, function(*args))
        except Exception as error:  # noqa: BLE001 - the parent re-raises it
            # lexbor turns a failed allocation into "Can't parse HTML.": a
            # failure after the page took over half the limit is taken for one.
            if memory_limit is not None and (isinstance(error, MemoryError)
                                             or _address_space("VmPeak") > ceiling - memory_limit // 2):
                connection.send((False, PageOverMemory(f"over the memory limit of {memory_limit >> 20} MiB")))
                return
            outcome = (False, error)
        connection.send(outcome)


def _serve_inherited(fd: int) -> None:
    """The child's side: the function, its memory limit and what prepares it come first on the inherited
    connection."""
    connection = multiprocessing.connection.Connection(fd)
    function, memory_limit, prepare = connection.recv()
    _serve(connection, function, memory_limit, prepare)


class ChildProcess:
    """Calls `function` in a child process, at most `timeout` seconds and `memory_limit` bytes (of address
    space beyond the child's own at its start; None: no limit) a call. `prepare` (no arguments), if given, runs
    in the child as it starts, before its first call: what the function loads once (a model, a table) is loaded
    within START_TIMEOUT, not within a page's time."""

    def __init__(self, function: Callable, timeout: float, memory_limit: int | None = None,
                 prepare: Callable[[], Any] | None = None):
        self._function = function
        self._timeout = timeout
        self._memory_limit = memory_limit
        self._prepare = prepare
        self._process = None
        self._connection = None
        self._ready = False

    def start(self) -> None:
        """Starts the child without waiting for it (its interpreter and imports: about 0.1 s of another core),
        unless it is running; the first call waits for it to be ready."""
        if self._process is not None and self._process.poll() is None:
            return
        self._connection, child_end = multiprocessing.Pipe()
        fd = child_end.fileno()
        self._process = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP.format(path=sys.path, fd=fd)],
                                         pass_fds=(fd,), stdin=subprocess.DEVNULL)
        child_end.close()
        self._ready = False
        try:
            self._connection.send((self._function, self._memory_limit, self._prepare))
        except OSError:
            self.close()
            raise ChildCrashed("the parser's process did not start") from None

    def _wait_until_ready(self) -> None:
        try:
            self._ready = self._connection.poll(START_TIMEOUT) and self._connection.recv() == READY
        except (EOFError, OSError):
            self._ready = False
        if not self._ready:
            self.close()
            raise ChildCrashed("the parser's process did not start")

    def __call__(self, *args) -> Any:
        self.start()
        if not self._ready:
            self._wait_until_ready()
        self._connection.send(args)
        if not self._connection.poll(self._timeout):
            self.close()
            raise PageTimeout(f"took longer than {self._timeout:g} s")
        try:
            succeeded, value = self._connection.recv()
        except (EOFError, OSError):
            try:
                code = self._process.wait(1)
            except subprocess.TimeoutExpired:
                code = None
            self.close()
            raise ChildCrashed(f"the parser's process died (exit code {code})") from None
        if not succeeded:
            if isinstance(value, PageOverMemory):
                self.close()  # the child ends after it
            raise value
        return value

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(5)
            self._connection.close()
        self._process = None
        self._connection = None
        self._ready = False
