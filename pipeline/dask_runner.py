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
   which spreads its input over as many partitions as the cluster has
   threads (or --dask_npartitions).
5. A side input is materialised by a nested `bag.compute()` inside each task
   that reads it, so its upstream runs again per reading task: side effects
   (a sink's temp directory, its written files) happen several times, with
   different temp directories. Here a side input is a dependency of the
   graph, computed once and passed whole to each task.

It touches none of Beam's private names: a bundle runs through Beam's
`DoFnRunner`, as on Beam's own workers. The faults are written up for Beam
in docs/upstream.md.
"""

from __future__ import annotations

import functools

import apache_beam as beam
import dask
from apache_beam import pvalue
from apache_beam.pipeline import PTransformOverride
from apache_beam.runners.common import DoFnRunner
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask import transform_evaluator as te
from apache_beam.transforms.sideinputs import SideInputMap
from apache_beam.utils.windowed_value import WindowedValue

# DaskOptions that shape bags, not the client (`--dask_npartitions`, `--dask_partition_size`).
BAG_OPTIONS = ("npartitions", "partition_size")


class _Collect(te.Receiver):
    def __init__(self, tag, values):
        self.tag = tag
        self.values = values

    def receive(self, windowed_value):
        self.values.append((self.tag, windowed_value.value))


class _Receivers(dict):
    def __init__(self, values):
        super().__init__()
        self.values = values

    def __missing__(self, tag):
        receiver = self[tag] = _Collect(tag, self.values)
        return receiver


def _concat(partitions):
    return [item for partition in partitions for item in partition]


def _run_bundle(items, fn, label, windowing, args, kwargs, side_specs, *side_values):
    values = []
    side_inputs = [
        SideInputMap(view_class, view_options, [te.get_windowed_value(item, mapping_fn) for item in data])
        for (view_class, view_options, mapping_fn), data in zip(side_specs, side_values)
    ]
    # The main output's tag is None, as in the ParDo's outputs.
    runner = DoFnRunner(fn, args, kwargs, side_inputs, windowing, _Receivers(values), step_name=label)
    runner.setup()
    runner.start()
    for item in items:
        runner.process(item if isinstance(item, WindowedValue) else te.get_windowed_value(item, windowing.windowfn))
    runner.finish()
    runner.teardown()
    return values


def _key(item):
    return item[0]


def _grouped(item):
    key, values = item
    return key, [te.defenestrate(value[1]) for value in values]


def _has_tag(pair, tag):
    return pair[0] == tag


def _value(pair):
    return pair[1]


class SpreadOverWorkers(beam.PTransform):
    """What a Reshuffle is here: the visitor spreads its input over the cluster's threads."""

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
    def to_dask_bag_visitor(bag_kwargs=None, parallelism=1):
        bag_kwargs = bag_kwargs or {}

        class Visitor(beam_dask.PipelineVisitor):
            def __init__(self):
                self.bags = {}  # PCollection -> Bag
                self.consumed = set()

            def visit_transform(self, node):
                inputs = [self.bags[value] for value in node.inputs if not isinstance(value, pvalue.PBegin)]
                self.consumed.update(id(value) for value in node.inputs)
                self.consumed.update(id(side.pvalue) for side in node.side_inputs)
                op_class = te.TRANSLATIONS.get(node.transform.__class__, te.NoOp)
                if op_class is te.ParDo:
                    raw = self._par_do(node, inputs[0])
                    for tag, output in node.outputs.items():
                        self.bags[output] = raw.filter(functools.partial(_has_tag, tag=tag)).map(_value)
                    return
                if isinstance(node.transform, SpreadOverWorkers):
                    spread = max(inputs[0].npartitions, bag_kwargs.get("npartitions") or parallelism)
                    for output in node.outputs.values():
                        self.bags[output] = inputs[0].repartition(npartitions=spread)
                    return
                if op_class is te.GroupByKey:
                    # A task shuffle, whatever the dask config says ("disk" only works in one process).
                    bag = inputs[0].groupby(_key, shuffle="tasks").map(_grouped)
                    for output in node.outputs.values():
                        self.bags[output] = bag
                    return
                op = op_class(node, bag_kwargs=bag_kwargs)
                if op_class is te.Flatten:
                    bag = op.apply(inputs)
                    if bag.npartitions > parallelism:  # concat adds up the inputs' partitions
                        bag = bag.repartition(npartitions=parallelism)
                else:
                    bag = op.apply(inputs[0] if inputs else None)
                for output in node.outputs.values():
                    self.bags[output] = bag

            def _par_do(self, node, input_bag):
                transform = node.transform
                args, kwargs = transform.raw_side_inputs
                windowing = next(iter(node.main_inputs.values())).windowing
                side_specs, side_values = [], []
                for side in node.side_inputs:
                    side_specs.append((type(side), side._view_options(), side._window_mapping_fn))
                    parts = self.bags[side.pvalue].to_delayed(optimize_graph=False)
                    side_values.append(dask.delayed(_concat)(parts))
                return input_bag.map_partitions(
                    _run_bundle, transform.fn, transform.label, windowing, list(args), kwargs, side_specs,
                    *side_values)

            def leaves(self):
                return [bag for output, bag in self.bags.items() if id(output) not in self.consumed]

        return Visitor()

    def run_pipeline(self, pipeline, options):
        import dask.distributed as ddist

        dask_options = options.view_as(beam_dask.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = {name: value for name in BAG_OPTIONS if (value := dask_options.pop(name, None))}
        client = ddist.Client(**dask_options)
        visitor = self.translate(pipeline, bag_kwargs, parallelism=sum(client.nthreads().values()) or 1)
        futures = client.compute(visitor.leaves())
        return beam_dask.DaskRunnerResult(client, futures)

    def translate(self, pipeline, bag_kwargs: dict, parallelism: int):
        """The visitor that has made `pipeline` into Dask bags (`bags`, by PCollection; `leaves()`)."""
        # Reshuffles first, so that Beam's overrides leave them to this runner.
        pipeline.replace_all([ReshuffleOverride()])
        pipeline.replace_all(beam_dask.dask_overrides())
        visitor = self.to_dask_bag_visitor(bag_kwargs, parallelism=parallelism)
        pipeline.visit(visitor)
        return visitor
