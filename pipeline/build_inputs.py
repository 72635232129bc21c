"""What a build reads where it starts, once, beside its WARC files: the earlier corpora of `--extend` (their
manifests and indexes, checked: `pipeline.extend`), the `--url-blocklist` files (their entries and digests), the
records a capture index selects (`--index`: `pipeline.index_select`), the `--tokenizer` file (its JSON, checked,
and its digest), the `--quality-model` files (their digests, each loaded and checked), the `--decontaminate`
files (their digests, every item read and checked) and `--quality fineweb2`'s language packs (read and checked).

`CorpusSettings` is a record of what was asked for; `BuildInputs` is what was found. The launcher reads them
before it writes anything (a refusal is one line, exit 2), and the build's identity, its manifest and its
stages take them from here: no file is read twice, nor read again after it was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline.extend import EarlierCorpus, earlier_corpus
from pipeline.index_select import SelectedRecords, select_records
from pipeline.settings import CorpusSettings
from transforms.report.manifest import digest_file
from transforms.stages.filters.url_blocklist import UrlBlocklist
from transforms.stages.tokens import TokenizerFile
from transforms.stages.decontaminate import check_benchmark
from transforms.stages.filters.fineweb2 import DEFAULT_PACKS, read_packs
from transforms.stages.filters.rule_sets import PER_LANGUAGE
from transforms.stages.quality_model import QualityModel, check_model


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
    # The `--quality-model`s, each with its file's SHA-256, checked (`quality_model.check_model`).
    quality_models: tuple[QualityModel, ...] = ()
    # Each `--decontaminate` file's SHA-256, its items read once and checked (`decontaminate.check_benchmark`).
    benchmark_digests: tuple[str, ...] = ()
    # With `--quality fineweb2`: the language packs by language code (`fineweb2.read_packs`: `--quality-pack`'s,
    # or the shipped ones), and `--quality-pack`'s SHA-256.
    quality_packs: dict | None = None
    quality_pack_sha256: str = ""

    def matches(self, settings: CorpusSettings) -> bool:
        """Whether these were read for `settings` (one earlier corpus per `--extend`, one digest per list)."""
        return (len(self.earlier_corpora) == len(settings.extend)
                and len(self.url_blocklist_digests) == len(settings.url_blocklists)
                and (self.url_blocklist is not None) == bool(settings.url_blocklists)
                and (self.selected is not None) == (settings.index is not None)
                and (self.tokenizer is not None) == bool(settings.tokenizer)
                and len(self.quality_models) == len(settings.quality_models)
                and len(self.benchmark_digests) == len(settings.decontaminate)
                and (self.quality_packs is not None) == (PER_LANGUAGE in settings.quality))


def read_build_inputs(settings: CorpusSettings, check_files: bool = True) -> BuildInputs:
    """The earlier corpora and the URL blocklists that `settings` name, read and checked (`check_files`: the
    earlier corpora's index files too, read whole). Raises ValueError (an earlier corpus that cannot be extended, a
    file that is no tokenizer, a model that cannot be used), `BlocklistError` or OSError (a file that cannot be
    read), each in one line; an index that cannot be used is a ValueError too."""
    earlier = tuple(earlier_corpus(path, settings, check_files) for path in settings.extend)
    selected = None if settings.index is None else select_records(settings.index, settings.range_bytes)
    tokenizer = TokenizerFile.read(settings.tokenizer) if settings.tokenizer else None
    models = tuple(replace(model, sha256=digest_file(model.path).sha256) for model in settings.models())
    for model in models:
        check_model(model, settings.page_memory)
    for benchmark in settings.benchmarks():
        check_benchmark(benchmark)
    benchmark_digests = tuple(digest_file(path).sha256 for path in settings.decontaminate)
    given = dict(selected=selected, tokenizer=tokenizer, quality_models=models, benchmark_digests=benchmark_digests)
    if PER_LANGUAGE in settings.quality:
        given["quality_packs"] = read_packs(settings.quality_pack or DEFAULT_PACKS)
        given["quality_pack_sha256"] = digest_file(settings.quality_pack).sha256 if settings.quality_pack else ""
    if not settings.url_blocklists:
        return BuildInputs(earlier, **given)
    return BuildInputs(earlier, UrlBlocklist.load(settings.url_blocklists),
                       tuple(digest_file(path).sha256 for path in settings.url_blocklists), **given)
