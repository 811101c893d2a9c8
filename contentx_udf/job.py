"""The Spark job: WARC files in, a Parquet corpus of extracted text out.

One job, one file (after cc-pyspark's job classes).  Spark code stays thin: the Python
workers stream each WARC file with :mod:`contentx_udf.warc.reader` and call
:func:`contentx_udf.extract_all` once per HTML page (one parse whatever the number of
methods) inside a single ``mapInArrow`` pass, one input file per task.

Output layout (``--output DIR``)::

    DIR/method=<m>/part-<batch>-*.parquet   the table, partitioned by method
    DIR/_contentx/files/<batch>/*.parquet   one row per input file (counts by WARC type, errors)
    DIR/_contentx/batches/<batch>.json      commit marker of a batch (its input files)
    DIR/_summary.json                       summary of the last run

Resumability: inputs are processed in batches; a batch is written to a staging directory
and moved into place, then its commit marker is written.  ``--resume`` first deletes every
part file of a batch without a marker (a run killed half-way), then processes only the input
files not listed in any marker — so a killed and resumed run gives exactly the table of an
uninterrupted one.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import re
import shutil
import sys
import time
import tomllib
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import UserError
from .settings import DEFAULT_METHOD, METHODS, resolve_params
from .worker_env import CONF_DIR, check_java, prepare_driver, prepare_worker

#: Default payload cut, as Common Crawl's own (it truncates payloads at 1 MiB).
DEFAULT_MAX_HTML_BYTES = 1_048_576

#: Method name of rows that carry no extraction (skipped or failed records).
NO_METHOD = "none"
#: Internal partition of the per-file statistics rows (moved under ``_contentx/files``).
FILES_METHOD = "_files"

_CC_PATH_RE = re.compile(r"crawl-data/(CC-MAIN-\d{4}-\d{2})/segments/([^/]+)/")


# --- configuration -----------------------------------------------------------------------


@dataclass
class JobConfig:
    inputs: list[str]
    output: str
    methods: tuple[str, ...] = (DEFAULT_METHOD,)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    input_base_url: str | None = None
    resume: bool = False
    overwrite: bool = False
    num_partitions: int | None = None
    max_html_bytes: int = DEFAULT_MAX_HTML_BYTES
    files_per_batch: int = 0  # 0: all files in one batch
    rows_per_batch: int = 256  # Arrow batch size yielded by the workers
    worker_memory_mb: int = 2048  # address-space cap of each Python worker (0 = none)
    show_rows: int = 3
    writer: str = "auto"  # "arrow", "spark" or "auto" (arrow for local outputs)


def parse_methods(value: str | Sequence[str]) -> tuple[str, ...]:
    names = [m.strip() for m in (value.split(",") if isinstance(value, str) else value) if m.strip()]
    if names == ["all"]:
        return METHODS
    if not names:
        raise UserError(f"no method given; valid methods: {', '.join(METHODS)} (or 'all')")
    for m in names:
        if m not in METHODS:
            raise UserError(f"unknown method {m!r}; valid methods: {', '.join(METHODS)} (or 'all')")
    return tuple(dict.fromkeys(names))


def load_toml(path: str | None) -> dict[str, Any]:
    if path is None:
        default = CONF_DIR / "extract.toml"
        if not default.exists():
            return {}
        path = str(default)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"config file {path} is not valid TOML: {exc}") from None


_CONFIG_KEYS = {
    "methods",
    "max_html_bytes",
    "num_partitions",
    "files_per_batch",
    "rows_per_batch",
    "input_base_url",
    "show_rows",
    "worker_memory_mb",
    "writer",
}

#: Who writes the Parquet files: the Python workers with pyarrow (local outputs), or
#: Spark's own writer (any Hadoop filesystem: HDFS, s3a, ...).
WRITERS = ("auto", "arrow", "spark")


def build_config(args: argparse.Namespace) -> JobConfig:
    """Config file values are defaults; command-line flags override them."""
    toml = load_toml(args.config)
    job = toml.get("job", {})
    if not isinstance(job, dict):
        raise UserError("config: [job] must be a table")
    unknown = set(job) - _CONFIG_KEYS
    if unknown:
        raise UserError(
            f"config: unknown key(s) in [job]: {', '.join(sorted(unknown))}; valid: "
            + ", ".join(sorted(_CONFIG_KEYS))
        )

    def pick(name: str, default: Any) -> Any:
        value = getattr(args, name, None)
        return value if value is not None else job.get(name, default)

    def positive_int(name: str, value: Any, allow_zero: bool = True) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
            raise UserError(
                f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}"
            )
        return value

    methods = parse_methods(pick("methods", DEFAULT_METHOD))
    params_table = toml.get("params", {})
    if not isinstance(params_table, dict):
        raise UserError("config: [params] must be a table of [params.<method>] tables")
    params: dict[str, dict[str, Any]] = {}
    for method, overrides in params_table.items():
        if method not in METHODS:
            raise UserError(f"config: [params.{method}]: unknown method; valid methods: {', '.join(METHODS)}")
        try:
            resolve_params(method, overrides)
        except ValueError as exc:
            raise UserError(f"config: {exc}") from None
        params[method] = dict(overrides)
    num_partitions = pick("num_partitions", None)
    if num_partitions is not None:
        positive_int("--num-partitions", num_partitions, allow_zero=False)
    if not args.input:
        raise UserError("no input given: pass --input PATH (files, directories, globs or a .paths listing)")
    if args.resume and args.overwrite:
        raise UserError("--resume and --overwrite exclude each other")
    writer = pick("writer", "auto")
    if writer not in WRITERS:
        raise UserError(f"--writer must be one of {', '.join(WRITERS)}, got {writer!r}")
    if writer == "arrow" and _is_remote(args.output):
        raise UserError(
            f"--writer arrow writes local paths only; use --writer spark (or auto) for {args.output}"
        )
    return JobConfig(
        inputs=list(args.input),
        output=args.output,
        methods=methods,
        params=params,
        input_base_url=pick("input_base_url", None),
        resume=args.resume,
        overwrite=args.overwrite,
        num_partitions=num_partitions,
        max_html_bytes=positive_int("--max-html-bytes", pick("max_html_bytes", DEFAULT_MAX_HTML_BYTES)),
        files_per_batch=positive_int("--files-per-batch", pick("files_per_batch", 0)),
        rows_per_batch=positive_int("rows_per_batch", pick("rows_per_batch", 256), allow_zero=False),
        show_rows=positive_int("--show-rows", pick("show_rows", 3)),
        worker_memory_mb=positive_int("worker_memory_mb", job.get("worker_memory_mb", 2048)),
        writer=writer,
    )


# --- inputs ------------------------------------------------------------------------------


def _is_url(path: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path))


def _is_remote(path: str) -> bool:
    """A URL other than ``file://`` (https, s3, s3a, hdfs, ...)."""
    return _is_url(path) and not path.startswith("file://")


def _local_path(path: str) -> str:
    """A local path or ``file://`` URL as a local path."""
    return path[len("file://") :] if path.startswith("file://") else path


def _is_listing(path: str) -> bool:
    return path.endswith(".paths") or path.endswith(".paths.gz")


def _read_listing(path: str) -> list[str]:
    if _is_remote(path):
        from .warc.inputs import open_input

        with open_input(path) as fh:
            data = fh.read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    else:
        local = _local_path(path)
        if not os.path.exists(local):
            raise UserError(f"input listing not found: {path}")
        opener = gzip.open if local.endswith(".gz") else open
        with opener(local, "rt", encoding="utf-8") as fh:
            text = fh.read()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _join_base(base: str, rel: str) -> str:
    if _is_url(base):
        return base.rstrip("/") + "/" + rel.lstrip("/")
    return os.path.join(os.path.abspath(base), rel)


def _looks_like_warc(name: str) -> bool:
    return name.endswith((".warc", ".warc.gz", ".arc.gz", ".warc.wet.gz", ".warc.wat.gz")) or ".warc" in name


def expand_inputs(inputs: Sequence[str], base_url: str | None) -> list[tuple[str, str]]:
    """Resolve ``--input`` values to ``(location, warc_filename)`` pairs, in order, deduplicated.

    Local files, directories (their WARC files, recursively), globs, ``file://`` URLs,
    remote URLs (``https://``, ``s3://``, ``s3a://``) and Common Crawl listings
    (``warc.paths[.gz]``: relative paths joined to ``--input-base-url``; the relative path
    is kept as ``warc_filename``, as in the Common Crawl index).
    """
    found: list[tuple[str, str]] = []
    for item in inputs:
        if _is_listing(item):
            lines = _read_listing(item)
            if not lines:
                raise UserError(f"input listing {item} is empty")
            for rel in lines:
                if _is_url(rel):
                    found.append((rel, rel))
                elif base_url is None:
                    raise UserError(
                        f"listing {item} holds relative paths ({rel}); pass --input-base-url "
                        "(e.g. https://data.commoncrawl.org/ or a local mirror directory)"
                    )
                else:
                    found.append((_join_base(base_url, rel), rel))
            continue
        if _is_remote(item):
            found.append((item, item))
            continue
        local = _local_path(item)
        if any(ch in local for ch in "*?["):
            matches = sorted(glob.glob(local, recursive=True))
            files = [m for m in matches if os.path.isfile(m)]
            if not files:
                raise UserError(f"input pattern matches no file: {item}")
            found.extend((os.path.abspath(m), os.path.abspath(m)) for m in files)
        elif os.path.isdir(local):
            files = []
            for root, _dirs, names in os.walk(local):
                files.extend(os.path.join(root, n) for n in names if _looks_like_warc(n))
            if not files:
                raise UserError(f"input directory holds no WARC file (*.warc, *.warc.gz): {item}")
            found.extend((os.path.abspath(f), os.path.abspath(f)) for f in sorted(files))
        elif os.path.isfile(local):
            found.append((os.path.abspath(local), os.path.abspath(local)))
        else:
            raise UserError(f"input not found: {item}")
    seen: set[str] = set()
    unique = []
    for loc, name in found:
        if name not in seen:
            seen.add(name)
            unique.append((loc, name))
    return unique


def crawl_and_segment(warc_filename: str) -> tuple[str | None, str | None]:
    """``crawl`` and ``warc_segment`` of a Common Crawl path (``crawl-data/CC-MAIN-…/segments/…``)."""
    m = _CC_PATH_RE.search(warc_filename)
    return (m.group(1), m.group(2)) if m else (None, None)


# --- output schema ---------------------------------------------------------------------

OUTPUT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("url", "string"),
    ("url_host_name", "string"),
    ("fetch_time", "timestamp"),
    ("fetch_status", "int"),
    ("content_mime_type", "string"),
    ("content_mime_detected", "string"),
    ("content_charset", "string"),
    ("content_languages", "string"),
    ("content_digest", "string"),
    ("warc_filename", "string"),
    ("warc_record_offset", "long"),
    ("warc_record_length", "long"),
    ("warc_record_id", "string"),
    ("warc_type", "string"),
    ("crawl", "string"),
    ("warc_segment", "string"),
    ("method", "string"),
    ("title", "string"),
    ("text", "string"),
    ("text_length", "int"),
    ("scores", "map<string,double>"),
    ("status", "string"),
    ("error", "string"),
    ("notes", "string"),
)


def spark_schema():
    from pyspark.sql.types import StructType

    return StructType.fromDDL(", ".join(f"`{n}` {t}" for n, t in OUTPUT_COLUMNS))


def arrow_schema():
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "int": pa.int32(),
        "long": pa.int64(),
        "map<string,double>": pa.map_(pa.string(), pa.float64()),
    }
    return pa.schema([pa.field(n, types[t]) for n, t in OUTPUT_COLUMNS])


# --- the worker side ---------------------------------------------------------------------


@dataclass
class WorkerSettings:
    """Everything a Python worker needs; pickled into the ``mapInArrow`` closure."""

    methods: tuple[str, ...]
    params: dict[str, dict[str, Any]]
    max_html_bytes: int
    rows_per_batch: int
    worker_memory_mb: int = 0
    #: Local staging directory of the batch when the workers write the Parquet files
    #: themselves (``writer = arrow``); None when Spark writes them.
    write_dir: str | None = None
    #: Parquet codec of the files the workers write (Spark's ``spark.sql.parquet.compression.codec``).
    compression: str = "zstd"


def _base_row(rec, warc_filename: str) -> dict[str, Any]:
    crawl, segment = crawl_and_segment(warc_filename)
    return {
        "url": rec.url,
        "url_host_name": rec.url_host_name,
        "fetch_time": rec.fetch_time,
        "fetch_status": rec.fetch_status,
        "content_mime_type": rec.content_mime_type,
        "content_mime_detected": rec.content_mime_detected,
        "content_charset": rec.content_charset,
        "content_languages": rec.content_languages,
        "content_digest": rec.content_digest,
        "warc_filename": warc_filename,
        "warc_record_offset": rec.warc_record_offset,
        "warc_record_length": rec.warc_record_length,
        "warc_record_id": rec.warc_record_id,
        "warc_type": rec.warc_type,
        "crawl": crawl,
        "warc_segment": segment,
        "notes": "; ".join(rec.notes) if rec.notes else None,
    }


def _unextracted_row(base: dict[str, Any], method: str, status: str, error: str) -> dict[str, Any]:
    """An output row without extraction (skipped record, damaged record, failed extractor)."""
    return {
        **base,
        "method": method,
        "title": None,
        "text": None,
        "text_length": None,
        "scores": None,
        "status": status,
        "error": error,
    }


def rows_for_record(rec, warc_filename: str, settings: WorkerSettings) -> list[dict[str, Any]]:
    """Output rows of one WARC record: one per method for an HTML page, else one ``none`` row."""
    from .core import extract_all

    base = _base_row(rec, warc_filename)
    if rec.status != "ok" or not rec.is_html:
        status = rec.status if rec.status != "ok" else "skipped"
        return [_unextracted_row(base, NO_METHOD, status, rec.error or "not extracted")]
    try:
        results = extract_all(
            rec.payload, settings.methods, content_type=rec.http_content_type, params=settings.params
        )
    except Exception as exc:  # extract_all does not raise on content; guard against bugs anyway
        results = None
        message = f"{type(exc).__name__}: {exc}"
    rows = []
    extra: dict[str, float] = {}
    if rec.payload_length is not None and rec.payload is not None and rec.payload_length > len(rec.payload):
        extra["payload_cut_bytes"] = float(rec.payload_length - len(rec.payload))
    for method in settings.methods:
        if results is None:
            rows.append(_unextracted_row(base, method, "error", message))
            continue
        ex = results[method]
        scores = {**ex.scores, **extra}
        rows.append(
            {
                **base,
                "method": method,
                "title": ex.title,
                "text": ex.text if ex.status == "ok" else None,
                "text_length": len(ex.text) if ex.status == "ok" else None,
                "scores": list(scores.items()),
                "status": ex.status,
                "error": ex.error,
            }
        )
    return rows


def file_row(
    warc_filename: str,
    counts: Counter,
    rows: Counter,
    file_error: str | None,
    records: int,
    seconds: float,
) -> dict[str, Any]:
    """The per-file statistics row (partition ``_files``).

    ``scores`` holds ``records.<warc type>`` (all records read), ``rows.<method>.<status>``
    (output rows written), ``content_records`` and ``seconds``.
    """
    crawl, segment = crawl_and_segment(warc_filename)
    scores = [(f"records.{k}", float(v)) for k, v in sorted(counts.items())]
    scores += [(f"rows.{m}.{st}", float(v)) for (m, st), v in sorted(rows.items())]
    scores += [("content_records", float(records)), ("seconds", seconds)]
    return {
        "warc_filename": warc_filename,
        "crawl": crawl,
        "warc_segment": segment,
        "method": FILES_METHOD,
        "scores": scores,
        "status": "error" if file_error else "ok",
        "error": file_error,
    }


def read_error(location: str, exc: BaseException) -> str:
    """The error of an input file that cannot be opened or read (job and data source alike)."""
    return f"cannot read {location}: {type(exc).__name__}: {exc}"


def process_file(location: str, warc_filename: str, settings: WorkerSettings) -> Iterator[dict[str, Any]]:
    """All output rows of one input file, then its statistics row.  Never raises."""
    from .warc.inputs import open_input
    from .warc.reader import WarcReader

    started = time.perf_counter()
    counts: Counter = Counter()
    rows: Counter = Counter()
    records = 0
    file_error = None
    try:
        with open_input(location) as stream:
            reader = WarcReader(stream, warc_filename, max_html_bytes=settings.max_html_bytes)
            for rec in reader:
                if rec.warc_type is not None:
                    records += 1
                for row in rows_for_record(rec, warc_filename, settings):
                    rows[(row["method"], row["status"])] += 1
                    yield row
            counts = reader.counts
            file_error = reader.file_error
    except Exception as exc:  # unreadable input (vanished file, network error, ...)
        file_error = read_error(location, exc)
        rows[(NO_METHOD, "error")] += 1
        crawl, segment = crawl_and_segment(warc_filename)
        yield {
            "warc_filename": warc_filename,
            "crawl": crawl,
            "warc_segment": segment,
            "method": NO_METHOD,
            "status": "error",
            "error": file_error,
        }
    yield file_row(warc_filename, counts, rows, file_error, records, time.perf_counter() - started)


def _to_batch(rows: list[dict[str, Any]], schema):
    import pyarrow as pa

    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.RecordBatch.from_pydict(columns, schema=schema)


#: Bytes of Arrow data a worker gathers (all methods together) before writing Parquet row
#: groups: each method's writer flushes at its share, at least 8 MiB.
ROW_GROUP_BYTES = 64 * 1024 * 1024
MIN_ROW_GROUP_BYTES = 8 * 1024 * 1024


class _PartWriter:
    """The Parquet file of one input file and one method, written by a Python worker.

    Written under a hidden temporary name and renamed when complete: the final name depends
    only on the input file's index in the batch, so a retried or speculative task replaces the
    file instead of adding a second copy, and a killed task leaves only a hidden file that no
    reader (and no commit) picks up.
    """

    def __init__(self, directory: str, name: str, schema, settings: WorkerSettings):
        self.directory, self.name, self.schema, self.settings = directory, name, schema, settings
        self.rows: list[dict[str, Any]] = []
        self.batches: list = []
        self.pending_bytes = 0
        self.writer = None
        self.tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex[:8]}.tmp")
        # (+1: the method "none" of the unextracted records)
        self.flush_bytes = max(MIN_ROW_GROUP_BYTES, ROW_GROUP_BYTES // (len(settings.methods) + 1))

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.settings.rows_per_batch:
            self._to_arrow()

    def _to_arrow(self) -> None:
        if self.rows:
            batch = _to_batch(self.rows, self.schema)
            self.rows = []
            self.batches.append(batch)
            self.pending_bytes += batch.nbytes
            if self.pending_bytes >= self.flush_bytes:
                self._write_row_group()

    def _write_row_group(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.batches:
            return
        if self.writer is None:
            os.makedirs(self.directory, exist_ok=True)
            self.writer = pq.ParquetWriter(self.tmp, self.schema, compression=self.settings.compression)
        self.writer.write_table(pa.Table.from_batches(self.batches, self.schema))
        self.batches, self.pending_bytes = [], 0

    def close(self) -> None:
        self._to_arrow()
        self._write_row_group()
        if self.writer is not None:
            self.writer.close()
            os.replace(self.tmp, os.path.join(self.directory, self.name))


def write_file_output(
    location: str, warc_filename: str, index: int, settings: WorkerSettings
) -> dict[str, Any]:
    """Write the rows of one input file as Parquet (one file per method partition, the
    statistics row under ``method=_files``) into ``settings.write_dir``; returns the
    statistics row (:func:`file_row`)."""
    schema = arrow_schema()
    schema = schema.remove(schema.get_field_index("method"))  # it is the partition directory
    writers: dict[str, _PartWriter] = {}
    row: dict[str, Any] = {}
    for row in process_file(location, warc_filename, settings):
        method = row["method"]
        writer = writers.get(method)
        if writer is None:
            directory = os.path.join(settings.write_dir, f"method={method}")
            writer = writers[method] = _PartWriter(directory, f"part-{index:05d}.parquet", schema, settings)
        writer.add(row)
    for writer in writers.values():
        writer.close()
    return row  # process_file yields the statistics row last


#: What the workers return per input file when they write the table themselves.
STATS_COLUMNS = "warc_filename string, scores map<string,double>, error string"


def make_partition_fn(settings: WorkerSettings):
    """The ``mapInArrow`` function: input batches of (location, warc_filename) -> output rows.

    With ``settings.write_dir`` the workers write the Parquet files themselves and return the
    statistics row of each input file (:data:`STATS_COLUMNS`).
    """

    def process_partition(batches):
        prepare_worker(settings.worker_memory_mb)
        if settings.write_dir is not None:
            import pyarrow as pa

            full = arrow_schema()
            stats_schema = pa.schema([full.field(name) for name in ("warc_filename", "scores", "error")])
            for batch in batches:
                data = batch.to_pydict()
                for location, name, index in zip(
                    data["location"], data["warc_filename"], data["file_index"], strict=True
                ):
                    stats = write_file_output(location, name, index, settings)
                    yield _to_batch([stats], stats_schema)
            return
        schema = arrow_schema()
        buffer: list[dict[str, Any]] = []
        for batch in batches:
            data = batch.to_pydict()
            for location, name in zip(data["location"], data["warc_filename"], strict=True):
                for row in process_file(location, name, settings):
                    buffer.append(row)
                    if len(buffer) >= settings.rows_per_batch:
                        yield _to_batch(buffer, schema)
                        buffer = []
        if buffer:
            yield _to_batch(buffer, schema)

    return process_partition


# --- the driver side ----------------------------------------------------------------------


class OutputStore:
    """File operations on the output directory through Hadoop's FileSystem (local, HDFS, s3a)."""

    def __init__(self, spark, output: str):
        self._jvm = spark._jvm
        self._Path = self._jvm.org.apache.hadoop.fs.Path
        self.fs = self._Path(output).getFileSystem(spark._jsc.hadoopConfiguration())
        self.output = output.rstrip("/")

    def path(self, *parts: str):
        return self._Path("/".join([self.output, *parts]))

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self.path(*parts)))

    def is_file(self, *parts: str) -> bool:
        p = self.path(*parts)
        return bool(self.fs.exists(p) and self.fs.getFileStatus(p).isFile())

    def list(self, *parts: str) -> list[str]:
        p = self.path(*parts)
        if not self.fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in self.fs.listStatus(p))

    def delete(self, *parts: str) -> None:
        self.fs.delete(self.path(*parts), True)

    def mkdirs(self, *parts: str) -> None:
        self.fs.mkdirs(self.path(*parts))

    def rename(self, src: tuple[str, ...], dst: tuple[str, ...]) -> None:
        if not self.fs.rename(self.path(*src), self.path(*dst)):
            raise OSError(f"rename failed: {'/'.join(src)} -> {'/'.join(dst)}")

    def write_text(self, text: str, *parts: str) -> None:
        out = self.fs.create(self.path(*parts), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()

    def read_text(self, *parts: str) -> str:
        stream = self.fs.open(self.path(*parts))
        try:
            buf = self._jvm.java.io.ByteArrayOutputStream()
            self._jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, buf, 65536, False)
            return bytes(buf.toByteArray()).decode("utf-8")
        finally:
            stream.close()


class LocalOutputStore:
    """The same operations as :class:`OutputStore` with the os module, for local outputs.

    Moving a batch's part files is many small renames: through py4j and Hadoop's checksummed
    local filesystem each costs tens of milliseconds, with ``os.rename`` microseconds.
    """

    def __init__(self, output: str):
        self.output = _local_path(output).rstrip("/") or "/"

    def local(self, *parts: str) -> str:
        return os.path.join(self.output, *parts)

    def exists(self, *parts: str) -> bool:
        return os.path.exists(self.local(*parts))

    def is_file(self, *parts: str) -> bool:
        return os.path.isfile(self.local(*parts))

    def list(self, *parts: str) -> list[str]:
        path = self.local(*parts)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def delete(self, *parts: str) -> None:
        path = self.local(*parts)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)

    def mkdirs(self, *parts: str) -> None:
        os.makedirs(self.local(*parts), exist_ok=True)

    def rename(self, src: tuple[str, ...], dst: tuple[str, ...]) -> None:
        os.rename(self.local(*src), self.local(*dst))

    def write_text(self, text: str, *parts: str) -> None:
        path = self.local(*parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)  # atomic: a marker is either complete or absent

    def read_text(self, *parts: str) -> str:
        with open(self.local(*parts), encoding="utf-8") as fh:
            return fh.read()


def output_store(spark, output: str) -> OutputStore | LocalOutputStore:
    """A local store for local paths (fast renames), Hadoop's FileSystem for everything else."""
    if not _is_remote(output):
        return LocalOutputStore(output)
    return OutputStore(spark, output)


MARKERS = ("_contentx", "batches")
FILE_STATS = ("_contentx", "files")
STAGING = ("_contentx", "staging")


def prepare_output(store: OutputStore | LocalOutputStore, config: JobConfig) -> set[str]:
    """Check/clean the output location; return the input files already done (``--resume``)."""
    if store.is_file():
        raise UserError(f"output path is a file, not a directory: {config.output}")
    if not store.exists() or not store.list():
        return set()
    if config.overwrite:
        store.delete()
        return set()
    if not config.resume:
        raise UserError(
            f"output {config.output} already exists; pass --resume to add the inputs not yet processed, "
            "or --overwrite to replace it"
        )
    if not store.exists(*MARKERS) and not store.exists("_summary.json"):
        raise UserError(
            f"output {config.output} exists but was not written by contentx; refusing to resume into it"
        )
    committed = {name[: -len(".json")] for name in store.list(*MARKERS) if name.endswith(".json")}
    done: set[str] = set()
    for batch_id in committed:
        marker = json.loads(store.read_text(*MARKERS, f"{batch_id}.json"))
        done.update(marker["files"])
    # a run killed after moving some part files but before its marker: remove them
    for entry in store.list():
        if entry.startswith("method="):
            for part in store.list(entry):
                batch = _batch_of(part)
                if batch is not None and batch not in committed:
                    store.delete(entry, part)
    for batch in store.list(*FILE_STATS):
        if batch not in committed:
            store.delete(*FILE_STATS, batch)
    store.delete(*STAGING)
    return done


def _batch_of(part_name: str) -> str | None:
    m = re.match(r"^b(\d{8}T\d{6}-[0-9a-f]{8})-", part_name)
    return m.group(1) if m else None


def _spark_session(app_name: str):
    prepare_driver()
    from pyspark.sql import SparkSession

    return SparkSession.builder.appName(app_name).getOrCreate()


def plan_tasks(
    sizes: Sequence[int | None], min_tasks: int, max_task_bytes: int, open_cost: int
) -> list[list[int]]:
    """Group input files (by index) into Spark tasks, as Spark's own file sources do.

    A task costs tens of milliseconds of scheduling and Python-worker round trips, as much as
    extracting a few dozen pages: small files are packed together, up to ``max_task_bytes``
    per task (``spark.sql.files.maxPartitionBytes``, each file counted with ``open_cost``
    more, ``spark.sql.files.openCostInBytes``), while there are at least ``min_tasks``
    tasks so that every core gets work.  Files of unknown size (remote inputs) count as a
    full task: a Common Crawl WARC (~1 GB) is one task.  Files go largest first to the
    least loaded task (LPT), and the tasks are returned largest first.
    """
    if not sizes:
        return []
    weights = [max_task_bytes if s is None else s + open_cost for s in sizes]
    count = max(min_tasks, -(-sum(weights) // max_task_bytes))
    count = max(1, min(count, len(sizes)))
    loads = [0] * count
    tasks: list[list[int]] = [[] for _ in range(count)]
    for i in sorted(range(len(sizes)), key=lambda i: -weights[i]):
        k = loads.index(min(loads))
        tasks[k].append(i)
        loads[k] += weights[i]
    order = sorted(range(count), key=lambda k: -loads[k])
    return [sorted(tasks[k]) for k in order if tasks[k]]


def _input_size(location: str) -> int | None:
    if _is_remote(location):
        return None
    try:
        return os.path.getsize(_local_path(location))
    except OSError:
        return None  # reported by the task that tries to read it


def input_frame(spark, files: list[tuple[str, str]], num_partitions: int | None):
    """The input DataFrame ``(location, warc_filename, file_index)``, partitioned by
    :func:`plan_tasks` (``num_partitions`` sets the number of tasks instead)."""
    conf = spark.conf
    if num_partitions:
        min_tasks, max_bytes = num_partitions, 1 << 62
    else:
        min_tasks = 2 * spark.sparkContext.defaultParallelism
        max_bytes = _conf_bytes(spark, conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    open_cost = _conf_bytes(spark, conf.get("spark.sql.files.openCostInBytes", "4m"))
    tasks = plan_tasks([_input_size(loc) for loc, _name in files], min_tasks, max_bytes, open_cost)
    rows = [[(files[i][0], files[i][1], i) for i in task] for task in tasks]
    # one element per slice (no shuffle): task k streams the files of rows[k]
    rdd = spark.sparkContext.parallelize(range(len(rows)), max(1, len(rows))).flatMap(lambda k: rows[k])
    return spark.createDataFrame(rdd, "location string, warc_filename string, file_index int")


def _conf_bytes(spark, value: str) -> int:
    """A Spark size setting ("128m", "4194304", "1g") in bytes, parsed by Spark itself."""
    try:
        return int(spark._jvm.org.apache.spark.network.util.JavaUtils.byteStringAsBytes(str(value)))
    except Exception as exc:  # py4j carries Java's NumberFormatException
        raise UserError(f"not a size: {value!r}") from exc


def output_writer(config: JobConfig) -> str:
    """``arrow`` or ``spark``: ``auto`` picks the workers' pyarrow writer for local outputs."""
    if config.writer == "auto":
        return "spark" if _is_remote(config.output) else "arrow"
    return config.writer


_PYARROW_CODECS = {
    "uncompressed": "none",
    "none": "none",
    "snappy": "snappy",
    "gzip": "gzip",
    "zstd": "zstd",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "brotli": "brotli",
}


def _parquet_codec(spark) -> str:
    """Spark's configured Parquet codec, as pyarrow names it (zstd when pyarrow lacks it)."""
    codec = (spark.conf.get("spark.sql.parquet.compression.codec", "zstd") or "zstd").lower()
    return _PYARROW_CODECS.get(codec, "zstd")


def run_batch(
    spark,
    store: OutputStore | LocalOutputStore,
    files: list[tuple[str, str]],
    config: JobConfig,
    batch_id: str,
) -> list:
    """Extract one batch of input files and commit it into the output; returns the statistics
    rows of its input files (``warc_filename``, ``scores``, ``error``)."""
    settings = WorkerSettings(
        config.methods, config.params, config.max_html_bytes, config.rows_per_batch, config.worker_memory_mb
    )
    staging = "/".join([config.output.rstrip("/"), *STAGING, batch_id])
    inputs = input_frame(spark, files, config.num_partitions)
    if output_writer(config) == "arrow":
        # the workers write the Parquet files: no row crosses into the JVM
        settings.write_dir = os.path.abspath(_local_path(staging))
        settings.compression = _parquet_codec(spark)
        stats = inputs.mapInArrow(make_partition_fn(settings), STATS_COLUMNS).collect()
        missing = {name for _loc, name in files} - {row["warc_filename"] for row in stats}
        if missing:  # cannot happen unless a task lost its output silently
            raise RuntimeError(f"no output reported for {len(missing)} input file(s): {sorted(missing)[:3]}")
    else:
        table = inputs.mapInArrow(make_partition_fn(settings), spark_schema())
        table.write.mode("overwrite").partitionBy("method").parquet(staging)
        stats = spark.read.parquet(f"{staging}/method={FILES_METHOD}").select(
            "warc_filename", "scores", "error"
        )
        stats = stats.collect()
    # move parts into place, names prefixed with the batch id, then write the marker
    for entry in store.list(*STAGING, batch_id):
        if not entry.startswith("method="):
            continue
        method = entry[len("method=") :]
        parts = [p for p in store.list(*STAGING, batch_id, entry) if p.endswith(".parquet")]
        if method == FILES_METHOD:
            store.mkdirs(*FILE_STATS, batch_id)
            for part in parts:
                store.rename((*STAGING, batch_id, entry, part), (*FILE_STATS, batch_id, part))
            continue
        store.mkdirs(entry)
        for part in parts:
            store.rename((*STAGING, batch_id, entry, part), (entry, f"b{batch_id}-{part}"))
    store.write_text(
        json.dumps({"batch": batch_id, "files": [name for _loc, name in files]}, indent=1),
        *MARKERS,
        f"{batch_id}.json",
    )
    store.delete(*STAGING, batch_id)
    return stats


def summarize(
    config: JobConfig, stats_rows: list, files_total: int, files_skipped: int, elapsed: float
) -> dict[str, Any]:
    """Summary of this run, from the per-file statistics rows (the table is not re-read)."""
    summary: dict[str, Any] = {
        "output": config.output,
        "methods": list(config.methods),
        "input_files": files_total,
        "files_already_done": files_skipped,
        "files_processed": 0,
        "content_records": 0,
        "records_by_warc_type": {},
        "rows_by_method_status": {},
        "file_errors": {},
        "elapsed_seconds": round(elapsed, 2),
        "records_per_second": None,
        "content_records_per_second": None,
    }
    if not stats_rows:
        return summary
    counts: Counter = Counter()
    by: dict[str, Counter] = {}
    records = 0
    for row in stats_rows:
        for key, value in (row["scores"] or {}).items():
            if key.startswith("records."):
                counts[key[len("records.") :]] += int(value)
            elif key.startswith("rows."):
                method, status = key[len("rows.") :].rsplit(".", 1)
                by.setdefault(method, Counter())[status] += int(value)
            elif key == "content_records":
                records += int(value)
        if row["error"]:
            summary["file_errors"][row["warc_filename"]] = row["error"]
    summary["files_processed"] = len(stats_rows)
    summary["content_records"] = records
    summary["records_by_warc_type"] = dict(sorted(counts.items()))
    summary["rows_by_method_status"] = {m: dict(sorted(c.items())) for m, c in sorted(by.items())}
    if elapsed > 0:
        summary["records_per_second"] = round(sum(counts.values()) / elapsed, 1)
        summary["content_records_per_second"] = round(records / elapsed, 1)
    return summary


def run(config: JobConfig, spark=None, files: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Run the job; returns the summary (also written to ``OUTPUT/_summary.json``)."""
    started = time.perf_counter()
    if files is None:
        files = expand_inputs(config.inputs, config.input_base_url)
    if spark is None:
        spark = _spark_session("contentx-extract-warc")
    store = output_store(spark, config.output)
    done = prepare_output(store, config)
    todo = [f for f in files if f[1] not in done]
    size = config.files_per_batch or len(todo) or 1
    stats_rows = []
    for start in range(0, len(todo), size):
        batch_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
        stats_rows += run_batch(spark, store, todo[start : start + size], config, batch_id)
    summary = summarize(config, stats_rows, len(files), len(files) - len(todo), time.perf_counter() - started)
    store.write_text(json.dumps(summary, indent=2, default=str), "_summary.json")
    return summary


def check_local_output(output: str) -> None:
    """Early, Spark-free check of a local output path (remote ones are checked by Hadoop)."""
    if _is_remote(output):
        return
    local = _local_path(output)
    if os.path.isfile(local):
        raise UserError(f"output path is a file, not a directory: {output}")
    parent = os.path.dirname(os.path.abspath(local))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if os.path.isfile(parent):
        raise UserError(f"output path lies under a file, not a directory: {parent}")


def print_summary(summary: dict[str, Any], spark=None, show_rows: int = 3, out=sys.stdout) -> None:
    print("\ncontentx summary", file=out)
    print(f"  output: {summary['output']}", file=out)
    print(
        f"  input files: {summary['input_files']} (already done: {summary['files_already_done']}, "
        f"processed now: {summary['files_processed']})",
        file=out,
    )
    if summary["records_by_warc_type"]:
        print(
            "  records by WARC type: "
            + ", ".join(f"{k} {v}" for k, v in summary["records_by_warc_type"].items()),
            file=out,
        )
    for method, statuses in summary["rows_by_method_status"].items():
        print(f"  rows {method}: " + ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())), file=out)
    for name, err in summary["file_errors"].items():
        print(f"  file error: {name}: {err}", file=out)
    print(
        f"  elapsed: {summary['elapsed_seconds']} s, records/s: {summary['records_per_second']} "
        f"(content records/s: {summary['content_records_per_second']})",
        file=out,
    )
    if spark is not None and show_rows and summary["files_processed"]:
        from pyspark.sql import functions as F

        first_method = summary["methods"][0] if summary["methods"] else NO_METHOD
        rows = (
            spark.read.parquet(summary["output"])
            .where((F.col("status") == "ok") & (F.col("method") == first_method))
            .select("url", "method", "text_length", F.substring("text", 1, 80).alias("text"))
            .limit(show_rows)
            .collect()
        )
        for row in rows:
            text = (row["text"] or "").replace("\n", " ")
            print(f"  [{row['method']}] {row['url']} ({row['text_length']} chars): {text}…", file=out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="extract_warc",
        description="Extract the main text of the HTML pages in WARC files into a Parquet table.",
    )
    p.add_argument(
        "--input",
        nargs="+",
        metavar="PATH",
        help="WARC files, directories, globs, URLs (https://, s3a://) or a warc.paths[.gz] listing",
    )
    p.add_argument(
        "--input-base-url",
        default=None,
        help="prefix for the relative paths of a .paths listing (e.g. https://data.commoncrawl.org/)",
    )
    p.add_argument("--output", required=True, metavar="DIR", help="output directory of the Parquet table")
    p.add_argument(
        "--methods",
        default=None,
        help=f"comma-separated methods or 'all' (default: {DEFAULT_METHOD}); valid: {', '.join(METHODS)}",
    )
    p.add_argument("--config", default=None, help="job configuration (TOML; default conf/extract.toml)")
    p.add_argument("--resume", action="store_true", help="add only the inputs not yet in the output")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument(
        "--num-partitions",
        type=int,
        default=None,
        help="Spark tasks (default: small files packed up to spark.sql.files.maxPartitionBytes, "
        "at least two tasks per core)",
    )
    p.add_argument(
        "--max-html-bytes",
        type=int,
        default=None,
        help=f"cut HTML payloads at this size (default {DEFAULT_MAX_HTML_BYTES}; 0 = no cut)",
    )
    p.add_argument(
        "--files-per-batch",
        type=int,
        default=None,
        help="commit the output every N input files (default: all in one batch)",
    )
    p.add_argument("--show-rows", type=int, default=None, help="rows printed after the summary (default 3)")
    p.add_argument(
        "--writer",
        default=None,
        choices=WRITERS,
        help="who writes the Parquet files: the Python workers with pyarrow (arrow; local outputs), "
        "Spark (spark; any Hadoop filesystem) or auto (default: arrow for local outputs)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        config = build_config(args)
        files = expand_inputs(config.inputs, config.input_base_url)
        check_local_output(config.output)
        check_java()
        spark = _spark_session("contentx-extract-warc")
        summary = run(config, spark=spark, files=files)
        print_summary(summary, spark, config.show_rows)
        return 0
    except UserError as exc:
        print(f"extract_warc: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extract_warc: interrupted; re-run with --resume to continue", file=sys.stderr)
        return 130


__all__ = ["JobConfig", "UserError", "build_config", "build_parser", "expand_inputs", "main", "run"]
