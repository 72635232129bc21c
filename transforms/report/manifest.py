"""The build manifest: what went in, with which options and software, and what came out.

`DIR/manifest.json` lists every input file (size, sha256), the options that
shape the output, the versions of Python and of every package that affects
the output, and every output file (size, sha256, and records for corpus
shards). `manifest_sha256` is the SHA-256 of the manifest's own canonical
JSON without that field, so a damaged manifest is caught too; a published
build's manifest is signed as well (`manifest_hmac`, pipeline/signing.py).
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass
from importlib import metadata

from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms import native
from transforms.filesystems.regular_files import open_regular

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1
# Packages whose behaviour shapes the corpus bytes.
OUTPUT_PACKAGES = ("apache-beam", "selectolax", "warcio", "fastavro", "charset-normalizer", "brotli")
# Packages that shape the bytes of one format's shards (`--format`): listed for builds of that format only.
FORMAT_PACKAGES = {"parquet": ("pyarrow",)}
READ_CHUNK = 1 << 20
# The launcher's signature of a published build's manifest (pipeline/signing.py): outside the checksum, which
# it signs.
HMAC_FIELD = "manifest_hmac"


@dataclass(frozen=True)
class FileDigest:
    path: str
    size: int
    sha256: str
    records: int | None = None


class DigestingHandle:
    """A file open for writing that digests every byte written through it: a file written in one pass is
    digested without being read back (on an object store, a second download of it)."""

    def __init__(self, handle):
        self._handle = handle
        self._sha = hashlib.sha256()
        self._size = 0

    def write(self, data) -> int:
        self._sha.update(data)
        self._size += memoryview(data).nbytes
        return self._handle.write(data)

    def digest(self, path: str, records: int | None = None) -> FileDigest:
        """The digest of what was written, as `digest_file` gives it of `path`, the file written."""
        return FileDigest(path, self._size, self._sha.hexdigest(), records)

    def __getattr__(self, name: str):
        return getattr(self._handle, name)

    def __enter__(self) -> "DigestingHandle":
        return self

    def __exit__(self, *exc_info) -> None:
        self._handle.close()


def digest_file(path: str, records: int | None = None) -> FileDigest:
    sha = hashlib.sha256()
    size = 0
    with open_regular(path) as handle:
        while chunk := handle.read(READ_CHUNK):
            sha.update(chunk)
            size += len(chunk)
    return FileDigest(path, size, sha.hexdigest(), records)


def software_versions(file_format: str = "avro", tokens: bool = False) -> dict[str, str]:
    from selectolax import lexbor

    versions = {"python": platform.python_version()}
    # (With --tokenizer, the package that counts the tokens shapes `token_count`.)
    for package in OUTPUT_PACKAGES + FORMAT_PACKAGES.get(file_format, ()) + (("tokenizers",) if tokens else ()):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    versions["lexbor"] = f"{lexbor.LEXBOR_VERSION_MAJOR}.{lexbor.LEXBOR_VERSION_MINOR}"
    # Which path of the C accelerators ran: it does not shape the corpus (both give the same bytes).
    versions["accelerator"] = native.accelerator()
    return versions


def seal(manifest: dict) -> dict:
    """The manifest with its own checksum: of all of it but the checksum and the signature (`HMAC_FIELD`)."""
    body = {key: value for key, value in manifest.items() if key not in ("manifest_sha256", HMAC_FIELD)}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return dict(manifest, manifest_sha256=hashlib.sha256(canonical).hexdigest())


def build_manifest(inputs: list[FileDigest], outputs: list[FileDigest], options: dict,
                   sections: dict | None = None) -> dict:
    def entry(digest: FileDigest, relative: bool) -> dict:
        described = asdict(digest)
        if relative:
            described["path"] = digest.path.rsplit("/", 1)[-1]
        if described["records"] is None:
            del described["records"]
        return described

    return seal({
        "manifest_version": MANIFEST_VERSION,
        "inputs": [entry(digest, relative=False) for digest in sorted(inputs, key=lambda d: d.path)],
        "options": options,
        "software": software_versions(options.get("format", "avro"), "tokenizer" in options),
        "outputs": [entry(digest, relative=True) for digest in sorted(outputs, key=lambda d: d.path)],
        # Sections of the report: with --tokenizer, its token totals, kept and dropped, per language
        # (`report.tokens_section`); with --index, the selection's counts and records' digest (`report.index_section`).
        **(sections or {}),
    })


def write_manifest(manifest: dict, output_dir: str) -> str:
    path = FileSystems.join(output_dir, MANIFEST_NAME)
    with FileSystems.create(path) as handle:
        # allow_nan=False: NaN and Infinity are no JSON, and other parsers reject a manifest holding them.
        handle.write(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
                     .encode("utf-8"))
    return path
