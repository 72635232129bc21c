"""`--pii` on one page of many IPv4 addresses: the time of `pii.scrub`, which must grow with the page, not its
square.

    python -m benchmarks.pii_page [--addresses 16000] [--addresses 32000]

The page lists `--addresses` public IPv4 addresses, one a line after a short label (16,000 make 359 KB), as
a server list or a log excerpt does. Printed per size: the page's bytes, the seconds `scrub` takes (best of
three) and the addresses replaced.
"""

from __future__ import annotations

import argparse
import time

from transforms.stages.filters.pii import scrub


def address_page(addresses: int) -> str:
    """A text of `addresses` distinct public IPv4 addresses, one a line."""
    return "".join(f"node {n:05}: 8.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}\n" for n in range(addresses))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addresses", type=int, action="append", help="addresses on the page (repeatable)")
    args = parser.parse_args(argv)
    for addresses in args.addresses or [16_000, 32_000]:
        text = address_page(addresses)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            _, counts = scrub(text)
            times.append(time.perf_counter() - started)
        print(f"{addresses:,} addresses, {len(text.encode()):,} bytes: {min(times):.3f} s, replaced {dict(counts)}")


if __name__ == "__main__":
    main()
