"""Benchmarks of webcorpus: `python -m benchmarks.throughput --help`, `python -m benchmarks.fidelity --help`."""

import statistics
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent


def parse_sections(parser, value: str, known: tuple[str, ...]) -> list[str]:
    """The comma-separated sections of `value`; an unknown one is a command-line error."""
    sections = [name.strip() for name in value.split(",") if name.strip()]
    unknown = set(sections) - set(known)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return sections


def alternated_runs(runs: dict[str, Callable[[], dict]], reps: int, say: Callable[[str, dict], str]) -> dict[str, list]:
    """Each of `runs` called `reps` times, alternated (ABBA...), each run printed as `say` words it; the runs by name."""
    names = list(runs)
    made: dict[str, list[dict]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            run = runs[name]()
            made[name].append(run)
            print(say(name, run), flush=True)
    return made


def medians(runs: list[dict], keys: tuple[str, ...] = ("seconds", "cpu_seconds")) -> dict[str, float]:
    """The median of each of `keys` over `runs`."""
    return {key: statistics.median(run[key] for run in runs) for key in keys}


# What the fidelity and main-content benchmarks' peers need.
FIDELITY_REQUIREMENTS = "benchmarks/requirements-fidelity.txt"


def why_not_imported(module: str, error: ImportError) -> str:
    """Why a tool's module did not import: not installed, or installed without something it imports (trafilatura
    with an lxml from 5.2 on and no lxml_html_clean), which only the error's own words explain."""
    import importlib.util

    installed = importlib.util.find_spec(module) is not None
    return (f"installed but cannot be imported ({type(error).__name__}: {error})" if installed
            else f"not installed ({error})") + f"; python -m pip install -r {FIDELITY_REQUIREMENTS}"
