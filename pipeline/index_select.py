"""Select captures through a crawl's columnar index (`--index`, or `--crawl` with `--index-*` options).

Common Crawl's cc-index table has a row per capture: its URL, host, registered
domain and TLD, fetch status, detected MIME type and languages, and the WARC
file, offset and length of its record. A build that selects by the index
reads only the index columns its selection needs (`pipeline.index_files`),
row group by row group, and then only the matching records' bytes: records
adjacent in a file (up to `RUN_BYTES_LIMIT`) are one run, read by one
request; the runs of a file that start in one `--range-size` window are a
unit of reading, resume and progress, and a shard of the corpus, as that
range is in a full build (`transforms.stages.read_warc.ranges.WarcRange`
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
crawl's files. The selection is made once, where the command starts; it
holds the matching records (about 100 bytes each), not the index.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pycountry

from pipeline.index_files import IndexFile, IndexRefused, index_paths, opened_index
from transforms.filesystems.locations import redacted
from transforms.stages.read_warc.ranges import DEFAULT_RANGE_BYTES, WarcRange

# The columns of Common Crawl's table a selection reads: where each record is, and its URL (sampled by it).
LOCATION = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
COLUMNS = {"languages": "content_languages", "domains": "url_host_registered_domain", "tlds": "url_host_tld",
           "url_pattern": "url", "mimes": "content_mime_detected", "statuses": "fetch_status"}
# Adjacent records read in one request, up to this many bytes (Common Crawl's records are about 20 KB gzipped).
RUN_BYTES_LIMIT = 16 << 20
SAMPLE_SCALE = 1 << 64
# --dry-run's estimate: a request's latency and a worker's throughput (Common Crawl's servers, one stream), and
# the price of S3 GET requests (AWS's us-east-1 list price).
ESTIMATE_REQUEST_SECONDS = 0.05
ESTIMATE_BYTES_PER_SECOND = 50e6
S3_GET_DOLLARS = 0.0004


def parse_codes(value: str) -> tuple[str, ...]:
    """`--index-languages rus,ukr`: ISO 639-3 codes, each known (refused in one line otherwise), sorted."""
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
    recorded_sha256: str = field(default="", compare=False)

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
        digest = int.from_bytes(hashlib.sha256(url.encode("utf-8")).digest()[:8], "big")
        return self.sample is None or digest < self.sample * SAMPLE_SCALE

    def described(self) -> dict:
        """The selection as the manifest records it (the options given)."""
        described = {"index": redacted(self.source), "index_base": redacted(self.base)}
        for name in ("crawl", "languages", "domains", "tlds", "url_pattern", "mimes", "statuses", "limit", "sample"):
            value = getattr(self, name)
            if value:
                described[name] = list(value) if isinstance(value, tuple) else value
        return described


@dataclass(frozen=True)
class SelectedRecords:
    """What a selection found: the index files read, the captures they list, and the runs of matching records."""

    index_files: tuple[IndexFile, ...]
    listed: int
    matched: int
    matched_bytes: int
    units: tuple[WarcRange, ...]
    records_sha256: str

    @property
    def warc_files(self) -> int:
        return len({unit.path for unit in self.units})

    @property
    def requests(self) -> int:
        """The requests that read the records: one per run."""
        return sum(len(unit.runs) for unit in self.units)

    def described(self) -> dict:
        """What the manifest and the report say of it (a rebuild selects again, and must find the same)."""
        return {"index_files": [{"path": file.path, "size": file.size, "etag": file.etag} for file in self.index_files],
                "listed": self.listed, "matched": self.matched, "matched_bytes": self.matched_bytes,
                "warc_files": self.warc_files, "requests": self.requests, "records_sha256": self.records_sha256}


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


def matching_rows(choice: IndexChoice, path: str, parquet, first_row: int, wanted: int | None):
    """(row number in the index, warc_filename, offset, length) of the rows of one index file that match, in order;
    at most `wanted`. Reads the chosen columns row group by row group, but for the groups whose statistics say
    no row can match (`IndexChoice.may_match`)."""
    row = first_row
    for group in range(parquet.num_row_groups):
        if wanted is not None and wanted <= 0:
            return
        rows = parquet.metadata.row_group(group).num_rows
        if not choice.may_match(parquet.metadata.row_group(group)):
            row += rows
            continue
        table = parquet.read_row_group(group, columns=choice.columns())
        numbers = pa.array(range(row, row + table.num_rows))
        row += table.num_rows
        chosen = table.append_column("row", numbers).filter(choice.matching(table))
        for found in chosen.select(["row", "url", "warc_filename", "warc_record_offset",
                                    "warc_record_length"]).to_pylist():
            if not choice.sampled(found["url"]):
                continue
            check_warc_filename(found["warc_filename"], choice, path, found["row"])
            yield found["row"], found["warc_filename"], found["warc_record_offset"], found["warc_record_length"]
            if wanted is not None:
                wanted -= 1
                if wanted <= 0:
                    return


def record_runs(records: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """(warc_filename, start, end) of the runs of adjacent records (`records` sorted by file and offset), each read
    by one request; a row whose range is no range of a file (a negative offset, a length not positive) is a run of
    its own, for its dead letter."""
    runs: list[tuple[str, int, int]] = []
    for name, offset, length in records:
        end = offset + length
        if runs and runs[-1][0] == name and runs[-1][2] == offset and length > 0 \
                and end - runs[-1][1] <= RUN_BYTES_LIMIT:
            runs[-1] = (name, runs[-1][1], end)
        else:
            runs.append((name, offset, end))
    return runs


def reading_units(runs: list[tuple[str, int, int]], base: str, range_bytes: int) -> tuple[WarcRange, ...]:
    """The units of reading: the runs of a file that start in one `range_bytes` window of it (the range a full
    build reads as a unit, and so a shard of the corpus as there), each unit a `WarcRange` of its runs."""
    units: list[WarcRange] = []
    grouped: list[tuple[str, int, list]] = []
    for name, start, end in runs:
        window = max(start, 0) // range_bytes
        if grouped and grouped[-1][:2] == (name, window):
            grouped[-1][2].append((start, end))
        else:
            grouped.append((name, window, [(start, end)]))
    for name, _, spans in grouped:
        # (A lone row of no range ends before it starts: its unit is empty, and its run a dead letter.)
        end = max([spans[0][0]] + [span_end for _, span_end in spans])
        units.append(WarcRange(base + name, spans[0][0], end, max(end, 0), runs=tuple(spans)))
    return tuple(units)


def select_records(choice: IndexChoice, range_bytes: int = DEFAULT_RANGE_BYTES) -> SelectedRecords:
    """The captures of `choice`'s index that it selects (see the module's docstring), in units of the runs of a
    file in one `range_bytes` window."""
    files, listed, rows = [], 0, []
    columns = choice.columns()
    for path in index_paths(choice.source, choice.base):
        with opened_index(path) as (described, parquet):
            files.append(described)
            check_columns(parquet, path, columns)
            wanted = None if choice.limit is None else choice.limit - len(rows)
            rows.extend(matching_rows(choice, path, parquet, listed, wanted))
            listed += parquet.metadata.num_rows
    records = sorted({(name, offset, length) for _, name, offset, length in rows})
    sha = hashlib.sha256()
    for name, offset, length in records:
        sha.update(f"{name}\t{offset}\t{length}\n".encode("utf-8"))
    selected = SelectedRecords(tuple(files), listed, len(records), sum(max(length, 0) for *_, length in records),
                               reading_units(record_runs(records), choice.base, range_bytes), sha.hexdigest())
    if choice.recorded_sha256 and choice.recorded_sha256 != selected.records_sha256:
        raise IndexRefused(f"the index {redacted(choice.source)} selects other records than the build being repeated "
                           "read (records_sha256 differs): the index changed since its manifest was written")
    return selected


def describe_selection(selected: SelectedRecords, workers: int = 1) -> str:
    """`--dry-run`'s account: what the selection would read, and an estimate of the time and the cost."""
    requests = selected.requests
    seconds = (requests * ESTIMATE_REQUEST_SECONDS + selected.matched_bytes / ESTIMATE_BYTES_PER_SECOND) / workers
    return "\n".join([
        f"Index: {len(selected.index_files):,} files ({sum(file.size for file in selected.index_files):,} bytes), "
        f"{selected.listed:,} captures listed",
        f"Matched: {selected.matched:,} captures in {selected.warc_files:,} WARC files, "
        f"{selected.matched_bytes:,} bytes, read by {requests:,} requests",
        f"Estimate: reading about {seconds:,.1f} s with {workers} worker{'s' if workers > 1 else ''} (at "
        f"{ESTIMATE_REQUEST_SECONDS} s a request and {ESTIMATE_BYTES_PER_SECOND / 1e6:.0f} MB/s each); cost: "
        f"${requests * S3_GET_DOLLARS / 1000:,.2f} of S3 GET requests (${S3_GET_DOLLARS} per 1,000, --crawl-source "
        "s3 in us-east-1), nothing over https from data.commoncrawl.org",
    ])
