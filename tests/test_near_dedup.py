"""NearDedup: MinHash signatures, LSH buckets linked in linear work, clusters the same whatever the order."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tracemalloc
from collections import Counter
from pathlib import Path

import apache_beam as beam
import fastavro
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.options import parse_settings
from pipeline.settings import settings_from_manifest
from pipeline.sample import Capture
from tests.helpers import document, page
from tests.test_cli import corpus_records, json_lines, run_main
from transforms.stages import near_dedup
from transforms.document import Document
from transforms.stages.near_dedup import (CHAIN_ROUNDS, MinHashParameters, Pointer, candidate_of, link_to_minimum, minhash,
                                          permutation_family, resolve, shingles, similarity)
from transforms.stages.near_dedup_transform import NearDedup, SignDocuments
from transforms.vocabulary import NEAR_SURVIVORS, Candidate, NearDuplicate, NearSurvivor, band_keys
from transforms import vocabulary

REPO = Path(__file__).resolve().parents[1]
PARAMETERS = MinHashParameters()
FAMILY = permutation_family(PARAMETERS.permutations)
WORDS = [f"{syllable}{n}" for n in range(40) for syllable in ("ka", "lo", "mi", "ne", "su")]


def article(seed: int, words: int = 300) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def signature(text: str) -> bytes:
    return minhash(shingles(text, PARAMETERS.shingle_size), FAMILY).tobytes()


def jaccard(first: str, second: str) -> float:
    a, b = shingles(first, PARAMETERS.shingle_size), shingles(second, PARAMETERS.shingle_size)
    return len(a & b) / len(a | b)


def test_shingles_are_casefolded_word_ngrams():
    assert shingles("One, two! THREE four", 3) == {"one two three", "two three four"}
    assert shingles("Only two", 5) == {"only two"}
    assert shingles(" \n ... ", 5) == set()


def test_identical_texts_have_similarity_one_and_disjoint_texts_about_zero():
    text = article(1)
    assert similarity(signature(text), signature(text)) == 1.0
    other = " ".join(f"x{index}" for index in range(300))
    assert jaccard(text, other) == 0
    assert similarity(signature(text), signature(other)) < 0.05


@pytest.mark.parametrize("edit", ["one word", "a date", "ten percent"])
def test_the_estimate_follows_the_jaccard_similarity_of_known_edits(edit):
    words = article(2).split()
    if edit == "one word":
        words[150] = "changed"
    elif edit == "a date":
        words[:0] = ["published", "2024", "05", "18"]
    else:
        words[100:130] = ["replaced"] * 30
    edited = " ".join(words)
    # 128-ish hash functions: the estimate's standard error is under 0.05.
    assert abs(similarity(signature(article(2)), signature(edited)) - jaccard(article(2), edited)) < 0.12


@pytest.mark.slow
def test_signatures_do_not_depend_on_the_process():
    code = ("from transforms.stages.near_dedup import *; p = MinHashParameters(); "
            "grams = shingles(open(0).read(), p.shingle_size); "
            "print(minhash(grams, permutation_family(p.permutations)).tobytes().hex())")
    text = article(3)
    outputs = {subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, cwd=REPO,
                              env=dict(os.environ, PYTHONHASHSEED=seed), check=True).stdout.strip()
               for seed in ("1", "2")}
    assert outputs == {signature(text).hex()}


def test_band_keys_tell_bands_apart():
    values = np.array([7, 7, 7, 7], dtype=np.uint32).tobytes()
    keys = band_keys(values, 2, 2)
    assert len(set(keys)) == 2
    changed = np.array([7, 7, 7, 8], dtype=np.uint32).tobytes()
    assert band_keys(changed, 2, 2)[0] == keys[0] and band_keys(changed, 2, 2)[1] != keys[1]


def rank(index: int) -> tuple:
    return ("2026-01-15T10:00:00Z", f"https://example.org/{index:06d}", f"<urn:uuid:{index}>",
            "hot.warc.gz", index, 0)


class CountedMembers:
    """A bucket that makes its members as it is read (as a runner streams a big group) and counts the reads."""

    def __init__(self, size: int, signature: bytes):
        self.size = size
        self.signature = signature
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        # The smallest member comes last, so that the first pass must read them all.
        return (Candidate(rank(self.size - index), self.signature) for index in range(self.size))


@pytest.mark.slow
def test_a_hot_bucket_of_100000_members_costs_linear_work_and_constant_memory(monkeypatch):
    comparisons = Counter()

    def counted_similarity(first, second):
        comparisons["similarity"] += 1
        return 1.0

    monkeypatch.setattr(near_dedup, "similarity", counted_similarity)
    members = CountedMembers(100_000, signature(article(4)))
    tracemalloc.start()
    links = 0
    for pointer in link_to_minimum(members, 0.7):
        assert pointer.target == rank(1)
        links += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert members.passes == 2
    assert comparisons["similarity"] == 99_999
    assert links == 100_000  # every member points to the minimum, and the minimum to itself
    # A list of the members alone would take tens of megabytes.
    assert peak < 1_000_000


@pytest.mark.slow
def test_a_hot_root_resolves_its_100000_members_in_one_pass_and_constant_memory():
    root = Pointer(rank(0), rank(0), signature(article(5)))
    members = (Pointer(rank(index), rank(0), root.signature) for index in range(100_001))
    tracemalloc.start()
    results = 0
    for result in resolve(members, root):
        results += 1
        last = result
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert results == 100_001 and last == NearSurvivor("hot.warc.gz", 0, 0, near_duplicate_count=100_000)
    assert peak < 1_000_000


def doc_of(text: str, index: int, date: str) -> Document:
    return document(url=f"https://site.example.org/{index}", warc_record_id=f"<urn:uuid:{index:04d}>", warc_date=date,
                    source_file="families.warc.gz", source_offset=1000 * index, http_status=200,
                    content_type="text/html", text=text)


def families() -> tuple[list[Document], list[NearDuplicate], list[NearSurvivor]]:
    """Six articles with three near-duplicates each (one word changed), under dates that make the survivors."""
    docs = []
    for family in range(6):
        words = article(100 + family).split()
        for member in range(4):
            edited = list(words)
            if member:
                edited[40 * member] = f"edit{member}"
            docs.append(doc_of(" ".join(edited), len(docs), f"2026-01-{10 + (member + family) % 4:02d}T00:00:00Z"))
    duplicates, survivors = [], []
    for family in range(6):
        members = sorted(docs[4 * family:4 * family + 4], key=lambda doc: doc.capture)
        root = members[0].capture
        for member in members[1:]:
            duplicates.append(NearDuplicate(**vars(member.capture), survivor_url=root.url,
                                            survivor_record_id=root.warc_record_id,
                                            similarity=similarity(signature(member.text), signature(members[0].text))))
        survivors.append(NearSurvivor(root.source_file, root.source_offset, root.source_range, 3))
    return docs, duplicates, survivors


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.slow
def test_clusters_and_survivors_do_not_depend_on_the_order_of_arrival(seed):
    docs, duplicates, survivors = families()
    docs = docs + [doc_of(article(900 + index), 100 + index, "2026-01-01T00:00:00Z") for index in range(4)]
    random.Random(seed).shuffle(docs)
    with TestPipeline() as pipeline:
        near = (pipeline | beam.Create(docs, reshuffle=True) | SignDocuments(PARAMETERS) | NearDedup(PARAMETERS))
        assert_that(near.near_duplicates, equal_to(duplicates), label="NearDuplicates")
        assert_that(near[NEAR_SURVIVORS], equal_to(survivors), label="NearSurvivors")


def crafted(index: int, values: tuple[int, ...]) -> Candidate:
    return Candidate(rank(index), np.array(values, dtype=np.uint32).tobytes())


def near_duplicate(member: Candidate, root: Candidate) -> NearDuplicate:
    return NearDuplicate(**vars(vocabulary.Capture.of_rank(member.rank)), survivor_url=root.rank[1],
                         survivor_record_id=root.rank[2],
                         similarity=similarity(member.signature, root.signature))


def assert_near_dedup(candidates: list[Candidate], parameters: MinHashParameters, dropped: list, notes: list):
    with TestPipeline() as pipeline:
        near = pipeline | beam.Create(candidates) | NearDedup(parameters)
        assert_that(near.near_duplicates, equal_to(dropped), label="NearDuplicates")
        assert_that(near[NEAR_SURVIVORS], equal_to(notes), label="NearSurvivors")


@pytest.mark.slow
def test_a_page_linked_through_another_gets_the_root_as_survivor():
    # B is like A (3 of 4 values), C like B but not like A: C shares a bucket with B only.
    a, b, c = crafted(0, (1, 2, 3, 4)), crafted(1, (1, 2, 3, 9)), crafted(2, (7, 2, 3, 9))
    assert [similarity(b.signature, a.signature), similarity(c.signature, a.signature)] == [0.75, 0.5]
    assert_near_dedup([c, a, b], MinHashParameters(shingle_size=5, bands=4, rows=1, threshold=0.75),
                      [near_duplicate(b, a), near_duplicate(c, a)], [NearSurvivor("hot.warc.gz", 0, 0, 2)])


@pytest.mark.slow
def test_a_chain_longer_than_the_rounds_resolve_keeps_its_far_end():
    # Page i shares one band with page i-1 and the other with page i+1: a chain of links.
    resolved = 2 ** CHAIN_ROUNDS
    chain = [crafted(index, (index // 2, (index + 1) // 2 + 10_000)) for index in range(resolved + 8)]
    assert_near_dedup(chain, MinHashParameters(shingle_size=5, bands=2, rows=1, threshold=0.5),
                      [near_duplicate(member, chain[0]) for member in chain[1:resolved + 1]],
                      [NearSurvivor("hot.warc.gz", 0, 0, resolved)])


def test_a_text_without_words_has_no_candidate():
    assert candidate_of(doc_of("  ...  ", 1, "2026-01-01T00:00:00Z"), PARAMETERS, FAMILY) is None


def test_near_dedup_options_are_checked_and_recorded_only_when_on():
    assert "near_dedup" not in parse_settings([]).build_identity()
    on = parse_settings(["--near-dedup", "--near-dedup-threshold", "0.9", "--near-dedup-bands", "10"])
    assert on.build_identity()["near_dedup"] == {"threshold": 0.9, "shingle_size": 5, "bands": 10, "rows": 5}
    again = settings_from_manifest({"options": on.build_identity()}, "out", (), "manifest.json", True)
    assert again.near_dedup == on.near_dedup
    for argv in (["--near-dedup-threshold", "0.9"], ["--near-dedup", "--near-dedup-threshold", "1.5"],
                 ["--near-dedup", "--near-dedup-rows", "0"]):
        with pytest.raises(SystemExit):
            parse_settings(argv)


BODY = " ".join(f"<p>{article(seed, 60)}.</p>" for seed in range(200, 205))
ORIGINAL = Capture("https://news.example.org/story", page(f"<p>Published 2026-01-15</p>{BODY}").encode(),
                   date="2026-01-15T10:00:00Z")
REDATED = Capture("https://news.example.org/story?day=2", page(f"<p>Published 2026-01-16</p>{BODY}").encode(),
                  date="2026-01-16T10:00:00Z")
MIRRORED = Capture("https://mirror.example.org/story", REDATED.body, date="2026-01-17T10:00:00Z")
OTHER = Capture("https://news.example.org/other", page(f"<p>{article(300)}</p>").encode(), date="2026-01-15T11:00:00Z")


@pytest.mark.slow
def test_the_pipeline_drops_near_duplicates_and_lists_them_apart(write_warc, tmp_path):
    source = write_warc([ORIGINAL, REDATED, MIRRORED, OTHER])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--near-dedup", "--quiet"])
    assert code == 0, stderr
    by_url = {record["url"]: record for record in corpus_records(output)}
    assert set(by_url) == {ORIGINAL.url, OTHER.url}
    assert by_url[ORIGINAL.url]["near_duplicate_count"] == 1 and by_url[ORIGINAL.url]["duplicate_count"] == 0
    assert by_url[OTHER.url]["near_duplicate_count"] == 0
    (near,) = json_lines(output, "near-duplicates")
    assert (near["url"], near["survivor_url"]) == (REDATED.url, ORIGINAL.url)
    assert 0.7 <= near["similarity"] <= 1
    # The exact duplicate of the near-duplicate is listed against it, as HashDedup found it.
    assert [(d["url"], d["survivor_url"]) for d in json_lines(output, "duplicates")] == [(MIRRORED.url, REDATED.url)]
    report = json.loads((output / "report.json").read_text())
    records = report["records"]
    assert (records["kept"], records["duplicates"], records["near_duplicates"], records["balanced"]) == (2, 1, 1, True)
    assert report["files"][str(source)]["near_duplicates"] == 1
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["options"]["near_dedup"] == {"threshold": 0.7, "shingle_size": 5, "bands": 20, "rows": 5}


@pytest.mark.slow
def test_without_near_dedup_the_corpus_has_no_trace_of_it(write_warc, tmp_path):
    source = write_warc([ORIGINAL, REDATED, OTHER])
    output = tmp_path / "out"
    code, _, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet"])
    assert code == 0, stderr
    assert len(corpus_records(output)) == 3
    with next(output.glob("corpus-*.avro")).open("rb") as handle:
        fields = {field["name"] for field in fastavro.reader(handle).writer_schema["fields"]}
    assert "near_duplicate_count" not in fields
    assert not list(output.glob("near-duplicates-*"))
    report = json.loads((output / "report.json").read_text())
    assert "near_duplicates" not in report["records"] and "near_dedup" not in report["options"]
