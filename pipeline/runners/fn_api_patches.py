"""Beam's FnApiRunner, patched where Beam 2.77 loses records or cannot bound a worker's input, and where it
repeats a costly question.

The one module of webcorpus that touches Beam's internals. `patched_fn_api_runner()`
holds seven patches for the length of one run of webcorpus's local runner
(`pipeline/runners/local_runner.py`), so that Beam's own FnApiRunner
(`--runner=FnApiRunner`) stays as Beam made it, even in the same process.
Each works around a fault of Beam's, reported in docs/upstream.md with a
minimal reproduction; `tests/test_local_runner.py` shows the faults on Beam's
own runner and the patched one free of them (the third patch is what the
second needs, not a fault of its own; the fourth, fifth and seventh, costs, are in docs/upstream.md too). None changes
what a worker computes.

1. `worker_handlers.DATA_BUFFER_TIME_LIMIT_MS` = 0: the runner's data plane
   buffers by size only. Beam's once-a-second flush runs on a thread of its
   own while the runner's thread writes the same stream unlocked: whatever
   is written between the flush's copy and its clearing of the buffer is
   lost (at 1,000,000 captures, hundreds of thousands of the report's
   outcomes; docs/scale.md).
2. `execution.GroupingBuffer` = `PiecewiseGroupingBuffer`: a grouped
   stage's share of a worker is encoded in pieces of about `PIECE_VALUES`
   values, not as one buffer that becomes one message (which the worker
   holds whole, and which past protobuf's 2 GiB cannot be sent at all).
3. `BundleManager._send_input_to_worker` = `send_input_in_pieces`: the
   stream is flushed after each piece, so a message holds about 10 MB (the
   data plane's size threshold), and, to a worker over gRPC, the input is
   written beside the request that starts the bundle (its docstring says
   why).
4. `userstate.get_dofn_specs` = `DoFnSpecs(...)`: a DoFn's state and timer
   specs are worked out once per kind of DoFn for the run, not each time
   Beam asks (890 times for a default build, every method of the DoFn
   inspected each time: 0.3-0.8 s of CPU before the first record). Not a
   fault, a cost; the answer is Beam's own, computed by Beam's function.
   `remembered_dofn_specs()` holds this one alone, for the whole of a
   build on any runner (`pipeline/cli.py`).
5. `WorkerHandlerManager.close_all` = `close_all_at_once`: at the end of
   a run, the worker handlers are closed at once, not one after another;
   each waits for its worker process to end (about 0.3 s: 0.6 s of every
   2-worker build went there). A cost, not a fault.

6. `statesampler.StateSampler.start` and `.stop_if_still_running`
   = `start_interruptible`, `stop_if_interrupted`: a bundle's state sampler
   runs a thread (not a daemon) that only `stop` ends, and Beam marks the
   sampler started only once that thread has started. A KeyboardInterrupt
   (Ctrl-C, SIGTERM) while the main thread waits for it to start left the
   thread running, unmarked: the bundle's `stop_if_still_running` passed
   it by, and the process, its last line said, never exited.
7. `statesampler.StateSampler.__init__` = `sampling_every(SAMPLING_PERIOD_MS)`:
   a bundle's state sampler wakes every 10 ms at most, not every 200 ms, and
   its `stop`, at the end of every bundle, waits for the next wake: up to
   0.2 s a bundle (0.16-0.32 s of the developer corpus's 48 bundles, 4-8%
   of its build) becomes 1-10 ms. The worker processes' server applies it too
   (`pipeline/runners/worker_fork.py`). A cost, not a fault.

With a worker command (`patched_fn_api_runner(worker_command)`), an eighth:
`SubprocessSDKEnvironment.from_command_string` gives that command where
the FnApiRunner asks for its own multi-processing worker
(`BEAMS_WORKER_COMMAND`), so that the workers are forked from a server
that has imported Beam and webcorpus (`pipeline/runners/worker_fork.py`).

Before patching, `check_supported` checks the installed Beam's version against
`beam_release.SUPPORTED` (what requirements.txt pins) and that every attribute
patched or relied on is there; otherwise it fails with one line that says what
to do.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import types

from apache_beam.runners.portability.fn_api_runner import execution, fn_runner, worker_handlers
from apache_beam.runners.worker import data_plane, statesampler
from apache_beam.transforms import environments, userstate

from pipeline.runners.beam_release import INSTALL, require
from pipeline.runners.worker_fork import BEAMS_WORKER_MODULE

# What the patches replace, and the attributes of Beam's objects they read (set by the class's __init__).
PATCHED = ((worker_handlers, "DATA_BUFFER_TIME_LIMIT_MS"), (execution, "GroupingBuffer"),
           (fn_runner, "BundleManager._send_input_to_worker"), (userstate, "get_dofn_specs"),
           (worker_handlers, "WorkerHandlerManager.close_all"), (statesampler, "StateSampler.start"),
           (statesampler, "StateSampler.stop_if_still_running"), (statesampler, "StateSampler.__init__"),
           (environments, "SubprocessSDKEnvironment.from_command_string"))
READ = ((execution, "GroupingBuffer", ("_table", "_grouped_output", "_pre_grouped_coder", "_post_grouped_coder",
                                       "_windowing")),
        (fn_runner, "BundleManager", ("_worker_handler",)),
        (worker_handlers, "WorkerHandlerManager", ("_cached_handlers",)))

# Values of a grouped stage's input encoded per piece. A fingerprint is about 450 bytes, a side-file line
# about 300: a piece is about 1 MB, and a message, flushed once over 10 MB, is at most one piece more.
PIECE_VALUES = 2_000
# How often a bundle's state sampler wakes, at most (Beam's default: 200 ms); its `stop` waits for the next wake.
SAMPLING_PERIOD_MS = 10

_LOGGER = logging.getLogger(__name__)


def check_supported(forked_workers: bool = False) -> None:
    """Raises `UnsupportedBeam` (one line) unless Beam is the release the patches were written for and has every
    attribute patched or read; with `forked_workers`, also the worker's entry point the fork server calls
    (`pipeline.runners.worker_fork`)."""
    relied_on = PATCHED
    if forked_workers:
        from apache_beam.runners.worker import sdk_worker_main

        relied_on += ((sdk_worker_main, "main"),)
    require("webcorpus's local runner (pipeline/runners/local_runner.py)",
            f"{INSTALL}, or run Beam's own unpatched runner with --runner=FnApiRunner", relied_on, READ)


@contextlib.contextmanager
def patched_fn_api_runner(worker_command: str | None = None):
    """Beam's FnApiRunner with the seven patches, for the length of the block; Beam's own again after it.

    With `worker_command`, the multi-processing mode's worker processes are started with it instead of Beam's
    `BEAMS_WORKER_COMMAND` (`pipeline.runners.worker_fork`).
    """
    check_supported(forked_workers=worker_command is not None)
    patches = ((worker_handlers, "DATA_BUFFER_TIME_LIMIT_MS", 0),
               (execution, "GroupingBuffer", PiecewiseGroupingBuffer),
               (fn_runner.BundleManager, "_send_input_to_worker", send_input_in_pieces),
               (worker_handlers.WorkerHandlerManager, "close_all", close_all_at_once),
               (statesampler.StateSampler, "start", start_interruptible(statesampler.StateSampler.start)),
               (statesampler.StateSampler, "stop_if_still_running",
                stop_if_interrupted(statesampler.StateSampler.stop_if_still_running)),
               (statesampler.StateSampler, "__init__", sampling_every(SAMPLING_PERIOD_MS)))
    if worker_command is not None:
        patches += ((environments.SubprocessSDKEnvironment, "from_command_string",
                     _started_with(worker_command)),)
    # (As the class holds it: a classmethod is put back as one.)
    originals = [(owner, name, vars(owner)[name] if name in vars(owner) else getattr(owner, name))
                 for owner, name, _ in patches]
    for owner, name, value in patches:
        setattr(owner, name, value)
    try:
        with remembered_dofn_specs():
            yield
    finally:
        for owner, name, value in originals:
            setattr(owner, name, value)


def start_interruptible(beams_start):
    """`StateSampler.start` (Beam's, `beams_start`), after which the sampler is marked started even if the start was
    interrupted, and marked `start_interrupted`: its sampling thread may be running (patch 6)."""

    def start(sampler) -> None:
        try:
            beams_start(sampler)
        except BaseException:
            sampler.started = sampler.start_interrupted = True
            raise

    return start


def stop_if_interrupted(beams_stop_if_still_running):
    """`StateSampler.stop_if_still_running` (Beam's), which after an interrupted start stops a sampling thread
    that may not have been made or started (patch 6)."""

    def stop_if_still_running(sampler) -> None:
        interrupted, sampler.start_interrupted = getattr(sampler, "start_interrupted", False), False
        try:
            beams_stop_if_still_running(sampler)
        except (AttributeError, RuntimeError):
            if not interrupted:
                raise
            # It joined a thread never made (None) or never started: none runs.

    return stop_if_still_running


def sampling_every(period_ms: int, beams_init=statesampler.StateSampler.__init__):
    """`StateSampler.__init__` (Beam's, `beams_init`) with `period_ms` for the sampling period Beam's caller leaves
    at its default (patch 7)."""

    def __init__(sampler, prefix, counter_factory, sampling_period_ms=period_ms) -> None:
        beams_init(sampler, prefix, counter_factory, sampling_period_ms)

    return __init__


# The command the FnApiRunner starts a multi-processing worker with (fn_runner.FnApiRunner.run_pipeline).
BEAMS_WORKER_COMMAND = f"{sys.executable} -m {BEAMS_WORKER_MODULE}"


def _started_with(worker_command: str):
    """`SubprocessSDKEnvironment.from_command_string`, giving `worker_command` for Beam's own worker command."""
    beams_own = vars(environments.SubprocessSDKEnvironment)["from_command_string"].__func__

    def from_command_string(cls, command_string):
        return beams_own(cls, worker_command if command_string == BEAMS_WORKER_COMMAND else command_string)

    return classmethod(from_command_string)


@contextlib.contextmanager
def remembered_dofn_specs():
    """`userstate.get_dofn_specs` remembered per kind of DoFn (`DoFnSpecs`) for the length of the block, Beam's
    own again after it; within a block that remembers them already, nothing more.

    `pipeline.cli` builds every corpus inside one, whatever the runner: building
    the graph, turning it into Beam's protos and back (the runners' own
    translations, Dask's included) ask as often as a run does.
    """
    if isinstance(userstate.get_dofn_specs, DoFnSpecs):
        yield
        return
    beams_own = userstate.get_dofn_specs
    userstate.get_dofn_specs = DoFnSpecs(beams_own)
    try:
        yield
    finally:
        userstate.get_dofn_specs = beams_own


# (Missing from another Beam, it is found by `check_supported` before anything is patched.)
BeamGroupingBuffer = getattr(execution, "GroupingBuffer", object)


class PiecewiseGroupingBuffer(BeamGroupingBuffer):
    """Beam's `GroupingBuffer`, whose `partition` gives each part in pieces of about `PIECE_VALUES` values.

    Each piece is partitioned by Beam's own code, as a buffer holding some of
    the keys: windowing and triggers stay Beam's. A key and all its values
    stay in one piece: a group is one element.
    """

    def partition(self, n: int) -> list[list[bytes]]:
        if self._grouped_output:
            return self._grouped_output
        parts: list[list[bytes]] = [[] for _ in range(n)]
        for table in pieces_of(self._table, PIECE_VALUES * n):
            piece = BeamGroupingBuffer(self._pre_grouped_coder, self._post_grouped_coder, self._windowing)
            piece._table = table
            for part, encoded in zip(parts, piece.partition(n)):
                part.extend(chunk for chunk in encoded if chunk)
        self._grouped_output = parts
        return parts


def pieces_of(table: dict, values_per_piece: int):
    """`table` (key to its list of values) cut, in its order, into tables of about `values_per_piece` values;
    a key is never cut. Each key leaves `table` as it is cut (as Beam's own `partition` clears its table): the
    values are not held twice while their grouped output is encoded and sent on."""
    piece: dict = {}
    values = 0
    for key in list(table):
        key_values = piece[key] = table.pop(key)
        values += len(key_values)
        if values >= values_per_piece:
            yield piece
            piece, values = {}, 0
    if piece:
        yield piece


def send_input_in_pieces(bundle_manager, process_bundle_id: str, read_transform_id: str, byte_streams) -> None:
    """Beam's `BundleManager._send_input_to_worker`, flushing its stream (once over the size threshold) after
    each piece instead of only at the end.

    Beam writes a bundle's whole input before it asks the worker to start
    the bundle, and a worker queues at most 5 messages of an instruction it
    has not started: in pieces, a share of over about 300 MB (what the
    queues on both sides hold) would wait for a worker that waits for the
    request. So, to a worker over gRPC, the input is written by a thread of
    its own, beside the request, as Dataflow and Flink stream a bundle's
    input; the worker ends the bundle only once every input's stream has
    ended. A worker in the runner's process reads its input as a list when
    the bundle starts, so it is written in full first, as before.
    """
    data_conn = bundle_manager._worker_handler.data_conn
    data_out = data_conn.output_stream(process_bundle_id, read_transform_id)

    def write() -> None:
        for byte_stream in byte_streams or []:
            data_out.write(byte_stream)
            data_out.maybe_flush()
        data_out.close()

    def write_beside_the_request() -> None:
        # The worker waits for the end of this stream: say why it never comes.
        try:
            write()
        except Exception:  # noqa: BLE001 - logged, as nothing joins this thread
            _LOGGER.exception("sending the input of bundle %s to %s failed", process_bundle_id, read_transform_id)

    if isinstance(data_conn, data_plane.InMemoryDataChannel):
        write()
    else:
        threading.Thread(target=write_beside_the_request, name=f"input-{process_bundle_id}-{read_transform_id}",
                         daemon=True).start()


# (Missing from another Beam, it is found by `check_supported` before anything is patched.)
_BEAMS_CLOSE_ALL = getattr(getattr(worker_handlers, "WorkerHandlerManager", None), "close_all", None)


def close_all_at_once(manager) -> None:
    """Beam's `WorkerHandlerManager.close_all`, with its worker handlers closed at once, each on a thread.

    Closing the handler of a worker process ends its streams and waits for
    the process to end (about 0.3 s); Beam closes one after another. The
    rest is Beam's own, run once they are all closed.
    """
    handlers = {handler for handlers in manager._cached_handlers.values() for handler in handlers}
    closing = [threading.Thread(target=_close_handler, args=(handler,), name=f"close-{handler.worker_id}")
               for handler in handlers]
    for thread in closing:
        thread.start()
    for thread in closing:
        thread.join()
    manager._cached_handlers.clear()
    _BEAMS_CLOSE_ALL(manager)


def _close_handler(handler) -> None:
    try:
        handler.close()
    except Exception:  # noqa: BLE001 - logged as Beam's close_all logs it, and the others still closed
        _LOGGER.error("Error closing worker_handler %s", handler, exc_info=True)


class DoFnSpecs:
    """Beam's `userstate.get_dofn_specs`, remembered per kind of DoFn.

    Beam's function makes a `MethodWrapper` (an `inspect.signature`) of every
    bound method `dir(dofn)` lists and collects the state and timer
    parameters of their defaults. That depends on the DoFn's class and on
    what its instance holds of its own under a method's name (a bound
    method, or what hides one of the class's: `beam.Map`'s DoFn keeps its
    function as `process`), so those are the key; a DoFn without a
    `__dict__` is asked of Beam every time. A failure is not remembered.
    """

    def __init__(self, get_dofn_specs):
        self._get_dofn_specs = get_dofn_specs
        self._found: dict = {}

    def __call__(self, dofn):
        key = self._key(dofn)
        if key is None:
            return self._get_dofn_specs(dofn)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self._get_dofn_specs(dofn)
        state_specs, timer_specs = found
        return set(state_specs), set(timer_specs)

    @staticmethod
    def _key(dofn):
        kind = type(dofn)
        own = getattr(dofn, "__dict__", None)
        if own is None or any(getattr(kind, name) is not getattr(object, name)
                              for name in ("__dir__", "__getattr__", "__getattribute__") if hasattr(kind, name)):
            return None  # what `dir` and `getattr` give could depend on more than the key
        methods = []
        for name, value in own.items():
            if isinstance(value, types.MethodType):
                methods.append((name, value.__func__))
            elif callable(getattr(kind, name, None)):
                methods.append((name, None))
        key = (kind, tuple(methods))
        try:
            hash(key)
        except TypeError:
            return None
        return key
