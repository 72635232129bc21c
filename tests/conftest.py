"""Shared fixtures: WARC files written by the tests themselves, and the dev corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.sample import Capture, warc_bytes

CORPUS_ENV = "WEBCORPUS_CORPUS"


@pytest.fixture
def write_warc(tmp_path):
    """write_warc(captures, name=..., compression=..., version=...) -> path of a WARC file in tmp_path/in.

    In a directory of their own: a build's output may not be in its inputs' directory.
    """

    def write(captures: list[Capture], name: str = "test.warc.gz", compression: str = "record",
              version: str = "1.0") -> Path:
        path = tmp_path / "in" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(warc_bytes(captures, compression=compression, version=version, filename=name))
        return path

    return write


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    value = os.environ.get(CORPUS_ENV)
    if not value:
        pytest.skip(f"{CORPUS_ENV} is not set: point it at the dev corpus directory (the one holding "
                    "manifest.jsonl and warc/) to run the tests on real WARC files")
    path = Path(value)
    if not (path / "manifest.jsonl").is_file() or not (path / "warc").is_dir():
        pytest.fail(f"{CORPUS_ENV}={value} is not a webcorpus dev corpus (no manifest.jsonl or warc/)")
    return path


# Beam's TestPipeline is a class named Test*: tell pytest it holds no tests.
from apache_beam.testing.test_pipeline import TestPipeline  # noqa: E402

TestPipeline.__test__ = False
