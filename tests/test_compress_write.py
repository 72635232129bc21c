"""CompressWrite: sharded Avro files that fastavro reads, with every codec and level."""

from __future__ import annotations

import bz2
import functools
import hashlib
import io
import lzma
import random
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apache_beam as beam
import fastavro
import fastavro._write
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.corpus.corpus_format import RECORD_DIGEST
from transforms.vocabulary import Capture
from transforms.stages.compress_write.avro_encoding import (CODECS, FILE_METADATA, EncodedWriter, RecordLayout,
                                                            avro_record, record_digest, resolve_level)
from transforms.stages.compress_write.schema import (CORPUS_SCHEMA, FIELD_NAMES, NEAR_DUPLICATE_COUNT, SCHEMA_FIELDS,
                                                     SIGNALS, corpus_schema, resolve_fields)
from transforms.stages.compress_write.staging import STAGING_DIR, StagingRun, staged_records
from transforms.stages.compress_write.compress_write_transform import CompressWrite, StageAndFingerprint
from transforms.document import Document
from transforms.stages.hash_dedup import content_hash, hash_document
from transforms.stages.hash_dedup_transform import HashDedup
from tests.helpers import document

SHARD_NAME = re.compile(r"^corpus-(\d{5})-of-(\d{5})\.avro$")
# (codec, level) of every variant written by the module's one pipeline.
VARIANTS = [("deflate", 0), ("deflate", 9), ("snappy", None), ("zstandard", None),
            ("xz", 0), ("xz", 9), ("bzip2", 1), ("bzip2", 9), ("null", None)]


def doc(html: str, url: str, source_file: str, date: str = "2026-01-15T10:00:00Z", offset: int = 0) -> Document:
    return document(url=url, warc_record_id=f"<urn:uuid:{url}>", warc_date=date, source_file=source_file,
                    source_offset=offset, http_status=200, content_type="text/html; charset=utf-8",
                    charset="utf-8", charset_source="http-header", title=f"Title of {url}",
                    links=[url + "/next"], lang="en", meta={"description": "d"}, html=html,
                    text=html.replace("<div>", "").replace("</div>", "\n").strip(), raw_bytes=3 * len(html),
                    cleaned_bytes=2 * len(html), minimized_bytes=len(html))


@functools.lru_cache(maxsize=None)
def _chunk(seed: int, size: int = 100_000) -> str:
    rng = random.Random(seed)
    return "<div>" + "".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=size)) + "</div>"


def repetitive(k: int) -> Document:
    # Repeats 300 kB apart: only a large window (xz -9, bzip2 -9) finds them.
    return doc(_chunk(k % 3) + f"<div>{k}</div>", f"https://big.example.org/{k}", "big.warc.gz", offset=k)


SMALL = [
    doc("<div>hello world</div>", "https://a.example.org/1", "a.warc.gz", "2026-01-15T10:00:00Z", offset=0),
    doc("<div>привет мир</div>", "https://a.example.org/2", "a.warc.gz", "2026-01-15T10:01:00Z", offset=1),
    doc("<div>hello world</div>", "https://b.example.org/copy", "b.warc.gz", "2026-01-16T10:00:00Z", offset=0),
    doc("<div>other</div>", "https://b.example.org/3", "b.warc.gz", "2026-01-15T10:00:00Z", offset=1),
]
BIG_COUNT = 6


def _write(pipeline, output: Path, codec: str, level: int | None, label: str):
    # The big documents are made inside the pipeline: Beam would pickle and bz2 them with a Create.
    small = pipeline | f"Small-{label}" >> beam.Create(SMALL)
    big = pipeline | f"Keys-{label}" >> beam.Create(range(BIG_COUNT)) | f"Big-{label}" >> beam.Map(repetitive)
    staged = ((small, big) | f"All-{label}" >> beam.Flatten()
              | f"Hash-{label}" >> beam.Map(hash_document)
              | f"Stage-{label}" >> StageAndFingerprint(str(output)))
    deduplicated = staged.fingerprints | f"Dedup-{label}" >> HashDedup()
    return {"staged": staged.staged, "survivors": deduplicated.survivors,
            "duplicates": deduplicated.duplicates} | f"Write-{label}" >> CompressWrite(str(output), codec, level)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    """One pipeline writes every variant: {(codec, level): output dir}."""
    root = tmp_path_factory.mktemp("compress_write")
    outputs = {}
    with TestPipeline() as pipeline:
        for codec, level in VARIANTS:
            outputs[(codec, level)] = root / f"{codec}-{level}"
            _write(pipeline, outputs[(codec, level)], codec, level, f"{codec}-{level}")
    return outputs


def read_dir(output: Path) -> dict[str, list[dict]]:
    """{shard file name: its records}."""
    shards = {}
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            shards[shard.name] = list(fastavro.reader(handle))
    return shards


def big_shard(output: Path) -> Path:
    [name] = [name for name, records in read_dir(output).items()
              if {record["source_file"] for record in records} == {"big.warc.gz"}]
    return output / name


@pytest.mark.parametrize("codec,level", VARIANTS)
@pytest.mark.slow
def test_every_codec_writes_files_fastavro_reads_with_the_schema(written, codec, level):
    output = written[(codec, level)]
    shards = read_dir(output)
    assert sorted(path.name for path in output.iterdir()) == sorted(shards)  # nothing else, no staging left
    assert not (output / STAGING_DIR).exists()
    # One shard per input file that gave documents, numbered in the order of the input paths.
    assert sorted(shards) == [f"corpus-{index:05d}-of-00003.avro" for index in range(3)]
    assert [{record["source_file"] for record in records} for records in shards.values()] == \
        [{"a.warc.gz"}, {"b.warc.gz"}, {"big.warc.gz"}]
    for name in shards:
        assert SHARD_NAME.match(name)
        with (output / name).open("rb") as handle:
            reader = fastavro.reader(handle)
            assert reader.codec == codec
            assert [field["name"] for field in reader.writer_schema["fields"]] == list(SCHEMA_FIELDS)
            assert reader.metadata.get("webcorpus.content_hash") == "sha256"
    records = [record for records in shards.values() for record in records]
    # The duplicate (captured a day later) is dropped; its survivor lists it.
    by_url = {record["url"]: record for record in records}
    assert sorted(by_url) == sorted(["https://a.example.org/1", "https://a.example.org/2", "https://b.example.org/3"]
                                    + [repetitive(k).capture.url for k in range(BIG_COUNT)])
    survivor = by_url["https://a.example.org/1"]
    assert survivor["duplicate_count"] == 1
    assert survivor["duplicate_urls"] == ["https://b.example.org/copy"]
    assert survivor["duplicate_record_ids"] == ["<urn:uuid:https://b.example.org/copy>"]
    for original in SMALL[:2] + SMALL[3:] + [repetitive(k) for k in range(BIG_COUNT)]:
        expected = avro_record(hash_document(original))
        if original.capture.url == survivor["url"]:
            expected.update(duplicate_count=1, duplicate_urls=["https://b.example.org/copy"],
                            duplicate_record_ids=["<urn:uuid:https://b.example.org/copy>"])
            expected[RECORD_DIGEST] = record_digest(expected)
        assert by_url[original.capture.url] == expected
        assert by_url[original.capture.url]["content_hash"] == content_hash(original.html)


@pytest.mark.parametrize("codec,low,high", [("deflate", 0, 9), ("xz", 0, 9), ("bzip2", 1, 9)])
@pytest.mark.slow
def test_the_level_is_honoured(written, codec, low, high):
    size = {level: big_shard(written[(codec, level)]).stat().st_size for level in (low, high)}
    assert size[low] > size[high] * 1.2, size


@pytest.mark.slow
def test_compressed_files_are_smaller_than_null(written):
    null = big_shard(written[("null", None)]).stat().st_size
    for codec, level in VARIANTS:
        if codec not in ("null", "snappy") and (codec, level) != ("deflate", 0):  # no entropy coding in these
            assert big_shard(written[(codec, level)]).stat().st_size < null * 0.8, codec


# --- levels ----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec,default", [("deflate", 6), ("zstandard", 9), ("xz", 6), ("bzip2", 9),
                                           ("snappy", None), ("null", None)])
def test_resolve_level_default(codec, default):
    assert resolve_level(codec, None) == default


@pytest.mark.parametrize("codec,levels", [("deflate", range(0, 10)), ("zstandard", range(1, 23)),
                                          ("xz", range(0, 10)), ("bzip2", range(1, 10))])
def test_resolve_level_accepts_the_range(codec, levels):
    assert [resolve_level(codec, level) for level in levels] == list(levels)


@pytest.mark.parametrize("codec,level", [("deflate", -1), ("deflate", 10), ("zstandard", 0), ("zstandard", 23),
                                         ("xz", -1), ("xz", 10), ("bzip2", 0), ("bzip2", 10), ("snappy", 1),
                                         ("null", 0)])
def test_resolve_level_rejects_levels_out_of_range(codec, level):
    with pytest.raises(ValueError, match=codec):
        resolve_level(codec, level)


@pytest.mark.parametrize("codec", ["gzip", "lz4", "", "DEFLATE", "brotli"])
def test_resolve_level_rejects_unknown_codecs(codec):
    with pytest.raises(ValueError, match="unknown codec"):
        resolve_level(codec, None)


def test_compress_write_rejects_a_bad_level_when_built():
    with pytest.raises(ValueError):
        CompressWrite("/tmp/never-written", "deflate", 11)
    with pytest.raises(ValueError):
        CompressWrite("/tmp/never-written", "lz4", None)


def test_schema_fields_are_document_fields():
    assert set(CODECS) == {"deflate", "snappy", "zstandard", "xz", "bzip2", "null"}
    assert set(SCHEMA_FIELDS) - {RECORD_DIGEST} <= (set(Document.__dataclass_fields__)
                                                   | set(Capture.__dataclass_fields__))
    assert [field["name"] for field in CORPUS_SCHEMA["fields"]] == list(SCHEMA_FIELDS)
    assert SCHEMA_FIELDS[-1] == RECORD_DIGEST


def test_only_the_compat_module_relies_on_fastavros_private_modules():
    import ast

    relying = set()
    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "transforms").rglob("*.py")) + sorted((root / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.startswith("fastavro._") for name in names) or "fastavro._" in ast.unparse(node):
                relying.add(path.relative_to(root).as_posix())
    assert relying == {"transforms/compat/fastavro_compat.py"}


@pytest.mark.parametrize("codec, compress", [("xz", lambda data: lzma.compress(data, preset=0)),
                                             ("bzip2", lambda data: bz2.compress(data, 1))], ids=["xz", "bzip2"])
def test_fastavros_writer_compresses_at_the_level_it_is_given(tmp_path, codec, compress):
    """With transforms/compat/fastavro_compat.py's block writers: fastavro's writer calls them with the level."""
    from transforms.compat.fastavro_compat import bzip2_block, xz_block

    assert fastavro._write.BLOCK_WRITERS[codec] is {"xz": xz_block, "bzip2": bzip2_block}[codec]
    schema = {"type": "record", "name": "R", "fields": [{"name": "x", "type": "string"}]}
    path = tmp_path / "x.avro"
    with open(path, "wb") as handle:
        fastavro.writer(handle, schema, [{"x": "abc" * 1000}], codec=codec,
                        codec_compression_level=0 if codec == "xz" else 1)
    with open(path, "rb") as handle:
        [block] = list(fastavro.block_reader(handle))
    with open(path, "rb") as handle:
        data = handle.read()
    assert compress(fastavro_encoded(schema, {"x": "abc" * 1000})) in data and block.num_records == 1


def test_another_fastavro_release_is_refused_in_one_line(monkeypatch):
    from transforms.compat.fastavro_compat import UnsupportedFastavro, honour_compression_levels

    monkeypatch.setattr(fastavro, "__version__", "1.14.0")
    with pytest.raises(UnsupportedFastavro) as refused:
        honour_compression_levels()
    assert str(refused.value) == ("webcorpus replaces fastavro 1.13's xz and bzip2 block writers, and fastavro "
                                  "1.14.0 is installed: install fastavro>=1.13,<1.14 (requirements.txt)")


def test_a_block_writer_that_fastavro_no_longer_has_is_named_in_one_line(monkeypatch):
    from transforms.compat.fastavro_compat import UnsupportedFastavro, honour_compression_levels

    monkeypatch.delitem(fastavro._write.BLOCK_WRITERS, "bzip2")
    with pytest.raises(UnsupportedFastavro) as refused:
        honour_compression_levels()
    assert "\n" not in str(refused.value)
    assert "has no fastavro._write.BLOCK_WRITERS entry for bzip2, which webcorpus replaces" in str(refused.value)
    assert "bzip2" not in fastavro._write.BLOCK_WRITERS


def fastavro_encoded(schema, record) -> bytes:
    import io

    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


# --- Records written from their encoded parts ---------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
CHOSEN_FIELDS = st.one_of(st.none(), st.lists(st.sampled_from(FIELD_NAMES[:-1]), min_size=1, unique=True))


@st.composite
def corpus_documents(draw) -> Document:
    return document(
        url=draw(TEXT), warc_record_id=draw(TEXT), warc_date=draw(TEXT), source_file="f.warc.gz",
        source_offset=draw(st.integers(0, 2**40)), http_status=200, content_type=draw(TEXT),
        charset=draw(TEXT), charset_source=draw(TEXT), title=draw(TEXT), links=draw(st.lists(TEXT, max_size=3)),
        lang=draw(TEXT), meta=draw(st.dictionaries(TEXT, TEXT, max_size=4)), language=draw(TEXT),
        language_confidence=draw(st.floats(0, 1)), html=draw(TEXT), text=draw(TEXT), clean_text=draw(TEXT),
        content_hash=draw(TEXT), raw_bytes=draw(st.integers(0, 2**40)), cleaned_bytes=draw(st.integers(0, 2**40)),
        minimized_bytes=draw(st.integers(0, 2**40)), dropped_letter_share=draw(st.floats(0, 1)))


@st.composite
def written_records(draw):
    """Documents, each with the duplicate lists and near-duplicate count it is written with (None: its own)."""
    docs = draw(st.lists(corpus_documents(), min_size=1, max_size=6))
    duplicates = draw(st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.lists(TEXT, max_size=3),
                                                                st.lists(TEXT, max_size=3))),
                               min_size=len(docs), max_size=len(docs)))
    near_counts = draw(st.lists(st.integers(0, 10**6), min_size=len(docs), max_size=len(docs)))
    return list(zip(docs, duplicates, near_counts))


def staging_round_trip(layout: RecordLayout, staged: dict) -> dict:
    out = io.BytesIO()
    fastavro.writer(out, layout.staging_schema, [staged])
    out.seek(0)
    [read] = list(fastavro.reader(out))
    return read


@settings(max_examples=150, deadline=None)
@given(chosen=CHOSEN_FIELDS, near_dedup=st.booleans(), records=written_records(), codec=st.sampled_from(sorted(CODECS)),
       sync_interval=st.sampled_from([None, 1, 200, 4096]))
@pytest.mark.slow
def test_records_written_from_their_staged_parts_are_fastavros_bytes(chosen, near_dedup, records, codec,
                                                                     sync_interval):
    """Whatever the fields, meta's order, the duplicate lists and the block size, a record encoded at staging
    and joined with its duplicate lists when written is the same file, byte for byte, as fastavro's writer
    gives its record dict with its `record_digest`. (`sync_interval` None: a block is full with the first
    record.)"""
    near_dedup = near_dedup or NEAR_DUPLICATE_COUNT in (chosen or ())
    fields = resolve_fields(chosen, near_dedup)
    layout, level = RecordLayout(fields), resolve_level(codec, None)
    if sync_interval is None:
        sync_interval = len(layout.record(layout.staged(records[0][0]), None, records[0][2]))
    expected, actual = io.BytesIO(), io.BytesIO()
    writer = fastavro.write.Writer(expected, fastavro.parse_schema(corpus_schema(fields)), codec=codec,
                                   compression_level=level, sync_interval=sync_interval, metadata=FILE_METADATA,
                                   sync_marker=b"s" * 16)
    encoded = EncodedWriter(actual, fastavro.parse_schema(corpus_schema(fields)), codec, level, sync_interval,
                            b"s" * 16)
    for doc, duplicates, near_count in records:
        written = doc if duplicates is None else doc.replace(
            duplicate_count=duplicates[0], duplicate_urls=duplicates[1], duplicate_record_ids=duplicates[2])
        record = {name: written.fields()[name] for name in fields[:-1] if name != NEAR_DUPLICATE_COUNT}
        if NEAR_DUPLICATE_COUNT in fields:
            record[NEAR_DUPLICATE_COUNT] = near_count
        duplicate_count = 0 if duplicates is None else duplicates[0]
        if SIGNALS in fields:
            # Written with the sizes of its clusters (of exact duplicates, and of near ones with near-dedup).
            clusters = {"dedup/exact_cluster": 1.0 + duplicate_count}
            if NEAR_DUPLICATE_COUNT in fields:
                clusters["dedup/near_cluster"] = 1.0 + near_count
            record[SIGNALS] = dict(sorted({**doc.signals, **clusters}.items()))
        record[RECORD_DIGEST] = record_digest(record)
        writer.write(record)
        staged = staging_round_trip(layout, layout.staged(doc))
        encoded.write(layout.record(staged, None if duplicates is None else layout.duplicates_of(*duplicates),
                                    near_count, duplicate_count))
    writer.flush()
    encoded.flush()
    assert actual.getvalue() == expected.getvalue()


def test_full_blocks_compressed_together_on_an_executor_make_the_same_file():
    """The blocks that fill are compressed on the executor, `together` at once (the first ones wait there for each
    other: a writer that waited for each block before giving the next would break the barrier), and written in
    order; the last one where `flush` is called: the same bytes as all of them written in turn."""
    layout = RecordLayout()
    records = [layout.record(layout.staged(doc)) for doc in SMALL] * 6
    sequential, pipelined = io.BytesIO(), io.BytesIO()
    submitted = []
    together = 2
    barrier = threading.Barrier(together, timeout=30)

    def met(function, *args):
        barrier.wait()
        return function(*args)

    class Recording(ThreadPoolExecutor):
        def submit(self, function, *args):
            submitted.append(args[0].num_records)
            if len(submitted) <= together:
                return super().submit(met, function, *args)
            return super().submit(function, *args)

    sync_interval = sum(map(len, records)) // 5
    with Recording(together) as compressing:
        for out, executor in ((sequential, None), (pipelined, compressing)):
            writer = EncodedWriter(out, fastavro.parse_schema(CORPUS_SCHEMA), "zstandard", 9, sync_interval, b"s" * 16,
                                   executor, together)
            for record in records:
                writer.write(record)
            writer.flush()
    assert pipelined.getvalue() == sequential.getvalue()
    blocks = [block.num_records for block in fastavro.block_reader(io.BytesIO(sequential.getvalue()))]
    assert len(blocks) > 2 and submitted == blocks[:-1]


def test_a_writer_without_a_sync_marker_ends_every_block_with_its_own():
    """Without a sync marker given, the writer draws one, and the blocks compressed on the executor end with it
    too: the file reads back whole."""
    layout = RecordLayout()
    records = [layout.record(layout.staged(doc)) for doc in SMALL] * 6
    out = io.BytesIO()
    with ThreadPoolExecutor(2) as compressing:
        writer = EncodedWriter(out, fastavro.parse_schema(CORPUS_SCHEMA), "zstandard", 9,
                               sum(map(len, records)) // 5, b"", compressing, 2)
        for record in records:
            writer.write(record)
        writer.flush()
    assert len(list(fastavro.reader(io.BytesIO(out.getvalue())))) == len(records)


def test_a_staging_file_of_other_fields_is_refused(tmp_path):
    [doc] = SMALL[:1]
    path = str(tmp_path / "staged.avro")
    layout = RecordLayout(resolve_fields(("url", "html")))
    run = StagingRun(path, layout)
    run.write(layout.staged(doc))
    run.close()
    assert [record["source_offset"] for record in staged_records([path], str(tmp_path), layout)] == [
        doc.capture.source_offset]
    with pytest.raises(ValueError, match="staged for records of other fields"):
        list(staged_records([path], str(tmp_path), RecordLayout()))


def test_a_staging_file_is_digested_only_for_a_completion_record(tmp_path):
    # A unit's completion record (resume) holds its staging files' digests; a build without resume records hashes
    # none of the bytes it stages.
    [doc] = SMALL[:1]
    layout = RecordLayout()
    digested, plain = (StagingRun(str(tmp_path / f"{name}.avro"), layout, digesting=digesting)
                       for name, digesting in (("digested", True), ("plain", False)))
    for run in (digested, plain):
        run.write(layout.staged(doc))
        run.close()
    written = (tmp_path / "digested.avro").read_bytes()
    assert (digested.digest().sha256, digested.digest().size) == (hashlib.sha256(written).hexdigest(), len(written))
    with pytest.raises(ValueError, match="staged without a digest"):
        plain.digest()


def test_shards_are_compressed_and_written_on_threads_of_their_own_into_the_same_files(tmp_path, monkeypatch):
    """WriteShard hands each shard's last block (a default shard's only one) to a thread, so that compressing it
    (zstd releases the GIL) overlaps the next shard's reading; the files are the ones written in line."""
    from transforms.stages.compress_write import compress_write_transform as write

    flushed_on = []
    flush = EncodedWriter.flush

    def noted_flush(self):
        flushed_on.append(threading.current_thread().name)
        flush(self)

    monkeypatch.setattr(EncodedWriter, "flush", noted_flush)
    docs = [doc(f"<div>page {k} of site {k % 5}</div>", f"https://s{k % 5}.example.org/{k}", f"f{k % 5}.warc.gz",
                offset=k) for k in range(40)]

    def build(output: Path, **writing):
        with TestPipeline() as pipeline:
            staged = (pipeline | beam.Create(docs) | beam.Map(hash_document)
                      | StageAndFingerprint(str(output)))
            deduplicated = staged.fingerprints | HashDedup()
            _ = {"staged": staged.staged, "survivors": deduplicated.survivors,
                 "duplicates": deduplicated.duplicates} | CompressWrite(str(output), "zstandard", None, **writing)
        return {path.name: path.read_bytes() for path in sorted(output.glob("corpus-*.avro"))}

    threaded = build(tmp_path / "threaded")
    assert len(threaded) == 5 > write.SHARDS_FINISHED_TOGETHER
    assert len(flushed_on) == 5 and all(name.startswith("write-shard") for name in flushed_on), flushed_on
    monkeypatch.setattr(write, "SHARDS_FINISHED_TOGETHER", 1)  # one shard finished at a time
    assert build(tmp_path / "one-at-a-time") == threaded
    # Blocks of 200 bytes (several a shard), compressed 1 and 3 at once: the same files.
    assert build(tmp_path / "blocks", sync_interval=200) == build(tmp_path / "blocks-together", sync_interval=200,
                                                                  compressing_threads=3)
