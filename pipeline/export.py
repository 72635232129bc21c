"""`python -m pipeline.export CORPUS --format parquet --output DIR`: a finished Avro corpus in another format,
without building it again.

Each shard `corpus-SSSSS-of-NNNNN.avro` becomes `corpus-SSSSS-of-NNNNN.parquet` (or `.jsonl.zst`, `.jsonl.gz`,
`.jsonl`), with the same records in the same order and the same fields, written as a build of that format
writes them (`transforms.stages.compress_write.formats`): so the export is the same bytes as a build with `--format`, and keeps
every `record_digest`. The corpus is verified on the way: its manifest's checksums first (when it has one), then
every block and every record's digests as it is read; on any damage nothing is left of DIR. DIR gets the
corpus's `report.json` and content index (`index-*.bin`) and a manifest of its own (inputs: the Avro shards;
options: the format, codec and level, and the corpus's near-dedup settings), so `python -m pipeline.verify DIR` checks the export like a build.
The export reads only regular files of the corpus, never through a symbolic link: a link there (not what a build
writes) would have it copy, into an export others may read, a file only its user may read; the corpus is then
damaged.

Exit status 0 when exported, 1 when the corpus is damaged, 2 on a usage error (DIR not empty, CORPUS no Avro
corpus, a codec the format does not have).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys

import fastavro

from pipeline.verify import check_manifest, check_outputs
from pipeline.verify_index import index_names
from transforms.corpus.corpus_format import FILE_PREFIX
from transforms.report.manifest import MANIFEST_NAME, FileDigest, build_manifest, digest_file, write_manifest
from transforms.corpus.read_corpus import Problem, corpus_files, scan_avro
from transforms.filesystems.regular_files import file_contents, open_regular
from transforms.report.report import REPORT_NAME
from transforms.stages.compress_write.formats import CODECS, resolve_codec, row_writer, shard_extension

EXPORT_FORMATS = ("parquet", "jsonl")


class CorpusDamaged(Exception):
    """The corpus being exported is not what its build wrote."""


def open_in_corpus(path: str):
    """A file of the corpus opened for reading: a regular file only, not through a link. Raises CorpusDamaged."""
    try:
        return open_regular(path, follow_links=False)
    except OSError as error:
        raise CorpusDamaged(f"{os.path.basename(path)}: {error.strerror or error}") from error


def written_fields(path: str) -> tuple[str, ...]:
    """The fields of an Avro shard's records, from its header."""
    with open_in_corpus(path) as handle:
        try:
            return tuple(field["name"] for field in fastavro.reader(handle).writer_schema["fields"])
        except Exception as error:  # noqa: BLE001 - any failure here means the header is damaged
            raise CorpusDamaged(f"{os.path.basename(path)}: header: unreadable Avro header: {str(error)[:200]}") \
                from error


def export_shard(source: str, target: str, file_format: str, codec: str, level: int | None) -> tuple[int, FileDigest]:
    """Writes the records of the Avro shard `source` to `target`, each verified as it is read; returns their count,
    and the digest of `source` (from the bytes read: a shard is read once)."""
    records = 0
    fields = written_fields(source)
    with open(target, "xb") as handle, file_contents(source, follow_links=False) as data:
        digest = FileDigest(source, len(data), hashlib.sha256(data).hexdigest())
        writer = row_writer(file_format, handle, fields, codec, level)
        try:
            for item in scan_avro(data, os.path.basename(source)):
                if isinstance(item, Problem):
                    raise CorpusDamaged(str(item))
                writer.write(item)
                records += 1
        finally:
            writer.close()
    return records, digest


def export(corpus: str, output: str, file_format: str, codec: str, level: int | None) -> list[str]:
    """Exports `corpus` into `output` (an empty or new directory); returns the shards written. Raises
    CorpusDamaged, having removed what it wrote."""
    manifest = None
    if os.path.islink(os.path.join(corpus, MANIFEST_NAME)):
        raise CorpusDamaged(f"{MANIFEST_NAME}: a symbolic link, not followed")
    if os.path.exists(os.path.join(corpus, MANIFEST_NAME)):
        manifest, problems = check_manifest(corpus)
        if manifest is not None:
            problems += check_outputs(corpus, manifest)
        if problems:
            more = f"; and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise CorpusDamaged(f"{problems[0]}{more}")
    shards = corpus_files(corpus)
    created = not os.path.exists(output)
    os.makedirs(output, exist_ok=True)
    written = []
    try:
        inputs, outputs = [], []
        for source in shards:
            name = os.path.basename(source).removesuffix(".avro") + shard_extension(file_format, codec)
            written.append(os.path.join(output, name))
            records, read = export_shard(source, written[-1], file_format, codec, level)
            inputs.append(read)
            outputs.append(digest_file(written[-1], records))
        # The report, and the content index (the same records: an export can be extended, `--extend`).
        copied = [REPORT_NAME] + ([] if manifest is None else index_names(manifest))
        for name in copied:
            if os.path.lexists(os.path.join(corpus, name)):
                written.append(os.path.join(output, name))
                with open_in_corpus(os.path.join(corpus, name)) as source, open(written[-1], "xb") as copy:
                    shutil.copyfileobj(source, copy)
                outputs.append(digest_file(written[-1]))
        options = {"format": file_format, "codec": codec, "level": level, "exported_from": os.path.abspath(corpus)}
        if manifest is not None:
            options["exported_manifest_sha256"] = manifest["manifest_sha256"]
            if "near_dedup" in manifest["options"]:
                # What the index's signatures are (and what an extension of the export must match).
                options["near_dedup"] = manifest["options"]["near_dedup"]
        # The manifest last: an export cut short has none, and verify says it is not complete.
        write_manifest(build_manifest(inputs, outputs, options), output)
    except BaseException:
        for path in written:
            if os.path.exists(path):
                os.remove(path)
        if created:
            os.rmdir(output)
        raise
    return written[:len(shards)]


def refuse(message: str) -> int:
    print(f"python -m pipeline.export: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="the output directory of a webcorpus build in Avro")
    parser.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="the format to write")
    parser.add_argument("--codec", default=None,
                        help="the format's codec: " + "; ".join(f"{name}: {', '.join(CODECS[name])}"
                                                                for name in EXPORT_FORMATS) + " (default zstd)")
    parser.add_argument("--level", type=int, default=None, help="the codec's level (as for python -m pipeline)")
    parser.add_argument("--output", required=True, metavar="DIR", help="a new or empty directory for the export")
    args = parser.parse_args(argv)
    try:
        codec, level = resolve_codec(args.format, args.codec, args.level)
    except ValueError as error:
        return refuse(str(error))
    if os.path.exists(args.output) and (not os.path.isdir(args.output) or os.listdir(args.output)):
        return refuse(f"--output {args.output} exists and is not an empty directory; choose a new one")
    if not os.path.isdir(args.corpus) or not any(path.endswith(".avro") for path in corpus_files(args.corpus)):
        return refuse(f"{args.corpus} holds no Avro corpus ({FILE_PREFIX}-SSSSS-of-NNNNN.avro)")
    try:
        shards = export(args.corpus, args.output, args.format, codec, level)
    except CorpusDamaged as error:
        print(f"python -m pipeline.export: {args.corpus} is damaged, nothing exported: {error}", file=sys.stderr)
        return 1
    print(f"{args.output}: {len(shards)} {args.format} shards and {MANIFEST_NAME}, from {args.corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
