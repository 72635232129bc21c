"""What a build reads where it starts, once, beside its WARC files: the earlier corpora of `--extend` (their
manifests and indexes, checked: `pipeline.extend`), the `--url-blocklist` files (their entries and digests), the
records a capture index selects (`--index`: `pipeline.index_select`) and the `--tokenizer` file (its JSON, checked,
and its digest).

`CorpusSettings` is a record of what was asked for; `BuildInputs` is what was found. The launcher reads them
before it writes anything (a refusal is one line, exit 2), and the build's identity, its manifest and its
stages take them from here: no file is read twice, nor read again after it was checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.extend import EarlierCorpus, earlier_corpus
from pipeline.index_select import SelectedRecords, select_records
from pipeline.settings import CorpusSettings
from transforms.report.manifest import digest_file
from transforms.stages.filters.url_blocklist import UrlBlocklist
from transforms.stages.tokens import TokenizerFile


@dataclass(frozen=True)
class BuildInputs:
    # The `--extend` corpora, checked, in their order.
    earlier_corpora: tuple[EarlierCorpus, ...] = ()
    # The entries of every `--url-blocklist` file, and each file's SHA-256 (what the manifest records of it).
    url_blocklist: UrlBlocklist | None = None
    url_blocklist_digests: tuple[str, ...] = ()
    # The runs of records the `--index` selection chose, and the index files it read.
    selected: SelectedRecords | None = None
    # The `--tokenizer` file, read and checked.
    tokenizer: TokenizerFile | None = None

    def matches(self, settings: CorpusSettings) -> bool:
        """Whether these were read for `settings` (one earlier corpus per `--extend`, one digest per list)."""
        return (len(self.earlier_corpora) == len(settings.extend)
                and len(self.url_blocklist_digests) == len(settings.url_blocklists)
                and (self.url_blocklist is not None) == bool(settings.url_blocklists)
                and (self.selected is not None) == (settings.index is not None)
                and (self.tokenizer is not None) == bool(settings.tokenizer))


def read_build_inputs(settings: CorpusSettings, check_files: bool = True) -> BuildInputs:
    """The earlier corpora and the URL blocklists that `settings` name, read and checked (`check_files`: the
    earlier corpora's index files too, read whole). Raises ValueError (an earlier corpus that cannot be extended, a
    file that is no tokenizer), `BlocklistError` or OSError (a file that cannot be read), each in one line; an index
    that cannot be used is a ValueError too."""
    earlier = tuple(earlier_corpus(path, settings, check_files) for path in settings.extend)
    selected = None if settings.index is None else select_records(settings.index, settings.range_bytes)
    tokenizer = TokenizerFile.read(settings.tokenizer) if settings.tokenizer else None
    if not settings.url_blocklists:
        return BuildInputs(earlier, selected=selected, tokenizer=tokenizer)
    return BuildInputs(earlier, UrlBlocklist.load(settings.url_blocklists),
                       tuple(digest_file(path).sha256 for path in settings.url_blocklists), selected, tokenizer)
