"""The content index in the pipeline (see `corpus_index`): its entries gathered from HashDedup and NearDedup,
written in shards by hash (`WriteIndex`), and an earlier corpus's read back (`--extend`): the contents this build
has too (`EarlierMatches`), and the signatures NearDedup needs (`EarlierSignatures`).

Nothing here holds an index whole: a shard is written by one worker from its
group (at most about `ENTRIES_PER_SHARD` entries), and an earlier index is
read a shard at a time, a few thousand entries in memory. Of its contents,
only those whose hash this build has go on, into HashDedup's combine; of its
signatures, only those with a band key this build has (or, for a build of
more band keys than one read looks for, all), by band into NearDedup's
buckets.
"""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.state.corpus_index import (CONTENT_BYTES, ENTRIES_PER_SHARD, HASH_BYTES, index_file_name, index_header,
                                           index_shard_count, index_shard_of, parse_entry, read_index_entries,
                                           signature_part)
from transforms.report.manifest import DigestingHandle, FileDigest
from transforms.vocabulary import band_keys, earlier_fingerprint

ENTRIES = "entries"
SIGNED = "signed"
# Entries written to a shard's file at a time.
ENTRIES_PER_WRITE = 4096
# This build's band keys that one read of the earlier indexes looks for, at most (as a set of bytes of 14, about
# 100 MB): with more, every earlier signature goes to NearDedup's buckets instead (`EarlierSignatures`).
BAND_KEYS_PER_READ = 1_000_000


class SurvivorsSigned(NamedTuple):
    # The near-dedup candidates of the exact-dedup survivors.
    candidates: beam.PCollection
    # (identity, whole index entry) of every exact-dedup survivor: its content, and its signature if it has one.
    entries: beam.PCollection


def join_signatures(identity_and_parts, signature_values: int):
    """A capture's content (if HashDedup kept it) and candidate (if it has words): the candidate, tagged, and the
    capture's whole index entry."""
    identity, parts = identity_and_parts
    contents = list(parts["contents"])
    if not contents:
        return
    candidates = list(parts["candidates"])
    for candidate in candidates:
        yield beam.pvalue.TaggedOutput(SIGNED, candidate)
    yield identity, contents[0] + signature_part(candidates[0].signature if candidates else None, signature_values)


def sign_survivors(contents, candidates, signature_values: int) -> SurvivorsSigned:
    """The candidates of HashDedup's survivors (`contents`: by identity; a capture HashDedup dropped has none),
    and each survivor's index entry with its signature: one join by capture."""
    joined = (
        {"contents": contents,
         "candidates": candidates | "CandidateByCapture" >> beam.Map(lambda candidate: (candidate.identity, candidate))}
        | "JoinSurvivors" >> beam.CoGroupByKey()
        | "SurvivorEntries" >> beam.FlatMap(join_signatures, signature_values).with_outputs(SIGNED, main=ENTRIES)
    )
    return SurvivorsSigned(joined[SIGNED], joined[ENTRIES])


def not_near_dropped(entries, near_duplicates):
    """The entries (by identity) of the pages NearDedup kept."""
    return (
        {"entries": entries,
         "dropped": near_duplicates | "NearDroppedByCapture" >> beam.Map(lambda dropped: (dropped.identity, None))}
        | "JoinNearDropped" >> beam.CoGroupByKey()
        | "NotNearDropped" >> beam.FlatMap(lambda joined: [] if joined[1]["dropped"] else joined[1]["entries"])
    )


def write_index_shard(shard_entries, output_dir: str, signature_values: int) -> FileDigest:
    """Writes ((index, count), entries) to `output_dir/index-SSSSS-of-NNNNN.bin`, sorted, leaving out `None`s;
    returns its digest, taken as it is written."""
    (index, count), entries = shard_entries
    path = FileSystems.join(output_dir, index_file_name(index, count))
    ordered = sorted(entry for entry in entries if entry is not None)
    with DigestingHandle(FileSystems.create(path)) as handle:
        handle.write(index_header(signature_values))
        for start in range(0, len(ordered), ENTRIES_PER_WRITE):
            handle.write(b"".join(ordered[start:start + ENTRIES_PER_WRITE]))
    return handle.digest(path)


class WriteIndex(beam.PTransform):
    """Index entries (bytes) in; writes the index shards `output_dir/index-SSSSS-of-NNNNN.bin` (their count
    from the entries' number, every shard even if empty) and outputs their digests (`FileDigest`s)."""

    def __init__(self, output_dir: str, signature_values: int):
        super().__init__()
        self._output_dir = output_dir
        self._signature_values = signature_values

    def expand(self, entries):
        count = (entries
                 | "Count" >> beam.combiners.Count.Globally()
                 | "ShardCount" >> beam.Map(index_shard_count))
        keyed = entries | "ByShard" >> beam.Map(
            lambda entry, count: ((index_shard_of(entry[:HASH_BYTES], count), count), entry),
            beam.pvalue.AsSingleton(count))
        every_shard = count | "EveryShard" >> beam.FlatMap(lambda count: [((index, count), None)
                                                                          for index in range(count)])
        return (
            (keyed, every_shard)
            | "EntriesAndShards" >> beam.Flatten()
            | "ByFile" >> beam.GroupByKey()
            | "Write" >> beam.Map(write_index_shard, self._output_dir, self._signature_values)
        )


def reads_by_band_key(new_keys: int, band_keys_per_read: int) -> bool:
    """Whether the earlier indexes are read against this build's `new_keys` distinct band keys (they fit in one
    read), rather than every earlier signature going to NearDedup's buckets."""
    return new_keys <= band_keys_per_read


def to_every_shard(group, shards: list[tuple[int, int]]):
    """(corpus, shard, keys) of this build's band keys for each earlier index shard."""
    keys = tuple(group[1])
    for corpus, shard in shards:
        yield corpus, shard, keys


def signed_entries(corpus: int, shard: int, index_files: tuple[tuple[tuple[str, int, str], ...], ...],
                   signature_values: int):
    """(corpus, raw entry) of each entry with a signature of an earlier index shard: the shard is read whole, as
    the file its manifest lists (`corpus_index.listed_bytes`), a few thousand entries at a time; other bytes fail the build at
    its end."""
    path, size, sha256 = index_files[corpus][shard]
    for raw in read_index_entries(path, signature_values, (size, sha256)):
        if raw[CONTENT_BYTES] == 1:
            yield corpus, raw


def signature_element(corpus_and_entry, signature_values: int) -> tuple[int, str, bytes]:
    """(corpus, content hash, signature) of an earlier corpus's index entry, as NearDedup takes it."""
    corpus, raw = corpus_and_entry
    entry = parse_entry(raw, signature_values)
    return corpus, entry.content_hash, entry.signature


def earlier_bucket_mates(read, index_files: tuple[tuple[tuple[str, int, str], ...], ...], signature_values: int,
                         bands: int, rows: int):
    """The signature element of each entry of an earlier index shard (`signed_entries`) with a signature that has
    one of the read's band keys."""
    corpus, shard, keys = read
    wanted = set(keys)
    for signed in signed_entries(corpus, shard, index_files, signature_values):
        if not wanted.isdisjoint(band_keys(signed[1][CONTENT_BYTES + 1:], bands, rows)):
            yield signature_element(signed, signature_values)


def earlier_signatures(corpus_and_shard, index_files: tuple[tuple[tuple[str, int, str], ...], ...],
                       signature_values: int, new_keys: int, band_keys_per_read: int):
    """The signature element of each entry of an earlier index shard (`signed_entries`), when this build's
    `new_keys` band keys are too many for one read (`reads_by_band_key`; otherwise nothing)."""
    if reads_by_band_key(new_keys, band_keys_per_read):
        return
    for signed in signed_entries(*corpus_and_shard, index_files, signature_values):
        yield signature_element(signed, signature_values)


class EarlierSignatures(beam.PTransform):
    """This build's candidates in; out, as (corpus, content hash, signature) for NearDedup, the signatures of the
    earlier corpora's documents (`index_files`, as `EarlierMatches` takes them) that it needs: at least each one
    that shares a bucket with one of this build's pages (one in no bucket of theirs is never compared with one).

    Which way is chosen when the graph runs, from the count of this build's distinct band keys (a side input of
    one number; both ways are in the graph, and the one not chosen does nothing):
    - at most `BAND_KEYS_PER_READ` (about 50,000 pages): they go, all together, to every earlier index shard, read
      once, and only the signatures with one of them go on; what is held grows with this build's pages (to that
      bound), never with the earlier corpora's;
    - more: every earlier signature goes on, each shard read once, into NearDedup's shuffle (20 elements a
      document): reading the index once per million keys would cost more, read after read, than that shuffle."""

    def __init__(self, index_files: tuple[tuple[tuple[str, int, str], ...], ...], parameters):
        super().__init__()
        self._index_files = index_files
        self._parameters = parameters
        # (Taken when the graph is made, and given to the steps: a worker's own import may hold another.)
        self._band_keys_per_read = BAND_KEYS_PER_READ

    def expand(self, candidates):
        bands, rows = self._parameters.bands, self._parameters.rows
        values, limit = self._parameters.permutations, self._band_keys_per_read
        keys = (candidates
                | "BandKeys" >> beam.FlatMap(lambda candidate: band_keys(candidate.signature, bands, rows))
                | "DistinctKeys" >> beam.Distinct())
        count = beam.pvalue.AsSingleton(keys | "Count" >> beam.combiners.Count.Globally())
        shards = [(corpus, shard) for corpus, files in enumerate(self._index_files) for shard in range(len(files))]
        mates = (
            keys
            | "IfOneRead" >> beam.FlatMap(lambda key, count: [(0, key)] if reads_by_band_key(count, limit) else [],
                                          count)
            | "AllKeys" >> beam.GroupByKey()
            | "EveryShard" >> beam.FlatMap(to_every_shard, shards)
            # A read per worker, not all of them on the one that grouped the keys.
            | "Spread" >> beam.Reshuffle()
            | "ReadMates" >> beam.FlatMap(earlier_bucket_mates, self._index_files, values, bands, rows)
        )
        every = (
            candidates.pipeline
            | "IndexShards" >> beam.Create(shards)
            | "SpreadShards" >> beam.Reshuffle()
            | "ReadEvery" >> beam.FlatMap(earlier_signatures, self._index_files, values, count, limit)
        )
        return (mates, every) | "Either" >> beam.Flatten()


def parts_per_shard(new_contents: int, shards: int) -> int:
    """Into how many groups the new contents that fall in one shard of an earlier index are split: each holds
    about `ENTRIES_PER_SHARD` new hashes at most, however many more the new build has than the earlier corpus."""
    return max(1, -(-new_contents // (shards * ENTRIES_PER_SHARD)))


def groups_of_hash(content_hash: str, new_contents: int, shard_counts: tuple[int, ...]):
    """((corpus, shard, part), hash) of a new content hash (hex) for each earlier corpus: the shard of its index
    that may hold it, and the part of that shard's range of hashes (`parts_per_shard`) it falls in."""
    digest = bytes.fromhex(content_hash)
    prefix = int.from_bytes(digest[:8], "big")
    for corpus, shards in enumerate(shard_counts):
        parts = parts_per_shard(new_contents, shards)
        place = (prefix * shards * parts) >> 64
        yield (corpus, place // parts, place % parts), digest


def earlier_matches(group, index_files: tuple[tuple[tuple[str, int, str], ...], ...], signature_values: int):
    """The fingerprint of each entry of an earlier index shard whose content hash is one of the group's new ones:
    the shard is read whole, as the file its manifest lists (`corpus_index.listed_bytes`), a few thousand entries at a time."""
    (corpus, shard, _), hashes = group
    wanted = set(hashes)
    path, size, sha256 = index_files[corpus][shard]
    for raw in read_index_entries(path, signature_values, (size, sha256)):
        if raw[:HASH_BYTES] in wanted:
            entry = parse_entry(raw, signature_values)
            yield earlier_fingerprint(corpus, entry.content_hash, entry.content_check)


class EarlierMatches(beam.PTransform):
    """Fingerprints of this build in; out, the fingerprint (`earlier_fingerprint`) of each content of the earlier
    corpora (`index_files`: per corpus, in `--extend` order, its files as its manifest lists them: (path, size,
    sha256)) whose hash one of them has.

    Only those can change what HashDedup does (an earlier content alone under its hash survives there and gives
    nothing here), so the earlier indexes never cross a shuffle: this build's distinct hashes go, in groups of at
    most about `ENTRIES_PER_SHARD`, to the index shard that may hold them, which is read once per group. What is
    held grows with this build's contents, as HashDedup's own state does, never with the earlier corpora's."""

    def __init__(self, index_files: tuple[tuple[tuple[str, int, str], ...], ...], signature_values: int):
        super().__init__()
        self._index_files = index_files
        self._signature_values = signature_values

    def expand(self, fingerprints):
        shard_counts = tuple(len(files) for files in self._index_files)
        hashes = (fingerprints
                  | "Hashes" >> beam.Map(lambda fingerprint: fingerprint.content_hash)
                  | "Distinct" >> beam.Distinct())
        # (One number: how many distinct contents this build has, which sizes the groups.)
        count = hashes | "Count" >> beam.combiners.Count.Globally()
        return (
            hashes
            | "ByShardPart" >> beam.FlatMap(groups_of_hash, beam.pvalue.AsSingleton(count), shard_counts)
            | "Group" >> beam.GroupByKey()
            | "Read" >> beam.FlatMap(earlier_matches, self._index_files, self._signature_values)
        )
