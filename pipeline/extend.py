"""`--extend CORPUS`: the earlier corpora a build leaves out what they hold, known by their manifests and
indexes alone (`transforms.corpus_index`): never their WARC files, never their shards.

An earlier corpus is taken only if its manifest's checksum holds, it lists an
index, the index files are the bytes the manifest lists (checked before the
build starts: a changed index would drop pages that no corpus holds), and it
was built with the same near-dedup settings (its index's signatures are
comparable with this build's only then). Each refusal is one line.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from apache_beam.io.filesystems import FileSystems

from pipeline.signing import checksum_holds
from transforms import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.corpus_index import INDEX_NAME
from transforms.manifest import MANIFEST_NAME, digest_file
from transforms.near_dedup import MinHashParameters
from transforms.read_corpus import read_bytes


@dataclass(frozen=True)
class EarlierCorpus:
    path: str
    manifest_sha256: str
    # The index files' paths, in the manifest's (sorted) order.
    index_files: tuple[str, ...]


def _near_dedup_words(options: dict | None) -> str:
    if options is None:
        return "without --near-dedup"
    return "with --near-dedup " + ", ".join(f"{name} {value}" for name, value in sorted(options.items()))


def earlier_corpus(path: str, near_dedup: MinHashParameters | None, check_digests: bool = True) -> EarlierCorpus:
    """The earlier corpus in directory `path`, checked (`check_digests`: its index files against the manifest's
    sizes and SHA-256 too); ValueError in one line if it cannot be extended."""
    manifest_path = FileSystems.join(path, MANIFEST_NAME)
    if not FileSystems.exists(manifest_path):
        raise ValueError(f"--extend {path}: no {MANIFEST_NAME} there; give the directory of a complete webcorpus build")
    try:
        manifest = json.loads(read_bytes(manifest_path))
        outputs = [(entry["path"], entry["size"], entry["sha256"]) for entry in manifest["outputs"]]
        theirs = manifest["options"].get("near_dedup")
    except Exception as error:  # noqa: BLE001 - whatever is wrong, it is no manifest to extend
        raise ValueError(f"--extend {path}: {MANIFEST_NAME} is not a readable webcorpus manifest ({error})") from error
    if not checksum_holds(manifest):
        raise ValueError(f"--extend {path}: its {MANIFEST_NAME} was changed since its build wrote it "
                         "(manifest_sha256 differs)")
    index = [(name, size, sha256) for name, size, sha256 in outputs if INDEX_NAME.match(name)]
    if not index:
        raise ValueError(f"--extend {path}: its manifest lists no index (index-*.bin): it was built before builds "
                         f"wrote one; build it again (--rebuild {manifest_path}) to extend it")
    ours = None if near_dedup is None else asdict(near_dedup)
    if theirs != ours:
        raise ValueError(f"--extend {path} was built {_near_dedup_words(theirs)}, this build is "
                         f"{_near_dedup_words(ours)}: give the same near-dedup settings as the corpus extended")
    files = tuple(FileSystems.join(path, name) for name, _, _ in index)
    for (name, size, sha256), file_path in zip(index, files) if check_digests else ():
        if not FileSystems.exists(file_path):
            raise ValueError(f"--extend {path}: its index file {name} is missing")
        digest = digest_file(file_path)
        if (digest.size, digest.sha256) != (size, sha256):
            raise ValueError(f"--extend {path}: its index file {name} is not the one its manifest lists "
                             f"({'size' if digest.size != size else 'sha256'} differs): changed or damaged")
    return EarlierCorpus(path, manifest["manifest_sha256"], files)
