"""The content index every build writes, and `--extend CORPUS`: a new build leaves out what an earlier corpus
holds, reading only that corpus's index."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline

from pipeline import verify
from pipeline.sample import Capture, warc_bytes
from tests.helpers import corpus_records, input_dir, page
from tests.test_cli import json_lines, run_main
from transforms.state import corpus_index, corpus_index_transform
from transforms.state.corpus_index import (CONTENT_BYTES, HEADER, INDEX_NAME, index_shard_of, parse_entry,
                                           read_index_entries)
from transforms.state.corpus_index_transform import WriteIndex
from pipeline.signing import sign, signing_key
from transforms.report.manifest import MANIFEST_NAME, seal

WORDS = [f"{syllable}{n}" for n in range(40) for syllable in ("ka", "lo", "mi", "ne", "su", "ta")]


def article(seed: int, words: int = 200) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def capture(name: str, text: str, date: str) -> Capture:
    return Capture(f"https://{name}.example.org/page", page(f"<p>{text}</p>").encode("utf-8"), date=date)


# A monthly crawl and the next one: B repeats one page of A (under another URL, captured even earlier, so that
# only the rule "an earlier corpus's content survives" keeps it out), holds a page twice, and a page of its own.
SHARED_TEXT = article(1)
A_PAGES = [capture("a-one", SHARED_TEXT, "2026-01-10T00:00:00Z"), capture("a-two", article(2), "2026-01-10T00:01:00Z")]
REPEAT = capture("b-repeat", SHARED_TEXT, "2026-01-01T00:00:00Z")
B_OWN = capture("b-own", article(3), "2026-02-10T00:00:00Z")
B_OWN_AGAIN = Capture("https://b-mirror.example.org/page", B_OWN.body, date="2026-02-11T00:00:00Z")
B_PAGES = [REPEAT, B_OWN, B_OWN_AGAIN]


def build(output: Path, *arguments: str) -> tuple[int, str, str]:
    return run_main(["--output", str(output), "--quiet", *arguments])


def write_inputs(write_warc, name: str, captures: list[Capture]) -> Path:
    return write_warc(captures, name=f"{name}.warc.gz")


def index_hashes(output: Path, signature_values: int = 0) -> list[str]:
    return [parse_entry(entry, signature_values).content_hash for path in sorted(output.glob("index-*.bin"))
            for entry in read_index_entries(str(path), signature_values)]


def content_hashes(output: Path) -> set[str]:
    return {record["content_hash"] for record in corpus_records(output)}


def reseal(output: Path, change, signed: bool = True) -> None:
    """The manifest of `output`, changed by `change` and sealed again: signed with this user's key (as their own
    build damaged), or not (`signed`: as anyone can seal one)."""
    manifest = json.loads((output / MANIFEST_NAME).read_text())
    manifest.pop("manifest_hmac", None)
    change(manifest)
    sealed = seal(manifest)
    (output / MANIFEST_NAME).write_text(json.dumps(sign(sealed, signing_key()) if signed else sealed))


@pytest.fixture(scope="module")
def earlier(tmp_path_factory) -> Path:
    """The corpus of A_PAGES, built once for the module."""
    directory = tmp_path_factory.mktemp("earlier")
    (directory / "in").mkdir()
    (directory / "in" / "a.warc.gz").write_bytes(warc_bytes(A_PAGES, filename="a.warc.gz"))
    code, _, stderr = build(directory / "corpus", "--input", str(directory / "in" / "a.warc.gz"))
    assert code == 0, stderr
    return directory / "corpus"


def test_every_build_writes_an_index_of_its_contents_in_the_manifest_and_verified(earlier, capsys):
    hashes = index_hashes(earlier)
    assert hashes == sorted(content_hashes(earlier)) and len(hashes) == len(A_PAGES)
    manifest = json.loads((earlier / MANIFEST_NAME).read_text())
    (entry,) = [entry for entry in manifest["outputs"] if INDEX_NAME.match(entry["path"])]
    data = (earlier / entry["path"]).read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert len(data) == HEADER.size + CONTENT_BYTES * len(A_PAGES)
    assert verify.main([str(earlier)]) == 0


def tampered_copy(source: Path, target: Path, change) -> Path:
    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(path.read_bytes())
    index = next(target.glob("index-*.bin"))
    index.write_bytes(change(index.read_bytes()))
    return target


def test_verify_names_an_index_that_does_not_hold_the_corpus_contents(earlier, tmp_path, capsys):
    # One hash changed (its entry stays in order), the manifest sealed again over it: only the comparison of the
    # index with the records catches it.
    def change(data: bytes) -> bytes:
        return data[:HEADER.size + 31] + bytes([data[HEADER.size + 31] ^ 1]) + data[HEADER.size + 32:]

    copy = tampered_copy(earlier, tmp_path / "copy", change)
    index = next(copy.glob("index-*.bin"))

    def list_the_changed_index(manifest: dict) -> None:
        (entry,) = [entry for entry in manifest["outputs"] if entry["path"] == index.name]
        entry["sha256"] = hashlib.sha256(index.read_bytes()).hexdigest()

    reseal(copy, list_the_changed_index)
    assert verify.main([str(copy)]) == 1
    out = capsys.readouterr().out
    assert "index-00000-of-00001.bin: entries: 2 entries, the corpus has 2 records in this shard of hashes: " \
           "their hashes differ" in out
    # A cut index, under its manifest as it was: its checksum, and its last entry.
    cut = tampered_copy(earlier, tmp_path / "cut", lambda data: data[:-1])
    assert verify.main([str(cut)]) == 1
    out = capsys.readouterr().out
    assert "index-00000-of-00001.bin: file: size" in out and "ends inside an entry" in out


def test_index_shards_are_ranges_of_hashes_sorted_and_the_same_in_any_order(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_index, "ENTRIES_PER_SHARD", 3)
    entries = [hashlib.sha256(str(n).encode()).digest() + bytes(CONTENT_BYTES - 32) for n in range(10)]
    written = {}
    for run, order in enumerate((entries, list(reversed(entries)))):
        output = tmp_path / str(run)
        output.mkdir()
        with TestPipeline() as pipeline:
            _ = pipeline | beam.Create(order, reshuffle=True) | WriteIndex(str(output), 0)
        written[run] = {path.name: path.read_bytes() for path in sorted(output.iterdir())}
    assert written[0] == written[1]
    assert list(written[0]) == [f"index-0000{n}-of-00004.bin" for n in range(4)]
    in_order = [entry for name in written[0] for entry in read_index_entries(str(tmp_path / "0" / name), 0)]
    assert in_order == sorted(entries)
    for name in written[0]:
        shard = int(name[6:11])
        assert all(index_shard_of(entry, 4) == shard for entry in read_index_entries(str(tmp_path / "0" / name), 0))


def test_extend_drops_what_the_earlier_corpus_holds_and_says_where_it_is(earlier, write_warc, tmp_path, capsys):
    before = {path.name: path.read_bytes() for path in earlier.iterdir()}
    source = write_inputs(write_warc, "b", B_PAGES)
    output = tmp_path / "b"
    code, stdout, stderr = build(output, "--input", str(source), "--extend", str(earlier))
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(output)] == [B_OWN.url]
    duplicates = {line["url"]: line for line in json_lines(output, "duplicates")}
    assert set(duplicates) == {REPEAT.url, B_OWN_AGAIN.url}
    (shared_hash,) = [record["content_hash"] for record in corpus_records(earlier) if record["url"] == A_PAGES[0].url]
    repeat = duplicates[REPEAT.url]
    assert (repeat["survivor_corpus"], repeat["content_hash"], repeat["survivor_source_offset"]) == (
        str(earlier), shared_hash, -1)
    assert duplicates[B_OWN_AGAIN.url]["survivor_url"] == B_OWN.url and "survivor_corpus" not in \
        duplicates[B_OWN_AGAIN.url]
    report = json.loads((output / "report.json").read_text())
    assert (report["records"]["duplicates"], report["in_earlier_corpora"]) == (2, {"duplicates": 1})
    assert "duplicates in an earlier corpus                1" in stdout
    # Per earlier corpus: in report.json, and one line on the terminal.
    assert report["earlier_corpora"] == [{"corpus": str(earlier), "duplicates": 1}]
    assert f"  {earlier} left out 1 pages that it holds (1 duplicates)" in stdout.splitlines()
    manifest = json.loads((output / MANIFEST_NAME).read_text())
    earlier_manifest = json.loads((earlier / MANIFEST_NAME).read_text())
    assert manifest["options"]["extend"] == [{"corpus": str(earlier),
                                              "manifest_sha256": earlier_manifest["manifest_sha256"]}]
    # The new index holds the new corpus's contents only; the earlier corpus is as it was.
    assert index_hashes(output) == sorted(content_hashes(output))
    assert {path.name: path.read_bytes() for path in earlier.iterdir()} == before
    assert verify.main([str(output)]) == 0


def refusal(write_warc, tmp_path, corpus: Path, *arguments: str) -> str:
    source = write_inputs(write_warc, "b", B_PAGES)
    output = tmp_path / "refused"
    code, stdout, stderr = build(output, "--input", str(source), "--extend", str(corpus), *arguments)
    assert (code, stdout, len(stderr.splitlines())) == (2, "", 1), stderr
    assert not output.exists()
    return stderr


def test_extend_refuses_a_corpus_without_an_index(earlier, write_warc, tmp_path):
    copy = tampered_copy(earlier, tmp_path / "old", lambda data: data)
    next(copy.glob("index-*.bin")).unlink()
    reseal(copy, lambda manifest: manifest.update(outputs=[entry for entry in manifest["outputs"]
                                                           if not INDEX_NAME.match(entry["path"])]))
    assert "its manifest lists no index (index-*.bin): it was built before builds wrote one" in \
        refusal(write_warc, tmp_path, copy)
    assert "no manifest.json there" in refusal(write_warc, tmp_path, tmp_path / "nothing")


def test_extend_refuses_an_index_other_than_its_manifest_lists(earlier, write_warc, tmp_path):
    # The same size, one byte changed: the digest tells.
    copy = tampered_copy(earlier, tmp_path / "changed", lambda data: data[:-1] + bytes([data[-1] ^ 1]))
    assert "its index file index-00000-of-00001.bin is not the file its manifest lists (sha256 differs)" in \
        refusal(write_warc, tmp_path, copy)
    damaged = tampered_copy(earlier, tmp_path / "damaged", lambda data: data)
    reseal(damaged, lambda manifest: manifest["options"].update(codec="null"))
    (damaged / MANIFEST_NAME).write_text((damaged / MANIFEST_NAME).read_text().replace('"null"', '"deflate"'))
    assert "manifest.json was changed since its build wrote it" in refusal(write_warc, tmp_path, damaged)


def test_extend_refuses_other_near_dedup_settings_and_its_own_output(earlier, write_warc, tmp_path):
    assert f"--extend {earlier} was built without --near-dedup, this build is with --near-dedup bands 20" in \
        refusal(write_warc, tmp_path, earlier, "--near-dedup")
    source = write_inputs(write_warc, "b", B_PAGES)
    code, _, stderr = build(earlier, "--input", str(source), "--extend", str(earlier))
    assert code == 2 and "is --output: a build replaces the corpus in its output directory" in stderr


@pytest.mark.slow
def test_an_earlier_and_an_extending_corpus_hold_the_contents_of_one_build_of_both(earlier, write_warc, tmp_path):
    first = input_dir(tmp_path) / "a.warc.gz"
    first.write_bytes(warc_bytes(A_PAGES, filename="a.warc.gz"))
    second = write_inputs(write_warc, "b", B_PAGES)
    assert build(tmp_path / "b", "--input", str(second), "--extend", str(earlier))[0] == 0
    assert build(tmp_path / "both", "--input", str(first), "--input", str(second))[0] == 0
    extended = content_hashes(earlier) | content_hashes(tmp_path / "b")
    assert not content_hashes(earlier) & content_hashes(tmp_path / "b")
    assert extended == content_hashes(tmp_path / "both")
    # A third crawl extends both: what either holds is left out, and nothing is new.
    third = write_inputs(write_warc, "c", [capture("c-again", article(2), "2026-03-01T00:00:00Z"),
                                          Capture("https://c.example.org/", B_OWN.body, date="2026-03-01T00:00:00Z")])
    code, _, stderr = build(tmp_path / "c", "--input", str(third), "--extend", str(earlier),
                            "--extend", str(tmp_path / "b"))
    assert code == 0, stderr
    assert corpus_records(tmp_path / "c") == []
    assert sorted(line["survivor_corpus"] for line in json_lines(tmp_path / "c", "duplicates")) == sorted(
        [str(earlier), str(tmp_path / "b")])
    # An extension rebuilds from its manifest, against the same earlier corpora, byte for byte.
    code, stdout, stderr = run_main(["--rebuild", str(tmp_path / "c" / MANIFEST_NAME), "--output",
                                     str(tmp_path / "c-again"), "--quiet"])
    assert code == 0 and "byte-identical" in stdout, stderr


NEAR_A = [capture(f"a{n}", article(10 + n, 300), f"2026-01-{10 + n:02d}T00:00:00Z") for n in range(3)]


def edited(text: str) -> str:
    words = text.split()
    words[150] = "edited"
    return " ".join(words)


# B: a near-duplicate of A's first page (one word changed), an exact copy of its second, a page of its own and a
# near-duplicate of that one: all captured after A's pages, as a later crawl is.
NEAR_B = [capture("b0", edited(article(10, 300)), "2026-02-01T00:00:00Z"),
          Capture("https://b1.example.org/", NEAR_A[1].body, date="2026-02-02T00:00:00Z"),
          capture("b2", article(20, 300), "2026-02-03T00:00:00Z"),
          capture("b3", edited(article(20, 300)), "2026-02-04T00:00:00Z")]


@pytest.mark.slow
def test_with_near_dedup_the_extension_leaves_out_near_duplicates_of_the_earlier_corpus(write_warc, tmp_path):
    first = input_dir(tmp_path) / "a.warc.gz"
    first.write_bytes(warc_bytes(NEAR_A, filename="a.warc.gz"))
    second = write_inputs(write_warc, "b", NEAR_B)
    for output, arguments in (("a", ["--input", str(first)]),
                              ("b", ["--input", str(second), "--extend", str(tmp_path / "a")]),
                              ("both", ["--input", str(first), "--input", str(second)])):
        code, _, stderr = build(tmp_path / output, "--near-dedup", *arguments)
        assert code == 0, stderr
    assert [record["url"] for record in corpus_records(tmp_path / "b")] == [NEAR_B[2].url]
    near = {line["url"]: line for line in json_lines(tmp_path / "b", "near-duplicates")}
    assert set(near) == {NEAR_B[0].url, NEAR_B[3].url}
    (first_hash,) = [r["content_hash"] for r in corpus_records(tmp_path / "a") if r["url"] == NEAR_A[0].url]
    assert (near[NEAR_B[0].url]["survivor_corpus"], near[NEAR_B[0].url]["survivor_content_hash"]) == (
        str(tmp_path / "a"), first_hash)
    assert near[NEAR_B[3].url]["survivor_url"] == NEAR_B[2].url
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert report["in_earlier_corpora"] == {"duplicates": 1, "near_duplicates": 1}
    assert report["earlier_corpora"] == [{"corpus": str(tmp_path / "a"), "duplicates": 1, "near_duplicates": 1}]
    assert content_hashes(tmp_path / "a") | content_hashes(tmp_path / "b") == content_hashes(tmp_path / "both")
    # The index holds the signatures, and verify checks it.
    values = 20 * 5
    assert len(index_hashes(tmp_path / "b", values)) == 1
    assert verify.main([str(tmp_path / "b")]) == 0


@pytest.mark.slow
def test_with_near_dedup_a_build_of_more_band_keys_than_one_read_keeps_the_same_pages(write_warc, tmp_path,
                                                                                      monkeypatch):
    """A build whose band keys are more than one read of the earlier index looks for takes every earlier signature
    into NearDedup's buckets instead of only those that share one: the same corpus, index and lists (NEAR_A's
    pages share no bucket with a new page but the first)."""
    first = input_dir(tmp_path) / "a.warc.gz"
    first.write_bytes(warc_bytes(NEAR_A, filename="a.warc.gz"))
    second = write_inputs(write_warc, "b", NEAR_B)
    assert build(tmp_path / "a", "--near-dedup", "--input", str(first))[0] == 0
    extend = ("--near-dedup", "--input", str(second), "--extend", str(tmp_path / "a"))
    assert build(tmp_path / "by-band-key", *extend)[0] == 0
    monkeypatch.setattr(corpus_index_transform, "BAND_KEYS_PER_READ", 0)
    code, _, stderr = build(tmp_path / "every", *extend)
    assert code == 0, stderr
    by_band_key, every = tmp_path / "by-band-key", tmp_path / "every"
    assert corpus_records(every) == corpus_records(by_band_key) and len(corpus_records(every)) == 1
    for listed in ("duplicates", "near-duplicates"):
        assert json_lines(every, listed) == json_lines(by_band_key, listed)
    assert [path.read_bytes() for path in sorted(every.glob("index-*.bin"))] == [
        path.read_bytes() for path in sorted(by_band_key.glob("index-*.bin"))]


def test_an_export_keeps_the_index_and_can_be_extended(earlier, write_warc, tmp_path, capsys):
    from pipeline import export

    exported = tmp_path / "parquet"
    assert export.main([str(earlier), "--format", "parquet", "--output", str(exported)]) == 0
    assert index_hashes(exported) == index_hashes(earlier)
    assert verify.main([str(exported)]) == 0
    source = write_inputs(write_warc, "b", B_PAGES)
    # An export's manifest is not signed: it is extended only when named trusted.
    assert "add --trust-corpus" in build(tmp_path / "b", "--input", str(source), "--extend", str(exported))[2]
    code, _, stderr = build(tmp_path / "b", "--input", str(source), "--extend", str(exported),
                            "--trust-corpus", str(exported))
    assert code == 0, stderr
    assert [record["url"] for record in corpus_records(tmp_path / "b")] == [B_OWN.url]


def graph(settings) -> tuple[list[str], list[str]]:
    """The labels of the graph a build of `settings` makes (built, not run), and the producers of its side
    inputs."""
    from pipeline.graph import build_corpus
    from tests.helpers import applied_transforms

    pipeline = beam.Pipeline()
    build_corpus(pipeline, settings)
    leaves = applied_transforms(pipeline)[1]
    return ([node.full_label for node in leaves],
            sorted(side.pvalue.producer.full_label for node in leaves for side in node.side_inputs))


def test_an_earlier_index_is_keyed_data_never_a_side_input(earlier, tmp_path):
    """Extending adds no side input of index entries (which Flink and Dask hold whole on every worker) to the
    graph: one number only, how many contents the new build has."""
    from pipeline.settings import CorpusSettings

    plain = CorpusSettings(inputs=("x.warc.gz",), output=str(tmp_path / "out"))
    labels, extended_sides = graph(dataclasses.replace(plain, extend=(str(earlier),)))
    assert any(label.startswith("EarlierMatches/") for label in labels)
    plain_sides = graph(plain)[1]
    assert plain_sides and set(plain_sides) <= set(extended_sides)
    assert {side.rsplit("/", 1)[0] for side in set(extended_sides) - set(plain_sides)} == {
        "EarlierMatches/Count/CombineGlobally(CountCombineFn)"}
