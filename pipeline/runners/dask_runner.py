"""A DaskRunner that runs the webcorpus graph correctly (Beam 2.77's does not).

`python -m pipeline --runner=DaskRunner` uses it. It keeps Beam's DaskRunner (options,
overrides, GroupByKey/Flatten/Create translations, result object) and fixes
five faults of apache_beam.runners.dask 2.77:

1. Tagged outputs: Beam keys its bags by producing transform, so every output
   of a `with_outputs` ParDo (documents, skipped, dead letters) reaches every
   consumer. Here bags are keyed by PCollection; a ParDo's bag holds
   (tag, value) pairs and each output PCollection filters its own tag.
2. finish_bundle outputs: Beam collects a bundle's results before calling
   finish_bundle, so what a DoFn emits there is lost. `beam.io.Write`'s
   `_WriteBundleDoFn` (num_shards=0) emits the written temp file there: the
   finalize step sees no file, writes one empty shard and leaves the temp
   files. Here results are collected after finish_bundle.
3. Only the last bag of the graph (and what it depends on) is computed, so
   every other sink (the side-output files) is silently skipped. Here every
   leaf is computed.
4. Reshuffle is a no-op, so all files matched by one pattern are read in
   one task: here it becomes `SpreadOverWorkers` (before Beam's overrides),
   which gives each element of its input a partition of its own (up to
   `SPREAD_PARTITIONS`). A partition is a task's whole input and output,
   held in a worker's memory: spread over the cluster's threads instead,
   each partition of the read held half the corpus on two workers (3.6 GB
   for 175 MB of WARC.gz). Dask's graph is fixed before it runs and the
   count of a Reshuffle's elements (the WARC ranges) is known only once its
   upstream has run, so that upstream is computed first, on the cluster;
   the client only learns how many elements each of its partitions holds.
5. A side input is materialised by a nested `bag.compute()` inside each task
   that reads it, so its upstream runs again per reading task: side effects
   (a sink's temp directory, its written files) happen several times, with
   different temp directories. Here a side input is a dependency of the
   graph, computed once and passed whole to each task.

Beyond them, chains of ParDos run as one task per partition, element by
element (`pipeline.runners.dask_fusion`): a partition is a task's whole output, held
in a worker's memory, so a ParDo per task held every document of a partition
at every stage. A bundle runs through Beam's `DoFnRunner`, as on Beam's own
workers; a side input is rebuilt on a worker from its `_view_options()` and
`_window_mapping_fn`, Beam's private state: what this module relies on is
checked, with Beam's version, before a run starts (`RELIED_ON`). The faults are written up for Beam
in docs/upstream.md.
"""

from __future__ import annotations

import uuid

import apache_beam as beam
import dask
import dask.bag
from dask.highlevelgraph import HighLevelGraph
from apache_beam import pvalue
from apache_beam.pipeline import PTransformOverride
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask import transform_evaluator as te

from pipeline.beam_import import import_worker_modules
from pipeline.runners.beam_release import INSTALL, require
from pipeline.runners.dask_fusion import RELIED_ON as FUSION_RELIES_ON, is_par_do, run_stage, stages

# What of Beam's DaskRunner and side inputs this module builds on, checked with Beam's version before a run starts.
RELIED_ON = ((beam_dask, "DaskRunner"), (beam_dask, "DaskOptions"), (beam_dask, "DaskRunnerResult"),
             (beam_dask, "PipelineVisitor"), (beam_dask, "dask_overrides"), (te, "TRANSLATIONS"), (te, "NoOp"),
             (te, "GroupByKey"), (te, "Flatten"), (te, "defenestrate"), (pvalue, "AsSideInput._view_options"),
             *FUSION_RELIES_ON)
# (A side input's window mapping is set by its __init__.)
ASSIGNED_IN = ((pvalue, "AsSideInput", ("_window_mapping_fn",)),)

# DaskOptions that shape bags, not the client (`--dask_npartitions`, `--dask_partition_size`).
BAG_OPTIONS = ("npartitions", "partition_size")
# The most partitions a Reshuffle's output is spread over (then elements share them): a partition is a task
# per stage, and the scheduler's work grows with tasks. The WARC ranges of 100 Common Crawl files: about 1,600.
SPREAD_PARTITIONS = 4096


def _concat(partitions):
    return [item for partition in partitions for item in partition]


def _elements(slices):
    """The elements that `slices` ((partition, start, stop): a partition as a list, on a worker) name, in order."""
    return [element for partition, start, stop in slices for element in partition[start:stop]]


def spread_slices(lengths: list[int], count: int) -> list[list[tuple[int, int, int]]]:
    """Partitions of `lengths[i]` elements each, cut into `count` runs of consecutive elements as even as can be
    (or one per element, if fewer), each run as its slices (index of a partition, start, stop)."""
    total = sum(lengths)
    runs = min(count, total)
    cuts = []
    index = offset = 0  # a partition, and the position of its first element among all
    for run in range(runs):
        position, stop = total * run // runs, total * (run + 1) // runs
        slices = []
        while position < stop:
            while position >= offset + lengths[index]:
                offset += lengths[index]
                index += 1
            end = min(stop, offset + lengths[index])
            slices.append((index, position - offset, end - offset))
            position = end
        cuts.append(slices)
    return cuts


def _key(item):
    return item[0]


def _grouped(item):
    key, values = item
    return key, [te.defenestrate(value[1]) for value in values]


def _tagged(outputs, tag):
    return outputs.get(tag, [])


def _flattened(*sources):
    """The items of `sources`: [partition, tag] for a ParDo's outputs by tag, [partition] for any other."""
    return [item for source in sources for item in (source[0] if len(source) == 1 else _tagged(*source))]


class SpreadOverWorkers(beam.PTransform):
    """What a Reshuffle is here: the visitor gives each element of its input a partition of its own."""

    def expand(self, input_or_inputs):
        return pvalue.PCollection.from_(input_or_inputs)


class ReshuffleOverride(PTransformOverride):
    def matches(self, applied_ptransform) -> bool:
        return applied_ptransform.transform.__class__ == beam.Reshuffle

    def get_replacement_transform_for_applied_ptransform(self, applied_ptransform):
        return SpreadOverWorkers()


class DaskRunner(beam_dask.DaskRunner):
    """Beam's DaskRunner, fixed: tagged outputs, finish_bundle outputs, every sink, Reshuffle, side inputs once."""

    @staticmethod
    def to_dask_bag_visitor(client, bag_kwargs=None):
        bag_kwargs = bag_kwargs or {}
        # The most partitions a bag is left in: as many as the cluster has threads (or --dask_npartitions).
        partitions = bag_kwargs.get("npartitions") or sum(client.nthreads().values()) or 1
        token = uuid.uuid4().hex  # this run's, so that a worker's idle stages are never another run's

        class Visitor(beam_dask.PipelineVisitor):
            def __init__(self):
                self.nodes = []  # Beam's transforms, upstream first
                self.bags = {}  # PCollection -> Bag
                self.tagged = {}  # PCollection -> (the bag of its ParDo's outputs by tag, its tag)
                self.consumed = set()

            def visit_transform(self, node):
                self.nodes.append(node)

            def translate(self):
                self.stage_of = stages(self.nodes)
                for node in self.nodes:
                    self._translate(node)

            def _translate(self, node):
                self.consumed.update(id(value) for value in node.inputs)
                self.consumed.update(id(side.pvalue) for side in node.side_inputs)
                if is_par_do(node):
                    # The stage's head makes the whole stage; the PCollections within it have no bag.
                    stage = self.stage_of[node]
                    if node is stage.nodes[0]:
                        by_key = self._run_stage(stage, self.bags[node.inputs[0]])
                        for output, key in stage.leaving.items():
                            self.bags[output] = by_key.map_partitions(_tagged, key)
                            self.tagged[output] = by_key, key
                    return
                inputs = [self.bags[value] for value in node.inputs if not isinstance(value, pvalue.PBegin)]
                op_class = te.TRANSLATIONS.get(node.transform.__class__, te.NoOp)
                if isinstance(node.transform, SpreadOverWorkers):
                    spread = self._spread(inputs[0])
                    for output in node.outputs.values():
                        self.bags[output] = spread
                    return
                if op_class is te.GroupByKey:
                    # A task shuffle, whatever the dask config says ("disk" only works in one process); its
                    # tasks grow as partitions times their logarithm, and what is grouped here is small.
                    bag = self._fewer(inputs[0]).groupby(_key, shuffle="tasks").map(_grouped)
                    for output in node.outputs.values():
                        self.bags[output] = bag
                    return
                if op_class is te.Flatten:
                    bag = self._flatten(node.inputs)
                else:
                    bag = op_class(node, bag_kwargs=bag_kwargs).apply(inputs[0] if inputs else None)
                for output in node.outputs.values():
                    self.bags[output] = bag

            @staticmethod
            def _fewer(bag):
                """`bag` in at most as many partitions as the cluster has threads (or --dask_npartitions)."""
                return bag.repartition(npartitions=partitions) if bag.npartitions > partitions else bag

            def _flatten(self, pcollections):
                """`pcollections` in at most as many partitions as `_fewer` leaves, each one task (a ParDo's
                output read from its outputs by tag: a task of its own per partition would not fuse). Made as
                one layer of the graph: a `dask.delayed` call per group merged the upstream graphs again for
                each, seconds of the client's time at 100 partitions."""
                sources, bags = [], []
                for pcollection in pcollections:
                    bag, tag = self.tagged.get(pcollection, (self.bags[pcollection], None))
                    bags.append(bag)
                    sources += [[key, tag] if pcollection in self.tagged else [key] for key in bag.__dask_keys__()]
                groups = [sources[index::partitions] for index in range(min(partitions, len(sources)))] or [[]]
                name = f"flatten-{uuid.uuid4().hex}"
                layer = {(name, index): (_flattened, *group) for index, group in enumerate(groups)}
                return dask.bag.Bag(HighLevelGraph.from_collections(name, layer, dependencies=bags), name,
                                    len(groups))

            @staticmethod
            def _spread(bag):
                # Computed on the cluster, where the partitions stay: the client gathers their lengths.
                partitions = client.compute(bag.to_delayed())
                lengths = client.gather(client.map(len, partitions))
                runs = [dask.delayed(_elements)([(partitions[index], start, stop) for index, start, stop in slices])
                        for slices in spread_slices(lengths, SPREAD_PARTITIONS)]
                return dask.bag.from_delayed(runs or [dask.delayed(list)()])

            def _run_stage(self, stage, input_bag):
                """A bag whose partitions are the outputs, by key, that leave `stage` (pipeline.runners.dask_fusion)."""
                side_specs, side_values = [], []
                for side in stage.nodes[0].side_inputs:
                    side_specs.append((type(side), side._view_options(), side._window_mapping_fn))
                    parts = self.bags[side.pvalue].to_delayed(optimize_graph=False)
                    side_values.append(dask.delayed(_concat)(parts))
                return input_bag.map_partitions(run_stage, (token, stage.nodes[0].full_label), stage.members,
                                                side_specs, *side_values)

            def leaves(self):
                return [bag for output, bag in self.bags.items() if id(output) not in self.consumed]

        return Visitor()

    def run_pipeline(self, pipeline, options):
        import dask.distributed as ddist

        require("webcorpus's DaskRunner (pipeline/runners/dask_runner.py)",
                f"{INSTALL}, or run Beam's own DaskRunner with --runner=apache_beam.runners.dask.dask_runner.DaskRunner",
                RELIED_ON, ASSIGNED_IN)

        dask_options = options.view_as(beam_dask.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = {name: value for name in BAG_OPTIONS if (value := dask_options.pop(name, None))}
        client = ddist.Client(**dask_options)
        # The workers import what the tasks need while this client translates the graph, not when the first
        # tasks come, Beam lean (`pipeline.beam_import`; a worker that has imported them already does nothing).
        client.run(import_worker_modules, wait=False)
        visitor = self.translate(pipeline, client, bag_kwargs)
        futures = client.compute(visitor.leaves())
        return beam_dask.DaskRunnerResult(client, futures)

    def translate(self, pipeline, client, bag_kwargs: dict):
        """The visitor that has made `pipeline` into Dask bags for `client`'s cluster (`bags`, by PCollection;
        `leaves()`). What a Reshuffle's output depends on is computed on the cluster meanwhile."""
        # Reshuffles first, so that Beam's overrides leave them to this runner.
        pipeline.replace_all([ReshuffleOverride()])
        pipeline.replace_all(beam_dask.dask_overrides())
        visitor = self.to_dask_bag_visitor(client, bag_kwargs)
        pipeline.visit(visitor)
        visitor.translate()
        return visitor
