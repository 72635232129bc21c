"""The command line's flags: webcorpus's own, Beam's, and mistakes."""

from __future__ import annotations

import os

import pytest

from pipeline.options import parse_settings
from tests.test_cli import run_main, run_module

MISSPELLED = {
    "output": (["--ouput", "corpus"], "--ouput", "--output"),
    "input": (["--inptu", "a.warc.gz"], "--inptu", "--input"),
    "input-with-equals": (["--inptu=a.warc.gz"], "--inptu", "--input"),
    "webcorpus-boolean": (["--qiet"], "--qiet", "--quiet"),
    "beam": (["--runner=DirectRunner", "--direct_num_worker=2"], "--direct_num_worker", "--direct_num_workers"),
    "beam-boolean": (["--save_main_sesion"], "--save_main_sesion", "--save_main_session"),
    "dask-runner": (["--runner=DaskRunner", "--dask_client_adress=localhost:8786"], "--dask_client_adress",
                    "--dask_client_address"),
}


@pytest.mark.parametrize("case", sorted(MISSPELLED))
def test_an_unknown_flag_is_an_error_that_names_the_nearest_flag(case, tmp_path, monkeypatch):
    args, wrong, nearest = MISSPELLED[case]
    monkeypatch.chdir(tmp_path)  # where the default --output would be written
    code, stdout, stderr = run_main(args)
    assert code == 2, (stdout, stderr)
    assert stderr.splitlines() == [
        f"python -m pipeline: error: unknown option {wrong}; did you mean {nearest}? (see python -m pipeline --help)"]
    assert list(tmp_path.iterdir()) == []  # nothing written, no ./webcorpus-out


def test_an_argument_that_is_no_option_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(["--output", "out", "a.warc.gz"])
    assert code == 2
    assert "unexpected argument 'a.warc.gz'" in stderr and len(stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_an_unquoted_glob_the_shell_expanded_is_an_error_that_says_to_quote_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # `--input crawl/*.warc.gz`, unquoted, as the shell passes it on.
    code, _, stderr = run_main(["--input", "crawl/a.warc.gz", "crawl/b.warc.gz", "--output", "out"])
    assert code == 2
    [line] = stderr.splitlines()
    assert line.startswith("python -m pipeline: error: unexpected argument 'crawl/b.warc.gz'") and \
        "--input takes one pattern: quote a glob so that the shell leaves it as it is (--input 'crawl/*.warc.gz')" \
        in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_misspelled_runner_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(["--runner=DirectRuner"])
    assert code == 2
    assert stderr.splitlines() == [
        "python -m pipeline: error: unknown runner DirectRuner; did you mean DirectRunner? "
        "(see python -m pipeline --help)"]
    assert list(tmp_path.iterdir()) == []


def test_a_runner_its_module_does_not_define_is_an_error(tmp_path, monkeypatch):
    # Beam resolves the name (create_runner): a module that is there, and a class that is not.
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(["--runner=pipeline.runners.dask_runner.DaskRuner"])
    assert code == 2
    assert stderr.splitlines() == [
        "python -m pipeline: error: cannot load --runner pipeline.runners.dask_runner.DaskRuner: module "
        "'pipeline.runners.dask_runner' has no attribute 'DaskRuner' (see python -m pipeline --help)"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_bad_value_of_a_beam_flag_is_one_line(tmp_path):
    result = run_module("--direct_num_workers=two", "--output", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "python -m pipeline: error: argument --direct_num_workers: invalid int value: 'two' "
        "(see python -m pipeline --help)"]


# What README.md, docs/engines.md and the tests pass to Beam.
BEAM_FLAGS = [
    ["--runner=DirectRunner", "--direct_num_workers=2", "--direct_running_mode=multi_processing"],
    ["--temp_location", "/tmp/webcorpus-temp", "--setup_file", "./setup.py", "--save_main_session"],
    ["--runner=PortableRunner", "--job_endpoint=localhost:8099", "--environment_type=EXTERNAL",
     "--environment_config=localhost:50000"],
    ["--runner=FlinkRunner", "--flink_version=1.20", "--flink_master=JOBMANAGER:8081",
     "--flink_job_server_jar=/opt/beam/job-server.jar", "--environment_type=EXTERNAL",
     "--environment_config=localhost:50000", "--parallelism=16"],
    ["--runner=DaskRunner", "--dask_client_address=SCHEDULER:8786", "--dask_partition_size=1"],
    ["--runner=pipeline.runners.dask_runner.DaskRunner", "--dask_client_address", "SCHEDULER:8786", "--dask_npartitions=4"],
    ["--runner=DataflowRunner", "--project=PROJECT", "--region=europe-west1", "--temp_location=gs://BUCKET/tmp",
     "--staging_location=gs://BUCKET/staging", "--setup_file=./setup.py", "--machine_type=n2-standard-4",
     "--max_num_workers=20", "--sdk_container_image=REGION-docker.pkg.dev/PROJECT/REPO/webcorpus:TAG"],
]


@pytest.mark.parametrize("flags", BEAM_FLAGS, ids=lambda flags: flags[0])
def test_beams_flags_pass_through(flags):
    settings = parse_settings(["--input", "a.warc.gz", *flags, "--quiet"])
    assert settings.beam_args == tuple(flags)
    assert settings.inputs == (os.path.abspath("a.warc.gz"),) and settings.quiet


@pytest.mark.parametrize("flags", [["--near-dedup-bands", "100000", "--near-dedup-rows", "100000"],
                                   ["--near-dedup-bands", "2000"], ["--near-dedup-rows", "1025"]])
def test_near_dedup_bands_and_rows_are_bounded(flags, tmp_path, monkeypatch):
    from transforms.stages.near_dedup import MAX_PERMUTATIONS

    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(["--near-dedup", *flags])
    assert code == 2
    assert len(stderr.splitlines()) == 1 and f"at most {MAX_PERMUTATIONS:,}" in stderr, stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_flink_without_its_job_server_jar_is_one_line_at_once(tmp_path):
    """Offline, Beam retries the jar's download for minutes: the launcher asks once (one connection), or not at
    all when given a jar that is not there, and refuses in one line."""
    import socketserver
    import subprocess
    import sys
    import threading

    from tests.test_cli import REPO

    connections = []

    class Refusing(socketserver.BaseRequestHandler):
        def handle(self):
            connections.append(self.client_address)  # and closed unanswered

    # No jar in Beam's cache (HOME), and no way to download it (a proxy that closes every connection): offline.
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Refusing) as proxy:
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        address = f"http://127.0.0.1:{proxy.server_address[1]}"
        env = dict(os.environ, PYTHONPATH=str(REPO), HOME=str(tmp_path), https_proxy=address, HTTPS_PROXY=address)
        for jar, asked in (([], 1), ([f"--flink_job_server_jar={tmp_path / 'job-server.jar'}"], 0)):
            connections.clear()
            result = subprocess.run([sys.executable, "-m", "pipeline", "--runner=FlinkRunner", *jar,
                                     "--output", str(tmp_path / "out")], env=env, capture_output=True, text=True,
                                    timeout=120)
            assert len(connections) == asked, (jar, connections)
            assert result.returncode == 2, result.stderr[-2000:]
            [line] = result.stderr.splitlines()
            assert line.startswith("python -m pipeline: error: ") and "--flink_job_server_jar" in line, line
            assert not (tmp_path / "out").exists()
        proxy.shutdown()
