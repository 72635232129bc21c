"""What a build reads where it starts, once, beside its WARC files: the earlier corpora of `--extend` (their
manifests and indexes, checked: `pipeline.extend`), the `--url-blocklist` files (their entries and digests), the
records a capture index selects (`--index`: `pipeline.index_select`), the `--tokenizer` file (its JSON, checked,
and its digest), the `--quality-model` files (their digests, each loaded and checked), the `--decontaminate`
files (their digests, every item read and checked) and `--quality fineweb2`'s language packs (read and checked,
with the word segmenters installed for their languages: a language without spaces that `--languages` names and
whose segmenter is not installed is refused).

`CorpusSettings` is a record of what was asked for; `BuildInputs` is what was found. The launcher reads them
before it writes anything (a refusal is one line, exit 2), and the build's identity, its manifest and its
stages take them from here: no file is read twice, nor read again after it was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline.extend import EarlierCorpus, earlier_corpus
from pipeline.index_select import IndexPlan, plan_selection
from pipeline.settings import CorpusSettings
from transforms.report.manifest import digest_file
from transforms.stages.filters.url_blocklist import UrlBlocklist
from transforms.stages.tokens import TokenizerFile
from transforms.stages.decontaminate import check_benchmark
from transforms.stages.filters.fineweb2 import DEFAULT_PACKS, read_packs
from transforms.stages.filters.segmenters import UNSUPPORTED, missing_segmenters, word_counting
from transforms.stages.filters.words import is_spaced
from transforms.stages.filters.rule_sets import PER_LANGUAGE
from transforms.stages.quality_model import QualityModel, check_model


@dataclass(frozen=True)
class BuildInputs:
    # The `--extend` corpora, checked, in their order.
    earlier_corpora: tuple[EarlierCorpus, ...] = ()
    # The entries of every `--url-blocklist` file, and each file's SHA-256 (`url_blocklist_digests`).
    url_blocklist: UrlBlocklist | None = None
    # The `--index` selection's files and units of row groups, from their footers (`index_select.plan_selection`).
    index_plan: IndexPlan | None = None
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
    # With `--quality fineweb2`: what counts each language's words here (`segmenters.word_counting`).
    word_segmenters: dict | None = None

    @property
    def url_blocklist_digests(self) -> tuple[str, ...]:
        """Each `--url-blocklist` file's SHA-256, of the bytes its entries were read from (what the manifest records
        of it)."""
        return () if self.url_blocklist is None else self.url_blocklist.sha256s

    def matches(self, settings: CorpusSettings) -> bool:
        """Whether these were read for `settings` (one earlier corpus per `--extend`, one digest per list)."""
        return (len(self.earlier_corpora) == len(settings.extend)
                and len(self.url_blocklist_digests) == len(settings.url_blocklists)
                and (self.url_blocklist is not None) == bool(settings.url_blocklists)
                and (self.index_plan is not None) == (settings.index is not None)
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
    index_plan = None if settings.index is None else plan_selection(settings.index)
    tokenizer = TokenizerFile.read(settings.tokenizer) if settings.tokenizer else None
    models = tuple(replace(model, sha256=digest_file(model.path).sha256) for model in settings.models())
    for model in models:
        check_model(model, settings.page_memory)
    for benchmark in settings.benchmarks():
        check_benchmark(benchmark)
    benchmark_digests = tuple(digest_file(path).sha256 for path in settings.decontaminate)
    given = dict(index_plan=index_plan, tokenizer=tokenizer, quality_models=models, benchmark_digests=benchmark_digests)
    if PER_LANGUAGE in settings.quality:
        packs = read_packs(settings.quality_pack or DEFAULT_PACKS)
        check_segmenters(packs, settings.languages)
        given["quality_packs"] = packs
        given["quality_pack_sha256"] = digest_file(settings.quality_pack).sha256 if settings.quality_pack else ""
        given["word_segmenters"] = word_counting({language: pack.words for language, pack in packs.items()})
    if not settings.url_blocklists:
        return BuildInputs(earlier, **given)
    blocklist = UrlBlocklist.load(settings.url_blocklists)
    return BuildInputs(earlier, blocklist, **given)


def check_segmenters(packs: dict, languages: tuple[str, ...]) -> None:
    """Raises ValueError (one line) where `--languages` names a language written without spaces whose word
    segmenter could be installed but is not: its pages would be judged without FineWeb-2's word rules. (A language
    written with spaces falls back to webcorpus's own word rules, and one `--languages` does not name to none;
    the manifest names them: `segmenters.word_counting`.)"""
    wanted = {language: packs[language].words for language in languages if language in packs
              and not is_spaced(language) and packs[language].words.partition(":")[0] not in UNSUPPORTED}
    for language, reason in missing_segmenters(wanted).items():
        raise ValueError(f"--quality {PER_LANGUAGE} --languages {language}: its word segmenter {reason}")


def segmenters_changed(recorded: dict | None, settings: CorpusSettings) -> str | None:
    """Why the word segmenters here would not count words as those a `--quality fineweb2` build's manifest
    recorded (`recorded`: its `word_segmenters`) did, in one line, or None."""
    if recorded is None:
        return None
    packs = read_packs(settings.quality_pack or DEFAULT_PACKS)
    here = word_counting({language: pack.words for language, pack in packs.items()})
    if here == recorded:
        return None

    def described(packages: dict) -> str:
        return ", ".join(f"{package} {version}" for package, version in packages.items()) or "no segmenter"

    pins = " ".join(f"'{package}=={version}'" for package, version in recorded.get("packages", {}).items())
    return (f"its words were counted by {described(recorded.get('packages', {}))}, here by "
            f"{described(here['packages'])}" + (f": pip install {pins}" if pins else ": uninstall those"))
