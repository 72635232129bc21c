"""Judged by a model (`--quality-model`): a fastText supervised classifier (`.bin`, or quantized `.ftz`) scores each
document's readable text; the probability of the label asked for is the signal `model/NAME`, and below a threshold
the page is a `filtered` skip.

The text is scored as the model was trained (`pipeline.train_quality` writes its examples through the same
`scoring_line`) and as datatrove's fastText filter and DCLM's classifier prepare it: one line, each line break a
space; fastText splits the words on whitespace itself. A model is loaded once per worker process (`predictor`),
never per bundle; the launcher loads and checks it first (`check_model`, from `pipeline.build_inputs`), and the
manifest records its file's SHA-256.

The C module `transforms.native._classify` scores the models it covers (fastText's softmax classifiers without
subword n-grams, quantization or pruning: the ones `pipeline.train_quality` writes) with fastText's own
arithmetic, in the same order, so its probabilities are fastText's, bit for bit (tests compare them); it reads a
line without fastText's stream and prefetches the rows of the bucket, which make fastText's predict wait on memory
(docs/stages.md has the figures). Any other model, or a worker without the C module, is scored by fastText.
"""

from __future__ import annotations

import functools
import os
import struct
from collections import Counter
from dataclasses import dataclass

import numpy as np

from transforms import native
from transforms.document import Document, Skip, filtered

# The label a model's probability is taken of unless `--quality-model-label` names another: the positive class of
# `pipeline.train_quality`'s models.
DEFAULT_LABEL = "__label__positive"
SIGNAL_PREFIX = "model"
# fastText's model file (version 12): its signature; its enums' supervised model and softmax loss; an unpruned
# dictionary's pruneidx_size.
MAGIC, VERSION, SUPERVISED, SOFTMAX, UNPRUNED = 793712314, 12, 3, 3, -1
_classify = native.load("_classify")


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


@dataclass(frozen=True)
class NativeModel:
    """A model as `_classify` scores it: its dictionary (entries' bytes one after another, where each ends, and
    their table), its labels, its sizes and its two matrices (float32, views of the file's bytes)."""

    words: bytes
    ends: np.ndarray
    table: bytes
    labels: tuple[str, ...]
    nwords: int
    bucket: int
    word_ngrams: int
    inputs: np.ndarray
    outputs: np.ndarray
    dim: int

    def predict(self, line: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """As fastText's predict with k=-1 (each label's probability; none for a line without a row)."""
        found = _classify.probabilities(line.encode("utf-8") + b"\n", self.words, self.ends, self.table, self.nwords,
                                        self.bucket, self.word_ngrams, self.inputs, self.outputs, self.dim)
        return (self.labels if found else ()), found


def _matrix(data: bytes, offset: int) -> tuple[np.ndarray, int]:
    rows, columns = struct.unpack_from("<qq", data, offset)
    offset += 16
    return np.frombuffer(data, dtype="<f4", count=rows * columns, offset=offset).reshape(rows, columns), \
        offset + 4 * rows * columns


@functools.lru_cache(maxsize=None)
def native_model(path: str) -> NativeModel | None:
    """The model in `path` for `_classify`, once per process; None where it is not built or does not cover the
    model (a quantized one, subword n-grams, a loss other than softmax, a pruned dictionary) or the file is not
    one that it reads: fastText scores it (or refuses it)."""
    if _classify is None:
        return None
    with open(path, "rb") as file:
        data = file.read()
    try:
        return _parsed(data)
    except (struct.error, ValueError, IndexError):
        return None


def _parsed(data: bytes) -> NativeModel | None:
    """The model in `data` (fastText's .bin, version 12) for `_classify`, or None."""
    if len(data) < 92 or struct.unpack_from("<ii", data) != (MAGIC, VERSION):
        return None
    # dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate (t follows).
    dim, _, _, _, _, word_ngrams, loss, kind, bucket, _, maxn, _ = struct.unpack_from("<12i", data, 8)
    size, nwords, _, _, pruneidx_size = struct.unpack_from("<iiiqq", data, 64)
    if (kind, loss, maxn, pruneidx_size) != (SUPERVISED, SOFTMAX, 0, UNPRUNED):
        return None
    entries, offset = [], 92
    for _ in range(size):
        end = data.index(b"\0", offset)
        entries.append(data[offset:end])
        # Its count (int64) and type (int8).
        offset = end + 10
    if data[offset]:
        return None
    inputs, offset = _matrix(data, offset + 1)
    if data[offset]:
        return None
    outputs, _ = _matrix(data, offset + 1)
    if inputs.shape != (nwords + bucket, dim) or outputs.shape != (size - nwords, dim):
        return None
    words = b"".join(entries)
    ends = np.cumsum([len(entry) for entry in entries], dtype=np.int64)
    return NativeModel(words, ends, _classify.word_table(words, ends.tobytes()),
                       tuple(entry.decode("utf-8") for entry in entries[nwords:]), nwords, bucket, word_ngrams,
                       inputs, outputs, dim)


@dataclass(frozen=True)
class FastTextModel:
    """A model as fastText scores it (`loaded_model`)."""

    model: object

    @property
    def labels(self) -> tuple[str, ...]:
        # fastText's predict with k=-1 gives every label, whatever the text.
        return tuple(self.model.predict("", k=-1)[0])

    def predict(self, line: str):
        return self.model.predict(line, k=-1)


def predictor(path: str) -> NativeModel | FastTextModel:
    """What scores with the model in `path`, loaded once per process: `_classify`'s, where it covers the model,
    or fastText's own (either's `predict(line)` gives the labels and their probabilities, the same; `labels`,
    every label)."""
    return native_model(path) or FastTextModel(loaded_model(path))


def load_predictors(models: tuple[QualityModel, ...]) -> None:
    """Loads every model's predictor in this process (each once: `predictor` keeps it)."""
    for model in models:
        predictor(model.path)


def check_model(model: QualityModel, memory_mib: int) -> None:
    """Refuses, in one line (`ModelError`), a file that is not a fastText supervised model, one whose loaded size
    (about its file's) exceeds `memory_mib` (`--page-memory`, a page's budget) or a label the model lacks."""
    size = os.path.getsize(model.path)
    if size > memory_mib << 20:
        raise ModelError(f"--quality-model {model.path}: {size / (1 << 20):,.1f} MiB, more than --page-memory "
                         f"{memory_mib} MiB allows a page; quantize it (fasttext's quantize, .ftz) or raise "
                         "--page-memory")
    try:
        labels = predictor(model.path).labels
    except (ValueError, RuntimeError, MemoryError) as error:
        raise ModelError(f"--quality-model {model.path} is not a fastText supervised model: "
                         f"{str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
    if model.label not in labels:
        raise ModelError(f"--quality-model {model.path} has no label {model.label} (its labels: "
                         f"{', '.join(sorted(labels))}); name one with --quality-model-label {model.name}=LABEL")


def score(model: QualityModel, text: str) -> float:
    """The probability `model` gives its label for `text` (prepared by `scoring_line`)."""
    return score_line(model, scoring_line(text))


def score_line(model: QualityModel, line: str) -> float:
    """The probability `model` gives its label for a text `scoring_line` prepared."""
    labels, probabilities = predictor(model.path).predict(line)
    return float(probabilities[labels.index(model.label)])


def score_document(doc: Document, models: tuple[QualityModel, ...],
                   annotate: bool = False) -> tuple[Document | Skip, Counter]:
    """`doc` scored by every model on its readable text (`clean_text`): with `annotate`, the scores are its
    signals and nothing is dropped; otherwise the first model whose threshold the score is below makes it a
    `filtered` skip naming the model, label, score and threshold (counted as `documents:model/NAME`)."""
    if not doc.clean_text.strip():
        # A page without text is HashDedup's `no-text` skip: nothing to score.
        return doc, Counter()
    line = scoring_line(doc.clean_text)
    scores = {model.signal: score_line(model, line) for model in models}
    if annotate:
        return doc.replace(signals=dict(doc.signals, **scores)), Counter()
    for model in models:
        value = scores[model.signal]
        if model.threshold is not None and value < model.threshold:
            detail = f"{model.signal}: {model.label} {value:.4g} (threshold {model.threshold:g})"
            return filtered(doc, model.signal, detail)
    return doc, Counter()
