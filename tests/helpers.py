"""Helpers shared by the tests (fixtures are in conftest.py)."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import apache_beam as beam
import fastavro

from pipeline.sample import Capture
from transforms import vocabulary
from transforms.document import DeadLetter, Document, Skip
from transforms.stages.read_warc.read_warc import read_warc
from transforms.stages.read_warc.read_warc_transform import ReadWarcRange, WarcRestrictions


def applied_transforms(pipeline: beam.Pipeline) -> tuple[list, list]:
    """The applied transforms of a pipeline's graph: (composites, leaves), in the order visited."""
    composites, leaves = [], []

    class Visitor(beam.pipeline.PipelineVisitor):
        def enter_composite_transform(self, node):
            composites.append(node)

        def visit_transform(self, node):
            leaves.append(node)

    pipeline.visit(Visitor())
    return composites, leaves


def document(url: str = "https://example.org/", warc_record_id: str = "<urn:uuid:1>",
             warc_date: str = "2026-01-15T10:00:00Z", source_file: str = "test.warc.gz", source_offset: int = 0,
             source_range: int = 0, http_status: int = 200, content_type: str = "text/html", **fields) -> Document:
    """A `Document` as a stage receives it: its capture from these keywords, the rest of its fields as given."""
    return Document(vocabulary.Capture(warc_date, url, warc_record_id, source_file, source_offset, source_range),
                    http_status, content_type, **fields)


def about(outcome):
    """What an outcome of reading is about: a document's capture, or the record itself (a skip, a dead letter)."""
    return outcome.capture if isinstance(outcome, Document) else outcome


def page(body: str, title: str = "Test page", lang: str = "en", head: str = "") -> str:
    """A small but complete HTML page."""
    return (f'<!DOCTYPE html><html lang="{lang}"><head>{head}<title>{title}</title></head>'
            f"<body>{body}</body></html>")


def html_capture(url: str, body: str, **fields) -> Capture:
    """A 200 text/html (utf-8) capture of a page with `body`."""
    return Capture(url, page(body).encode("utf-8"), **fields)


def read_bytes(data: bytes, source_file: str = "test.warc.gz") -> list:
    """Every outcome of read_warc() on a WARC file held in memory."""
    return list(read_warc(lambda: io.BytesIO(data), source_file))


def outcomes_by_kind(outcomes: list) -> tuple[list[Document], list[Skip], list[DeadLetter]]:
    docs = [o for o in outcomes if isinstance(o, Document)]
    skips = [o for o in outcomes if isinstance(o, Skip)]
    dead = [o for o in outcomes if isinstance(o, DeadLetter)]
    assert len(docs) + len(skips) + len(dead) == len(outcomes), "an outcome of an unknown type"
    return docs, skips, dead


def compressed_frames(data: bytes, new_decompressor=lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)) -> list[tuple[int, int]]:
    """(start, end) of each gzip member (or zstd, LZ4 frame: `new_decompressor`) of `data`, found by decompressing it."""
    members = []
    start = 0
    while start < len(data):
        decompressor = new_decompressor()
        decompressor.decompress(data[start:])
        if not decompressor.eof:
            raise ValueError(f"gzip member at {start} is incomplete")
        end = len(data) - len(decompressor.unused_data or b"")  # (LZ4: None after the last frame)
        members.append((start, end))
        start = end
    return members


def wet_bytes(texts: list[tuple[str, str]], name: str = "test.warc.wet.gz") -> bytes:
    """A WET file as Common Crawl writes one, by warcio: a warcinfo record, then a `conversion` record of plain
    UTF-8 text for each (url, text), gzipped per record, its ids and dates fixed."""
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    info = writer.create_warcinfo_record(name, {"Software-Info": "ia-web-commons.1.1.10-SNAPSHOT",
                                                "Extracted-Date": "Mon, 15 Jan 2026 10:00:00 GMT"})
    info.rec_headers.replace_header("WARC-Record-ID", "<urn:uuid:00000000-0000-0000-0000-000000000000>")
    info.rec_headers.replace_header("WARC-Date", "2026-01-15T10:00:00Z")
    writer.write_record(info)
    for number, (url, text) in enumerate(texts, start=1):
        writer.write_record(writer.create_warc_record(url, "conversion", payload=io.BytesIO(text.encode("utf-8")),
                                                      warc_content_type="text/plain", warc_headers_dict={
            "WARC-Record-ID": f"<urn:uuid:00000000-0000-0000-0000-{number:012d}>",
            "WARC-Refers-To": f"<urn:uuid:10000000-0000-0000-0000-{number:012d}>",
            "WARC-Date": "2026-01-15T10:00:00Z", "WARC-Identified-Content-Language": "eng"}))
    return out.getvalue()


def input_dir(tmp_path: Path) -> Path:
    """tmp_path/in, made: a glob of a test's inputs (`in/*`) never matches a build's files."""
    directory = tmp_path / "in"
    directory.mkdir(exist_ok=True)
    return directory


def process_unit(unit, restriction=None) -> list:
    """ReadWarcRange's outputs for a unit on a tracker of `restriction` (default: its initial one), as a runner
    calls it, and the tracker done after it."""
    provider = WarcRestrictions()
    tracker = provider.create_tracker(provider.initial_restriction(unit) if restriction is None else restriction)
    reader = ReadWarcRange()
    reader.setup()
    outputs = list(reader.process(unit, tracker=tracker))
    tracker.check_done()
    return outputs


def corpus_records(output: Path) -> list[dict]:
    """Every record of the corpus shards in `output`, shard by shard."""
    records = []
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            records.extend(fastavro.reader(handle))
    return records


# Sentences a test tokenizer is trained on: every word of them is one token of it, any other word [UNK].
TOKENIZER_SENTENCES = ("the quick brown fox jumps over the lazy dog", "a page of text with words enough",
                       "every stage keeps this page")


def tiny_tokenizer_json() -> str:
    """A WordLevel tokenizer.json trained here, on `TOKENIZER_SENTENCES` (never downloaded): split on whitespace and
    punctuation, one token a word or mark."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(TOKENIZER_SENTENCES, trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    return tokenizer.to_str()
