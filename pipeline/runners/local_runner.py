"""webcorpus's local runner: Beam's in-process FnApiRunner, patched to lose nothing and bound its workers' input.

`python -m pipeline` runs it for `--runner=DirectRunner` (the default):
Beam 2.77's own DirectRunner first tries to download a Prism binary, which
fails offline, and its fallback, Beam's FnApiRunner, has faults that lose
records and hold a worker's whole input at once at scale. `make_local_runner`
gives the FnApiRunner (which also runs
`--direct_running_mode=multi_processing`) with the pipeline's options
provisioned to its workers, and for each run:

- the patches of `pipeline/runners/fn_api_patches.py` (why each, there; the reports
  upstream, docs/upstream.md), undone when the run ends, so that Beam's own
  FnApiRunner, `--runner=FnApiRunner`, stays one flag away and unpatched;
- its worker processes (`--direct_running_mode=multi_processing`) are
  forked from a process that imports Beam and webcorpus while the graph is
  built (`pipeline/runners/worker_fork.py`), not started afresh (each would import
  them itself: about 1.4 s of CPU a worker);
- the objects that exist when it starts (the modules imported, the graph) are
  frozen (`gc.freeze`) until it ends: they live as long, and every full pass of
  the collector would walk them again;
- they start with `MALLOC_ARENA_MAX=2` unless the environment sets it. A worker runs
  each bundle on a thread of a pool, and glibc gives each thread an arena of
  its own that keeps what a stage freed: most of a worker's growth with the
  input was these arenas (docs/scale.md).

`tests/test_local_runner.py` checks each change.
"""

from __future__ import annotations

import gc
import os

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.portability.api import beam_provision_api_pb2
from apache_beam.runners.portability.fn_api_runner import fn_runner
from apache_beam.runners.portability.portable_runner import JobServiceHandle

from pipeline.runners.fn_api_patches import check_supported, patched_fn_api_runner
from pipeline.runners.worker_fork import IN_PROCESS_RUNNER_NAMES, ForkServer, started_early
from pipeline.options import RUNNER_ALIASES

# What they run, as the report and --help name it.
DESCRIPTION = "DirectRunner (webcorpus's patched FnApiRunner, pipeline/runners/local_runner.py)"

# Arenas of glibc's allocator per worker process, as `MALLOC_ARENA_MAX`.
WORKER_MALLOC_ARENAS = "2"


class LocalRunner(fn_runner.FnApiRunner):
    """Beam's FnApiRunner, run with `pipeline.runners.fn_api_patches`'s patches; with `worker_forks`, its worker processes
    are forked from that server (`pipeline.runners.worker_fork`), which the run closes when it ends."""

    def __init__(self, *args, worker_forks: ForkServer | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._worker_forks = worker_forks

    def run_pipeline(self, pipeline, options):
        forks, self._worker_forks = self._worker_forks, None
        # What exists now (Beam's and webcorpus's modules, the graph) lives until the run ends: frozen, the
        # collector's full passes skip it (on the developer corpus, 0.15 s of an annotated build's 0.3 s of GC).
        gc.freeze()
        try:
            with patched_fn_api_runner(forks.command if forks is not None else None):
                return super().run_pipeline(pipeline, options)
        finally:
            gc.unfreeze()
            if forks is not None:
                forks.close()


def make_local_runner(options: PipelineOptions) -> LocalRunner:
    """The patched FnApiRunner, with the pipeline's options provisioned to its workers; in the multi-processing
    mode, the server its workers are forked from is started now, to import Beam and webcorpus while the graph
    is built."""
    forked_workers = worker_processes(options) is not None
    # Beam's version and what the patches touch, before anything is built or started (one line otherwise).
    check_supported(forked_workers)
    # Worker processes inherit the runner's environment; glibc reads this when a process starts.
    os.environ.setdefault("MALLOC_ARENA_MAX", WORKER_MALLOC_ARENAS)
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    provision = fn_runner.ExtendedProvisionInfo(beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded))
    forks = (started_early() or ForkServer()) if forked_workers else None
    return LocalRunner(provision_info=provision, worker_forks=forks)


def worker_processes(options: PipelineOptions) -> int | None:
    """The worker processes the local runner starts (`--direct_running_mode=multi_processing`), for the progress
    line; None for another runner or mode."""
    if options.view_as(StandardOptions).runner not in IN_PROCESS_RUNNER_NAMES:
        return None
    direct = options.view_as(DirectOptions)
    if direct.direct_running_mode != "multi_processing":
        return None
    return direct.direct_num_workers or os.cpu_count() or 1


# The most blocks a worker compresses at once (zstandard 9 takes about 20 MiB for each).
MOST_BLOCKS_COMPRESSED_TOGETHER = 4


def cores_per_worker(options: PipelineOptions) -> int:
    """The cores each worker of the local runner has to itself, for compressing a shard's blocks (`CompressWrite`):
    the machine's, shared by the multi-processing mode's worker processes, at most
    `MOST_BLOCKS_COMPRESSED_TOGETHER`; 1 for another runner, which shares its workers' cores out itself (a Python
    worker of Dataflow or Flink runs a bundle on each)."""
    if options.view_as(StandardOptions).runner not in IN_PROCESS_RUNNER_NAMES:
        return 1
    cores = len(os.sched_getaffinity(0))
    return max(1, min(MOST_BLOCKS_COMPRESSED_TOGETHER, cores // (worker_processes(options) or 1)))


def describe_runner(name: str | None) -> str:
    """What `--runner=name` runs, for the report: the local runner says it is patched, an alias what it stands for."""
    if name in IN_PROCESS_RUNNER_NAMES:
        return DESCRIPTION
    if name in RUNNER_ALIASES:
        return f"{name} ({RUNNER_ALIASES[name]})"
    return name
