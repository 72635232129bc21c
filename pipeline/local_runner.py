"""Beam's local runner (the FnApiRunner), made to hold its workers to bounded messages.

Beam 2.77's DirectRunner first tries to download a Prism binary, which fails
offline; under that name `make_local_runner` gives the in-process FnApiRunner
(which also runs `--direct_running_mode=multi_processing`), with three changes
to how it feeds its workers. None changes what a worker computes.

- It buffers by size only. By default it also flushes what it sends a worker
  once a second, from a thread of its own
  (`worker_handlers.DATA_BUFFER_TIME_LIMIT_MS`), while the runner's thread
  goes on writing the same stream unlocked: whatever is written between the
  flush's copy and its clearing of the buffer is lost. A stage's input that
  took over a second to send (at 1,000,000 captures, the report's 860 MB of
  outcomes, before they were tallied per bundle) lost hundreds of thousands
  of records, and the build failed its accounting.
- It sends a worker its share of a stage in pieces. The runner gives each
  worker one bundle, its whole share of the stage's input, and Beam writes
  that share into one message: a grouped stage's share as one encoded
  buffer. A worker then held its whole share at once (at 1,000,000 captures,
  180 MB of HashDedup's input; past protobuf's 2 GiB, a share cannot be sent
  at all). Here a grouped share is encoded in pieces of about
  `PIECE_VALUES` values, and the stream is flushed after each piece, so that
  a message holds about 10 MB (the data plane's size threshold) and a
  worker, which decodes each message as it comes, holds a few of them: what
  Dataflow and Flink do with bounded bundles. To a worker process the
  input is written beside the request that starts the bundle, not before it
  (`send_input_in_pieces` says why).
- Its worker processes (`--direct_running_mode=multi_processing`) start
  with `MALLOC_ARENA_MAX=2` unless the environment sets it. A worker runs
  each bundle on a thread of a pool, and glibc gives each thread an arena of
  its own that keeps what a stage freed: most of a worker's growth with the
  input was these arenas (docs/scale.md).

This relies on the FnApiRunner's internals (`GroupingBuffer`, the bundle
manager's `_send_input_to_worker`, the data plane's channel classes), so Beam
is pinned to 2.77 in requirements.txt; `tests/test_local_runner.py` checks each change.
"""

from __future__ import annotations

import logging
import os
import threading

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.portability.api import beam_provision_api_pb2
from apache_beam.runners.portability.fn_api_runner import execution, fn_runner, worker_handlers
from apache_beam.runners.portability.portable_runner import JobServiceHandle
from apache_beam.runners.worker import data_plane

# Values of a grouped stage's input encoded per piece. A fingerprint is about 450 bytes, a side-file line
# about 300: a piece is about 1 MB, and a message, flushed once over 10 MB, is at most one piece more.
PIECE_VALUES = 2_000

# Arenas of glibc's allocator per worker process, as `MALLOC_ARENA_MAX`.
WORKER_MALLOC_ARENAS = "2"

BeamGroupingBuffer = execution.GroupingBuffer

_LOGGER = logging.getLogger(__name__)


def make_local_runner(options: PipelineOptions) -> fn_runner.FnApiRunner:
    """The FnApiRunner, with the pipeline's options provisioned to its workers and a data plane of bounded
    messages."""
    worker_handlers.DATA_BUFFER_TIME_LIMIT_MS = 0
    # Worker processes inherit the runner's environment; glibc reads this when a process starts.
    os.environ.setdefault("MALLOC_ARENA_MAX", WORKER_MALLOC_ARENAS)
    execution.GroupingBuffer = PiecewiseGroupingBuffer
    fn_runner.BundleManager._send_input_to_worker = send_input_in_pieces
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    provision = fn_runner.ExtendedProvisionInfo(beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded))
    return fn_runner.FnApiRunner(provision_info=provision)


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
    a key is never cut."""
    piece: dict = {}
    values = 0
    for key, key_values in table.items():
        piece[key] = key_values
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
