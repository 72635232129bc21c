"""`--url-blocklist` with many entries: the time `UrlBlocklist.load` takes and the peak memory of the process,
alone or against the loader of another revision, alternately.

    python -m benchmarks.url_blocklist [--entries 10000000] [--work DIR] [--against REV ...] [--rounds 3]

The list (cached in `--work`, default `$TMPDIR/webcorpus-bench`) holds `--entries` distinct domains, as UT1's
`domains` files write them, a tenth of them as URLs (`domain/path/`, as its `urls` files). Printed: the file's
size, then per load the time, the peak RSS of its process (`ru_maxrss`: each load in a process of its own,
after the list was written) and one lookup's answer; with `--against REV` (e.g. `main`; repeatable), REV's
`transforms/stages/filters/url_blocklist.py` and this checkout's load in turn, `--rounds` times each, and the medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MEASURED = re.compile(r"loaded in ([0-9.]+) s, peak RSS ([0-9]+) MB")


def write_list(path: Path, entries: int) -> None:
    with open(path, "w") as handle:
        for n in range(entries):
            handle.write(f"site{n}.example{n % 97}.com/path/\n" if n % 10 == 0 else f"site{n}.example{n % 97}.com\n")


def measure(listing: str, module_path: str | None) -> None:
    """Loads `listing` with the UrlBlocklist of the module at `module_path` (this checkout's without one)."""
    if module_path:
        spec = importlib.util.spec_from_file_location("url_blocklist_against", module_path)
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        blocklist_class = module.UrlBlocklist
    else:
        from transforms.stages.filters.url_blocklist import UrlBlocklist as blocklist_class
    started = time.perf_counter()
    blocklist = blocklist_class.load([listing])
    seconds = time.perf_counter() - started
    print(f"loaded in {seconds:.1f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"{blocklist.match('https://site20.example20.com/path/x')}")


def run_load(listing: Path, label: str, module_path: str | None) -> tuple[float, float]:
    """One load in a process of its own, so that its peak RSS is the load's: its seconds and MB."""
    command = [sys.executable, "-m", "benchmarks.url_blocklist", "--measure", str(listing)]
    printed = subprocess.run(command + (["--module", module_path] if module_path else []), check=True,
                             stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"{label}: {printed}", flush=True)
    seconds, megabytes = _MEASURED.match(printed).groups()
    return float(seconds), float(megabytes)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "webcorpus-bench"))
    parser.add_argument("--against", metavar="REV", action="append", default=[],
                        help="a git revision whose loader is measured too, in turn (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--module", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        measure(args.measure, args.module)
        return
    listing = Path(args.work) / f"blocklist-{args.entries}.txt"
    if not listing.exists():
        listing.parent.mkdir(parents=True, exist_ok=True)
        write_list(listing, args.entries)
    print(f"{args.entries:,} entries, {listing.stat().st_size / 1e6:.0f} MB")
    if not args.against:
        run_load(listing, "this checkout", None)
        return
    with tempfile.TemporaryDirectory() as scratch:
        modules = {"this checkout": None}
        for number, revision in enumerate(args.against):
            modules[revision] = str(Path(scratch) / f"url_blocklist_{number}.py")
            Path(modules[revision]).write_bytes(subprocess.run(
                ["git", "show", f"{revision}:transforms/stages/filters/url_blocklist.py"], check=True,
                capture_output=True).stdout)
        loads = {label: [] for label in modules}
        for _ in range(args.rounds):
            for label, module in modules.items():
                loads[label].append(run_load(listing, label, module))
    for label, measured in loads.items():
        print(f"{label}: median {statistics.median(s for s, _ in measured):.1f} s, "
              f"peak RSS {statistics.median(mb for _, mb in measured):.0f} MB (of {args.rounds})")


if __name__ == "__main__":
    main()
