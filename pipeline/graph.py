"""The webcorpus graph: ReadWarc -> Charset -> CleanHtml -> MinimizeText -> HashDedup -> CompressWrite.

With `--language`, IdentifyLanguage runs before MinimizeText; with `--quality`, QualityFilter after it, and with
`--pii`, ScrubPersonalData after that: both before the content hash.

Beside the corpus, the output directory gets `report.json`, `report.html`
(the same report to look at, with a page inspector), and one JSON
line per record in `dead-letter-*.jsonl` (records a stage could not
process, with stage and reason), `skipped-*.jsonl` (records left out on
purpose, by kind: ReadWarc's, and the pages without text that HashDedup's
hashing step leaves out) and `duplicates-*.jsonl` (every dropped duplicate with
its survivor). With `--near-dedup`, NearDedup runs on HashDedup's survivors and
`near-duplicates-*.jsonl` lists every dropped near-duplicate with its
survivor and estimated similarity: a file of its own, so that every line of
`duplicates-*.jsonl` still means "the same content as its survivor".

Every build writes its content index, `index-*.bin` (`transforms.state.corpus_index`), from HashDedup's
contents (and NearDedup's survivors' signatures); with `--extend`, the earlier corpora's contents whose hash this
build has go into HashDedup's combine, and their signatures into NearDedup's buckets, as elements, never as a side
input.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from typing import Callable

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from pipeline.build_inputs import BuildInputs, read_build_inputs
from pipeline.index_read import ReadIndexed
from pipeline.resumable import RANGE_UNITS
from pipeline.settings import CorpusSettings
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.stages.charset_transform import DecodeCharset
from transforms.stages.clean_html.clean_html_transform import CleanHtml
from transforms.state.corpus_index_transform import (EarlierMatches, EarlierSignatures, WriteIndex, not_near_dropped,
                                                     sign_survivors)
from transforms.stages.filters.filters_transform import QualityFilter, RespectOptOut, ScrubPersonalData
from transforms.stages.filters.opt_out import headers_opt_out
from transforms.stages.filters.screens import Screens
from transforms.stages.hash_dedup_transform import HashDedup, HashDocuments
from transforms.stages.language_transform import IdentifyLanguage
from transforms.filesystems.locations import readable_by_name
from transforms.report.manifest import DigestingHandle, FileDigest
from transforms.report.manifest_transform import WriteManifest
from transforms.stages.minimize_text import minimize_lines
from transforms.stages.minimize_text_transform import MinimizeText
from transforms.stages.tokens import TokenCounter
from transforms.stages.tokens_transform import CountTokens
from transforms.stages.quality_model_transform import ScoreQuality
from transforms.stages.decontaminate_transform import Decontaminate
from transforms.stages.near_dedup_transform import UNSIGNED, NearDedup, SignDocuments
from transforms.stages.read_warc.read_warc_transform import ReadAllWarc, ReadWarc
from transforms.stages.site_boilerplate_transform import SiteBoilerplateLines
from transforms.report.report_page_transform import WriteReportPage
from transforms.report.report import INDEX, TOKENS
from transforms.report.report_transform import WriteReport
from transforms.state.unit_ledger_transform import Replay, tap
from transforms.state.unit_ledger import CANDIDATES, FINGERPRINTS, RECORDED, STAGED, LedgerPlan
from transforms.stages.compress_write.schema import CLEAN_TEXT
from transforms.stages.compress_write.compress_write import sync_marker_for
from transforms.stages.compress_write.staging import STAGING_DIR
from transforms.stages.compress_write.compress_write_transform import DIGESTS, TALLIES, CompressWrite, StageAndFingerprint
from transforms.vocabulary import (BOILERPLATE_LINES, BUILD_COUNTS, COUNTS, DEAD_LETTER, DOCUMENTS, INPUT_FILES, NEAR_SURVIVORS, NON_RESPONSE, NOTES,
                                   RECORDS_READ, SKIPPED, UNITS_READ, flat_fields)

SIDE_OUTPUTS = ("dead-letter", "skipped", "duplicates")
NEAR_DUPLICATES_FILE = "near-duplicates"
# A reader's captures that follow a record's document (`DocumentSource.follow`).
FOLLOWERS = "followers"


# Lines per side-file shard: a shard is sorted in the memory of one worker, so this bounds that memory
# (50,000 lines of about 480 bytes: 24 MB; a snapshot's listed skips are then about as many shards as its WARC
# files). The dev corpus's side files have a few thousand lines: one shard each.
LINES_PER_SHARD = 50_000
LINES_PER_WRITE = 1_000


def to_json_line(record) -> str:
    return json.dumps(flat_fields(record), ensure_ascii=False, sort_keys=True)


def side_file_name(name: str, index: int, count: int) -> str:
    return f"{name}-{index:05d}-of-{count:05d}.jsonl"


def shard_count(lines: int, lines_per_shard: int) -> int:
    """Shards for a side file of `lines` lines: one at least, so that an empty collection still has its file."""
    return max(1, math.ceil(lines / lines_per_shard))


def shard_of(line: str, count: int) -> int:
    """The shard of a line: from its content alone, so that every build puts it in the same shard."""
    return int.from_bytes(hashlib.sha256(line.encode("utf-8")).digest()[:8], "big") % count


def write_json_lines(shard_lines: tuple, output_dir: str) -> FileDigest:
    """Writes ((name, index, count), lines) to its shard `output_dir/NAME-SSSSS-of-NNNNN.jsonl`, sorted, leaving
    out `None`s; returns its digest, taken as it is written."""
    (name, index, count), lines = shard_lines
    path = FileSystems.join(output_dir, side_file_name(name, index, count))
    ordered = sorted(line for line in lines if line is not None)
    with DigestingHandle(FileSystems.create(path)) as handle:
        # In slices: the shard's text is never one string (nor its bytes) beside its lines.
        for start in range(0, len(ordered), LINES_PER_WRITE):
            handle.write("".join(f"{line}\n" for line in ordered[start:start + LINES_PER_WRITE]).encode("utf-8"))
    return handle.digest(path)


class WriteJsonLines(beam.PTransform):
    """Writes named PCollections of records as JSON lines, to shards `output_dir/NAME-SSSSS-of-NNNNN.jsonl`.

    A name gets one shard per `lines_per_shard` lines (a count of its lines
    decides), and a line goes to the shard its content hashes to; each shard
    is sorted. So the files are the same on every build, and they are written
    in parallel with at most about `lines_per_shard` lines on a worker. A
    `None` line per shard makes the file of an empty shard. Outputs the files'
    digests (`FileDigest`s), taken as they are written.
    """

    def __init__(self, output_dir: str, lines_per_shard: int = LINES_PER_SHARD):
        super().__init__()
        self._output_dir = output_dir
        self._lines_per_shard = lines_per_shard

    def expand(self, named):
        pipeline = next(iter(named.values())).pipeline
        lines = [
            records | f"ToJson-{name}" >> beam.Map(lambda record, name=name: (name, to_json_line(record)))
            for name, records in named.items()
        ] | "AllLines" >> beam.Flatten()
        lines_per_shard = self._lines_per_shard
        # Counted where the lines are (the runner sums each bundle's before the shuffle), then with every name (one
        # without lines counts 0): a Flatten of the lines themselves would be one more copy of each.
        line_counts = (lines | "OnePerLine" >> beam.Map(lambda named_line: (named_line[0], 1))
                       | "LinesPerName" >> beam.CombinePerKey(sum))
        shard_counts = (
            (line_counts, pipeline | "Names" >> beam.Create([(name, 0) for name in named]))
            | "CountsAndNames" >> beam.Flatten()
            | "EveryName" >> beam.CombinePerKey(sum)
            | "ShardCounts" >> beam.MapTuple(lambda name, count: (name, shard_count(count, lines_per_shard)))
        )
        keyed = lines | "ByShard" >> beam.Map(
            lambda named_line, counts: (
                (named_line[0], shard_of(named_line[1], counts[named_line[0]]), counts[named_line[0]]),
                named_line[1]),
            beam.pvalue.AsDict(shard_counts))
        every_shard = shard_counts | "EveryShard" >> beam.FlatMapTuple(
            lambda name, count: [((name, index, count), None) for index in range(count)])
        return (
            (keyed, every_shard)
            | "LinesAndShards" >> beam.Flatten()
            | "ByFile" >> beam.GroupByKey()
            | "Write" >> beam.Map(write_json_lines, self._output_dir)
        )


@dataclasses.dataclass(frozen=True)
class DocumentStage:
    """A stage on documents as a build applies it: its step's label, its transform for the build's settings and
    what the build read at launch (`BuildInputs`), and whether the build asks for it. What the transform gives
    beside `documents` it declares itself (`OUTPUTS`: dead letters, skips, counts), and the graph takes them by
    name into the side files, the report and the resume ledger: adding a stage is one entry of `DOCUMENT_STAGES`."""

    label: str
    make: Callable[[CorpusSettings, BuildInputs], beam.PTransform]
    wanted: Callable[[CorpusSettings], bool] = lambda settings: True


def reminimize_of(settings: CorpusSettings) -> Callable:
    """MinimizeText's own function, for a page whose lines a rule removed: minimized again from the text kept."""
    return functools.partial(minimize_lines, scripts=settings.scripts)


def quality_filter(settings: CorpusSettings, found: BuildInputs) -> QualityFilter:
    annotate = dict(language=settings.language, main_content=settings.main_content,
                    site_boilerplate=settings.site_boilerplate is not None) if settings.annotate else None
    return QualityFilter(settings.quality, settings.thresholds(), reminimize_of(settings), settings.page_timeout,
                         annotate, token_counter(found), found.quality_packs)


def token_counter(found: BuildInputs) -> TokenCounter | None:
    """With --tokenizer, what counts the tokens of the pages a stage drops; None without."""
    return TokenCounter(found.tokenizer.json) if found.tokenizer is not None else None


# Every stage between reading and staging, in the order documents go through them.
DOCUMENT_STAGES = (
    DocumentStage("Charset", lambda settings, found: DecodeCharset()),
    # The meta tags, from the decoded page, before it is cleaned.
    DocumentStage("RespectOptOut", lambda settings, found: RespectOptOut(), lambda settings: settings.respect_opt_out),
    DocumentStage("CleanHtml", lambda settings, found: CleanHtml(settings.drop_selectors, settings.page_timeout,
                                                                 settings.page_memory, settings.main_content)),
    DocumentStage("IdentifyLanguage",
                  lambda settings, found: IdentifyLanguage(settings.languages, token_counter(found)),
                  lambda settings: settings.language),
    # Across the pages of each site: the lines of CleanHtml's blocks (main content's, with --main-content), before
    # MinimizeText, so that what is kept is minimized and hashed as written.
    DocumentStage("SiteBoilerplate", lambda settings, found: SiteBoilerplateLines(
        settings.site_boilerplate, FileSystems.join(settings.output, STAGING_DIR)),
                  lambda settings: settings.site_boilerplate is not None),
    # The quality rules read the readable text (`clean_text`), with case and punctuation; so does CountTokens.
    DocumentStage("MinimizeText", lambda settings, found: MinimizeText(
        settings.scripts, CLEAN_TEXT in settings.written_fields()
        or bool(settings.quality or settings.tokenizer or settings.quality_models or settings.decontaminate))),
    DocumentStage("QualityFilter", quality_filter, lambda settings: bool(settings.quality)),
    DocumentStage("ScoreQuality", lambda settings, found: ScoreQuality(found.quality_models, settings.annotate,
                                                                       settings.page_timeout),
                  lambda settings: bool(settings.quality_models)),
    DocumentStage("Decontaminate", lambda settings, found: Decontaminate(
        settings.benchmarks(), settings.decontaminate_ngram, settings.annotate, settings.page_timeout),
                  lambda settings: bool(settings.decontaminate)),
    DocumentStage("ScrubPersonalData", lambda settings, found: ScrubPersonalData(settings.page_timeout,
                                                                                 settings.annotate),
                  lambda settings: settings.pii),
    DocumentStage("Hash", lambda settings, found: HashDocuments()),
    # The text as written, of the pages that reach deduplication (no `no-text` skip among them).
    DocumentStage("CountTokens", lambda settings, found: CountTokens(found.tokenizer.json),
                  lambda settings: bool(settings.tokenizer)),
)


def read_warc(settings: CorpusSettings, progress_dir: str | None, units_dir: str | None,
              found: BuildInputs) -> beam.PTransform:
    """A build's reader: its WARC files (or the runs of records an `--index` selected in them), the captures its
    screens skip from their headers left out."""
    # Captures skipped from their headers, before their payload is read (`--url-blocklist`, `--respect-opt-out`).
    screens = ((found.url_blocklist,) if found.url_blocklist is not None else ()) + (
        (headers_opt_out,) if settings.respect_opt_out else ())
    reading = (settings.range_bytes, progress_dir, settings.max_page_bytes, settings.skip_truncated,
               Screens(screens) if screens else None, units_dir, settings.written_fields())
    if settings.index is not None:
        return ReadIndexed(settings.index, found.index_plan, settings.range_bytes, ReadAllWarc(*reading))
    return ReadWarc(settings.inputs, *reading)


@dataclasses.dataclass(frozen=True)
class DocumentSource:
    """Where a graph's documents come from and the stages they go through before they are staged: a build's
    WARC files (`WARC_SOURCE`), or an annotated corpus (`pipeline.select_graph`).

    `read` makes the reader, whose outputs are those of `ReadWarc`, each by its tag: `documents`, `skipped`,
    dead letters, `input_files` (`InputDigest`s), `records_read`, `notes`, `units_read` and `recorded`.
    `stages`: None for a build's (`DOCUMENT_STAGES`, read when the graph is built: a new stage is its entry there).
    `inspects_pages`: whether report.html's inspector may read its sample pages again from the inputs;
    `resumable`: whether its units may be recorded alone (`transforms.state.unit_ledger`): a selection's with a
    token budget, whose cut is over every unit, may not.
    `recorded`: what the report and the manifest record beside the settings' identity (a selection's source and
    options); the shards' sync marker is of the settings' identity alone, as a build of them would write it.
    `follow`: for a reader that gives one document for a record and the captures that follow it (the same page:
    an annotated corpus's duplicates, its output `followers`), the transform that gives those captures' outcomes
    from their record's (`fingerprints`, `skipped`, `dead_letter` in, the same out), replayed or made anew; None:
    every capture is a document. Followers belong to no unit: their outcomes are made after the shuffle on every
    run, so a unit balances on its records alone.
    `resumed_under`: what, beside the settings' identity and its inputs, its work is reused under
    (`pipeline.resumable.build_identity`: a selection's own options; its source is its input).
    `unit_outcomes`: the reader's outputs that end records of its units (a selection's skips and dead letters are
    its source's listed ones, of no unit); `units_are`: what its units are, as the line that says how many a rerun
    reuses names them.
    """

    label: str
    read: Callable[[CorpusSettings, str | None, str | None, BuildInputs], beam.PTransform]
    stages: tuple[DocumentStage, ...] | None
    inspects_pages: bool = True
    resumable: bool = True
    recorded: dict = dataclasses.field(default_factory=dict)
    follow: Callable[[], beam.PTransform] | None = None
    resumed_under: dict = dataclasses.field(default_factory=dict)
    unit_outcomes: tuple[str, ...] = (SKIPPED, DEAD_LETTER)
    units_are: str = RANGE_UNITS


WARC_SOURCE = DocumentSource("ReadWarc", read_warc, None)


def _and(collection, replayed, name: str):
    """`collection` and, when a build resumes, the same outcomes `replayed` from completion records."""
    return collection if replayed is None else (collection, replayed) | name >> beam.Flatten()


def build_corpus(pipeline: beam.Pipeline, settings: CorpusSettings, progress_dir: str | None = None,
                 side_file_lines: int = LINES_PER_SHARD, units_dir: str | None = None,
                 found: BuildInputs | None = None, source: DocumentSource = WARC_SOURCE, compressing_threads: int = 1):
    """Adds the whole corpus build to `pipeline`; returns the PCollection of the manifest's path.

    With `progress_dir`, the readers and shard writers leave progress notes there (see `pipeline.progress`).
    `side_file_lines`: the lines per side-file shard (`LINES_PER_SHARD`). With `units_dir`, the build can
    resume (`transforms.state.unit_ledger`): its staging files and the completion records of its units go there, and the
    units recorded there by an earlier run of the same build are replayed, not read. `found`: the earlier corpora
    and URL blocklists `settings` name, as the launcher read and checked them (`pipeline.build_inputs`); read here
    where the caller did not. `source`: where the documents come from (`DocumentSource`: a build's WARC files).
    `compressing_threads`: the blocks of a shard a worker compresses at once (`CompressWrite`; the same bytes).
    """
    if found is None:
        found = read_build_inputs(settings, check_files=False)
    if settings.site_boilerplate is not None or not source.resumable:
        # A unit's pages depend on every page of their sites (or on every unit): none is recorded alone or resumed.
        units_dir = None
    # The shards' sync marker, the report and the manifest name the same identity.
    identity = settings.build_identity(found)
    recorded = dict(identity, **source.recorded)
    fields = settings.written_fields()
    read = pipeline | source.label >> source.read(settings, progress_dir, units_dir, found)
    # Each stage's outcomes that end a record or count its unit's documents, in stage order
    # (`transforms.state.unit_ledger`): the reader's, then each document stage's declared outputs.
    tapped = [{**{tag: read[tag] for tag in source.unit_outcomes}, UNITS_READ: read[UNITS_READ]}]
    documents = read[DOCUMENTS]
    for stage in DOCUMENT_STAGES if source.stages is None else source.stages:
        if stage.wanted(settings):
            transform = stage.make(settings, found)
            applied = documents | stage.label >> transform
            tapped.append({tag: applied[tag] for tag in transform.OUTPUTS})
            documents = applied[DOCUMENTS]
    stage_outputs = tapped[1:]
    # The stages that count their units' documents, by position.
    counting = tuple(position for position, outcomes in enumerate(tapped) if set(COUNTS) & set(outcomes))
    plan = None if units_dir is None else LedgerPlan(units_dir, counting, len(tapped),
                                                     settings.near_dedup is not None)
    staged = documents | "Stage" >> StageAndFingerprint(settings.output, fields, plan)
    tapped.append({"fingerprints": staged.fingerprints})
    replayed = None if plan is None else read[RECORDED] | "Replay" >> Replay(units_dir)
    # The outcomes of the captures that follow a record, beside the stages' own.
    followed = {}
    if source.follow is None:
        fingerprints = _and(staged.fingerprints, replayed and replayed[FINGERPRINTS], "AllFingerprints")
    else:
        # The records' own outcomes, and those of the units replayed, as each stage gives them: a Flatten of them
        # before the follow's shuffle would be one more copy of each in the local runner.
        # (Tuples: Beam takes a list given to a transform for one value, to create.)
        of_records = {tag: tuple(stage[tag] for stage in stage_outputs if tag in stage)
                      + (() if replayed is None else (replayed[tag],)) for tag in (SKIPPED, DEAD_LETTER)}
        own = (staged.fingerprints,) + (() if replayed is None else (replayed[FINGERPRINTS],))
        followed = ({FOLLOWERS: read[FOLLOWERS], FINGERPRINTS: own, **of_records} | "Follow" >> source.follow())
        fingerprints = (*own, followed[FINGERPRINTS]) | "AndFollowers" >> beam.Flatten()
    signature_values = 0 if settings.near_dedup is None else settings.near_dedup.permutations
    earlier_files = tuple(corpus.index_files for corpus in found.earlier_corpora)
    to_deduplicate = fingerprints
    if earlier_files:
        # The earlier corpora's contents that this build has too, as elements keyed like its own fingerprints.
        to_deduplicate = {"fingerprints": fingerprints, "earlier": fingerprints | "EarlierMatches" >> EarlierMatches(
            earlier_files, signature_values)}
    deduplicated = to_deduplicate | "HashDedup" >> HashDedup(settings.extend)
    to_write = {
        "staged": _and(staged.staged, replayed and replayed[STAGED], "AllStaged"),
        "survivors": deduplicated.survivors,
        "duplicates": deduplicated.duplicates,
    }
    near = None
    if settings.near_dedup is not None:
        # Signed where the documents are, before any shuffle, like the fingerprints.
        signed_pages = documents | "NearSign" >> SignDocuments(settings.near_dedup, with_unsigned=True)
        tapped.append({"candidates": signed_pages.candidates, "unsigned": signed_pages[UNSIGNED]})
        candidates = _and(signed_pages.candidates, replayed and replayed[CANDIDATES], "AllCandidates")
        signed = sign_survivors(deduplicated.contents, candidates, signature_values)
        near_candidates = signed.candidates if not earlier_files else {
            "candidates": signed.candidates,
            "earlier": signed.candidates | "EarlierSignatures" >> EarlierSignatures(earlier_files,
                                                                                  settings.near_dedup)}
        near = near_candidates | "NearDedup" >> NearDedup(settings.near_dedup, settings.extend)
        to_write.update(near_duplicates=near.near_duplicates, near_survivors=near[NEAR_SURVIVORS])
        index_entries = not_near_dropped(signed.entries, near.near_duplicates)
    else:
        index_entries = deduplicated.contents | "IndexEntries" >> beam.Values()
    index_files = index_entries | "Index" >> WriteIndex(settings.output, signature_values)
    if plan is not None:
        for position, outcomes in enumerate(tapped):
            tap({f"{position}-{name}": outcomes for name, outcomes in outcomes.items()}, plan, position)
    written = to_write | "CompressWrite" >> CompressWrite(
        settings.output, settings.codec, settings.level, settings.sync_interval,
        sync_marker_for(identity), progress_dir, near_dedup=near is not None,
        fields=fields, file_format=settings.format, thresholds=settings.thresholds(),
        compressing_threads=compressing_threads)

    dead_letters = [outcomes[DEAD_LETTER] for outcomes in (*tapped, followed) if DEAD_LETTER in outcomes]
    read_skips = [read[SKIPPED]]
    if replayed is not None:
        dead_letters.append(replayed[DEAD_LETTER])
        # (A replayed unit's skips are of every stage: listed as the reader's are.)
        read_skips.append(replayed[SKIPPED])
    dead = dead_letters | "AllDeadLetters" >> beam.Flatten()
    # Every request and metadata record is a skip; the report counts them, the list would only be noise. (The reader
    # counts them, `RecordsRead.non_response`; a completion record of an earlier build lists them.)
    listed_read_skips = (_and(read[SKIPPED], replayed and replayed[SKIPPED], "ReadAndReplayedSkips")
                         | "ListedSkips" >> beam.Filter(lambda skip: skip.kind != NON_RESPONSE))
    document_skips = [outcomes[SKIPPED] for outcomes in (*stage_outputs, followed) if SKIPPED in outcomes]
    listed_skips = (listed_read_skips, *document_skips) | "AllListedSkips" >> beam.Flatten()
    side_outputs = dict(zip(SIDE_OUTPUTS, (dead, listed_skips, deduplicated.duplicates)))
    if near is not None:
        side_outputs[NEAR_DUPLICATES_FILE] = near.near_duplicates
    side_files = side_outputs | "SideFiles" >> WriteJsonLines(settings.output, side_file_lines)

    # Everything the report counts, tallied (`tally_of`) and summed per bundle beside each stage; what every
    # document has is counted per range or bundle by the stage that does the work (RecordsRead, MostlyDropped).
    counts = [outcomes[tag] for outcomes in stage_outputs for tag in (*COUNTS, BUILD_COUNTS) if tag in outcomes]
    if settings.index is not None:
        # (What the index selected, counted per window of records: `pipeline.index_read`.)
        counts.append(read[BUILD_COUNTS])
    outcomes = [read[INPUT_FILES], read[RECORDS_READ], *read_skips, *document_skips, read[NOTES], *dead_letters,
                *counts, written[TALLIES], deduplicated.duplicates, written[DIGESTS]]
    if near is not None:
        outcomes.append(near.near_duplicates)
    if replayed is not None:
        outcomes.extend(replayed[tag] for tag in (RECORDS_READ, NOTES, *COUNTS))
    # (A tuple: Beam takes a list given to a transform for one value, to create.)
    report = tuple(outcomes) | "Report" >> WriteReport(settings.output, recorded)
    report_page_inputs = {
        "report": report, "fingerprints": fingerprints, "skipped": listed_skips, "dead_letter": dead,
        **{BOILERPLATE_LINES: stage[BOILERPLATE_LINES] for stage in stage_outputs if BOILERPLATE_LINES in stage}}
    # (A selection inspects no page, and runs no SiteBoilerplate: it has no lines of its source's to strike through.)
    report_page = report_page_inputs | "ReportPage" >> WriteReportPage(
        settings.output, settings.report_sample if source.inspects_pages else 0, settings.drop_selectors,
        settings.scripts, settings.max_page_bytes, readable_by_name(settings.inputs), settings.main_content,
        settings.site_boilerplate if BOILERPLATE_LINES in report_page_inputs else None)
    # Each writer digests its files as it writes them: none is read back (on an object store, downloaded).
    output_digests = ((written[DIGESTS], side_files, report, report_page, index_files)
                      | "AllOutputs" >> beam.Flatten())
    # With --tokenizer, the manifest gives the report's token totals too; with --index, its selection's counts and the
    # digest of the records it chose, which a rebuild checks.
    sections = tuple(name for name, given in ((TOKENS, settings.tokenizer), (INDEX, settings.index)) if given)
    return (read[INPUT_FILES], output_digests, report) | "Manifest" >> WriteManifest(settings.output, recorded,
                                                                                       sections)
