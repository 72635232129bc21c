"""The developer corpus's HTML pages, as the pipeline hands them to CleanHtml."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Page:
    url: str
    payload: bytes  # UTF-8, as DecodeCharset hands it to CleanHtml
    content_type: str


def load_pages(corpus: Path) -> list[Page]:
    """Every HTML document of the corpus's WARC files, decoded to UTF-8 as the pipeline does."""
    from transforms.stages.charset import decode_document
    from transforms.document import Document
    from transforms.stages.read_warc.read_warc import read_warc

    pages = []
    paths = sorted(glob.glob(str(corpus / "warc" / "*.warc.gz")))
    if not paths:
        raise SystemExit(f"no WARC files in {corpus / 'warc'}; set --corpus or WEBCORPUS_CORPUS")
    for path in paths:
        for outcome in read_warc(lambda: open(path, "rb"), path):
            if isinstance(outcome, Document):
                doc = decode_document(outcome)
                pages.append(Page(doc.capture.url, doc.utf8_payload, doc.content_type))
    return pages
