"""Benchmarks of webcorpus: `python -m benchmarks.throughput --help`, `python -m benchmarks.fidelity --help`."""

import os
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


def default_corpus() -> Path:
    """The developer corpus: `$WEBCORPUS_CORPUS`, else `shared/corpus` beside the repository, whatever the current
    directory; from a git worktree, beside the main checkout the worktree belongs to."""
    if os.environ.get("WEBCORPUS_CORPUS"):
        return Path(os.environ["WEBCORPUS_CORPUS"])
    checkout = REPO
    git = REPO / ".git"
    if git.is_file():  # a worktree: `gitdir: MAIN/.git/worktrees/NAME`, whose `commondir` leads to MAIN/.git
        gitdir = Path(git.read_text().split(":", 1)[1].strip())
        commondir = gitdir / "commondir"
        if commondir.is_file():
            checkout = (gitdir / commondir.read_text().strip()).resolve().parent
    return checkout.parent / "shared" / "corpus"
