"""ScoreQuality, the stage: `quality_model.score_document` applied to every document, in Beam (`--quality-model`)."""

from __future__ import annotations

import functools

import apache_beam as beam

from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.stage import FilterDocuments
from transforms.stages.quality_model import QualityModel, load_predictors, score_document
from transforms.vocabulary import DEAD_LETTER, DOCUMENTS, FILTER_COUNTS, QUALITY_MODEL, SKIPPED


class ScoreQuality(beam.PTransform):
    """Scores every document's `clean_text` with `models` (`quality_model.QualityModel`s); outputs `documents`, `skipped` (`filtered`, below a model's threshold), `filter_counts` and dead letters.
    `annotate` (--annotate): the scores go in `signals`, and nothing is dropped."""

    OUTPUTS = (SKIPPED, FILTER_COUNTS, DEAD_LETTER)

    def __init__(self, models: tuple[QualityModel, ...], annotate: bool = False,
                 page_timeout: float = DEFAULT_PAGE_TIMEOUT):
        super().__init__()
        self._models = tuple(models)
        self._annotate = annotate
        self._page_timeout = page_timeout

    def expand(self, docs):
        apply = functools.partial(score_document, models=self._models, annotate=self._annotate)
        stage = FilterDocuments(QUALITY_MODEL, apply, self._page_timeout,
                                prepare=functools.partial(load_predictors, self._models))
        return docs | beam.ParDo(stage).with_outputs(*self.OUTPUTS, main=DOCUMENTS)
