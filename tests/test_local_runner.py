"""The local runner: it loses nothing, sends its workers bounded messages, and starts them with few malloc arenas.

Each patch of `pipeline.runners.fn_api_patches` is shown against Beam's own FnApiRunner, which has the fault.
"""

from __future__ import annotations

import gc
import os
import threading
import time

import apache_beam as beam
import pytest
from apache_beam.coders.coder_impl import create_InputStream, create_OutputStream
from apache_beam.metrics.metric import Metrics, MetricsFilter
from apache_beam.portability.api import beam_fn_api_pb2
from apache_beam.runners.portability.fn_api_runner import execution, fn_runner, worker_handlers
from apache_beam.runners.worker import data_plane
from apache_beam.testing.util import assert_that, equal_to

from pipeline.runners import fn_api_patches
from pipeline.runners.beam_release import UnsupportedBeam
from pipeline.runners.fn_api_patches import PIECE_VALUES, check_supported, pieces_of
from pipeline.cli import ViewedOnceOptions
from pipeline.runners.local_runner import LocalRunner, make_local_runner

# One worker on a thread of the runner's process, fed through the data plane (gRPC) as a worker process is.
ONE_THREADED_WORKER = ("--direct_num_workers=1", "--direct_running_mode=multi_threading")


def kilobyte_groups(pipeline, groups: int):
    """`groups` groups of one 1 KB value each: a grouped stage's input of `groups` KB."""
    return pipeline | beam.Create(range(groups)) | beam.Map(lambda n: (n, b"x" * 1000)) | beam.GroupByKey()


def beams_own_fn_api_runner(options) -> fn_runner.FnApiRunner:
    return fn_runner.FnApiRunner()


RUNNERS = {"Beam's own": beams_own_fn_api_runner, "patched": make_local_runner}


def arrived(pipeline: beam.Pipeline, elements) -> int:
    """Runs `pipeline`, in which `elements` pass a step that counts them; returns how many did."""
    counter = Metrics.counter("test", "arrived")
    elements | beam.Map(lambda _: counter.inc())  # noqa: B023 - runs within this call
    result = pipeline.run()
    result.wait_until_finish()
    [count] = result.metrics().query(MetricsFilter().with_name("arrived"))["counters"]
    return count.committed


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.slow
def test_the_local_runner_loses_nothing_while_a_workers_input_is_still_being_sent(monkeypatch, runner):
    # At scale a stage's input takes seconds to send and the send queue fills: here each element is written
    # on its own, 10 ms apart, and every flush waits 0.3 s, as a full queue makes it. Beam's default
    # once-a-second flush then lost what the runner wrote during it (the 1,000,000-capture build's loss).
    whole_chunks = execution.ListBuffer.__iter__

    def element_by_element(buffer):
        for chunk in whole_chunks(buffer):
            stream = create_InputStream(chunk)
            while stream.size() > 0:
                element = create_OutputStream()
                buffer._coder_impl.encode_to_stream(buffer._coder_impl.decode_from_stream(stream, True), element, True)
                time.sleep(0.01)
                yield element.get()

    enqueue = data_plane._GrpcDataChannel._enqueue_to_send

    def enqueue_into_a_full_queue(channel, element):
        if isinstance(element, beam_fn_api_pb2.Elements.Data) and element.data:
            time.sleep(0.3)
        return enqueue(channel, element)

    monkeypatch.setattr(execution.ListBuffer, "__iter__", element_by_element)
    monkeypatch.setattr(data_plane._GrpcDataChannel, "_enqueue_to_send", enqueue_into_a_full_queue)
    options = ViewedOnceOptions(list(ONE_THREADED_WORKER))
    pipeline = beam.Pipeline(runner=RUNNERS[runner](options), options=options)
    numbers = pipeline | beam.Create(range(300)) | beam.Reshuffle()
    # A Flatten of two stages' outputs is a buffer the runner holds and sends on as the next stage's input.
    both = (numbers | "Evens" >> beam.Filter(lambda n: n % 2 == 0),
            numbers | "Odds" >> beam.Filter(lambda n: n % 2 == 1)) | beam.Flatten()
    count = arrived(pipeline, both)
    if runner == "patched":
        assert count == 300
    else:  # Beam's flush thread dropped what the runner wrote while it flushed (docs/upstream.md)
        assert count < 300


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.slow
def test_a_worker_gets_a_large_grouped_share_in_messages_of_about_10_mb(monkeypatch, runner):
    # 40,000 groups of a 1 KB value: 40 MB for the one worker. Beam's runner sent it as one message, which the
    # worker held whole (at 1,000,000 captures, 180 MB of HashDedup's input; past 2 GiB it cannot be sent).
    sent = []
    enqueue = data_plane._GrpcDataChannel._enqueue_to_send

    def recorded(channel, element):
        if isinstance(element, beam_fn_api_pb2.Elements.Data) and element.data:
            sent.append((element.transform_id, len(element.data)))
        return enqueue(channel, element)

    monkeypatch.setattr(data_plane._GrpcDataChannel, "_enqueue_to_send", recorded)
    options = ViewedOnceOptions(list(ONE_THREADED_WORKER))
    with beam.Pipeline(runner=RUNNERS[runner](options), options=options) as pipeline:
        sizes_of_groups = kilobyte_groups(pipeline, 40_000) | beam.MapTuple(lambda key, values: len(b"".join(values)))
        if runner == "patched":  # Beam's own flush thread can drop part of it on a busy machine (the test above)
            assert_that(sizes_of_groups | beam.CombineGlobally(sum), equal_to([40_000_000]))
    sizes = [size for _, size in sent]
    assert sum(sizes) > 40_000_000
    if runner == "patched":
        assert len(sizes) > 4 and max(sizes) < 16 << 20, sizes
    else:  # the whole share in one message (docs/upstream.md)
        assert max(sizes) > 40_000_000, sizes


def test_pieces_keep_each_key_whole_and_hold_about_the_values_asked():
    table = {f"key-{n}": list(range(n % 7 + 1)) for n in range(1_000)}
    cut = dict(table)
    pieces = []
    for piece in pieces_of(cut, PIECE_VALUES // 100):
        # What is cut has left the table: a grouped stage's values are not held twice while they are encoded.
        assert not piece.keys() & cut.keys()
        pieces.append(piece)
    assert not cut
    assert [key for piece in pieces for key in piece] == list(table)
    assert all(piece[key] is table[key] for piece in pieces for key in piece)
    sizes = [sum(map(len, piece.values())) for piece in pieces]
    assert all(PIECE_VALUES // 100 <= size < PIECE_VALUES // 100 + 7 for size in sizes[:-1]), sizes


@pytest.mark.slow
def test_worker_processes_start_with_two_malloc_arenas_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    options = ViewedOnceOptions(["--direct_num_workers=1", "--direct_running_mode=multi_processing"])
    with beam.Pipeline(runner=make_local_runner(options), options=options) as pipeline:
        seen = pipeline | beam.Create([None]) | beam.Map(lambda _: os.environ.get("MALLOC_ARENA_MAX"))
        assert_that(seen, equal_to(["2"]))
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    make_local_runner(options)
    assert os.environ["MALLOC_ARENA_MAX"] == "8"


@pytest.mark.slow
def test_a_share_larger_than_the_queues_reaches_a_worker_that_has_not_started_its_bundle(monkeypatch):
    # Beam writes a bundle's input before it starts the bundle; a worker queues little of an instruction it has
    # not started. Messages of about 2 MB (a piece) and queues of 1 message and 1 MB here stand for messages of
    # 10 MB and queues of 5 messages and 100 MB at scale.
    stream = data_plane.SizeBasedBufferingClosableOutputStream.__init__
    monkeypatch.setattr(stream, "__defaults__", (None, None, 100 << 10, 512 << 20))
    monkeypatch.setattr(data_plane, "_DEFAULT_RECEIVE_QUEUE_MAX_ELEMENTS", 1)
    monkeypatch.setattr(data_plane, "_DEFAULT_SEND_QUEUE_MAX_ELEMENTS", 1)
    monkeypatch.setattr(data_plane, "_DEFAULT_SEND_QUEUE_MAX_BYTES", 1 << 20)
    options = ViewedOnceOptions(list(ONE_THREADED_WORKER))
    finished = []

    def build():
        with beam.Pipeline(runner=make_local_runner(options), options=options) as pipeline:
            assert_that(kilobyte_groups(pipeline, 60_000) | beam.combiners.Count.Globally(), equal_to([60_000]))
        finished.append(True)

    builder = threading.Thread(target=build, daemon=True)
    builder.start()
    builder.join(timeout=60)
    assert finished, "the build waits for ever: its worker waits for a request the runner has not sent"


def test_the_patches_last_one_run_and_beams_own_runner_stays_unpatched_beside_it():
    # In process (no data channel), a step of the pipeline sees the runner's module as the run left it.
    options = ViewedOnceOptions([])
    seen = {}
    for name in ("patched", "Beam's own", "patched"):
        pipeline = beam.Pipeline(runner=RUNNERS[name](options), options=options)
        limits = pipeline | beam.Create([None]) | beam.Map(lambda _: worker_handlers.DATA_BUFFER_TIME_LIMIT_MS)
        assert_that(limits, equal_to([0 if name == "patched" else 1000]))
        pipeline.run().wait_until_finish()
        seen[name] = (worker_handlers.DATA_BUFFER_TIME_LIMIT_MS, execution.GroupingBuffer,
                      fn_runner.BundleManager._send_input_to_worker)
    assert seen["patched"] == seen["Beam's own"]
    assert seen["patched"][:2] == (1000, fn_api_patches.BeamGroupingBuffer)


def _sampling_period(_) -> int:
    from apache_beam.runners.worker import statesampler
    from apache_beam.utils.counters import CounterFactory

    return statesampler.StateSampler("stage", CounterFactory()).sampling_period_ms


def test_a_bundles_state_sampler_wakes_every_10_ms_in_the_patched_run_and_every_200_ms_beside_it():
    # Its `stop`, at each bundle's end, waits for the sampler's next wake.
    options = ViewedOnceOptions([])
    for name, period in (("patched", fn_api_patches.SAMPLING_PERIOD_MS), ("Beam's own", 200)):
        pipeline = beam.Pipeline(runner=RUNNERS[name](options), options=options)
        assert_that(pipeline | beam.Create([None]) | beam.Map(_sampling_period), equal_to([period]))
        pipeline.run().wait_until_finish()
    assert _sampling_period(None) == 200 and fn_api_patches.SAMPLING_PERIOD_MS == 10


def test_the_graph_is_left_out_of_the_collectors_passes_while_it_runs_and_given_back_after():
    # In process, a step sees the objects that existed when the run began (the imports, the graph) frozen; the
    # run's own objects are collected as ever, and after it nothing is frozen.
    options = ViewedOnceOptions([])
    before = gc.get_freeze_count()
    pipeline = beam.Pipeline(runner=make_local_runner(options), options=options)
    frozen = pipeline | beam.Create([None]) | beam.Map(lambda _: gc.get_freeze_count() > before)
    assert_that(frozen, equal_to([True]))
    pipeline.run().wait_until_finish()
    assert gc.get_freeze_count() == before


def test_another_beam_release_is_refused_in_one_line_before_anything_is_patched(monkeypatch):
    monkeypatch.setattr(beam, "__version__", "2.78.0")
    with pytest.raises(UnsupportedBeam) as refused:
        with beam.Pipeline(runner=LocalRunner()) as pipeline:
            pipeline | beam.Create([1])
    message = str(refused.value)
    assert "\n" not in message and "Beam 2.78.0 is installed" in message
    assert "apache-beam>=2.77,<2.78" in message and "--runner=FnApiRunner" in message
    assert worker_handlers.DATA_BUFFER_TIME_LIMIT_MS == 1000


@pytest.mark.parametrize("owner, name, named", [
    (worker_handlers, "DATA_BUFFER_TIME_LIMIT_MS", "worker_handlers.DATA_BUFFER_TIME_LIMIT_MS"),
    (fn_runner.BundleManager, "_send_input_to_worker", "fn_runner.BundleManager._send_input_to_worker"),
])
def test_a_patched_attribute_that_beam_no_longer_has_is_named_in_one_line(monkeypatch, owner, name, named):
    monkeypatch.delattr(owner, name)
    with pytest.raises(UnsupportedBeam, match=named) as refused:
        check_supported()
    assert "\n" not in str(refused.value)


def test_an_attribute_beams_grouping_buffer_no_longer_sets_is_named(monkeypatch):
    class Renamed(execution.GroupingBuffer):
        def __init__(self, pre_grouped_coder, post_grouped_coder, windowing):
            self.table = {}

    monkeypatch.setattr(execution, "GroupingBuffer", Renamed)
    with pytest.raises(UnsupportedBeam, match=r"execution\.GroupingBuffer\(\)\._table"):
        check_supported()


def test_python_m_pipeline_under_another_beam_says_so_in_one_line(monkeypatch, tmp_path, capsys):
    from pipeline import cli

    monkeypatch.setattr(beam, "__version__", "2.78.0")
    assert cli.main(["--quiet", "--output", str(tmp_path / "out")]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("python -m pipeline: the build failed: UnsupportedBeam: webcorpus's local runner "
                           "(pipeline/runners/local_runner.py) was written for Beam 2.77, and Beam 2.78.0 is installed: "
                           "install apache-beam>=2.77,<2.78"), line


def test_the_report_names_the_runner_as_the_user_chose_it():
    from pipeline.runners.local_runner import describe_runner

    patched = "DirectRunner (webcorpus's patched FnApiRunner, pipeline/runners/local_runner.py)"
    assert [describe_runner(name) for name in (None, "DirectRunner", "direct")] == [patched] * 3
    assert describe_runner("FnApiRunner") == "FnApiRunner"
    assert describe_runner("DaskRunner") == "DaskRunner (pipeline.runners.dask_runner.DaskRunner)"


class Keep(beam.DoFn):
    def process(self, element):
        yield element


class CountPerKey(beam.DoFn):
    SEEN = beam.transforms.userstate.CombiningValueStateSpec("seen", sum)

    def process(self, element, seen=beam.DoFn.StateParam(SEEN)):
        seen.add(1)
        yield element[0], seen.read()


def test_the_local_runner_asks_beam_for_a_dofns_state_specs_once_per_kind(monkeypatch):
    """Beam works a DoFn's state and timer specs out (every method inspected) each time it asks; the local runner
    asks Beam once per kind of DoFn in a run, and stateful DoFns still get their state."""
    from apache_beam.transforms import userstate

    asked = []
    beams_own = userstate.get_dofn_specs

    def counted(dofn):
        asked.append(type(dofn).__name__)
        return beams_own(dofn)

    with beam.Pipeline(runner=LocalRunner()) as pipeline:
        pairs = pipeline | beam.Create([("a", 1), ("a", 2), ("b", 3)]) | "Keep" >> beam.ParDo(Keep())
        counts = pairs | "Again" >> beam.ParDo(Keep()) | beam.ParDo(CountPerKey())
        assert_that(counts, equal_to([("a", 1), ("a", 2), ("b", 1)]))
        monkeypatch.setattr(userstate, "get_dofn_specs", counted)  # what the runner's patch asks, from here on
    assert userstate.get_dofn_specs is counted  # Beam's own again after the run
    assert asked and len(asked) == len(set(asked)), asked


@pytest.mark.parametrize("runner", [[], ["--runner=FnApiRunner"]], ids=["local runner", "Beam's own"])
def test_a_build_asks_beam_for_a_dofns_state_specs_once_per_kind_on_any_runner(write_warc, tmp_path, monkeypatch,
                                                                              runner):
    """Building the graph and turning it into Beam's protos and back ask as often as a run does: the whole build,
    on any runner, asks Beam once per kind of DoFn, and Beam's own function is back after it."""
    from apache_beam.transforms import userstate

    from pipeline.sample import Capture
    from tests.helpers import page
    from tests.test_cli import run_main

    asked = []
    beams_own = userstate.get_dofn_specs

    def counted(dofn):
        asked.append(type(dofn).__name__)
        return beams_own(dofn)

    monkeypatch.setattr(userstate, "get_dofn_specs", counted)
    source = write_warc([Capture("https://example.org/a", page("<p>Some words of a page.</p>").encode())])
    code, _, stderr = run_main(["--input", str(source), "--output", str(tmp_path / "out"), "--quiet", *runner])
    assert code == 0, stderr
    assert userstate.get_dofn_specs is counted
    assert asked and len(asked) == len(set(asked)), sorted(asked)


def test_dofn_specs_are_beams_and_a_failure_is_not_remembered():
    from apache_beam.transforms import userstate

    specs = fn_api_patches.DoFnSpecs(userstate.get_dofn_specs)
    assert specs(CountPerKey()) == userstate.get_dofn_specs(CountPerKey()) == ({CountPerKey.SEEN}, set())
    assert specs(Keep()) == (set(), set())

    class Twice(beam.DoFn):
        def process(self, element, first=beam.DoFn.StateParam(CountPerKey.SEEN),
                    second=beam.DoFn.StateParam(CountPerKey.SEEN)):
            yield element

    for _ in range(2):
        with pytest.raises(ValueError, match="duplicate"):
            specs(Twice())
    # beam.FlatMap's DoFn holds a bound method as its own `process`, whose defaults count (beam.Map's wraps it in a
    # function, whose do not): one class, three answers, each Beam's.
    stateful, plain, wrapped = (beam.FlatMap(CountPerKey().process).fn, beam.FlatMap(Keep().process).fn,
                                beam.Map(CountPerKey().process).fn)
    assert specs(stateful) == userstate.get_dofn_specs(stateful) == ({CountPerKey.SEEN}, set())
    assert specs(plain) == userstate.get_dofn_specs(plain) == (set(), set())
    assert specs(wrapped) == userstate.get_dofn_specs(wrapped) == (set(), set())


def test_the_worker_handlers_are_closed_at_once_and_then_as_beam_closes_them():
    """Closing a worker process's handler waits for the process to end: the local runner closes them all at once
    (Beam one after another), then does what else Beam's close_all does; a failure to close one is logged."""
    import threading

    asked, closed = [], []
    # Each close waits until all three are closing: closed one after another, the first would wait alone
    # (until the barrier breaks, as a failure to close), and none would pass it.
    all_closing = threading.Barrier(3, timeout=60)

    class ClosedTogether:
        def __init__(self, worker_id: str, fails: bool = False):
            self.worker_id = worker_id
            self._fails = fails

        def close(self):
            asked.append(self.worker_id)
            all_closing.wait()
            closed.append(self.worker_id)
            if self._fails:
                raise RuntimeError("the worker was gone")

    manager = worker_handlers.WorkerHandlerManager({}, None)
    handlers = [ClosedTogether("worker_1"), ClosedTogether("worker_2"), ClosedTogether("worker_3", fails=True)]
    manager._cached_handlers["environment"] = handlers + handlers[:1]  # a handler may be listed twice
    with fn_api_patches.patched_fn_api_runner():
        manager.close_all()
    assert sorted(asked) == ["worker_1", "worker_2", "worker_3"]  # each once
    assert sorted(closed) == ["worker_1", "worker_2", "worker_3"]  # all three closing at once
    assert not manager._cached_handlers and manager._workers_by_id == {}


def _parent_pid(_) -> int:
    return os.getppid()


@pytest.mark.slow
@pytest.mark.parametrize("server_there", [True, False], ids=["forked", "the server gone: Beam's own worker"])
def test_multi_processing_workers_are_forked_from_a_server_that_imported_them(server_there):
    """The local runner's worker processes are forked from a process that imported Beam and webcorpus while the
    graph was built (each would import them afresh: 1.4 s of CPU a worker); where that server is gone, a worker is
    Beam's own, started afresh, and the build the same. The server ends with the run."""
    options = ViewedOnceOptions(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    runner = make_local_runner(options)
    forks = runner._worker_forks
    if not server_there:
        os.kill(forks.pid, 9)
        time.sleep(0.2)
    with beam.Pipeline(runner=runner, options=options) as pipeline:
        forked = (pipeline | beam.Create(range(40)) | beam.Reshuffle() | beam.Map(_parent_pid)
                  | beam.Map(lambda pid, server=forks.pid: pid == server) | beam.Distinct())
        assert_that(forked, equal_to([server_there]))
        # (A forked worker's bundles end as the runner's own do: patch 7.)
        periods = (pipeline | "Periods" >> beam.Create(range(4)) | "SpreadPeriods" >> beam.Reshuffle()
                   | "Period" >> beam.Map(_sampling_period) | "DistinctPeriods" >> beam.Distinct())
        assert_that(periods, equal_to([10 if server_there else 200]), label="period")
        # (And what the server imported is frozen in a forked worker, left out of its collector's passes.)
        frozen = (pipeline | "Workers" >> beam.Create(range(4)) | "SpreadWorkers" >> beam.Reshuffle()
                  | "Frozen" >> beam.Map(lambda _: gc.get_freeze_count() > 0) | "DistinctFrozen" >> beam.Distinct())
        assert_that(frozen, equal_to([server_there]), label="frozen")
    with pytest.raises(ProcessLookupError):
        os.kill(forks.pid, 0)
    assert not os.path.exists(forks.command.split()[-2])


def test_the_workers_server_starts_with_the_command_where_it_asks_for_worker_processes():
    from pipeline.runners import worker_fork

    assert worker_fork.asks_for_worker_processes(["--direct_running_mode=multi_processing", "--input", "x"])
    assert worker_fork.asks_for_worker_processes(["--direct_running_mode", "multi_processing"])
    assert not worker_fork.asks_for_worker_processes(["--direct_running_mode", "in_memory", "multi_processing"])
    assert not worker_fork.asks_for_worker_processes(["--direct_running_mode"])
    assert not worker_fork.asks_for_worker_processes(["--direct_running_mode=multi_processing", "--runner=DaskRunner"])
    assert worker_fork.asks_for_worker_processes(["--runner", "DirectRunner", "--direct_running_mode=multi_processing"])
    worker_fork.start_early(["--input", "x"])
    assert worker_fork.started_early() is None
    worker_fork.start_early(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    runner = make_local_runner(ViewedOnceOptions(["--direct_num_workers=2", "--direct_running_mode=multi_processing"]))
    try:
        assert runner._worker_forks is not None and worker_fork.started_early() is None  # the early one, taken
    finally:
        runner._worker_forks.close()
    with pytest.raises(ProcessLookupError):
        os.kill(runner._worker_forks.pid, 0)


def test_a_bundle_interrupted_as_its_state_sampler_starts_leaves_no_thread_running(monkeypatch):
    # Ctrl-C while the main thread waits for the sampler's thread to start: on Beam's own, that thread (not a
    # daemon) runs on, and the process, which waits for it at exit, never ends.
    from apache_beam.runners.worker import statesampler
    from apache_beam.utils.counters import CounterFactory

    thread_start = threading.Thread.start
    started = []

    def start_then_interrupted(thread):
        thread_start(thread)
        started.append(thread)
        raise KeyboardInterrupt

    def interrupted_bundle():
        sampler = statesampler.StateSampler("stage", CounterFactory())
        monkeypatch.setattr(threading.Thread, "start", start_then_interrupted)
        with pytest.raises(KeyboardInterrupt):
            sampler.start()
        monkeypatch.setattr(threading.Thread, "start", thread_start)
        sampler.stop_if_still_running()  # what the bundle's `finally` does
        return sampler, started.pop()

    sampler, thread = interrupted_bundle()
    left_running = thread.is_alive()
    sampler.stop()  # (for the test's sake)
    assert left_running
    with fn_api_patches.patched_fn_api_runner():
        _, thread = interrupted_bundle()
    assert not thread.is_alive()


def test_a_worker_compresses_as_many_blocks_at_once_as_it_has_cores_to_itself(monkeypatch):
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.runners.local_runner import MOST_BLOCKS_COMPRESSED_TOGETHER, cores_per_worker

    def workers(count: int) -> PipelineOptions:
        return PipelineOptions(["--direct_running_mode=multi_processing", f"--direct_num_workers={count}"])

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert cores_per_worker(PipelineOptions([])) == 2
    assert cores_per_worker(workers(2)) == cores_per_worker(workers(3)) == 1
    assert cores_per_worker(PipelineOptions(["--runner=DataflowRunner"])) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cores_per_worker(PipelineOptions([])) == MOST_BLOCKS_COMPRESSED_TOGETHER
    assert cores_per_worker(workers(8)) == 2
    assert cores_per_worker(PipelineOptions(["--runner=FlinkRunner"])) == 1
