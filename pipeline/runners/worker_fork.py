"""Worker processes of the local runner's multi-processing mode, forked from a process that has imported them.

Beam starts each worker process afresh (`python -m
apache_beam.runners.worker.sdk_worker_main`), and each then imports Beam and,
as it unpickles the first stage's DoFns, webcorpus: about 1.4 s of CPU a
worker before it does any work, 1.2 s of wall time before the first record
with 2 workers on 2 cores (benchmarks/README.md). `ForkServer` starts one
process that imports all of it once, beside the building of the graph, and
forks a worker from it each time Beam starts one: Beam runs `command`, a
small client that hands its environment and its standard streams to the
server, and exits with the forked worker's exit code.

The server forks only from its one thread, before any gRPC channel exists
in it (importing gRPC starts none). Where the server is not there (it failed
to start, or ended), the client runs Beam's own worker in its place: a build
never depends on it. What it calls of Beam's worker (`sdk_worker_main.main`)
is checked, with Beam's version, before the local runner starts
(`fn_api_patches.check_supported(forked_workers=True)`).
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import weakref

# The names of `--runner` (or none) that give the local runner (pipeline/runners/local_runner.py): here, where nothing
# heavy is imported, so that the command's start can read them.
IN_PROCESS_RUNNER_NAMES = {None, "DirectRunner", "direct", "directrunner"}
# The module Beam starts a multi-processing worker with (its FnApiRunner's command; Beam has no name for it).
BEAMS_WORKER_MODULE = "apache_beam.runners.worker.sdk_worker_main"
# How long a client waits for the server to listen (it imports Beam and webcorpus first) before it runs Beam's
# own worker instead.
SERVER_WAIT = 60
_LENGTH = struct.Struct("!Q")
_BOOTSTRAP = "import sys; sys.path[:] = {path!r}; from pipeline.runners.worker_fork import serve; serve({socket!r})"


class ForkServer:
    """The process workers are forked from; `command` is the worker command line for Beam to run."""

    def __init__(self):
        self._dir = tempfile.mkdtemp(prefix="webcorpus-workers-")
        self._socket = os.path.join(self._dir, "server")
        # Its stdin is a pipe from here: the server ends when this process closes it, or ends.
        self._process = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP.format(path=sys.path, socket=self._socket)],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.command = f"{sys.executable} -m pipeline.runners.worker_fork {self._socket} {self._process.pid}"
        # Closed with its runner where no run closes it (a runner made and never run).
        self._finalizer = weakref.finalize(self, _stop, self._process, self._dir)

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        """Ends the server (the workers forked from it end with their run) and removes its socket."""
        self._finalizer()


def _stop(process: subprocess.Popen, directory: str) -> None:
    if process.poll() is None:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    shutil.rmtree(directory, ignore_errors=True)


_STARTED_EARLY: list[ForkServer] = []


def asks_for_worker_processes(argv: list[str]) -> bool:
    """Whether a command line asks the local runner for worker processes (`--direct_running_mode
    multi_processing`, no other `--runner`), read before its options are parsed (what is not asked for is never
    started)."""
    return (_value(argv, "--direct_running_mode") == "multi_processing"
            and _value(argv, "--runner") in IN_PROCESS_RUNNER_NAMES)


def _value(argv: list[str], flag: str) -> str | None:
    """The last value given to `flag` (`--flag=value` or `--flag value`), or None."""
    found = None
    for arg, following in zip(argv, [*argv[1:], None]):
        if arg.startswith(flag + "="):
            found = arg[len(flag) + 1:]
        elif arg == flag:
            found = following
    return found


def start_early(argv: list[str]) -> None:
    """Starts the server at the command's start, where `argv` asks for worker processes: it imports Beam and
    webcorpus while the command does; `started_early` gives it to the local runner."""
    if asks_for_worker_processes(argv):
        _STARTED_EARLY.append(ForkServer())


def started_early() -> ForkServer | None:
    """The server `start_early` started, once; None where none was (or it was given already)."""
    return _STARTED_EARLY.pop() if _STARTED_EARLY else None


def serve(socket_path: str) -> None:
    """The server: imports what a worker imports, then forks a worker for each client until stdin ends; never
    returns."""
    import pipeline  # noqa: F401 - its logging filter, before Beam's import warns
    from pipeline.beam_import import import_beam

    import_beam()
    import pipeline.graph  # noqa: F401 - every stage's module, which unpickling a worker's DoFns imports
    from apache_beam.runners.worker import sdk_worker_main, statesampler

    from pipeline.runners.fn_api_patches import SAMPLING_PERIOD_MS, sampling_every

    # (A worker's bundles end as the local runner's do: `fn_api_patches`, patch 7.)
    statesampler.StateSampler.__init__ = sampling_every(SAMPLING_PERIOD_MS)

    # Each forked worker is waited for as it ends, so that its CPU time counts in this process's children's, and
    # so in the build's.
    signal.signal(signal.SIGCHLD, _reap)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen()
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(sys.stdin, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is sys.stdin:
                    if not os.read(sys.stdin.fileno(), 1):
                        # Nothing to clean up: not the 0.3 s of an interpreter's shutdown with Beam imported.
                        os._exit(0)
                    continue
                connection, _ = listener.accept()
                if os.fork() == 0:
                    selector.close()
                    listener.close()
                    _run_worker(connection, sdk_worker_main.main)
                connection.close()


def _reap(signum, frame) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError("the client went away")
        data += chunk
    return data


def _run_worker(connection: socket.socket, worker_main) -> None:
    """In the forked child: the client's streams and environment, then Beam's worker; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, 3)
        (length,) = _LENGTH.unpack(header + _receive(connection, _LENGTH.size - len(header)))
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        environment = json.loads(_receive(connection, length))
        os.environ.clear()
        os.environ.update(environment)
        # What the server imported (Beam, webcorpus) lives as long as the worker: frozen, the collector's full
        # passes skip it, as in the local runner's own process (`LocalRunner.run_pipeline`), and leave its pages
        # shared with the server (a pass writes each object it walks: 20-30 MiB of a worker's own memory).
        gc.freeze()
        worker_main(sys.argv)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - said on the worker's stderr, and in its exit code
        traceback.print_exc()
    finally:
        # (os._exit, as multiprocessing's forked children end: not the server's atexit handlers, which are not the
        # worker's; what the worker printed is flushed first.)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            connection.sendall(f"{code}\n".encode())
        finally:
            os._exit(code)


def run_client(socket_path: str, server_pid: int) -> int:
    """The worker command's side: a worker forked by the server, or Beam's own where the server is not there."""
    deadline = time.monotonic() + SERVER_WAIT
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(socket_path)
            break
        except OSError as error:
            connection.close()
            # Refused: the server bound its socket and has ended since; not there yet: it may still be importing.
            gone = isinstance(error, ConnectionRefusedError) or not _alive(server_pid)
            if gone or time.monotonic() > deadline:
                os.execv(sys.executable, [sys.executable, "-m", BEAMS_WORKER_MODULE])
            time.sleep(0.02)
    with connection:
        environment = json.dumps(dict(os.environ)).encode()
        socket.send_fds(connection, [_LENGTH.pack(len(environment))], [0, 1, 2])
        connection.sendall(environment)
        reply = connection.makefile("rb").readline()
    # (No reply: the worker died without saying its code.)
    return int(reply) if reply.strip() else 1


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (an ended one that its parent has not waited for yet does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


if __name__ == "__main__":
    sys.exit(run_client(sys.argv[1], int(sys.argv[2])))
