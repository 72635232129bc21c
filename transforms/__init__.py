"""The stages of the webcorpus pipeline, one module each.

Each stage is a pure function on plain data plus a thin Beam PTransform:

- `read_warc.ReadWarc` / `ReadAllWarc`: HTML responses out of WARC files.
- `charset.DecodeCharset`: every page to UTF-8, recording the charset.
- `clean_html.CleanHtml`: only `<div>` blocks of visible text remain.
- `minimize_text.MinimizeText`: letters, digits and a few symbols, lowercased.
- `hash_dedup.HashDedup`: one document per distinct content.
- `compress_write.CompressWrite`: sharded Avro files.
- `report.WriteReport`: the run report.
"""

# Registers the https:// and http:// file system with Beam wherever a stage is unpickled (every worker).
from transforms import http_filesystem  # noqa: E402,F401
