"""The C accelerators, and the pure-Python path that stands in for each.

Ten small C modules speed up the hot loops of the charset's check, CleanHtml, MinimizeText,
ScoreQuality, Decontaminate, the quality rules and SiteBoilerplate: `_scan` (whether a page is
UTF-8, without decoding it, and its tags counted for CleanHtml's guard), `_blocks` (the corpus's
`<div>` block format, written and read in one pass), `_lexbor_walk` (CleanHtml's
walk over lexbor's tree), `_links` (`resolve_links`'s common case), `_code_page`
(MinimizeText's code pages), `_classify` (a fastText classifier's probabilities;
its pure path is fastText's own predict), `_ngrams` (decontamination's words and
n-gram hashes), `_gopher` (Gopher's top and repeated n-gram measures), `_line_hashes`
(`--site-boilerplate`'s line hashes of a page's blocks) and `_words` (the quality rules' word split: the
words of letters alone never reach Python; and C4's line scan). Each has a pure-Python path that gives the same output, byte for
byte (the tests run both): the package installs and runs without a C
compiler, and the C modules are only faster.

A module that is not built, fails to import, or refuses to bind (the walk
checks selectolax's lexbor at import) is one warning line on the
`webcorpus` logger, and its pure path runs. `WEBCORPUS_PURE_PYTHON=1` in the
environment uses the pure paths without trying the C modules. Which path
ran is in the run report and the manifest (`accelerator`).
"""

from __future__ import annotations

import importlib
import logging
import os

ACCELERATORS = ("_lexbor_walk", "_links", "_code_page", "_ngrams", "_classify", "_gopher", "_line_hashes", "_words",
                "_scan", "_blocks")
PURE_PYTHON_VARIABLE = "WEBCORPUS_PURE_PYTHON"

_LOG = logging.getLogger("webcorpus")


def pure_python_forced() -> bool:
    return os.environ.get(PURE_PYTHON_VARIABLE, "") == "1"


def _import_all() -> dict:
    """The C modules that import, by name; one warning line for those that do not."""
    if pure_python_forced():
        return {}
    modules, failures = {}, []
    for name in ACCELERATORS:
        try:
            modules[name] = importlib.import_module(f"transforms.native.{name}")
        except ImportError as error:
            failures.append(f"{name} ({' '.join(str(error).split())})")
    if failures:
        _LOG.warning("C accelerators of webcorpus not built or not importable, their pure-Python paths run instead: %s",
                     "; ".join(failures))
    return modules


_MODULES = _import_all()
# The modules that are in use: refused ones are taken out.
_IN_USE = set(_MODULES)


def load(name: str):
    """The C module `transforms.native.<name>`, or None when its pure-Python path is to run."""
    if name not in ACCELERATORS:
        raise ValueError(f"{name} is not one of the accelerators {', '.join(ACCELERATORS)}")
    return _MODULES.get(name) if name in _IN_USE else None


def refuse(name: str, reason: str) -> None:
    """The C module `name` is not to be used (it failed a check): one warning line, and its pure path runs."""
    _IN_USE.discard(name)
    _LOG.warning("the C accelerator transforms.native.%s of webcorpus is not used, its pure-Python path runs instead: %s",
                 name, " ".join(reason.split()))


def accelerator() -> str:
    """Which path runs: `c` (every C module in use), `python` (none), or `c for ..., python for ...`."""
    # CleanHtml's walk is only in use once it has bound.
    importlib.import_module("transforms.stages.clean_html.c_walk")
    in_use = [name for name in ACCELERATORS if name in _IN_USE]
    if len(in_use) == len(ACCELERATORS):
        return "c"
    if not in_use:
        return "python"
    return f"c for {', '.join(in_use)}, python for {', '.join(name for name in ACCELERATORS if name not in in_use)}"
