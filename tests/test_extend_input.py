"""An earlier corpus is input (`--extend`): it decides which new pages a build drops, so it is taken only as
sealed by this user's key or named trusted, its index read as the files its manifest lists and checked before
the build starts, and only if its content hashes are of text shaped as this build's."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.resumable import RESUME_PREFIX
from tests.helpers import corpus_records
from tests.test_cli import run_main
from tests.test_extend import (B_OWN, B_PAGES, article, build, capture, earlier, refusal, reseal,  # noqa: F401
                               tampered_copy, write_inputs)
from tests.test_hostile_http import hostile_server, server  # noqa: F401 - fixtures
from transforms.state import corpus_index_transform
from transforms.state.corpus_index import (CONTENT_BYTES, HEADER, IndexDamaged, index_header, read_index_entries,
                                           signature_part)
from transforms.state.corpus_index_transform import EarlierSignatures, earlier_bucket_mates, earlier_matches
from transforms.stages.near_dedup import MinHashParameters
from transforms.vocabulary import Candidate, band_keys

INDEX = "index-00000-of-00001.bin"


def list_index_as_it_is(copy: Path):
    """A `reseal` change: the manifest lists the copy's index file as it is now."""
    data = (copy / INDEX).read_bytes()

    def change(manifest: dict) -> None:
        (entry,) = [entry for entry in manifest["outputs"] if entry["path"] == INDEX]
        entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())

    return change


@pytest.mark.slow
def test_a_sealed_but_unsigned_index_of_every_new_page_is_taken_only_when_trusted(write_warc, tmp_path):
    # Anyone can seal a manifest: here one over the index of the new crawl itself, which would leave out every page.
    source = write_inputs(write_warc, "new", [capture(f"n{n}", article(100 + n, 40), "2026-02-01T00:00:00Z")
                                              for n in range(100)])
    assert build(tmp_path / "own", "--input", str(source))[0] == 0
    forged = tampered_copy(tmp_path / "own", tmp_path / "forged", lambda data: data)
    reseal(forged, lambda manifest: None, signed=False)
    stderr = refusal(write_warc, tmp_path, forged)
    assert f"--extend {forged}: its manifest.json is not one a build of this user signed: it has no " \
           f"manifest_hmac" in stderr and f"add --trust-corpus {forged}" in stderr
    # Named trusted on purpose, it is taken, and the build says what it left out.
    code, stdout, stderr = build(tmp_path / "taken", "--input", str(source), "--extend", str(forged),
                                 "--trust-corpus", str(forged))
    assert code == 0, stderr
    assert corpus_records(tmp_path / "taken") == []
    assert f"  {forged} left out 100 pages that it holds (100 duplicates)" in stdout.splitlines()
    report = json.loads((tmp_path / "taken" / "report.json").read_text())
    assert report["earlier_corpora"] == [{"corpus": str(forged), "duplicates": 100}]


def test_trust_corpus_names_an_extended_corpus(earlier, tmp_path):
    code, _, stderr = build(tmp_path / "out", "--trust-corpus", str(earlier))
    assert code == 2 and f"--trust-corpus {earlier} is no --extend corpus of this build" in stderr


def test_an_index_that_is_a_fifo_or_a_link_is_refused_in_one_line(earlier, write_warc, tmp_path):
    fifo = tampered_copy(earlier, tmp_path / "fifo", lambda data: data)
    (fifo / INDEX).unlink()
    os.mkfifo(fifo / INDEX)
    assert f"its index file {INDEX}: not a regular file (a FIFO): not read" in refusal(write_warc, tmp_path, fifo)
    for name, target in (("zero", "/dev/zero"), ("link", str(earlier / INDEX))):
        linked = tampered_copy(earlier, tmp_path / name, lambda data: data)
        (linked / INDEX).unlink()
        (linked / INDEX).symlink_to(target)
        # Never through a link, even to the very bytes listed.
        assert f"its index file {INDEX}: not a regular file (a symbolic link)" in refusal(write_warc, tmp_path, linked)


def index_of(hashes: list[bytes]) -> bytes:
    return index_header(0) + b"".join(sorted(digest + bytes(CONTENT_BYTES - 32) for digest in hashes))


def test_an_index_file_is_read_as_the_bytes_its_manifest_lists(tmp_path):
    # As a server that sends other bytes the second time: the file listed, then another of the same size.
    listed = index_of([hashlib.sha256(str(n).encode()).digest() for n in range(4)])
    path = tmp_path / INDEX
    path.write_bytes(index_of([hashlib.sha256(str(n).encode()).digest() for n in range(4, 8)]))
    digest = (len(listed), hashlib.sha256(listed).hexdigest())
    group = ((0, 0, 0), [hashlib.sha256(str(n).encode()).digest() for n in range(8)])
    with pytest.raises(IndexDamaged, match=r"is not the file its manifest lists \(sha256 differs\)"):
        list(earlier_matches(group, (((str(path), *digest),),), 0))
    path.write_bytes(listed + bytes(CONTENT_BYTES))
    with pytest.raises(IndexDamaged, match=f"is longer than the {len(listed)} bytes its manifest lists"):
        list(read_index_entries(str(path), 0, digest))
    path.write_bytes(listed)
    assert len(list(earlier_matches(group, (((str(path), *digest),),), 0))) == 4


@pytest.mark.slow
def test_an_index_a_server_swaps_after_it_was_checked_fails_the_build(earlier, server, write_warc, tmp_path):
    # The server sends the index its manifest lists until it was read to its end (the check before the build),
    # then one of the same size that lists every page of the new build: read unchecked, it would drop them all.
    source = write_inputs(write_warc, "new", [capture(f"n{n}", article(200 + n), "2026-02-01T00:00:00Z")
                                              for n in range(2)])
    assert build(tmp_path / "own", "--input", str(source))[0] == 0
    swapped = (tmp_path / "own" / INDEX).read_bytes()
    assert len(swapped) == (earlier / INDEX).stat().st_size
    server.files = {f"earlier/{path.name}": path.read_bytes() for path in earlier.iterdir()}
    server.later = {f"earlier/{INDEX}": swapped}
    code, stdout, stderr = run_main(["--input", str(source), "--extend", server.base + "earlier",
                                     "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 1, (stdout, stderr)
    (line,) = stderr.strip().splitlines()
    assert f"{INDEX} is not the file its manifest lists (sha256 differs)" in line and "nothing was published" in line
    # Nothing but the work done, kept to resume.
    assert [path.name for path in (tmp_path / "out").iterdir() if not path.name.startswith(RESUME_PREFIX)] == []
    assert not server.later  # the swapped index was served


@pytest.mark.parametrize("damage, said", [
    # Another signature size in the header.
    (lambda data: index_header(100) + data[HEADER.size:], "has no WCINDEX1 header for signatures of 0 values"),
    # Cut inside an entry.
    (lambda data: data[:-1], "bytes: no header and whole entries of 56 bytes"),
    # An entry left out: whole and in order, but not the corpus's.
    (lambda data: data[:-CONTENT_BYTES], "its index lists 1 documents, its corpus files 2 records"),
])
def test_an_index_damaged_under_its_own_signed_manifest_is_refused_before_the_build(earlier, write_warc, tmp_path,
                                                                                    damage, said):
    copy = tampered_copy(earlier, tmp_path / "damaged", damage)
    reseal(copy, list_index_as_it_is(copy))
    assert said in refusal(write_warc, tmp_path, copy)


@pytest.mark.parametrize("option, said", [
    (("--main-content",), "was built with --main-content off, this build with on"),
    (("--scripts", "latin"), 'was built with --scripts ["latin", "cyrillic"], this build with ["latin"]'),
    (("--drop-selector", "nav"), 'was built with --drop-selector none, this build with ["nav"]'),
    (("--pii",), "was built with --pii off, this build with on"),
])
def test_extend_refuses_a_corpus_of_other_text_shaping_options(earlier, write_warc, tmp_path, option, said):
    stderr = refusal(write_warc, tmp_path, earlier, *option)
    assert said in stderr and "their content hashes are of other text, not comparable" in stderr


def values(*numbers: int) -> bytes:
    return b"".join(number.to_bytes(4, "little") for number in numbers)


# Two bands of two values. A new page shares band 0 with the first earlier document, band 1 with the second, both
# with the third; the fourth shares no band, the fifth has no signature.
TWO_BANDS = MinHashParameters(bands=2, rows=2)
NEW_PAGE = Candidate(("2026-02-01", "https://n.example/", "", "n.warc.gz", 0, 0), values(1, 2, 3, 4))
EARLIER_SIGNATURES = [values(1, 2, 9, 9), values(8, 8, 3, 4), values(1, 2, 3, 4), values(1, 9, 9, 4), None]


def earlier_signed_index(directory: Path) -> tuple[tuple, list[tuple[int, str, bytes]]]:
    """An index of one shard of `EARLIER_SIGNATURES`, as `EarlierSignatures` takes it, and the (corpus, content
    hash, signature) of each of its documents with a signature."""
    hashes = [hashlib.sha256(str(n).encode()).digest() for n in range(len(EARLIER_SIGNATURES))]
    data = index_header(4) + b"".join(sorted(digest + bytes(CONTENT_BYTES - 32) + signature_part(signature, 4)
                                             for digest, signature in zip(hashes, EARLIER_SIGNATURES)))
    path = directory / INDEX
    path.write_bytes(data)
    return ((((str(path), len(data), hashlib.sha256(data).hexdigest()),),),
            [(0, digest.hex(), signature) for digest, signature in zip(hashes, EARLIER_SIGNATURES) if signature])


def test_only_earlier_signatures_that_share_a_bucket_with_this_build_are_read_for_near_dedup(tmp_path):
    files, signed = earlier_signed_index(tmp_path)
    found = earlier_bucket_mates((0, 0, band_keys(NEW_PAGE.signature, 2, 2)), files, 4, 2, 2)
    assert sorted(found) == sorted(signed[:3])
    with TestPipeline() as pipeline:
        mates = pipeline | beam.Create([NEW_PAGE]) | EarlierSignatures(files, TWO_BANDS)
        assert_that(mates, equal_to(signed[:3]))


def test_a_build_of_more_band_keys_than_one_read_takes_every_earlier_signature_into_near_dedup(tmp_path,
                                                                                                monkeypatch):
    # The new page's two band keys, more than one read looks for: the shard is read once, and every signature goes
    # on, as NearDedup's buckets take them (the one that shares no band too).
    files, signed = earlier_signed_index(tmp_path)
    monkeypatch.setattr(corpus_index_transform, "BAND_KEYS_PER_READ", 1)
    with TestPipeline() as pipeline:
        every = pipeline | beam.Create([NEW_PAGE]) | EarlierSignatures(files, TWO_BANDS)
        assert_that(every, equal_to(signed))
