"""The corpus records as Parquet (`--format parquet`), written by pyarrow.

One column per field, of the Avro field's type (string, int32, int64, double, list of strings); `meta`, an
Avro map, is a list of {key, value} entries in the page's order: how Parquet stores a map, as a type that
every reader takes (Hugging Face `datasets` has no map type, and refuses a file with one). The bytes depend only on the records and the options: rows are cut into row groups of a
fixed count (`ROW_GROUP_ROWS`), whatever the runner, and pyarrow writes no timestamp; its `created_by`
("parquet-cpp-arrow version X") changes only with pyarrow's version, which the manifest records. Data pages
carry a CRC (`write_page_checksum`), which `read_corpus` checks.

pyarrow is imported where a Parquet file is first written, not with this module: a build of another format never
loads it (0.05-0.09 s of every process's start; `pipeline.beam_import`).
"""

from __future__ import annotations

from transforms.stages.compress_write.schema import FIELDS_BY_NAME

# codec -> (lowest level, highest level, default level); None: no levels.
CODECS = {
    "zstd": (1, 22, 9),
    "snappy": None,
    "gzip": (1, 9, 6),
    "none": None,
}
DEFAULT_CODEC = "zstd"
# Rows per row group: a row group is what readers (DuckDB, Polars, `datasets`, Spark) read and decode as one
# piece, and parallelize over. A dev corpus record averages 26.5 KB uncompressed (docs/output.md), so 4096
# rows make ~108 MB of text: within the 64-128 MB readers are tuned for, and one row group per writer's
# memory at a time.
ROW_GROUP_ROWS = 4096



def _arrow_type(avro_type):
    import pyarrow as pa

    if isinstance(avro_type, str):
        return {"string": pa.string(), "long": pa.int64(), "int": pa.int32(), "double": pa.float64()}[avro_type]
    if avro_type["type"] == "array":
        return pa.list_(_arrow_type(avro_type["items"]))
    return pa.list_(pa.field("item", pa.struct([pa.field("key", pa.string(), nullable=False),
                                                  pa.field("value", _arrow_type(avro_type["values"]), nullable=False)]),
                             nullable=False))


def arrow_schema(fields: tuple[str, ...]) -> pa.Schema:
    """The Arrow schema of records with these fields, columns in schema order, none nullable."""
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(FIELDS_BY_NAME[name]["type"]), nullable=False) for name in fields])


class ParquetRows:
    """A Parquet file of corpus records (dicts), in row groups of `row_group_rows`."""

    def __init__(self, handle, fields: tuple[str, ...], codec: str, level: int | None,
                 row_group_rows: int = ROW_GROUP_ROWS):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._table = pa.Table.from_pylist
        self._schema = arrow_schema(fields)
        self._maps = [name for name in fields if isinstance(FIELDS_BY_NAME[name]["type"], dict)
                      and FIELDS_BY_NAME[name]["type"]["type"] == "map"]
        self._writer = pq.ParquetWriter(handle, self._schema, compression=codec.upper(), compression_level=level,
                                        write_page_checksum=True)
        self._row_group_rows = row_group_rows
        self._rows: list[dict] = []

    def write(self, record: dict) -> None:
        self._rows.append(dict(record, **{name: [{"key": key, "value": value} for key, value in record[name].items()]
                                          for name in self._maps}))
        if len(self._rows) == self._row_group_rows:
            self._dump()

    def _dump(self) -> None:
        self._writer.write_table(self._table(self._rows, self._schema), row_group_size=self._row_group_rows)
        self._rows = []

    def close(self) -> None:
        if self._rows:
            self._dump()
        self._writer.close()
