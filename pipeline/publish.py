"""How a build reaches its output directory: staged whole, then published in one final step.

A run writes its whole build (shards, side files, report.json, manifest.json)
in a staging directory of its own, `DIR/.webcorpus-staging-<run id>/`, and
leaves everything else in DIR alone while it builds. Only a build that
completed and whose accounting balances is published; its manifest is signed
(`pipeline.signing`), and then, in this order:

1. the journal `PUBLISHING` is written in the staging directory: from here
   on the build is to be published, whatever happens;
2. DIR's `manifest.json` goes first, into the staging directory's
   `previous/`, so that a half-published DIR never looks complete; then the
   files that manifest lists (what the earlier build wrote, and nothing
   else);
3. the journal says `moving-in`; the new build's files move into DIR, its
   manifest last;
4. the staging directory is removed, with the earlier build in it.

A publish cut short (SIGKILL, a crash, power loss) leaves its journal; the
next run on DIR finishes that publish before it starts (`recover`). A
staging directory without a journal is a build that never finished: the next
run removes it. Only regular files that a manifest signed by this user's
build lists, under the names a build writes, are ever moved or removed; if
the new build would write a file of a name that stands in DIR otherwise (a
user's file, a manifest someone else wrote), the run refuses.

Local output directories are locked for the whole run (`fcntl.flock` on DIR
itself, which no run can remove from under another), so a second run on DIR
refuses at once; the kernel drops the lock of a process that dies. The note
`DIR/.webcorpus.lock` (a regular file, never followed through a link; removed
at the end) says which run holds it (pid, host, start): the next run takes
over the note a killed run left with one line once that process is gone
(`output_lock`). Object stores (gs://, s3://) have no locks: two runs on one
such directory are not detected.

The work of an unfinished build, which the next run of the same build
resumes, is in `DIR/.webcorpus-resume-<identity>/` (`pipeline.resumable`),
which nothing here removes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import socket
import stat
import time
import uuid

from apache_beam.io.filesystems import FileSystems

from pipeline.graph import NEAR_DUPLICATES_FILE, SIDE_OUTPUTS
from pipeline.resumable import IDENTITY_NAME, RESUME_PREFIX
from pipeline.signing import sign, signature_problem
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus.corpus_format import FILE_PREFIX, SHARD_EXTENSIONS, SHARD_NAME
from transforms.state.corpus_index import INDEX_NAME, index_file_name
from transforms.stages.compress_write.staging import STAGING_DIR
from transforms.filesystems.exact_paths import is_local, names_in, remove_exactly
from transforms.report.manifest import MANIFEST_NAME, write_manifest
from transforms.filesystems.regular_files import kind_of, open_regular
from transforms.report.report import REPORT_NAME
from transforms.report.report_page import REPORT_PAGE_NAME
from transforms.state.unit_ledger import RECORD_SUFFIX, UNITS

RUN_STAGING_PREFIX = f"{STAGING_DIR}-"
LOCK_NAME = ".webcorpus.lock"
JOURNAL_NAME = "PUBLISHING"
PREVIOUS_DIR = "previous"
REMOVING_OLD = "removing-old"
MOVING_IN = "moving-in"
# Files a build writes whatever its inputs; the names of corpus and side-file shards depend on their number.
FIXED_NAMES = (REPORT_NAME, REPORT_PAGE_NAME, MANIFEST_NAME)
SIDE_FILE_NAME = re.compile(rf"({'|'.join(map(re.escape, (*SIDE_OUTPUTS, NEAR_DUPLICATES_FILE)))})"
                            r"-\d{5}-of-\d{5}\.jsonl\Z")


class OutputRefused(Exception):
    """The output directory cannot take this build; nothing was changed in it."""


class OutputBusy(OutputRefused):
    """Another run holds the output directory's lock."""


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks after boot, /proc/PID/stat), or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""


def lock_holder() -> dict:
    """What a lock file says of the run that holds it: its process, host, boot and start."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "boot": _boot_id(),
            "process_start": _process_start(os.getpid()), "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# The largest process id Linux gives (PID_MAX_LIMIT): a lock note naming another is no run's.
PID_MAX = 1 << 22


def holder_alive(holder: dict) -> bool | None:
    """Whether the run a lock note names (`_holder_of`) still runs: None where this machine cannot tell (another
    host)."""
    if holder.get("host") != socket.gethostname():
        return None
    if holder.get("boot") != _boot_id():
        return False
    started = _process_start(holder["pid"])
    # (A pid reused by another process since has another start.)
    return started is not None and started in ("", holder.get("process_start"))


def _holder_of(descriptor: int) -> dict | None:
    """The run a lock note names, or None if it names none: empty, not JSON, or its pid no process id."""
    try:
        holder = json.loads(os.pread(descriptor, 4096, 0) or b"null")
    except (OSError, ValueError):
        return None
    if not isinstance(holder, dict):
        return None
    pid = holder.get("pid")
    printable = all(isinstance(holder.get(key), str) and holder[key].isprintable() for key in ("host", "since"))
    return holder if type(pid) is int and 0 < pid <= PID_MAX and printable else None


def _who(holder: dict | None) -> str:
    return "" if holder is None else f"pid {holder['pid']} on {holder['host']}, since {holder['since']}; "


def _open_note(directory: int, output: str, flags: int) -> int:
    """DIR's lock note, opened in the directory `directory` without following a link; OutputRefused for what is
    not a regular file (through a link, a file elsewhere would be written, or a dangling link's target made)."""
    try:
        descriptor = os.open(LOCK_NAME, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644, dir_fd=directory)
    except OSError as error:
        # ELOOP: a link (O_NOFOLLOW); EISDIR: a directory opened for writing; ENXIO: a socket.
        if error.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise
        mode = os.stat(LOCK_NAME, dir_fd=directory, follow_symlinks=False).st_mode
    else:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISREG(mode):
            return descriptor
        os.close(descriptor)
    raise OutputRefused(f"{os.path.join(output, LOCK_NAME)} is not a regular file ({kind_of(mode)}), so no lock "
                        "note of a run: move it away")


def _note_is(directory: int, descriptor: int) -> bool:
    """Whether DIR's lock note is still the file `descriptor` holds (not removed, nor replaced)."""
    try:
        named, held = os.stat(LOCK_NAME, dir_fd=directory, follow_symlinks=False), os.fstat(descriptor)
    except FileNotFoundError:
        return False
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _busy(output: str, directory: int) -> OutputBusy:
    try:
        descriptor = _open_note(directory, output, os.O_RDONLY)
    except (OSError, OutputRefused):
        holder = None
    else:
        holder = _holder_of(descriptor)
        os.close(descriptor)
    return OutputBusy(f"another run is writing to --output {output} ({_who(holder)}it holds the lock); "
                      "wait for it to end or choose another directory")


def _lock(descriptor: int) -> bool:
    """Whether this process now holds the exclusive lock of `descriptor` (False: another one holds it)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _locked_note(output: str, directory: int) -> int:
    """DIR's lock note, opened (made if there is none) once DIR is locked: the directory itself, which no run can
    remove from under another; on a file system that cannot lock a directory (NFS), the note, as it is found
    still named so once locked. Raises OutputBusy if another run holds the lock."""
    try:
        directory_locked = _lock(directory)
    except OSError:
        directory_locked = None
    if directory_locked is False:
        raise _busy(output, directory)
    while True:
        note = _open_note(directory, output, os.O_RDWR | os.O_CREAT)
        if directory_locked:
            return note
        if not _lock(note):
            os.close(note)
            raise _busy(output, directory)
        # The run that held it may have removed it since it was opened: then lock the one named now.
        if _note_is(directory, note):
            return note
        os.close(note)


@contextlib.contextmanager
def output_lock(output: str):
    """Holds DIR's lock for the block (local directories only); raises OutputBusy if another run holds it, and
    OutputRefused if DIR's lock note is not a regular file. Yields a line for the user if it took over the lock
    of a run that is gone.

    The lock is on the directory itself (`_locked_note`), so removing the
    note does not unlock it. The note, `DIR/.webcorpus.lock`, says which run
    holds it (`lock_holder`), and is removed when the block ends, so DIR
    holds nothing of the lock between runs. A note that stays was left by a
    run that did not end (killed, or its machine restarted): the kernel gave
    its lock up, and if its process is gone from this host, the lock is taken
    over; a note naming a live process, or one on another host, refuses.
    """
    if not is_local(output):
        yield []
        return
    directory = os.open(output, os.O_RDONLY | os.O_DIRECTORY)
    try:
        note = _locked_note(output, directory)
    except BaseException:
        os.close(directory)
        raise
    path = os.path.join(output, LOCK_NAME)
    written = False
    try:
        taken_over = []
        earlier = _holder_of(note)
        if earlier is not None:
            alive = holder_alive(earlier)
            if alive is not False:
                why = ("that run's process is still alive" if alive else
                       "this machine cannot tell whether that run still runs; if it ended, remove the file")
                raise OutputBusy(f"another run is writing to --output {output} ({_who(earlier)}it holds {path}): "
                                 f"{why}")
            taken_over.append(f"took over the lock of an earlier run that is gone ({_who(earlier)}killed, or its "
                              "machine restarted)")
        elif os.fstat(note).st_size:
            taken_over.append(f"took over {path}, which names no run (no pid, host and start as a run writes them)")
        os.ftruncate(note, 0)
        os.pwrite(note, json.dumps(lock_holder()).encode("utf-8"), 0)
        written = True
        yield taken_over
    finally:
        # Only the note this run wrote: one removed meanwhile is not made again, nor another file of its name removed.
        if written and _note_is(directory, note):
            os.unlink(LOCK_NAME, dir_fd=directory)
        os.close(note)
        os.close(directory)


def new_staging_dir(output: str) -> str:
    path = FileSystems.join(output, f"{RUN_STAGING_PREFIX}{uuid.uuid4().hex[:12]}")
    FileSystems.mkdirs(path)
    return path


def _read_json(path: str):
    with open_regular(path) as handle:
        return json.loads(handle.read())


def is_output_name(name) -> bool:
    """Whether `name` is the name of a file that a build publishes."""
    return isinstance(name, str) and (name in FIXED_NAMES or bool(SHARD_NAME.match(name) or SIDE_FILE_NAME.match(name)
                                                                  or INDEX_NAME.match(name)))


def is_regular_file(path: str) -> bool:
    """Whether `path` is a regular file itself (not a link, a directory, ...): all a build ever writes. Object
    stores hold nothing else."""
    if not is_local(path):
        return True
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def listed_outputs(manifest_path: str) -> list[str]:
    """The file names a manifest that this user's build signed lists (`pipeline.signing`); raises OutputRefused
    for any other file, so that no file is moved or removed on the word of a manifest someone else wrote."""
    try:
        manifest = _read_json(manifest_path)
        names = [entry["path"] for entry in manifest["outputs"]]
    except Exception as error:  # noqa: BLE001 - whatever is wrong, it cannot say what the build wrote
        raise OutputRefused(f"{manifest_path} is not a readable webcorpus manifest ({error}); move it away") from error
    problem = signature_problem(manifest)
    if problem:
        raise OutputRefused(f"{manifest_path} is not a manifest that a build of this user signed: {problem}; a build "
                            "replaces only what its own earlier builds wrote: move it and the files it lists away, "
                            "or choose another --output")
    strange = [name for name in names if not is_output_name(name)]
    if strange:
        raise OutputRefused(f"{manifest_path} lists {strange[0]!r}, which is no file a build writes; move it away")
    return names


def sign_build(staging: str, key: bytes) -> None:
    """Signs the manifest of the complete build in `staging` (see `pipeline.signing`), before it is published."""
    write_manifest(sign(_read_json(FileSystems.join(staging, MANIFEST_NAME)), key), staging)


def earlier_build(output: str) -> list[str]:
    """What the build published in `output` wrote (its manifest last), or [] if none is there."""
    manifest = FileSystems.join(output, MANIFEST_NAME)
    if not FileSystems.exists(manifest):
        return []
    return listed_outputs(manifest) + [MANIFEST_NAME]


def check_nothing_in_the_way(output: str, names: list[str]) -> None:
    """Refuses if a file of one of `names` stands in `output` and the build published there did not write it."""
    ours = set(earlier_build(output))
    for name in names:
        path = FileSystems.join(output, name)
        if name in ours and is_regular_file(path):
            continue
        if FileSystems.exists(path) or (is_local(path) and os.path.lexists(path)):
            why = "it is not a regular file" if name in ours else \
                "no manifest of an earlier build lists it (a user's file, or what an interrupted run left)"
            raise OutputRefused(f"{path} is in the way: {why}; move it away")


def names_a_build_may_write(output: str) -> list[str]:
    """The fixed names, and the names of corpus, side-file and index shards that stand in `output` now."""
    return list(FIXED_NAMES) + [name for name in names_in(output, "")
                                if name not in FIXED_NAMES and is_output_name(name)]


def example_paths(output: str) -> list[str]:
    """A path of each kind of file that a build writes in `output`: what it publishes, its lock, the files of its
    staging directory (a run's id, and shard numbers, as one build's); what no input pattern may match."""
    published = [*FIXED_NAMES, *(f"{FILE_PREFIX}-00000-of-00001{extension}" for extension in SHARD_EXTENSIONS),
                 *(f"{name}-00000-of-00001.jsonl" for name in (*SIDE_OUTPUTS, NEAR_DUPLICATES_FILE)),
                 index_file_name(0, 1)]
    staging = FileSystems.join(output, f"{RUN_STAGING_PREFIX}{'0' * 12}")
    staged = FileSystems.join(staging, STAGING_DIR)
    resume = FileSystems.join(output, f"{RESUME_PREFIX}{'0' * 16}")
    return ([FileSystems.join(output, name) for name in (*published, LOCK_NAME)]
            + [FileSystems.join(resume, name) for name in (IDENTITY_NAME, f"staged-{'0' * 24}-{'0' * 32}-00000.avro",
                                                           f"{UNITS}/{'0' * 24}{RECORD_SUFFIX}")]
            + [FileSystems.join(staging, name) for name in (*published, JOURNAL_NAME, f"{JOURNAL_NAME}.new")]
            + [FileSystems.join(staging, PREVIOUS_DIR, name) for name in published]
            + [FileSystems.join(staged, name) for name in (f"staged-{'0' * 24}-0-00000.avro",
                                                           f"attempt-{'0' * 32}-{published[3]}")])


def _write_journal(staging: str, phase: str) -> None:
    path = FileSystems.join(staging, JOURNAL_NAME)
    written = f"{path}.new"
    with FileSystems.create(written) as handle:
        handle.write(phase.encode("ascii"))
    # Renaming over the journal replaces it in one step (removing it first would leave none).
    FileSystems.rename([written], [path])


def _journal(staging: str) -> str | None:
    path = FileSystems.join(staging, JOURNAL_NAME)
    if not FileSystems.exists(path):
        return None
    with open_regular(path) as handle:
        return handle.read(64).decode("ascii", "replace")


def publish_begun(staging: str) -> bool:
    """Whether publishing `staging` began (then only finishing it, never removing it, keeps every file)."""
    return _journal(staging) is not None


def _move(names: list[str], source: str, target: str) -> None:
    """Moves the regular files of `names` (links, directories, ... stay where they are)."""
    pending = [name for name in names if is_regular_file(FileSystems.join(source, name))
               and FileSystems.exists(FileSystems.join(source, name))]
    for name in pending:
        FileSystems.rename([FileSystems.join(source, name)], [FileSystems.join(target, name)])


def publish(staging: str, output: str) -> None:
    """Replaces the build published in `output` by the complete build in `staging` (see the module's docstring).

    Resumes a publish that was cut short: each step is done again only where it was not done.
    """
    new = listed_outputs(FileSystems.join(staging, MANIFEST_NAME))
    previous = FileSystems.join(staging, PREVIOUS_DIR)
    phase = _journal(staging)
    if phase is None:
        check_nothing_in_the_way(output, new + [MANIFEST_NAME])
        _write_journal(staging, REMOVING_OLD)
        phase = REMOVING_OLD
    if phase == REMOVING_OLD:
        if not FileSystems.exists(previous):
            FileSystems.mkdirs(previous)
        _move([MANIFEST_NAME], output, previous)
        if FileSystems.exists(FileSystems.join(previous, MANIFEST_NAME)):
            _move(listed_outputs(FileSystems.join(previous, MANIFEST_NAME)), output, previous)
        _write_journal(staging, MOVING_IN)
    _move(new, staging, output)
    _move([MANIFEST_NAME], staging, output)
    remove_exactly([staging])


def recover(output: str) -> list[str]:
    """Finishes the publishes that runs cut short in `output` and removes what unfinished runs left.

    Call with the lock held. Returns a line for each publish finished.
    """
    notes = []
    for name in names_in(output, RUN_STAGING_PREFIX):
        staging = FileSystems.join(output, name)
        if _journal(staging) is None:
            remove_exactly([staging])
        else:
            publish(staging, output)
            notes.append(f"finished publishing the build of an earlier run that was cut short ({name})")
    legacy = FileSystems.join(output, STAGING_DIR)
    if FileSystems.exists(legacy):
        remove_exactly([legacy])
    return notes
