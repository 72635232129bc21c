"""pipeline.verify's check of a corpus's content index (`transforms.state.corpus_index`): every index file reads
(header, whole entries, sorted, each in the shard its hash falls in), and holds exactly the content hashes of the
corpus's records, shard by shard.

The records' hashes are never held: per index shard, their count and their sum
(the hashes as 256-bit numbers, modulo 2^256) are compared with the index
file's, which it reads a few thousand entries at a time. A record without
`content_hash` (`--fields`) gives it from its `html`; a corpus written with
neither cannot be compared, and only its index files are read.
"""

from __future__ import annotations

import re

from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus.corpus_format import content_hash
from transforms.state.corpus_index import HASH_BYTES, INDEX_NAME, IndexDamaged, index_shard_of, read_index_entries
from transforms.corpus.read_corpus import Problem

SHARD_NUMBERS = re.compile(r"-(\d{5})-of-(\d{5})\.")
HASH_SPACE = 1 << 256


class HashTally:
    """Per index shard, the count and sum of the content hashes seen."""

    def __init__(self, shards: int):
        self.shards = shards
        self.counts = [0] * shards
        self.sums = [0] * shards
        # False once a record had neither `content_hash` nor `html`: the sums are then not the corpus's.
        self.complete = True

    def add(self, digest: bytes) -> None:
        shard = index_shard_of(digest, self.shards)
        self.counts[shard] += 1
        self.sums[shard] = (self.sums[shard] + int.from_bytes(digest, "big")) % HASH_SPACE

    def add_record(self, record: dict) -> None:
        """Adds a corpus record's content hash (from its `html` if it has no `content_hash`)."""
        if "content_hash" in record:
            self.add(bytes.fromhex(record["content_hash"]))
        elif "html" in record:
            self.add(bytes.fromhex(content_hash(record["html"])))
        else:
            self.complete = False


def index_names(manifest: dict) -> list[str]:
    return sorted(entry["path"] for entry in manifest["outputs"] if INDEX_NAME.match(entry["path"]))


def signature_values(manifest: dict) -> int:
    near_dedup = manifest.get("options", {}).get("near_dedup")
    return near_dedup["bands"] * near_dedup["rows"] if isinstance(near_dedup, dict) else 0


def check_index(output_dir: str, manifest: dict, records: HashTally | None) -> list[Problem]:
    """The problems of the index files `manifest` lists, and against `records` (the corpus's hashes, None if they
    could not all be read)."""
    names = index_names(manifest)
    values = signature_values(manifest)
    problems = []
    index = HashTally(len(names))
    for position, name in enumerate(names):
        numbers = SHARD_NUMBERS.search(name)
        if (int(numbers.group(1)), int(numbers.group(2))) != (position, len(names)):
            problems.append(Problem(name, "file", f"the manifest lists {len(names)} index files: this name does "
                                                  f"not belong among them"))
            continue
        path = FileSystems.join(output_dir, name)
        if not FileSystems.exists(path):
            continue  # reported with the other listed files
        try:
            for entry in read_index_entries(path, values):
                digest = entry[:HASH_BYTES]
                if index_shard_of(digest, len(names)) != position:
                    problems.append(Problem(name, "entries", f"hash {digest.hex()} belongs in index file "
                                                             f"{index_shard_of(digest, len(names))}"))
                    break
                index.add(digest)
        except (IndexDamaged, OSError) as error:
            problems.append(Problem(name, "file", str(error)[:300]))
            continue
        if records is not None and (index.counts[position], index.sums[position]) != (
                records.counts[position], records.sums[position]):
            problems.append(Problem(name, "entries", f"{index.counts[position]} entries, the corpus has "
                                                     f"{records.counts[position]} records in this shard of hashes"
                                                     + ("" if index.counts[position] != records.counts[position]
                                                        else ": their hashes differ")))
    return problems
