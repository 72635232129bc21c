"""Shared fixtures: WARC files written by the tests themselves, and the dev corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.sample import Capture, warc_bytes

CORPUS_ENV = "WEBCORPUS_CORPUS"


@pytest.fixture(scope="session", autouse=True)
def no_prism_download():
    """The tests' pipelines run where Beam's DirectRunner falls back to when it cannot fetch Prism.

    For a small pipeline the DirectRunner first downloads the Prism runner, through `FileSystems.open` of an
    https:// URL. transforms/filesystems/http_filesystem.py serves https:// now, and offline it retries that download
    with backoff for minutes (urllib's own attempt failed at once), for every such pipeline, before the
    DirectRunner falls back. Refusing Prism at once gives the fallback the tests always ran on.
    """
    from apache_beam.runners.portability import prism_runner

    def refuse(self, pipeline, options):
        raise RuntimeError("the tests do not download Prism (tests/conftest.py)")

    patch = pytest.MonkeyPatch()
    patch.setattr(prism_runner.PrismRunner, "run_pipeline", refuse)
    yield
    patch.undo()


@pytest.fixture(scope="session", autouse=True)
def signing_key_of_the_tests(tmp_path_factory):
    """The tests sign manifests with a key of their own (pipeline/signing.py), never the user's ~/.config one:
    XDG_CONFIG_HOME, in the environment of the tests and of the processes they start, is a directory of theirs."""
    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", "WEBCORPUS_SEAL_KEY")}
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    os.environ.pop("WEBCORPUS_SEAL_KEY", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def tiny_tokenizer(tmp_path_factory) -> Path:
    """A tokenizer.json of a WordLevel tokenizer trained by the test session (`helpers.tiny_tokenizer_json`)."""
    from tests.helpers import tiny_tokenizer_json

    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    path.write_text(tiny_tokenizer_json(), encoding="utf-8")
    return path


@pytest.fixture
def write_warc(tmp_path):
    """write_warc(captures, name=..., compression=..., version=...) -> path of a WARC file in tmp_path/in.

    In a directory of their own, so that a test's glob of its inputs (`in/*`) never matches a build's files.
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


@pytest.fixture(scope="session")
def dev_corpus_build(corpus_dir, tmp_path_factory) -> tuple[Path, str]:
    """One build of every WARC file of the dev corpus with the default options, and what it printed; the tests
    that use it only read it (a test that damages a build damages a copy)."""
    import contextlib
    import io

    from pipeline import cli

    output = tmp_path_factory.mktemp("dev-corpus-build")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli.main(["--input", str(corpus_dir / "warc" / "*.warc.gz"), "--output", str(output)])
    assert code == 0, stderr.getvalue()
    return output, stdout.getvalue()


@pytest.fixture(scope="session")
def gold_pages(corpus_dir) -> list:
    """The dev corpus's gold pages (devcorpus/gold.py), read from its WARC files once: the tests only read them."""
    from devcorpus.gold import load_gold_pages

    return load_gold_pages(corpus_dir)[0]


# Beam's TestPipeline is a class named Test*: tell pytest it holds no tests.
from apache_beam.testing.test_pipeline import TestPipeline  # noqa: E402

TestPipeline.__test__ = False
