"""``spark.read.format("warc")``: WARC files as a DataFrame of content records (PySpark 4).

A Python Data Source over :mod:`contentx_udf.warc`: one Spark partition per input file, the
file streamed record by record by :class:`~contentx_udf.warc.reader.WarcReader` in the Python
worker,
rows handed to Spark as Arrow record batches.  Nothing is extracted here; the HTML payload is a
column, so any later stage (``mapInArrow``, a UDF, a write) can work on it::

    from contentx_udf.spark.datasource import register

    register(spark)
    df = (
        spark.read.format("warc")
        .option("maxHtmlBytes", 1_048_576)
        .load(["crawl/", "more/*.warc.gz"])  # files, directories, globs, URLs, warc.paths[.gz]
    )

Inputs are resolved on the driver by :func:`contentx_udf.spark.inputs.expand_inputs`, exactly as the job
resolves ``--input`` (directories recursively, globs, ``file://``/``https://``/``s3://`` URLs,
Common Crawl listings with the ``inputBaseUrl`` option).

Rows
----
One row per ``response`` / ``revisit`` / ``resource`` record, in file order, with the record
columns of the job's output table (same names and types, :data:`RECORD_COLUMNS`) plus
``http_content_type`` (the HTTP ``Content-Type`` header) and ``payload`` (the decoded HTTP body,
cut at ``maxHtmlBytes``; only on rows with ``status = "ok"``, i.e. HTML pages).  ``status`` and
``error`` are the reader's: ``ok`` (an HTML page: extract it), ``skipped`` (non-HTML, revisit,
resource, empty, ...) or ``error``.  A damaged file never fails the read: it gives a row with
``warc_type = NULL``, ``status = "error"`` and the reason (``corrupt WARC at offset N``,
``not a WARC file``, ``this is a WET file``, ...), after the rows of the records before the damage.
A file that cannot be opened or read (vanished, network error) gives one such row too, with
``error = "cannot read <location>: ..."``, as in the job; with ``failOnReadError`` the exception
propagates instead, so that Spark retries the task.

Options (case-insensitive)
--------------------------
``maxHtmlBytes``     payload cut in bytes (default 1048576, as Common Crawl; 0 = no cut)
``inputBaseUrl``     prefix of the relative paths of a ``warc.paths[.gz]`` listing
``rowsPerBatch``     rows per Arrow batch handed to Spark (default 256); a batch is also closed
                     once it holds :data:`MAX_BATCH_PAYLOAD_BYTES` of payload
``failOnReadError``  ``true``: I/O errors raise (task retry) instead of becoming a row

A schema given with ``.schema(...)`` may select a subset of the columns (same names and types),
e.g. ``"warc_filename string, warc_record_offset long, status string"``: only those columns are
built and shipped to Spark (the payload too is left out unless asked for; the reader still decodes
HTML payloads, it needs them to classify records).  Memory per task: the reader's bound (about two
payloads) plus one Arrow batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import (
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from .config import DEFAULT_MAX_HTML_BYTES
from .inputs import crawl_and_segment, expand_inputs
from .worker import OUTPUT_COLUMNS, read_error

__all__ = [
    "FORMAT",
    "MAX_BATCH_PAYLOAD_BYTES",
    "RECORD_COLUMNS",
    "WarcDataSource",
    "WarcFilePartition",
    "WarcReaderOptions",
    "arrow_schema",
    "record_batches",
    "record_schema",
    "register",
]

#: The format name: ``spark.read.format(FORMAT)``.
FORMAT = "warc"

#: Columns of the job's output that belong to extraction, not to the record.
_EXTRACTION_COLUMNS = frozenset(
    {"method", "title", "text", "text_length", "language", "language_score", "text_hash", "scores"}
)

#: (name, type) of every column, in order: the job's record columns, then the payload.
RECORD_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, ddl) for name, ddl in OUTPUT_COLUMNS if name not in _EXTRACTION_COLUMNS
) + (("http_content_type", "string"), ("payload", "binary"))

#: A batch is handed to Spark once its payloads reach this size, whatever ``rowsPerBatch`` says.
MAX_BATCH_PAYLOAD_BYTES = 32 * 1024 * 1024

DEFAULT_ROWS_PER_BATCH = 256

_SPARK_TYPES: dict[str, DataType] = {
    "string": StringType(),
    "timestamp": TimestampType(),
    "int": IntegerType(),
    "long": LongType(),
    "binary": BinaryType(),
}


def record_schema() -> StructType:
    """The Spark schema of ``spark.read.format("warc")`` (every column nullable)."""
    return StructType([StructField(name, _SPARK_TYPES[ddl], True) for name, ddl in RECORD_COLUMNS])


def arrow_schema(schema: StructType | None = None):
    """The Arrow schema the batches must have for ``schema`` (default: :func:`record_schema`).

    Spark compares the first batch of a partition with ``to_arrow_schema(schema,
    timezone="UTC")`` using ``pa.Schema.equals`` (names, types, timestamp time zone,
    nullability), so the same function builds it here.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(record_schema() if schema is None else schema, timezone="UTC")


# --- options -----------------------------------------------------------------------------


class WarcReaderOptions:
    """Validated reader options (picklable; shipped to the Python workers)."""

    def __init__(
        self,
        max_html_bytes: int = DEFAULT_MAX_HTML_BYTES,
        rows_per_batch: int = DEFAULT_ROWS_PER_BATCH,
        fail_on_read_error: bool = False,
        max_batch_payload_bytes: int = MAX_BATCH_PAYLOAD_BYTES,
    ) -> None:
        self.max_html_bytes = max_html_bytes
        self.rows_per_batch = rows_per_batch
        self.fail_on_read_error = fail_on_read_error
        self.max_batch_payload_bytes = max_batch_payload_bytes

    @classmethod
    def from_options(cls, options: Any) -> WarcReaderOptions:
        return cls(
            max_html_bytes=_int_option(options, "maxHtmlBytes", DEFAULT_MAX_HTML_BYTES, minimum=0),
            rows_per_batch=_int_option(options, "rowsPerBatch", DEFAULT_ROWS_PER_BATCH, minimum=1),
            fail_on_read_error=_bool_option(options, "failOnReadError", False),
        )


def _int_option(options: Any, name: str, default: int, *, minimum: int) -> int:
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"warc data source: option {name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"warc data source: option {name} must be >= {minimum}, got {value}")
    return value


def _bool_option(options: Any, name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"warc data source: option {name} must be true or false, got {raw!r}")


def _input_paths(options: Any) -> list[str]:
    """``load(path)`` sets option ``path``; ``load([p1, p2])`` sets ``paths`` (a JSON array)."""
    paths: list[str] = []
    raw = options.get("paths")
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = [raw]
        paths.extend([value] if isinstance(value, str) else [str(v) for v in value])
    if options.get("path"):
        paths.append(str(options.get("path")))
    if not paths:
        raise ValueError(
            'warc data source: no input given: spark.read.format("warc").load(PATH or [PATHS]) '
            "(WARC files, directories, globs, URLs or a warc.paths[.gz] listing)"
        )
    return paths


# --- the worker side ---------------------------------------------------------------------


def _rows(location: str, warc_filename: str, options: WarcReaderOptions) -> Iterator[Any]:
    """The reader's rows of one file; an unreadable file gives one error row (see module doc)."""
    from ..warc.inputs import open_input
    from ..warc.reader import WarcReader
    from ..warc.row import WarcRow

    try:
        with open_input(location) as stream:
            yield from WarcReader(stream, warc_filename, max_html_bytes=options.max_html_bytes)
    except Exception as exc:
        if options.fail_on_read_error:
            raise
        yield WarcRow(
            warc_filename=warc_filename,
            status="error",
            error=read_error(location, exc),
        )


def _column(name: str, rows: Sequence[Any], warc_filename: str, crawl: Any, segment: Any) -> list[Any]:
    if name == "notes":
        return ["; ".join(r.notes) if r.notes else None for r in rows]
    if name == "payload":
        return [r.payload if r.is_html else None for r in rows]
    if name == "warc_filename":
        return [warc_filename] * len(rows)
    if name == "crawl":
        return [crawl] * len(rows)
    if name == "warc_segment":
        return [segment] * len(rows)
    return [getattr(r, name) for r in rows]


def rows_to_batch(rows: Sequence[Any], warc_filename: str, schema) -> Any:
    import pyarrow as pa

    crawl, segment = crawl_and_segment(warc_filename)
    arrays = [pa.array(_column(f.name, rows, warc_filename, crawl, segment), type=f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _safe_batch(rows: Sequence[Any], warc_filename: str, schema) -> Any:
    """Arrow batch of ``rows``; a row Arrow refuses becomes an error row instead of failing the task."""
    try:
        return rows_to_batch(rows, warc_filename, schema)
    except Exception:
        from ..warc.row import WarcRow

        fixed = []
        for r in rows:
            try:
                rows_to_batch([r], warc_filename, schema)
                fixed.append(r)
            except Exception as exc:
                fixed.append(
                    WarcRow(
                        warc_filename=warc_filename,
                        warc_record_offset=r.warc_record_offset,
                        warc_record_length=r.warc_record_length,
                        warc_type=r.warc_type,
                        status="error",
                        error=f"row not representable in Arrow: {type(exc).__name__}: {exc}",
                    )
                )
        return rows_to_batch(fixed, warc_filename, schema)


def record_batches(
    location: str, warc_filename: str, schema=None, options: WarcReaderOptions | None = None
) -> Iterator[Any]:
    """Stream one WARC file as Arrow record batches of ``schema`` (default :func:`arrow_schema`).

    The worker side of the data source, usable on its own (e.g. inside ``mapInArrow``).
    ``schema`` may hold any subset of :data:`RECORD_COLUMNS`, in any order.
    """
    schema = arrow_schema() if schema is None else schema
    options = options or WarcReaderOptions()
    want_payload = "payload" in schema.names
    buffer: list[Any] = []
    size = 0
    for row in _rows(location, warc_filename, options):
        buffer.append(row)
        if want_payload and row.payload is not None:
            size += len(row.payload)
        if len(buffer) >= options.rows_per_batch or size >= options.max_batch_payload_bytes:
            yield _safe_batch(buffer, warc_filename, schema)
            buffer, size = [], 0
    if buffer:
        yield _safe_batch(buffer, warc_filename, schema)


# --- the data source ---------------------------------------------------------------------


class WarcFilePartition(InputPartition):
    """One input file: where to read it and the name its rows carry."""

    def __init__(self, location: str, warc_filename: str) -> None:
        super().__init__((location, warc_filename))
        self.location = location
        self.warc_filename = warc_filename


class WarcDataSourceReader(DataSourceReader):
    def __init__(self, schema: StructType, options: Any) -> None:
        _check_schema(schema)
        self.schema = schema
        self.inputs = _input_paths(options)
        self.input_base_url = options.get("inputBaseUrl")
        self.options = WarcReaderOptions.from_options(options)

    def partitions(self) -> list[InputPartition]:
        files = expand_inputs(self.inputs, self.input_base_url)
        return [WarcFilePartition(location, name) for location, name in files]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, WarcFilePartition), partition
        return record_batches(
            partition.location, partition.warc_filename, arrow_schema(self.schema), self.options
        )


def _check_schema(schema: StructType) -> None:
    """A user schema may pick columns of :data:`RECORD_COLUMNS`, with their types."""
    known = {f.name: f.dataType for f in record_schema()}
    for f in schema.fields:
        if f.name not in known:
            raise ValueError(
                f"warc data source: unknown column {f.name!r} in the given schema; "
                f"columns: {', '.join(known)}"
            )
        if not f.nullable:
            raise ValueError(f"warc data source: column {f.name} is nullable; drop NOT NULL")
        if f.dataType != known[f.name]:
            raise ValueError(
                f"warc data source: column {f.name} has type {known[f.name].simpleString()}, "
                f"not {f.dataType.simpleString()}"
            )


class WarcDataSource(DataSource):
    """``spark.read.format("warc")``: see the module documentation."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return record_schema()

    def reader(self, schema: StructType) -> DataSourceReader:
        return WarcDataSourceReader(schema, self.options)


def register(spark) -> None:
    """Make ``spark.read.format("warc")`` available in this session."""
    spark.dataSource.register(WarcDataSource)
