"""The records the study measures: a corpus the pipeline wrote, or the pipeline's records of WARC files."""

from __future__ import annotations

from typing import Iterable

from apache_beam.io.filesystems import FileSystems

from benchmarks.plain_loop import stage_documents
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.stages.compress_write.avro_encoding import avro_record
from transforms.document import Document
from transforms.stages.hash_dedup import deduplicate
from transforms.corpus.read_corpus import corpus_files, iter_corpus
from transforms.vocabulary import Fingerprint


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


def corpus_documents(warc_paths: Iterable[str]) -> list[Document]:
    """The documents the pipeline writes for these WARC files, in its order
    (input files in the given order, each file's documents in file order),
    from its stage functions run in process (`stage_documents`: a document a
    stage fails on, the pipeline's dead letters, and one without text, its
    no-text skips, are left out); duplicates are left out, and survivors
    list their duplicates, by HashDedup's own rule."""
    documents = list(stage_documents(warc_paths))
    notes, duplicates = deduplicate(Fingerprint.of(document) for document in documents)
    notes = {(note.source_file, note.source_offset): note for note in notes}
    dropped = {(duplicate.source_file, duplicate.source_offset) for duplicate in duplicates}
    survivors = []
    for document in documents:
        key = (document.capture.source_file, document.capture.source_offset)
        if key in dropped:
            continue
        if key in notes:
            document = document.replace(duplicate_count=notes[key].duplicate_count,
                                        duplicate_urls=list(notes[key].duplicate_urls),
                                        duplicate_record_ids=list(notes[key].duplicate_record_ids))
        survivors.append(document)
    return survivors


def load_records(location: str) -> list[dict]:
    """The corpus records of a directory (or pattern) of Avro corpus files,
    or of the WARC files a pattern matches."""
    try:
        avro_files = [path for path in corpus_files(location) if path.endswith(".avro")]
        if avro_files:
            records = list(iter_corpus(location))
        else:
            warc_files = sorted(meta.path for meta in FileSystems.match([location])[0].metadata_list)
            records = [avro_record(document) for document in corpus_documents(warc_files)]
    except Exception as error:  # noqa: BLE001 - any file system's or reader's failure is a usage error here
        raise UsageError(f"cannot read --input {location}: {type(error).__name__}: {error}") from error
    if not records:
        raise UsageError(f"--input {location} holds no document: give a directory of corpus-*.avro files "
                         "or a pattern that matches WARC files")
    return records
