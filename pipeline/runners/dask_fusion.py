"""Fused stages for webcorpus's DaskRunner: chains of ParDos run in one Dask task per partition, element by element.

A Dask bag's partition is a task's whole output, held in a worker's memory
until every task that reads it has run. Run a ParDo per task, as Beam's
DaskRunner does, and each stage of a partition holds all its documents (the
raw pages, the decoded ones, the cleaned ones...) until the next stages and
every side output's readers are done. Here, as in Beam's own workers, a ParDo
whose main input is an output of another ParDo (and that reads no side
input) joins that ParDo's stage: each element goes through the whole chain
before the next is read, and only the outputs that leave the stage (read by
a GroupByKey, a Flatten, a side input, or by nothing: a leaf) are collected.
For the corpus, those are fingerprints, tallies, skips and dead letters; the
documents never leave the stage that reads, cleans and stages them.

`stages(nodes)` groups the ParDos of a pipeline's transforms (in the order
Beam visits them, upstream first); `run_stage` runs one stage's bundle. A
bundle runs through Beam's `DoFnRunner`, as on Beam's own workers.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

from apache_beam.runners.common import DoFnRunner
from apache_beam.runners.dask import transform_evaluator as te
from apache_beam.transforms.sideinputs import SideInputMap
from apache_beam.utils.windowed_value import WindowedValue

# What of Beam's Dask translations and workers this module builds on: checked, with Beam's version, by the DaskRunner
# before a run (`beam_release.require`).
RELIED_ON = ((te, "TRANSLATIONS"), (te, "ParDo"), (te, "Receiver"), (te, "get_windowed_value"),
             (DoFnRunner, "setup"), (DoFnRunner, "start"), (DoFnRunner, "process"), (DoFnRunner, "finish"),
             (DoFnRunner, "teardown"))


@dataclass
class Member:
    """A ParDo of a stage: what its DoFnRunner needs, and where each of its outputs goes, by tag: the indexes of
    the members that read it, and its key among the stage's outputs if it leaves the stage (else None)."""

    fn: object
    label: str
    windowing: object
    args: list
    kwargs: dict
    outputs: dict = field(default_factory=dict)


@dataclass
class Stage:
    """ParDos run as one (`nodes`, Beam's; `members`, what the tasks get): the first (the head) reads the
    stage's input and any side inputs; `leaving` maps each PCollection that leaves the stage to its key in the
    bundle's outputs."""

    nodes: list
    members: list = field(default_factory=list)
    leaving: dict = field(default_factory=dict)


def is_par_do(node) -> bool:
    return te.TRANSLATIONS.get(node.transform.__class__) is te.ParDo


def stages(nodes: list) -> dict:
    """The stage of each ParDo of `nodes` (the pipeline's transforms, upstream first), by node."""
    stage_of_output, stage_of = {}, {}
    readers = defaultdict(list)  # PCollection -> the nodes that read it (main or side input)
    for node in nodes:
        for value in list(node.inputs) + [side.pvalue for side in node.side_inputs]:
            readers[value].append(node)
    for node in nodes:
        if not is_par_do(node):
            continue
        upstream = None if node.side_inputs else stage_of_output.get(node.inputs[0])
        stage = upstream or Stage(nodes=[])
        stage.nodes.append(node)
        stage_of[node] = stage
        for output in node.outputs.values():
            stage_of_output[output] = stage
    for stage in {id(stage): stage for stage in stage_of.values()}.values():
        index_of = {node: index for index, node in enumerate(stage.nodes)}
        for index, node in enumerate(stage.nodes):
            args, kwargs = node.transform.raw_side_inputs
            member = Member(node.transform.fn, node.transform.label,
                            next(iter(node.main_inputs.values())).windowing, list(args), kwargs)
            for tag, output in node.outputs.items():
                inside = [index_of[reader] for reader in readers[output]
                          if reader in index_of and not reader.side_inputs and reader.inputs[0] is output]
                leaves = len(inside) < len(readers[output]) or not readers[output]
                key = f"{index}/{tag}" if leaves else None
                if leaves:
                    stage.leaving[output] = key
                member.outputs[tag] = (inside, key)
            stage.members.append(member)
    return stage_of


class _Fan(te.Receiver):
    """Passes each output on to the members that read it, and keeps it in `kept` if it leaves the stage
    (`key`: its key among the stage's outputs)."""

    def __init__(self, runners, key):
        self.runners = runners
        self.key = key
        self.kept = None

    def receive(self, windowed_value):
        for runner in self.runners:
            runner.process(windowed_value)
        if self.kept is not None:
            self.kept.append(windowed_value.value)


# Each worker process keeps the runners of the stages it ran, idle between bundles, by stage: a DoFn is set up
# once per process and then runs bundle after bundle, as on Beam's workers (making a DoFnRunner inspects every
# method of its DoFn: about a fifth of a stage's time when made per bundle).
# Only the latest run's: a worker of a cluster that outlives runs does not keep every run's DoFns.
_IDLE: dict = defaultdict(list)
_IDLE_LOCK = threading.Lock()


def _runners(members: list, side_specs: list, side_values: tuple) -> tuple[list, list]:
    """A stage's DoFnRunners, set up, and the receivers of the outputs that leave it."""
    runners = [None] * len(members)
    leaving = []
    for index in reversed(range(len(members))):
        member = members[index]
        receivers = {}
        for tag, (inside, key) in member.outputs.items():
            receivers[tag] = _Fan([runners[reader] for reader in inside], key)
            if key is not None:
                leaving.append(receivers[tag])
        side_inputs = [] if index else [
            SideInputMap(view_class, view_options, [te.get_windowed_value(item, mapping_fn) for item in data])
            for (view_class, view_options, mapping_fn), data in zip(side_specs, side_values)]
        runners[index] = DoFnRunner(member.fn, member.args, member.kwargs, side_inputs, member.windowing,
                                    receivers, step_name=member.label)
    for runner in runners:
        runner.setup()
    return runners, leaving


def run_stage(items, stage_id: tuple, members: list, side_specs: list, *side_values) -> dict:
    """Runs `items` (a partition) through a stage's `members` as one bundle; returns the outputs that leave it,
    by key. `stage_id`: (the run's token, the stage's name). `side_specs`: the view class, view options and
    window mapping of each of the head's side inputs (a stage that reads side inputs gets runners of its own
    for each bundle)."""
    reuse = not side_specs
    with _IDLE_LOCK:
        for other in [other for other in _IDLE if other[0] != stage_id[0]]:
            for runners, _ in _IDLE.pop(other):
                for runner in runners:
                    runner.teardown()
        idle = _IDLE[stage_id].pop() if reuse and _IDLE[stage_id] else None
    runners, leaving = idle or _runners(members, side_specs, side_values)
    kept: dict = {}
    for receiver in leaving:
        receiver.kept = kept.setdefault(receiver.key, [])
    for runner in runners:
        runner.start()
    windowfn = members[0].windowing.windowfn
    for item in items:
        runners[0].process(item if isinstance(item, WindowedValue) else te.get_windowed_value(item, windowfn))
    # Upstream first: what a member emits when its bundle ends goes through the members after it.
    for runner in runners:
        runner.finish()
    for receiver in leaving:
        receiver.kept = None
    if reuse:
        with _IDLE_LOCK:
            _IDLE[stage_id].append((runners, leaving))
    else:
        for runner in runners:
            runner.teardown()
    return kept
