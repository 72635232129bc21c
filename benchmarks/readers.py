"""Reading WARC files: webcorpus's reader against warcio alone and FastWARC, and gzip inflated by zlib and zlib-ng.

    python -m benchmarks.readers [--input GLOB] [--reps 5]

`--input` defaults to the developer corpus's files (`devcorpus.default_corpus()`: `warc/*.warc.gz`).
Each way of reading reads every file, in one process, `--reps` times, the
order turned round each time; the figure is the median CPU time of a pass:

- `read_warc`: webcorpus's reader (transforms/stages/read_warc): warcio's parser
  behind its framing, recovery and classification rules, every HTML payload
  decoded, gzip inflated by zlib-ng;
- `warcio`: warcio's ArchiveIterator alone, every response's payload read (CPython's zlib);
- `fastwarc`: FastWARC's ArchiveIterator (resiliparse's reader), HTTP headers
  parsed, every response's payload read; where it is not installed, said so
  (`pip install -r benchmarks/requirements.txt`);
- `inflate, zlib` and `inflate, zlib-ng`: every gzip member of the files
  inflated and nothing else, by each library (the bytes compared).

What FastWARC would save behind the same rules is at most the difference
between `warcio` and `fastwarc`, less the inflating that zlib-ng already saves.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import zlib
from typing import Callable

from warcio.archiveiterator import ArchiveIterator
from zlib_ng import zlib_ng

from benchmarks import alternated_runs, medians
from devcorpus import default_corpus
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc

INFLATE_READ = 1 << 16


def with_read_warc(paths: list[str]) -> int:
    return sum(1 for path in paths for _ in read_warc(lambda path=path: open_uncompressed(path), path))


def every_record(paths: list[str], records: Callable, is_response: Callable, read_payload: Callable) -> int:
    """Every record that `records` (a reader's iterator over an open file) finds in the files, the payload of
    each response read; returns how many."""
    count = 0
    for path in paths:
        with open(path, "rb") as handle:
            for record in records(handle):
                if is_response(record):
                    read_payload(record)
                count += 1
    return count


def with_warcio(paths: list[str]) -> int:
    return every_record(paths, ArchiveIterator, lambda record: record.rec_type == "response",
                        lambda record: record.content_stream().read())


def fastwarc_reader() -> Callable[[list[str]], int] | None:
    try:
        from fastwarc.warc import ArchiveIterator as FastIterator, WarcRecordType
    except ImportError:
        return None
    return lambda paths: every_record(paths, lambda handle: FastIterator(handle, parse_http=True),
                                      lambda record: record.record_type == WarcRecordType.response,
                                      lambda record: record.reader.read())


def inflater(module) -> Callable[[list[str]], int]:
    """Inflates every gzip member of the files with `module` (zlib's API); returns the CRC-32 of all the output."""

    def inflate(paths: list[str]) -> int:
        check = 0
        for path in paths:
            with open(path, "rb") as handle:
                decompressor = module.decompressobj(16 + module.MAX_WBITS)
                while data := handle.read(INFLATE_READ):
                    while data:
                        check = zlib.crc32(decompressor.decompress(data), check)
                        if not decompressor.eof:
                            break
                        data = decompressor.unused_data
                        decompressor = module.decompressobj(16 + module.MAX_WBITS)
        return check

    return inflate


def measure(readers: dict[str, Callable[[list[str]], int]], paths: list[str], reps: int) -> dict[str, dict]:
    """Each reader's median CPU seconds per pass over `paths` (alternated) and what it returned (records or a
    checksum)."""

    def timed(reader: Callable[[list[str]], int]) -> dict:
        started = time.process_time()
        result = reader(paths)
        return {"seconds": time.process_time() - started, "result": result}

    runs = alternated_runs({name: lambda reader=reader: timed(reader) for name, reader in readers.items()}, reps,
                           lambda name, run: f"  {name:<18} {run['seconds']:.3f} s CPU")
    return {name: {**medians(name_runs, ("seconds",)), "result": name_runs[-1]["result"]}
            for name, name_runs in runs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.readers", description=__doc__.split("\n")[0])
    parser.add_argument("--input", default=str(default_corpus() / "warc" / "*.warc.gz"), help="the WARC files (a glob)")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    paths = sorted(glob.glob(args.input))
    if not paths:
        parser.error(f"no file matches --input {args.input}")
    readers = {"read_warc": with_read_warc, "warcio": with_warcio}
    with_fastwarc = fastwarc_reader()
    if with_fastwarc is not None:
        readers["fastwarc"] = with_fastwarc
    readers.update({"inflate, zlib": inflater(zlib), "inflate, zlib-ng": inflater(zlib_ng)})
    megabytes = sum(os.path.getsize(path) for path in paths) / 1e6
    print(f"{len(paths)} files, {megabytes:.1f} MB, {args.reps} passes each, alternated; median CPU seconds a pass")
    figures = measure(readers, paths, args.reps)
    base = figures["read_warc"]["seconds"]
    print(f"{'reader':<18}{'CPU s':>8}{'MB/s':>8}{'/ read_warc':>13}  records (inflate: CRC-32 of the output)")
    for name, figure in figures.items():
        rate = megabytes / figure["seconds"] if figure["seconds"] else float("inf")
        print(f"{name:<18}{figure['seconds']:>8.3f}{rate:>8.1f}{figure['seconds'] / base:>12.2f}x  {figure['result']}")
    if with_fastwarc is None:
        print("fastwarc: not installed (pip install -r benchmarks/requirements.txt)")
    if figures["inflate, zlib"]["result"] != figures["inflate, zlib-ng"]["result"]:
        print("zlib and zlib-ng inflated different bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
