"""ReadWarc: HTML responses out of WARC files.

Every record of a file comes out as exactly one of:

* a `Document`: an HTTP 200 response whose payload is HTML, with chunked
  transfer coding and content-encoding removed (`transforms.stages.read_warc.payload`, which
  reads at most `max_page_bytes` of it); one cut short (WARC-Truncated, or
  the end of the file) is one too, with what was received and its
  `truncated` saying how, unless `skip_truncated`;
* a `Skip` of a kind in `vocabulary.SKIP_KINDS`: records a text corpus does not want;
* a `DeadLetter`: a record (or the rest of a file) that could not be read.

So `read = documents + skips + dead letters` holds for each file.

Files are WARC or ARC (version 1, the Internet Archive's format before
WARC), told apart by their first bytes, never their names (`detect_format`).
They may be gzipped per record (as Common Crawl publishes them), gzipped as
a whole, not compressed, or (WARC) compressed per record with zstd (the
IIPC's draft: an optional dictionary in a skippable frame at the start) or
LZ4 (as FastWARC writes). warcio reads gzip members and, through
`warcio_compat.FramedReader`, zstd and LZ4 frames: a record's offset is its
frame's, and a file compressed per record splits into byte ranges at frame
boundaries (a range reads the records that start in it; a runner may split a
range again, at any offset, while it is read). A whole-file gzip stream, WARC
or ARC (told apart by its first member holding more than one record, or not
the whole of one: `detect_format`), is read through a streaming gzip decoder
(`gzip_stream`), and its offsets then count uncompressed bytes; it is read
whole, by one range. ARC records come as the WARC records warcio makes of
them (`arc2warc`), without the random record id it gives them. Every gzip
is inflated by zlib-ng (`formats.gunzip_decompressor`), about 1.7x as fast as
CPython's zlib, with zlib's bytes and error messages.

What warcio warns about on stderr (a record not followed by a blank line, a
payload that stops decompressing) costs no record; it becomes a `ReadNote`
(file, offset, text) for the report, and nothing is printed.

The modules, one job each:

* `classify`: what a record is (skip kinds, HTML sniffing), and its outcome;
* `formats`: how a file is stored (`detect_format`) and the framing of each compression;
* `gzip_stream`: the decompressed stream of a file gzipped as a whole;
* `recovery`: reading on after damage (`find_next_record`) and the dead letters that say what was lost;
* `read_warc`: `read_warc`, the pure reader of a file or a byte range of it;
* `ranges`: the units of reading (`WarcRange`, `split_warc`);
* `read_warc_transform`: the Beam transforms, `ReadWarc` and `ReadAllWarc`, over a splittable DoFn;
* `warcio_compat`: the one place where warcio is changed from the inside, for its bugs, version-checked.

"""
