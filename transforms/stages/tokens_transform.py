"""CountTokens, the stage: each document's `token_count` (`tokens.TokenCounter` of its `clean_text`), in Beam,
and the tokens that reach deduplication per unit of reading and language (see `tokens`)."""

from __future__ import annotations

import apache_beam as beam

from transforms.document import DeadLetter, Document
from transforms.stage import CountsPerUnit, filter_counts
from transforms.stages.tokens import HASHED_TOKENS, TokenCounter, tokens_of
from transforms.vocabulary import COUNT_TOKENS, DEAD_LETTER, DOCUMENTS, FILTER_COUNTS


class CountDocumentTokens(beam.DoFn):
    def __init__(self, count: TokenCounter):
        self._count = count

    def start_bundle(self):
        self._counts = CountsPerUnit(FILTER_COUNTS, filter_counts)

    def process(self, doc: Document):
        try:
            counted = doc.replace(token_count=self._count(doc.clean_text))
        except Exception as error:  # noqa: BLE001 - a page the tokenizer fails on is a dead letter, not a crash
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(COUNT_TOKENS, doc, error))
            yield from self._counts.add(doc, {})
            return
        yield counted
        yield from self._counts.add(doc, tokens_of(HASHED_TOKENS, doc.language, counted.token_count))

    def finish_bundle(self):
        yield from self._counts.finish()


class CountTokens(beam.PTransform):
    """Gives every document its `token_count`; outputs `documents`, `filter_counts` (`tokens_of:hashed:LANGUAGE`)
    and dead letters.

    `tokenizer_json`: the `--tokenizer` file's text (`tokens.TokenizerFile`).
    """

    OUTPUTS = (FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, tokenizer_json: str):
        super().__init__()
        self._count = TokenCounter(tokenizer_json)

    def expand(self, docs):
        return docs | beam.ParDo(CountDocumentTokens(self._count)).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
