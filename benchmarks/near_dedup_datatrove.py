"""datatrove's MinHash deduplication (its default `MinhashConfig`) on a JSON-lines file of {"id", "text"}.

Run by benchmarks/near_dedup.py with the Python of a virtual environment
that has datatrove (benchmarks/requirements.txt); imports nothing of
webcorpus. Writes {"clusters": [[id, ...], ...]} (clusters of two or more
documents) to OUTPUT.

    python benchmarks/near_dedup_datatrove.py INPUT.jsonl WORK_DIR OUTPUT.json
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                              MinhashDedupFilter, MinhashDedupSignature)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter


def main(input_path: str, work: str, output: str) -> None:
    config = MinhashConfig()
    source = str(Path(input_path).parent)
    pattern = Path(input_path).name

    def reader():
        return JsonlReader(source, glob_pattern=pattern)

    def run(steps, tasks, name):
        LocalPipelineExecutor(pipeline=steps, tasks=tasks, logging_dir=f"{work}/logs/{name}").run()

    run([reader(), MinhashDedupSignature(output_folder=f"{work}/signatures", config=config)], 1, "signatures")
    run([MinhashDedupBuckets(input_folder=f"{work}/signatures", output_folder=f"{work}/buckets", config=config)],
        config.num_buckets, "buckets")
    run([MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=config,
                             save_cluster_id=True)], 1, "clusters")
    run([reader(), MinhashDedupFilter(input_folder=f"{work}/remove", load_cluster_ids=True,
                                      exclusion_writer=JsonlWriter(f"{work}/removed", compression=None)),
         JsonlWriter(f"{work}/kept", compression=None)], 1, "filter")

    clusters = defaultdict(list)
    for path in sorted(Path(work).glob("kept/*.jsonl")) + sorted(Path(work).glob("removed/*.jsonl")):
        for line in path.read_text().splitlines():
            doc = json.loads(line)
            cluster = doc["metadata"].get("minhash_cluster_id", -1)
            if cluster != -1:
                clusters[cluster].append(doc["id"])
    Path(output).write_text(json.dumps({"clusters": [sorted(ids) for ids in clusters.values() if len(ids) > 1]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
