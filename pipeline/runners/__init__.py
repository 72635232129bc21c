"""Every module of webcorpus that reaches into a Beam runner's inside, and the check that it may.

- `fn_api_patches`: Beam's FnApiRunner patched where it loses records or cannot bound a worker's input;
- `local_runner`: the runner `--runner=DirectRunner` runs (the FnApiRunner, with those patches);
- `worker_fork`: the local runner's worker processes, forked from a server that has imported them;
- `dask_runner` and `dask_fusion`: Beam's DaskRunner, fixed, with its ParDos fused per task.

Each was written against one Beam release (`beam_release.SUPPORTED`, what requirements.txt pins) and checks that
version,
with every attribute of Beam's it patches or reads, before its runner starts (`beam_release.require`): another
release is refused in one line, before anything runs, instead of breaking mid-build. Nothing outside this package
imports a runner's internals (`../shared/tools/house_check.py` counts them).
"""
