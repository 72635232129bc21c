"""Extend: a build of new inputs with `--extend` an earlier corpus, against one build of both.

    python -m benchmarks.extend [--megabytes 200] [--reps 2] [--near-dedup]
    python -m benchmarks.extend --index-entries 2000000 [--near-dedup [--every-signature]]


Generates two crawls, A and B, of `--megabytes` of WARC files each (gzipped
per record, `pipeline.sample.warc_bytes`): pages of 1,500 words drawn from a
vocabulary of 5,000 (Zipf-like: about 6 KB compressed a capture), a page of
its own each, but every fifth page of B repeats a page of A under another URL,
as a later crawl repeats an earlier one. It builds A once, then alternates
(ABBA) `--reps` times each of: B with `--extend` A's corpus, and A and B in one
build; and prints their wall and CPU times (the command's process tree, Beam's
workers included), the medians, the index's size and bytes per document, and
checks that A with the extension holds the contents the build of both holds.

With `--index-entries N`, it measures instead what an earlier corpus's index
costs a build that extends it: it writes an earlier corpus whose index holds N
made-up entries (the manifest of a build of the sample WARC file, its index
replaced and its records counted as N, signed with this user's key), builds
the sample WARC file with `--extend` it, and prints the wall and CPU time and
the peak RSS of the build's process tree. With `--near-dedup`, both builds
use it, and each made-up entry has a made-up signature (a SHAKE-128 stream of
its hash: it shares no bucket with the sample's pages, as most of a large
earlier corpus shares none with a new crawl's). The sample has few band keys,
so only the earlier signatures that share one go on (`EarlierSignatures`);
with `--every-signature`, the build takes every earlier signature into
NearDedup's shuffle instead, as a build of more band keys than
`BAND_KEYS_PER_READ` does (set to 0 in the build's process).
Nothing in it is a test; benchmarks/README.md has the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import tempfile
from pathlib import Path

import fastavro

from benchmarks import medians
from benchmarks.throughput import alternate, checked, pipeline_command, run_measured
from pipeline.sample import Capture, warc_bytes
from pipeline.signing import sign, signing_key
from transforms.state.corpus_index import (CONTENT_BYTES, INDEX_NAME, index_file_name, index_header, index_shard_count,
                                           index_shard_of, signature_part)
from transforms.report.manifest import MANIFEST_NAME, seal
from transforms.stages.near_dedup import MinHashParameters

VOCABULARY = [f"{first}{second}" for first in ("ka", "lo", "mi", "ne", "su", "ta", "ve", "ri", "po", "du")
              for second in range(500)]
# Zipf-like weights: a few words are common, most are rare, as in text.
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
WORDS_PER_PAGE = 1500
WORDS_PER_PARAGRAPH = 60
CAPTURES_PER_FILE = 1000
REPEAT_EVERY = 5


def page_text(seed: int) -> str:
    rng = random.Random(seed)
    words = rng.choices(VOCABULARY, WEIGHTS, k=WORDS_PER_PAGE)
    return "".join(f"<p>{' '.join(words[start:start + WORDS_PER_PARAGRAPH])}.</p>"
                   for start in range(0, WORDS_PER_PAGE, WORDS_PER_PARAGRAPH))


def capture(crawl: str, index: int) -> Capture:
    """Page `index` of crawl A or B; B's every fifth page repeats A's page of that index."""
    seed = index if crawl == "a" or index % REPEAT_EVERY == 0 else 10_000_000 + index
    html = f"<html><head><title>Page {seed}</title></head><body>{page_text(seed)}</body></html>"
    month = "01" if crawl == "a" else "02"
    return Capture(f"https://site{index % 997}.example.org/{crawl}/{index}", html.encode("utf-8"),
                   date=f"2026-{month}-15T10:00:00Z")


def generate(crawl: str, megabytes: int, directory: Path) -> list[str]:
    """WARC files of crawl `crawl` until they hold `megabytes` (cached: kept for the same size)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths, total, first = [], 0, 0
    while total < megabytes * 1_000_000:
        path = directory / f"{crawl}-{first:07d}.warc.gz"
        if not path.exists():
            written = path.with_suffix(".part")
            written.write_bytes(warc_bytes([capture(crawl, k) for k in range(first, first + CAPTURES_PER_FILE)],
                                           filename=path.name))
            written.rename(path)
        paths.append(str(path))
        total += path.stat().st_size
        first += CAPTURES_PER_FILE
    return paths


def content_hashes(output: Path) -> set[str]:
    hashes = set()
    for shard in sorted(output.glob("corpus-*.avro")):
        with shard.open("rb") as handle:
            hashes.update(record["content_hash"] for record in fastavro.reader(handle))
    return hashes


def made_up_earlier_corpus(entries: int, directory: Path, options: tuple[str, ...]) -> Path:
    """An earlier corpus whose index holds `entries` made-up contents: the build of the sample WARC file (with
    `options`) with its index replaced, its manifest listing the new index and `entries` records, sealed and
    signed again."""
    shutil.rmtree(directory, ignore_errors=True)
    checked(run_measured(pipeline_command([], directory, options)), "the build of the sample")
    values = MinHashParameters().permutations if "--near-dedup" in options else 0
    for path in directory.glob("index-*.bin"):
        path.unlink()
    count = index_shard_count(entries)
    shards: list[list[bytes]] = [[] for _ in range(count)]
    for number in range(entries):
        digest = hashlib.sha256(number.to_bytes(8, "big")).digest()
        shards[index_shard_of(digest, count)].append(digest + bytes(CONTENT_BYTES - len(digest)))
    listed = []
    for number, shard in enumerate(shards):
        data = index_header(values) + b"".join(
            content + (signature_part(hashlib.shake_128(content).digest(4 * values), values) if values else b"")
            for content in sorted(shard))
        (directory / index_file_name(number, count)).write_bytes(data)
        listed.append({"path": index_file_name(number, count), "size": len(data),
                       "sha256": hashlib.sha256(data).hexdigest()})
    manifest = json.loads((directory / MANIFEST_NAME).read_text())
    manifest.pop("manifest_hmac")
    outputs = [entry for entry in manifest["outputs"] if not INDEX_NAME.match(entry["path"])]
    for entry in outputs:
        entry.pop("records", None)
    outputs[0]["records"] = entries
    manifest["outputs"] = sorted(outputs + listed, key=lambda entry: entry["path"])
    (directory / MANIFEST_NAME).write_text(json.dumps(sign(seal(manifest), signing_key(create=True))))
    return directory


# The build's command with BAND_KEYS_PER_READ 0: every earlier signature goes into NearDedup's shuffle.
EVERY_SIGNATURE = ("import sys; from transforms.state import corpus_index_transform; "
                   "corpus_index_transform.BAND_KEYS_PER_READ = 0; from pipeline.launch import main; sys.exit(main())")


def measure_index(entries: int, work: Path, options: tuple[str, ...], every_signature: bool) -> int:
    earlier = made_up_earlier_corpus(entries, work / f"earlier-{entries}", options)
    shutil.rmtree(work / "extended", ignore_errors=True)
    command = pipeline_command([], work / "extended", (*options, "--extend", str(earlier)))
    if every_signature:
        command[1:3] = ["-c", EVERY_SIGNATURE]
    run = checked(run_measured(command), "the build that extends it")
    print(json.dumps({"index_entries": entries, "near_dedup": bool(options), "every_signature": every_signature,
                      "seconds": round(run["seconds"], 1),
                      "cpu_seconds": round(run["cpu_seconds"], 1), "peak_rss_mib": round(run["peak_rss_mib"]),
                      "runner_peak_rss_mib": round(run["peak_root_rss_mib"]),
                      "worker_peak_rss_mib": round(run["peak_child_rss_mib"])}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.extend", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--megabytes", type=int, default=200, help="MB of WARC files per crawl (default %(default)s)")
    parser.add_argument("--reps", type=int, default=2, help="runs of each build, alternated (default %(default)s)")
    parser.add_argument("--near-dedup", action="store_true", help="build with --near-dedup")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-extend",
                        help="where the generated files and outputs go (default: %(default)s)")
    parser.add_argument("--index-entries", type=int, default=None, metavar="N",
                        help="measure a build that extends an earlier corpus of N made-up index entries instead")
    parser.add_argument("--every-signature", action="store_true",
                        help="with --index-entries and --near-dedup: every earlier signature into NearDedup's shuffle")
    args = parser.parse_args(argv)
    if args.every_signature and not (args.index_entries is not None and args.near_dedup):
        parser.error("--every-signature needs --index-entries and --near-dedup")
    options = ("--near-dedup",) if args.near_dedup else ()
    if args.index_entries is not None:
        return measure_index(args.index_entries, args.work, options, args.every_signature)
    first = generate("a", args.megabytes, args.work / f"a-{args.megabytes}")
    second = generate("b", args.megabytes, args.work / f"b-{args.megabytes}")
    earlier, extended, both = (args.work / name for name in ("out-a", "out-b", "out-both"))
    for output in (earlier, extended, both):
        shutil.rmtree(output, ignore_errors=True)
    build_a = checked(run_measured(pipeline_command(first, earlier, options)), "the build of A")
    print(f"A: {build_a['seconds']:.1f} s wall, {build_a['cpu_seconds']:.1f} s CPU", flush=True)
    runs = alternate({"B --extend A": pipeline_command(second, extended, options + ("--extend", str(earlier))),
                      "A and B in one build": pipeline_command(first + second, both, options)},
                     args.reps, "extend")
    index = sorted(earlier.glob("index-*.bin"))
    documents = len(content_hashes(earlier))
    index_bytes = sum(path.stat().st_size for path in index)
    union = content_hashes(earlier) | content_hashes(extended)
    result = {
        "megabytes_per_crawl": args.megabytes, "near_dedup": args.near_dedup,
        "input_bytes": {"a": sum(Path(p).stat().st_size for p in first),
                        "b": sum(Path(p).stat().st_size for p in second)},
        "build_a": {"seconds": round(build_a["seconds"], 1), "cpu_seconds": round(build_a["cpu_seconds"], 1)},
        **{name: {**{key: round(value, 1) for key, value in medians(found).items()},
                  "runs": [(round(run["seconds"], 1), round(run["cpu_seconds"], 1)) for run in found]}
           for name, found in runs.items()},
        "index": {"files": len(index), "bytes": index_bytes, "documents": documents,
                  # (Bytes per document are MB per million documents.)
                  "bytes_per_document": round(index_bytes / documents, 1)},
        "extended": json.loads((extended / "report.json").read_text()).get("in_earlier_corpora"),
        "same_contents_as_one_build": union == content_hashes(both),
    }
    print(json.dumps(result, indent=2))
    return 0 if result["same_contents_as_one_build"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
