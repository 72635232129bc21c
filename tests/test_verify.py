"""`python -m pipeline.verify` on damaged corpora whose manifest was sealed again over the damage, and on
manifests and reports that are not what a build writes."""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import verify
from pipeline.sample import Capture, sample_captures, warc_bytes
from tests.helpers import page
from tests.test_integrity import (build, first_block, flip_byte, problems, sample_inputs,  # noqa: F401 (a fixture)
                                  write_sample_inputs)
from transforms.report.manifest import MANIFEST_NAME, digest_file, seal

SHARD = "corpus-00000-of-00002.avro"
SURVIVOR_SHARD = "corpus-00001-of-00002.avro"  # b.warc.gz: its first page survives a duplicate in a.warc.gz


def manifest_of(output: Path) -> dict:
    return json.loads((output / MANIFEST_NAME).read_text())


def write_manifest(output: Path, manifest: dict, sealed: bool = True) -> None:
    (output / MANIFEST_NAME).write_text(json.dumps(seal(manifest) if sealed else manifest))


def reseal(output: Path) -> None:
    """Seals the manifest again over whatever changed in the files it lists, as someone covering damage would."""
    manifest = manifest_of(output)
    for entry in manifest["outputs"]:
        if (output / entry["path"]).exists():
            digest = digest_file(str(output / entry["path"]))
            entry.update(size=digest.size, sha256=digest.sha256)
    write_manifest(output, manifest)


def exit_status(output: Path, capsys) -> tuple[int, str]:
    code = verify.main([str(output)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture(scope="module")
def two_file_build(tmp_path_factory) -> Path:
    """The build of `sample_inputs`, once for the module."""
    return build(write_sample_inputs(tmp_path_factory.mktemp("in")), tmp_path_factory.mktemp("two-files") / "out")


@pytest.fixture
def built(two_file_build, tmp_path) -> Path:
    """A copy of `two_file_build` in `tmp_path / "out"`, for a test to damage."""
    return Path(shutil.copytree(two_file_build, tmp_path / "out"))


# --- the manifest is input --------------------------------------------------------------------

@pytest.mark.slow
def test_a_null_output_entry_is_named_not_a_traceback(built, capsys):
    output = built
    manifest = manifest_of(output)
    manifest["outputs"].append(None)
    write_manifest(output, manifest)
    code, printed = exit_status(output, capsys)
    assert code == 1
    assert f"manifest.json: outputs[{len(manifest['outputs']) - 1}]: None is not an object" in printed


@pytest.mark.parametrize("path", ["../elsewhere/secret.txt", "{elsewhere}/secret.txt", "sub/secret.txt",
                                  "..\\secret.txt", "..", ""])
@pytest.mark.slow
def test_a_listed_path_never_leads_out_of_the_corpus(built, tmp_path, capsys, path):
    output = built
    for place in (tmp_path / "elsewhere", output / "sub"):
        place.mkdir()
        (place / "secret.txt").write_text("not part of the corpus")
    path = path.replace("{elsewhere}", str(tmp_path / "elsewhere"))
    digest = digest_file(str(tmp_path / "elsewhere" / "secret.txt"))
    manifest = manifest_of(output)
    manifest["outputs"].append({"path": path, "size": digest.size, "sha256": digest.sha256})
    write_manifest(output, manifest)
    code, printed = exit_status(output, capsys)
    assert code == 1, printed
    assert f"manifest.json: outputs[{len(manifest['outputs']) - 1}].path: {path!r} is not a plain file name in the " \
           "corpus directory" in printed


@pytest.mark.slow
def test_a_listed_directory_is_named(built, capsys):
    output = built
    (output / "notes").mkdir()
    manifest = manifest_of(output)
    manifest["outputs"].append({"path": "notes", "size": 0, "sha256": "0" * 64})
    write_manifest(output, manifest)
    code, printed = exit_status(output, capsys)
    assert code == 1
    assert "notes: file: unreadable: " in printed


def test_a_file_that_is_no_webcorpus_manifest_is_not_a_corpus(tmp_path, capsys):
    (tmp_path / MANIFEST_NAME).write_text('{"name": "some other tool", "files": []}')
    code, printed = exit_status(tmp_path, capsys)
    assert code == 2
    assert "holds no webcorpus build (manifest.json is not a webcorpus manifest" in printed


def _containers(children):
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)


def json_values():
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20), _containers,
        max_leaves=12)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory) -> Path:
    inputs = tmp_path_factory.mktemp("in")
    (inputs / "a.warc.gz").write_bytes(warc_bytes(sample_captures(), filename="a.warc.gz"))
    return build([str(inputs / "a.warc.gz")], tmp_path_factory.mktemp("corpus") / "out")


# Where a random value replaces what a build wrote: the manifest, its outputs and each field of an output,
# and the report's fields that verify reads.
PLACES = ["manifest", "manifest.outputs", "manifest.outputs[0]", "manifest.outputs[0].path", "manifest.outputs[0].size",
          "manifest.outputs[0].sha256", "manifest.outputs[0].records", "manifest.manifest_sha256",
          "report", "report.status", "report.records", "report.records.read", "report.records.balanced",
          "report.files", "report.files[0]", "report.files[0].kept"]


def _key(document, step: str):
    """The key or index that a step of a place (`name`, `[index]`: the index-th key of an object) names."""
    if not step.startswith("["):
        return step
    index = int(step[1:-1])
    return sorted(document)[index] if isinstance(document, dict) else index


def _steps(place: str) -> list[str]:
    return place.replace("[", ".[").split(".")[1:]


def at(document, place: str):
    """The value at `place` in `document`, None where there is none."""
    for step in _steps(place):
        try:
            document = document[_key(document, step)]
        except (KeyError, IndexError, TypeError):
            return None
    return document


def replaced(document, place: str, value):
    """`document` with `value` at `place`."""
    *steps, last = _steps(place) or [None]
    if last is None:
        return value
    target = document
    for step in steps:
        target = target[_key(target, step)]
    target[_key(target, last)] = value
    return document


@settings(max_examples=200, deadline=None)
@given(place=st.sampled_from(PLACES), value=json_values(), sealed=st.booleans())
@pytest.mark.slow
def test_random_json_in_any_field_of_the_manifest_or_report_is_named(built_once, place, value, sealed):
    name = MANIFEST_NAME if place.startswith("manifest") else "report.json"
    path = built_once / name
    original = path.read_text()
    try:
        written = json.loads(original)
        unchanged = json.dumps(at(written, place)) == json.dumps(value)
        document = replaced(written, place, value)
        if name == MANIFEST_NAME:
            # Sealing writes manifest_sha256 itself.
            sealed = sealed and isinstance(document, dict) and place != "manifest.manifest_sha256"
            write_manifest(built_once, document, sealed=sealed)
        else:
            path.write_text(json.dumps(document))
            if sealed:
                reseal(built_once)
        # No traceback, and a changed value is a problem (or, without a manifest, no corpus).
        assert verify.main([str(built_once)]) in ((0, 1) if unchanged else (1, 2))
    finally:
        path.write_text(original)
        if name != MANIFEST_NAME:
            reseal(built_once)


# --- the report's accounting ------------------------------------------------------------------

@pytest.mark.slow
def test_a_shard_left_out_of_a_resealed_manifest_is_caught_by_the_accounting(built):
    output = built
    report = json.loads((output / "report.json").read_text())
    b_file = next(name for name in report["files"] if name.endswith("b.warc.gz"))
    (output / SURVIVOR_SHARD).unlink()
    manifest = manifest_of(output)
    manifest["outputs"] = [entry for entry in manifest["outputs"] if entry["path"] != SURVIVOR_SHARD]
    write_manifest(output, manifest)
    kept = report["records"]["kept"]
    lost = report["files"][b_file]["kept"]
    # The content index, which lists every kept document, finds the loss too.
    assert problems(output)[1] == [
        f"index-00000-of-00001.bin: entries: {kept} entries, the corpus has {kept - lost} records in this shard of "
        "hashes",
        f"report.json: records.kept: {kept}, but the corpus shards hold {kept - lost} records",
        f"report.json: files[{b_file!r}].kept: {lost}, but the corpus shards hold 0 records of that file"]


@pytest.mark.slow
def test_a_report_that_does_not_add_up_is_named_with_its_numbers(built):
    output = built
    report = json.loads((output / "report.json").read_text())
    a_file = next(name for name in report["files"] if name.endswith("a.warc.gz"))
    counts = report["files"][a_file]
    counts["read"] += 2
    report["records"]["read"] += 2
    (output / "report.json").write_text(json.dumps(report))
    reseal(output)
    outcomes = sum(counts[name] for name in ("kept", "duplicates", "skipped", "dead_letter"))
    assert problems(output)[1] == [
        f"report.json: files[{a_file!r}]: read {counts['read']} != kept {counts['kept']} + duplicates "
        f"{counts['duplicates']} + skipped {counts['skipped']} + dead letter {counts['dead_letter']} = {outcomes} "
        "(2 records unaccounted for)",
        f"report.json: records: read {report['records']['read']} != kept {report['records']['kept']} + duplicates "
        f"{report['records']['duplicates']} + skipped {report['records']['skipped']} + dead letter "
        f"{report['records']['dead_letter']} = {report['records']['read'] - 2} (2 records unaccounted for)"][::-1]


@pytest.mark.slow
def test_a_report_that_says_it_does_not_balance_is_a_problem(built):
    output = built
    report = json.loads((output / "report.json").read_text())
    report["records"]["balanced"] = False
    (output / "report.json").write_text(json.dumps(report))
    reseal(output)
    assert problems(output)[1] == [
        "report.json: records.balanced: False: the build found that its records do not add up"]


@pytest.mark.slow
def test_a_report_left_out_of_the_manifest_is_a_problem(built):
    output = built
    manifest = manifest_of(output)
    manifest["outputs"] = [entry for entry in manifest["outputs"] if entry["path"] != "report.json"]
    write_manifest(output, manifest)
    assert problems(output)[1] == [
        "report.json: file: not listed in the manifest: its accounting is not part of the build"]


# --- every byte of every record -----------------------------------------------------------------

def field_spans(data: bytes) -> list[dict[str, tuple[int, int]]]:
    """For each record of the first block of an uncompressed Avro file: field -> (start, end) of its bytes."""
    reader = fastavro.reader(io.BytesIO(data))
    fields = reader.writer_schema["fields"]
    block = first_block(data)[0]
    stream = io.BytesIO(data[block:])
    count = fastavro.schemaless_reader(stream, "long")
    fastavro.schemaless_reader(stream, "long")  # the block's size
    position = block + stream.tell()
    spans = []
    for record in list(reader)[:count]:
        spans.append({})
        for field in fields:
            encoded = io.BytesIO()
            fastavro.schemaless_writer(encoded, fastavro.parse_schema(field["type"]), record[field["name"]])
            end = position + len(encoded.getvalue())
            spans[-1][field["name"]] = (position, end)
            position = end
    return spans


def caught(output: Path, shard: str) -> list[str]:
    """The problems found in `shard` besides its checksum (the manifest was sealed again over the damage)."""
    reseal(output)
    return [line for line in problems(output)[1] if line.startswith(shard) or line.startswith("report.json")]


@pytest.mark.slow
def test_one_changed_byte_in_any_field_of_a_record_is_caught(sample_inputs, tmp_path):
    described = page("<p>A page with a description</p>", head='<meta name="description" content="Described">')
    (tmp_path / "in" / "c.warc.gz").write_bytes(warc_bytes([Capture("https://meta.example.org/", described.encode())],
                                                           filename="c.warc.gz"))
    output = build(sample_inputs, tmp_path / "out", "--codec", "null")
    # For each field, the first record where it holds something (b.warc.gz's first page lists a duplicate,
    # c.warc.gz's has a <meta>), and its last byte there: of its text or number; of a list's or map's last
    # string, before the end marker.
    targets = {}
    for shard in sorted(path.name for path in output.glob("corpus-*.avro")):
        data = (output / shard).read_bytes()
        for record, spans in zip(fastavro.reader(io.BytesIO(data)), field_spans(data)):
            for name, (start, end) in spans.items():
                if name not in targets and record[name] not in ("", [], {}):
                    targets[name] = (shard, end - 2 if data[end - 1] == 0 and end - start > 1 else end - 1)
    assert len(targets) == len(fastavro.reader(io.BytesIO(data)).writer_schema["fields"])
    missed = []
    for name, (shard, offset) in targets.items():
        original = (output / shard).read_bytes()
        flip_byte(output / shard, offset)
        if not caught(output, shard):
            missed.append(name)
        (output / shard).write_bytes(original)
    assert missed == []


@pytest.mark.slow
def test_fifty_random_single_byte_changes_are_all_caught(sample_inputs, tmp_path):
    output = build(sample_inputs, tmp_path / "out", "--codec", "null")
    shard = output / SHARD
    original = shard.read_bytes()
    blocks = first_block(original)[0]
    missed = []
    for offset in random.Random(14).sample(range(blocks, len(original)), 50):
        flip_byte(shard, offset)
        if not caught(output, SHARD):
            missed.append(offset)
        shard.write_bytes(original)
    assert missed == []


# --- only regular files are read -------------------------------------------------------------------

def verify_in_a_child(output: Path) -> "subprocess.CompletedProcess":
    """verify in a process of its own, with 2 GiB of address space and a minute: a file read whole, or
    forever, fails the test instead of the machine."""
    import os
    import resource
    import subprocess
    import sys

    from tests.test_cli import REPO

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run([sys.executable, "-m", "pipeline.verify", str(output)], preexec_fn=limit, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)


@pytest.mark.parametrize("name", [SHARD, "report.json", MANIFEST_NAME])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
@pytest.mark.slow
def test_a_file_that_is_no_regular_file_is_one_line_not_read(built, name, kind):
    import os

    output = built
    (output / name).unlink()
    if kind == "fifo":
        os.mkfifo(output / name)
    else:
        (output / name).symlink_to("/dev/zero")
    result = verify_in_a_child(output)
    assert result.returncode in (1, 2), result.stderr[-2000:]
    named = [line for line in (result.stdout + result.stderr).splitlines() if name in line and "regular file" in line]
    assert named, result.stdout + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
