"""The Beam release the runner repairs were written for, and the check each makes before its runner starts."""

from __future__ import annotations

import apache_beam

# The Beam releases the repairs are written and tested for: >= 2.77, < 2.78 (requirements.txt).
SUPPORTED = ((2, 77), (2, 78))
INSTALL = "install apache-beam>=2.77,<2.78 (requirements.txt)"


class UnsupportedBeam(RuntimeError):
    """The installed Beam is not the release a runner repair of webcorpus was written for."""


def lookup(owner, path: str):
    """`owner.a.b` for path "a.b", or None where any part is missing."""
    value = owner
    for name in path.split("."):
        value = getattr(value, name, None)
    return value


def require(what: str, advice: str, relied_on=(), assigned_in=()) -> None:
    """Raises `UnsupportedBeam` (one line) unless the installed Beam is in `SUPPORTED` and has every attribute
    `what` relies on: `relied_on`, (module or class, dotted path) pairs; `assigned_in`, (module, dotted path of a
    class, attribute names its `__init__` assigns)."""
    version = apache_beam.__version__
    release = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    if not SUPPORTED[0] <= release < SUPPORTED[1]:
        raise UnsupportedBeam(f"{what} was written for Beam 2.77, and Beam {version} is installed: {advice}")
    missing = [f"{getattr(owner, '__name__', owner)}.{path}" for owner, path in relied_on
               if lookup(owner, path) is None]
    for owner, path, names in assigned_in:
        init = getattr(lookup(owner, path), "__init__", None)
        assigned = init.__code__.co_names if hasattr(init, "__code__") else ()
        missing += [f"{owner.__name__}.{path}().{name}" for name in names if name not in assigned]
    if missing:
        raise UnsupportedBeam(f"Beam {version} has no {', '.join(missing)}, which {what} relies on: {advice}")
