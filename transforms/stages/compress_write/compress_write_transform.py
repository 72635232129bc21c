"""CompressWrite, the stage: documents staged where they are read (`StageDocuments`), and each unit's surviving
records written to its corpus shard and the shards published (`WriteShard`); its pure part is `compress_write`."""

from __future__ import annotations

import bisect
import collections
import dataclasses
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows
from apache_beam.utils.windowed_value import WindowedValue

from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.report.manifest import DigestingHandle
from transforms.report.progress import note_shard_written
from transforms.report.report import tally_record
from transforms.report.signal_histograms import SignalTally
from transforms.document import Document
from transforms.state.unit_ledger import LedgerPlan, ledger_for
from transforms.vocabulary import Fingerprint
from transforms.stages.compress_write.avro_encoding import DEFAULT_SYNC_INTERVAL, RecordLayout
from transforms.stages.compress_write.formats import DEFAULT_FORMAT, resolve_codec, shard_extension, shard_writer
from transforms.stages.compress_write.schema import DEFAULT_FIELDS, resolve_fields
from transforms.stages.compress_write.compress_write import (ShardAttempt, attempt_path, finish_shard, publish, shard_name,
                                                            sync_marker_for)
from transforms.stages.compress_write.staging import (FINGERPRINTS, STAGED, STAGING_DIR, StagingRun, staged_records,
                                                     staging_path)
from transforms.stage import counter

TALLIES = "tallies"
DIGESTS = "digests"
# Shards whose last block is compressed, written and digested (`DigestingHandle`) on threads of their own while
# the next shard's records are read and joined (a shard of large pages is often one Avro block; its other blocks are
# compressed on threads as they fill: `EncodedWriter`). At most this many are held (each holds its uncompressed
# last block).
SHARDS_FINISHED_TOGETHER = 2


class WriteShard(beam.DoFn):
    """Writes one unit's surviving records to its corpus shard, in a file of this attempt's own; outputs the
    `ShardAttempt`."""

    def __init__(self, output_dir: str, staging_dir: str, codec: str, level: int | None, sync_interval: int,
                 sync_marker: bytes, progress_dir: str | None = None, fields: tuple[str, ...] = DEFAULT_FIELDS,
                 file_format: str = DEFAULT_FORMAT, thresholds: dict | None = None, compressing_threads: int = 1):
        self._output_dir = output_dir
        self._compressing_threads = compressing_threads
        self._thresholds = thresholds
        self._format = file_format
        self._extension = shard_extension(file_format, codec)
        self._staging_dir = staging_dir
        self._fields = fields
        self._layout = RecordLayout(fields)
        self._codec = codec
        self._level = level
        self._sync_interval = sync_interval
        self._sync_marker = sync_marker
        self._progress_dir = progress_dir

    def setup(self):
        self._written = counter("compress_write", "records")
        self._finishing = ThreadPoolExecutor(SHARDS_FINISHED_TOGETHER, thread_name_prefix="write-shard")
        # A shard's full blocks, compressed while the next are joined (`EncodedWriter`).
        self._compressing = ThreadPoolExecutor(self._compressing_threads, thread_name_prefix="compress-block")

    def start_bundle(self):
        self._pending: collections.deque = collections.deque()

    def process(self, grouped, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam, shard_order=()):
        unit, parts = grouped
        # Within a unit, a capture is known by its offset: record ids repeat in the wild.
        notes = {note.source_offset: note for note in parts["survivors"]}
        dropped = set(parts["duplicates"])
        near_dropped = set(parts.get("near_duplicates", ()))
        near_counts = {note.source_offset: note.near_duplicate_count for note in parts.get("near_survivors", ())}
        # `shard_order` is sorted: a snapshot has about 1.5 million units, too many for a linear search each.
        shard = FileSystems.join(self._output_dir,
                                 shard_name(bisect.bisect_left(shard_order, unit), len(shard_order), self._extension))
        path = attempt_path(self._staging_dir, shard)
        tally, signals = Counter(), SignalTally(self._thresholds or {})
        records = 0
        # Written as the format's writer gives them: Beam would compress a `.gz` or `.zst` name again itself.
        handle = DigestingHandle(FileSystems.create(path, compression_type=CompressionTypes.UNCOMPRESSED))
        try:
            writer = shard_writer(self._format, handle, self._fields, self._codec, self._level, self._sync_interval,
                                  self._sync_marker, self._compressing, self._compressing_threads)
            for staged in staged_records(sorted(parts[STAGED]), self._staging_dir, self._layout):
                offset = staged["source_offset"]
                if offset in dropped or offset in near_dropped:
                    continue
                note = notes.get(offset)
                duplicates = None if note is None else self._layout.duplicates_of(
                    note.duplicate_count, note.duplicate_urls, note.duplicate_record_ids)
                near_count, duplicate_count = near_counts.get(offset, 0), 0 if note is None else note.duplicate_count
                # The report tallies the signals as written (with their clusters' sizes).
                written = self._layout.written_signals(staged, duplicate_count, near_count)
                tally_record(staged if written is None else dict(staged, signals=written), self._thresholds, tally,
                             signals)
                writer.write(self._layout.record(staged, duplicates, near_count, duplicate_count, written))
                records += 1
        except BaseException:
            # (The blocks still compressing write nothing: the file is written by this thread alone.)
            handle.close()
            raise
        signals.add_to(tally)
        finished = self._finishing.submit(finish_shard, handle, writer, path, records)
        self._pending.append((finished, WindowedValue(None, timestamp, (window,)), shard, tally, records,
                              len(shard_order)))
        while len(self._pending) > SHARDS_FINISHED_TOGETHER:
            yield from self._finished(*self._pending.popleft())

    def finish_bundle(self):
        while self._pending:
            yield from self._finished(*self._pending.popleft())

    def teardown(self):
        self._finishing.shutdown()
        self._compressing.shutdown()

    def _finished(self, finished, element: WindowedValue, shard: str, tally: Counter, records: int, shards: int):
        digest = finished.result()
        self._written.inc(records)
        if self._progress_dir is not None:
            note_shard_written(self._progress_dir, shard, shards)
        yield element.with_value(ShardAttempt(shard, digest.path))
        yield beam.pvalue.TaggedOutput(TALLIES, element.with_value(tally))
        yield beam.pvalue.TaggedOutput(DIGESTS, element.with_value(dataclasses.replace(digest, path=shard)))


class StageDocuments(beam.DoFn):
    """Appends each document to a staging file of its unit of reading; emits its fingerprint, and (unit, path)
    of each staging file.

    A unit is a byte range of an input file (`source_file`, `source_range`).
    Nothing here relies on how a runner fuses or splits the work: a staging
    file is named for its bundle attempt (a uuid), so a retry never shares a
    file with the attempt it replaces (a zombie's files are left unread: the
    runner commits no output of a failed attempt); and it holds a run of
    documents in rising offset, a new run beginning where the offsets of a
    unit fall, so WriteShard merges any number of them. Fused with reading,
    a unit's documents come in file order in one bundle: one file per unit.

    With a `ledger` plan (`transforms.state.unit_ledger`), each staging file is handed
    to the worker's `UnitLedger`, which closes it when its unit is complete.
    """

    def __init__(self, staging_dir: str, fields: tuple[str, ...] = DEFAULT_FIELDS, ledger: LedgerPlan | None = None):
        self._staging_dir = staging_dir
        self._layout = RecordLayout(fields)
        self._plan = ledger

    def start_bundle(self):
        self._attempt = uuid.uuid4().hex
        self._runs = 0
        self._open: dict[tuple[str, int], StagingRun] = {}

    def process(self, doc: Document):
        capture = doc.capture
        unit = (capture.source_file, capture.source_range)
        run = self._open.get(unit)
        if run is None or capture.source_offset <= run.last_offset:
            if run is not None:
                yield beam.pvalue.TaggedOutput(STAGED, (unit, run.close()))
            run = self._open[unit] = StagingRun(staging_path(self._staging_dir, unit, self._attempt, self._runs),
                                                self._layout, self._attempt, digesting=self._plan is not None)
            self._runs += 1
            if self._plan is not None:
                ledger_for(self._plan).add_run(unit, run)
        run.write(self._layout.staged(doc))
        yield Fingerprint.of(doc)

    def finish_bundle(self):
        for unit, run in self._open.items():
            yield beam.pvalue.TaggedOutput(STAGED, GlobalWindows.windowed_value((unit, run.close())))
        self._open = {}


class CompressWrite(beam.PTransform):
    """Writes the corpus shards; outputs their final `paths`, report `tallies` and manifest `digests`.

    Takes a dict of PCollections: `staged` ((unit, staging file) pairs
    from `StageDocuments`, any number per unit), and HashDedup's `survivors` and `duplicates`;
    with `near_dedup`, also NearDedup's `near_survivors` and `near_duplicates`. `thresholds`: every --quality
    threshold by name, that the report counts the records' signals each side of (`report.tally_record`).
    `compressing_threads`: the blocks of a shard compressed at once (the cores a worker has to itself; the same
    bytes whatever it is).
    """

    def __init__(self, output_dir: str, codec: str | None = None, level: int | None = None,
                 sync_interval: int = DEFAULT_SYNC_INTERVAL, sync_marker: bytes = b"", progress_dir: str | None = None,
                 near_dedup: bool = False, fields: tuple[str, ...] | None = None, file_format: str = DEFAULT_FORMAT,
                 thresholds: dict | None = None, compressing_threads: int = 1):
        super().__init__()
        self._compressing_threads = compressing_threads
        self._thresholds = thresholds
        self._progress_dir = progress_dir
        self._near_dedup = near_dedup
        self._fields = resolve_fields(fields, near_dedup)
        self._output_dir = output_dir
        self._staging_dir = FileSystems.join(output_dir, STAGING_DIR)
        self._format = file_format
        self._codec, self._level = resolve_codec(file_format, codec, level)
        self._sync_interval = sync_interval
        self._sync_marker = sync_marker or sync_marker_for({"codec": self._codec, "level": self._level})

    def expand(self, inputs):
        staged = inputs[STAGED]
        dropped = inputs["duplicates"] | "DroppedByUnit" >> beam.Map(
            lambda duplicate: ((duplicate.source_file, duplicate.source_range), duplicate.source_offset))
        # A unit whose captures reached deduplication has a shard, an empty one if they were all dropped: in a build
        # each was staged; a selection stages no capture that follows a record (`pipeline.graph.DocumentSource`).
        shard_order = (
            (staged | "StagedUnits" >> beam.Keys(), dropped | "DroppedUnits" >> beam.Keys())
            | "Units" >> beam.Flatten()
            | "DistinctUnits" >> beam.Distinct()
            # Without Beam's default for no units, which takes a stage of its own: the side input's default.
            | "AllUnits" >> beam.CombineGlobally(beam.combiners.ToListCombineFn()).without_defaults()
            | "Sorted" >> beam.Map(sorted)
        )
        parts = {
            STAGED: staged,
            "survivors": inputs["survivors"] | "SurvivorsByUnit" >> beam.Map(
                lambda note: ((note.source_file, note.source_range), note)),
            "duplicates": dropped,
        }
        if self._near_dedup:
            # Within a unit, a capture is its offset.
            parts["near_survivors"] = inputs["near_survivors"] | "NearSurvivorsByUnit" >> beam.Map(
                lambda note: ((note.source_file, note.source_range), note))
            parts["near_duplicates"] = inputs["near_duplicates"] | "NearDroppedByUnit" >> beam.Map(
                lambda duplicate: ((duplicate.source_file, duplicate.source_range), duplicate.source_offset))
        grouped = parts | "ByUnit" >> beam.CoGroupByKey()
        shards = grouped | "WriteShards" >> beam.ParDo(
            WriteShard(self._output_dir, self._staging_dir, self._codec, self._level, self._sync_interval,
                       self._sync_marker, self._progress_dir, self._fields, self._format, self._thresholds,
                       self._compressing_threads),
            shard_order=beam.pvalue.AsSingleton(shard_order, default_value=[]),
        ).with_outputs(TALLIES, DIGESTS, main="paths")
        published = (
            shards.paths
            | "AllShards" >> beam.combiners.ToList()
            | "Publish" >> beam.FlatMap(publish, self._staging_dir)
        )
        return {"paths": published, TALLIES: shards[TALLIES], DIGESTS: shards[DIGESTS]}


class StageAndFingerprint(beam.PTransform):
    """Stages documents for CompressWrite; outputs `fingerprints` (main) and `staged`.

    With a `ledger` plan (`transforms.state.unit_ledger`), the staging files go to its
    directory of units, where a later run of the same build finds them.
    """

    def __init__(self, output_dir: str, fields: tuple[str, ...] = DEFAULT_FIELDS, ledger: LedgerPlan | None = None):
        super().__init__()
        self._staging_dir = ledger.units_dir if ledger is not None else FileSystems.join(output_dir, STAGING_DIR)
        self._fields = fields
        self._ledger = ledger

    def expand(self, docs):
        return docs | beam.ParDo(StageDocuments(self._staging_dir, self._fields, self._ledger)).with_outputs(
            STAGED, main=FINGERPRINTS)
