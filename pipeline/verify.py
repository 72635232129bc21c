"""`python -m pipeline.verify DIR`: is a corpus exactly what its build wrote?

Checks, and reports every problem with file and position:

1. `manifest.json` reads, has the shape of a webcorpus manifest (every field
   verify reads, of its type; every output a plain file name in DIR, never
   a path that leads elsewhere), and its own checksum (`manifest_sha256`)
   holds;
2. every output file it lists exists with its size and SHA-256, and every
   corpus shard in DIR is listed;
3. every block of every corpus shard: sync marker, decompression, decoding
   (of a Parquet shard, every row group, its pages' CRCs; of a JSON Lines
   shard, every line, and its compressed stream's checksum);
4. every record: `content_hash` recomputed from `html`, `record_digest` from
   all its other fields; the record count of each shard matches the
   manifest;
5. the content index (`index-*.bin`, `pipeline.verify_index`): each file
   reads, and together they hold exactly the content hashes of the records;
6. the accounting of `report.json` (listed in the manifest): read = kept +
   duplicates + skipped + dead letter, in total and per input file, the
   files adding up to the totals, `balanced`, and kept = the records in the
   shards, in total and per input file.

Only regular files are read (a FIFO, a device such as a link to `/dev/zero`, a
directory is named as a problem, never read), shards through a mapping of the
file, never whole in memory.

Exit status 0 when everything is intact, 1 when anything is damaged, 2 when
DIR is not a corpus.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter

from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from pipeline.verify_index import HashTally, check_index, index_names
from transforms.report.manifest import MANIFEST_NAME, digest_file, seal
from transforms.corpus.read_corpus import Problem, corpus_files, read_bytes, scan_shard
from transforms.filesystems.regular_files import file_contents
from transforms.report.report import REPORT_NAME, outcomes_of

SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class NotACorpus(Exception):
    """DIR holds no webcorpus build."""


def _shown(value, limit: int = 60) -> str:
    """A value from a file, short enough for one line."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _file_name_problem(value) -> str | None:
    """Why `value` is not the name of a file directly in the corpus directory, or None."""
    if not isinstance(value, str):
        return f"{_shown(value)} is not a file name"
    if value in ("", ".", "..") or any(char in value for char in "/\\\0") or ":" in value:
        return f"{_shown(value, 300)} is not a plain file name in the corpus directory"
    return None


def output_entry_problems(index: int, entry) -> list[Problem]:
    where = f"outputs[{index}]"
    if not isinstance(entry, dict):
        return [Problem(MANIFEST_NAME, where, f"{_shown(entry)} is not an object")]
    problems = []
    name_problem = _file_name_problem(entry.get("path"))
    if name_problem:
        problems.append(Problem(MANIFEST_NAME, f"{where}.path", name_problem))
    if not _is_count(entry.get("size")):
        problems.append(Problem(MANIFEST_NAME, f"{where}.size", f"{_shown(entry.get('size'))} is not a size"))
    sha256 = entry.get("sha256")
    if not (isinstance(sha256, str) and SHA256_HEX.fullmatch(sha256)):
        problems.append(Problem(MANIFEST_NAME, f"{where}.sha256", f"{_shown(sha256)} is not a SHA-256 in hex"))
    if "records" in entry and not _is_count(entry["records"]):
        problems.append(Problem(MANIFEST_NAME, f"{where}.records", f"{_shown(entry['records'])} is not a count"))
    return problems


def manifest_problems(manifest: dict) -> list[Problem]:
    """What in a manifest (a JSON object) verify cannot use: its fields' types, paths outside the corpus."""
    outputs = manifest.get("outputs")
    if not isinstance(outputs, list):
        return [Problem(MANIFEST_NAME, "outputs", f"{_shown(outputs)} is not a list of output files")]
    problems = [problem for index, entry in enumerate(outputs) for problem in output_entry_problems(index, entry)]
    names = Counter(entry.get("path") for entry in outputs if isinstance(entry, dict)
                    and isinstance(entry.get("path"), str))
    problems += [Problem(MANIFEST_NAME, "outputs", f"{_shown(name)} is listed {count} times")
                 for name, count in sorted(names.items()) if count > 1]
    if not isinstance(manifest.get("manifest_sha256"), str):
        problems.append(Problem(MANIFEST_NAME, "manifest_sha256",
                                f"{_shown(manifest.get('manifest_sha256'))} is not a checksum"))
    return problems


def read_manifest(output_dir: str) -> dict | None:
    """The manifest of DIR as JSON, None if there is none; NotACorpus for a file that is no webcorpus manifest."""
    path = FileSystems.join(output_dir, MANIFEST_NAME)
    if not FileSystems.exists(path):
        return None
    try:
        manifest = json.loads(read_bytes(path))
    except (OSError, ValueError, RecursionError) as error:
        raise NotACorpus(f"{MANIFEST_NAME} is unreadable: {str(error)[:200]}") from error
    if not isinstance(manifest, dict) or not {"manifest_version", "outputs"} & set(manifest):
        raise NotACorpus(f"{MANIFEST_NAME} is not a webcorpus manifest (no manifest_version, no outputs)")
    return manifest


def check_manifest(output_dir: str) -> tuple[dict | None, list[Problem]]:
    """The manifest if the files can be checked against it, and its problems."""
    try:
        manifest = read_manifest(output_dir)
    except NotACorpus as error:
        return None, [Problem(MANIFEST_NAME, "file", str(error))]
    if manifest is None:
        # A build's manifest is published last: without it, DIR holds no complete build.
        return None, [Problem(MANIFEST_NAME, "file", "missing: not a complete build; file checksums cannot be checked")]
    problems = manifest_problems(manifest)
    usable = not problems
    try:
        sealed = seal(manifest)["manifest_sha256"] == manifest.get("manifest_sha256")
    except RecursionError:  # nested deeper than JSON's encoder goes: not what a build writes
        sealed = False
    if not sealed:
        # A manifest of the right shape is still used: damage in the files is reported too.
        problems.insert(0, Problem(MANIFEST_NAME, "manifest_sha256", "checksum mismatch: the manifest was changed"))
    return (manifest if usable else None), problems


def check_outputs(output_dir: str, manifest: dict) -> list[Problem]:
    problems = []
    for entry in manifest["outputs"]:
        path = FileSystems.join(output_dir, entry["path"])
        if not FileSystems.exists(path):
            problems.append(Problem(entry["path"], "file", "listed in the manifest but missing"))
            continue
        try:
            digest = digest_file(path)
        except OSError as error:  # a directory, a file without read permission
            problems.append(Problem(entry["path"], "file", f"unreadable: {str(error)[:200]}"))
            continue
        if digest.size != entry["size"]:
            problems.append(Problem(entry["path"], "file", f"size {digest.size}, manifest says {entry['size']}"))
        elif digest.sha256 != entry["sha256"]:
            problems.append(Problem(entry["path"], "file", "sha256 differs from the manifest"))
    listed = {entry["path"] for entry in manifest["outputs"]}
    for path in corpus_files(output_dir):
        name = path.rsplit("/", 1)[-1]
        if name not in listed:
            problems.append(Problem(name, "file", "corpus shard not listed in the manifest"))
    return problems


def check_shards(output_dir: str, manifest: dict | None,
                 hashes: HashTally | None = None) -> tuple[Counter, list[Problem]]:
    """Records per input file (`source_file`) in the shards, and the shards' problems; each record's content hash
    added to `hashes`, if given.

    Records written without `source_file` (`--fields`) are counted under None: only their total is checked.
    """
    expected = {entry["path"]: entry.get("records") for entry in (manifest or {}).get("outputs", [])}
    problems = []
    kept = Counter()
    for path in corpus_files(output_dir):
        name = path.rsplit("/", 1)[-1]
        records = 0
        try:
            with file_contents(path) as data:
                for item in scan_shard(data, name):
                    if isinstance(item, Problem):
                        problems.append(item)
                    else:
                        kept[item.get("source_file")] += 1
                        records += 1
                        if hashes is not None:
                            hashes.add_record(item)
        except OSError as error:  # not a regular file, no read permission
            if name not in expected:  # a listed file's is reported with its checksum (check_outputs)
                problems.append(Problem(name, "file", f"unreadable: {str(error)[:300]}"))
            continue
        if expected.get(name) is not None and expected[name] != records and not any(p.file == name for p in problems):
            problems.append(Problem(name, "file", f"{records} records, manifest says {expected[name]}"))
    return kept, problems


def _counts_problem(where: str, counts, outcomes: tuple[str, ...]) -> Problem | None:
    """Why `counts` (a report's record counts) are not counts that add up over `outcomes`, or None."""
    names = ("read",) + outcomes
    if not isinstance(counts, dict) or not all(_is_count(counts.get(name)) for name in names):
        return Problem(REPORT_NAME, where, f"{_shown(counts)} does not hold the counts {', '.join(names)}")
    accounted = sum(counts[name] for name in outcomes)
    if counts["read"] != accounted:
        off = f"{counts['read'] - accounted} records unaccounted for" if counts["read"] > accounted else \
            f"{accounted - counts['read']} records too many"
        terms = " + ".join(f"{name.replace('_', ' ')} {counts[name]}" for name in outcomes)
        return Problem(REPORT_NAME, where, f"read {counts['read']} != {terms} = {accounted} ({off})")
    return None


def read_report(output_dir: str, manifest: dict | None) -> tuple[dict | None, list[Problem]]:
    listed = manifest is not None and any(entry["path"] == REPORT_NAME for entry in manifest["outputs"])
    problems = [] if manifest is None or listed else [
        Problem(REPORT_NAME, "file", "not listed in the manifest: its accounting is not part of the build")]
    path = FileSystems.join(output_dir, REPORT_NAME)
    if not FileSystems.exists(path):
        # A listed report that is missing is reported with the other listed files.
        return None, problems + ([] if listed else [Problem(REPORT_NAME, "file", "missing: nothing to check the "
                                                                                  "shards' record counts against")])
    try:
        report = json.loads(read_bytes(path))
    except (OSError, ValueError, RecursionError) as error:
        return None, problems + [Problem(REPORT_NAME, "file", f"unreadable: {str(error)[:200]}")]
    if not isinstance(report, dict):
        return None, problems + [Problem(REPORT_NAME, "file", f"{_shown(report)} is not a run report")]
    return report, problems


def check_accounting(report: dict, kept: Counter | None) -> list[Problem]:
    """The report's accounting, and against `kept` (records per input file in the shards) when it is known."""
    if report.get("status") != "complete":
        return [Problem(REPORT_NAME, "status", f"{_shown(report.get('status'))}: the build did not complete")]
    records, files = report.get("records"), report.get("files")
    if not isinstance(files, dict):
        return [Problem(REPORT_NAME, "files", f"{_shown(files)} is not the per-file counts")]
    options = report.get("options")
    outcomes = outcomes_of(options if isinstance(options, dict) else {})
    problems = [problem for problem in [_counts_problem("records", records, outcomes)] + [
        _counts_problem(f"files[{_shown(name, 300)}]", counts, outcomes) for name, counts in sorted(files.items())]
        if problem]
    if problems:
        return problems
    if records.get("balanced") is not True:
        problems.append(Problem(REPORT_NAME, "records.balanced", f"{_shown(records.get('balanced'))}: the build "
                                                                 "found that its records do not add up"))
    for name in ("read",) + outcomes:
        per_file = sum(counts[name] for counts in files.values())
        if per_file != records[name]:
            problems.append(Problem(REPORT_NAME, "files", f"the files' {name} add up to {per_file}, "
                                                          f"records.{name} is {records[name]}"))
    if kept is not None:
        in_shards = sum(kept.values())
        if in_shards != records["kept"]:
            problems.append(Problem(REPORT_NAME, "records.kept", f"{records['kept']}, but the corpus shards hold "
                                                                 f"{in_shards} records"))
        for name in [] if None in kept else sorted(set(kept) | set(files)):
            said = files.get(name, {}).get("kept", 0)
            if kept[name] != said:
                problems.append(Problem(REPORT_NAME, f"files[{_shown(name, 300)}].kept",
                                        f"{said}, but the corpus shards hold {kept[name]} records of that file"))
    return problems


def verify(output_dir: str) -> tuple[int, int, list[Problem]]:
    """Returns (shards, intact records, problems)."""
    manifest, problems = check_manifest(output_dir)
    if manifest is not None:
        problems += check_outputs(output_dir, manifest)
    indexes = index_names(manifest) if manifest is not None else []
    hashes = HashTally(len(indexes)) if indexes else None
    kept, shard_problems = check_shards(output_dir, manifest, hashes)
    if indexes:
        problems += check_index(output_dir, manifest, hashes if hashes.complete and not shard_problems else None)
    report, report_problems = read_report(output_dir, manifest)
    if report is not None:
        # With damaged shards, some records could not be counted: the damage is what is reported.
        report_problems += check_accounting(report, None if shard_problems else kept)
    return len(corpus_files(output_dir)), sum(kept.values()), problems + shard_problems + report_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="the output directory of a webcorpus build")
    directory = parser.parse_args(argv).directory
    try:
        if not FileSystems.exists(directory):
            raise NotACorpus("it does not exist")
        if not corpus_files(directory) and read_manifest(directory) is None:
            raise NotACorpus(f"no corpus shards (corpus-*.avro, .parquet, .jsonl.zst, ...), no {MANIFEST_NAME}")
    except NotACorpus as error:
        print(f"python -m pipeline.verify: error: {directory} holds no webcorpus build ({error})", file=sys.stderr)
        return 2
    shards, records, problems = verify(directory)
    for problem in problems:
        print(problem)
    verdict = "intact" if not problems else f"{len(problems)} problem(s) found"
    print(f"{directory}: {shards} corpus files, {records} records verified; {verdict}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
