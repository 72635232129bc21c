"""`--extend CORPUS`: the earlier corpora a build leaves out what they hold, known by their manifests and
indexes alone (`transforms.state.corpus_index`): never their WARC files, never their shards.

An earlier corpus is input that decides which pages a build drops, so it is
taken only if its manifest's checksum holds and a build of this user signed it
(`pipeline.signing`; or it is named with `--trust-corpus`), it lists an index,
it was built with the same text-shaping options, --annotate among them (its content hashes are of
the same minimized text only then) and near-dedup settings (its signatures
are comparable only then), and each index file is, before the build starts, a
regular file and no link, of the size and SHA-256 the manifest lists, with
the header and whole entries that this build reads, and together as many
entries as the corpus has records. The build reads each index file again,
checked as it reads (`corpus_index.listed_bytes`). Each refusal is one line.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from apache_beam.io.filesystems import FileSystems

from pipeline.signing import checksum_holds, signature_problem
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.state.corpus_index import (HEADER, INDEX_NAME, MAGIC, READ_ENTRIES, IndexDamaged, listed_bytes,
                                           entry_width, listed_size_holds)
from transforms.report.manifest import MANIFEST_NAME
from transforms.stages.minimize_text import DEFAULT_SCRIPTS
from transforms.corpus.read_corpus import read_bytes
from transforms.filesystems.regular_files import open_regular

if TYPE_CHECKING:
    from pipeline.settings import CorpusSettings


@dataclass(frozen=True)
class EarlierCorpus:
    path: str
    manifest_sha256: str
    # The index files as their manifest lists them, (path, size, sha256), in the manifest's (sorted) order.
    index_files: tuple[tuple[str, int, str], ...]


def _near_dedup_words(options: dict | None) -> str:
    if options is None:
        return "without --near-dedup"
    return "with --near-dedup " + ", ".join(f"{name} {value}" for name, value in sorted(options.items()))


def text_shaping(options: dict) -> dict:
    """The options a manifest records that shape the minimized text, and so the content hash, by flag (older
    manifests leave out what was off or the default)."""
    return {"--drop-selector": list(options.get("drop_selectors", [])),
            "--main-content": options.get("main_content", False),
            "--scripts": list(options.get("scripts", DEFAULT_SCRIPTS)),
            "--quality": list(options.get("quality", [])),
            "--quality-threshold": options.get("quality_thresholds", {}),
            # An annotated build's text is unedited by the rules, and keeps what they would drop.
            "--annotate": options.get("annotate", False),
            "--pii": options.get("pii", False)}


def ours_text_shaping(settings: CorpusSettings) -> dict:
    return text_shaping({"drop_selectors": settings.drop_selectors, "main_content": settings.main_content,
                         "scripts": settings.scripts, "quality": settings.quality, "pii": settings.pii,
                         "annotate": settings.annotate,
                         "quality_thresholds": settings.thresholds() if settings.quality else {}})


def _words(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return json.dumps(value) if value not in ([], {}) else "none"


def check_index_file(path: str, size: int, sha256: str, signature_values: int) -> None:
    """The index file `path` is a regular file and no link, of the listed size and SHA-256, with the header and
    whole entries a build of these signatures writes: IndexDamaged or OSError if not. Read a chunk at a time."""
    name = path.rsplit("/", 1)[-1]
    if not listed_size_holds(size, signature_values):
        raise IndexDamaged(f"its manifest lists {name} as {size} bytes: no header and whole entries of "
                           f"{entry_width(signature_values)} bytes")
    with open_regular(path, follow_links=False) as opened:
        handle = listed_bytes(opened, name, size, sha256)
        magic, values = HEADER.unpack(handle.read(HEADER.size))
        if (magic, values) != (MAGIC, signature_values):
            raise IndexDamaged(f"{name} has no {MAGIC.decode()} header for signatures of {signature_values} values")
        while handle.read(entry_width(signature_values) * READ_ENTRIES):
            pass


def _listed_outputs(manifest: dict) -> list[tuple[str, int, str, int | None]]:
    outputs = [(entry["path"], entry["size"], entry["sha256"], entry.get("records")) for entry in manifest["outputs"]]
    for name, size, sha256, records in outputs:
        if not (isinstance(name, str) and isinstance(size, int) and size >= 0 and isinstance(sha256, str)
                and (records is None or isinstance(records, int))):
            raise ValueError(f"the output {name!r} is not listed with a path, a size and a SHA-256")
    return outputs


def earlier_corpus(path: str, settings: CorpusSettings, check_files: bool = True) -> EarlierCorpus:
    """The earlier corpus in directory `path`, checked against this build's `settings` (`check_files`: its index
    files too, read whole); ValueError in one line if it cannot be extended."""
    manifest_path = FileSystems.join(path, MANIFEST_NAME)
    if not FileSystems.exists(manifest_path):
        raise ValueError(f"--extend {path}: no {MANIFEST_NAME} there; give the directory of a complete webcorpus build")
    try:
        manifest = json.loads(read_bytes(manifest_path))
        outputs = _listed_outputs(manifest)
        options = manifest["options"]
        theirs = options.get("near_dedup")
        their_text = text_shaping(options)
    except Exception as error:  # noqa: BLE001 - whatever is wrong, it is no manifest to extend
        raise ValueError(f"--extend {path}: {MANIFEST_NAME} is not a readable webcorpus manifest ({error})") from error
    if not checksum_holds(manifest):
        raise ValueError(f"--extend {path}: its {MANIFEST_NAME} was changed since its build wrote it "
                         "(manifest_sha256 differs)")
    problem = None if path in settings.trust_corpora else signature_problem(manifest)
    if problem:
        raise ValueError(f"--extend {path}: its {MANIFEST_NAME} is not one a build of this user signed: {problem}; "
                         f"every page its index lists would be left out, so to extend it all the same add "
                         f"--trust-corpus {path}")
    index = [(name, size, sha256) for name, size, sha256, _ in outputs if INDEX_NAME.match(name)]
    if not index:
        raise ValueError(f"--extend {path}: its manifest lists no index (index-*.bin): it was built before builds "
                         f"wrote one; build it again (--rebuild {manifest_path}) to extend it")
    for flag, ours in ours_text_shaping(settings).items():
        if their_text[flag] != ours:
            raise ValueError(f"--extend {path} was built with {flag} {_words(their_text[flag])}, this build with "
                             f"{_words(ours)}: their content hashes are of other text, not comparable; give the same "
                             f"{flag} as the corpus extended")
    ours = None if settings.near_dedup is None else asdict(settings.near_dedup)
    if theirs != ours:
        raise ValueError(f"--extend {path} was built {_near_dedup_words(theirs)}, this build is "
                         f"{_near_dedup_words(ours)}: give the same near-dedup settings as the corpus extended")
    files = tuple((FileSystems.join(path, name), size, sha256) for name, size, sha256 in index)
    if check_files:
        check_index(path, files, outputs, 0 if settings.near_dedup is None else settings.near_dedup.permutations)
    return EarlierCorpus(path, manifest["manifest_sha256"], files)


def check_index(path: str, files: tuple[tuple[str, int, str], ...], outputs: list, signature_values: int) -> None:
    """Each index file as `check_index_file` reads it, and their entries as many as the corpus's records; ValueError
    in one line if not."""
    names = [file_path.rsplit("/", 1)[-1] for file_path, _, _ in files]
    expected = [f"index-{number:05d}-of-{len(names):05d}.bin" for number in range(len(names))]
    if names != expected:
        raise ValueError(f"--extend {path}: its manifest lists the index files {', '.join(names)}, not one set "
                         f"index-00000-of-{len(names):05d}.bin to index-{len(names) - 1:05d}-of-{len(names):05d}.bin")
    for (file_path, size, sha256), name in zip(files, names):
        try:
            check_index_file(file_path, size, sha256, signature_values)
        except FileNotFoundError:
            raise ValueError(f"--extend {path}: its index file {name} is missing") from None
        except IndexDamaged as error:
            raise ValueError(f"--extend {path}: its index file {error}") from error
        except OSError as error:
            raise ValueError(f"--extend {path}: its index file {name}: {error}") from error
    entries = sum((size - HEADER.size) // entry_width(signature_values) for _, size, _ in files)
    records = [count for name, _, _, count in outputs if not INDEX_NAME.match(name) and count is not None]
    if sum(records) != entries:
        raise ValueError(f"--extend {path}: its index lists {entries:,} documents, its corpus files "
                         f"{sum(records):,} records: the index is not the corpus's")
