"""Token counts (`--tokenizer`): each document's readable text counted in the tokens of a Hugging Face
`tokenizer.json`, through the `tokenizers` package (the file is given; nothing is downloaded).

The readable text is `clean_text` (CleanHtml's blocks as plain text, one per line, case, punctuation and every
script kept) as the corpus would hold it: after `--quality`'s line rules and `--pii`'s replacements. It is counted
without the special tokens a tokenizer's template adds (no BOS/EOS): the tokens of the text itself.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from tokenizers import Tokenizer


@dataclass(frozen=True)
class TokenizerFile:
    """A `--tokenizer` file as read at launch: its path, its SHA-256 (what the manifest records) and its JSON."""

    path: str
    sha256: str
    json: str = field(repr=False)

    @classmethod
    def read(cls, path: str) -> "TokenizerFile":
        """The file at `path`, checked to be a tokenizer; raises ValueError in one line if it is not one."""
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            text = data.decode("utf-8")
            Tokenizer.from_str(text)
        except Exception as error:  # noqa: BLE001 - whatever the library says, the file is no tokenizer
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ValueError(f"--tokenizer {path} is not a Hugging Face tokenizer.json ({reason[:200]})") from None
        return cls(os.path.abspath(path), hashlib.sha256(data).hexdigest(), text)


class TokenCounter:
    """Counts the tokens of a text with a tokenizer given as its JSON; loaded once per worker, at its first text
    (the loaded tokenizer is not pickled with the stage: its JSON is)."""

    def __init__(self, tokenizer_json: str):
        self._json = tokenizer_json
        self._tokenizer: Tokenizer | None = None

    def __getstate__(self):
        return {"_json": self._json, "_tokenizer": None}

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if self._tokenizer is None:
            self._tokenizer = Tokenizer.from_str(self._json)
        # encode_batch_fast: the ids without the offsets `encode` also computes (a fifth less time a page).
        return len(self._tokenizer.encode_batch_fast([text], add_special_tokens=False)[0])


# The token counts a stage gives per unit (as `FilterCounts`, named `tokens_of:OUTCOME:LANGUAGE`): the tokens of
# the documents IdentifyLanguage skipped (--languages) and QualityFilter dropped, and of those that reached
# deduplication (what deduplication dropped is these less the tokens kept, which the written records tally).
TOKENS_OF = "tokens_of"
OTHER_LANGUAGE_TOKENS = "other_language"
FILTERED_TOKENS = "filtered"
HASHED_TOKENS = "hashed"


def tokens_of(outcome: str, language: str, tokens: int) -> dict[str, int]:
    """The count of `tokens` of a document of `language` ("": not identified) with this outcome."""
    return {f"{TOKENS_OF}:{outcome}:{language or 'none'}": tokens}
