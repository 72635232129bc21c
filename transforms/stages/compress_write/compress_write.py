"""CompressWrite's pure part: the shards' names, the build's sync marker, a shard's attempt written and digested,
and the committed attempts published (`compress_write_transform` is the stage in Beam)."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import NamedTuple

from apache_beam.io.filesystems import FileSystems

from transforms.corpus.corpus_format import FILE_PREFIX
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.filesystems.exact_paths import remove_exactly
from transforms.report.manifest import DigestingHandle


def shard_name(index: int, count: int, extension: str = ".avro") -> str:
    return f"{FILE_PREFIX}-{index:05d}-of-{count:05d}{extension}"


def sync_marker_for(build: dict) -> bytes:
    """A sync marker derived from what defines a build, instead of a random one."""
    return hashlib.sha256(json.dumps(build, sort_keys=True).encode("utf-8")).digest()[:16]


class ShardAttempt(NamedTuple):
    """A corpus shard as one attempt wrote it: the shard's final path, and the attempt's own file."""

    shard: str
    path: str


def attempt_path(staging_dir: str, shard: str) -> str:
    """A file of its own for one attempt at writing `shard`."""
    return FileSystems.join(staging_dir, f"attempt-{uuid.uuid4().hex}-{shard.rsplit('/', 1)[-1]}")


def finish_shard(handle: DigestingHandle, writer, path: str, records: int):
    """A shard's last block written (compressed: zstd and the other codecs release the GIL) and the file digested
    (as it was written)."""
    with handle:
        writer.flush()
    return handle.digest(path, records)


def publish(attempts: list[ShardAttempt], staging_dir: str) -> list[str]:
    """Renames one committed attempt of each shard to the shard's final path, then removes the staging directory
    (with every other attempt's file: a failed attempt's, a zombie's).

    Safe to run again (a runner may retry it): shards already renamed are left as they are.
    """
    chosen: dict[str, str] = {}
    for shard, path in sorted(attempts):
        # The runner commits one attempt per shard; should it give two, both are complete and the same bytes.
        chosen.setdefault(shard, path)
    pending = [(path, shard) for shard, path in sorted(chosen.items()) if FileSystems.exists(path)]
    if pending:
        FileSystems.rename([path for path, _ in pending], [shard for _, shard in pending])
    remove_exactly([staging_dir])
    return sorted(chosen)
