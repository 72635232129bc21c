"""`python -m pipeline.verify DIR`: is a corpus exactly what its build wrote?

Checks, and reports every problem with file and position:

1. `manifest.json` reads and its own checksum (`manifest_sha256`) holds;
2. every output file it lists exists with its size and SHA-256, and every
   corpus shard in DIR is listed;
3. every block of every corpus shard: sync marker, decompression, decoding;
4. every record: `content_hash` recomputed from `html`; the record count of
   each shard matches the manifest.

Exit status 0 when everything is intact, 1 when anything is damaged, 2 when
DIR is not a corpus.
"""

from __future__ import annotations

import argparse
import json
import sys

from apache_beam.io.filesystems import FileSystems

from transforms.manifest import MANIFEST_NAME, digest_file, seal
from transforms.read_corpus import Problem, corpus_files, read_bytes, scan_avro


def check_manifest(output_dir: str) -> tuple[dict | None, list[Problem]]:
    path = FileSystems.join(output_dir, MANIFEST_NAME)
    if not FileSystems.exists(path):
        # A build's manifest is published last: without it, DIR holds no complete build.
        return None, [Problem(MANIFEST_NAME, "file", "missing: not a complete build; file checksums cannot be checked")]
    try:
        manifest = json.loads(read_bytes(path))
        sealed = seal(manifest)
    except (ValueError, TypeError, AttributeError) as error:
        return None, [Problem(MANIFEST_NAME, "file", f"unreadable: {error}")]
    if not isinstance(manifest.get("outputs"), list):
        return None, [Problem(MANIFEST_NAME, "outputs", "missing: not a webcorpus manifest")]
    if sealed.get("manifest_sha256") != manifest.get("manifest_sha256"):
        # The files are still checked against it: damage there is reported too.
        return manifest, [Problem(MANIFEST_NAME, "manifest_sha256", "checksum mismatch: the manifest was changed")]
    return manifest, []


def check_outputs(output_dir: str, manifest: dict) -> list[Problem]:
    problems = []
    for entry in manifest["outputs"]:
        path = FileSystems.join(output_dir, entry["path"])
        if not FileSystems.exists(path):
            problems.append(Problem(entry["path"], "file", "listed in the manifest but missing"))
            continue
        digest = digest_file(path)
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


def check_shards(output_dir: str, manifest: dict | None) -> tuple[int, list[Problem]]:
    expected = {entry["path"]: entry.get("records") for entry in (manifest or {}).get("outputs", [])}
    problems = []
    total = 0
    for path in corpus_files(output_dir):
        name = path.rsplit("/", 1)[-1]
        records = 0
        for item in scan_avro(read_bytes(path), name):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                records += 1
        total += records
        if expected.get(name) is not None and expected[name] != records and not any(p.file == name for p in problems):
            problems.append(Problem(name, "file", f"{records} records, manifest says {expected[name]}"))
    return total, problems


def verify(output_dir: str) -> tuple[int, int, list[Problem]]:
    """Returns (shards, intact records, problems)."""
    manifest, problems = check_manifest(output_dir)
    if manifest is not None:
        problems += check_outputs(output_dir, manifest)
    records, shard_problems = check_shards(output_dir, manifest)
    return len(corpus_files(output_dir)), records, problems + shard_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="the output directory of a webcorpus build")
    directory = parser.parse_args(argv).directory
    if not FileSystems.exists(directory) or not corpus_files(directory) and not FileSystems.exists(
            FileSystems.join(directory, MANIFEST_NAME)):
        print(f"python -m pipeline.verify: error: {directory} holds no webcorpus build (no corpus-*.avro, no "
              f"{MANIFEST_NAME})", file=sys.stderr)
        return 2
    shards, records, problems = verify(directory)
    for problem in problems:
        print(problem)
    verdict = "intact" if not problems else f"{len(problems)} problem(s) found"
    print(f"{directory}: {shards} corpus files, {records} records verified; {verdict}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
