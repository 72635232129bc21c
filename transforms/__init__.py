"""The stages of the webcorpus pipeline, one module each.

Each stage is a pure function on plain data plus a thin Beam PTransform:

- `read_warc.splittable_read.ReadWarc` / `ReadAllWarc`: HTML responses out of WARC files (the pure reader:
  `read_warc.reader`).
- `charset.DecodeCharset`: every page to UTF-8, recording the charset.
- `clean_html.CleanHtml`: only `<div>` blocks of visible text remain (its cleaner: `html_cleaner`,
  its rule and the rule's parts: `cleaning/`).
- `minimize_text.MinimizeText`: letters, digits and a few symbols, lowercased.
- `hash_dedup.HashDedup`: one document per distinct content.
- `sink.write.CompressWrite`: sharded Avro files.
- `report.WriteReport`: the run report.

Every module that reads or writes through Beam's FileSystems imports
`http_filesystem`, which registers https:// and http:// with it wherever the
module is imported (every worker that unpickles a stage of it). This package
imports nothing itself, so that the modules without Beam (`html_cleaner`,
`cleaning`, `document`, `blocks`, `isolation`) load without it.
"""
