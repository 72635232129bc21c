"""Reading a finished corpus back, checking it as it goes (`read_corpus`, `read_corpus_transform`), with what a
reader needs without Beam: the shards' names and digests (`corpus_format`) and the block format (`blocks`)."""
