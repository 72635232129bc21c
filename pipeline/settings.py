"""The settings of a build (`CorpusSettings`): what shapes its bytes, checked when they are made; and the
settings a build's manifest records, for `--rebuild`."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from pipeline.crawl import CRAWL_BASES, DEFAULT_SOURCE, FileRange
from pipeline.index_options import recorded_choice
from pipeline.index_select import IndexChoice
from pipeline.recipes import RECIPES

from transforms.stages.clean_html.css_selectors import validate_selectors
from transforms.isolation import DEFAULT_PAGE_TIMEOUT
from transforms.stages.clean_html.guard import DEFAULT_PAGE_MEMORY_MIB
from transforms.stages.filters.rule_sets import PER_LANGUAGE, parse_quality, parse_thresholds
from transforms.stages.filters.signals import repeated_family
from transforms.stages.language import parse_languages
from transforms.filesystems.locations import redacted
from transforms.stages.minimize_text import DEFAULT_SCRIPTS, parse_scripts
from transforms.stages.decontaminate import DEFAULT_FIELDS, DEFAULT_NGRAM, Benchmark, benchmarks
from transforms.stages.near_dedup import MinHashParameters
from transforms.stages.site_boilerplate import SiteBoilerplate
from transforms.stages.quality_model import QualityModel, model_name, quality_models
from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES
from transforms.report.report_page import DEFAULT_SAMPLE_SIZE
from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL
from transforms.stages.compress_write.formats import DEFAULT_FORMAT, resolve_codec
from transforms.stages.compress_write.schema import LANGUAGE_FIELDS, SIGNALS, TOKEN_COUNT, resolve_fields

if TYPE_CHECKING:
    from pipeline.build_inputs import BuildInputs

# The smallest --range-size: a range is a work item and a shard; smaller ones only multiply them.
MIN_RANGE_BYTES = 1 << 20


def absolute_pattern(pattern: str) -> str:
    """A local path or glob made absolute (and `~` expanded); a URL (`gs://...`) as it is.

    So a build records where its inputs are, not where they were typed from:
    the same files give the same corpus from any directory, and `--rebuild`
    finds them from anywhere.
    """
    if "://" in pattern:
        return pattern
    return os.path.abspath(os.path.expanduser(pattern))


def existing_files(flag: str, paths) -> tuple[str, ...]:
    """The files `flag` names, made absolute (a build records where they are); ValueError in one line for a path
    that is no file."""
    absolute = tuple(map(os.path.abspath, paths))
    for path in absolute:
        if not os.path.isfile(path):
            raise ValueError(f"{flag} {path}: no such file")
    return absolute


@dataclass(frozen=True)
class CorpusSettings:
    inputs: tuple[str, ...]
    output: str
    # The corpus files' format (`--format`) and codec (None: the format's default) and level (None: the codec's).
    format: str = DEFAULT_FORMAT
    codec: str | None = None
    level: int | None = None
    drop_selectors: tuple[str, ...] = ()
    # Keep only each page's main content (`--main-content`).
    main_content: bool = False
    sync_interval: int = DEFAULT_SYNC_INTERVAL
    range_bytes: int = DEFAULT_RANGE_BYTES
    page_timeout: float = DEFAULT_PAGE_TIMEOUT
    # Decoded payload bytes past which a page is a `too-large` skip.
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    # Skip pages cut short (`--skip-truncated`) instead of keeping what was received.
    skip_truncated: bool = False
    # MiB a page may take in CleanHtml's child process.
    page_memory: int = DEFAULT_PAGE_MEMORY_MIB
    # The scripts whose letters MinimizeText keeps (`parse_scripts`).
    scripts: tuple[str, ...] = DEFAULT_SCRIPTS
    # Kept pages shown in report.html's page inspector.
    report_sample: int = DEFAULT_SAMPLE_SIZE
    # The near-duplicate stage's parameters (`--near-dedup`); None: the stage is off.
    near_dedup: MinHashParameters | None = None
    # Remove the lines that repeat across the pages of a site (`--site-boilerplate`); None: the stage is off.
    site_boilerplate: SiteBoilerplate | None = None
    # Earlier corpora whose contents this build leaves out (`--extend`): their directories, absolute.
    extend: tuple[str, ...] = ()
    # Of those, the ones taken though no build of this user signed their manifest (`--trust-corpus`).
    trust_corpora: tuple[str, ...] = field(default=(), compare=False)
    # The fields written (`--fields`); None: the default ones (`transforms.stages.compress_write.schema.resolve_fields`).
    fields: tuple[str, ...] | None = None
    # Write `clean_text` too (`--clean-text`).
    clean_text: bool = False
    # Identify each page's language (`--language`; implied by `--languages`), and keep only these (`--languages`).
    language: bool = False
    languages: tuple[str, ...] = ()
    # The quality rule sets applied, in order (`--quality`), and the thresholds changed, as NAME=VALUE
    # (`--quality-threshold`).
    quality: tuple[str, ...] = ()
    quality_thresholds: tuple[str, ...] = ()
    # A builder's own language packs for `--quality fineweb2` (`--quality-pack`), an absolute path; "": the shipped
    # ones.
    quality_pack: str = ""
    # Measure every rule of `quality` and write the values (`signals`), dropping nothing for quality (`--annotate`).
    annotate: bool = False
    # Replace e-mail and public IP addresses (`--pii`).
    pii: bool = False
    # Blocklist files of domains, hosts and URLs (`--url-blocklist`), absolute paths.
    url_blocklists: tuple[str, ...] = ()
    # fastText classifiers scoring each page (`--quality-model`), absolute paths; the label each scores and the
    # thresholds below which a page is dropped, as NAME=VALUE (`--quality-model-label`, `--quality-model-threshold`).
    quality_models: tuple[str, ...] = ()
    quality_model_labels: tuple[str, ...] = ()
    quality_model_thresholds: tuple[str, ...] = ()
    # Benchmark files whose items' n-grams mark and drop pages (`--decontaminate`), absolute; the JSON fields of an
    # item's text (`--decontaminate-fields`) and the words of an n-gram (`--decontaminate-ngram`).
    decontaminate: tuple[str, ...] = ()
    decontaminate_fields: tuple[str, ...] = DEFAULT_FIELDS
    decontaminate_ngram: int = DEFAULT_NGRAM
    # Skip pages that reserve text and data mining (`--respect-opt-out`).
    respect_opt_out: bool = False
    # The tokenizer.json whose tokens each document's readable text is counted in (`--tokenizer`), absolute; "": none.
    tokenizer: str = ""
    # The `--recipe` that set options (`pipeline.recipes`): recorded beside the options it set.
    recipe: str = ""
    # How the inputs were chosen, before the listings among them are read (`pipeline.crawl`): lines of the listings
    # (`--files`), the crawl named (`--crawl`), the base of its files. Not the build's identity: the build records the
    # files the listings name as its inputs.
    files: FileRange | None = field(default=None, compare=False)
    crawl: str = field(default="", compare=False)
    crawl_base: str = field(default=CRAWL_BASES[DEFAULT_SOURCE], compare=False)
    # The captures chosen through a capture index (`--index`, `--crawl` with `--index-*`: `pipeline.index_select`),
    # read instead of `inputs`; `--dry-run`: only say what they are.
    index: IndexChoice | None = None
    dry_run: bool = field(default=False, compare=False)
    beam_args: tuple[str, ...] = field(default=(), compare=False)
    # The manifest this build repeats (`--rebuild`), if any.
    rebuild_of: str = field(default="", compare=False)
    # Rebuild from a manifest that this user's builds did not sign (`--trust-manifest`, pipeline/signing.py).
    trust_manifest: bool = field(default=False, compare=False)
    quiet: bool = field(default=False, compare=False)
    # Beam's and the workers' logging on the terminal (otherwise kept in a log file, shown on failure).
    verbose: bool = field(default=False, compare=False)
    # Reuse the units an interrupted run of the same build finished (`--no-resume`: start afresh).
    resume: bool = field(default=True, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(map(absolute_pattern, self.inputs)))
        object.__setattr__(self, "extend", tuple(map(absolute_pattern, self.extend)))
        object.__setattr__(self, "trust_corpora", tuple(map(absolute_pattern, self.trust_corpora)))
        for path in self.trust_corpora:
            if path not in self.extend:
                raise ValueError(f"--trust-corpus {path} is no --extend corpus of this build")
        codec, level = resolve_codec(self.format, self.codec, self.level)
        object.__setattr__(self, "codec", codec)
        object.__setattr__(self, "level", level)
        validate_selectors(self.drop_selectors)
        object.__setattr__(self, "scripts", parse_scripts(self.scripts))
        if self.fields is not None:
            object.__setattr__(self, "fields", tuple(self.fields))
        if self.languages:
            object.__setattr__(self, "languages", parse_languages(self.languages))
        if self.quality:
            object.__setattr__(self, "quality", parse_quality(self.quality))
        elif self.quality_thresholds:
            raise ValueError("--quality-threshold needs --quality")
        if self.annotate and not self.quality:
            raise ValueError("--annotate needs --quality: the rule sets whose rules it measures")
        if SIGNALS in (self.fields or ()) and not self.annotate:
            raise ValueError(f"--fields {SIGNALS} needs --annotate")
        repeated = repeated_family(self.quality) if self.annotate else None
        if repeated:
            raise ValueError(f"--annotate --quality {','.join(self.quality)}: two steps of the rule sets are "
                             f"{repeated}, whose signals would have the same names")
        object.__setattr__(self, "quality_thresholds", tuple(self.quality_thresholds))
        if PER_LANGUAGE in self.quality and self.quality_thresholds:
            raise ValueError(f"--quality-threshold with --quality {PER_LANGUAGE}: its thresholds are each language's "
                             "pack's (--quality-pack)")
        if self.quality_pack:
            if PER_LANGUAGE not in self.quality:
                raise ValueError(f"--quality-pack needs --quality {PER_LANGUAGE}")
            object.__setattr__(self, "quality_pack", existing_files("--quality-pack", (self.quality_pack,))[0])
        if self.recipe and self.recipe not in RECIPES:
            raise ValueError(f"no recipe {self.recipe!r} (recipes: {', '.join(sorted(RECIPES))})")
        object.__setattr__(self, "url_blocklists", existing_files("--url-blocklist", self.url_blocklists))
        parse_thresholds(self.quality_thresholds)
        if self.tokenizer:
            object.__setattr__(self, "tokenizer", existing_files("--tokenizer", (self.tokenizer,))[0])
        elif TOKEN_COUNT in (self.fields or ()):
            raise ValueError(f"--fields {TOKEN_COUNT} needs --tokenizer")
        object.__setattr__(self, "quality_models", existing_files("--quality-model", self.quality_models))
        object.__setattr__(self, "quality_model_labels", tuple(self.quality_model_labels))
        object.__setattr__(self, "quality_model_thresholds", tuple(self.quality_model_thresholds))
        self.models()
        object.__setattr__(self, "decontaminate", existing_files("--decontaminate", self.decontaminate))
        object.__setattr__(self, "decontaminate_fields", tuple(self.decontaminate_fields))
        if self.decontaminate_ngram < 1:
            raise ValueError(f"--decontaminate-ngram must be positive, not {self.decontaminate_ngram}")
        self.benchmarks()
        # --languages, or --fields naming a language field, asks for identification too; so does --quality, whose
        # English-only rules apply to the pages identified as English (docs/stages.md).
        if self.languages or self.quality or set(self.fields or ()) & set(LANGUAGE_FIELDS):
            object.__setattr__(self, "language", True)
        self.written_fields()
        if self.sync_interval <= 0:
            raise ValueError(f"--block-size must be positive, not {self.sync_interval}")
        if self.range_bytes < MIN_RANGE_BYTES:
            raise ValueError(f"--range-size {self.range_bytes} is below the minimum of {MIN_RANGE_BYTES} bytes "
                             "(1 MiB): a range is a work item and a shard, and smaller ranges only multiply them")
        if self.report_sample < 0:
            raise ValueError(f"--report-sample must be 0 or more, not {self.report_sample}")
        if not self.page_timeout > 0:
            raise ValueError(f"--page-timeout must be positive, not {self.page_timeout}")
        if self.max_page_bytes <= 0:
            raise ValueError(f"--max-page-bytes must be positive, not {self.max_page_bytes}")
        if self.page_memory <= 0:
            raise ValueError(f"--page-memory must be positive, not {self.page_memory}")

    def build_identity(self, found: BuildInputs | None = None) -> dict:
        """The settings that shape the output's bytes (not where it is written, nor the runner); what a build
        found of the files they name (`--extend`, `--url-blocklist`: `pipeline.build_inputs`) goes in by digest."""
        if found is None:
            from pipeline.build_inputs import BuildInputs

            found = BuildInputs()
        if not found.matches(self):
            raise ValueError("the identity of a build that names files to read first (earlier corpora, URL blocklists, "
                             "an index, a tokenizer, models, benchmarks) needs them read: "
                             "pipeline.build_inputs.read_build_inputs")
        described = asdict(self)
        del described["index"]
        if self.index is not None:
            # The selection and the index files it reads (their sizes and ETags): a rebuild reads the same.
            described["index"] = {**self.index.described(), **found.index_plan.described()}
        for name in ("files", "crawl", "crawl_base", "beam_args", "dry_run", "output", "rebuild_of", "trust_manifest",
                     "trust_corpora", "quiet",
                     "verbose", "resume"):
            del described[name]
        # (Without the credentials a URL may hold: the manifest, the report and the shards' sync marker hold it.)
        described["inputs"] = [redacted(path) for path in self.inputs]
        described["drop_selectors"] = list(self.drop_selectors)
        described["scripts"] = list(self.scripts)
        # Builds without the stage, or with the default fields, keep the identity (and so the bytes) they had
        # before these options existed.
        if self.near_dedup is None:
            del described["near_dedup"]
        if self.site_boilerplate is None:
            del described["site_boilerplate"]
        del described["extend"]
        if self.extend:
            # What the build left out is what those corpora held: the manifest records each by its manifest's digest.
            described["extend"] = [{"corpus": redacted(path), "manifest_sha256": corpus.manifest_sha256}
                                   for path, corpus in zip(self.extend, found.earlier_corpora)]
        if self.format == DEFAULT_FORMAT:
            del described["format"]
        if self.fields is None:
            del described["fields"]
        else:
            described["fields"] = list(self.fields)
        for name in ("main_content", "clean_text", "language", "languages", "pii", "respect_opt_out", "recipe",
                     "annotate"):
            if not described[name]:
                del described[name]
        if self.languages:
            described["languages"] = list(self.languages)
        del described["quality"], described["quality_thresholds"], described["url_blocklists"], described["tokenizer"]
        del described["quality_pack"]
        if self.quality_pack:
            # The packs' content shapes the corpus: recorded by digest (--rebuild checks it).
            described["quality_pack"] = {"path": self.quality_pack, "sha256": found.quality_pack_sha256}
        if self.tokenizer:
            # The tokenizer's content shapes the token counts: recorded by digest, as a list is.
            described["tokenizer"] = {"path": self.tokenizer, "sha256": found.tokenizer.sha256}
        if self.url_blocklists:
            # A list's content shapes the corpus: the manifest records it by digest.
            described["url_blocklists"] = [{"path": path, "sha256": digest}
                                           for path, digest in zip(self.url_blocklists, found.url_blocklist_digests)]
        del described["quality_models"], described["quality_model_labels"], described["quality_model_thresholds"]
        if self.quality_models:
            # A model's content shapes the corpus: the manifest records it by digest (--rebuild checks it).
            described["quality_models"] = [
                {"path": model.path, "sha256": model.sha256, "label": model.label, "threshold": model.threshold}
                for model in found.quality_models]
        del described["decontaminate"], described["decontaminate_fields"], described["decontaminate_ngram"]
        if self.decontaminate:
            described["decontaminate"] = {
                "benchmarks": [{"path": path, "sha256": digest}
                               for path, digest in zip(self.decontaminate, found.benchmark_digests)],
                "fields": list(self.decontaminate_fields), "ngram": self.decontaminate_ngram}
        if self.quality:
            # Every threshold, changed or not: the manifest says what each rule measured against.
            described["quality"] = list(self.quality)
            if PER_LANGUAGE not in self.quality:
                described["quality_thresholds"] = self.thresholds()
            else:
                # The segmenters' versions shape the word counts: --rebuild refuses others.
                described["word_segmenters"] = found.word_segmenters
        return described

    def thresholds(self) -> dict:
        """Every quality threshold, by name (`transforms.stages.filters.rule_sets.DEFAULT_THRESHOLDS`, as changed)."""
        return parse_thresholds(self.quality_thresholds)

    def models(self) -> tuple[QualityModel, ...]:
        """The `--quality-model`s, with their labels and thresholds (`quality_model.quality_models`), without
        their digests (`pipeline.build_inputs` reads the files)."""
        return quality_models(self.quality_models, self.quality_model_labels, self.quality_model_thresholds)

    def benchmarks(self) -> tuple[Benchmark, ...]:
        """The `--decontaminate` files as benchmarks (`decontaminate.benchmarks`)."""
        return benchmarks(self.decontaminate, self.decontaminate_fields)

    def written_fields(self) -> tuple[str, ...]:
        """The fields of the corpus records, in schema order (`record_digest` last)."""
        return resolve_fields(self.fields, self.near_dedup is not None, self.clean_text, self.language, self.annotate,
                              bool(self.tokenizer), self.pii)


def settings_from_manifest(manifest: dict, output: str, beam_args: tuple[str, ...], path: str,
                           quiet: bool, verbose: bool = False, trust_manifest: bool = False,
                           trust_corpora: tuple[str, ...] = ()) -> CorpusSettings:
    options = manifest["options"]
    return CorpusSettings(
        inputs=tuple(options["inputs"]),
        output=output,
        # Manifests from before --format wrote Avro.
        format=options.get("format", DEFAULT_FORMAT),
        codec=options["codec"],
        level=options["level"],
        drop_selectors=tuple(options["drop_selectors"]),
        # Manifests from before --main-content kept the whole page.
        main_content=options.get("main_content", False),
        sync_interval=options["sync_interval"],
        range_bytes=options["range_bytes"],
        page_timeout=options["page_timeout"],
        # Manifests from before --max-page-bytes were built without a bound; the default is the nearest.
        max_page_bytes=options.get("max_page_bytes", DEFAULT_MAX_PAGE_BYTES),
        # Manifests from before --skip-truncated skipped pages cut short.
        skip_truncated=options.get("skip_truncated", True),
        # Manifests from before --page-memory were built without a memory limit; the default holds them.
        page_memory=options.get("page_memory", DEFAULT_PAGE_MEMORY_MIB),
        # Manifests from before --scripts were built with the default.
        scripts=tuple(options.get("scripts", DEFAULT_SCRIPTS)),
        report_sample=options.get("report_sample", DEFAULT_SAMPLE_SIZE),
        near_dedup=MinHashParameters(**options["near_dedup"]) if "near_dedup" in options else None,
        site_boilerplate=SiteBoilerplate(**options["site_boilerplate"]) if "site_boilerplate" in options else None,
        extend=tuple(entry["corpus"] for entry in options.get("extend", ())),
        # Manifests from before --fields and --clean-text wrote the default fields.
        fields=tuple(options["fields"]) if "fields" in options else None,
        clean_text=options.get("clean_text", False),
        language=options.get("language", False),
        languages=tuple(options.get("languages", ())),
        quality=tuple(options.get("quality", ())),
        quality_thresholds=tuple(f"{name}={value}" for name, value in options.get("quality_thresholds", {}).items()),
        quality_pack=options.get("quality_pack", {}).get("path", ""),
        annotate=options.get("annotate", False),
        pii=options.get("pii", False),
        url_blocklists=tuple(entry["path"] for entry in options.get("url_blocklists", ())),
        quality_models=tuple(entry["path"] for entry in options.get("quality_models", ())),
        quality_model_labels=tuple(f"{model_name(entry['path'])}={entry['label']}"
                                   for entry in options.get("quality_models", ())),
        quality_model_thresholds=tuple(f"{model_name(entry['path'])}={entry['threshold']!r}"
                                       for entry in options.get("quality_models", ())
                                       if entry["threshold"] is not None),
        decontaminate=tuple(entry["path"] for entry in options.get("decontaminate", {}).get("benchmarks", ())),
        decontaminate_fields=tuple(options.get("decontaminate", {}).get("fields", DEFAULT_FIELDS)),
        decontaminate_ngram=options.get("decontaminate", {}).get("ngram", DEFAULT_NGRAM),
        respect_opt_out=options.get("respect_opt_out", False),
        recipe=options.get("recipe", ""),
        index=recorded_choice(manifest),
        # Recorded with its SHA-256, which the caller checks (`cli.check_rebuild`, `select.recorded_tokenizer`).
        tokenizer=options.get("tokenizer", {}).get("path", ""),
        beam_args=beam_args,
        rebuild_of=path,
        trust_manifest=trust_manifest,
        trust_corpora=trust_corpora,
        quiet=quiet,
        verbose=verbose,
    )


def load_manifest(path: str) -> dict:
    from transforms.corpus.read_corpus import read_bytes

    try:
        manifest = json.loads(read_bytes(path))
        manifest["options"]["inputs"]
    except Exception as error:  # noqa: BLE001 - whatever is wrong, the manifest cannot be used
        raise ValueError(f"--rebuild {path} is not a readable webcorpus manifest: {error}") from error
    return manifest
