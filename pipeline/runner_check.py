"""What a runner needs before it can start, checked at launch: one line now instead of minutes of retries.

FlinkRunner starts a Flink job server from a jar, with Java, unless `--job_endpoint` names one that runs.
Without `--flink_job_server_jar` Beam downloads the jar from Maven Central into its cache, and offline it
retries that download for minutes before it fails with a line cut short.
"""

from __future__ import annotations

import os
import shutil
import urllib.request

from apache_beam.options.pipeline_options import FlinkRunnerOptions, PipelineOptions, PortableOptions, StandardOptions
from apache_beam.utils.subprocess_server import JavaJarServer

FLINK_RUNNERS = {"flinkrunner", "flink", "apache_beam.runners.portability.flink_runner.flinkrunner"}
PROBE_TIMEOUT = 5


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=PROBE_TIMEOUT):
            return True
    except OSError:
        return False


def flink_job_server_missing(options: PipelineOptions) -> str | None:
    """Why FlinkRunner (if it is the runner) cannot start its job server, or None."""
    runner = options.view_as(StandardOptions).runner
    if not isinstance(runner, str) or runner.lower() not in FLINK_RUNNERS:
        return None
    if options.view_as(PortableOptions).job_endpoint:
        return None
    how = ("give --flink_job_server_jar=PATH (beam-runners-flink-VERSION-job-server-BEAM.jar, from Maven Central), "
           "or --job_endpoint=HOST:PORT of a Flink job server that runs (docs/engines.md)")
    flink = options.view_as(FlinkRunnerOptions)
    jar = flink.flink_job_server_jar
    if jar:
        if "://" not in jar and not os.path.isfile(jar):
            return f"--flink_job_server_jar {jar} is no file; {how}"
    else:
        url = JavaJarServer.path_to_beam_jar(f":runners:flink:{flink.flink_version}:job-server:shadowJar")
        cached = os.path.join(JavaJarServer.JAR_CACHE, os.path.basename(url))
        if "://" in url and not os.path.exists(cached) and not _reachable(url):
            return (f"FlinkRunner needs its job server jar, which is not in Beam's cache ({cached}) and cannot be "
                    f"downloaded from {url} now; {how}")
    if shutil.which("java") is None:
        return f"FlinkRunner runs its job server with Java, and there is no java on PATH; install Java (11 or later), or {how}"
    return None
