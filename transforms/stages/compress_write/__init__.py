"""CompressWrite: the corpus as sharded Avro files, the same bytes on every build.

Files are `DIR/corpus-SSSSS-of-NNNNN.avro`, one Avro record per document with
the schema `schema.CORPUS_SCHEMA` (documented field by field in docs/output.md);
with `--format`, `.parquet` or `.jsonl.zst` (`.jsonl.gz`, `.jsonl`) files of the
same records, written from the same Avro bytes decoded (`formats`).

- `schema`: the fields a record can have, the default ones, `--fields`.
- `avro_encoding`: the codecs, a record as Avro bytes (`RecordLayout`,
  `record_digest`) and the container file (`EncodedWriter`).
- `parquet_encoding`, `jsonl_encoding`: the records as Parquet (pyarrow, fixed
  row groups) and JSON Lines; `formats`: each format's codecs, extension and
  shard writer.
- `staging`: the staging files, written and merged back by offset.
- `compress_write`: the shards' names, the sync marker, a shard finished and the shards published;
  `compress_write_transform`: `StageDocuments`, `WriteShard` and the `CompressWrite` and
  `StageAndFingerprint` transforms the pipeline uses.

Writing has two halves around HashDedup, so that no document crosses a
shuffle and nothing holds all documents:

1. `StageDocuments`, fused with reading: each document's record is encoded
   (`RecordLayout`: Avro bytes, in parts around the fields filled in later)
   and appended to a staging file of its unit of reading (an input file, or
   a byte range of a big one; in `DIR/.webcorpus-staging/`), and only its
   fingerprint goes on to HashDedup. A staging file is a run of one unit's
   records in rising offset, named for its bundle attempt; fused with
   reading, a unit has one.
2. `CompressWrite`: per unit, every staging file the runner committed for
   it is read back, merged by offset (each offset once), duplicates are
   left out, survivors get their duplicate lists, each
   record its `record_digest` (of every other field, once they are final),
   and the records' bytes are written, compressed, to that unit's corpus
   shard (`EncodedWriter`).
   Shards are numbered in the sorted order of (input path, range start) of
   the units that gave documents. Each attempt at a shard writes a file of
   its own (named for the attempt, a uuid), so a retry and its zombie, or a
   failed attempt, never share or tear a file; when all are written, one
   committed attempt of each shard is renamed to the shard's final name in
   one step, and the others go with the staging directory, so a failed run
   never leaves files that look complete. (`python -m pipeline` stages its
   whole build in a directory of its own and publishes it at the end:
   `pipeline/publish.py`.)

So the shard of a record and its place in the shard follow from the input
alone, and the Avro sync marker is derived from the build's options: the same
inputs and options give byte-identical files whatever the runner or the
number of workers.
"""
