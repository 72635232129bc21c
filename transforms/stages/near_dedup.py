"""NearDedup: one document per cluster of near-duplicate contents (MinHash + LSH).

An optional stage after HashDedup (`--near-dedup`); it sees the exact
duplicates' survivors only, so exact and near duplicates are counted apart.

1. Signature (fused with reading, no document crosses a shuffle): the
   minimized `text`, casefolded and cut into words (`\\w+`), gives the set of
   its word n-grams (`shingle_size` words; a shorter text is one shingle).
   Each shingle hashes to 32 bits x (BLAKE2b, so the same on every machine
   and Python: never `hash()`), and hash function i maps it to the high 32
   bits of `(a_i * x + b_i) mod 2^64` (multiply-add-shift, a universal family
   for 32-bit keys), with an odd `a_i` and a `b_i` drawn from BLAKE2b of a
   fixed seed. The signature is the minimum image under every function
   (32 bits each); the share of equal positions between two signatures
   estimates their Jaccard similarity.
2. LSH: the signature is cut into `bands` bands of `rows` values; documents
   whose band is equal share that band's bucket.
3. Per bucket, every member is compared with the bucket's minimum member
   (in survivor order) only, and linked to it when their estimated similarity
   reaches `threshold`: two passes over the bucket, so a bucket of 100,000
   pages costs 99,999 comparisons and holds one member at a time.
4. Each linked page points to the smallest page it is linked to; pointers are
   doubled (`p <- p(p)`) in `CHAIN_ROUNDS` Beam rounds, each a join keyed by
   the pointer's target. A page whose pointer ends at a root (a page that
   points to itself) is dropped in favour of that root; the root is kept and
   counts its near-duplicates. A chain longer than 2^CHAIN_ROUNDS links is
   not resolved: its pages are kept and counted (`near_dedup:unresolved`).

The survivor order is HashDedup's (`Fingerprint`: earliest `warc_date`, then
smallest `url`, then smallest record id), and every step is a minimum or a
keyed join, so the result is the same whatever the order of arrival or the
number of workers.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from transforms.document import Document
from transforms.vocabulary import (EARLIER_OFFSET, Candidate, Capture, EarlierNearDuplicate, NearDuplicate,
                                   NearSurvivor, Rank)

# Chosen by benchmarks/near_dedup.py (benchmarks/README.md): on its labelled pages, 20 bands of 5
# (LSH's S-curve turns near 0.55, the similarity check then decides) find 96% of the pairs at
# precision 1.0, datatrove's 14 x 8 (S-curve near 0.72) 94%; a threshold of 0.8 loses a third of
# the "10% of blocks changed" pairs; 0.6 finds 2% more, but on the developer corpus 0.7 already
# joins two different articles behind one paywall (0.74).
DEFAULT_THRESHOLD = 0.7
DEFAULT_SHINGLE_SIZE = 5
DEFAULT_BANDS = 20
DEFAULT_ROWS = 5
# Hash functions (bands x rows) a page is signed with, at most: signing holds shingles x functions 64-bit values
# per page, and every band is a key per page in the shuffle (100,000 x 100,000 took 5.5 GB, then failed).
MAX_PERMUTATIONS = 1024
# Pointer doubling resolves chains of up to 2^CHAIN_ROUNDS links.
CHAIN_ROUNDS = 5

SEED = b"webcorpus.near_dedup.v1"
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class MinHashParameters:
    shingle_size: int = DEFAULT_SHINGLE_SIZE
    bands: int = DEFAULT_BANDS
    rows: int = DEFAULT_ROWS
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self):
        for name in ("shingle_size", "bands", "rows"):
            if getattr(self, name) < 1:
                raise ValueError(f"near-dedup {name.replace('_', ' ')} must be at least 1, not {getattr(self, name)}")
        if self.permutations > MAX_PERMUTATIONS:
            raise ValueError(f"--near-dedup-bands x --near-dedup-rows must be at most {MAX_PERMUTATIONS:,} hash "
                             f"functions, not {self.bands:,} x {self.rows:,} = {self.permutations:,}")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"--near-dedup-threshold must be in (0, 1], not {self.threshold}")

    @property
    def permutations(self) -> int:
        return self.bands * self.rows


def _seeded_u64(label: str, count: int) -> np.ndarray:
    values = [int.from_bytes(hashlib.blake2b(f"{label}:{i}".encode(), key=SEED, digest_size=8).digest(), "little")
              for i in range(count)]
    return np.array(values, dtype=np.uint64)


def permutation_family(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed `a` (odd) and `b` of the first `count` hash functions."""
    return _seeded_u64("a", count) | np.uint64(1), _seeded_u64("b", count)


def shingles(text: str, size: int) -> set[str]:
    """The word n-grams of `text` (casefolded); a text with fewer words is one shingle; no words: none."""
    words = WORD.findall(text.casefold())
    if len(words) <= size:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i:i + size]) for i in range(len(words) - size + 1)}


def shingle_hashes(grams: Iterable[str]) -> np.ndarray:
    return np.array([int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=4).digest(), "little")
                     for gram in grams], dtype=np.uint64)


def minhash(grams: set[str], family: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The signature of a non-empty set of shingles: per hash function, the smallest image (uint32).

    numpy's uint64 arithmetic wraps modulo 2^64 the same way on every platform.
    """
    a, b = family
    images = (shingle_hashes(grams)[:, None] * a[None, :] + b[None, :]) >> np.uint64(32)
    return images.min(axis=0).astype(np.uint32)


def similarity(first: bytes, second: bytes) -> float:
    """The estimated Jaccard similarity of two signatures (as bytes): the share of equal values."""
    a = np.frombuffer(first, dtype=np.uint32)
    b = np.frombuffer(second, dtype=np.uint32)
    return float(np.count_nonzero(a == b)) / len(a)


def earlier_rank(corpus: int, content_hash: str) -> Rank:
    """The rank of a document of earlier corpus `corpus` (`--extend`): before every capture's (its `source_file`
    is empty, a capture's never is), told apart by its corpus and content hash."""
    return ("", "", "", "", EARLIER_OFFSET, corpus, content_hash)


def earlier_candidate(corpus_hash_signature: tuple[int, str, bytes]) -> "Candidate":
    """The candidate of a document of an earlier corpus: (its corpus's position, its content hash, its
    signature), as its index gives them."""
    corpus, content_hash, signature = corpus_hash_signature
    return Candidate(earlier_rank(corpus, content_hash), signature)


def is_earlier_rank(rank: Rank) -> bool:
    return rank[4] == EARLIER_OFFSET




def candidate_of(doc: Document, parameters: MinHashParameters,
                 family: tuple[np.ndarray, np.ndarray]) -> Candidate | None:
    """The document's candidate, or None for a text without words (nothing to compare)."""
    grams = shingles(doc.text, parameters.shingle_size)
    if not grams:
        return None
    return Candidate(doc.capture.rank, minhash(grams, family).tobytes())


@dataclass(frozen=True)
class Pointer:
    """A linked page, the page it points to (itself for a root), and its signature."""

    rank: Rank
    target: Rank
    signature: bytes


def link_to_minimum(members: Iterable[Candidate], threshold: float) -> Iterator[Pointer]:
    """The links of one bucket: each member similar enough to the bucket's minimum, and the minimum itself.

    `members` is read twice (a Beam group is re-iterable) and never held: one
    pass finds the minimum, the next compares each member with it.
    """
    smallest = None
    for member in members:
        if smallest is None or member.rank < smallest.rank:
            smallest = member
    linked = False
    for member in members:
        if member.rank != smallest.rank and similarity(member.signature, smallest.signature) >= threshold:
            linked = True
            yield Pointer(member.rank, smallest.rank, member.signature)
    if linked:
        yield Pointer(smallest.rank, smallest.rank, smallest.signature)


def smallest_pointer(pointers: Iterable[Pointer]) -> Pointer:
    return min(pointers, key=lambda pointer: pointer.target)


def jump(members: Iterable[Pointer], own: Pointer) -> Iterator[Pointer]:
    """One doubling round for the pages that point to `own`: they now point where it points."""
    for member in members:
        yield Pointer(member.rank, own.target, member.signature)


def resolve(members: Iterable[Pointer], own: Pointer,
            earlier_corpora: tuple[str, ...] = ()) -> Iterator[NearDuplicate | NearSurvivor]:
    """The last round at root `own`: the pages that point to it, dropped for it, then its note if there were any.

    A document of an earlier corpus (`earlier_rank`) is kept there, never dropped; a root of one is that
    corpus's document, named by its corpus (of `earlier_corpora`) and content hash, and gets no note."""
    dropped = 0
    for member in members:
        if member.rank == own.rank or is_earlier_rank(member.rank):
            continue
        dropped += 1
        capture = vars(Capture.of_rank(member.rank))
        near = similarity(member.signature, own.signature)
        if is_earlier_rank(own.rank):
            yield EarlierNearDuplicate(**capture, survivor_url="", survivor_record_id="", similarity=near,
                                       survivor_corpus=earlier_corpora[own.rank[5]], survivor_content_hash=own.rank[6])
        else:
            yield NearDuplicate(**capture, survivor_url=own.rank[1], survivor_record_id=own.rank[2], similarity=near)
    if dropped and not is_earlier_rank(own.rank):
        yield NearSurvivor(*own.rank[3:6], near_duplicate_count=dropped)
