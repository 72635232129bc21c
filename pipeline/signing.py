"""Which manifests this user's builds wrote: a keyed signature, `manifest_hmac`, beside the checksum.

`manifest_sha256` catches a damaged manifest, but anyone can compute it: a
`manifest.json` that someone else put in DIR would tell the next build which
files to move away (and delete), and one given to `--rebuild` which files to
read. So the launcher signs the manifest of each build it publishes:
`manifest_hmac` is HMAC-SHA256 of its `manifest_sha256` under a key of the
user's own. A build moves away only what a manifest it can verify lists
(`pipeline.publish`); `--rebuild` takes only such a manifest, unless told
`--trust-manifest`.

The key is `WEBCORPUS_SEAL_KEY` (any text: a team or a CI job that shares
its corpora shares it), or else the file `webcorpus/seal.key` in
`$XDG_CONFIG_HOME` (default `~/.config`), made on first use (32 random bytes
in hex, mode 0600). The signature is made on the launching machine only: the
workers of a remote runner never need the key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from transforms.manifest import HMAC_FIELD, seal
from transforms.regular_files import open_regular

KEY_VARIABLE = "WEBCORPUS_SEAL_KEY"


class SigningKeyUnavailable(Exception):
    """The user's key can be neither read nor made."""


def key_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "webcorpus" / "seal.key"


def _read_key(path: Path) -> bytes:
    with open_regular(str(path)) as handle:
        key = handle.read(4096).strip()
    if not key:
        raise SigningKeyUnavailable(f"the signing key {path} is empty; remove it (a new one is made) or set "
                                    f"{KEY_VARIABLE}")
    return key


def signing_key(create: bool = False) -> bytes | None:
    """The user's key; None if there is none and `create` is false. Raises SigningKeyUnavailable."""
    given = os.environ.get(KEY_VARIABLE)
    if given:
        return given.encode("utf-8")
    path = key_path()
    try:
        try:
            return _read_key(path)
        except FileNotFoundError:
            if not create:
                return None
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole under a name of its own, then linked into place: a run that starts meanwhile reads
        # the whole key or none, and of two runs that make one, the first link wins and both use it.
        written = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
            try:
                os.link(written, path)
            except FileExistsError:
                pass
        finally:
            written.unlink()
        return _read_key(path)
    except OSError as error:
        raise SigningKeyUnavailable(f"cannot read or make the signing key {path} ({error}); set {KEY_VARIABLE}, "
                                    "or make that directory writable") from error


def _signature(manifest: dict, key: bytes) -> str:
    return hmac.new(key, manifest["manifest_sha256"].encode("ascii"), hashlib.sha256).hexdigest()


def sign(manifest: dict, key: bytes) -> dict:
    """The manifest (whose checksum holds) with its signature under `key`."""
    return dict(manifest, **{HMAC_FIELD: _signature(manifest, key)})


def checksum_holds(manifest: dict) -> bool:
    try:
        return seal(manifest)["manifest_sha256"] == manifest.get("manifest_sha256")
    except (TypeError, ValueError, RecursionError):
        return False


def signature_problem(manifest: dict) -> str | None:
    """Why `manifest` is not one this user's builds signed (its checksum, its signature), or None."""
    if not checksum_holds(manifest):
        return "it was changed since its build wrote it (manifest_sha256 differs)"
    if HMAC_FIELD not in manifest:
        return f"it has no {HMAC_FIELD}: another user's build, or one from before builds signed their manifests"
    key = signing_key()
    given = manifest[HMAC_FIELD]
    if key is None or not isinstance(given, str) or not hmac.compare_digest(_signature(manifest, key), given):
        return f"its {HMAC_FIELD} does not verify with this user's key ({KEY_VARIABLE} or {key_path()})"
    return None
