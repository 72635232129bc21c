"""Beam imported without pandas, where the command starts (`pipeline.launch`, and the worker processes' server),
and on a Dask cluster's workers (`pipeline.runners.dask_runner`).

Beam imports pandas whenever it is installed, only to offer its DataFrame types (typehints, textio's
CSV and JSON readers), which webcorpus never uses; pandas (with the part of pyarrow it pulls in) was
0.23 s of Beam's 0.85 s import, in every build's process. Environments that read corpora (Hugging
Face datasets, the test requirements) have it installed. While Beam is imported here, `import pandas`
fails as if pandas were absent, which Beam allows for; pandas can be imported as usual afterwards.
"""

from __future__ import annotations

import sys


def import_beam() -> None:
    """Imports Apache Beam with pandas out of its reach, unless either was imported already."""
    if "apache_beam" in sys.modules or "pandas" in sys.modules:
        return
    sys.modules["pandas"] = None  # (`import pandas` raises ImportError meanwhile)
    try:
        import apache_beam  # noqa: F401
    finally:
        del sys.modules["pandas"]


async def import_worker_modules() -> None:
    """What a worker imports to run a build's tasks: Beam (without pandas) and every stage's module. (A
    coroutine: what a Dask client can have its workers run without waiting for them, `Client.run(wait=False)`.)"""
    import_beam()
    import pipeline.graph  # noqa: F401
