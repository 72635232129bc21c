"""The compression study: what each Avro codec, level and block size costs on a corpus.

    python -m benchmarks.compression_study --input DIR_OR_WARC_PATTERN --output REPORT_DIR

`--input` is either a directory of `corpus-*.avro` files that the pipeline
wrote, or WARC files, which are run through the pipeline's stage functions
in process (`benchmarks.plain_loop.stage_documents`, then one document per
content hash by HashDedup's rule) to get the same records (`records`).

Every setting writes the records into memory with the pipeline's own Avro
writer (schema, record conversion, file metadata and block writers of
`transforms.stages.compress_write.avro_encoding`) and reads them back with `fastavro.reader`,
checking that they come back equal. For each setting it records the
written size and, for writing and for reading, the median wall and CPU
seconds over `--repeats` runs (one run when the first takes over
`--single-run-over` seconds) and the peak memory (growth of the process's
peak resident memory, Linux only). All levels of every codec are measured
at the pipeline's default block size; the other block sizes at each codec's
default level. By default an evenly spaced sample of the documents, about
`--sample-mb` MB of records, is measured, which keeps the study of the dev
corpus within minutes; `--sample-mb 0` measures every document.

REPORT_DIR gets `compression.json` (every measurement) and
`compression.png` (size against compression and decompression CPU time,
with the Pareto front: `chart`). docs/compression.md has the results on
the dev corpus. The settings, the measuring and the sample are in
`measure`, the report and its tables in `report`, the command line in `cli`.
"""
