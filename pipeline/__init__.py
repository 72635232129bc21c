"""webcorpus: WARC files in, a clean, deduplicated, compressed Avro corpus out.

`python -m pipeline --help` lists the options; `pipeline.graph.build_corpus`
assembles the Beam graph from `pipeline.options.CorpusSettings`.
"""
