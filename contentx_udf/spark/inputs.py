"""Input expansion (files, directories, globs, URLs, Common Crawl listings) and task planning."""

from __future__ import annotations

import glob
import gzip
import os
import re
from collections.abc import Sequence

from ..errors import UserError

_CC_PATH_RE = re.compile(r"crawl-data/(CC-MAIN-\d{4}-\d{2})/segments/([^/]+)/")


def _is_url(path: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path))


def is_remote(path: str) -> bool:
    """A URL other than ``file://`` (https, s3, s3a, hdfs, ...)."""
    return _is_url(path) and not path.startswith("file://")


def local_path(path: str) -> str:
    """A local path or ``file://`` URL as a local path."""
    return path[len("file://") :] if path.startswith("file://") else path


def _is_listing(path: str) -> bool:
    return path.endswith(".paths") or path.endswith(".paths.gz")


def _read_listing(path: str) -> list[str]:
    if is_remote(path):
        from ..warc.inputs import open_input

        try:
            with open_input(path) as fh:
                data = fh.read()
            if path.endswith(".gz"):
                data = gzip.decompress(data)
            text = data.decode("utf-8")
        except (OSError, ValueError, EOFError) as exc:  # missing, denied, no boto3, not gzip/UTF-8
            raise UserError(f"cannot read input listing {path}: {exc}") from None
    else:
        local = local_path(path)
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
        if is_remote(item):
            found.append((item, item))
            continue
        local = local_path(item)
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


def plan_tasks(
    sizes: Sequence[int | None], min_tasks: int, max_task_bytes: int, open_cost: int, slots: int = 1
) -> list[list[int]]:
    """Group input files (by index) into Spark tasks, as Spark's own file sources do.

    A task costs tens of milliseconds of scheduling and Python-worker round trips, as much as
    extracting a few dozen pages: small files are packed together, up to ``max_task_bytes``
    per task (``spark.sql.files.maxPartitionBytes``, each file counted with ``open_cost``
    more, ``spark.sql.files.openCostInBytes``), while there are at least ``min_tasks``
    tasks so that every core gets work.  Files of unknown size (remote inputs) count as a
    full task: a Common Crawl WARC (~1 GB) is one task.  The number of tasks is rounded up to
    a multiple of ``slots`` (the cores running tasks at once), so that the last wave of tasks
    keeps every core busy: 55 files in 5 equal tasks on 2 cores run in 3 waves of 11 files
    (the third on one core), in 6 tasks in 28 and 27 files per core.  Files go largest first
    to the least loaded task (LPT), and the tasks are returned largest first.
    """
    if not sizes:
        return []
    weights = [max_task_bytes if s is None else s + open_cost for s in sizes]
    count = max(min_tasks, -(-sum(weights) // max_task_bytes))
    count = -(-count // max(1, slots)) * max(1, slots)
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
    if is_remote(location):
        return None
    try:
        return os.path.getsize(local_path(location))
    except OSError:
        return None  # reported by the task that tries to read it


#: A task's files: ``(location, warc_filename, file_index)``.
TaskFiles = list[tuple[str, str, int]]


def input_tasks(spark, files: list[tuple[str, str]], num_partitions: int | None) -> list[TaskFiles]:
    """The Spark tasks of ``files``: each task's ``(location, warc_filename, file_index)``,
    planned by :func:`plan_tasks` (``num_partitions`` sets the number of tasks instead)."""
    conf = spark.conf
    slots = spark.sparkContext.defaultParallelism
    if num_partitions:
        min_tasks, max_bytes, slots = num_partitions, 1 << 62, 1
    else:
        min_tasks = 2 * slots
        max_bytes = _conf_bytes(spark, conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    open_cost = _conf_bytes(spark, conf.get("spark.sql.files.openCostInBytes", "4m"))
    tasks = plan_tasks([_input_size(loc) for loc, _name in files], min_tasks, max_bytes, open_cost, slots)
    return [[(files[i][0], files[i][1], i) for i in task] for task in tasks]


def task_frame(spark, count: int):
    """One row per task (``id`` 0 .. count-1, one per partition), made in the JVM: the Python
    worker of a task maps its id to its files (:func:`files_of_tasks`).  A DataFrame of the file
    rows themselves needs a Python RDD, i.e. a second Python worker per task that pickles the
    rows to the JVM before they are turned into Arrow for the worker that reads them."""
    return spark.range(0, count, 1, max(1, count))


def files_of_tasks(fn, tasks: list[TaskFiles]):
    """Wrap a ``mapInArrow`` function of file batches (``location``, ``warc_filename``,
    ``file_index``) into one of :func:`task_frame`'s batches of task ids."""

    def run(batches):
        import pyarrow as pa

        def file_batches():
            for batch in batches:
                for k in batch.column(0).to_pylist():
                    locations, names, indexes = zip(*tasks[k], strict=True) if tasks[k] else ((), (), ())
                    yield pa.RecordBatch.from_pydict(
                        {
                            "location": pa.array(locations, pa.string()),
                            "warc_filename": pa.array(names, pa.string()),
                            "file_index": pa.array(indexes, pa.int32()),
                        }
                    )

        yield from fn(file_batches())

    return run


def _conf_bytes(spark, value: str) -> int:
    """A Spark size setting ("128m", "4194304", "1g") in bytes, parsed by Spark itself."""
    try:
        return int(spark._jvm.org.apache.spark.network.util.JavaUtils.byteStringAsBytes(str(value)))
    except Exception as exc:  # py4j carries Java's NumberFormatException
        raise UserError(f"not a size: {value!r}") from exc
