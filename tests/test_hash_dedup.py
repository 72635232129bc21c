"""HashDedup: one survivor per content, chosen the same way whatever the order."""

from __future__ import annotations

import hashlib

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.document import Document
from transforms.hash_dedup import (Duplicate, Fingerprint, HashDedup, KeepOneSurvivor, Survivor, content_hash,
                                   hash_document, resolve_group)


def doc(html: str, url: str, date: str = "2026-01-15T10:00:00Z", record_id: str | None = None,
        source_file: str = "test.warc.gz") -> Document:
    return Document(url=url, warc_record_id=record_id or f"<urn:uuid:{url}|{date}>", warc_date=date,
                    source_file=source_file, source_offset=len(url), http_status=200, content_type="text/html",
                    html=html, text=html)


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
    assert (f.url, f.warc_record_id, f.warc_date, f.source_file, f.source_offset, f.content_hash) == \
        (d.url, d.warc_record_id, d.warc_date, d.source_file, d.source_offset, content_hash("<div>x</div>"))
    assert Fingerprint.of(hash_document(doc("<div>x</div>", "https://b.example.org/"))).content_check == \
        f.content_check
    assert Fingerprint.of(hash_document(doc("<div>y</div>", "https://a.example.org/"))).content_check != \
        f.content_check


def duplicate_fields(d: Duplicate) -> tuple:
    return (d.url, d.warc_record_id, d.warc_date, d.source_file, d.source_offset, d.content_hash, d.survivor_url,
            d.survivor_record_id)


def combine(items: list[Fingerprint], splits=()) -> list[list[Fingerprint]]:
    """Runs KeepOneSurvivor as a runner may: add into several accumulators, then merge them."""
    fn = KeepOneSurvivor()
    bounds = [0, *sorted(set(splits)), len(items)]
    accumulators = []
    for low, high in zip(bounds, bounds[1:]):
        accumulator = fn.create_accumulator()
        for item in items[low:high]:
            accumulator = fn.add_input(accumulator, item)
        accumulators.append(accumulator)
    return fn.extract_output(fn.merge_accumulators(accumulators))


def order(f: Fingerprint):
    return (f.warc_date, f.url, f.warc_record_id)


CAPTURE = st.tuples(st.sampled_from(["<div>a</div>", "<div>b</div>", "<div>c</div>"]),
                    st.sampled_from(["2026-01-15T10:00:00Z", "2026-01-15T09:00:00Z", "2025-12-31T23:59:59Z"]),
                    st.sampled_from(["https://x.example.org/", "https://a.example.org/", "https://m.example.org/p"]))


@settings(max_examples=300, deadline=None)
@given(captures=st.lists(CAPTURE, min_size=1, max_size=10), data=st.data())
def test_survivor_is_the_same_whatever_the_order_and_merging(captures, data):
    items = [fingerprint(html, url, date, record_id=f"<urn:uuid:{index:04d}>")
             for index, (html, date, url) in enumerate(captures)]
    check_of = {html: fingerprint(html, "https://z.example.org/").content_check for html, _, _ in captures}
    shuffled = data.draw(st.permutations(items))
    splits = data.draw(st.lists(st.integers(0, len(items)), max_size=3))
    groups = combine(shuffled, splits)
    expected = {}
    for item in items:
        expected.setdefault(item.content_check, []).append(item)
    assert sorted(group[0].content_check for group in groups) == sorted(expected)
    for group in groups:
        want = sorted(expected[group[0].content_check], key=order)
        assert [f.warc_record_id for f in group] == [f.warc_record_id for f in want]
    assert set(check_of.values()) == set(expected)


def test_survivor_order_earliest_date_then_url_then_record_id():
    html = "<div>same</div>"
    late = fingerprint(html, "https://a.example.org/", "2026-02-01T00:00:00Z", "<urn:uuid:1>")
    early_b = fingerprint(html, "https://b.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:2>")
    early_a_9 = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:9>")
    early_a_3 = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", "<urn:uuid:3>")
    [group] = combine([late, early_b, early_a_9, early_a_3], [2])
    assert [f.warc_record_id for f in group] == ["<urn:uuid:3>", "<urn:uuid:9>", "<urn:uuid:2>", "<urn:uuid:1>"]


def test_resolve_group_lists_the_duplicates_and_maps_them_to_the_survivor():
    html = "<div>same</div>"
    first = fingerprint(html, "https://a.example.org/", "2026-01-01T00:00:00Z", source_file="one.warc.gz")
    second = fingerprint(html, "https://b.example.org/", "2026-01-02T00:00:00Z", source_file="two.warc.gz")
    third = fingerprint(html, "https://c.example.org/", "2026-01-03T00:00:00Z", source_file="one.warc.gz")
    [group] = combine([third, first, second])
    note, duplicates = resolve_group(group)
    assert isinstance(note, Survivor)
    assert (note.source_file, note.warc_record_id, tuple(note.duplicate_urls), tuple(note.duplicate_record_ids)) == \
        ("one.warc.gz", first.warc_record_id, (second.url, third.url), (second.warc_record_id, third.warc_record_id))
    assert all(isinstance(d, Duplicate) for d in duplicates)
    assert [duplicate_fields(d) for d in duplicates] == [
        (f.url, f.warc_record_id, f.warc_date, f.source_file, f.source_offset, content_hash(html), first.url,
         first.warc_record_id) for f in (second, third)]


def test_a_group_of_one_has_no_note_and_no_duplicates():
    assert resolve_group([fingerprint("<div>alone</div>", "https://a.example.org/")]) == (None, [])


def test_a_hash_collision_never_drops_a_document():
    # Two different contents under one hash (set by hand: SHA-256 collisions cannot be made).
    def colliding(html, url, date):
        d = doc(html, url, date).replace(content_hash="f" * 64)
        return Fingerprint.of(d)

    one = colliding("<div>one</div>", "https://a.example.org/", "2026-01-01T00:00:00Z")
    two = colliding("<div>two</div>", "https://b.example.org/", "2026-01-02T00:00:00Z")
    copy = colliding("<div>two</div>", "https://c.example.org/", "2026-01-03T00:00:00Z")
    for splits in ([], [1], [2], [1, 2]):
        for items in ([one, two, copy], [copy, two, one], [two, one, copy]):
            groups = combine(items, splits)
            assert sorted([f.url for f in group] for group in groups) == \
                [[one.url], [two.url, copy.url]]
            dropped = [d.url for group in groups for d in resolve_group(group)[1]]
            assert dropped == [copy.url]


def test_hash_dedup_transform():
    items = [
        fingerprint("<div>x</div>", "https://mirror.example.org/x", "2026-01-15T10:05:00Z"),
        fingerprint("<div>x</div>", "https://origin.example.org/x", "2026-01-15T10:00:00Z"),
        fingerprint("<div>x</div>", "https://late.example.org/x", "2026-01-16T00:00:00Z"),
        fingerprint("<div>y</div>", "https://origin.example.org/y", "2026-01-15T10:00:00Z"),
        fingerprint("", "https://empty.example.org/", "2026-01-15T10:00:00Z"),
    ]
    x_hash = content_hash("<div>x</div>")
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(items) | HashDedup()
        # Only survivors that stand for others get a note.
        assert_that(result.survivors | "Notes" >> beam.Map(
            lambda n: (n.source_file, n.warc_record_id, tuple(n.duplicate_urls), tuple(n.duplicate_record_ids))),
            equal_to([("test.warc.gz", items[1].warc_record_id, (items[0].url, items[2].url),
                       (items[0].warc_record_id, items[2].warc_record_id))]), label="survivors")
        assert_that(result.duplicates | "Dups" >> beam.Map(
            lambda d: (d.url, d.warc_record_id, d.content_hash, d.survivor_url, d.survivor_record_id)),
            equal_to([(items[i].url, items[i].warc_record_id, x_hash, items[1].url, items[1].warc_record_id)
                      for i in (0, 2)]), label="duplicates")
