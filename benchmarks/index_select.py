"""Selecting one language through the capture index against a full build of the same crawl, served over HTTP.

A generated crawl (`tests.index_crawl`: WARC files and an index in Common Crawl's schema) is served on 127.0.0.1
by the tests' server (`tests.test_crawl.CrawlServer`, which logs every request and its Range; `NoDelayHandler`). One language is
`--share` of the pages. Two builds, one after the other, in this run: the full build (`--crawl NAME`: every WARC
file) and the build that selects that language (`--crawl NAME --index-languages rus`). Printed: the bytes each
fetched (the index's included) against the crawl's, its time against the full build's, and the requests against
the matching records. With `--work DIR` the crawl is generated there once and served from there by later runs of the
same sizes.

    python -m benchmarks.index_select --files 16 --pages 2000
    python -m benchmarks.index_select --files 64 --pages 7000 --work /tmp/crawl-1gb
"""

from __future__ import annotations

import argparse
import gzip
import pickle
import tempfile
import threading
import time
from pathlib import Path

from tests.index_crawl import IndexedCrawl, make_crawl
from tests.test_crawl import CrawlServer, RangeHandler
from tests.test_cli import run_main

CRAWL = "CC-BENCH-2026-10"


class NoDelayHandler(RangeHandler):
    """The tests' handler, its answers sent at once: with Nagle's algorithm, the body written after the headers
    waits for the client's delayed ACK, 40 ms a request here, which no production server adds."""

    disable_nagle_algorithm = True


def served(server: CrawlServer, suffixes: tuple[str, ...]) -> tuple[int, int]:
    """(requests, bytes) served of the files whose path ends with one of `suffixes` (a GET without Range: whole)."""
    count = total = 0
    for command, path, wanted in server.requests:
        if not path.endswith(suffixes):
            continue
        count += 1
        if command != "GET":
            continue
        if wanted is None:
            total += (server.root / path).stat().st_size
        else:
            first, last = wanted.removeprefix("bytes=").split("-")
            total += min(int(last), (server.root / path).stat().st_size - 1) - int(first) + 1
    return count, total


def timed_build(server: CrawlServer, output: Path, *flags: str) -> tuple[float, tuple[int, int], tuple[int, int]]:
    server.reset()
    started = time.monotonic()
    code, _, err = run_main(["--crawl", CRAWL, "--crawl-base-url", server.base, "--report-sample", "0",
                             "--output", str(output), "--quiet", *flags])
    if code != 0:
        raise SystemExit(err)
    return (time.monotonic() - started, served(server, (".warc.gz",)),
            served(server, (".parquet", ".paths.gz")))


def generated_crawl(root: Path, args: argparse.Namespace) -> IndexedCrawl:
    """The crawl of `args`' sizes under `root`, generated unless a run before left it there (`crawl.pickle`)."""
    described = root / "crawl.pickle"
    sizes = (args.files, args.pages, args.words, args.share)
    if described.exists():
        recorded_sizes, crawl = pickle.loads(described.read_bytes())
        if recorded_sizes == sizes:
            return crawl
    every = round(1 / args.share)
    crawl = make_crawl(root / "crawl", CRAWL, args.files, args.pages,
                       lambda number: "rus" if number % every == 0 else "eng", args.words,
                       row_group_rows=1000, index_files=2)
    (root / "crawl" / f"crawl-data/{CRAWL}/warc.paths.gz").write_bytes(
        gzip.compress("".join(f"{name}\n" for name in crawl.warc_files).encode(), mtime=0))
    described.write_bytes(pickle.dumps((sizes, crawl)))
    return crawl


def served_crawl(crawl: IndexedCrawl) -> CrawlServer:
    """The tests' server of `crawl`, serving in a thread of its own."""
    server = CrawlServer(crawl.root)
    server.RequestHandlerClass = NoDelayHandler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--pages", type=int, default=500, help="pages per WARC file")
    parser.add_argument("--words", type=int, default=1500, help="words per page")
    parser.add_argument("--share", type=float, default=0.05, help="the selected language's share of the pages")
    parser.add_argument("--work", type=Path, help="where the crawl is generated and kept for later runs (default: a "
                                                  "temporary directory)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        if args.work:
            args.work.mkdir(parents=True, exist_ok=True)
        crawl = generated_crawl(args.work or root, args)
        size = crawl.warc_bytes()
        server = served_crawl(crawl)
        try:
            full_time, (_, full_bytes), _ = timed_build(server, root / "full")
            index_time, (warc_requests, warc_bytes), (index_requests, index_bytes) = timed_build(
                server, root / "index", "--index-languages", "rus")
        finally:
            server.shutdown()
            server.server_close()
    matched = len(crawl.urls("rus"))
    print(f"crawl: {args.files} WARC files, {len(crawl.rows):,} captures, {size:,} bytes; rus {matched:,} captures "
          f"({matched / len(crawl.rows):.1%})")
    print(f"full build:  {full_bytes:>14,} bytes fetched  {full_time:8.1f} s")
    print(f"index build: {warc_bytes + index_bytes:>14,} bytes fetched ({warc_bytes:,} of records, {index_bytes:,} "
          f"of the index)  {index_time:8.1f} s")
    print(f"bytes fetched: {(warc_bytes + index_bytes) / size:.1%} of the crawl's (target at most 8%)")
    print(f"time: {index_time / full_time:.1%} of the full build's (target at most 15%)")
    print(f"requests: {warc_requests:,} for {matched:,} matching records (at most one each), plus {index_requests:,} "
          "of the index (its listing, each file's HEAD, footer and column chunks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
