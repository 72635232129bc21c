"""SiteBoilerplate, the stage: `site_boilerplate`'s lines counted across the pages of each site and removed, in
Beam, by shuffles of line hashes: no worker holds a site's pages.

1. Each page is written, sealed, to a waiting file of its bundle (`WaitingPages`, under the build's staging
   directory) and gives where it waits keyed by its stretch (`stretch_key`), and its lines keyed by (site, page
   text). The pages wait on disk, not in a shuffle: a runner's shuffle holds a page's place (its file's name,
   position and size), not the page (the local runner holds a shuffle in memory, and held each waiting page twice
   as it sent it on).
2. Counts: one of each (site, page text) by a combine (a page's copies count once, and a page copied a million
   times is a combiner's work); the pages of each site and their lines by a combine; then the lines of the sites
   of at least `min_pages` pages (each site's pages meet its count in `JOIN_PARTS` groups) counted: each group's
   lines counted in maps of (line, pages) in `count_buckets` buckets of their hashes (a site's lines over
   `LINES_PER_COUNT` a bucket), summed per (site, bucket) by a combine. A footer on a million pages is a
   combiner's sum, not a hot key, and the shuffle carries a map a group and bucket, not an element a line of a
   page (most lines, an article's own, are on one page).
3. Decision: a (site, line) counted on at least `min_pages` pages meets its site's count of pages in a join keyed
   by (site, a part of the line hashes): a site's repeated lines (never its pages) in `DECISION_PARTS` groups.
4. Join to pages: each page's lines, in `line_buckets` buckets of their hashes (one with the default share),
   keyed by (site, bucket, one of `JOIN_PARTS` parts drawn from the page), met with the boilerplate lines of the
   bucket (a decision group's, packed, given to every part): a page is at most `LINE_BUCKETS` elements, not one
   a line, and a line on a million pages is `JOIN_PARTS` groups.
5. Each stretch of an input file (`STRETCH_BYTES` of a unit of reading) meets the (offset, line) pairs removed
   from its pages, in a join keyed by the stretch; its pages are read back from their waiting files (each with its
   blocks' line hashes from step 1: a line is hashed once) and go on in file order (staging writes one run a
   stretch at most), one at a time; the raw page is gone.

A waiting file is named by its bundle attempt (a retried bundle writes a file of its own, and only what a
committed bundle output points into is read) and is removed with the staging directory when the build ends.

The result is a function of the pages alone: every step is a combine or a keyed join.
Outputs `documents`, `build_counts` (`Counter`s for the report: totals, and the domains most removed from)
`boilerplate_lines` ((site, line hash) of every line removed, for report.html's inspector) and dead letters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import pickle
import uuid
from collections import Counter

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from transforms.document import DeadLetter, Document
from transforms.filesystems import http_filesystem  # noqa: F401 - FileSystems reads https:// and http:// with it
from transforms.stage import SumCounters, counter
from transforms.corpus.blocks import html_to_blocks
from transforms.stages.site_boilerplate import (NO_LINE, SiteBoilerplate, block_hashes, packed, site_of, text_hash,
                                                unpacked, without_lines)
from transforms.vocabulary import (BOILERPLATE_LINES, BUILD_COUNTS, DEAD_LETTER, DOCUMENTS, SITE_BOILERPLATE,
                                   SITE_BOILERPLATE_DOMAIN, Capture)

# Groups a boilerplate line's pages are joined in: a line on N pages is N / JOIN_PARTS pages a group.
JOIN_PARTS = 16
# Buckets of line hashes a page's lines go to the join in (one element a bucket): a site's boilerplate lines of a
# bucket are held while its pages' pass. A site's boilerplate lines, each on `min_share` of its pages, are at most
# its pages' mean count of distinct lines over `min_share`: with buckets enough that `min_share` times their count
# is `SHARE_PER_BUCKET`, a group holds at most five times the lines of a mean page, and a page is one element
# with the default share, not one a bucket (`line_buckets`).
LINE_BUCKETS = 16
SHARE_PER_BUCKET = 0.2
# Groups a site's repeated lines meet its count of pages in: one for a registered domain (a site's repeated lines,
# not its pages); the whole crawl's in 256.
DECISION_PARTS = {"domain": 1, "crawl": 256}
# The distinct lines a map of line counts holds at most (about: `count_buckets` divides a site's lines by hash).
LINES_PER_COUNT = 1 << 16
# The bytes of an input file whose pages meet their lines removed in one group (4 MiB of compressed WARC: some
# 10 to 40 MB of pages' text at most).
STRETCH_BYTES = 4 << 20
# The folder of the waiting files, in the build's staging directory.
WAITING_DIR = "site-boilerplate-waiting"
# What a waiting file is, to Beam's file systems.
MIME_TYPE = "application/octet-stream"

# The domains report.json lists by bytes removed.
TOP_DOMAINS = 20

# What is counted of the lines removed, per domain and in all.
MEASURES = ("lines", "bytes", "documents")
PAGES = "pages"
LINES = "lines"
SITES = "sites"
JOIN = "join"


def _part(value: bytes, parts: int) -> int:
    return int.from_bytes(hashlib.blake2b(value, digest_size=4).digest(), "big") % parts


def line_buckets(settings: SiteBoilerplate) -> int:
    """The buckets of line hashes a page's lines go to the join in (see `SHARE_PER_BUCKET`)."""
    if not settings.min_share:
        return LINE_BUCKETS
    return min(LINE_BUCKETS, math.ceil(SHARE_PER_BUCKET / settings.min_share))


def count_buckets(site_lines: int) -> int:
    """The buckets of line hashes a site's lines are counted in: `site_lines` (the distinct lines of its distinct
    pages, summed: at least its distinct lines) over `LINES_PER_COUNT`."""
    return max(1, math.ceil(site_lines / LINES_PER_COUNT))


def stretch_key(doc: Document) -> bytes:
    """The stretch of its unit of reading a document was read from (`STRETCH_BYTES` of its file), as 16 bytes (a
    join's key, repeated with each of its lines)."""
    source_file, source_range, source_offset = doc.capture.identity
    stretch = f"{source_file}\0{source_range}\0{source_offset // STRETCH_BYTES}"
    return hashlib.blake2b(stretch.encode("utf-8"), digest_size=16).digest()


# A page is pickled as its fields' values, without their names, its capture's too (a seventh of a page, and a
# fifth of the time to pickle and unpickle it, is its fields' names and classes).
DOCUMENT_FIELDS = tuple(field.name for field in dataclasses.fields(Document) if field.name != "capture")
CAPTURE_FIELDS = tuple(field.name for field in dataclasses.fields(Capture))


def sealed(doc: Document, hashes: bytes) -> bytes:
    """A page and its blocks' line hashes as they wait in a waiting file: pickled. Not compressed: a zstd level 1
    pass took four times the pickling, a sixth of the option's cost on the generated crawl, to save the disk a page
    takes for the while it waits."""
    capture = tuple(getattr(doc.capture, name) for name in CAPTURE_FIELDS)
    values = tuple(getattr(doc, name) for name in DOCUMENT_FIELDS)
    return pickle.dumps((capture, values, hashes), pickle.HIGHEST_PROTOCOL)


def unsealed(page: bytes) -> tuple[Document, bytes]:
    capture, values, hashes = pickle.loads(page)
    return Document(Capture(*capture), *values), hashes


class WaitingPages:
    """The waiting file of one bundle attempt in `waiting_dir`: sealed pages one after another, each found again
    by its place, (file name, position, size); opened at its first page."""

    def __init__(self, waiting_dir: str):
        self._name = f"waiting-{uuid.uuid4().hex}"
        self._path = FileSystems.join(waiting_dir, self._name)
        self._file = None
        self._written = 0

    def write(self, page: bytes) -> tuple[str, int, int]:
        if self._file is None:
            self._file = FileSystems.create(self._path, MIME_TYPE, CompressionTypes.UNCOMPRESSED)
        self._file.write(page)
        self._written += len(page)
        return self._name, self._written - len(page), len(page)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_waiting(waiting_dir: str, places: list[tuple[str, int, int]]):
    """The sealed pages at `places` ((file name, position, size) in `waiting_dir`), in that order: each waiting file
    opened once."""
    opened = {}
    try:
        for name, position, size in places:
            if name not in opened:
                opened[name] = FileSystems.open(FileSystems.join(waiting_dir, name), MIME_TYPE,
                                                CompressionTypes.UNCOMPRESSED)
            opened[name].seek(position)
            page = opened[name].read(size)
            if len(page) != size:
                raise OSError(f"the waiting file {name} in {waiting_dir} ends before the page at {position} "
                              f"({size} bytes)")
            yield page
    finally:
        for handle in opened.values():
            handle.close()


class LinesOfDocuments(beam.DoFn):
    """Each page written to its bundle's waiting file (sealed, with its blocks' line hashes, hashed once: `packed`)
    and its place there keyed by its stretch; its lines keyed by its site and text (`PAGES`), and by its site and
    bucket of their hashes, for the join (`LINES`)."""

    def __init__(self, scope: str, buckets: int, waiting_dir: str):
        self._scope = scope
        self._buckets = buckets
        self._waiting_dir = waiting_dir

    def setup(self):
        self._failed = counter(SITE_BOILERPLATE, "dead_letter")

    def start_bundle(self):
        self._waiting = WaitingPages(self._waiting_dir)

    def finish_bundle(self):
        # Closed before the bundle is committed: whatever reads a place it gave finds its page written.
        self._waiting.close()

    def process(self, doc: Document):
        try:
            site = site_of(doc.capture.url, self._scope)
            of_blocks = block_hashes(html_to_blocks(doc.cleaned_html))
            hashes = set(of_blocks)
            hashes.discard(NO_LINE)
            page = text_hash(doc)
        except Exception as error:  # noqa: BLE001 - a page that cannot be read is a dead letter, not a crash
            self._failed.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, DeadLetter.for_document(SITE_BOILERPLATE, doc, error))
            return
        stretch = stretch_key(doc)
        where = (stretch, doc.capture.source_offset)
        place = self._waiting.write(sealed(doc, packed(of_blocks) if hashes else b""))
        yield stretch, (doc.capture.source_offset, place)
        if not hashes:
            return
        # Lines go to the shuffles as 8 bytes each (`packed`): a runner holds them as one bytes object, not an int
        # object each.
        lines = sorted(hashes)
        yield beam.pvalue.TaggedOutput(PAGES, ((site, page), packed(lines)))
        part = _part(stretch + doc.capture.source_offset.to_bytes(8, "big", signed=True), JOIN_PARTS)
        buckets: dict[int, list[int]] = {}
        for line in lines:
            buckets.setdefault(line % self._buckets, []).append(line)
        for bucket, in_bucket in sorted(buckets.items()):
            yield beam.pvalue.TaggedOutput(LINES, ((site, bucket, part), (where, packed(in_bucket))))


def _lines_to_count(grouped):
    """((site, bucket), {line: pages}) of the lines of the distinct pages of a (site, part) group, counted in its
    site's `count_buckets` (`SITES`: its pages and lines), if its site has pages enough to have boilerplate. A
    bucket's map goes on once it holds `LINES_PER_COUNT` lines: no map grows with the group."""
    (site, _), joined = grouped
    of_site = next(iter(joined[SITES]), None)
    if of_site is None:
        return
    buckets = count_buckets(of_site[1])
    counts = [Counter() for _ in range(buckets)]
    for lines in joined[PAGES]:
        if buckets == 1:
            counts[0].update(unpacked(lines))
        else:
            for line in unpacked(lines):
                counts[line % buckets][line] += 1
        for bucket, counted in enumerate(counts):
            if len(counted) >= LINES_PER_COUNT:
                yield (site, bucket), dict(counted)
                counted.clear()
    for bucket, counted in enumerate(counts):
        if counted:
            yield (site, bucket), dict(counted)


def _repeated(counted, min_pages: int, parts: int):
    """((site, decision part), (line, pages)) of each line of a (site, bucket)'s counts on `min_pages` pages or
    more."""
    (site, _), counts = counted
    for line, pages in counts.items():
        if pages >= min_pages:
            yield (site, line % parts), (line, pages)


def _decide(grouped, settings: SiteBoilerplate, buckets: int):
    """The boilerplate (site, line) pairs of a (site, part) group (its repeated lines, and its site's pages); and
    (`JOIN`) for the join to pages, those of each of the `buckets` of line hashes packed, keyed by (site, bucket,
    join part) for each of the `JOIN_PARTS` parts."""
    (site, _), joined = grouped
    site_pages = sum(pages for pages, _ in joined[PAGES])
    if not site_pages:
        return
    of_bucket: dict[int, list[int]] = {}
    for line, count in joined[LINES]:
        if settings.is_boilerplate(count, site_pages):
            yield site, line
            of_bucket.setdefault(line % buckets, []).append(line)
    for bucket, lines in sorted(of_bucket.items()):
        lines = packed(sorted(lines))
        for part in range(JOIN_PARTS):
            yield beam.pvalue.TaggedOutput(JOIN, ((site, bucket, part), lines))


def _removals(grouped):
    """(stretch, (offset, lines)) for every page of a (site, bucket, part) group with boilerplate lines: those."""
    _, joined = grouped
    boilerplate = set()
    for lines in joined["boilerplate"]:
        boilerplate.update(unpacked(lines))
    if boilerplate:
        for (stretch, offset), lines in joined[LINES]:
            removed = boilerplate.intersection(unpacked(lines))
            if removed:
                yield stretch, (offset, tuple(removed))


class RemoveFromStretch(beam.DoFn):
    """A stretch's pages, read back from their waiting files in file order, without their boilerplate lines; and
    per domain, what was removed."""

    def __init__(self, waiting_dir: str):
        self._waiting_dir = waiting_dir

    def setup(self):
        self._changed = counter(SITE_BOILERPLATE, "documents_changed")

    def process(self, grouped):
        _, joined = grouped
        removed_of: dict[int, set[int]] = {}
        for offset, lines in joined["removals"]:
            removed_of.setdefault(offset, set()).update(lines)
        # In file order, each page read and unsealed as it goes.
        places = [place for _, place in sorted(joined[DOCUMENTS], key=lambda pair: pair[0])]
        for page in read_waiting(self._waiting_dir, places):
            doc, hashes = unsealed(page)
            removed = removed_of.get(doc.capture.source_offset)
            kept, lines, size = without_lines(doc, removed, unpacked(hashes)) if removed else (doc, 0, 0)
            if lines:
                self._changed.inc()
                yield beam.pvalue.TaggedOutput(BUILD_COUNTS, (site_of(doc.capture.url, "domain"), (lines, size, 1)))
            yield kept


def _sum_tuples(tuples):
    return tuple(map(sum, zip(*tuples)))


class TopAndTotals(beam.CombineFn):
    """The report's `Counter` of (domain, (lines, bytes, pages)) removed, in bounded state: the totals, and the
    `TOP_DOMAINS` domains by bytes removed."""

    def create_accumulator(self):
        return (0, 0, 0), []

    def add_input(self, accumulator, element):
        return self.merge_accumulators([accumulator, ((element[1]), [element])])

    def merge_accumulators(self, accumulators):
        accumulators = list(accumulators)
        totals = _sum_tuples([totals for totals, _ in accumulators])
        top = sorted((item for _, items in accumulators for item in items),
                     key=lambda item: (-item[1][1], item[0]))[:TOP_DOMAINS]
        return totals or (0, 0, 0), top

    def extract_output(self, accumulator):
        totals, top = accumulator
        counts = Counter({(SITE_BOILERPLATE, name): value for name, value in zip(MEASURES, totals)})
        for domain, measured in top:
            counts.update({(SITE_BOILERPLATE_DOMAIN, domain, name): value for name, value in zip(MEASURES, measured)})
        return counts


class SiteBoilerplateLines(beam.PTransform):
    """Removes each site's boilerplate lines from its pages (see the module); outputs `documents`, `build_counts`,
    `boilerplate_lines` and dead letters. The pages wait in `staging_dir` (the build's, removed when it ends)."""

    OUTPUTS = (BUILD_COUNTS, BOILERPLATE_LINES, DEAD_LETTER)

    def __init__(self, settings: SiteBoilerplate, staging_dir: str):
        super().__init__()
        self._settings = settings
        self._waiting_dir = FileSystems.join(staging_dir, WAITING_DIR)

    def expand(self, docs):
        settings = self._settings
        buckets = line_buckets(settings)
        read = docs | "Lines" >> beam.ParDo(LinesOfDocuments(settings.scope, buckets, self._waiting_dir)).with_outputs(
            PAGES, LINES, DEAD_LETTER, main=DOCUMENTS)
        parts = DECISION_PARTS[settings.scope]
        # (A page text's lines are the same on each of its copies: any one of them.)
        distinct_pages = read[PAGES] | "OnePerText" >> beam.CombinePerKey(min)
        # (site, (distinct pages, their distinct lines summed)).
        site_pages = (
            distinct_pages
            | "OneSitePage" >> beam.MapTuple(lambda key, lines: (key[0], (1, len(lines) // 8)))
            | "SitePages" >> beam.CombinePerKey(_sum_tuples)
            | "ManyPages" >> beam.Filter(lambda pair: pair[1][0] >= settings.min_pages))
        # Only the lines of sites of `min_pages` distinct pages or more are counted (most sites of a crawl have
        # fewer, and their lines are most of the keys): a site's pages meet its count in `JOIN_PARTS` groups.
        repeated = (
            {PAGES: distinct_pages | "ByPagePart" >> beam.MapTuple(
                lambda key, lines: ((key[0], _part(key[1], JOIN_PARTS)), lines)),
             SITES: site_pages | "ToEveryPagePart" >> beam.FlatMapTuple(
                 lambda site, pages: [((site, part), pages) for part in range(JOIN_PARTS)])}
            | "MeetSitesOfManyPages" >> beam.CoGroupByKey()
            | "CountInGroup" >> beam.FlatMap(_lines_to_count)
            | "PagesWithLine" >> beam.CombinePerKey(SumCounters())
            | "Repeated" >> beam.FlatMap(_repeated, settings.min_pages, parts))
        decided = (
            {LINES: repeated, PAGES: site_pages | "ToEveryPart" >> beam.FlatMapTuple(
                lambda site, pages: [((site, part), pages) for part in range(parts)])}
            | "MeetSitePages" >> beam.CoGroupByKey()
            | "Decide" >> beam.FlatMap(_decide, settings, buckets).with_outputs(JOIN, main=BOILERPLATE_LINES))
        boilerplate = decided[BOILERPLATE_LINES]
        removals = (
            {"boilerplate": decided[JOIN], LINES: read[LINES]}
            | "MeetPageLines" >> beam.CoGroupByKey()
            | "Removals" >> beam.FlatMap(_removals))
        removed = (
            {DOCUMENTS: read[DOCUMENTS], "removals": removals}
            | "ByStretch" >> beam.CoGroupByKey()
            | "Remove" >> beam.ParDo(RemoveFromStretch(self._waiting_dir)).with_outputs(BUILD_COUNTS, main=DOCUMENTS))
        counts = (
            removed[BUILD_COUNTS]
            | "PerDomain" >> beam.CombinePerKey(_sum_tuples)
            | "TopAndTotals" >> beam.CombineGlobally(TopAndTotals()))
        return {DOCUMENTS: removed[DOCUMENTS], BUILD_COUNTS: counts, BOILERPLATE_LINES: boilerplate,
                DEAD_LETTER: read[DEAD_LETTER]}
