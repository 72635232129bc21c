"""The stages of the webcorpus pipeline, one module each.

Each stage is a pure function on plain data plus a thin Beam PTransform:

- `read_warc.splittable_read.ReadWarc` / `ReadAllWarc`: HTML responses out of WARC files (the pure reader:
  `read_warc.reader`).
- `charset_transform.DecodeCharset`: every page to UTF-8, recording the charset (its rules: `charset`).
- `clean_html.CleanHtml`: only `<div>` blocks of visible text remain (its cleaner: `html_cleaner`,
  its rule and the rule's parts: `cleaning/`).
- `language.IdentifyLanguage` (with --language or --languages): the language of each page's text.
- `minimize_text_transform.MinimizeText`: letters, digits and a few symbols, lowercased (its rules:
  `minimize_text`).
- `hash_dedup.HashDedup`: one document per distinct content; `near_dedup.NearDedup` (with --near-dedup):
  one per cluster of near-duplicates.
- `sink.write.CompressWrite`: sharded Avro files (schema, encoding, staging and writing: `sink/`).
- `report_transform.WriteReport`: the run report (its tallies and tables: `report`);
  `report_page_transform.WriteReportPage`: `report.html` (its page: `report_page`);
  `manifest_transform.WriteManifest`: `manifest.json` (its content: `manifest`).

No stage module imports another: what they share is `document` (the `Document` that flows, `Skip`,
`DeadLetter`), `vocabulary` (stage, output and skip-kind names; `Capture` and the records stages hand
on) and modules that define no PTransform.

Every module that reads or writes through Beam's FileSystems imports
`http_filesystem`, which registers https:// and http:// with it wherever the
module is imported (every worker that unpickles a stage of it). This package
imports nothing itself, so that the modules without Beam (`html_cleaner`,
`cleaning`, `document`, `vocabulary`, `blocks`, `isolation`, `charset`,
`minimize_text`) load without it.
"""
