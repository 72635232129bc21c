"""The same pipeline on real engines, and the package as users install it.

Every engine runs `python -m pipeline` on two small WARC files written here
(the shipped sample's pages, a duplicate across the files) and must produce
what the in-process DirectRunner produces: the same Avro records (as a
multiset, order ignored), the same side-output lines, the same report counts,
and, as builds are reproducible, byte-identical files (manifest digests).

Servers (Beam's job service and worker pool, a Dask scheduler and two
workers) are started on 127.0.0.1 with ports the OS picks, awaited with
bounded timeouts, and always stopped with their whole process group. The
Dask tests are skipped when dask/distributed are not installed
(`pip install 'apache-beam[dask]==2.77.*'`). docs/engines.md has the
commands for each engine, and the times measured.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from collections import Counter
from pathlib import Path, PurePosixPath

import apache_beam as beam
import fastavro
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

import lexbor_headers

from pipeline.cli import RUNNER_ALIASES
from pipeline.graph import SIDE_OUTPUTS
from pipeline.sample import SAMPLE_PATH, sample_captures, warc_bytes
from tests import test_staging
from transforms.corpus.corpus_format import FILE_PREFIX
from transforms.stages.compress_write.staging import STAGING_DIR
from transforms.report.manifest import MANIFEST_NAME

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
RUN_TIMEOUT = 180  # seconds for one pipeline run
START_TIMEOUT = 60  # seconds for a server to be ready
STOCK_DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
NO_DASK = "dask/distributed are not installed: pip install 'apache-beam[dask]==2.77.*'"


# Processes ------------------------------------------------------------------------------------

def engine_env(**extra: str) -> dict[str, str]:
    """The environment of every process started here: this interpreter's bin first on PATH
    (Beam's worker pool starts workers with the `python` it finds there) and the repo importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(PYTHON).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def tail(path: Path, size: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return ""


def stop_group(process: subprocess.Popen) -> None:
    """Stops `process` and everything it started (it leads its own process group)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # Children may outlive a leader that exited: the group id is the leader's pid.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@contextlib.contextmanager
def server(command: list[str], log: Path, env: dict[str, str] | None = None):
    """Runs `command` in its own process group for the `with` block, output to `log`."""
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=REPO, env=env or engine_env(), start_new_session=True)
    try:
        yield process
    finally:
        stop_group(process)


def wait_for(ready, what: str, processes: list[subprocess.Popen], log: Path, timeout: float = START_TIMEOUT):
    """Polls `ready()` until it returns a true value; fails early if a process died."""
    deadline = time.monotonic() + timeout
    while True:
        value = ready()
        if value:
            return value
        dead = [p.args for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            reason = f"exited: {dead}" if dead else f"not ready after {timeout:.0f} s"
            pytest.fail(f"{what} {reason}\n--- {log.name} ---\n{tail(log)}")
        time.sleep(0.2)


def port_open(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def run_pipeline(args: list[str], output: Path, log: Path, cwd: Path = REPO, python: str = PYTHON,
                 env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT) -> float:
    """Runs `python -m pipeline --output OUTPUT ARGS`; returns its wall time."""
    command = [python, "-m", "pipeline", "--output", str(output), *args]
    start = time.monotonic()
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=cwd, env=env or engine_env(), start_new_session=True)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            stop_group(process)
    seconds = time.monotonic() - start
    if code != 0:
        status = f"timed out after {timeout:.0f} s" if code is None else f"exit status {code}"
        pytest.fail(f"{' '.join(command)}: {status}\n--- {log.name} ---\n{tail(log)}")
    print(f"{' '.join(args) or 'default run'}: {seconds:.1f} s")
    return seconds


# What a run produced --------------------------------------------------------------------------

def canonical(record, drop: tuple[str, ...] = ()) -> str:
    return json.dumps({k: v for k, v in record.items() if k not in drop}, sort_keys=True, ensure_ascii=False)


def corpus_records(output: Path, drop: tuple[str, ...] = ()) -> Counter:
    records = Counter()
    for path in sorted(output.glob(f"{FILE_PREFIX}-*.avro")):
        with open(path, "rb") as handle:
            records.update(canonical(record, drop) for record in fastavro.reader(handle))
    return records


def side_output_lines(output: Path) -> dict[str, Counter]:
    return {name: Counter(line for path in output.glob(f"{name}-*") for line in path.read_text().splitlines())
            for name in SIDE_OUTPUTS}


def report_counts(output: Path, drop_paths: bool = False) -> dict:
    """report.json; with `drop_paths`, less what depends on the input paths (which the records hold)."""
    report = json.loads((output / "report.json").read_text())
    if drop_paths:
        for key in ("files", "ratios"):
            report.pop(key)
        report["options"].pop("inputs")
        report["bytes"].pop("written")
    return report


def leftovers(output: Path) -> list[str]:
    return sorted(path.name for path in output.iterdir() if path.name.startswith(("beam-temp-", STAGING_DIR)))


def manifest_outputs(output: Path) -> list:
    return json.loads((output / MANIFEST_NAME).read_text())["outputs"]


def assert_same_output(output: Path, expected: dict) -> None:
    assert leftovers(output) == [], "temporary files were left in the output directory"
    records = corpus_records(output)
    assert sum(records.values()) == sum(expected["records"].values())
    assert records == expected["records"], "the corpus records differ from the DirectRunner's"
    assert side_output_lines(output) == expected["side_outputs"]
    assert report_counts(output) == expected["report"]
    assert manifest_outputs(output) == expected["manifest_outputs"], "the files are not byte-identical"


def assert_progress_shown(log: Path) -> None:
    """The run's progress display ended with its final line (the log holds its stdout and stderr)."""
    assert any(line.startswith("done: ") and " records, " in line for line in log.read_text().splitlines()), \
        f"no progress shown:\n{tail(log)}"


# The DirectRunner's output, the reference ----------------------------------------------------

@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("engines")


@pytest.fixture(scope="module")
def warc(work) -> str:
    """The shipped sample's pages in two WARC files (a duplicate in each), as one glob pattern."""
    captures = sample_captures()
    folder = work / "input"
    folder.mkdir()
    for index, part in enumerate((captures[:5], captures[5:]), 1):
        path = folder / f"part-{index}.warc.gz"
        path.write_bytes(warc_bytes(part, filename=path.name))
    return str(folder / "*.warc.gz")


@pytest.fixture(scope="module")
def direct(work, warc) -> dict:
    output = work / "direct"
    run_pipeline(["--input", warc, "--runner=DirectRunner"], output, work / "direct.log")
    expected = {
        "records": corpus_records(output),
        "side_outputs": side_output_lines(output),
        "report": report_counts(output),
        "manifest_outputs": manifest_outputs(output),
        "output": output,
    }
    counts = expected["report"]["records"]
    assert counts["kept"] == sum(expected["records"].values()) > 0
    assert counts["duplicates"] > 0 and counts["skipped"] > 0, "the sample should exercise dedup and skips"
    return expected


# Beam's local multi-processing mode -----------------------------------------------------------

@pytest.mark.slow
def test_direct_runner_multi_processing(work, warc, direct):
    output = work / "multi-processing"
    run_pipeline(["--input", warc, "--runner=DirectRunner", "--direct_num_workers=2",
                  "--direct_running_mode=multi_processing"], output, work / "multi-processing.log")
    assert_same_output(output, direct)


# PortableRunner against Beam's Python job service ---------------------------------------------

@pytest.fixture(scope="module")
def job_endpoint(work):
    port_file = work / "job-service.port"
    log = work / "job-service.log"
    command = [PYTHON, "-m", "apache_beam.runners.portability.local_job_service_main",
               "--port", "0", "--port_file", str(port_file), "--staging_dir", str(work / "staging")]
    with server(command, log) as process:
        port = int(wait_for(lambda: port_file.exists() and port_file.read_text().strip(), "the job service",
                            [process], log))
        wait_for(lambda: port_open("localhost", port), "the job service's port", [process], log)
        yield f"localhost:{port}"


@pytest.fixture(scope="module")
def worker_pool(work):
    log = work / "worker-pool.log"
    command = [PYTHON, "-m", "apache_beam.runners.worker.worker_pool_main", "--service_port=0"]
    with server(command, log) as process:
        def address():
            match = re.search(r"Started worker pool servicer at port: (\S+)", tail(log, 100_000))
            return match and match.group(1)

        found = wait_for(address, "the worker pool", [process], log)
        wait_for(lambda: port_open("localhost", int(found.rsplit(":", 1)[1])), "the worker pool's port",
                 [process], log)
        yield found


@pytest.mark.slow
def test_portable_runner_loopback(work, warc, direct, job_endpoint):
    output = work / "portable-loopback"
    run_pipeline(["--input", warc, "--runner=PortableRunner", f"--job_endpoint={job_endpoint}",
                  "--environment_type=LOOPBACK"], output, work / "portable-loopback.log")
    assert_same_output(output, direct)
    assert_progress_shown(work / "portable-loopback.log")


@pytest.mark.slow
def test_portable_runner_external_worker_pool(work, warc, direct, job_endpoint, worker_pool):
    output = work / "portable-external"
    run_pipeline(["--input", warc, "--runner=PortableRunner", f"--job_endpoint={job_endpoint}",
                  "--environment_type=EXTERNAL", f"--environment_config={worker_pool}"],
                 output, work / "portable-external.log")
    assert_same_output(output, direct)
    assert "Starting worker with command" in tail(work / "worker-pool.log", 100_000), \
        "the job did not run on the worker pool's workers"


# DaskRunner on a Dask cluster (a scheduler and two workers) -----------------------------------

@pytest.fixture(scope="module")
def dask_scheduler(work):
    pytest.importorskip("distributed", reason=NO_DASK, exc_type=ImportError)
    from distributed import Client

    scheduler_file = work / "dask-scheduler.json"
    logs = [work / "dask-scheduler.log", work / "dask-worker-1.log", work / "dask-worker-2.log"]
    # --idle-timeout and --lifetime end the cluster even if this process is killed before its cleanup.
    scheduler = [PYTHON, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(scheduler_file), "--idle-timeout", "600"]
    worker = [PYTHON, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
              "--nthreads", "1", "--no-nanny", "--no-dashboard", "--death-timeout", "60", "--lifetime", "900s",
              "--local-directory", str(work / "dask-workers")]
    with contextlib.ExitStack() as stack:
        processes = [stack.enter_context(server(scheduler, logs[0]))]

        def address():
            with contextlib.suppress(OSError, ValueError):
                return json.loads(scheduler_file.read_text())["address"]

        found = wait_for(address, "the Dask scheduler", processes, logs[0])
        processes += [stack.enter_context(server(worker, log)) for log in logs[1:]]
        with Client(found, timeout=START_TIMEOUT) as client:
            try:
                client.wait_for_workers(2, timeout=START_TIMEOUT)
            except TimeoutError:
                pytest.fail("the Dask workers did not join:\n" + "\n".join(tail(log, 1500) for log in logs[1:]))
        yield found.removeprefix("tcp://")


@pytest.mark.slow
def test_dask_runner(request, dask_scheduler, work, warc, direct):
    stock = RUNNER_ALIASES.get("DaskRunner") == STOCK_DASK_RUNNER
    if stock:  # see docs/engines.md; a runner without these faults passes
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "Beam 2.77's DaskRunner: a ParDo's tagged outputs are not told apart (bags are keyed by producing "
            "transform, so documents, skips and dead letters all reach every consumer); outputs emitted in "
            "finish_bundle (StageDocuments' staged files) are dropped; only the last leaf of the graph is "
            "computed; every task that reads a side input recomputes its upstream")))
    output = work / "dask"
    run_pipeline(["--input", warc, "--runner=DaskRunner", f"--dask_client_address={dask_scheduler}",
                  "--dask_partition_size=1"], output, work / "dask.log", timeout=60 if stock else RUN_TIMEOUT)
    assert_same_output(output, direct)
    assert_progress_shown(work / "dask.log")
    # The runner had the workers import Beam (without pandas) and every stage's module as it began.
    from distributed import Client

    with Client(dask_scheduler, timeout=START_TIMEOUT) as client:
        imported = client.run(lambda: sorted({"pandas", "pipeline.graph"} & set(__import__("sys").modules)))
    assert list(imported.values()) == [["pipeline.graph"], ["pipeline.graph"]]


@pytest.fixture
def dask_client():
    pytest.importorskip("distributed", reason=NO_DASK)
    from distributed import Client

    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        yield client


def test_a_reshuffle_on_the_dask_runner_gives_each_element_a_partition(dask_client):
    # Beam 2.77's DaskRunner makes a Reshuffle a no-op: every file one pattern matched was read in one task.
    # Spread over the cluster's threads instead, a partition (a task's input and output) held half the corpus.
    from pipeline.runners.dask_runner import DaskRunner

    pipeline = beam.Pipeline(options=PipelineOptions([]))
    # (A replaced transform's output is a new PCollection: the step after it holds on to its own.)
    spread = pipeline | beam.Create(range(8)) | beam.Reshuffle() | beam.Map(lambda n: n)
    visitor = DaskRunner().translate(pipeline, dask_client, {})
    bags = visitor.bags
    assert bags[spread].npartitions == 8
    assert sorted(bags[spread].compute()) == list(range(8))


def test_the_dask_runner_runs_a_chain_of_pardos_in_one_task_per_partition(dask_client):
    """Documents go through the chain element by element: only what leaves it (read by a GroupByKey, a Flatten,
    a side input, or nothing) is a bag, a task's output held by a worker."""
    from pipeline.runners.dask_runner import DaskRunner

    pipeline = beam.Pipeline(options=PipelineOptions([]))
    pages = pipeline | beam.Create(["a", "bb", "ccc"]) | beam.Reshuffle()
    split = pages | "Split" >> beam.FlatMap(
        lambda page: [page] if len(page) > 1 else [beam.pvalue.TaggedOutput("short", page)]).with_outputs(
        "short", main="long")
    upper = split.long | "Upper" >> beam.Map(str.upper)
    sizes = upper | "Size" >> beam.Map(len)
    (sizes, split.short | "One" >> beam.Map(lambda page: 0)) | beam.Flatten()
    visitor = DaskRunner().translate(pipeline, dask_client, {})
    with_bags = {id(pcollection) for pcollection in visitor.bags}
    assert {id(split.long), id(upper)}.isdisjoint(with_bags) and id(sizes) in with_bags  # (read by the Flatten)
    [counted] = visitor.leaves()  # the Flatten's (Beam's Dask overrides replace it: its output is a new one)
    assert sorted(counted.compute()) == [0, 2, 3]
    chain = [key for key in dict(counted.__dask_graph__()) if "run_stage" in str(key)]
    assert len(chain) == 3, chain  # one task per partition for Split, Upper, Size and One


@pytest.mark.parametrize("change, named", [
    (("version", "2.78.0"), "was written for Beam 2.77, and Beam 2.78.0 is installed"),
    (("drop", "defenestrate"), "apache_beam.runners.dask.transform_evaluator.defenestrate"),
])
def test_the_dask_runner_refuses_a_beam_it_was_not_written_for_in_one_line_before_it_starts(monkeypatch, change,
                                                                                              named):
    """It builds on Beam's DaskRunner's translations and a side input's private state: another Beam release, or a
    missing attribute, is refused before a client or a cluster is started (not a failure mid-build)."""
    pytest.importorskip("distributed", reason=NO_DASK)
    import distributed
    from apache_beam.runners.dask import transform_evaluator

    from pipeline.runners.beam_release import UnsupportedBeam
    from pipeline.runners.dask_runner import DaskRunner

    def no_client(*args, **kwargs):
        raise AssertionError("a Dask client was started")

    monkeypatch.setattr(distributed, "Client", no_client)
    kind, value = change
    if kind == "version":
        monkeypatch.setattr(beam, "__version__", value)
    else:
        monkeypatch.delattr(transform_evaluator, value)
    pipeline = beam.Pipeline(options=PipelineOptions([]))
    _ = pipeline | beam.Create([1])
    with pytest.raises(UnsupportedBeam, match=named) as refused:
        DaskRunner().run_pipeline(pipeline, pipeline.options)
    assert "\n" not in str(refused.value) and "apache-beam>=2.77,<2.78" in str(refused.value)


@pytest.mark.slow
def test_staging_on_the_dask_runner_after_a_shuffle_gives_the_direct_runners_corpus(dask_scheduler, tmp_path):
    """Staging split over the cluster's tasks, out of offset order, still gives each unit's whole shard.

    The shuffle of `test_staging.build` spreads every unit's documents over several Dask tasks (bundles) of
    two worker processes: each task writes the unit a staging file of its own, and CompressWrite must merge
    them all. Staging files named by their unit alone (not by their bundle attempt) would be overwritten by
    the last task to write one, and the unit's shard would lack the other tasks' documents.
    """
    from distributed import default_client

    from pipeline.runners.dask_runner import DaskRunner

    expected = test_staging.build(tmp_path / "direct", reshuffled=False)
    notes = tmp_path / "staged"
    notes.mkdir()
    on_dask = beam.Pipeline(runner=DaskRunner(), options=PipelineOptions([
        f"--dask_client_address={dask_scheduler}", "--dask_npartitions=2"]))
    try:
        shards = test_staging.build(tmp_path / "dask", reshuffled=True, pipeline=on_dask, staged_notes=notes)
    finally:
        with contextlib.suppress(ValueError):  # none if the runner never connected
            default_client().close()  # the runner's client, left open by its result
    assert shards == expected
    files_per_unit = Counter(note.read_text() for note in notes.iterdir())
    assert set(files_per_unit) == {f"{source_file}@{source_range}" for source_file, source_range in test_staging.UNITS}
    assert min(files_per_unit.values()) > 1, f"the shuffle should split every unit over tasks: {files_per_unit}"
    assert leftovers(tmp_path / "dask") == []


# The package as users install it --------------------------------------------------------------

def run_checked(command: list, what: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, **kwargs)
    assert result.returncode == 0, f"{what} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def build_isolation_flags() -> list[str]:
    """Builds in this environment when it can make wheels (offline); else pip fetches setuptools."""
    import setuptools

    version = tuple(int(part) for part in re.findall(r"\d+", setuptools.__version__)[:2])
    can_build_wheels = version >= (70, 1) or importlib.util.find_spec("wheel") is not None
    return ["--no-build-isolation"] if can_build_wheels else []


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist of a copy of the repository, built as Beam's stager builds the one --setup_file ships to Dataflow
    workers: once, for the wheels of both compilers."""
    pytest.importorskip("setuptools", reason="building the sdist needs setuptools")
    directory = tmp_path_factory.mktemp("sdist")
    source, dist = directory / "source", directory / "dist"
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
        "webcorpus-out"))
    if importlib.util.find_spec("build") is not None:
        run_checked([PYTHON, "-m", "build", "--no-isolation", "--sdist", "--outdir", dist, source],
                    "python -m build --sdist")
    else:
        run_checked([PYTHON, "setup.py", "-q", "sdist", "--dist-dir", dist], "setup.py sdist", cwd=source)
    return next(dist.glob("webcorpus-*.tar.gz"))


@pytest.mark.parametrize("compiler", ["present", "hidden"])
@pytest.mark.slow
def test_sdist_and_wheel_install_and_run(sdist, tmp_path, compiler):
    """sdist -> wheel -> a fresh venv -> `python -m pipeline` outside the repo, on the shipped sample.

    The fresh venv gets the wheel without its dependencies, and reuses the packages of the environment
    running the tests through a .pth file (installing Beam's ~70 dependencies anew takes about a
    minute and needs the network); `pip check` then proves the wheel's requirements are met. With the
    compiler hidden (`CC=false`), the wheel has no C accelerators: the build warns and goes on, the
    installed pipeline says in one warning line that it runs the pure-Python path, and its corpus is
    byte-identical to the one the repository's accelerated code builds from the same input.
    """
    dist, venv, cwd = (tmp_path / name for name in ("dist", "venv", "elsewhere"))
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = {"setup.py", "lexbor_headers.py", "requirements.txt", "README.md", "pipeline/data/sample.warc.gz",
               "transforms/native/_lexbor_walk.c"} - members
    assert not missing, f"the sdist lacks {sorted(missing)}: setup.py reads requirements.txt and builds the C " \
                        "module, so neither a wheel nor a Dataflow worker (--setup_file ships the sdist) can be built from it"
    hide_compiler = {"CC": "false"} if compiler == "hidden" else {}
    # The selectolax sdist that the repository's own build fetched for lexbor's headers (lexbor_headers.py), so
    # that this build does not fetch it again; without it, this build fetches it.
    kept_sdist = REPO / "build" / PurePosixPath(lexbor_headers.SDIST_URL).name
    headers_sdist = {lexbor_headers.SDIST_VARIABLE: str(kept_sdist)} if kept_sdist.is_file() else {}
    run_checked([PYTHON, "-m", "pip", "wheel", "-q", "--no-deps", *build_isolation_flags(), "-w", dist, sdist],
                "building the wheel from the sdist", env=dict(os.environ, **hide_compiler, **headers_sdist))
    wheel = next(dist.glob("webcorpus-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        accelerators = sorted(Path(name).name.split(".")[0] for name in archive.namelist() if name.endswith(".so"))
    assert accelerators == ([] if hide_compiler else ["_blocks", "_classify", "_code_page", "_gopher", "_lexbor_walk",
                                                      "_line_hashes", "_links", "_ngrams", "_scan", "_words"])

    run_checked([PYTHON, "-m", "venv", "--without-pip", venv], "python -m venv")
    python = venv / "bin" / "python"
    site_packages = Path(run_checked([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     "finding the venv's site-packages").stdout.strip())
    ours = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    # Plain paths, not site.addsitedir: that would run their .pth files too, and an editable install of
    # this repository there would import its C modules, built in place, into the fresh venv.
    (site_packages / "_webcorpus_test_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    # (--ignore-installed: the environment's own webcorpus, an editable install, is on the venv's path through the
    # .pth file; without it pip may take the wheel for installed already and leave the venv without its script.)
    run_checked([PYTHON, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index",
                 "--ignore-installed", wheel], "pip install of the wheel")
    check = subprocess.run([PYTHON, "-m", "pip", "--python", str(python), "check"], capture_output=True, text=True,
                           timeout=RUN_TIMEOUT)
    assert "webcorpus" not in check.stdout, check.stdout

    cwd.mkdir()
    env = engine_env(PATH=os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]))
    env.pop("PYTHONPATH")
    run_checked([venv / "bin" / "webcorpus", "--help"], "the webcorpus console script", cwd=cwd, env=env)
    output = cwd / "corpus"
    run_pipeline([], output, tmp_path / "installed.log", cwd=cwd, python=str(python), env=env)
    report = json.loads((output / "report.json").read_text())
    [shipped] = report["options"]["inputs"]
    assert Path(shipped).is_relative_to(site_packages), f"read {shipped}, not the sample inside the package"
    assert Path(shipped).read_bytes() == SAMPLE_PATH.read_bytes()
    assert leftovers(output) == []

    warnings = [line for line in (tmp_path / "installed.log").read_text().splitlines()
                if line.startswith("WARNING") and "accelerator" in line]
    if hide_compiler:
        assert report["accelerator"] == "python"
        assert len(warnings) == 1 and "not built or not importable" in warnings[0], warnings
    else:
        assert report["accelerator"] == "c" and warnings == [], warnings

    # The same build from the repository's sources (accelerated where built), of the same input path.
    reference = tmp_path / "reference"
    run_pipeline(["--input", shipped], reference, tmp_path / "reference.log")
    shards = sorted(path.name for path in output.glob(f"{FILE_PREFIX}-*.avro"))
    assert shards and shards == sorted(path.name for path in reference.glob(f"{FILE_PREFIX}-*.avro"))
    for name in shards + [path.name for path in output.glob("*.jsonl")]:
        assert (output / name).read_bytes() == (reference / name).read_bytes(), name
    reference_report = report_counts(reference)
    assert report_counts(output) == dict(reference_report, accelerator=report["accelerator"])
    assert report["records"]["kept"] > 0
