"""Benchmarks of webcorpus: `python -m benchmarks.throughput --help`, `python -m benchmarks.fidelity --help`."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def parse_sections(parser, value: str, known: tuple[str, ...]) -> list[str]:
    """The comma-separated sections of `value`; an unknown one is a command-line error."""
    sections = [name.strip() for name in value.split(",") if name.strip()]
    unknown = set(sections) - set(known)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return sections


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
