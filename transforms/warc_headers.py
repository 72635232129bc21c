"""What warcio's record parser is given to read a record's headers: bounded lines, and what is missing said so.

warcio reads a header line whole, however long (a 10 MB line is read, or
swallows the headers after it when it ends in a bare CR), and a response
record without WARC-Target-URI fails inside it with an AttributeError of its
own. Here a WARC header line over `HEADER_LINE_LIMIT` bytes, and a record
that lacks its target URI, are a `DamagedHeader` that says which: the reader
reports it as damage with that reason and resumes at the next record. What
fails after a record's WARC headers were read (its HTTP headers, cut by the
end of a whole-file gzip) is told of that record (`RecordLoader.last_read`).
"""

from __future__ import annotations

from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.recordloader import ArcWarcRecordLoader
from warcio.statusandheaders import StatusAndHeadersParser

# No WARC header line is this long: a longer one is damage.
HEADER_LINE_LIMIT = 1 << 20
# The record types whose block is about a target URI (warcio parses their HTTP headers).
TARGETED_TYPES = ("response", "request", "revisit")


class DamagedHeader(Exception):
    """A record's WARC headers that cannot be a record's."""


class BoundedLines:
    """A warcio reader whose lines read without a length (a record's WARC headers) are bounded (`HEADER_LINE_LIMIT`).

    (warcio's parser reads header lines with no length; the HTTP headers are read within the record's length.)
    """

    def readline(self, length=None):
        if length is not None:
            return super().readline(length)
        # (warcio's readline with a length may stop before it, short of a line end: it is called again.)
        line = b""
        while len(line) <= HEADER_LINE_LIMIT:
            piece = super().readline(HEADER_LINE_LIMIT + 1 - len(line))
            line += piece
            if not piece or line.endswith(b"\n"):
                return line
        raise DamagedHeader(f"a WARC header line over {HEADER_LINE_LIMIT:,} bytes")


class BoundedReader(BoundedLines, DecompressingBufferedReader):
    """warcio's reader (of a file not compressed, or gzipped), with bounded header lines."""


class _RememberingParser(StatusAndHeadersParser):
    """warcio's header parser, keeping the last headers it read whole."""

    last = None

    def parse(self, stream, full_statusline=None):
        self.last = super().parse(stream, full_statusline)
        return self.last


class RecordLoader(ArcWarcRecordLoader):
    """warcio's record parser, saying what is missing where warcio would fail on it."""

    def __init__(self, verify_http: bool = True, arc2warc: bool = True):
        super().__init__(verify_http=verify_http, arc2warc=arc2warc)
        self.warc_parser = _RememberingParser(self.WARC_TYPES)

    def forget(self) -> None:
        """Called before a record is parsed: `last_read` is of that record only."""
        self.warc_parser.last = None

    def last_read(self) -> tuple[str, str] | None:
        """(record id, URL) of the WARC record whose headers were read since `forget` (None: none was)."""
        headers = self.warc_parser.last
        if headers is None:
            return None
        return headers.get_header("WARC-Record-ID", ""), headers.get_header("WARC-Target-URI", "")

    def load_http_headers(self, rec_type, uri, stream, length):
        if uri is None and rec_type in TARGETED_TYPES:
            raise DamagedHeader(f"a WARC {rec_type} record without WARC-Target-URI")
        return super().load_http_headers(rec_type, uri, stream, length)
