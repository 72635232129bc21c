"""Select captures through a crawl's columnar index (`--index`, or `--crawl` with `--index-*` options).

Common Crawl's cc-index table has a row per capture: its URL, host, registered
domain and TLD, fetch status, detected MIME type and languages, and the WARC
file, offset and length of its record. A build that selects by the index
reads only the index columns its selection needs (`pipeline.index_files`),
row group by row group, and then only the matching records' bytes: records
adjacent in a file (up to `RUN_BYTES_LIMIT`) are one run, read by one
request; the chosen records of a file that start in one `--range-size`
window are a unit of reading, resume and progress, and a shard of the corpus,
as that range is in a full build (`transforms.stages.read_warc.ranges.WarcRange`
with `runs`).

A row matches when every option given holds of it: `languages` (ISO 639-3, as
the index writes `content_languages`: the page's main language, the first
listed, is one of them), `domains` (`url_host_registered_domain`), `tlds`
(`url_host_tld`), `url_pattern` (an RE2 regular expression found in `url`),
`mimes` (`content_mime_detected`), `statuses` (`fetch_status`). Then `limit`
keeps the first N in the index's order, and `sample` a deterministic fraction
(by the SHA-256 of the URL, the same on every run). Each row's `warc_filename`
is read under `base`; an index may name only relative paths there (under
`crawl-data/NAME/` with `--crawl NAME`), as a listing may name only its
crawl's files.

Where the command starts, only each index file's footer is read
(`plan_selection`: the schema checked, the row groups whose statistics leave
out every row passed over); the rows are read and matched in the pipeline
(`pipeline.index_read`), a unit of row groups at a time (`RowGroups`), and
no step holds the matching records. The records chosen are recorded by a
digest that needs no order (`record_digest`: the sum of their SHA-256).

pyarrow is imported where an index is read, not with this module: a build without an index never loads it
(`pipeline.beam_import`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterator

from pipeline.index_files import IndexFile, IndexRefused, index_paths, opened_index
from transforms.filesystems.locations import redacted
from transforms.stages.read_warc.ranges import WarcRange

# The columns of Common Crawl's table a selection reads: where each record is, and its URL (sampled by it).
LOCATION = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
COLUMNS = {"languages": "content_languages", "domains": "url_host_registered_domain", "tlds": "url_host_tld",
           "url_pattern": "url", "mimes": "content_mime_detected", "statuses": "fetch_status"}
# Adjacent records read in one request, up to this many bytes (Common Crawl's records are about 20 KB gzipped).
RUN_BYTES_LIMIT = 16 << 20
SAMPLE_SCALE = 1 << 64
# Row groups of one index file read by one unit of the selection (Common Crawl's files have about ten of ~100 MB),
# more where their chosen column chunks come to less than FOOTERS_PER_UNIT times the file's footer, which each
# unit reads again: an index of small row groups has a footer of hundreds of KB.
ROW_GROUPS_PER_UNIT = 4
FOOTERS_PER_UNIT = 16
# --dry-run's estimate: a request's latency and a worker's throughput (Common Crawl's servers, one stream), and
# the price of S3 GET requests (AWS's us-east-1 list price).
ESTIMATE_REQUEST_SECONDS = 0.05
ESTIMATE_BYTES_PER_SECOND = 50e6
S3_GET_DOLLARS = 0.0004


def parse_codes(value: str) -> tuple[str, ...]:
    """`--index-languages rus,ukr`: ISO 639-3 codes, each known (refused in one line otherwise), sorted."""
    import pycountry  # (Here: a build without --index-languages, and a selection, need not import its tables.)

    codes = tuple(sorted({code.strip().lower() for code in value.split(",") if code.strip()}))
    if not codes:
        raise ValueError("--index-languages needs at least one ISO 639-3 code, e.g. rus,ukr")
    for code in codes:
        if len(code) != 3 or pycountry.languages.get(alpha_3=code) is None:
            raise ValueError(f"--index-languages: {code!r} is no ISO 639-3 language code (the index writes "
                             "content_languages as such: rus, ukr, eng, deu, ...)")
    return codes


def parse_names(value: str, flag: str) -> tuple[str, ...]:
    """A comma-separated list of domains or TLDs, where `@PATH` is a file of them (one a line, `#` comments)."""
    names = set()
    for item in filter(None, (part.strip() for part in value.split(","))):
        if item.startswith("@"):
            try:
                with open(item[1:], encoding="utf-8") as listed:
                    names.update(line.split("#", 1)[0].strip() for line in listed)
            except (OSError, UnicodeDecodeError) as error:
                raise ValueError(f"{flag} {item}: cannot read the file: {error}") from error
        else:
            names.add(item)
    names = {name.lower().strip(".") for name in names} - {""}
    if not names:
        raise ValueError(f"{flag} names nothing: give NAME,NAME or @FILE (one a line)")
    return tuple(sorted(names))


def check_pattern(pattern: str) -> str:
    """An RE2 pattern as Arrow's kernels compile it; a malformed one refused in one line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        pc.match_substring_regex(pa.array([""]), pattern)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise ValueError(f"--index-url {pattern!r} is not a regular expression (RE2 syntax): {error}") from error
    return pattern


@dataclass(frozen=True)
class IndexChoice:
    """Which captures of which index a build reads (see the module's docstring)."""

    source: str
    base: str
    crawl: str = ""
    languages: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    tlds: tuple[str, ...] = ()
    url_pattern: str = ""
    mimes: tuple[str, ...] = ()
    statuses: tuple[int, ...] = ()
    limit: int | None = None
    sample: float | None = None
    # The records' digest the manifest of the build this one repeats recorded (`--rebuild`): they must be the same.
    recorded_digest: str = field(default="", compare=False)

    def __post_init__(self):
        if self.limit is not None and self.limit <= 0:
            raise ValueError(f"--index-limit must be positive, not {self.limit}")
        if self.sample is not None and not 0 < self.sample <= 1:
            raise ValueError(f"--index-sample is a fraction in (0, 1], not {self.sample}")
        if self.url_pattern:
            check_pattern(self.url_pattern)

    def columns(self) -> list[str]:
        """The index columns the selection reads."""
        wanted = [COLUMNS[name] for name in COLUMNS if getattr(self, name)]
        return list(dict.fromkeys([*LOCATION, *wanted]))

    def matching(self, table: pa.Table) -> pa.Array:
        """Which rows of `table` the options match (a row without the value matches none)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tests = []
        if self.languages:
            # The main language: the first of the list the index writes ("rus,eng").
            tests.append(pc.match_substring_regex(table["content_languages"], f"^({'|'.join(self.languages)})(,|$)"))
        for name, values in (("domains", self.domains), ("tlds", self.tlds), ("mimes", self.mimes),
                             ("statuses", self.statuses)):
            if values:
                column = table[COLUMNS[name]]
                tests.append(pc.is_in(column, value_set=pa.array(values, type=column.type)))
        if self.url_pattern:
            tests.append(pc.match_substring_regex(table["url"], self.url_pattern))
        matched = pa.array([True] * table.num_rows)
        for test in tests:
            matched = pc.and_kleene(matched, test)
        return pc.fill_null(matched, False)

    def may_match(self, row_group) -> bool:
        """Whether rows of a row group (its metadata) can match: not where the minimum and maximum of a column
        that a list of values selects on leave out every value (Common Crawl's rows are sorted by SURT key, so a
        TLD's or a domain's rows are in few groups)."""
        names = [row_group.column(index).path_in_schema for index in range(row_group.num_columns)]
        for name, values in (("domains", self.domains), ("tlds", self.tlds), ("mimes", self.mimes),
                             ("statuses", self.statuses)):
            if not values or COLUMNS[name] not in names:
                continue
            statistics = row_group.column(names.index(COLUMNS[name])).statistics
            if statistics is not None and statistics.has_min_max and not any(
                    statistics.min <= value <= statistics.max for value in values):
                return False
        return True

    def sampled(self, url: str) -> bool:
        if self.sample is None:
            return True
        digest = int.from_bytes(hashlib.sha256(url.encode("utf-8")).digest()[:8], "big")
        return digest < self.sample * SAMPLE_SCALE

    def described(self) -> dict:
        """The selection as the manifest records it (the options given)."""
        described = {"index": redacted(self.source), "index_base": redacted(self.base)}
        for name in ("crawl", "languages", "domains", "tlds", "url_pattern", "mimes", "statuses", "limit", "sample"):
            value = getattr(self, name)
            if value:
                described[name] = list(value) if isinstance(value, tuple) else value
        return described


@dataclass(frozen=True)
class RowGroups:
    """A unit of the selection, read by one worker: row groups of one index file (`number`: its place among the
    index's files, for the index's order; `file`: as the launcher read it, which it must still be)."""

    path: str
    number: int
    groups: tuple[int, ...]
    file: IndexFile


@dataclass(frozen=True)
class IndexPlan:
    """What the launcher reads of an index (each file's footer): its files, the captures they list, and the units of
    row groups whose rows may match (`IndexChoice.may_match`), in the index's order."""

    index_files: tuple[IndexFile, ...]
    listed: int
    units: tuple[RowGroups, ...]

    def described(self) -> dict:
        """What the manifest's options record of it: a rebuild reads the same files, or says that they changed."""
        return {"index_files": [{"path": file.path, "size": file.size, "etag": file.etag} for file in self.index_files],
                "listed": self.listed}


@dataclass(frozen=True)
class IndexRow:
    """A matching row: its place in the index's order (file number, row in the file) and the record it names."""

    order: tuple[int, int]
    warc_filename: str
    offset: int
    length: int


def check_warc_filename(name: str, choice: IndexChoice, index_path: str, row: int) -> None:
    """An index names files of its crawl, under the base: relative paths, never climbing out of it."""
    foreign = "://" in name or name.startswith("/") or ".." in name.split("/") or (
        choice.crawl and not name.startswith(f"crawl-data/{choice.crawl}/"))
    if foreign:
        crawl = f" of the crawl {choice.crawl}" if choice.crawl else ""
        raise IndexRefused(f"the index file {redacted(index_path)}, row {row}, names {redacted(name)}: an index may "
                           f"only name files{crawl} under --index-base {redacted(choice.base)}, not another crawl's, "
                           "an absolute path or a URL")


def check_columns(parquet, path: str, columns: list[str]) -> None:
    present = set(parquet.schema_arrow.names)
    for column in columns:
        if column not in present:
            raise IndexRefused(f"the index file {redacted(path)} has no column {column}, which the selection needs "
                               "(Common Crawl's cc-index table has it)")


def units_of(metadata, groups: list[int], columns: list[str]) -> Iterator[tuple[int, ...]]:
    """`groups` cut into units of at least ROW_GROUPS_PER_UNIT row groups whose chosen column chunks come to at least
    FOOTERS_PER_UNIT footers (the last unit: what is left), so that a unit's read of the footer is a small part of
    what it reads."""
    names = [metadata.schema.column(index).path for index in range(metadata.num_columns)]
    chosen = [names.index(column) for column in columns]
    least = FOOTERS_PER_UNIT * metadata.serialized_size
    unit, size = [], 0
    for group in groups:
        row_group = metadata.row_group(group)
        unit.append(group)
        size += sum(row_group.column(index).total_compressed_size for index in chosen)
        if len(unit) >= ROW_GROUPS_PER_UNIT and size >= least:
            yield tuple(unit)
            unit, size = [], 0
    if unit:
        yield tuple(unit)


def plan_selection(choice: IndexChoice) -> IndexPlan:
    """Each index file's footer read (its schema checked, its row groups' statistics): the `IndexPlan` of `choice`."""
    files, listed, units = [], 0, []
    columns = choice.columns()
    for number, path in enumerate(index_paths(choice.source, choice.base)):
        with opened_index(path) as (described, parquet):
            files.append(described)
            check_columns(parquet, path, columns)
            groups = [group for group in range(parquet.num_row_groups)
                      if choice.may_match(parquet.metadata.row_group(group))]
            listed += parquet.metadata.num_rows
            units.extend(RowGroups(path, number, unit, described)
                         for unit in units_of(parquet.metadata, groups, columns))
    return IndexPlan(tuple(files), listed, tuple(units))


def matching_rows(choice: IndexChoice, unit: RowGroups) -> Iterator[IndexRow]:
    """The rows of a unit's row groups that match `choice` (before its `limit`), in the index's order; reads the
    chosen columns row group by row group."""
    import pyarrow as pa

    with opened_index(unit.path, unit.file) as (_, parquet):
        firsts = [0]
        for group in range(parquet.num_row_groups):
            firsts.append(firsts[-1] + parquet.metadata.row_group(group).num_rows)
        for group in unit.groups:
            table = parquet.read_row_group(group, columns=choice.columns())
            numbers = pa.array(range(firsts[group], firsts[group] + table.num_rows))
            chosen = table.append_column("row", numbers).filter(choice.matching(table))
            for found in chosen.select(["row", "url", "warc_filename", "warc_record_offset",
                                        "warc_record_length"]).to_pylist():
                if choice.sampled(found["url"]):
                    check_warc_filename(found["warc_filename"], choice, unit.path, found["row"])
                    yield IndexRow((unit.number, found["row"]), found["warc_filename"], found["warc_record_offset"],
                                   found["warc_record_length"])


def record_runs(records: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, end) of the runs of adjacent records of one file (`records`: (offset, length), sorted), each read by
    one request; a row whose range is no range of a file (a negative offset, a length not positive) is a run of its
    own, for its dead letter."""
    runs: list[tuple[int, int]] = []
    for offset, length in records:
        end = offset + length
        if runs and runs[-1][1] == offset and length > 0 and end - runs[-1][0] <= RUN_BYTES_LIMIT:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((offset, end))
    return runs


def window_unit(base: str, name: str, records: list[tuple[int, int]]) -> WarcRange:
    """The unit of reading of the chosen records (offset, length; sorted, distinct) of the file `name` that start in
    one `--range-size` window of it (the range a full build reads as a unit, and so a shard of the corpus as there):
    a `WarcRange` of their runs (`record_runs`), from its first run's start."""
    spans = record_runs(records)
    # (A lone row of no range ends before it starts: its unit is empty, and its run a dead letter.)
    end = max([spans[0][0]] + [span_end for _, span_end in spans])
    return WarcRange(base + name, spans[0][0], end, max(end, 0), runs=tuple(spans))


def record_digest(name: str, offset: int, length: int) -> int:
    """A chosen record's part of the records' digest: its SHA-256 as a number (the digest is their sum modulo
    2^256, `report.records_digest`: the same whatever the order in which they are chosen and summed)."""
    return int.from_bytes(hashlib.sha256(f"{name}\t{offset}\t{length}\n".encode("utf-8")).digest(), "big")


def check_recorded(choice: IndexChoice, digest: str) -> None:
    """A rebuild (`recorded_digest`) selects the records the build it repeats selected."""
    if choice.recorded_digest and choice.recorded_digest != digest:
        raise IndexRefused(f"the index {redacted(choice.source)} selects other records than the build being repeated "
                           "read (records_digest differs): the index changed since its manifest was written")


@dataclass(frozen=True)
class SelectionCount:
    """`--dry-run`'s count of what a selection matches: captures, their bytes, and the WARC files they are in."""

    matched: int
    matched_bytes: int
    warc_files: int


def count_selection(choice: IndexChoice, plan: IndexPlan) -> SelectionCount:
    """The `SelectionCount` of `choice`, row group by row group, holding no row (only the names of the WARC files)."""
    matched = matched_bytes = 0
    files = set()
    for unit in plan.units:
        for row in matching_rows(choice, unit):
            matched += 1
            matched_bytes += max(row.length, 0)
            files.add(row.warc_filename)
            if matched == choice.limit:
                return SelectionCount(matched, matched_bytes, len(files))
    return SelectionCount(matched, matched_bytes, len(files))


def describe_selection(plan: IndexPlan, count: SelectionCount, workers: int = 1) -> str:
    """`--dry-run`'s account: what the selection would read, and an estimate of the time and the cost (at one
    request a record: adjacent records share one, so the requests are at most that)."""
    requests = count.matched
    seconds = (requests * ESTIMATE_REQUEST_SECONDS + count.matched_bytes / ESTIMATE_BYTES_PER_SECOND) / workers
    return "\n".join([
        f"Index: {len(plan.index_files):,} files ({sum(file.size for file in plan.index_files):,} bytes), "
        f"{plan.listed:,} captures listed",
        f"Matched: {count.matched:,} captures in {count.warc_files:,} WARC files, "
        f"{count.matched_bytes:,} bytes, read by at most {requests:,} requests (adjacent records share one)",
        f"Estimate: reading about {seconds:,.1f} s at most with {workers} worker{'s' if workers > 1 else ''} (at "
        f"{ESTIMATE_REQUEST_SECONDS} s a request and {ESTIMATE_BYTES_PER_SECOND / 1e6:.0f} MB/s each); cost: "
        f"${requests * S3_GET_DOLLARS / 1000:,.2f} of S3 GET requests (${S3_GET_DOLLARS} per 1,000, --crawl-source "
        "s3 in us-east-1), nothing over https from data.commoncrawl.org",
    ])
