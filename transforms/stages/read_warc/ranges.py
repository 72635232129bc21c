"""Units of reading: a file cut into byte ranges (`split_warc`), the file to digest, and the records a range read."""

from __future__ import annotations

from dataclasses import dataclass

# Common Crawl's files are about 1 GB: 16 ranges each.
DEFAULT_RANGE_BYTES = 64 << 20
# Ranges of one file at most (a bigger file gets bigger ranges): whatever size a file claims, its ranges are
# listed in bounded memory (64 MiB ranges up to 256 GiB).
MAX_RANGES_PER_FILE = 4096


@dataclass(frozen=True)
class WarcRange:
    """A unit of reading: the records that start in [start, end) of a file (end None: to its end).

    Its documents keep its `start` as their `source_range` (the corpus shard
    they go to), however a runner splits the range while it is read.
    """

    path: str
    start: int = 0
    end: int | None = None
    file_size: int = 0
    # How many times the input patterns matched the file (it is read once).
    times_matched: int = 1
    # Whether reading may start mid-range, at the record after any offset (a file compressed per record).
    splittable: bool = False
    # Whether the file can be read from any offset: False where its server ignores Range (it is one range).
    ranged: bool = True
    # The runs of records a capture index chose in [start, end) (`pipeline.index_select`): (start, end) of each,
    # rising, each read by one request of exactly its bytes; only they are read, and `file_size` is then `end`
    # (the file is not looked at).
    runs: tuple[tuple[int, int], ...] = ()

    @property
    def fetched(self) -> bool:
        """Whether only the runs of records a capture index chose are read."""
        return bool(self.runs)

    @property
    def size(self) -> int:
        return (self.file_size if self.end is None else self.end) - self.start


@dataclass(frozen=True)
class FileToDigest:
    """A unit of work beside a file's ranges: its size and SHA-256 for the manifest (no range reads its file twice)."""

    path: str
    file_size: int = 0


def split_warc(path: str, size: int, range_bytes: int, layout: str, times_matched: int = 1,
               ranged: bool = True) -> list[WarcRange]:
    """Byte ranges of a file (at most MAX_RANGES_PER_FILE); only files compressed per record, that can be read
    from any offset (`ranged`), can start reading mid-file."""
    splittable = layout == "record" and ranged
    if not splittable or size <= range_bytes:
        return [WarcRange(path, file_size=size, times_matched=times_matched, splittable=splittable, ranged=ranged)]
    range_bytes = range_width(size, range_bytes)
    return [WarcRange(path, start, start + range_bytes if start + range_bytes < size else None, size, times_matched,
                      splittable)
            for start in range(0, size, range_bytes)]


def range_width(size: int, range_bytes: int) -> int:
    """The bytes of each range `split_warc` cuts a file of `size` into: `range_bytes`, or more for a file that would
    have more than MAX_RANGES_PER_FILE."""
    return max(range_bytes, -(-size // MAX_RANGES_PER_FILE))


def range_start(offset: int, size: int, range_bytes: int) -> int:
    """The start of the range of a file of `size` compressed per record that `split_warc` reads the record at
    `offset` in (0 for a file within one range)."""
    return 0 if size <= range_bytes else offset - offset % range_width(size, range_bytes)


def once_per_file(path_and_matches) -> tuple:
    """(the file's metadata, how many times it was matched) from (path, every match of it)."""
    path, matches = path_and_matches
    matches = list(matches)
    return matches[0], len(matches)
