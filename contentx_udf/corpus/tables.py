"""The corpus job's inputs on any Hadoop filesystem: extraction tables and earlier corpora.

Every check goes through Hadoop's ``FileSystem`` (the JVM gateway), so local paths, ``hdfs://``,
``s3a://``, ``viewfs://`` ... behave alike, and every problem is one :class:`UserError` line:

* an extraction table must be **committed**: every part file belongs to a batch with a commit
  marker (``_contentx/batches/<batch>.json``) and no batch is being staged
  (``_contentx/staging/``), so a table that is still being written, or whose run was killed, is
  refused (``contentx run --resume`` finishes it); a table whose run stopped between batches (batch
  markers, no ``_summary.json``) is read, and the summary and report say it is unfinished;
* its Parquet files must be **whole**: each ends with the ``PAR1`` magic after a footer that
  parses (one read of its last 64 KB), and a file damaged inside is named when Spark fails to
  read it.  A damaged file is named in one line; with ``skip_damaged`` the table is read without
  it and the files (and, where the footer is readable, their rows) are counted;
* an earlier corpus (``--against``) must be finished (``_SUCCESS``; a corpus of the version before
  it, which wrote no ``_SUCCESS``, is recognised by its ``_report.json``).  Its documents give their
  ``text_hash`` and, when they were written with the same MinHash parameters, their band hashes.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..outputs.table import STAGING, batch_of, committed_batches, extraction_records
from ..runtime.store import Store, store_of

#: Columns an extraction table must have for the corpus job.
REQUIRED_COLUMNS = (
    "url",
    "url_host_name",
    "fetch_time",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
    "method",
    "title",
    "text",
    "text_length",
    "scores",
    "status",
    "language",
    "language_score",
    "text_hash",
)
#: The commit marker of a finished corpus (written last).
SUCCESS = "_SUCCESS"
#: The version of the corpus layout this job writes (in ``_SUCCESS`` and ``_report.json``).
CORPUS_FORMAT = 2
_MAGIC = b"PAR1"
#: Footer reads in flight at once (remote filesystems answer slowly, one file at a time): 90,000
#: part files on S3 at ~30 ms a read take about a minute and a half.
CHECK_THREADS = 32
#: Bytes read from the end of each part file to check it: its footer and the 8 bytes after it.
TAIL_BYTES = 65_536


#: Reads of an input file that fail the way a filesystem fails for a moment (the file missing
#: or not a file, access denied, a connection reset or timed out) are tried again: attempts in
#: all, the first wait in seconds (doubling); ``CONTENTX_READ_ATTEMPTS`` / ``CONTENTX_READ_BACKOFF``
#: in the driver's environment override them.  A damaged file (bad bytes) is never retried.
READ_ATTEMPTS = 4
READ_BACKOFF_SECONDS = 0.5
#: What Hadoop, the JVM and Python say for such a momentary failure.
TRANSIENT_READ = re.compile(
    r"FileNotFoundException|No such file or directory|does not exist|FILE_NOT_EXIST|Is a directory|"
    r"is not a file|AccessDenied|Permission denied|Connection reset|Connection refused|"
    r"SocketTimeout|timed out|Broken pipe|Connection closed",
)


def read_retries() -> tuple[int, float]:
    """``(attempts, first wait)`` of a momentarily unreadable input file (see :data:`READ_ATTEMPTS`)."""
    attempts = max(1, int(os.environ.get("CONTENTX_READ_ATTEMPTS", READ_ATTEMPTS)))
    return attempts, max(0.0, float(os.environ.get("CONTENTX_READ_BACKOFF", READ_BACKOFF_SECONDS)))


def is_transient(error: BaseException | str) -> bool:
    """Whether a failed read looks like a filesystem failing for a moment (worth another try)."""
    return bool(TRANSIENT_READ.search(str(error)))


class InputVanished(FileNotFoundError):
    """An input file that was checked is not there when Spark plans its read (for a moment, or
    for good); its URI is the message."""


@dataclass
class DamagedFile:
    path: str
    reason: str
    rows: int | None  # from the footer, where it is readable


@dataclass
class Table:
    """One input table: its position, path, root URI and the URIs of its whole part files."""

    index: int
    path: str
    root: str
    files: list[str]
    #: ``(length, modification time)`` of each file when the table was checked (by URI).
    stamps: dict[str, tuple[int, int] | None] = field(default_factory=dict)


@dataclass
class InputTables:
    """The input tables' readable files and the damaged files left out (with ``skip_damaged``)."""

    tables: list[Table] = field(default_factory=list)
    damaged: list[DamagedFile] = field(default_factory=list)
    #: ``(path, committed batches)`` of the tables whose run has not finished (no ``_summary.json``).
    unfinished: list[tuple[str, int]] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What the report and the summary say of the unfinished tables read."""
        return [
            f"--input {path} is unfinished (no _summary.json: its run was killed or is still "
            f"running); built from its {batches} committed batch(es) only; `contentx run --resume` "
            "finishes it"
            for path, batches in self.unfinished
        ]

    def frame(self, spark):
        """The union of the tables (their :data:`REQUIRED_COLUMNS` and ``_input``), or None."""
        from pyspark.errors import AnalysisException
        from pyspark.sql import functions as F

        out = None
        for table in self.tables:
            try:
                df = spark.read.option("basePath", table.root).parquet(*table.files)
            except AnalysisException as exc:
                if self.named_in(exc) is not None and is_transient(exc):
                    raise InputVanished(self.named_in(exc)) from exc  # listed, gone now
                raise UserError(
                    f"{table.path} is not an extraction table (not a Parquet table: {_describe(exc)})"
                ) from None
            missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
            if missing:
                raise UserError(
                    f"{table.path} is not an extraction table of this version (missing column(s): "
                    f"{', '.join(missing)}); write it with `contentx run` / jobs/extract_warc.py"
                )
            df = df.select(*REQUIRED_COLUMNS).withColumn("_input", F.lit(table.index))
            out = df if out is None else out.unionByName(df)
        return out

    def named_in(self, error: BaseException) -> str | None:
        """The URI of an input file that a Spark error names (a file damaged inside), or None."""
        text = str(error)
        for table in self.tables:
            for uri in table.files:
                path = uri.split(":", 1)[1] if uri.startswith("file:") else uri
                if uri in text or path.lstrip("/") in text:
                    return uri
        return None

    def changed(self, spark) -> list[str]:
        """The input files whose length or modification time is no longer what the check saw
        (replaced, rewritten or removed since): what the job read of them may be neither version.
        One listing per partition directory, as the check made."""
        folders = []
        for table in self.tables:
            store = store_of(spark, table.root)
            relative = {uri: uri[len(table.root) :].lstrip("/") for uri in table.files}
            for folder in sorted({r.rsplit("/", 1)[0] for r in relative.values()}):
                mine = {u: r.rsplit("/", 1)[1] for u, r in relative.items() if r.rsplit("/", 1)[0] == folder}
                folders.append((store, table, folder, mine))

        def moved(item) -> list[str]:
            store, table, folder, mine = item
            now = {name: (length, mtime) for name, length, mtime in store.stamps(folder)}
            return [uri for uri, name in mine.items() if now.get(name) != table.stamps.get(uri)]

        with ThreadPoolExecutor(max_workers=CHECK_THREADS) as pool:
            return [uri for found in pool.map(moved, folders) for uri in found]

    def leave_out(self, spark, uri: str, reason: str) -> None:
        """Leave a damaged file out (counted, with its footer's rows)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = None
        try:
            store = store_of(spark, uri)
            length = store.length()
            tail = store.read_range(max(0, length - TAIL_BYTES), min(length, TAIL_BYTES))
            footer_length = struct.unpack("<I", tail[-8:-4])[0]
            footer = tail[len(tail) - 8 - footer_length : -8]
            rows = pq.ParquetFile(pa.BufferReader(_MAGIC + footer + tail[-8:])).metadata.num_rows
        except Exception:
            pass
        for table in self.tables:
            if uri in table.files:
                table.files.remove(uri)
                self.damaged.append(DamagedFile(uri, reason, rows))
        self.tables = [t for t in self.tables if t.files]


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:200]


def open_store(spark, path: str, what: str, verb: str = "read") -> Store:
    """A store on ``path``'s filesystem; UserError when it cannot be reached (a bad URI, a scheme
    without a connector, denied access, a missing bucket)."""
    try:
        store = store_of(spark, path)
        store.exists()
        return store
    except Exception as exc:
        raise UserError(f"{what} {path}: cannot be {verb} ({_describe(exc)})") from None


def _store(spark, path: str, what: str, noun: str) -> Store:
    store = open_store(spark, path, what)
    try:
        exists = store.exists()
    except Exception as exc:
        raise UserError(f"{what} {path}: cannot be read ({_describe(exc)})") from None
    if not exists:
        raise UserError(f"{what} {path}: no such {noun} directory")
    if store.is_file():
        raise UserError(f"{what} {path}: is a file, not a directory")
    return store


def check_parquet_file(store: Store, relative: str, length: int) -> DamagedFile | None:
    """None when the file is whole (a ``PAR1`` footer that parses), else why not.  One read of the
    file's last :data:`TAIL_BYTES` holds the footer of a table part (a second read when not)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if length < 12:
        return DamagedFile(relative, f"{length} bytes, too short for Parquet", None)
    attempts, backoff = read_retries()
    for attempt in range(attempts):
        try:
            tail = store.read_range(max(0, length - TAIL_BYTES), min(length, TAIL_BYTES), relative)
            break
        except Exception as exc:
            if attempt + 1 == attempts or not is_transient(exc):
                tries = f" after {attempts} attempts" if attempts > 1 and is_transient(exc) else ""
                return DamagedFile(relative, f"cannot be read{tries} ({_describe(exc)})", None)
            time.sleep(backoff * 2**attempt)
    footer_length = struct.unpack("<I", tail[-8:-4])[0]
    if tail[-4:] != _MAGIC or footer_length > length - 12:
        return DamagedFile(relative, "cut short or not Parquet (no footer)", None)
    try:
        if footer_length + 8 <= len(tail):
            footer = tail[len(tail) - 8 - footer_length : -8]
        else:
            footer = store.read_range(length - 8 - footer_length, footer_length, relative)
        pq.ParquetFile(pa.BufferReader(_MAGIC + footer + tail[-8:]))  # parses the footer
    except Exception as exc:
        return DamagedFile(relative, f"unreadable footer ({_describe(exc)})", None)
    return None


def _committed_parts(store: Store, path: str, method: str | None) -> list[tuple[str, int, int]]:
    """``(relative path, length, modification time)`` of the table's part files, as listed;
    UserError when the table is not committed."""
    partitions = [p for p in store.list() if p.startswith("method=")]
    if not partitions:
        raise UserError(f"{path} is not an extraction table (no method=<m> partition directories)")
    markers = committed_batches(store)
    if not markers and not store.exists("_summary.json"):
        raise UserError(
            f"{path} has no commit marker (_contentx/batches/): it is still being written, or not "
            "written by `contentx run`"
        )
    if store.list(*STAGING):
        raise UserError(
            f"{path} is still being written, or its run was killed (a batch is staged in "
            "_contentx/staging/); finish it with `contentx run --resume` first"
        )
    parts = []
    for partition in partitions:
        if method is not None and partition != f"method={method}":
            continue
        for name, length, mtime in store.stamps(partition):
            if name.startswith(("_", ".")) or not name.endswith(".parquet"):
                continue
            batch = batch_of(name)
            if markers and batch is not None and batch not in markers:
                raise UserError(
                    f"{path} holds files of an uncommitted batch ({partition}/{name}): its run was killed "
                    "or is still writing; finish it with `contentx run --resume` first"
                )
            parts.append((f"{partition}/{name}", length, mtime))
    return parts


def find_damaged(store: Store, parts: list[tuple[str, int, int]]) -> list[DamagedFile]:
    with ThreadPoolExecutor(max_workers=CHECK_THREADS) as pool:
        found = pool.map(lambda p: check_parquet_file(store, p[0], p[1]), parts)
        return [d for d in found if d is not None]


def read_tables(
    spark, inputs: list[str], method: str | None = None, skip_damaged: bool = False
) -> InputTables:
    """The extraction tables ``inputs`` (their ``method`` files, when given), checked: committed,
    their Parquet files whole (damaged ones left out with ``skip_damaged``, else a UserError)."""
    found = InputTables()
    for index, path in enumerate(inputs):
        store = _store(spark, path, "--input", "table")
        parts = _committed_parts(store, path, method)
        if not store.exists("_summary.json"):  # committed batches, the run not finished
            found.unfinished.append((path, len(committed_batches(store))))
        bad = find_damaged(store, parts)
        if bad and not skip_damaged:
            names = ", ".join(d.path for d in bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
            raise UserError(
                f"{path}: {len(bad)} damaged Parquet file(s) ({bad[0].reason}): {names}; "
                "rerun with --skip-damaged to build the corpus without them"
            )
        found.damaged += [DamagedFile(f"{path.rstrip('/')}/{d.path}", d.reason, d.rows) for d in bad]
        stamps = {
            store.uri(p): (length, mtime) for p, length, mtime in parts if p not in {d.path for d in bad}
        }
        if stamps:
            found.tables.append(Table(index, path, store.uri(), list(stamps), stamps))
        elif method is None or any(p.startswith(f"method={method}/") for p, _l, _m in parts):
            raise UserError(f"{path}: no readable Parquet file")
    return found


def extraction_of(spark, paths: Sequence[str]) -> list[list[dict[str, Any] | None]]:
    """Per table, what extracted its batches (:func:`..outputs.table.extraction_records`: each
    distinct record once; None for batches written before contentx recorded it); [] for a path
    that cannot be read now."""
    out = []
    for path in paths:
        try:
            out.append(extraction_records(store_of(spark, path)))
        except Exception:  # noqa: BLE001 (a table read a moment ago: the card says "not recorded")
            out.append([])
    return out


def methods_in(spark, inputs: list[str]) -> list[str]:
    """The methods (partition directories) of the tables: for the "method not in the tables" line."""
    found = set()
    for path in inputs:
        found.update(p[len("method=") :] for p in store_of(spark, path).list() if p.startswith("method="))
    return sorted(found)


@dataclass
class EarlierCorpus:
    path: str
    documents: object  # DataFrame (text_hash[, bands])
    minhash: dict | None  # the MinHash parameters its bands were written with; None: no bands


def read_against(spark, paths: list[str]) -> list[EarlierCorpus]:
    """The earlier corpora of an incremental build; UserError when one is not a finished corpus."""
    corpora = []
    for path in paths:
        store = _store(spark, path, "--against", "corpus")
        report = None
        if store.exists("_report.json"):
            try:
                report = json.loads(store.read_text("_report.json"))
            except (ValueError, UnicodeDecodeError):
                report = None
        finished = store.exists(SUCCESS) or (report is not None and report.get("format", 1) < CORPUS_FORMAT)
        if not store.exists("documents") or report is None and not store.exists(SUCCESS):
            raise UserError(
                f"--against {path} is not a corpus (no documents/ and _report.json of contentx corpus)"
            )
        if not finished:
            raise UserError(
                f"--against {path} is not finished (no {SUCCESS}): its build is running or was killed"
            )
        df = spark.read.parquet(store.uri("documents"))
        if "text_hash" not in df.columns:
            raise UserError(f"--against {path} is not a corpus (its documents have no text_hash)")
        minhash = (report or {}).get("minhash") if "bands" in df.columns else None
        columns = ["text_hash", "bands"] if minhash else ["text_hash"]
        corpora.append(EarlierCorpus(path, df.select(*columns), minhash))
    return corpora
