"""benchmarks.peers runs the whole job against datatrove + resiliparse, tiny (skipped without datatrove's Python)."""

import json
import os
from pathlib import Path

import pytest

import benchmarks.peers as peers

# The virtual environment benchmarks/README.md installs datatrove in, unless WEBCORPUS_DATATROVE_PYTHON names another.
DATATROVE_PYTHON = os.environ.get("WEBCORPUS_DATATROVE_PYTHON", "/work/venv-datatrove/bin/python")


def test_peers_on_a_tiny_generated_warc(corpus_dir, tmp_path):
    if not Path(DATATROVE_PYTHON).is_file():
        pytest.skip(f"no datatrove Python at {DATATROVE_PYTHON} (set WEBCORPUS_DATATROVE_PYTHON)")
    results = tmp_path / "results.json"
    assert peers.main(["--datatrove-python", DATATROVE_PYTHON, "--corpus", str(corpus_dir), "--work",
                       str(tmp_path / "work"), "--mb", "0.5", "--reps", "1", "--sections", "generated,near-dedup",
                       "--results", str(results)]) == 0
    found = json.loads(results.read_text())
    generated = found["generated"]
    assert set(generated) == {"webcorpus, 1 worker", "webcorpus, 2 workers", peers.PLAIN_LOOP, "datatrove, 1 task",
                              "datatrove, 2 tasks"}
    # Both read the same generated records: every one is an HTML page, and each side keeps nearly all of them.
    for result in generated.values():
        assert found["corpus"]["records"] * 0.7 <= result["documents"] <= found["corpus"]["records"]
        assert result["seconds"] > 0 and result["cpu_seconds"] > 0
    assert found["near-dedup"]["datatrove + MinHash"]["documents"] == generated["datatrove, 1 task"]["documents"]
    # The plain loop writes what the build writes: its kept documents are the build's.
    assert generated[peers.PLAIN_LOOP]["documents"] == generated["webcorpus, 1 worker"]["documents"]
    figures = [line["figure"] for line in found["table"]]
    assert figures == ["whole default build, 1 worker, 0.5 MB of HTML", f"  its {peers.PLAIN_LOOP}",
                       "webcorpus 2 workers / 1 (speed-up)",
                       "2 workers, webcorpus / datatrove 2 tasks", "--near-dedup against datatrove's MinHash"]


def test_the_dev_corpus_section_gives_both_the_files_datatrove_reads(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "warc").mkdir(parents=True)
    for name in ("a.warc.gz", *peers.DATATROVE_UNREADABLE):
        (corpus / "warc" / name).write_bytes(b"")
    links = peers.linked_inputs(peers.datatrove_readable(corpus), tmp_path / "links")
    assert [Path(link).name for link in links] == ["a.warc.gz"]
    assert all(Path(link).resolve().parent == (corpus / "warc").resolve() for link in links)
