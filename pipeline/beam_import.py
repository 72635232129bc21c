"""Beam imported without the optional libraries it loads for features webcorpus never uses, where the command
starts (`pipeline.launch`, and the worker processes' server), and on a Dask cluster's workers
(`pipeline.runners.dask_runner`).

Beam imports each of these whenever it is installed, and does without it when it is not:
- pandas (with the part of pyarrow it pulls in), only to offer its DataFrame types (typehints, textio's CSV and
  JSON readers): 0.23 s of Beam's 0.85 s import;
- pyarrow, for Arrow typehints and Beam's own Parquet IO (webcorpus writes Parquet with pyarrow itself, importing
  it only then): 0.05-0.09 s;
- pymongo (and its bson), for Beam's MongoDB IO: 0.05 s; Beam then logs a warning that it found no bson, which is
  left out (`_NO_BSON`).
Environments that read corpora (Hugging Face datasets, the test requirements) have pandas; pyarrow is
webcorpus's own dependency. While Beam is imported here, `import` of any of them fails as if it were absent,
which Beam allows for; each can be imported as usual afterwards.
"""

from __future__ import annotations

import logging
import sys

# What Beam imports only if it is installed, for nothing webcorpus uses.
UNUSED_BY_WEBCORPUS = ("pandas", "pyarrow", "bson", "pymongo")
# What Beam's MongoDB IO logs as it is imported without them.
_NO_BSON = "Could not find a compatible bson package."


def import_beam() -> None:
    """Imports Apache Beam with the libraries of `UNUSED_BY_WEBCORPUS` out of its reach, unless Beam or one of them
    was imported already (Beam's features for it then stay as they would be)."""
    if "apache_beam" in sys.modules or any(name in sys.modules for name in UNUSED_BY_WEBCORPUS):
        return
    logging.getLogger("apache_beam.io.mongodbio").addFilter(lambda record: record.getMessage() != _NO_BSON)
    for name in UNUSED_BY_WEBCORPUS:
        sys.modules[name] = None  # (`import name` raises ImportError meanwhile)
    try:
        import apache_beam  # noqa: F401
    finally:
        for name in UNUSED_BY_WEBCORPUS:
            del sys.modules[name]


async def import_worker_modules() -> None:
    """What a worker imports to run a build's tasks: Beam (see `import_beam`) and every stage's module. (A
    coroutine: what a Dask client can have its workers run without waiting for them, `Client.run(wait=False)`.)"""
    import_beam()
    import pipeline.graph  # noqa: F401
