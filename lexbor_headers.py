"""lexbor's headers for CleanHtml's C walk, from the sdist of the selectolax that requirements.txt pins.

selectolax links lexbor into its own extension module and installs no headers. `transforms/native/_lexbor_walk.c`
calls that lexbor, so it is compiled against the headers of the very lexbor the pinned selectolax release
carries: its sdist (`selectolax-VERSION/lexbor/source/lexbor/...`), fetched from PyPI at build time and
checked against its sha256, of which only the `.h` files under `lexbor/source/` are extracted. setup.py
calls `headers`; the sdist is kept in `build/` so that a rebuild does not fetch it again, and
`SDIST_VARIABLE` names a copy to use instead of fetching it (a machine without network).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath

# The release that requirements.txt pins (tests/test_native.py checks that they agree).
SELECTOLAX_VERSION = "1.0.2"
SDIST_URL = ("https://files.pythonhosted.org/packages/3a/24/1a8b1b1a7cc8734b626327badccb4fd0f6c745a8cfd1b625923b5f07dd84/"
             f"selectolax-{SELECTOLAX_VERSION}.tar.gz")
SDIST_SHA256 = "f0508ad927aa426425d4aa7a2bb2f8b21c01412534465bd227e241d4d0a6a418"
SDIST_VARIABLE = "WEBCORPUS_SELECTOLAX_SDIST"
FETCH_TIMEOUT = 60


class HeadersUnavailable(Exception):
    """lexbor's headers could not be had: the walk is built without them, that is not at all."""


def headers(build_dir: Path) -> Path:
    """The include directory (holding `lexbor/...`) of the pinned selectolax's lexbor, under `build_dir`."""
    include = build_dir / f"lexbor-headers-selectolax-{SELECTOLAX_VERSION}"
    if include.is_dir():
        return include
    sdist = _sdist(build_dir)
    try:
        # A fresh clone has no build/ yet (an sdist named by SDIST_VARIABLE is not fetched into it).
        build_dir.mkdir(parents=True, exist_ok=True)
        extracted = Path(tempfile.mkdtemp(prefix=include.name + ".", dir=build_dir))
    except OSError as error:
        raise HeadersUnavailable(f"cannot write in {build_dir} ({error})") from error
    try:
        extract_headers(sdist, extracted)
        extracted.rename(include)
    finally:
        shutil.rmtree(extracted, ignore_errors=True)
    return include


def _sdist(build_dir: Path) -> Path:
    """The pinned sdist, its sha256 checked: the one `SDIST_VARIABLE` names, the one kept in `build_dir`, or
    one fetched into `build_dir`."""
    given = os.environ.get(SDIST_VARIABLE)
    if given:
        check_sha256(Path(given), SDIST_SHA256)
        return Path(given)
    kept = build_dir / PurePosixPath(SDIST_URL).name
    if kept.is_file():
        try:
            check_sha256(kept, SDIST_SHA256)
            return kept
        except HeadersUnavailable:
            kept.unlink()
    build_dir.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(kept.name + ".part")
    try:
        with urllib.request.urlopen(SDIST_URL, timeout=FETCH_TIMEOUT) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise HeadersUnavailable(f"cannot fetch {SDIST_URL} ({error}); set {SDIST_VARIABLE} to a copy of it") \
            from error
    check_sha256(partial, SDIST_SHA256)
    partial.rename(kept)
    return kept


def check_sha256(path: Path, expected: str) -> None:
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise HeadersUnavailable(f"cannot read {path} ({error})") from error
    if digest != expected:
        raise HeadersUnavailable(f"{path} has sha256 {digest}, not selectolax {SELECTOLAX_VERSION}'s sdist's {expected}")


def extract_headers(sdist: Path, into: Path) -> int:
    """Extracts the regular files `*/lexbor/source/**/*.h` of `sdist` into `into` (as `lexbor/...`); their count.
    Nothing else is written: no other member, no link, no name that leaves `into`."""
    count = 0
    try:
        with tarfile.open(sdist, "r:gz") as archive:
            for member in archive:
                parts = PurePosixPath(member.name).parts
                if (not member.isfile() or len(parts) < 5 or parts[1:3] != ("lexbor", "source")
                        or not member.name.endswith(".h") or any(part in ("", ".", "..") for part in parts)):
                    continue
                target = into.joinpath(*parts[3:])
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.extractfile(member) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                count += 1
    except (OSError, tarfile.TarError) as error:
        raise HeadersUnavailable(f"cannot read {sdist} ({error})") from error
    if not (into / "lexbor" / "core" / "base.h").is_file():
        raise HeadersUnavailable(f"{sdist} holds no lexbor/source/lexbor/core/base.h")
    return count
