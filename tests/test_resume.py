"""A build killed part-way resumes: the next run of the same build reuses every unit it finished and publishes the
same bytes as a build from scratch; any other run starts afresh and says why; stale locks are taken over."""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import fastavro
import pytest

from pipeline.publish import LOCK_NAME, OutputBusy, lock_holder, output_lock
from pipeline.resumable import RESUME_PREFIX
from pipeline.sample import Capture, warc_bytes
from tests.test_cli import REPO, run_main
from tests.test_staging import doc as staged_doc
from transforms.document import DeadLetter, Skip
from transforms.report.manifest import FileDigest
from transforms.stages.read_warc.snapshot import RangeDigest, open_listed, range_digest
from transforms.stages.compress_write.avro_encoding import RecordLayout
from transforms.stages.compress_write.schema import DEFAULT_FIELDS
from transforms.stages.compress_write.staging import STAGED_LAYOUT
from transforms.state.unit_check import NotReusable, check_staging_file, imbalance, record_json
from transforms.state.unit_ledger import (HOLD_AFTER_UNITS, RECORD_SUFFIX, UNITS, LedgerPlan, UnitLedger, decode,
                                          encode, unit_name)
from transforms import vocabulary
from transforms.vocabulary import FilterCounts, Fingerprint, MostlyDropped, ReadNote, UnitRead

FILES = 6
PAGES = 60  # in each file: documents of many fingerprints per unit (more only make each build slower)


def snapshot(directory: Path) -> dict[str, str]:
    """sha256 of every file directly in `directory` (what a build publishes), by name."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.iterdir()) if path.is_file()}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Files of one unit each, whose pages repeat across files (so a unit's fingerprints meet others')."""
    directory = tmp_path_factory.mktemp("resume-in")
    for file in range(FILES):
        pages = [Capture(f"https://example.org/{file}/{index}",
                         f"<p>Page {index % (PAGES // 2)} says: {'many words here, ' * (20 + index % 7)}. "
                         f"Write to someone{index}@example.org.</p>".encode())
                 for index in range(PAGES)]
        (directory / f"part-{file}.warc.gz").write_bytes(warc_bytes(pages, filename=f"part-{file}.warc.gz"))
    return directory


PIPELINE = [sys.executable, "-m", "pipeline"]


def command(inputs: Path, output: Path, *flags: str) -> list[str]:
    """The arguments of a build (run in a process of its own: after PIPELINE)."""
    return ["--input", str(inputs / "*.warc.gz"), "--output", str(output), "--quiet", *flags]


def shown(argv: list[str]) -> list[str]:
    """The command, with its progress display (on stderr: not a terminal, so a line every few seconds and the last)."""
    return [arg for arg in argv if arg != "--quiet"]


def done_line(stderr: str) -> str:
    """The progress display's last line, without the time the build took."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("done: ")]
    return line.rsplit(" in ", 1)[0]


def run_process(args: list[str]) -> str:
    """A build in a process of its own (as the runners' tests resume a killed build); what it wrote on stderr."""
    result = subprocess.run(PIPELINE + args, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stderr


def run(args: list[str]) -> str:
    """A build in this process, where only what it does with the work a killed run left is the point (not Beam
    starting in a process of its own); what it wrote on stderr."""
    code, _, stderr = run_main(args)
    assert code == 0, stderr
    return stderr


def notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("python -m pipeline: ")]


def records_in(output: Path) -> int:
    return sum(len(list((path / UNITS).glob(f"*{RECORD_SUFFIX}"))) for path in output.glob(f"{RESUME_PREFIX}*"))


def killed_after(args: list[str], output: Path, units: int, program: list[str] = PIPELINE) -> None:
    """Runs a build (or another `program`: a selection) that stops once it recorded `units` units, and kills its
    process group (SIGKILL) then."""
    process = subprocess.Popen(program + args, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO),
                                                        **{HOLD_AFTER_UNITS: str(units)}),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while records_in(output) < units and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
    assert records_in(output) >= units, stderr


@contextlib.contextmanager
def dask_cluster(tmp_path: Path, **env):
    """A Dask scheduler and two worker processes of one thread each (a unit's fused tasks run in one of them,
    docs/robustness.md); yields the flags that send a build there."""
    scheduler_file = tmp_path / f"scheduler-{time.monotonic_ns()}.json"
    environment = dict(os.environ, PYTHONPATH=str(REPO), **env)
    dask = str(Path(sys.executable).with_name("dask"))
    processes = [subprocess.Popen([dask, "scheduler", "--scheduler-file", str(scheduler_file), "--port", "0",
                                   "--no-dashboard"], env=environment, stderr=subprocess.DEVNULL,
                                  start_new_session=True)]
    try:
        processes.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2",
                                           "--nthreads", "1", "--no-dashboard"], cwd=REPO, env=environment,
                                          stderr=subprocess.DEVNULL, start_new_session=True))
        while not scheduler_file.exists():
            time.sleep(0.1)
        yield ("--runner=DaskRunner", f"--dask_scheduler_file={scheduler_file}")
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


RUNNERS = {
    "direct": (),
    "direct-2-workers": ("--direct_num_workers=2", "--direct_running_mode=multi_processing"),
    "dask": None,
}
def options_of(tokenizer: Path) -> tuple[str, ...]:
    """The options of the builds killed on more workers than one: every stage that keeps state per unit, an
    annotated build's signals staged and resumed as the rest of a record, and the reused units' token counts (and
    --languages' skips) replayed."""
    return ("--near-dedup", "--quality", "gopher", "--pii", "--annotate", "--tokenizer", str(tokenizer),
            "--languages", "en")


@pytest.fixture(scope="module")
def reference_of_options(inputs, tmp_path_factory, tiny_tokenizer) -> tuple[Path, str]:
    """A build of `options_of` from scratch, and what it wrote on stderr (its progress display): a build's files
    and counts are the same on every runner, so the runners' resumed builds are compared with this one."""
    reference = tmp_path_factory.mktemp("resume-reference") / "reference"
    return reference, run(shown(command(inputs, reference, *options_of(tiny_tokenizer))))


@pytest.mark.slow
@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_a_killed_build_resumes_and_publishes_the_bytes_of_a_build_from_scratch(
        inputs, killed_and_reference, reference_of_options, tmp_path, runner, tiny_tokenizer):
    output = tmp_path / "out"
    if runner == "direct":
        # The module's build of the default options, killed and from scratch: a copy of the killed one resumes.
        killed, reference, from_scratch = killed_and_reference
        shutil.copytree(killed, output, symlinks=True)
    else:
        reference, from_scratch = reference_of_options
    options = () if runner == "direct" else options_of(tiny_tokenizer)
    if runner == "dask":
        # The worker holds (and is killed with its cluster): the build's own process group has no worker.
        with dask_cluster(tmp_path, **{HOLD_AFTER_UNITS: "2"}) as flags:
            killed_after(command(inputs, output, *options, *flags), output, 2)
    with dask_cluster(tmp_path) if runner == "dask" else contextlib.nullcontext(RUNNERS[runner]) as flags:
        if runner == "direct-2-workers":
            killed_after(command(inputs, output, *options, *flags), output, 2)
        recorded = records_in(output)
        assert 2 <= recorded < FILES
        assert json.loads((output / LOCK_NAME).read_text())["pid"]  # left by the killed run
        # As Dataflow or Flink would: a new job of the same build, reusing what the killed one staged.
        result = run_process(shown(command(inputs, output, *options, *flags)))
    lines = notes(result)
    assert lines[0].startswith("python -m pipeline: took over the lock of an earlier run that is gone (pid ")
    assert lines[1] == (f"python -m pipeline: resuming the build that an earlier run left unfinished: {recorded} "
                        "units (byte ranges of the inputs) it finished are reused, not read again")
    assert snapshot(output) == snapshot(reference)
    assert not list(output.glob(".webcorpus*"))  # nothing left to resume, no lock
    # The progress display counts the reused units as done: every record and byte, as a build from scratch.
    records_and_bytes, shards = done_line(from_scratch).rsplit(" read, ", 1)
    assert re.fullmatch(rf"{re.escape(records_and_bytes)} read \([1-9]\d?% reused\), {re.escape(shards)}",
                        done_line(result)), (done_line(result), done_line(from_scratch))


@pytest.mark.slow
def test_other_options_or_inputs_start_afresh_and_say_why_in_one_line(inputs, killed_and_reference, tmp_path):
    output = tmp_path / "out"
    killed, _, _ = killed_and_reference  # this build killed: a copy is left where the next runs write
    shutil.copytree(killed, output, symlinks=True)
    result = run(command(inputs, output, "--codec", "null"))
    assert notes(result)[1:] == [
        f"python -m pipeline: starting afresh: the unfinished build that an earlier run left in {output} cannot be "
        "resumed, its options differ (codec, level); its work is removed"]
    reference = tmp_path / "reference"
    run(command(inputs, reference, "--codec", "null"))
    assert snapshot(output) == snapshot(reference)

    shutil.copytree(killed, output, symlinks=True, dirs_exist_ok=True)
    changed = tmp_path / "changed-in"
    changed.mkdir()
    for path in inputs.iterdir():
        (changed / path.name).write_bytes(path.read_bytes())
    os.utime(changed / "part-0.warc.gz", (0, 0))
    result = run(command(inputs, output, "--no-resume"))
    assert notes(result)[1:] == [f"python -m pipeline: starting afresh (--no-resume): the unfinished work that an "
                                 f"earlier run left in {output} is removed"]

    killed_after(command(changed, output), output, 1)
    os.utime(changed / "part-1.warc.gz", (0, 0))
    result = run(command(changed, output))
    assert notes(result)[1:] == [
        f"python -m pipeline: starting afresh: the unfinished build that an earlier run left in {output} cannot be "
        f"resumed, its inputs differ ({changed / 'part-1.warc.gz'}: added, removed, or another size or modification "
        "time); its work is removed"]


def test_a_lock_left_by_a_process_that_is_gone_is_taken_over_with_one_line(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    holder = dict(lock_holder(), pid=int(gone.stdout))
    (tmp_path / LOCK_NAME).write_text(json.dumps(holder))
    with output_lock(str(tmp_path)) as taken_over:
        assert taken_over == [f"took over the lock of an earlier run that is gone (pid {holder['pid']} on "
                              f"{holder['host']}, since {holder['since']}; killed, or its machine restarted)"]
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_lock_of_a_live_run_refuses(tmp_path):
    # A lock file naming a live process (where the file system's locks do not hold, as on some network mounts).
    (tmp_path / LOCK_NAME).write_text(json.dumps(lock_holder()))
    with pytest.raises(OutputBusy, match=f"pid {os.getpid()} on .*: that run's process is still alive"):
        with output_lock(str(tmp_path)):
            pass
    # A run holding the lock.
    holding = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pipeline.publish import output_lock\n"
                                f"with output_lock({str(tmp_path / 'held')!r}):\n print('held', flush=True)\n"
                                " time.sleep(60)"],
                               cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
    try:
        (tmp_path / "held").mkdir()
        assert holding.stdout.readline() == "held\n"
        with pytest.raises(OutputBusy, match=f"pid {holding.pid} on "):
            with output_lock(str(tmp_path / "held")):
                pass
    finally:
        holding.kill()
        holding.wait()


# --- The ledger: a unit is recorded only once every outcome of it is in --------------------------------------------

class Staged:
    """A staging file as the ledger sees it."""

    def __init__(self, path: str, records: int, attempt: str = "a"):
        self.path, self.records, self.attempt = path, records, attempt

    def close(self) -> str:
        return self.path

    def digest(self) -> FileDigest:
        return FileDigest(self.path, 0, hashlib.sha256(b"").hexdigest(), self.records)


def fingerprint(offset: int, source_range: int = 0) -> Fingerprint:
    return Fingerprint(vocabulary.Capture("2024", f"https://example.org/{offset}", f"<id-{offset}>", "/in/a.warc.gz",
                                          offset, source_range), "h", "c")


def ledger_with_two_documents(tmp_path, whole=True, seen=2, runs=(("s1", 2, "a"),)) -> UnitLedger:
    (tmp_path / UNITS).mkdir(exist_ok=True)
    ledger = UnitLedger(LedgerPlan(str(tmp_path), count_positions=(1,), fingerprint_position=2))
    for path, records, attempt in runs:
        staged = tmp_path / path
        staged.write_bytes(b"")
        ledger.add_run(("/in/a.warc.gz", 0), Staged(str(staged), records, attempt))
    ledger.add(2, fingerprint(10))
    ledger.add(2, fingerprint(10))  # a retried bundle's repeat: counted once
    ledger.add(1, MostlyDropped(0, "/in/a.warc.gz", 0, 10, seen))
    ledger.add(2, fingerprint(20))
    ledger.add(0, UnitRead("/in/a.warc.gz", 0, None, 2, (), whole, 10, hashlib.sha256(b"").hexdigest()))
    return ledger


def test_a_unit_whose_outcomes_balance_is_recorded(tmp_path):
    assert ledger_with_two_documents(tmp_path).written == 1
    assert len(list((tmp_path / UNITS).glob(f"*{RECORD_SUFFIX}"))) == 1


@pytest.mark.parametrize("fault", [{"whole": False}, {"seen": 1}, {"runs": (("s1", 1, "a"),)},
                                   {"runs": (("s1", 2, "a"), ("s2", 2, "b"))}])
def test_a_unit_split_or_not_all_counted_or_staged_is_not_recorded(tmp_path, fault):
    assert ledger_with_two_documents(tmp_path, **fault).written == 0
    assert not list((tmp_path / UNITS).glob(f"*{RECORD_SUFFIX}"))


def test_each_kind_of_outcome_is_recorded_as_its_fields_and_read_back_equal():
    outcomes = [Skip("redirect", "/in/a.warc.gz", 7, "response", "<id-7>", "https://example.org/r", "to /x"),
                DeadLetter("CleanHtml", "ValueError: x", "/in/a.warc.gz", 9, "<id-9>", "https://example.org/d", 3),
                fingerprint(10), ReadNote("/in/a.warc.gz", None, "a note"),
                MostlyDropped(1, "/in/a.warc.gz", 0, 10, 2),
                FilterCounts((("dropped:gopher", 1), ("bytes:gopher", 120)), "/in/a.warc.gz", 0, 10, 2)]
    for outcome in outcomes:
        encoded = encode(outcome)
        # A record holds what dataclasses.asdict gives, in JSON (a fingerprint's capture flat, as every kind's
        # fields are: records written before it was one value read back), and reads back as the outcome.
        fields = dataclasses.asdict(outcome)
        if isinstance(outcome, Fingerprint):
            fields = {**fields.pop("capture"), **fields}
        assert json.dumps(encoded) == json.dumps([type(outcome).__name__, fields])
        assert decode(json.loads(json.dumps(encoded))) == outcome


# --- A rerun checks what the killed run left before it uses it (transforms.state.unit_check) -----------------------------

def record_files(output: Path) -> list[Path]:
    return sorted(output.glob(f"{RESUME_PREFIX}*/{UNITS}/*{RECORD_SUFFIX}"))


def edit_record(path: Path, edit, digest_anew: bool = False) -> None:
    """Rewrites a completion record's JSON with `edit` (given the record, changing it), leaving what follows the
    JSON (its digest) as it was: what bit rot or a hand that does not know the digest leaves; or, `digest_anew`,
    with the digest of the new JSON, as a hand that knows how records are written leaves it."""
    body, newline, rest = gzip.decompress(path.read_bytes()).partition(b"\n")
    record = json.loads(body)
    edit(record)
    body = json.dumps(record, sort_keys=True).encode()
    path.write_bytes(gzip.compress(body + newline + (hashlib.sha256(body).hexdigest().encode() if digest_anew
                                                     else rest), mtime=0))


def fingerprints_of(record: dict) -> list[dict]:
    return [fields for kind, fields in record["outcomes"] if kind == "Fingerprint"]


def drop_a_fingerprint(output: Path) -> None:
    edit_record(record_files(output)[0], lambda record: record["outcomes"].remove(
        ["Fingerprint", fingerprints_of(record)[0]]))


def pointed_at_another_hash(record: dict) -> None:
    """A record's first fingerprint given another of its documents' content (its hash and check)."""
    first, other = fingerprints_of(record)[0], next(fields for fields in fingerprints_of(record)[1:] if
                                                    fields["content_hash"] != fingerprints_of(record)[0]["content_hash"])
    first.update(content_hash=other["content_hash"], content_check=other["content_check"])


def point_a_fingerprint_at_another_hash(output: Path) -> None:
    edit_record(record_files(output)[0], pointed_at_another_hash)


def point_a_fingerprint_at_another_hash_and_digest_the_record_anew(output: Path) -> None:
    # Every digest holds (the staging files are untouched): only the staged page, hashed again, tells.
    edit_record(record_files(output)[0], pointed_at_another_hash, digest_anew=True)


def list_a_fingerprint_twice(output: Path) -> None:
    edit_record(record_files(output)[0], lambda record: record["outcomes"].append(
        ["Fingerprint", fingerprints_of(record)[0]]))


def name_another_unit(output: Path) -> None:
    first, second = record_files(output)[:2]
    other = json.loads(gzip.decompress(second.read_bytes()).partition(b"\n")[0])["unit"]
    edit_record(first, lambda record: record.update(unit=other))


def staging_file(output: Path) -> Path:
    """A staging file that a completion record names (a killed run's other staging files are never read)."""
    return next(record.parent.parent / run[0] for record in record_files(output)
                for run in json.loads(record_json(str(record)))["runs"])


def change_a_staged_byte(output: Path) -> None:
    path = staging_file(output)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20
    path.write_bytes(bytes(data))


def make_the_record_a_fifo(output: Path) -> None:
    path = record_files(output)[0]
    path.unlink()
    os.mkfifo(path)


def make_a_staging_file_a_fifo(output: Path) -> None:
    path = staging_file(output)
    path.unlink()
    os.mkfifo(path)


def link_the_record_to_dev_zero(output: Path) -> None:
    path = record_files(output)[0]
    path.unlink()
    path.symlink_to("/dev/zero")


def make_the_record_a_gzip_bomb(output: Path) -> None:
    # 600 MB of zeros, 600 KB gzipped: past what a record may inflate to.
    inflater = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    with record_files(output)[0].open("wb") as handle:
        for _ in range(600):
            handle.write(inflater.compress(zeros))
        handle.write(inflater.flush())


DAMAGES = {damage.__name__: damage for damage in (
    drop_a_fingerprint, point_a_fingerprint_at_another_hash,
    point_a_fingerprint_at_another_hash_and_digest_the_record_anew, list_a_fingerprint_twice, name_another_unit,
    change_a_staged_byte, make_the_record_a_fifo, make_a_staging_file_a_fifo, link_the_record_to_dev_zero,
    make_the_record_a_gzip_bomb)}


@pytest.fixture(scope="module")
def killed_and_reference(inputs, tmp_path_factory) -> tuple[Path, Path, str]:
    """A build of the default options killed once it recorded 2 units (its DIR), the same build from scratch, and
    what that one wrote on stderr (its progress display). The tests resume, or damage, copies of the killed one."""
    directory = tmp_path_factory.mktemp("resume-damaged")
    killed, reference = directory / "killed", directory / "reference"
    killed_after(command(inputs, killed), killed, 2)
    return killed, reference, run(shown(command(inputs, reference)))


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_unit_whose_record_or_staging_does_not_check_out_is_read_again_and_said_once(
        inputs, killed_and_reference, tmp_path, damage):
    killed, reference, _ = killed_and_reference
    output = tmp_path / "out"
    shutil.copytree(killed, output, symlinks=True)
    DAMAGES[damage](output)
    (line,) = [line for line in notes(run(command(inputs, output))) if "did not check out" in line]
    assert re.fullmatch(r"python -m pipeline: 1 units of the earlier run did not check out \(its record .*|"
                        r"python -m pipeline: 1 units of the earlier run did not check out \(a staging file of it .*",
                        line), line
    assert line.endswith("; read again")
    assert snapshot(output) == snapshot(reference)


@pytest.mark.slow
def test_an_input_changed_in_place_with_its_size_and_time_kept_is_read_again(inputs, tmp_path):
    copied = tmp_path / "in"
    shutil.copytree(inputs, copied)
    output, reference = tmp_path / "out", tmp_path / "reference"
    killed_after(command(copied, output), output, 2)
    for path in copied.iterdir():
        # A byte of each file changed, its size and modification time kept (as bit rot, or a restore, leaves it).
        stat, data = path.stat(), bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x20
        path.write_bytes(bytes(data))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result = run(command(copied, output))
    run(command(copied, reference))
    assert snapshot(output) == snapshot(reference)
    assert any("did not check out (its input's bytes are not those it was read from" in line for line in notes(result))


def balanced_record() -> dict:
    name = f"staged-{unit_name('/in/a.warc.gz', 0)}-{'0' * 32}-00000.avro"
    return {"unit": ["/in/a.warc.gz", 0], "records": 2, "notes": [], "runs": [[name, 10, "00", 2]],
            "outcomes": [encode(fingerprint(10)), encode(fingerprint(20))]}


@pytest.mark.parametrize("fault, why", [
    (lambda record: record["outcomes"].pop(), "its record's outcomes do not balance its records read"),
    (lambda record: record["outcomes"].__setitem__(1, record["outcomes"][0]),
     "its record's outcomes do not balance its records read"),
    (lambda record: record.update(unit=["/in/b.warc.gz", 0]), "its record names another unit"),
    (lambda record: record["outcomes"].__setitem__(1, encode(fingerprint(20, 64))),
     "its record holds outcomes of another unit"),
    (lambda record: record["runs"][0].__setitem__(0, "../elsewhere.avro"),
     "its record names staging files of another unit"),
    (lambda record: record["runs"][0].__setitem__(3, 1), "its staging files do not hold its fingerprints")])
def test_a_record_is_checked_as_the_ledger_checked_its_unit_even_where_its_digest_holds(fault, why):
    # (Its digest is made anew after the change: these are the ledger's own rules.)
    assert imbalance(balanced_record(), "/in/a.warc.gz", 0) is None
    record = balanced_record()
    fault(record)
    assert imbalance(record, "/in/a.warc.gz", 0) == why


def test_the_bytes_a_unit_was_read_from_are_digested_as_read_whatever_the_reads(tmp_path):
    path = tmp_path / "a.warc.gz"
    path.write_bytes(bytes(range(256)) * 40)
    size = path.stat().st_size
    digest = RangeDigest(1000)
    with open_listed(str(path), size, digest.seen) as handle:
        handle.read(10)  # before the range: not digested
        handle.seek(1200)
        handle.read(300)  # past where the digest got: not digested, read again by finish
        handle.seek(900)
        handle.read(500)  # reaching into the range: digested from 1000
    assert digest.finish(str(path), size, 2000) == (2000, hashlib.sha256(path.read_bytes()[1000:2000]).hexdigest())
    assert range_digest(str(path), size, 1000, 2000) == hashlib.sha256(path.read_bytes()[1000:2000]).hexdigest()


# --- A staged page is the one its fingerprint names (transforms.state.unit_check.check_staging_file) ----------------------

def staged_unit(tmp_path: Path, fields: tuple[str, ...]) -> tuple[str, int, str, RecordLayout, dict[int, dict]]:
    """A staging file of three documents of one unit, as a build of `fields` stages them, and its unit's
    fingerprints as its record holds them: (path, size, SHA-256, layout, fingerprints by offset)."""
    layout, docs = RecordLayout(fields), [staged_doc("a.warc.gz", 0, k) for k in range(3)]
    path = tmp_path / "staged.avro"
    with path.open("wb") as handle:
        fastavro.writer(handle, layout.staging_schema, [layout.staged(doc) for doc in docs], codec="null",
                        metadata={STAGED_LAYOUT: layout.identity})
    data = path.read_bytes()
    fingerprints = {doc.capture.source_offset: encode(Fingerprint.of(doc))[1] for doc in docs}
    return str(path), len(data), hashlib.sha256(data).hexdigest(), layout, fingerprints


WRITTEN_CONTENT = {"default fields": DEFAULT_FIELDS, "content_hash but no html": ("url", "text", "content_hash",
                                                                                   "record_digest")}


@pytest.mark.parametrize("fields", sorted(WRITTEN_CONTENT))
def test_a_staged_page_is_hashed_again_and_checked_against_its_fingerprint(tmp_path, fields):
    path, size, sha256, layout, fingerprints = staged_unit(tmp_path, WRITTEN_CONTENT[fields])
    check_staging_file(path, size, sha256, layout, dict(fingerprints))
    first, second, _ = sorted(fingerprints)
    fingerprints[first] = dict(fingerprints[first], content_hash=fingerprints[second]["content_hash"],
                               content_check=fingerprints[second]["content_check"])
    with pytest.raises(NotReusable, match=r"^a staging file of it holds a document its fingerprint does not name "
                                          r"\(its content hash differs\)$"):
        check_staging_file(path, size, sha256, layout, fingerprints)


def test_a_staged_page_that_no_fingerprint_names_or_of_other_fields_does_not_check_out(tmp_path):
    path, size, sha256, layout, fingerprints = staged_unit(tmp_path, DEFAULT_FIELDS)
    del fingerprints[max(fingerprints)]
    with pytest.raises(NotReusable, match="^a staging file of it holds a document none of its fingerprints names$"):
        check_staging_file(path, size, sha256, layout, fingerprints)
    with pytest.raises(NotReusable, match="^a staging file of it was staged for records of other fields$"):
        check_staging_file(path, size, sha256, RecordLayout(WRITTEN_CONTENT["content_hash but no html"]),
                           fingerprints)
