"""The developer corpus as the tests and the benchmarks read it: where it is (`default_corpus`), its pages
(`devcorpus.pages`), its gold text (`devcorpus.gold`) and the measures of a tool's text against it
(`devcorpus.measures`).

Not shipped (setup.py packages only `pipeline` and `transforms`): imported from the repository's root, as
`benchmarks` is.
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


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
