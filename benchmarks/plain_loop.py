"""The pipeline's work as a plain Python loop, for `benchmarks.throughput`.

The same pure functions in the same order as `python -m pipeline`
(`stage_documents`, which the compression study runs too): read_warc,
decode_document, HtmlCleaner, minimize_document, hash_document (documents
without text skipped), deduplication by hash in a dict (with HashDedup's
survivor rule), and one Avro file of CompressWrite's records (encoded with
its `RecordLayout`, written with its `EncodedWriter`), codec and block size.
No Beam, no side outputs, no report.

    python -m benchmarks.plain_loop --input 'DIR/*.warc.gz' --output DIR [--codec CODEC] [--level N]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections import Counter
from typing import Iterable, Iterator

from pipeline.beam_import import import_beam

# The stages' modules import Beam: imported as `python -m pipeline` imports it, so that the two start alike.
import_beam()

from transforms.stages.charset import decode_document  # noqa: E402
from transforms.corpus.corpus_format import FILE_PREFIX  # noqa: E402
from transforms.stages.compress_write.avro_encoding import (DEFAULT_CODEC, DEFAULT_SYNC_INTERVAL,  # noqa: E402
                                                            EncodedWriter, RecordLayout, resolve_level)
from transforms.stages.compress_write.schema import PARSED_SCHEMA  # noqa: E402
from transforms.document import Document  # noqa: E402
from transforms.stages.hash_dedup import has_text, hash_document  # noqa: E402
from transforms.stages.clean_html.clean_html import HtmlCleaner  # noqa: E402
from transforms.stages.minimize_text import minimize_document  # noqa: E402
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc  # noqa: E402

def survivor_order(doc: Document):
    # HashDedup's rule (`Capture`'s order).
    return doc.capture


def stage_documents(paths: Iterable[str], counts: Counter | None = None) -> Iterator[Document]:
    """The documents of these WARC files (in their order, each file's in file order) after the pipeline's
    stage functions: read_warc, decode_document, HtmlCleaner, minimize_document, hash_document. A document
    a stage fails on (the pipeline's dead letter) and one left without text (its `no-text` skip) are left
    out; `counts` gets the records `read`, the `documents` among them, those that `failed` and `no_text`."""
    counts = Counter() if counts is None else counts
    cleaner = HtmlCleaner()
    for path in paths:
        for outcome in read_warc(lambda path=path: open_uncompressed(path), path):
            counts["read"] += 1
            if not isinstance(outcome, Document):
                continue
            counts["documents"] += 1
            try:
                doc = minimize_document(cleaner(decode_document(outcome)))
            except Exception:  # noqa: BLE001 - the pipeline routes these to dead letters
                counts["failed"] += 1
                continue
            if not has_text(doc):  # HashDocuments' `no-text` skip
                counts["no_text"] += 1
                continue
            yield hash_document(doc)


def build(paths: list[str], output: str, codec: str = DEFAULT_CODEC, level: int | None = None,
          sync_interval: int = DEFAULT_SYNC_INTERVAL) -> dict:
    survivors: dict[str, list] = {}  # content hash -> [survivor, dropped captures]
    counts = Counter(read=0, documents=0, failed=0, no_text=0, kept=0, duplicates=0)
    raw_bytes = 0
    for doc in stage_documents(paths, counts):
        group = survivors.get(doc.content_hash)
        if group is None:
            survivors[doc.content_hash] = [doc, []]
            continue
        if survivor_order(doc) < survivor_order(group[0]):
            group[0], doc = doc, group[0]
        group[1].append(doc.replace(html="", text="", links=[], meta={}))
    os.makedirs(output, exist_ok=True)
    path = os.path.join(output, f"{FILE_PREFIX}-00000-of-00001.avro")
    with open(path, "wb") as handle:
        layout = RecordLayout()
        writer = EncodedWriter(handle, PARSED_SCHEMA, codec, resolve_level(codec, level), sync_interval)
        for survivor, dropped in survivors.values():
            dropped.sort(key=survivor_order)
            if dropped:
                survivor = survivor.replace(duplicate_count=len(dropped),
                                            duplicate_urls=[doc.capture.url for doc in dropped],
                                            duplicate_record_ids=[doc.capture.warc_record_id for doc in dropped])
            writer.write(layout.encoded(survivor))
            raw_bytes += survivor.raw_bytes
            counts["kept"] += 1
            counts["duplicates"] += len(dropped)
        writer.flush()
    counts["raw_html_bytes"] = raw_bytes
    counts["written_bytes"] = os.path.getsize(path)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plain_loop", description=__doc__.splitlines()[0])
    parser.add_argument("--input", action="append", required=True, metavar="PATTERN")
    parser.add_argument("--output", required=True, metavar="DIR")
    parser.add_argument("--codec", default=DEFAULT_CODEC)
    parser.add_argument("--level", type=int, default=None)
    parser.add_argument("--block-size", type=int, default=DEFAULT_SYNC_INTERVAL, dest="sync_interval")
    args = parser.parse_args(argv)
    paths = sorted(path for pattern in args.input for path in glob.glob(pattern))
    if not paths:
        parser.error("no input file matches")
    start = time.perf_counter()
    counts = build(paths, args.output, args.codec, args.level, args.sync_interval)
    counts["seconds"] = round(time.perf_counter() - start, 3)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
