"""`--tokenizer`'s cost: the developer corpus built without and with it, and the tokenizer per page against the
text extraction, in one run.

    python -m benchmarks.tokens [--corpus DIR] [--tokenizer FILE] [--reps 3] [--work DIR] [--against DIR]

`--tokenizer`: a tokenizer.json; by default a byte-level BPE of `--vocab` tokens (32,000) trained here on the
pages' text and cached in `--work` (default `$TMPDIR/webcorpus-bench`): nothing is downloaded. Printed:
- per page: counting the tokens of each page's `clean_text` (`TokenCounter`, as CountTokens counts them) against
  CleanHtml + MinimizeText of the page, `--reps` times in turn: median ms per page and the ratio;
- builds: `python -m pipeline` on the corpus's WARC files without and with `--tokenizer`, alternating (ABBA)
  `--reps` times: median wall and CPU seconds, and the CPU `--tokenizer` adds per kept page (report.json's
  `kept`); with `--against DIR` (a checkout of another revision with its C modules built, e.g. `git worktree add
  /tmp/main main`), that checkout's build without `--tokenizer` too: a build without it costs what it did.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import medians
from benchmarks.throughput import DEFAULT_CORPUS, alternate, pipeline_command
from devcorpus.pages import load_pages


def trained_tokenizer(texts: list[str], vocab: int, path: Path) -> Path:
    """A byte-level BPE of `vocab` tokens trained on `texts`, written to `path` (once: cached there)."""
    if not path.exists():
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.train_from_iterator(texts, trainers.BpeTrainer(
            vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        path.parent.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(path))
    return path


def clean_texts(pages) -> list[str]:
    """Each page's `clean_text`, as MinimizeText gives it with --tokenizer."""
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_document
    from transforms.document import Document

    cleaner = HtmlCleaner()
    texts = []
    for page in pages:
        cleaned = cleaner.clean(page.payload, page.url)
        doc = Document(page.url, "", "", "", 0, 200, page.content_type, cleaned_html=cleaned.html)
        texts.append(minimize_document(doc, clean_text=True).clean_text)
    return texts


def per_page(pages, texts: list[str], tokenizer: Path, reps: int) -> dict[str, float]:
    """Median ms per page of counting tokens and of CleanHtml + MinimizeText, each page's median of `reps` turns."""
    from transforms.stages.clean_html.clean_html import HtmlCleaner
    from transforms.stages.minimize_text import minimize_blocks
    from transforms.stages.tokens import TokenCounter

    count, cleaner = TokenCounter(tokenizer.read_text(encoding="utf-8")), HtmlCleaner()
    count("warm up")
    methods = {"count tokens (clean_text)": lambda page, text: count(text),
               "CleanHtml + MinimizeText": lambda page, text: minimize_blocks(cleaner.clean(page.payload,
                                                                                          page.url).blocks)}
    times: dict[str, list[list[float]]] = {name: [[] for _ in pages] for name in methods}
    for turn in range(reps):
        for name in (list(methods) if turn % 2 == 0 else list(methods)[::-1]):
            for index, (page, text) in enumerate(zip(pages, texts)):
                started = time.perf_counter()
                methods[name](page, text)
                times[name][index].append(time.perf_counter() - started)
    return {name: statistics.median(statistics.median(page_times) for page_times in by_page) * 1000
            for name, by_page in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--tokenizer", type=Path, help="a tokenizer.json (default: a BPE trained on the corpus)")
    parser.add_argument("--vocab", type=int, default=32_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-bench")
    parser.add_argument("--against", type=Path, help="another checkout, whose build without --tokenizer is run too")
    args = parser.parse_args(argv)
    pages = load_pages(args.corpus)
    texts = clean_texts(pages)
    tokenizer = args.tokenizer or trained_tokenizer(texts, args.vocab, args.work / f"bpe-{args.vocab}.json")
    print(f"{len(pages):,} pages of {args.corpus}; tokenizer {tokenizer}")
    ms = per_page(pages, texts, tokenizer, args.reps)
    extraction = ms["CleanHtml + MinimizeText"]
    for name, value in ms.items():
        print(f"  {name:<28} {value:8.3f} ms/page (median)  {value / extraction:5.2f}x CleanHtml + MinimizeText")

    inputs = sorted(str(path) for path in (args.corpus / "warc").glob("*.warc.gz"))
    commands = {"without --tokenizer": pipeline_command(inputs, args.work / "tokens-without"),
                "with --tokenizer": pipeline_command(inputs, args.work / "tokens-with",
                                                     ("--tokenizer", str(tokenizer)))}
    if args.against:
        # The pipeline of that checkout (-P: not this one's, from the directory the builds run in).
        run_there = (f"import runpy, sys; sys.path.insert(0, {str(args.against)!r}); "
                     "runpy.run_module('pipeline', run_name='__main__', alter_sys=True)")
        commands[f"{args.against} without"] = [sys.executable, "-P", "-c", run_there, *pipeline_command(
            inputs, args.work / "tokens-against")[3:]]
    runs = alternate(commands, args.reps, "build")
    found = {name: medians(made) for name, made in runs.items()}
    kept = json.loads((args.work / "tokens-with" / "report.json").read_text())["records"]["kept"]
    without, with_tokens = found["without --tokenizer"], found["with --tokenizer"]
    for name, measured in found.items():
        print(f"  {name:<30} {measured['seconds']:7.1f} s wall {measured['cpu_seconds']:7.1f} s CPU  "
              f"{measured['cpu_seconds'] / without['cpu_seconds']:5.3f}x CPU without --tokenizer")
    added = with_tokens["cpu_seconds"] - without["cpu_seconds"]
    print(f"  --tokenizer adds {added:.2f} s CPU over {kept:,} kept pages: {added / kept * 1000:.2f} ms CPU a kept "
          f"page ({with_tokens['cpu_seconds'] / without['cpu_seconds']:.3f}x the build's CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
