"""webcorpus: WARC files in, a clean, deduplicated, compressed Avro corpus out.

`python -m pipeline --help` lists the options; `pipeline.graph.build_corpus`
assembles the Beam graph from `pipeline.settings.CorpusSettings`.
"""

import logging

# Importing Beam warns that Google Cloud's BigQuery client is missing, on every
# command; it is not needed here, and the warning reads like a failure.
logging.getLogger().addFilter(lambda record: "apitools not found" not in record.getMessage())
