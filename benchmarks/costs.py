"""Per-document costs of a build, and what they come to for one Common Crawl snapshot (docs/scale.md).

    python -m benchmarks.costs [--captures 20000] [--reps 2] [--corpus DIR] [--work DIR]

Two inputs: the developer corpus (`--corpus`, default `$WEBCORPUS_CORPUS` or
`../shared/corpus`: its `warc/*.warc.gz`, real pages) and `--captures`
generated small captures (`benchmarks.scale`'s: 60 % pages of their own, 20 %
one boilerplate page, the hot key, 20 % 404s).

- CPU: each input is built with `python -m pipeline` in process (one worker),
  `--reps` times; the least CPU time of the process (user + system) less the
  least of a build of the shipped sample (the fixed cost: imports, graph,
  start-up) is the marginal cost, per response record (what a snapshot's
  "3 billion responses" count), per kept document and per GB of compressed input.
- Shuffles: the same graph (`pipeline.graph.build_corpus`) is built once more
  in process with a counting tap on the input of every GroupByKey (Beam's
  CombinePerKey, CombineGlobally, CoGroupByKey and Reshuffle are
  GroupByKeys inside), and on every side input: elements and bytes, each
  element encoded with its PCollection's own coder (what a runner's
  shuffle carries). A combine is counted before combiner lifting (a
  runner pre-combines each bundle's values per key, so what crosses is at
  most this); its largest per-key state is its largest output (key and
  accumulated value); a plain GroupByKey's is its largest group.
- Output: written bytes per kept document, the kept share of responses, and
  written bytes per GB of compressed input (report.json).

Then each figure is scaled to a snapshot of `--snapshot-responses` responses
in `--snapshot-files` WARC files of `--snapshot-gb` GB compressed in all,
and to a job of `--workers` workers of `--vcpus` vCPUs. Nothing in it is a test.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import apache_beam as beam
from apache_beam import coders
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.portability.fn_api_runner import fn_runner

from benchmarks.scale import generate
from benchmarks.throughput import DEFAULT_CORPUS, checked, pipeline_command, run_measured
from pipeline.graph import build_corpus
from pipeline.settings import CorpusSettings
from pipeline.sample import SAMPLE_PATH
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES as RANGE_BYTES

NAMESPACE = "webcorpus.costs"
GB = 1e9


class Tap:
    """Counts the elements and encoded bytes of a PCollection, and its largest element, in Beam metrics."""

    def __init__(self, label: str, coder: coders.Coder):
        self._label = label
        self._coder = coder

    def __call__(self, element):
        size = len(self._coder.encode(element))
        Metrics.counter(NAMESPACE, f"{self._label}|elements").inc()
        Metrics.counter(NAMESPACE, f"{self._label}|bytes").inc(size)
        Metrics.distribution(NAMESPACE, f"{self._label}|element").update(size)


class State:
    """Counts the keys of a shuffle and the size of each key's state: a combine's output (its accumulated value),
    a group's whole group."""

    def __init__(self, label: str, coder: coders.Coder, kind: str):
        self._label = label
        self._coder = coder
        self._kind = kind

    def __call__(self, element):
        if self._kind == "group":
            key, values = element
            element = (key, list(values))
        size = len(self._coder.encode(element))
        Metrics.counter(NAMESPACE, f"{self._label}|keys").inc()
        Metrics.counter(NAMESPACE, f"{self._label}|state_bytes").inc(size)
        Metrics.distribution(NAMESPACE, f"{self._label}|state").update(size)


class Shuffles(beam.pipeline.PipelineVisitor):
    """Finds every GroupByKey (named by the CombinePerKey around it, if any) and every side input of a graph."""

    def __init__(self):
        self.groups = []  # (label, kind, input PCollection, PCollection of per-key states)
        self.side_inputs = []  # (label of the reader, PCollection)

    def visit_transform(self, node):
        if isinstance(node.transform, beam.GroupByKey):
            parent = node.parent
            if isinstance(parent.transform, beam.CombinePerKey):
                self.groups.append((parent.full_label, "combine", node.inputs[0], parent.outputs[None]))
            else:
                self.groups.append((node.full_label, "group", node.inputs[0], node.outputs[None]))
        for side in node.side_inputs:
            self.side_inputs.append((node.full_label, side.pvalue))


def coder_of(pcoll) -> coders.Coder:
    return coders.registry.get_coder(pcoll.element_type)


def measure_shuffles(inputs: list[str], output: Path) -> dict:
    """Elements, bytes and largest state of every shuffle and side input of a build of `inputs`."""
    shutil.rmtree(output, ignore_errors=True)
    pipeline = beam.Pipeline(runner=fn_runner.FnApiRunner())
    build_corpus(pipeline, CorpusSettings(inputs=tuple(inputs), output=str(output)))
    shuffles = Shuffles()
    pipeline.visit(shuffles)
    kinds = {}
    for index, (label, kind, grouped_input, states) in enumerate(shuffles.groups):
        kinds[label] = kind
        _ = grouped_input | f"CostTap{index}" >> beam.Map(Tap(label, coder_of(grouped_input)))
        _ = states | f"CostState{index}" >> beam.Map(State(label, coder_of(states), kind))
    for index, (label, side) in enumerate(shuffles.side_inputs):
        kinds[f"side input of {label}"] = "side input"
        _ = side | f"CostSideTap{index}" >> beam.Map(Tap(f"side input of {label}", coder_of(side)))
    result = pipeline.run()
    result.wait_until_finish()
    found = {label: {"kind": kind, "elements": 0, "bytes": 0, "keys": 0, "state_bytes": 0, "largest_element": 0,
                     "largest_state": 0}
             for label, kind in kinds.items()}
    metrics = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))
    for counter in metrics["counters"]:
        label, what = counter.key.metric.name.rsplit("|", 1)
        found[label][what] += counter.committed
    for distribution in metrics["distributions"]:
        label, what = distribution.key.metric.name.rsplit("|", 1)
        key = "largest_element" if what == "element" else "largest_state"
        found[label][key] = max(found[label][key], distribution.committed.max or 0)
    return found


def build_cpu(inputs: list[str], output: Path, reps: int) -> dict:
    """The least CPU time of `reps` in-process builds of `inputs`, and the build's report."""
    runs = []
    for _ in range(reps):
        shutil.rmtree(output, ignore_errors=True)
        runs.append(checked(run_measured(pipeline_command(inputs, output)), f"the build of {inputs[0]}"))
    report = json.loads((output / "report.json").read_text())
    return {"cpu_seconds": min(run["cpu_seconds"] for run in runs), "wall_seconds": min(run["seconds"] for run in runs),
            "report": report, "compressed_bytes": sum(os.path.getsize(path) for path in inputs)}


def responses(report: dict) -> int:
    """Response records read: every record but the warcinfo, request and metadata ones (`non-response`)."""
    return report["records"]["read"] - report["skipped"].get("non-response", 0)


def costs_of(name: str, slug: str, inputs: list[str], fixed_cpu: float, reps: int, work: Path) -> dict:
    built = build_cpu(inputs, work / f"cpu-{slug}", reps)
    report = built["report"]
    marginal = built["cpu_seconds"] - fixed_cpu
    count = responses(report)
    kept = report["records"]["kept"]
    gigabytes = built["compressed_bytes"] / GB
    shuffles = measure_shuffles(inputs, work / f"shuffles-{slug}")
    return {
        "input": name, "files": len(inputs), "compressed_bytes": built["compressed_bytes"],
        "records_read": report["records"]["read"], "responses": count, "kept": kept,
        "duplicates": report["records"]["duplicates"], "cpu_seconds": round(built["cpu_seconds"], 2),
        "marginal_cpu_seconds": round(marginal, 2),
        "cpu_ms_per_response": round(1000 * marginal / count, 3),
        "cpu_ms_per_kept_document": round(1000 * marginal / kept, 3),
        "cpu_seconds_per_compressed_gb": round(marginal / gigabytes, 1),
        "kept_share_of_responses": round(kept / count, 4),
        "written_bytes": report["bytes"]["written"],
        "written_bytes_per_kept_document": round(report["bytes"]["written"] / kept),
        "written_bytes_per_compressed_gb": round(report["bytes"]["written"] / gigabytes),
        "raw_html_per_written": report["ratios"]["raw_html/written"],
        "shuffles": shuffles,
        # A group's elements cross as they are; a combine's at most so (no lifting) and at least one accumulated
        # state per key (every value of a key pre-combined in one bundle).
        "shuffled_bytes_at_most": sum(item["bytes"] for item in shuffles.values() if item["kind"] != "side input"),
        "shuffled_bytes_lifted": sum(item["bytes"] if item["kind"] == "group" else item["state_bytes"]
                                     for item in shuffles.values() if item["kind"] != "side input"),
        "units": report["output_files"],
    }


def print_costs(costs: dict) -> None:
    count = costs["responses"]
    print(f"\n== {costs['input']}: {costs['files']} files, {costs['compressed_bytes'] / 1e6:.1f} MB compressed, "
          f"{costs['records_read']:,} records, {count:,} responses, {costs['kept']:,} kept, "
          f"{costs['duplicates']:,} duplicates, {costs['units']} units (corpus shards)")
    print(f"CPU {costs['cpu_seconds']} s, {costs['marginal_cpu_seconds']} s above the fixed cost: "
          f"{costs['cpu_ms_per_response']} ms per response, {costs['cpu_ms_per_kept_document']} ms per kept document, "
          f"{costs['cpu_seconds_per_compressed_gb']} s per compressed GB")
    print(f"output: {costs['written_bytes']:,} bytes written, {costs['written_bytes_per_kept_document']:,} per kept "
          f"document, {costs['kept_share_of_responses']:.1%} of responses kept, "
          f"{costs['written_bytes_per_compressed_gb'] / 1e6:.0f} MB per compressed GB, raw HTML / written "
          f"{costs['raw_html_per_written']}x")
    print(f"{'shuffle (GroupByKey input) or side input':<58} {'kind':<10} {'elements':>9} {'bytes':>11} {'B/resp':>7} "
          f"{'keys':>7} {'states B':>10} {'largest el.':>11} {'largest state':>13}")
    for label, item in sorted(costs["shuffles"].items(), key=lambda pair: (pair[1]["kind"] == "side input",
                                                                           -pair[1]["bytes"])):
        print(f"{label[:58]:<58} {item['kind']:<10} {item['elements']:>9,} {item['bytes']:>11,} "
              f"{item['bytes'] / count:>7.1f} {item['keys']:>7,} {item['state_bytes']:>10,} "
              f"{item['largest_element']:>11,} {item['largest_state']:>13,}")
    print(f"shuffled (side inputs apart): at most {costs['shuffled_bytes_at_most']:,} bytes "
          f"({costs['shuffled_bytes_at_most'] / count:.0f} per response); combines lifted, "
          f"{costs['shuffled_bytes_lifted']:,} ({costs['shuffled_bytes_lifted'] / count:.0f} per response)")


def side_input(costs: dict, name: str) -> dict | None:
    """The side input read by the transform whose label contains `name` (None if the graph has none)."""
    return next((item for label, item in costs["shuffles"].items()
                 if item["kind"] == "side input" and name in label), None)


def print_snapshot(costs: dict, args) -> None:
    count = costs["responses"]
    by_response = costs["cpu_ms_per_response"] / 1000 * args.snapshot_responses / 3600
    by_gb = costs["cpu_seconds_per_compressed_gb"] * args.snapshot_gb / 3600
    vcpus = args.workers * args.vcpus
    units = args.snapshot_files * math.ceil(args.snapshot_gb / args.snapshot_files * GB / RANGE_BYTES)
    print(f"-- scaled to a snapshot ({args.snapshot_responses:,.0f} responses, {args.snapshot_files:,} files, "
          f"{args.snapshot_gb:,.0f} GB compressed, {units:,} units of {RANGE_BYTES // 2**20} MiB) "
          f"from {costs['input']}:")
    print(f"CPU: {by_response:,.0f} h by responses, {by_gb:,.0f} h by compressed GB; on {args.workers} workers of "
          f"{args.vcpus} vCPUs: {by_response / vcpus:.1f} h and {by_gb / vcpus:.1f} h")
    for what in ("at_most", "lifted"):
        per = costs[f"shuffled_bytes_{what}"] / count
        print(f"shuffled ({what.replace('_', ' ')}): {per * args.snapshot_responses / 1e12:.2f} TB "
              f"({per:.0f} B per response)")
    kept = costs["kept_share_of_responses"] * args.snapshot_responses
    print(f"kept: {kept / 1e9:.2f} billion documents; written: "
          f"{costs['written_bytes_per_kept_document'] * kept / 1e12:.1f} TB by documents, "
          f"{costs['written_bytes_per_compressed_gb'] * args.snapshot_gb / 1e12:.1f} TB by compressed GB")
    # Side inputs each worker that reads them holds: the sorted list of units grows with the units, the
    # manifest's lists with the files and units.
    growth = (("CompressWrite/WriteShards", costs["units"], units, "units"),
              ("Manifest/AllInputs", costs["files"], args.snapshot_files, "input files"),
              ("Manifest/Build", costs["units"], units, "units"))
    for name, here, there, unit in growth:
        item = side_input(costs, name)
        if item is not None and here:
            print(f"side input of {name}: {item['bytes']:,} bytes here, {item['bytes'] / here:.0f} per {unit[:-1]}: "
                  f"{item['bytes'] / here * there / 1e9:.2f} GB at snapshot scale")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.costs", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="the developer corpus, whose warc/*.warc.gz are built (default: %(default)s)")
    parser.add_argument("--captures", type=int, default=20_000, help="generated captures (default %(default)s)")
    parser.add_argument("--reps", type=int, default=2, help="CPU builds of each input (default %(default)s)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "webcorpus-costs",
                        help="where the generated files and outputs go (default: %(default)s)")
    parser.add_argument("--snapshot-responses", type=float, default=3e9, help="default %(default)s")
    parser.add_argument("--snapshot-files", type=int, default=90_000, help="WARC files (default %(default)s)")
    parser.add_argument("--snapshot-gb", type=float, default=100_000, help="compressed GB (default %(default)s)")
    parser.add_argument("--workers", type=int, default=500, help="workers of the job (default %(default)s)")
    parser.add_argument("--vcpus", type=int, default=4, help="vCPUs per worker (default %(default)s: n2-standard-4)")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    dev = sorted(glob.glob(str(args.corpus / "warc" / "*.warc.gz")))
    if not dev:
        parser.error(f"no {args.corpus}/warc/*.warc.gz: give --corpus or WEBCORPUS_CORPUS")
    fixed = build_cpu([str(SAMPLE_PATH)], args.work / "cpu-sample", args.reps)
    print(f"fixed cost (the shipped sample, {fixed['report']['records']['read']} records): "
          f"{fixed['cpu_seconds']:.2f} CPU s, {fixed['wall_seconds']:.1f} s wall")
    generated = generate(args.captures, 10_000, args.work / f"in-{args.captures}")
    results = [costs_of("developer corpus", "dev", dev, fixed["cpu_seconds"], args.reps, args.work),
               costs_of(f"{args.captures:,} generated captures", f"generated-{args.captures}", generated,
                        fixed["cpu_seconds"], args.reps, args.work)]
    for costs in results:
        print_costs(costs)
        print_snapshot(costs, args)
    (args.work / "costs.json").write_text(json.dumps({"fixed_cpu_seconds": fixed["cpu_seconds"], "inputs": results},
                                                     indent=1))
    print(f"\nall figures: {args.work / 'costs.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
