"""Judged by a model (`--quality-model`): a fastText supervised classifier (`.bin`, or quantized `.ftz`) scores each
document's readable text; the probability of the label asked for is the signal `model/NAME`, and below a threshold
the page is a `filtered` skip.

The text is scored as the model was trained (`pipeline.train_quality` writes its examples through the same
`scoring_line`) and as datatrove's fastText filter and DCLM's classifier prepare it: one line, each line break a
space; fastText splits the words on whitespace itself. A model is loaded once per worker process (`loaded_model`),
never per bundle; the launcher loads and checks it first (`check_model`, from `pipeline.build_inputs`), and the
manifest records its file's SHA-256.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from dataclasses import dataclass

from transforms.document import Document, Skip
from transforms.vocabulary import FILTERED

# The label a model's probability is taken of unless `--quality-model-label` names another: the positive class of
# `pipeline.train_quality`'s models.
DEFAULT_LABEL = "__label__positive"
SIGNAL_PREFIX = "model"


class ModelError(ValueError):
    """A `--quality-model` that cannot be used, in one line."""


@dataclass(frozen=True)
class QualityModel:
    """A model asked for: its name (the file's name without its extension, as the signal names it), the file
    (absolute), its SHA-256 (`pipeline.build_inputs` fills it in), the label scored and the threshold below which
    a page is dropped (None: scored only)."""

    name: str
    path: str
    label: str = DEFAULT_LABEL
    threshold: float | None = None
    sha256: str = ""

    @property
    def signal(self) -> str:
        return f"{SIGNAL_PREFIX}/{self.name}"


def model_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _by_name(option: str, entries: tuple[str, ...], names: set[str]) -> dict[str, str]:
    """NAME=VALUE entries of `option`, by a model's name."""
    found = {}
    for entry in entries:
        name, equals, value = entry.partition("=")
        if not equals or name not in names:
            raise ModelError(f"{option} {entry}: expected NAME=VALUE with NAME a --quality-model's name "
                             f"({', '.join(sorted(names)) or 'none given'})")
        found[name] = value
    return found


def quality_models(paths: tuple[str, ...], labels: tuple[str, ...] = (),
                   thresholds: tuple[str, ...] = ()) -> tuple[QualityModel, ...]:
    """The models of `--quality-model PATH`, `--quality-model-label NAME=LABEL` and
    `--quality-model-threshold NAME=VALUE`, in their order. Raises `ModelError` on a name given twice, an entry
    naming no model or a threshold that is no number."""
    names = [model_name(path) for path in paths]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ModelError(f"--quality-model: two models are named {repeated[0]} (their file names without the "
                         "extension name their signals): rename one")
    label_of = _by_name("--quality-model-label", labels, set(names))
    threshold_of = _by_name("--quality-model-threshold", thresholds, set(names))
    models = []
    for name, path in zip(names, paths):
        threshold = threshold_of.get(name)
        try:
            threshold = None if threshold is None else float(threshold)
        except ValueError:
            raise ModelError(f"--quality-model-threshold {name}={threshold}: not a number") from None
        label = label_of.get(name, DEFAULT_LABEL)
        models.append(QualityModel(name, os.path.abspath(path), label if label.startswith("__label__")
                                   else f"__label__{label}", threshold))
    return tuple(models)


def scoring_line(text: str) -> str:
    """`text` as a model is trained on and scores it: one line, each line break a space."""
    return " ".join(text.splitlines())


@functools.lru_cache(maxsize=None)
def loaded_model(path: str):
    """The fastText model in `path`, loaded once per process (a worker's threads share it: fastText's predict
    does not change the model)."""
    import fasttext

    return fasttext.load_model(path)


def labels_of(model) -> tuple[str, ...]:
    """Every label `model` predicts (its `predict` with k=-1 gives them all, whatever the text)."""
    return tuple(model.predict("", k=-1)[0])


def check_model(model: QualityModel, memory_mib: int) -> None:
    """Refuses, in one line (`ModelError`), a file that is not a fastText supervised model, one whose loaded size
    (about its file's) exceeds `memory_mib` (`--page-memory`, a page's budget) or a label the model lacks."""
    size = os.path.getsize(model.path)
    if size > memory_mib << 20:
        raise ModelError(f"--quality-model {model.path}: {size / (1 << 20):,.0f} MiB, more than --page-memory "
                         f"{memory_mib} MiB allows a page; quantize it (fasttext's quantize, .ftz) or raise "
                         "--page-memory")
    try:
        labels = labels_of(loaded_model(model.path))
    except (ValueError, RuntimeError, MemoryError) as error:
        raise ModelError(f"--quality-model {model.path} is not a fastText supervised model: "
                         f"{str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
    if model.label not in labels:
        raise ModelError(f"--quality-model {model.path} has no label {model.label} (its labels: "
                         f"{', '.join(sorted(labels))}); name one with --quality-model-label {model.name}=LABEL")


def score(model: QualityModel, text: str) -> float:
    """The probability `model` gives its label for `text` (prepared by `scoring_line`)."""
    labels, probabilities = loaded_model(model.path).predict(scoring_line(text), k=-1)
    return float(probabilities[labels.index(model.label)])


def score_document(doc: Document, models: tuple[QualityModel, ...],
                   annotate: bool = False) -> tuple[Document | Skip, Counter]:
    """`doc` scored by every model on its readable text (`clean_text`): with `annotate`, the scores are its
    signals and nothing is dropped; otherwise the first model whose threshold the score is below makes it a
    `filtered` skip naming the model, label, score and threshold (counted as `documents:model/NAME`)."""
    if not doc.clean_text.strip():
        # A page without text is HashDedup's `no-text` skip: nothing to score.
        return doc, Counter()
    scores = {model.signal: score(model, doc.clean_text) for model in models}
    if annotate:
        return doc.replace(signals=dict(doc.signals, **scores)), Counter()
    for model in models:
        value = scores[model.signal]
        if model.threshold is not None and value < model.threshold:
            detail = f"{model.signal}: {model.label} {value:.4g} (threshold {model.threshold:g})"
            return Skip.for_document(FILTERED, doc, detail), Counter(
                {f"documents:{model.signal}": 1, f"raw_bytes:{model.signal}": doc.raw_bytes})
    return doc, Counter()
