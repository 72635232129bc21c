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
in hex, mode 0600, in a directory of mode 0700). The signature is made on the
launching machine only: the workers of a remote runner never need the key.

A key file that another user could read, replace or change would let them sign
manifests as this user, so it is refused (in one line that says how to mend
it), as ssh refuses a private key: the key must be a regular file, not a
symbolic link (never followed), of this user, that no one else may read or
write; its directory and each one above, up to the home directory (or `/`),
must be this user's or root's and writable by no one else, unless sticky and
root's (as `/tmp`, where no one replaces another's names).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from transforms.report.manifest import HMAC_FIELD, seal
from transforms.filesystems.regular_files import NotARegularFile, open_regular

KEY_VARIABLE = "WEBCORPUS_SEAL_KEY"


class SigningKeyUnavailable(Exception):
    """The user's key can be neither read nor made."""


def key_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "webcorpus" / "seal.key"


def _check_directories(directory: Path) -> None:
    """Raises SigningKeyUnavailable if another user could put a key of theirs in `directory` (FileNotFoundError
    if it is not there)."""
    home = Path(os.path.expanduser("~")).resolve()
    real = directory.resolve()
    for place in (real, *real.parents):
        status = os.lstat(place)
        if status.st_uid not in (0, os.geteuid()):
            raise SigningKeyUnavailable(f"the signing key's directory {place} belongs to another user (uid "
                                        f"{status.st_uid}), who could replace the key: set XDG_CONFIG_HOME to a "
                                        f"directory of your own, or set {KEY_VARIABLE}")
        shared = status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if shared and not (status.st_mode & stat.S_ISVTX and status.st_uid == 0):
            raise SigningKeyUnavailable(f"the signing key's directory {place} is writable by others (mode "
                                        f"{stat.S_IMODE(status.st_mode):04o}), who could replace the key: "
                                        f"chmod go-w {place}")
        if place == home:
            break


def _read_key(path: Path) -> bytes:
    _check_directories(path.parent)
    try:
        handle = open_regular(str(path), follow_links=False)
    except NotARegularFile as error:
        raise SigningKeyUnavailable(f"the signing key {path} is {str(error).split(':')[0]}: remove it "
                                    "(a new one is made) or put the key file itself there") from error
    with handle:
        status = os.fstat(handle.fileno())
        if status.st_uid != os.geteuid():
            raise SigningKeyUnavailable(f"the signing key {path} belongs to another user (uid {status.st_uid}), who "
                                        f"could sign manifests as you: remove it (a new one is made) or set "
                                        f"{KEY_VARIABLE}")
        if status.st_mode & 0o077:
            raise SigningKeyUnavailable(f"the signing key {path} can be read or written by others (mode "
                                        f"{stat.S_IMODE(status.st_mode):04o}), who could sign manifests as you: "
                                        f"chmod 600 {path}")
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
        _check_directories(path.parent)
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
    try:
        key = signing_key()
    except SigningKeyUnavailable as error:
        return f"its {HMAC_FIELD} cannot be checked: {error}"
    given = manifest[HMAC_FIELD]
    if key is None or not isinstance(given, str) or not hmac.compare_digest(_signature(manifest, key), given):
        return f"its {HMAC_FIELD} does not verify with this user's key ({KEY_VARIABLE} or {key_path()})"
    return None
