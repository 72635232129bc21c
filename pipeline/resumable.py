"""Where a build keeps the work it may resume: `DIR/.webcorpus-resume-<identity>/`, kept until the build is
published.

It holds the staging files of the build's units and their completion
records (`transforms.state.unit_ledger`), and `identity.json`: the build's identity,
from which its name is made. A run of the same build (same options, inputs
of the same sizes and modification times, same software and code) finds it
and reuses every unit recorded there; any other run removes it, and says why
in one line. A run killed in any way leaves it as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from apache_beam.io.filesystems import FileSystems

from pipeline.build_inputs import BuildInputs
from pipeline.settings import CorpusSettings
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.exact_paths import names_in, remove_exactly
from transforms.filesystems.locations import redacted
from transforms.report.manifest import software_versions
from transforms.filesystems.regular_files import open_regular
from transforms.state.unit_check import NOT_REUSED_SUFFIX
from transforms.state.unit_ledger import RECORD_SUFFIX, UNITS

RESUME_PREFIX = ".webcorpus-resume-"
IDENTITY_NAME = "identity.json"
# The source files whose content is the code's identity (a changed line may change the bytes built).
CODE_SUFFIXES = (".py", ".c")
# A note's reason is a few words (`transforms.state.unit_check`); what is past this is not read.
MAX_REASON_BYTES = 200
# What a build's units are, told the user as it resumes (a selection's: `select_units.SHARD_UNITS`).
RANGE_UNITS = "byte ranges of the inputs"


def code_digest() -> str:
    """SHA-256 of webcorpus's own code (pipeline/ and transforms/): any change to it starts a build afresh."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in ("pipeline", "transforms"):
        for path in sorted((root / package).rglob("*")):
            if path.suffix in CODE_SUFFIXES and path.is_file():
                digest.update(f"{path.relative_to(root)}\0".encode("utf-8"))
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_identity(settings: CorpusSettings, found: BuildInputs, input_files: list,
                   resumed_under: dict | None = None) -> dict:
    """What a build's work may be reused under: its options (those that shape its bytes, with what it `found` of
    the files they name, and what else its source is `resumed_under`: a selection's options), each input file
    (Beam's `FileMetadata`, as matched; a selection's, its source's manifest) with its size and modification time
    (its digest is known only once it is read), the software and the code."""
    inputs = {redacted(meta.path): [meta.size_in_bytes, meta.last_updated_in_seconds] for meta in input_files}
    return {"options": {**settings.build_identity(found), **(resumed_under or {})},
            "inputs": dict(sorted(inputs.items())),
            "software": software_versions(settings.format), "code": code_digest()}


def identity_key(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def what_differs(earlier: dict | None, now: dict) -> str:
    """Why an earlier build's work cannot be reused by `now`, in a few words."""
    if not isinstance(earlier, dict):
        return "its identity.json is unreadable"
    if earlier.get("code") != now["code"] or earlier.get("software") != now["software"]:
        return "it was built by other code or packages"
    options = earlier.get("options") or {}
    changed = sorted(name for name in set(options) | set(now["options"])
                     if options.get(name) != now["options"].get(name) and name != "inputs")
    if changed:
        return f"its options differ ({', '.join(changed)})"
    inputs = earlier.get("inputs") or {}
    changed = sorted(path for path in set(inputs) | set(now["inputs"]) if inputs.get(path) != now["inputs"].get(path))
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        return f"its inputs differ ({changed[0]}{more}: added, removed, or another size or modification time)"
    return "its input patterns differ"


def _read_identity(directory: str) -> dict | None:
    try:
        with FileSystems.open(FileSystems.join(directory, IDENTITY_NAME)) as handle:
            return json.loads(handle.read())
    except Exception:  # noqa: BLE001 - whatever is wrong, that work cannot be reused
        return None


def prepare(output: str, identity: dict, resume: bool,
            units_are: str = RANGE_UNITS) -> tuple[str, list[str]]:
    """The directory of units for the build of `identity` in `output`, and a line for the user about what was
    reused or removed (`units_are`: what its units are). Call with the output's lock held."""
    units_dir = FileSystems.join(output, f"{RESUME_PREFIX}{identity_key(identity)}")
    notes = []
    for name in names_in(output, RESUME_PREFIX):
        earlier = FileSystems.join(output, name)
        if earlier == units_dir and resume:
            continue
        if resume:
            notes.append(f"starting afresh: the unfinished build that an earlier run left in {output} cannot be "
                         f"resumed, {what_differs(_read_identity(earlier), identity)}; its work is removed")
        else:
            notes.append(f"starting afresh (--no-resume): the unfinished work that an earlier run left in {output} "
                         "is removed")
        remove_exactly([earlier])
    records = FileSystems.join(units_dir, UNITS)
    if FileSystems.exists(records):
        reused = sum(1 for name in names_in(records) if name.endswith(RECORD_SUFFIX))
        notes.append(f"resuming the build that an earlier run left unfinished: {reused} units ({units_are}) it "
                     "finished are reused, not read again")
    else:
        FileSystems.mkdirs(records)
        with FileSystems.create(FileSystems.join(units_dir, IDENTITY_NAME)) as handle:
            handle.write(json.dumps(identity, sort_keys=True, indent=1).encode("utf-8"))
    return units_dir, notes


def not_reused(units_dir: str) -> str | None:
    """One line for the user about the units whose records a run's readers found not to check out
    (`transforms.state.unit_check`: they were read again), or None; removes their notes, so that it is said once."""
    records = FileSystems.join(units_dir, UNITS)
    if not FileSystems.exists(records):
        return None
    notes = [FileSystems.join(records, name) for name in names_in(records) if name.endswith(NOT_REUSED_SUFFIX)]
    if not notes:
        return None
    reasons = Counter()
    for path in notes:
        try:
            with open_regular(path, follow_links=False) as handle:
                reasons[handle.read(MAX_REASON_BYTES).decode("utf-8", "replace")] += 1
        except OSError:  # (a note that is not a regular file: the unit was read again all the same)
            reasons["why unknown"] += 1
    remove_exactly(notes)
    why = "; ".join(f"{count}: {reason}" if len(reasons) > 1 else reason for reason, count in reasons.most_common())
    return f"{len(notes)} units of the earlier run did not check out ({why}); read again"


def finish(units_dir: str) -> None:
    """Removes a build's units once it is published: nothing is left to resume."""
    remove_exactly([units_dir])


def keep_if_finished_any(units_dir: str) -> None:
    """After a build that was not published: keeps its units for the next run if it finished any, or else
    removes them, so that DIR is as it was."""
    records = FileSystems.join(units_dir, UNITS)
    if not (FileSystems.exists(records) and any(name.endswith(RECORD_SUFFIX) for name in names_in(records))):
        remove_exactly([units_dir])
