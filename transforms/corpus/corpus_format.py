"""What a reader of a finished corpus needs to check it, without Beam: the shards' names and the two digests.

`transforms.corpus.read_corpus` and `pipeline.verify` read corpora with fastavro alone (importing Beam takes
seconds and logs warnings a reader never asked for); `transforms.stages.compress_write` and `hash_dedup`, which write
them, take these definitions from here.
"""

from __future__ import annotations

import hashlib
import io
import re

import fastavro

FILE_PREFIX = "corpus"
HASH_ALGORITHM = "sha256"
RECORD_DIGEST = "record_digest"
# A shard's extension tells its format (`--format`) and, for JSON Lines, its compression.
SHARD_EXTENSIONS = (".avro", ".parquet", ".jsonl.zst", ".jsonl.gz", ".jsonl")
SHARD_NAME = re.compile(rf"{FILE_PREFIX}-\d{{5}}-of-\d{{5}}({'|'.join(map(re.escape, SHARD_EXTENSIONS))})\Z")

# 64 bits: it is there to catch damage (content_hash names the content), and a damaged record passes it
# once in 2^64. Digests do not compress: all 256 bits would cost the developer corpus 0.9 % of its size,
# 128 bits 0.5 %, 64 bits 0.25 %.
DIGEST_HEX_DIGITS = 16


def content_hash(div_html: str) -> str:
    return hashlib.sha256(div_html.encode("utf-8")).hexdigest()


def digest_in(parsed_schema, record: dict) -> str:
    """The `record_digest` of a record's fields, encoded with `parsed_schema`: those fields, in schema order,
    without `record_digest` itself; `meta`'s and `signals`' entries sorted by key, so that their order is no
    difference."""
    digested = io.BytesIO()
    for name in ("meta", "signals"):
        if name in record:
            record = dict(record, **{name: dict(sorted(record[name].items()))})
    fastavro.schemaless_writer(digested, parsed_schema, record)
    return hashlib.sha256(digested.getvalue()).hexdigest()[:DIGEST_HEX_DIGITS]


def digested_schema(written_schema: dict):
    """The parsed schema `record_digest` is computed in, from the schema a shard was written with: every
    field but `record_digest`, in the written order (which is the schema order of the fields chosen)."""
    fields = [field for field in written_schema["fields"] if field["name"] != RECORD_DIGEST]
    return fastavro.parse_schema(dict(written_schema, fields=fields))
