"""Judged by a model: `--quality-model` (transforms/stages/quality_model.py) and `python -m pipeline.train_quality`
(pipeline/fasttext_model.py writes fastText's format; the `fasttext` module loads and scores it)."""

from __future__ import annotations

import contextlib
import io
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import train_quality
from pipeline.fasttext_model import word_hash
from pipeline.sample import Capture
from tests.helpers import document, page
from tests.test_cli import corpus_records, json_lines, run_main, run_module
from transforms.document import Skip
from transforms.stages.quality_model import (QualityModel, check_model, loaded_model, quality_models, score,
                                             score_document, scoring_line)

GOOD = "the study of science explains how energy and matter interact in research theory history".split()
BAD = "click here login subscribe cookie privacy menu share home contact copyright".split()
TINY = dict(dim=10, bucket=1000, epoch=5, lr=0.5)


def lines_of(words: list[str], count: int, seed: int) -> list[str]:
    chosen = random.Random(seed)
    return [" ".join(chosen.choice(words) for _ in range(10)) for _ in range(count)]


@pytest.fixture(scope="session")
def example_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("examples")
    (folder / "positive.txt").write_text("\n".join(lines_of(GOOD, 200, 1)) + "\n")
    (folder / "negative.jsonl").write_text("".join(json.dumps({"text": text}) + "\n"
                                                   for text in lines_of(BAD, 200, 2)))
    return folder


def run_train(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = train_quality.main(list(argv))
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def train_args(folder, output) -> list[str]:
    return ["--positive", str(folder / "positive.txt"), "--negative", str(folder / "negative.jsonl"),
            "--output", str(output), *(item for name, value in TINY.items()
                                       for item in (f"--{name.replace('_', '-')}", str(value)))]


@pytest.fixture(scope="session")
def tiny_model(example_files, tmp_path_factory):
    """A classifier of GOOD against BAD words, trained by train_quality in well under a second."""
    output = tmp_path_factory.mktemp("model") / "tiny.bin"
    code, printed, stderr = run_train(*train_args(example_files, output))
    assert code == 0, stderr
    assert "ROC AUC 1.000" in printed
    return output


def test_training_gives_the_same_file_byte_for_byte(example_files, tiny_model, tmp_path):
    again = tmp_path / "again.bin"
    assert run_train(*train_args(example_files, again))[0] == 0
    assert again.read_bytes() == tiny_model.read_bytes()


def test_the_fasttext_module_loads_the_model_and_scores_as_a_direct_predict(tiny_model):
    import fasttext

    model = QualityModel("tiny", str(tiny_model), threshold=0.5)
    check_model(model, memory_mib=64)
    text = " ".join(GOOD[:6]) + "\n" + " ".join(GOOD[6:])
    labels, probabilities = fasttext.load_model(str(tiny_model)).predict(scoring_line(text), k=-1)
    direct = dict(zip(labels, map(float, probabilities)))
    assert score(model, text) == direct["__label__positive"] > 0.9
    assert score(model, " ".join(BAD)) < 0.1


def test_a_page_is_scored_on_its_readable_text_as_one_line():
    assert scoring_line("one\ntwo\r\nthree") == "one two three"
    # fastText's hash: FNV-1a of the bytes, a byte above 0x7f taken as a signed char (fastText's own values).
    assert word_hash("</s>") == 3617362777 and word_hash("é") != word_hash("e")


def test_the_trainer_trains_the_bigram_rows_fasttext_reads(tmp_path):
    import fasttext
    import numpy as np

    from pipeline.fasttext_model import Dictionary, Options, model_bytes, tokens

    # Words whose hashes are 2**31 or more (fastText sign-extends them when it mixes a bigram's hash) and less.
    words = ["w0", "w1", "v0", "v2", "x3"]
    assert {word_hash(word) >> 31 for word in words} == {0, 1}
    dictionary = Dictionary([("__label__a", tokens("known")), ("__label__b", tokens("known"))], 1)
    options = Options(dim=2, bucket=1009)
    for first, second in zip(words, words[1:]):
        # Only the rows the trainer gives the bigrams say "a" (by 1): fastText must read them, and only them.
        ids = dictionary.input_ids(tokens(f"{first} {second}"), 2, options.bucket)
        bigrams = ids[ids >= len(dictionary.words)]
        inputs = np.zeros((len(dictionary.words) + options.bucket, 2), np.float32)
        inputs[bigrams] = [1, 0]
        path = tmp_path / "bigram.bin"
        path.write_bytes(model_bytes(dictionary, options, inputs, np.array([[1, 0], [0, 0]], np.float32)))
        labels, probabilities = fasttext.load_model(str(path)).predict(f"{first} {second}", k=-1)
        hidden = len(bigrams) / len(ids)
        assert dict(zip(labels, probabilities))["__label__a"] == pytest.approx(
            1 / (1 + np.exp(-hidden)) + 1e-5, abs=1e-6), (first, second)


# Words of the models below, fastText's separators, a label of theirs and a word that reads as one, other letters.
CLASSIFIED = ["alpha", "beta", "gamma", "été", "x", " ", "\t", "\r", "\v", "\f", "\0", "__label__a", "__label__zz",
              "</s>", "é", "ß", "\u3000"]


@pytest.fixture(scope="module")
def random_models(tmp_path_factory):
    """Models with random weights that `_classify` covers: dims fastText sums in a loop and in registers, uni-,
    bi- and trigrams, three labels, and a dictionary without `</s>` (a line can have no row)."""
    import numpy as np

    from pipeline.fasttext_model import Dictionary, Options, model_bytes, tokens

    folder, generator, paths = tmp_path_factory.mktemp("random-models"), np.random.default_rng(46), []
    for dim, word_ngrams, bucket, with_end in ((100, 2, 1009, True), (16, 3, 97, True), (10, 1, 0, False)):
        examples = [(label, tokens(" ".join(CLASSIFIED[:4])) if with_end else CLASSIFIED[:4])
                    for label in ("__label__a", "__label__b", "__label__c")]
        dictionary = Dictionary(examples, 1)
        inputs = generator.normal(0, 1, (len(dictionary.words) + bucket, dim)).astype(np.float32)
        outputs = generator.normal(0, 1, (3, dim)).astype(np.float32)
        paths.append(folder / f"random{dim}.bin")
        paths[-1].write_bytes(model_bytes(dictionary, Options(dim=dim, word_ngrams=word_ngrams, bucket=bucket),
                                          inputs, outputs))
    return [str(path) for path in paths]


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.sampled_from(CLASSIFIED) | st.text(max_size=3), max_size=30))
def test_the_c_classifier_gives_fasttexts_probabilities(random_models, words):
    from transforms.stages.quality_model import loaded_model, native_model

    line = scoring_line(" ".join(words))
    for path in random_models:
        if native_model(path) is None:
            pytest.skip("transforms.native._classify is not built")
        ours, theirs = native_model(path).predict(line), loaded_model(path).predict(line, k=-1)
        assert dict(zip(*ours)) == dict(zip(theirs[0], map(float, theirs[1])))


def test_a_model_the_c_classifier_does_not_cover_is_scored_by_fasttext(tiny_model, tmp_path):
    from transforms.stages.quality_model import native_model, predictor

    data = bytearray(tiny_model.read_bytes())
    # The loss (its 7th argument) one-vs-all instead of softmax.
    data[8 + 6 * 4] = 4
    other = tmp_path / "ova.bin"
    other.write_bytes(bytes(data))
    assert native_model(str(other)) is None and predictor(str(other)).predict(" ".join(GOOD))[0]
    assert score(QualityModel("ova", str(other)), " ".join(GOOD)) > 0


def test_below_its_threshold_a_page_is_filtered_and_annotated_it_is_a_signal(tiny_model):
    model = QualityModel("tiny", str(tiny_model), threshold=0.5)
    bad, good = (document(f"https://example.org/{name}", "<urn:uuid:1>", "2024-01-01T00:00:00Z", "a.warc.gz", 10,
                          raw_bytes=100, clean_text=" ".join(words))
                 for name, words in (("bad", BAD), ("good", GOOD)))
    skip, counts = score_document(bad, (model,))
    assert isinstance(skip, Skip) and skip.detail.startswith("model/tiny: __label__positive 0.0")
    assert "(threshold 0.5)" in skip.detail and counts == {"documents:model/tiny": 1, "raw_bytes:model/tiny": 100}
    assert score_document(good, (model,))[0] is good
    annotated, counts = score_document(bad, (model,), annotate=True)
    assert annotated.signals["model/tiny"] < 0.1 and not counts


def test_models_labels_and_thresholds_are_named_by_the_file(tmp_path):
    (model,) = quality_models(("/models/dclm.bin",), ("dclm=hq",), ("dclm=0.018",))
    assert (model.name, model.label, model.threshold, model.signal) == ("dclm", "__label__hq", 0.018, "model/dclm")
    with pytest.raises(ValueError, match="NAME a --quality-model's name"):
        quality_models(("/models/dclm.bin",), (), ("edu=3",))
    with pytest.raises(ValueError, match="two models are named dclm"):
        quality_models(("/a/dclm.bin", "/b/dclm.ftz"))


def test_an_empty_training_set_is_refused_in_one_line(tmp_path, example_files):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    code, _, stderr = run_train("--positive", str(empty), "--negative", str(example_files / "negative.jsonl"),
                                "--output", str(tmp_path / "never.bin"))
    assert code == 2 and stderr.strip() == ("train_quality: error: no --positive example to train on (empty files, "
                                            "or all held out)")
    assert not (tmp_path / "never.bin").exists()


@pytest.mark.slow
def test_a_build_scores_drops_counts_records_and_refuses_models(write_warc, tiny_model, tmp_path):
    source = write_warc([Capture("https://example.org/good", page(f"<p>{' '.join(GOOD)}</p>").encode()),
                         Capture("https://example.org/bad", page(f"<p>{' '.join(BAD)}</p>").encode())])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet",
                                "--quality-model", str(tiny_model), "--quality-model-threshold", "tiny=0.5"])
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == ["https://example.org/good"]
    (skip,) = [line for line in json_lines(output, "skipped") if line["kind"] == "filtered"]
    assert skip["url"] == "https://example.org/bad" and skip["detail"].startswith("model/tiny: __label__positive")
    report = json.loads((output / "report.json").read_text())
    assert report["filters"]["documents_dropped"] == {"model/tiny": 1} and report["records"]["balanced"]
    (recorded,) = report["options"]["quality_models"]
    assert recorded["path"] == str(tiny_model) and len(recorded["sha256"]) == 64 and recorded["threshold"] == 0.5
    # A rebuild refuses a model whose bytes changed.
    changed = tmp_path / "tiny.bin"
    changed.write_bytes(tiny_model.read_bytes())
    code, _, stderr = run_main(["--input", str(source), "--output", str(tmp_path / "with-copy"), "--quiet",
                                "--quality-model", str(changed), "--quality-model-threshold", "tiny=0.5"])
    assert code == 0, stderr
    changed.write_bytes(tiny_model.read_bytes() + b"\0")
    code, _, stderr = run_main(["--rebuild", str(tmp_path / "with-copy" / "manifest.json"), "--output",
                                str(tmp_path / "never")])
    assert code == 2 and f"its --quality-model {changed} is missing or changed" in stderr, stderr
    # Refused in one line, before any input is read.
    not_a_model = tmp_path / "model.bin"
    not_a_model.write_bytes(b"not a model at all")
    for argv, says in [(["--quality-model", str(not_a_model)], "is not a fastText supervised model"),
                       (["--quality-model", str(tiny_model), "--quality-model-label", "tiny=hq"], "has no label"),
                       ]:
        code, _, stderr = run_main(["--input", str(source), "--output", str(tmp_path / "never"), "--quiet", *argv])
        assert code == 2 and says in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert not (tmp_path / "never").exists()


def test_a_model_larger_than_a_pages_memory_is_refused(tiny_model):
    with pytest.raises(ValueError, match="more than --page-memory 0 MiB"):
        check_model(QualityModel("tiny", str(tiny_model)), memory_mib=0)


@pytest.mark.slow
def test_the_build_refuses_a_model_larger_than_a_pages_memory_in_one_line(example_files, write_warc, tmp_path):
    # A model of 30,000 buckets of 10 dimensions: 1.1 MiB, more than --page-memory 1 (MiB) allows.
    model = tmp_path / "large.bin"
    code, _, stderr = run_train(*train_args(example_files, model), "--bucket", "30000")
    assert code == 0 and model.stat().st_size > 1 << 20, stderr
    source = write_warc([Capture("https://example.org/good", page(f"<p>{' '.join(GOOD)}</p>").encode())])
    output = tmp_path / "never"
    child = run_module("--input", str(source), "--output", str(output), "--quality-model", str(model),
                       "--page-memory", "1")
    assert child.returncode == 2 and len(child.stderr.strip().splitlines()) == 1, child.stderr
    # Its size is not rounded down to the budget it exceeds.
    assert f"--quality-model {model}: 1.1 MiB, more than --page-memory 1 MiB allows" in child.stderr
    assert not output.exists() and not child.stdout


def test_a_model_loads_once_per_process(tiny_model):
    assert loaded_model(str(tiny_model)) is loaded_model(str(tiny_model))


def test_decontamination_normalises_as_datatrove_and_counts_ngrams_per_benchmark(tmp_path):
    from transforms.stages.decontaminate import Benchmark, decontaminate_document, normalized_words

    # Lower case, punctuation and diacritics removed, digits one 0 (datatrove's simplify_text).
    assert normalized_words("Hello,  World! Café 1234 naïve—test “quoted”") == [
        b"hello", b"world", b"cafe", b"0", b"naivetest", b"quoted"]
    items = tmp_path / "quiz.jsonl"
    items.write_text(json.dumps({"question": "What is the capital of France, the country?", "id": 1}) + "\n")
    plain = tmp_path / "lines.txt"
    plain.write_text("a b c d\ne f\n")
    quiz, lines = Benchmark("quiz", str(items), ("question",)), Benchmark("lines", str(plain))
    contaminated = document("https://example.org/a", "<urn:uuid:1>", "2024-01-01T00:00:00Z", "a.warc.gz", 10,
                            raw_bytes=50, clean_text="Quiz: what is THE capital of france the Country")
    skip, counts = decontaminate_document(contaminated, (lines, quiz), n=4)
    # The question's 4-grams: 5 of them at the page's positions.
    assert isinstance(skip, Skip) and skip.detail == "decontamination/quiz: 5 4-grams of its items"
    assert counts == {"documents:decontamination/quiz": 1, "raw_bytes:decontamination/quiz": 50}
    annotated, _ = decontaminate_document(contaminated, (lines, quiz), n=4, annotate=True)
    assert annotated.signals == {"decontamination/quiz": 5.0, "decontamination/lines": 0.0}
    clean = contaminated.replace(clean_text="the capital of Spain")
    assert decontaminate_document(clean, (lines, quiz), n=4)[0] is clean


# Characters each class of `_ngrams`'s table holds, and the ones that take the pure path: spaces (ASCII, Unicode,
# control), punctuation (ASCII, typographic, CJK), digits (ASCII, Arabic-Indic), letters with marks (precomposed,
# combining, a mark with no letter), a Greek question mark (NFD: ";", which stays), Hangul, ligatures, an emoji.
NORMALISED = list("aZ \t\n\x0b\x1c\x85\xa0\u2003\u3000,.-'\x00\x7f’“—、。！１09٣éÉñü\u0301\u0308\u0f73\u0344"
                  "\u037eΣσς İıßﬁ한글\U0001F600")


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(NORMALISED) | st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_the_c_normalisation_gives_the_pure_paths_words(text):
    from transforms.stages import decontaminate

    if decontaminate._ngrams is None:
        pytest.skip("transforms.native._ngrams is not built")
    lowered = text.lower()
    assert decontaminate._ngrams.words(lowered, decontaminate._character_classes(),
                                       decontaminate._lowered_words) == decontaminate._lowered_words(lowered)


def test_the_c_and_pure_paths_find_the_same_matches(tmp_path, monkeypatch):
    from transforms.stages import decontaminate
    from transforms.stages.decontaminate import Benchmark, benchmark_table, matches

    if decontaminate._ngrams is None:
        pytest.skip("transforms.native._ngrams is not built")
    chosen = random.Random(46)
    pages = [" ".join(chosen.choice(NORMALISED[:-1] + GOOD) for _ in range(60)) for _ in range(40)]
    items = tmp_path / "items.txt"
    # Items from the pages (a match), and of the pages' words (mostly none).
    items.write_text("".join(" ".join(page.split()[10:20]) + "\n" for page in pages[::4])
                     + "\n".join(" ".join(chosen.choice(GOOD) for _ in range(12)) for _ in range(50)) + "\n")
    benchmarks = (Benchmark("items", str(items)), Benchmark("good", str(items)))
    found = {}
    for path, module in (("c", decontaminate._ngrams), ("python", None)):
        # Each path builds its own table (its hashes are its own).
        benchmark_table.cache_clear()
        decontaminate._slots.cache_clear()
        monkeypatch.setattr(decontaminate, "_ngrams", module)
        found[path] = [matches(page, benchmarks, 5) for page in pages]
    benchmark_table.cache_clear()
    assert found["c"] == found["python"] and sum(map(bool, found["c"])) >= 5


@pytest.mark.slow
def test_a_build_drops_contaminated_pages_and_refuses_a_benchmark_without_its_field(write_warc, tmp_path):
    source = write_warc([Capture("https://example.org/good", page(f"<p>{' '.join(GOOD)}</p>").encode()),
                         Capture("https://example.org/bad", page(f"<p>{' '.join(BAD)}</p>").encode())])
    items = tmp_path / "quiz.jsonl"
    items.write_text(json.dumps({"text": " ".join(BAD[2:9])}) + "\n")
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet",
                                "--decontaminate", str(items), "--decontaminate-ngram", "5"])
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == ["https://example.org/good"]
    report = json.loads((output / "report.json").read_text())
    assert report["filters"]["documents_dropped"] == {"decontamination/quiz": 1} and report["records"]["balanced"]
    assert len(report["options"]["decontaminate"]["benchmarks"][0]["sha256"]) == 64
    code, _, stderr = run_main(["--input", str(source), "--output", str(tmp_path / "never"), "--quiet",
                                "--decontaminate", str(items), "--decontaminate-fields", "question"])
    assert code == 2 and "line 1: no field 'question'" in stderr and len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "never").exists()


@pytest.mark.slow
def test_an_annotated_build_writes_the_scores_and_matches_as_signals(write_warc, tiny_model, tmp_path):
    source = write_warc([Capture("https://example.org/bad", page(f"<p>{' '.join(BAD)}</p>").encode())])
    items = tmp_path / "quiz.txt"
    items.write_text(" ".join(BAD[2:9]) + "\n")
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--quality", "gopher",
                                "--annotate", "--quality-model", str(tiny_model), "--quality-model-threshold",
                                "tiny=0.5", "--decontaminate", str(items), "--decontaminate-ngram", "5"])
    assert code == 0, stderr
    (record,) = corpus_records(output)
    assert record["signals"]["model/tiny"] < 0.1 and record["signals"]["decontamination/quiz"] == 3.0
