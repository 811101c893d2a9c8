"""The Python worker's side: output rows of each input file, the Parquet part writer, ``mapInArrow``."""

from __future__ import annotations

import errno
import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..outputs.table import FILES_METHOD, STAGED_SUFFIX
from ..runtime.worker_env import freeze_long_lived, prepare_worker
from .inputs import crawl_and_segment

#: Method name of rows that carry no extraction (skipped or failed records).
NO_METHOD = "none"
#: Internal partition of the per-file statistics rows (moved under ``_contentx/files``).

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
    ("language", "string"),
    ("language_score", "double"),
    ("text_hash", "string"),
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
        "double": pa.float64(),
        "map<string,double>": pa.map_(pa.string(), pa.float64()),
    }
    return pa.schema([pa.field(n, types[t]) for n, t in OUTPUT_COLUMNS])


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
    #: Language-id model (None: the bundled lid.176): a path the workers read, or with
    #: ``lid_model_shipped`` the name of the file shipped by ``SparkContext.addFile``.
    lid_model: str | None = None
    lid_model_shipped: bool = False

    def lid_model_path(self) -> str | None:
        """The model file as this worker sees it."""
        if self.lid_model is None or not self.lid_model_shipped:
            return self.lid_model
        from pyspark import SparkFiles

        return SparkFiles.get(self.lid_model)


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


#: Rows whose language and text hash wait for :func:`label_rows` carry this key (True).
PENDING_LANGUAGE = "_language_pending"
#: :func:`process_file` labels its rows in groups of this many rows (or of LABEL_BATCH_CHARS
#: characters of text, whichever comes first).
LABEL_BATCH_ROWS = 64
LABEL_BATCH_CHARS = 4_000_000


def label_rows(rows: list[dict[str, Any]], lid_model: str | None) -> None:
    """Language id and text hash of the rows that wait for them, one text after the other.

    Done for a group of rows rather than inside each record's extraction: fastText's model
    (lid.176, 0.9 MB) then stays in the CPU caches from one text to the next: measured on the
    scale WARC, 1.15 ms per text between extractions against 0.64 ms in a row.  Same codes,
    scores and hashes (the same calls on the same texts)."""
    from ..text.language import detect_language, text_hash

    for row in rows:
        if row.pop(PENDING_LANGUAGE, False):
            text = row["text"]
            row["language"], row["language_score"] = detect_language(text, lid_model)
            row["text_hash"] = text_hash(text)


def rows_for_record(rec, warc_filename: str, settings: WorkerSettings) -> list[dict[str, Any]]:
    """Output rows of one WARC record: one per method for an HTML page, else one ``none`` row.
    The ``ok`` rows wait for their language and text hash (:data:`PENDING_LANGUAGE`,
    :func:`label_rows`)."""
    from ..core import extract_all

    base = _base_row(rec, warc_filename)
    if rec.status != "ok" or not rec.is_html:
        status = rec.status if rec.status != "ok" else "skipped"
        return [_unextracted_row(base, NO_METHOD, status, rec.error or "not extracted")]
    try:
        results = extract_all(
            rec.payload,
            settings.methods,
            url=rec.url,
            content_type=rec.http_content_type,
            params=settings.params,
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
                # an "empty" row keeps its (empty) text: the method ran and found nothing
                "text": ex.text if ex.status != "error" else None,
                "text_length": len(ex.text) if ex.status != "error" else None,
                "language": None,
                "language_score": None,
                "text_hash": None,
                "scores": list(scores.items()),
                "status": ex.status,
                "error": ex.error,
                # language and hash of the corpus text only
                PENDING_LANGUAGE: ex.status == "ok",
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
    lid_model: str | None = None,
) -> dict[str, Any]:
    """The per-file statistics row (partition ``_files``).

    ``scores`` holds ``records.<warc type>`` (all records read), ``rows.<method>.<status>``
    (output rows written), ``content_records``, ``seconds``, ``compiled_passes`` (1 when the
    worker ran the compiled passes, 0 when the slower pure-Python code: :mod:`..page.compiled`)
    and ``compiled_language_id`` (1 when language id ran compiled, 0 when through fastText:
    :func:`..text.language.lid_status`).
    """
    from ..page import compiled
    from ..text.language import lid_status

    scores = [(f"records.{k}", float(v)) for k, v in sorted(counts.items())]
    scores += [(f"rows.{m}.{st}", float(v)) for (m, st), v in sorted(rows.items())]
    scores += [("content_records", float(records)), ("seconds", seconds)]
    scores += [("compiled_passes", float(compiled.module() is not None))]
    scores += [("compiled_language_id", float(lid_status(lid_model) == "compiled"))]
    return stats_row(warc_filename, scores, file_error)


def stats_row(warc_filename: str, scores: list[tuple[str, float]], error: str | None) -> dict[str, Any]:
    """The columns of a statistics row (partition ``_files``) from its file name, scores and error:
    :func:`file_row`'s, and the driver's for the rows it writes (:func:`.pieces.write_file_stats`)."""
    crawl, segment = crawl_and_segment(warc_filename)
    return {
        "warc_filename": warc_filename,
        "crawl": crawl,
        "warc_segment": segment,
        "method": FILES_METHOD,
        "scores": scores,
        "status": "error" if error else "ok",
        "error": error,
    }


def naming_full_disk(exc: OSError, path: str) -> OSError | None:
    """For a full filesystem, the same error naming ``path`` (pyarrow's message names no file, and
    the job's one line names the file: :func:`..errors.disk_full_line`); None for another error."""
    if exc.errno == errno.ENOSPC or "No space left on device" in str(exc):
        return OSError(errno.ENOSPC, "No space left on device", path)
    return None


def read_error(location: str, exc: BaseException) -> str:
    """The error of an input file that cannot be opened or read (job and data source alike)."""
    return f"cannot read {location}: {type(exc).__name__}: {exc}"


def is_piece(start: int, end: int) -> bool:
    """True for a piece of a file cut by the task plan (:func:`.inputs.plan_tasks`), not a whole file."""
    return start > 0 or end >= 0


def process_file(
    location: str, warc_filename: str, settings: WorkerSettings, start: int = 0, end: int = -1
) -> Iterator[dict[str, Any]]:
    """All output rows of one input file, then its statistics row.  Never raises.

    ``start``, ``end`` (-1: the file's end): a piece of a gzip WARC (:mod:`..warc.split`): the
    records that start in ``[start, end)``; its statistics row says where it started and stopped
    (``piece.*`` scores, :func:`file_row`) for the job's check (:mod:`.pieces`)."""
    from ..warc.inputs import open_input
    from ..warc.reader import WarcReader
    from ..warc.split import PieceBounds, record_start

    started = time.perf_counter()
    counts: Counter = Counter()
    rows: Counter = Counter()
    records = 0
    file_error = None
    lid_model = settings.lid_model_path()
    waiting: list[dict[str, Any]] = []  # rows whose language and hash are computed together
    waiting_chars = 0
    bounds = PieceBounds(first=None, next=None) if is_piece(start, end) else None
    try:
        with open_input(location) as stream:
            first: int | None = 0
            if start > 0:  # (the file's first piece starts at its first record)
                first = record_start(stream, start, end if end >= 0 else 1 << 62)
                if first is not None:
                    stream.seek(first)
            if bounds is not None:
                bounds.first = first
            reader = WarcReader(
                stream,
                warc_filename,
                max_html_bytes=settings.max_html_bytes,
                end=end if end >= 0 else None,
                continued=start > 0,
            )
            for rec in reader if first is not None else ():
                if rec.warc_type is not None:
                    records += 1
                for row in rows_for_record(rec, warc_filename, settings):
                    rows[(row["method"], row["status"])] += 1
                    waiting.append(row)
                    waiting_chars += row["text_length"] or 0
                if len(waiting) >= LABEL_BATCH_ROWS or waiting_chars >= LABEL_BATCH_CHARS:
                    label_rows(waiting, lid_model)
                    yield from waiting
                    waiting, waiting_chars = [], 0
            counts = reader.counts
            file_error = reader.file_error
            if bounds is not None:
                bounds.next = reader.next_offset
    except Exception as exc:  # unreadable input (vanished file, network error, ...)
        label_rows(waiting, lid_model)
        yield from waiting
        waiting = []
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
    label_rows(waiting, lid_model)
    yield from waiting
    seconds = time.perf_counter() - started
    stats = file_row(warc_filename, counts, rows, file_error, records, seconds, lid_model)
    if bounds is not None:
        stats["scores"] += piece_scores(start, end, bounds)
    yield stats


#: The statistics keys of a piece of a file (:func:`piece_scores`); -1: none.
PIECE_KEYS = ("piece.start", "piece.end", "piece.first", "piece.next")


def piece_scores(start: int, end: int, bounds) -> list[tuple[str, float]]:
    """A piece's ``piece.start``, ``piece.end`` (-1: the file's end), ``piece.first`` (its first
    record's offset) and ``piece.next`` (the first record at or after its end, where the next
    piece must start); -1 where there is none.  The job checks and then drops them (:mod:`.pieces`)."""
    values = (start, end, bounds.first, bounds.next)
    return [(key, float(-1 if v is None else v)) for key, v in zip(PIECE_KEYS, values, strict=True)]


def rows_to_batch(rows: list[dict[str, Any]], schema):
    import pyarrow as pa

    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.RecordBatch.from_pydict(columns, schema=schema)


#: Columns whose values are unique per row (or nearly): written without Parquet's dictionary
#: encoding, which pyarrow otherwise tries on every column (hashing each text, 0.4 ms per 181
#: pages); the others (host, MIME types, status, language, ...) repeat and keep it.
UNIQUE_COLUMNS = frozenset(
    ("url", "content_digest", "fetch_time", "warc_record_offset", "warc_record_length", "warc_record_id")
    + ("title", "text", "text_length", "language_score", "text_hash")
)


#: Bytes of Arrow data a worker gathers (all methods together) before writing Parquet row
#: groups: each method's writer flushes at its share, at least 8 MiB.
ROW_GROUP_BYTES = 64 * 1024 * 1024
MIN_ROW_GROUP_BYTES = 8 * 1024 * 1024


class _PartWriter:
    """The Parquet file of one input file and one method, written by a Python worker.

    Written under a hidden temporary name and renamed when complete: the final name depends
    only on the input file's index in the batch, so a retried or speculative task replaces the
    file instead of adding a second copy, and a killed task leaves only a hidden file that no
    reader (and no commit) picks up.  The complete file is staged (:func:`part_name`: not
    ``*.parquet`` until the batch's commit renames it).
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
            batch = rows_to_batch(self.rows, self.schema)
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
            self.writer = pq.ParquetWriter(
                self.tmp,
                self.schema,
                compression=self.settings.compression,
                use_dictionary=[name for name in self.schema.names if name not in UNIQUE_COLUMNS],
            )
        self.writer.write_table(pa.Table.from_batches(self.batches, self.schema))
        self.batches, self.pending_bytes = [], 0

    def close(self) -> None:
        self._to_arrow()
        self._write_row_group()
        if self.writer is not None:
            self.writer.close()
            os.replace(self.tmp, os.path.join(self.directory, self.name))

    def discard(self) -> None:
        """Close and remove the temporary file after a failure (a full disk keeps no partial file)."""
        try:
            if self.writer is not None:
                self.writer.close()
        except OSError:
            pass
        self.writer = None
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def part_name(index: int, start: int = 0, end: int = -1) -> str:
    """The staged name of the Parquet file of an input file's rows (``index``: its place in the
    batch), or of a piece of it (named by its start: a retried task replaces its own file):
    ``part-*.parquet`` and :data:`..outputs.table.STAGED_SUFFIX`, which the commit takes off."""
    name = f"part-{index:05d}-{start:012d}" if is_piece(start, end) else f"part-{index:05d}"
    return f"{name}.parquet{STAGED_SUFFIX}"


def files_schema():
    """The Arrow schema of the Parquet files the workers write: :func:`arrow_schema` without
    ``method`` (the partition directory ``method=...``)."""
    schema = arrow_schema()
    return schema.remove(schema.get_field_index("method"))


def write_file_output(
    location: str, warc_filename: str, index: int, settings: WorkerSettings, start: int = 0, end: int = -1
) -> dict[str, Any]:
    """Write the rows of one input file (or of a piece of it: ``start``, ``end``) as Parquet (one
    file per method partition) into ``settings.write_dir``; returns the statistics row
    (:func:`file_row`), which the driver writes with the batch's others
    (:func:`.pieces.write_file_stats`: one small Parquet file per input file cost the worker
    1-2 ms, and the table as many files)."""
    schema = files_schema()
    writers: dict[str, _PartWriter] = {}
    row: dict[str, Any] = {}
    current = settings.write_dir
    try:
        for row in process_file(location, warc_filename, settings, start, end):
            method = row["method"]
            if method == FILES_METHOD:  # (the last row: returned)
                break
            writer = writers.get(method)
            if writer is None:
                directory = os.path.join(settings.write_dir, f"method={method}")
                name = part_name(index, start, end)
                writer = writers[method] = _PartWriter(directory, name, schema, settings)
            current = writer.tmp
            writer.add(row)
        for writer in writers.values():
            current = writer.tmp
            writer.close()
    except OSError as exc:
        for writer in writers.values():
            writer.discard()
        named = naming_full_disk(exc, current)
        if named is not None:
            raise named from exc
        raise
    return row  # process_file yields the statistics row last


#: What the workers return per input file when they write the table themselves.
STATS_COLUMNS = "warc_filename string, scores map<string,double>, error string"


def _input_files(batches) -> Iterator[tuple[str, str, int, int, int]]:
    """``(location, warc_filename, file_index, start, end)`` of the input rows; the columns a batch
    lacks mean a whole file (``file_index`` 0, ``start`` 0, ``end`` -1)."""
    for batch in batches:
        data = batch.to_pydict()
        rows = batch.num_rows
        yield from zip(
            data["location"],
            data["warc_filename"],
            data.get("file_index", [0] * rows),
            data.get("start", [0] * rows),
            data.get("end", [-1] * rows),
            strict=True,
        )


def make_partition_fn(settings: WorkerSettings):
    """The ``mapInArrow`` function: input batches of (location, warc_filename) -> output rows.

    With ``settings.write_dir`` the workers write the Parquet files themselves and return the
    statistics row of each input file (:data:`STATS_COLUMNS`).  After its first task a worker
    freezes its long-lived objects out of the garbage collector's reach (:func:`freeze_long_lived`).
    """

    def process_partition(batches):
        prepare_worker(settings.worker_memory_mb)
        if settings.write_dir is not None:
            import pyarrow as pa

            full = arrow_schema()
            stats_schema = pa.schema([full.field(name) for name in ("warc_filename", "scores", "error")])
            for location, name, index, start, end in _input_files(batches):
                stats = write_file_output(location, name, index, settings, start, end)
                yield rows_to_batch([stats], stats_schema)
            freeze_long_lived()
            return
        schema = arrow_schema()
        buffer: list[dict[str, Any]] = []
        for location, name, _index, start, end in _input_files(batches):
            for row in process_file(location, name, settings, start, end):
                buffer.append(row)
                if len(buffer) >= settings.rows_per_batch:
                    yield rows_to_batch(buffer, schema)
                    buffer = []
        if buffer:
            yield rows_to_batch(buffer, schema)
        freeze_long_lived()

    return process_partition
