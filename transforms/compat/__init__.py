"""The modules that rely on another library's internals, each checking that library's version first and
failing in one line on another: `fastavro_compat` and `langdetect_compat`. (warcio's is the reader's own part,
`stages/read_warc/warcio_compat`; Beam's runners' are `pipeline/runners/`.)"""
