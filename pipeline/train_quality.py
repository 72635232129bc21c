"""Trains a quality classifier for `--quality-model`: a fastText supervised model of positive against negative
examples, on a CPU.

    python -m pipeline.train_quality --positive reference.jsonl --negative crawl-corpus/ --output quality.bin

Each `--positive` and `--negative` (repeatable) is a webcorpus corpus directory (its records' `clean_text`, or
`text` where the build did not write it), a JSON Lines file (each line's `text`) or a plain text file (one
example a line). Every example is prepared as the build scores a page (`quality_model.scoring_line`) and labelled
`__label__positive` or `__label__negative`. A share of them (`--holdout`, chosen by each example's SHA-256, so the
same examples are held out every time) is kept from training, and the model is measured on it: precision and
recall at 0.5, and the area under the ROC curve, printed.

The model is trained by `pipeline.fasttext_model` (fastText's model and SGD, in NumPy) on the examples in the order
of their SHA-256 (positives and negatives mixed), and written in fastText's format: the same examples and options
give the same model file, byte for byte, and the `fasttext` module scores it (docs/upstream.md says why it does not
train it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import Iterable, Iterator

from pipeline.fasttext_model import Options, train
from transforms.corpus.read_corpus import iter_corpus
from transforms.stages.quality_model import DEFAULT_LABEL, QualityModel, score_line, scoring_line

POSITIVE, NEGATIVE = DEFAULT_LABEL, "__label__negative"


class TrainingError(ValueError):
    """Examples or a library that cannot train a model, in one line."""


def read_examples(path: str) -> Iterator[str]:
    """The examples of `path`: a corpus directory's records, a JSON Lines file's `text`s or a text file's lines,
    each as one line (`scoring_line`), empty ones left out."""
    if os.path.isdir(path):
        texts = (record.get("clean_text") or record["text"] for record in iter_corpus(path))
    else:
        texts = _file_texts(path)
    for text in texts:
        line = scoring_line(text).strip()
        if line:
            yield line


def _file_texts(path: str) -> Iterator[str]:
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not path.endswith(".jsonl"):
                yield line
                continue
            try:
                yield json.loads(line)["text"]
            except (ValueError, KeyError, TypeError) as error:
                raise TrainingError(f"{path}:{number}: not a JSON object with a text field "
                                    f"({type(error).__name__})") from None


def split(labelled: Iterable[tuple[str, str]], share: float) -> tuple[list, list]:
    """(training, held out) lists of (label, example), each ordered by the example's SHA-256, which also decides
    whether it is held out (the same on every run)."""
    keyed = sorted((hashlib.sha256(example.encode("utf-8")).digest(), label, example) for label, example in labelled)
    training, held = [], []
    for digest, label, example in keyed:
        (held if int.from_bytes(digest[:8], "big") < share * 2 ** 64 else training).append((label, example))
    return training, held


def roc_auc(scores: list[float], truths: list[bool]) -> float:
    """The area under the ROC curve: the chance that a positive scores above a negative (ties count half)."""
    ranked = sorted(zip(scores, truths))
    rank_sum, position = 0.0, 0
    while position < len(ranked):
        end = position
        while end < len(ranked) and ranked[end][0] == ranked[position][0]:
            end += 1
        # Tied scores share their mean rank (ranks from 1).
        rank_sum += (position + 1 + end) / 2 * sum(truth for _, truth in ranked[position:end])
        position = end
    positives = sum(truths)
    negatives = len(truths) - positives
    if not positives or not negatives:
        return float("nan")
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def measure(model_path: str, examples: list[tuple[str, str]]) -> dict:
    """Precision and recall (at a score of 0.5) and ROC AUC of the model in `model_path` on `examples`, scored as
    the build scores a page (`quality_model.score_line`)."""
    model = QualityModel("trained", model_path, POSITIVE)
    scores = [score_line(model, example) for _, example in examples]
    truths = [label == POSITIVE for label, _ in examples]
    chosen = [score >= 0.5 for score in scores]
    true_positives = sum(truth and choice for truth, choice in zip(truths, chosen))
    return {"examples": len(examples), "precision": true_positives / max(1, sum(chosen)),
            "recall": true_positives / max(1, sum(truths)), "roc_auc": roc_auc(scores, truths)}


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pipeline.train_quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--positive", action="append", required=True, metavar="PATH",
                        help="Examples of the pages to keep (repeatable): a corpus directory, JSON Lines or text.")
    parser.add_argument("--negative", action="append", required=True, metavar="PATH",
                        help="Examples of the pages to drop (repeatable).")
    parser.add_argument("--output", required=True, metavar="MODEL", help="The model file written (.bin).")
    parser.add_argument("--holdout", type=float, default=0.1, help="The share of examples measured, not trained on.")
    parser.add_argument("--dim", type=int, default=Options.dim, help="fastText's vector size.")
    parser.add_argument("--epoch", type=int, default=Options.epoch)
    parser.add_argument("--lr", type=float, default=Options.lr)
    parser.add_argument("--word-ngrams", type=int, default=Options.word_ngrams, help="fastText's wordNgrams (2: bigrams).")
    parser.add_argument("--min-count", type=int, default=Options.min_count)
    parser.add_argument("--bucket", type=int, default=Options.bucket,
                        help="Hash buckets of the n-grams (fastText's default 2,000,000 makes an 800 MB model "
                             "at dim 100).")
    arguments = parser.parse_args(argv)
    if not 0 <= arguments.holdout < 1:
        parser.error(f"--holdout must be at least 0 and below 1, not {arguments.holdout}")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        for path in arguments.positive + arguments.negative:
            if not os.path.exists(path):
                raise TrainingError(f"{path}: no such file or directory")
        labelled = [(POSITIVE, example) for path in arguments.positive for example in read_examples(path)]
        labelled += [(NEGATIVE, example) for path in arguments.negative for example in read_examples(path)]
        training, held = split(labelled, arguments.holdout)
        for label, option in ((POSITIVE, "--positive"), (NEGATIVE, "--negative")):
            if not any(pair[0] == label for pair in training):
                raise TrainingError(f"no {option} example to train on (empty files, or all held out)")
        options = Options(dim=arguments.dim, epoch=arguments.epoch, lr=arguments.lr,
                          word_ngrams=arguments.word_ngrams, min_count=arguments.min_count, bucket=arguments.bucket)
        with open(arguments.output, "wb") as model:
            model.write(train(training, options))
    except (TrainingError, OSError, UnicodeDecodeError) as error:
        print(f"train_quality: error: {error}", file=sys.stderr)
        return 2
    print(f"trained on {len(training):,} examples: {arguments.output}")
    if held:
        measured = measure(arguments.output, held)
        print(f"held out {measured['examples']:,}: precision {measured['precision']:.3f}, "
              f"recall {measured['recall']:.3f}, ROC AUC {measured['roc_auc']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
