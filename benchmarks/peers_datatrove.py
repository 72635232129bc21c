"""The whole job as datatrove 0.10 does it: WarcReader -> resiliparse `extract_plain_text` -> JsonlWriter.

Run by benchmarks/peers.py with the Python of a virtual environment that has
datatrove and resiliparse (benchmarks/requirements-datatrove.txt); imports
nothing of webcorpus. Reads the WARC files of INPUT_DIR that match GLOB,
keeps what datatrove's WarcReader keeps (response records it takes for HTML:
their WARC-Identified-Payload-Type, else libmagic; decoded as UTF-8, else as
cchardet says), extracts each page's text with resiliparse's
`extract_plain_text` (its defaults) through datatrove's extractor step (its
per-document sandbox process and timeout), and writes JSON lines, gzipped
(JsonlWriter's default), to WORK_DIR/extracted. `--tasks N` runs N tasks on
N worker processes (datatrove splits the input by file). `--minhash` then
runs datatrove's MinHash deduplication (its default configuration) on what
was written, as benchmarks/near_dedup_datatrove.py does.

    python benchmarks/peers_datatrove.py INPUT_DIR GLOB WORK_DIR [--tasks N] [--minhash]
"""

import argparse
import sys
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.extractors.base import BaseExtractor
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter


class ResiliparseText(BaseExtractor):
    """resiliparse's `extract_plain_text` as a datatrove extractor (datatrove 0.10 ships trafilatura's only)."""

    name = "resiliparse extract_plain_text"

    def __init__(self, timeout: float = 1):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        from resiliparse.extract.html2text import extract_plain_text

        return extract_plain_text(text)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input_dir")
    parser.add_argument("glob")
    parser.add_argument("work")
    parser.add_argument("--tasks", type=int, default=1)
    parser.add_argument("--minhash", action="store_true")
    args = parser.parse_args(argv)
    work = Path(args.work)
    LocalPipelineExecutor(
        pipeline=[WarcReader(args.input_dir, glob_pattern=args.glob), ResiliparseText(),
                  JsonlWriter(str(work / "extracted"))],
        tasks=args.tasks, workers=args.tasks, logging_dir=str(work / "logs" / "extract")).run()
    if args.minhash:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from near_dedup_datatrove import main as minhash

        (written,) = sorted((work / "extracted").glob("*.jsonl.gz"))
        minhash(str(written), str(work / "minhash"), str(work / "clusters.json"))


if __name__ == "__main__":
    main()
