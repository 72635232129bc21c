"""NearDedup, the stage: pages signed where they are read (`SignDocuments`), and near-duplicate clusters resolved
in Beam (`NearDedup`: LSH buckets, pointers to the smallest member, jumps); its pure part is `near_dedup`."""

from __future__ import annotations


import apache_beam as beam

from transforms.document import Document
from transforms.stage import counter
from transforms.vocabulary import NEAR_DEDUP, NEAR_DUPLICATES, NEAR_SURVIVORS, NearSurvivor, band_keys
from transforms.stages.near_dedup import (CHAIN_ROUNDS, MinHashParameters, candidate_of, earlier_candidate, jump,
                                          link_to_minimum, permutation_family, resolve, smallest_pointer)


# Sign's output of the captures whose text has no words to sign: (source_file, source_range, source_offset).
UNSIGNED = "unsigned"


class Sign(beam.DoFn):
    """A document's `Candidate`; on `unsigned`, the capture of a document without words (so that every document
    is accounted for: `transforms.state.unit_ledger`)."""

    def __init__(self, parameters: MinHashParameters):
        self._parameters = parameters

    def setup(self):
        self._family = permutation_family(self._parameters.permutations)
        self._no_words = counter(NEAR_DEDUP, "no_words")

    def process(self, doc: Document):
        candidate = candidate_of(doc, self._parameters, self._family)
        if candidate is None:
            self._no_words.inc()
            yield beam.pvalue.TaggedOutput(UNSIGNED, doc.capture.identity)
            return
        yield candidate


class SignDocuments(beam.PTransform):
    """Documents in, their `Candidate`s (rank and signature) out; to be applied before any shuffle.

    With `with_unsigned`, both of `Sign`'s outputs: `candidates` and `UNSIGNED`.
    """

    def __init__(self, parameters: MinHashParameters, with_unsigned: bool = False):
        super().__init__()
        self._parameters = parameters
        self._with_unsigned = with_unsigned

    def expand(self, docs):
        signed = docs | beam.ParDo(Sign(self._parameters)).with_outputs(UNSIGNED, main="candidates")
        return signed if self._with_unsigned else signed.candidates


class LinkBuckets(beam.DoFn):
    def __init__(self, threshold: float):
        self._threshold = threshold

    def setup(self):
        self._links = counter(NEAR_DEDUP, "links")

    def process(self, bucket):
        _, members = bucket
        for pointer in link_to_minimum(members, self._threshold):
            self._links.inc()
            yield pointer.rank, pointer


class Jump(beam.DoFn):
    def process(self, grouped):
        _, parts = grouped
        (own,) = parts["own"]
        for pointer in jump(parts["members"], own):
            yield pointer


class Resolve(beam.DoFn):
    def __init__(self, earlier_corpora: tuple[str, ...] = ()):
        self._earlier_corpora = earlier_corpora

    def setup(self):
        self._dropped = counter(NEAR_DEDUP, "near_duplicates")
        self._unresolved = counter(NEAR_DEDUP, "unresolved")

    def process(self, grouped):
        _, parts = grouped
        (own,) = parts["own"]
        if own.target != own.rank:
            # A chain longer than 2^CHAIN_ROUNDS: these pages are kept.
            self._unresolved.inc(sum(1 for member in parts["members"] if member.rank != own.rank))
            return
        for result in resolve(parts["members"], own, self._earlier_corpora):
            if isinstance(result, NearSurvivor):
                yield beam.pvalue.TaggedOutput(NEAR_SURVIVORS, result)
            else:
                self._dropped.inc()
                yield result


def _by_target(pointers, round_name: str):
    return {
        "members": pointers | f"ByTarget{round_name}" >> beam.Map(lambda pointer: (pointer.target, pointer)),
        "own": pointers | f"ByRank{round_name}" >> beam.Map(lambda pointer: (pointer.rank, pointer)),
    } | f"Join{round_name}" >> beam.CoGroupByKey()


class NearDedup(beam.PTransform):
    """Candidates (exact-dedup survivors) in; outputs `near_duplicates` (main) and `near_survivors`.

    With `earlier_corpora` (`--extend`), it takes a dict: `candidates`, and `earlier`, their documents' (corpus,
    content hash, signature) read from their indexes (`earlier_candidate`): they take part in the buckets like any
    page and rank first, and are never dropped."""

    def __init__(self, parameters: MinHashParameters, earlier_corpora: tuple[str, ...] = ()):
        super().__init__()
        self._parameters = parameters
        self._earlier_corpora = earlier_corpora

    def expand(self, candidates):
        parameters = self._parameters
        if isinstance(candidates, dict):
            candidates = (candidates["candidates"],
                          candidates["earlier"] | "EarlierCandidates" >> beam.Map(earlier_candidate)) \
                | "WithEarlier" >> beam.Flatten()
        pointers = (
            candidates
            | "Bands" >> beam.FlatMap(lambda candidate: [
                (key, candidate) for key in band_keys(candidate.signature, parameters.bands, parameters.rows)])
            | "Buckets" >> beam.GroupByKey()
            | "LinkToMinimum" >> beam.ParDo(LinkBuckets(parameters.threshold))
            | "SmallestTarget" >> beam.CombinePerKey(smallest_pointer)
            | "Pointers" >> beam.Values()
        )
        for round_number in range(CHAIN_ROUNDS):
            pointers = _by_target(pointers, str(round_number)) | f"Jump{round_number}" >> beam.ParDo(Jump())
        return _by_target(pointers, "Last") | "Resolve" >> beam.ParDo(Resolve(self._earlier_corpora)).with_outputs(
            NEAR_SURVIVORS, main=NEAR_DUPLICATES)
