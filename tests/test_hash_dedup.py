"""HashDedup: one survivor per content, chosen the same way whatever the order, with bounded state per content."""

from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import json
import pickle
import tracemalloc

import apache_beam as beam
import fastavro
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import cli
from pipeline.sample import Capture, warc_bytes
from tests.helpers import applied_transforms, document, page
from transforms.document import Document, Skip
from transforms.stages.hash_dedup import (CAPTURE_BUCKETS, bucket_of, captures_by_content, content_hash, deduplicate,
                                          duplicate_of, hash_document, outcomes_of_hash, survivor_note)
from transforms.stages.hash_dedup_transform import CapturesOfHash, DuplicatesOfBucket, HashDedup, HashDocuments
from transforms import vocabulary
from transforms.vocabulary import DUPLICATE_LIST_CAP, NO_TEXT, SKIP_KINDS, Duplicate, Fingerprint, Survivor


def place(url: str, date: str) -> int:
    """An offset of its own for each capture (two captures are never read at one place)."""
    return int(hashlib.sha256(f"{url} {date}".encode("utf-8")).hexdigest()[:8], 16)


def doc(html: str, url: str, date: str = "2026-01-15T10:00:00Z", record_id: str | None = None,
        source_file: str = "test.warc.gz", offset: int | None = None) -> Document:
    return document(url=url, warc_record_id=record_id or f"<urn:uuid:{url}|{date}>", warc_date=date,
                    source_file=source_file, source_offset=place(url, date) if offset is None else offset,
                    http_status=200, content_type="text/html", html=html, text=html)


def fingerprint(html: str, url: str, date: str = "2026-01-15T10:00:00Z", record_id: str | None = None,
                **fields) -> Fingerprint:
    return Fingerprint.of(hash_document(doc(html, url, date, record_id, **fields)))


def test_content_hash_is_sha256_hex_of_the_utf8_html():
    html = "<div>привет, мир</div>"
    assert content_hash(html) == hashlib.sha256(html.encode("utf-8")).hexdigest()
    assert content_hash("") == hashlib.sha256(b"").hexdigest()
    assert content_hash("<div>a</div>") != content_hash("<div>b</div>")
    assert hash_document(doc(html, "https://a.example.org/")).content_hash == content_hash(html)


def test_fingerprint_carries_what_dedup_needs():
    d = hash_document(doc("<div>x</div>", "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:1>"))
    f = Fingerprint.of(d)
    assert (f.capture, f.content_hash) == (d.capture, content_hash("<div>x</div>"))
    assert f.identity == (d.capture.source_file, d.capture.source_range, d.capture.source_offset)
    assert Fingerprint.of(hash_document(doc("<div>x</div>", "https://b.example.org/"))).content_check == \
        f.content_check
    assert Fingerprint.of(hash_document(doc("<div>y</div>", "https://a.example.org/"))).content_check != \
        f.content_check


def duplicate_fields(d: Duplicate) -> tuple:
    return tuple(vars(d).values())


def combine(items) -> list:
    return captures_by_content(items)


CAPTURE = st.tuples(st.sampled_from(["<div>a</div>", "<div>b</div>", "<div>c</div>"]),
                    st.sampled_from(["2026-01-15T10:00:00Z", "2026-01-15T09:00:00Z", "2025-12-31T23:59:59Z"]),
                    st.sampled_from(["https://x.example.org/", "https://a.example.org/", "https://m.example.org/p"]),
                    st.sampled_from(["<urn:uuid:1>", "<urn:uuid:2>"]))


@settings(max_examples=300, deadline=None)
@given(captures=st.lists(CAPTURE, min_size=1, max_size=10), data=st.data())
def test_survivor_is_the_same_whatever_the_order(captures, data):
    # Record ids repeat (two to choose from): the capture's identity (here its offset) tells them apart.
    items = [fingerprint(html, url, date, record_id, offset=index)
             for index, (html, date, url, record_id) in enumerate(captures)]
    groups = combine(data.draw(st.permutations(items)))
    expected = {}
    for item in items:
        expected.setdefault(item.content_check, []).append(item)
    assert sorted(group.first[0].content_check for group in groups) == sorted(expected)
    for group in groups:
        want = sorted(expected[group.first[0].content_check],
                      key=lambda f: f.capture)
        assert group.first == want and group.count == len(want)


@settings(max_examples=200, deadline=None)
@given(captures=st.lists(CAPTURE, min_size=1, max_size=12), data=st.data())
def test_captures_combined_in_any_split_and_order_are_the_captures_of_all(captures, data):
    # A runner combines some of a hash's captures per bundle and merges the accumulators in any grouping.
    items = [fingerprint(html, url, date, record_id, offset=index)
             for index, (html, date, url, record_id) in enumerate(captures)]
    combine_fn = CapturesOfHash()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(items)), max_size=4)))
    shuffled = data.draw(st.permutations(items))
    accumulators = []
    for start, end in zip([0, *cuts], [*cuts, len(items)]):
        accumulator = combine_fn.create_accumulator()
        for item in shuffled[start:end]:
            accumulator = combine_fn.add_input(accumulator, item)
        accumulators.append(accumulator)
    merged = combine_fn.extract_output(combine_fn.merge_accumulators(data.draw(st.permutations(accumulators))))
    assert merged == combine(items)


def test_survivor_order_earliest_date_then_url_then_record_id_then_identity():
    html = "<div>same</div>"
    late = fingerprint(html, "https://a.example.org/", "2026-02-01T00:00:00Z", "<urn:uuid:1>")
    early_b = fingerprint(html, "https://b.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:2>")
    early_a_9 = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:9>")
    early_a_3_later_file = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:3>",
                                       source_file="z.warc.gz", offset=0)
    early_a_3_later_offset = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:3>",
                                         source_file="a.warc.gz", offset=900)
    early_a_3 = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:3>",
                            source_file="a.warc.gz", offset=100)
    [group] = combine([late, early_b, early_a_3_later_file, early_a_9, early_a_3_later_offset, early_a_3])
    assert group.first == [early_a_3, early_a_3_later_offset, early_a_3_later_file, early_a_9, early_b, late]


def test_survivor_note_and_duplicates_name_the_survivor_by_where_it_was_read():
    html = "<div>same</div>"
    first = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", source_file="one.warc.gz", offset=10)
    second = fingerprint(html, "https://b.example.org/", "2026-01-02T00:00:00Z", source_file="two.warc.gz")
    third = fingerprint(html, "https://c.example.org/", "2026-01-03T00:00:00Z", source_file="one.warc.gz")
    [group] = combine([third, first, second])
    note = survivor_note(group)
    assert note == Survivor("one.warc.gz", 0, 10, first.capture.warc_record_id, 2,
                            (second.capture.url, third.capture.url),
                            (second.capture.warc_record_id, third.capture.warc_record_id))
    assert duplicate_of(first, first) is None
    assert [duplicate_fields(duplicate_of(f, first)) for f in (second, third)] == [
        (*vars(f.capture).values(), content_hash(html), first.capture.url,
         first.capture.warc_record_id, "one.warc.gz", 10) for f in (second, third)]


def test_a_capture_that_shares_its_record_id_with_its_survivor_is_still_its_duplicate():
    html = "<div>same</div>"
    survivor = fingerprint(html, "https://a.example.org/", record_id="<urn:uuid:1>", offset=10)
    copy = fingerprint(html, "https://a.example.org/", record_id="<urn:uuid:1>", offset=500)
    notes, duplicates = deduplicate([copy, survivor])
    assert [(n.source_offset, n.duplicate_count) for n in notes] == [(10, 1)]
    assert [(d.source_offset, d.survivor_source_offset) for d in duplicates] == [(500, 10)]


def test_a_content_of_one_capture_has_no_note_and_no_duplicates():
    alone = fingerprint("<div>alone</div>", "https://a.example.org/")
    [group] = combine([alone])
    assert survivor_note(group) is None
    assert deduplicate([alone]) == ([], [])


def test_a_hash_collision_never_drops_a_document():
    # Two different contents under one hash (set by hand: SHA-256 collisions cannot be made).
    def colliding(html, url, date):
        return Fingerprint.of(doc(html, url, date).replace(content_hash="f" * 64))

    one = colliding("<div>one</div>", "https://a.example.org/", "2026-01-01T00:00:00Z")
    two = colliding("<div>two</div>", "https://b.example.org/", "2026-01-02T00:00:00Z")
    copy = colliding("<div>two</div>", "https://c.example.org/", "2026-01-03T00:00:00Z")
    for items in ([one, two, copy], [copy, two, one], [two, one, copy]):
        groups = combine(items)
        assert sorted([f.capture.url for f in group.first] for group in groups) == [
            [one.capture.url], [two.capture.url, copy.capture.url]]
    notes, duplicates = deduplicate([one, two, copy])
    assert [(n.warc_record_id, n.duplicate_urls) for n in notes] == [
        (two.capture.warc_record_id, (copy.capture.url,))]
    assert [(d.url, d.survivor_url) for d in duplicates] == [(copy.capture.url, two.capture.url)]


def test_hash_dedup_transform():
    items = [
        fingerprint("<div>x</div>", "https://mirror.example.org/x", "2026-01-15T10:05:00Z"),
        fingerprint("<div>x</div>", "https://origin.example.org/x", "2026-01-15T10:00:00Z"),
        fingerprint("<div>x</div>", "https://late.example.org/x", "2026-01-16T00:00:00Z"),
        fingerprint("<div>y</div>", "https://origin.example.org/y", "2026-01-15T10:00:00Z"),
    ]
    x_hash = content_hash("<div>x</div>")
    origin = items[1]
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(items) | HashDedup()
        # Only survivors that stand for others get a note.
        assert_that(result.survivors, equal_to([
            Survivor("test.warc.gz", 0, origin.capture.source_offset, origin.capture.warc_record_id, 2,
                     (items[0].capture.url, items[2].capture.url),
                     (items[0].capture.warc_record_id, items[2].capture.warc_record_id))]), label="survivors")
        assert_that(result.duplicates | "Dups" >> beam.Map(duplicate_fields), equal_to([
            (*vars(items[i].capture).values(), x_hash, origin.capture.url, origin.capture.warc_record_id,
             "test.warc.gz", origin.capture.source_offset) for i in (0, 2)]),
            label="duplicates")


def hash_dedup_graph() -> tuple[list, list]:
    """HashDedup's applied transforms on one fingerprint: (composites, leaves), in the order visited."""
    pipeline = beam.Pipeline()
    _ = pipeline | beam.Create([fingerprint("<div>x</div>", "https://a.example.org/")]) | "HashDedup" >> HashDedup()
    return applied_transforms(pipeline)


def test_hash_dedup_joins_by_hash_without_a_side_input():
    # A side input grows with the input, and Flink and Dask hold it whole on every worker.
    _, leaves = hash_dedup_graph()
    assert [node.full_label for node in leaves if node.side_inputs] == []


def test_a_hot_contents_captures_meet_their_survivor_in_groups_of_a_thousandth():
    # No runner pages a large group in for sure (Beam's local runner and Flink hold a key's values as one list):
    # a content's captures are split by where they were read.
    sizes = collections.Counter(bucket_of(capture) for capture in many_captures(200_000))
    assert len(sizes) == CAPTURE_BUCKETS
    assert max(sizes.values()) < 2 * 200_000 / CAPTURE_BUCKETS, max(sizes.values())


@pytest.mark.slow
def test_the_duplicates_of_a_hot_content_are_found_in_small_groups(monkeypatch):
    items = [*many_captures(5_000), *(fingerprint(f"<div>{n % 40}</div>", f"https://o.example.org/{n}", offset=n)
                                     for n in range(200))]
    group_sizes = []
    process = DuplicatesOfBucket.process

    def measured(dofn, key_and_values):
        values = list(key_and_values[1])
        group_sizes.append(len(values))
        return process(dofn, (key_and_values[0], values))

    monkeypatch.setattr(DuplicatesOfBucket, "process", measured)
    notes, duplicates = deduplicate(items)
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(items) | HashDedup()
        assert_that(result.survivors, equal_to(notes), label="survivors")
        assert_that(result.duplicates, equal_to(duplicates), label="duplicates")
    # A group is a bucket's captures of one hash, and the survivor sent to it: about 5 of the hot content's.
    assert sum(group_sizes) > len(items) and len(group_sizes) > CAPTURE_BUCKETS
    assert max(group_sizes) < 30, max(group_sizes)


@settings(max_examples=200, deadline=None)
@given(captures=st.lists(CAPTURE, min_size=1, max_size=8), data=st.data())
def test_a_hash_gives_the_same_survivors_and_duplicates_whatever_the_order_of_its_values(captures, data):
    items = [fingerprint(html, url, date, record_id, offset=index)
             for index, (html, date, url, record_id) in enumerate(captures)]
    by_hash = {}
    for item in items:
        by_hash.setdefault(item.content_hash, []).append(item)
    found = [outcome for values in by_hash.values() for outcome in outcomes_of_hash(data.draw(st.permutations(values)))]
    # The rule itself: per content, the least fingerprint survives and every other capture is its duplicate.
    by_content = {}
    for item in items:
        by_content.setdefault(item.content_check, []).append(item)
    survivors = {check: min(group) for check, group in by_content.items()}
    expected = [duplicate_of(item, survivors[item.content_check]) for item in items
                if item.identity != survivors[item.content_check].identity]
    assert sorted(map(duplicate_fields, [o for o in found if isinstance(o, Duplicate)])) == \
        sorted(map(duplicate_fields, expected))
    assert sorted((n.source_offset, n.duplicate_count) for n in found if isinstance(n, Survivor)) == sorted(
        (survivors[check].capture.source_offset, len(group) - 1)
        for check, group in by_content.items() if len(group) > 1)


# Pages without text -----------------------------------------------------------------------------

def test_a_document_without_text_is_skipped_not_hashed():
    empty = doc("", "https://js-only.example.org/", offset=7)
    foreign = doc("", "https://zh.example.org/", offset=9).replace(dropped_letter_share=1.0)
    text = doc("<div>words</div>", "https://a.example.org/")
    assert NO_TEXT in SKIP_KINDS
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create([empty, foreign, text]) | HashDocuments()
        assert_that(result.documents | beam.Map(lambda d: (d.capture.url, d.content_hash)),
                    equal_to([(text.capture.url, content_hash(text.html))]), label="documents")
        assert_that(result.skipped, equal_to([
            Skip(NO_TEXT, "test.warc.gz", 7, "response", empty.capture.warc_record_id, empty.capture.url, ""),
            Skip(NO_TEXT, "test.warc.gz", 9, "response", foreign.capture.warc_record_id, foreign.capture.url,
                 "its letters are all in scripts not kept (--scripts)")]), label="skipped")


# Hot keys: a content captured very many times -----------------------------------------------------

def many_captures(count: int, html: str = "<div>boilerplate</div>"):
    """`count` captures of one content, made one at a time (so that only what the combiner keeps stays)."""
    check = fingerprint(html, "https://x.example.org/")
    for index in range(count):
        # Every seventh capture is earlier than all before it: the kept ones keep changing.
        yield Fingerprint(vocabulary.Capture("2026-01-01T00:00:00Z" if index % 7 == 0 else "2026-01-15T00:00:00Z",
                                          f"https://example.org/{count - index:07d}", "<urn:uuid:0>",
                                          "crawl.warc.gz", index, 0),
                          check.content_hash, check.content_check)


def test_a_hot_key_of_200_000_captures_keeps_state_of_one_size():
    # What is kept of the key while its captures stream past: its `Captures`, as pickled.
    sizes = []
    for count in (50_000, 200_000):
        [captures] = captures_by_content(many_captures(count))
        assert (captures.count, len(captures.first)) == (count, DUPLICATE_LIST_CAP + 1)
        sizes.append(len(pickle.dumps(captures)))
    assert max(sizes) < 1.05 * min(sizes) and max(sizes) < 100_000, sizes


def hash_peak(count: int) -> tuple[int, int]:
    """`count` captures of one content combined as they stream past: their count, and the peak traced memory."""
    combine_fn = CapturesOfHash()
    tracemalloc.start()
    try:
        contents = combine_fn.create_accumulator()
        for capture in many_captures(count):
            contents = combine_fn.add_input(contents, capture)
        [captures] = combine_fn.extract_output(contents)
        return captures.count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_hot_key_needs_no_more_memory_for_four_times_the_captures():
    # Traced memory slows Python down: 12,500 and 50,000 captures keep the test short.
    (small_count, small), (big_count, big) = hash_peak(12_500), hash_peak(50_000)
    assert (small_count, big_count) == (12_500, 50_000)
    assert big < 1.2 * small and big < 1_000_000, (small, big)


def test_a_hot_key_keeps_the_first_in_survivor_order_and_counts_all():
    items = list(many_captures(3 * DUPLICATE_LIST_CAP))
    [group] = combine(items)
    assert group.count == len(items)
    assert group.first == sorted(items)[:DUPLICATE_LIST_CAP + 1]


@pytest.mark.slow
def test_a_survivor_lists_the_first_duplicates_and_the_duplicates_output_maps_them_all():
    items = list(many_captures(DUPLICATE_LIST_CAP + 150))
    ordered = sorted(items)
    survivor = ordered[0].capture
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(items) | HashDedup()
        assert_that(result.survivors, equal_to([
            Survivor(survivor.source_file, 0, survivor.source_offset, survivor.warc_record_id, len(items) - 1,
                     tuple(f.capture.url for f in ordered[1:DUPLICATE_LIST_CAP + 1]),
                     tuple(f.capture.warc_record_id for f in ordered[1:DUPLICATE_LIST_CAP + 1]))]), label="survivors")
        assert_that(result.duplicates | "Dups" >> beam.Map(
            lambda d: (d.source_file, d.source_offset, d.survivor_source_file, d.survivor_source_offset)),
            equal_to([(f.capture.source_file, f.capture.source_offset, survivor.source_file, survivor.source_offset)
                      for f in ordered[1:]]), label="duplicates")


# End to end: record ids that repeat, pages without text, a long duplicate list ---------------------

def html(text: str) -> bytes:
    return page(f"<p>{text}</p>").encode("utf-8")


# The same URL at the same time, stored twice: one record id for both.
TWICE = Capture("https://twice.example.org/", html("The same page twice"))
# A copy whose URL and date, so its record id, another page of the file has too.
ORIGINAL = Capture("https://origin.example.org/", html("Copied text"), date="2026-01-14T00:00:00Z")
COPY = Capture("https://copy.example.org/", ORIGINAL.body)
OTHER = Capture(COPY.url, html("A page of its own"))
# One crawl, as .warc and as .warc.gz.
CRAWL = [Capture("https://a.example.org/", html("First page")),
         Capture("https://b.example.org/", html("Second page")),
         Capture("https://mirror.example.org/", html("First page"), date="2026-01-15T11:00:00Z")]
NO_TEXT_PAGES = [
    Capture("https://app.example.org/", page("<script>render()</script><div id='root'></div>").encode()),
    Capture("https://frames.example.org/", b"<html><frameset><frame src='a.html'></frameset></html>"),
    Capture("https://app2.example.org/", page("<noscript></noscript><script>go()</script>").encode()),
]
TEXT_PAGE = Capture("https://text.example.org/", html("Words to keep"))
MANY = html("One page copied many times")
MANY_ORIGIN = Capture("https://many.example.org/", MANY, date="2026-01-14T00:00:00Z")
MANY_COPIES = [Capture(f"https://copy-{index:03d}.example.org/", MANY) for index in range(DUPLICATE_LIST_CAP + 5)]
FILES = {
    "twice.warc.gz": ([TWICE, Capture(TWICE.url, TWICE.body)], "record"),
    "reused.warc.gz": ([ORIGINAL, COPY, OTHER], "record"),
    "crawl.warc": (CRAWL, "none"),
    "crawl.warc.gz": (CRAWL, "record"),
    "no-text.warc.gz": ([*NO_TEXT_PAGES, TEXT_PAGE], "record"),
    "many.warc.gz": ([MANY_ORIGIN, *MANY_COPIES], "record"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """One build of all FILES: records, duplicates and skips by file name, and the report."""
    inputs = tmp_path_factory.mktemp("in")
    for name, (captures, compression) in FILES.items():
        (inputs / name).write_bytes(warc_bytes(captures, compression=compression, filename=name))
    output = tmp_path_factory.mktemp("out")
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["--input", str(inputs / "*.warc*"), "--output", str(output), "--quiet"]) == 0
    records = []
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            records.extend(fastavro.reader(handle))

    def by_file(rows, prefix=""):
        grouped = {name: [] for name in FILES}
        for row in rows:
            grouped[row[f"{prefix}source_file"].rsplit("/", 1)[-1]].append(row)
        return grouped

    def lines(name):
        return [json.loads(line) for path in sorted(output.glob(f"{name}-*.jsonl"))
                for line in path.read_text("utf-8").splitlines()]

    report = json.loads((output / "report.json").read_text())
    return {"records": by_file(records), "duplicates": by_file(lines("duplicates")),
            "skipped": by_file(lines("skipped")), "report": report,
            "files": {path.rsplit("/", 1)[-1]: counts for path, counts in report["files"].items()}}


def where(row: dict, prefix: str = "") -> tuple:
    return (row[f"{prefix}source_file"].rsplit("/", 1)[-1], row[f"{prefix}source_offset"])


@pytest.mark.slow
def test_every_capture_is_accounted_for(built):
    assert built["report"]["records"]["balanced"]
    for name, (captures, _) in FILES.items():
        counts = built["files"][name]
        # A warcinfo, and a request, a response and a metadata record per capture.
        assert counts["read"] == 1 + 3 * len(captures)
        assert counts["read"] == counts["kept"] + counts["duplicates"] + counts["skipped"] + counts["dead_letter"]
        # Every response is in exactly one place: the corpus, the duplicates or the skipped file.
        places = [where(row) for kind in ("records", "duplicates", "skipped") for row in built[kind][name]]
        assert len(places) == len(set(places)) == len(captures), name


@pytest.mark.slow
def test_a_survivor_and_its_duplicate_that_share_a_record_id(built):
    assert TWICE.record_id == Capture(TWICE.url, TWICE.body).record_id
    [kept] = built["records"]["twice.warc.gz"]
    [duplicate] = built["duplicates"]["twice.warc.gz"]
    assert kept["warc_record_id"] == duplicate["warc_record_id"] == TWICE.record_id
    assert (kept["duplicate_count"], kept["duplicate_record_ids"]) == (1, [TWICE.record_id])
    assert where(kept) < where(duplicate)
    assert where(duplicate, "survivor_") == where(kept)


@pytest.mark.slow
def test_a_different_page_that_reuses_a_dropped_duplicates_record_id(built):
    assert COPY.record_id == OTHER.record_id
    records = built["records"]["reused.warc.gz"]
    assert sorted((r["url"], r["text"]) for r in records) == [(COPY.url, "a page of its own"),
                                                              (ORIGINAL.url, "copied text")]
    [duplicate] = built["duplicates"]["reused.warc.gz"]
    assert (duplicate["url"], duplicate["survivor_url"]) == (COPY.url, ORIGINAL.url)
    assert where(duplicate, "survivor_") == where(next(r for r in records if r["url"] == ORIGINAL.url))


@pytest.mark.slow
def test_the_same_crawl_as_warc_and_warc_gz(built):
    # Same date, URL and record id: the capture read first (file, then offset) survives.
    assert built["records"]["crawl.warc.gz"] == []
    assert len(built["duplicates"]["crawl.warc"]) == 1 and len(built["duplicates"]["crawl.warc.gz"]) == 3
    kept = {r["url"]: r for r in built["records"]["crawl.warc"]}
    assert sorted(kept) == ["https://a.example.org/", "https://b.example.org/"]
    assert kept["https://a.example.org/"]["duplicate_urls"] == ["https://a.example.org/",
                                                                  "https://mirror.example.org/",
                                                                  "https://mirror.example.org/"]
    for duplicate in built["duplicates"]["crawl.warc"] + built["duplicates"]["crawl.warc.gz"]:
        survivor = kept[duplicate["survivor_url"]]
        assert where(duplicate, "survivor_") == where(survivor)
        assert duplicate["survivor_record_id"] == survivor["warc_record_id"]


@pytest.mark.slow
def test_pages_without_text_are_skipped_not_merged(built):
    assert [r["url"] for r in built["records"]["no-text.warc.gz"]] == [TEXT_PAGE.url]
    assert built["duplicates"]["no-text.warc.gz"] == []
    assert sorted(s["url"] for s in built["skipped"]["no-text.warc.gz"] if s["kind"] == NO_TEXT) == sorted(
        capture.url for capture in NO_TEXT_PAGES)
    assert built["report"]["skipped"][NO_TEXT] == len(NO_TEXT_PAGES)
    assert built["files"]["no-text.warc.gz"]["skipped"] == built["files"]["no-text.warc.gz"]["read"] - 1


@pytest.mark.slow
def test_a_long_duplicate_list_is_capped_in_the_record(built):
    [kept] = built["records"]["many.warc.gz"]
    assert kept["url"] == MANY_ORIGIN.url
    assert kept["duplicate_count"] == len(MANY_COPIES) == len(built["duplicates"]["many.warc.gz"])
    assert kept["duplicate_urls"] == [copy.url for copy in MANY_COPIES[:DUPLICATE_LIST_CAP]]
    assert kept["duplicate_record_ids"] == [copy.record_id for copy in MANY_COPIES[:DUPLICATE_LIST_CAP]]
