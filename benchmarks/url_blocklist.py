"""`--url-blocklist` with many entries: the time `UrlBlocklist.load` takes and the peak memory of the process.

    python -m benchmarks.url_blocklist [--entries 10000000] [--work DIR]

The list (cached in `--work`, default `$TMPDIR/webcorpus-bench`) holds `--entries` distinct domains, as UT1's
`domains` files write them, a tenth of them as URLs (`domain/path/`, as its `urls` files). Printed: the file's
size, the load time, the peak RSS of this process (`ru_maxrss`, after the list was written, in another process)
and the size of one lookup's answer.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_list(path: Path, entries: int) -> None:
    with open(path, "w") as handle:
        for n in range(entries):
            handle.write(f"site{n}.example{n % 97}.com/path/\n" if n % 10 == 0 else f"site{n}.example{n % 97}.com\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "webcorpus-bench"))
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        # In a process of its own, so that its peak RSS is the load's.
        from transforms.filters.url_blocklist import UrlBlocklist
        started = time.perf_counter()
        blocklist = UrlBlocklist.load([args.measure])
        seconds = time.perf_counter() - started
        print(f"loaded in {seconds:.1f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
              f"{blocklist.match('https://site20.example20.com/path/x')}")
        return
    listing = Path(args.work) / f"blocklist-{args.entries}.txt"
    if not listing.exists():
        listing.parent.mkdir(parents=True, exist_ok=True)
        write_list(listing, args.entries)
    print(f"{args.entries:,} entries, {listing.stat().st_size / 1e6:.0f} MB")
    subprocess.run([sys.executable, "-m", "benchmarks.url_blocklist", "--measure", str(listing)], check=True)


if __name__ == "__main__":
    main()
