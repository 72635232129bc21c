"""The developer corpus's gold: the pages of `gold/gold.jsonl` (their full gold text) and of `gold/snippets.jsonl`
(`must_contain` snippets a page's text holds, `must_not_contain` boilerplate a main-content extractor drops), found
in the WARC files by record id with `read_warc`.

Pages that ReadWarc does not keep, such as captures cut at 1 MiB, are left out and counted: read with
`skip_truncated`, since the gold text of a cut capture is of the whole page.
"""

from __future__ import annotations

import glob
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GoldPage:
    """A page of the gold: its payload as ReadWarc gives it and as CleanHtml gets it, and the gold text or snippets."""

    id: str
    dataset: str
    lang: str
    url: str
    content_type: str
    raw: bytes  # the payload as ReadWarc gives it
    utf8: bytes  # as transforms.stages.charset decodes it
    charset: str
    true_charset: str
    gold: str = ""  # full gold text ("" for snippet pages)
    # The page's readers' comments, where the gold has them apart from its main text (`gold_extra.comments`: some
    # dragnet and L3S-GN1 pages): a comment page's posts.
    comments: str = ""
    snippets: list[str] = field(default_factory=list)
    visible_recall: float | None = None


def gold_lines(text: str) -> list[str]:
    """The gold's lines, each line once: some gold (L3S-GN1) repeats a headline many times."""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def comments_of(row: dict) -> str:
    """A gold row's comments (`gold_extra.comments`: a text, or a list of them), one text."""
    comments = (row.get("gold_extra") or {}).get("comments") or ""
    return comments if isinstance(comments, str) else "\n".join(map(str, comments))


def load_gold_pages(corpus: Path) -> tuple[list[GoldPage], dict]:
    """The gold pages found in the WARC files, and counts of those left out."""
    from transforms.stages.charset import to_utf8
    from transforms.document import Document, Skip
    from transforms.stages.read_warc.read_warc import read_warc

    rows = {}
    for name in ("gold.jsonl", "snippets.jsonl"):
        path = corpus / "gold" / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rows[(row["warc_file"], row["record_id"])] = row
    if not rows:
        raise SystemExit(f"no gold in {corpus / 'gold'}; set --corpus or WEBCORPUS_CORPUS")
    pages, missing = [], Counter()
    found = set()
    for path in sorted(glob.glob(str(corpus / "warc" / "*.warc.gz"))):
        name = os.path.basename(path)
        for outcome in read_warc(lambda: open(path, "rb"), path, skip_truncated=True):
            key = (name, outcome.capture.warc_record_id if isinstance(outcome, Document) else outcome.warc_record_id)
            row = rows.get(key)
            if row is None:
                continue
            found.add(key)
            if not isinstance(outcome, Document):
                missing[f"not kept by ReadWarc ({outcome.kind if isinstance(outcome, Skip) else 'dead letter'})"] += 1
                continue
            utf8, charset, _ = to_utf8(outcome.payload, outcome.content_type)
            pages.append(GoldPage(
                id=row["id"], dataset=row["source_dataset"], lang=row.get("lang") or "?", url=outcome.capture.url,
                content_type=outcome.content_type, raw=outcome.payload, utf8=utf8, charset=charset,
                true_charset=row.get("true_charset") or "", gold=row.get("text") or "",
                comments=comments_of(row),
                snippets=list(row.get("must_contain") or ()), visible_recall=row.get("visible_recall")))
    missing["not found in the WARC files"] += len(set(rows) - found)
    return pages, {key: value for key, value in missing.items() if value}


def boilerplate_snippets(corpus: Path) -> dict[str, list[str]]:
    """Page id -> its `must_not_contain` snippets (boilerplate a main-content extractor drops)."""
    path = corpus / "gold" / "snippets.jsonl"
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {row["id"]: list(row.get("must_not_contain") or ()) for row in rows}
