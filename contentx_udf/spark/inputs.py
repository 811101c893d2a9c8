"""Input expansion (files, directories, globs, URLs, Common Crawl listings) and task planning."""

from __future__ import annotations

import glob
import gzip
import os
import re
from collections.abc import Sequence

from ..errors import UserError
from ..runtime.store import is_remote, is_url, local_path

_CC_PATH_RE = re.compile(r"crawl-data/(CC-MAIN-\d{4}-\d{2})/segments/([^/]+)/")


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
    if is_url(base):
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
                if is_url(rel):
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


#: A piece of an input file in a task: ``(file index, start, end)``, byte offsets; ``end`` -1: to the
#: end of the file (a whole file is ``(i, 0, -1)``).
Piece = tuple[int, int, int]


def plan_tasks(
    sizes: Sequence[int | None],
    min_tasks: int,
    max_task_bytes: int,
    open_cost: int,
    slots: int = 1,
    splittable: Sequence[bool] | None = None,
    min_piece: int = 0,
) -> list[list[Piece]]:
    """Group input files (by index) into Spark tasks, as Spark's own file sources do.

    A task costs tens of milliseconds of scheduling and Python-worker round trips, as much as
    extracting a few dozen pages: small files are packed together, up to ``max_task_bytes``
    per task (``spark.sql.files.maxPartitionBytes``, each file counted with ``open_cost``
    more, ``spark.sql.files.openCostInBytes``), while there are at least ``min_tasks``
    tasks so that every core gets work.  Files of unknown size (remote inputs) count as a
    full task: a Common Crawl WARC (~1 GB) is one task.  The number of tasks is rounded up to
    a multiple of ``slots`` (the cores running tasks at once), so that the last wave of tasks
    keeps every core busy.  Files that cannot be cut go first, largest first, to the least
    loaded task (LPT).

    Files marked ``splittable`` (local gzip WARCs: :mod:`contentx_udf.warc.split`) are then
    poured into the tasks, largest first, each into the least loaded task up to an equal share
    of the bytes, and cut where a task is full (McNaughton's wrap-around rule for preemptive
    scheduling), in pieces of at least ``min_piece`` bytes (0: no file is cut): 11 equal files
    on 2 cores no longer run 6 on one core and 5 on the other, and one large file gets every
    core.  The tasks are returned largest first, their pieces in file order.
    """
    import heapq

    if not sizes:
        return []
    weights = [max_task_bytes if s is None else s + open_cost for s in sizes]
    cut = [
        bool(min_piece) and splittable is not None and splittable[i] and s is not None and s >= 2 * min_piece
        for i, s in enumerate(sizes)
    ]
    most = sum(1 + (sizes[i] // min_piece - 1 if cut[i] else 0) for i in range(len(sizes)))  # type: ignore[operator]
    count = max(min_tasks, -(-sum(weights) // max_task_bytes))
    count = -(-count // max(1, slots)) * max(1, slots)
    count = max(1, min(count, most))
    tasks: list[list[Piece]] = [[] for _ in range(count)]
    heap = [(0, k) for k in range(count)]  # (load, task): the least loaded first
    for i in sorted((i for i in range(len(sizes)) if not cut[i]), key=lambda i: -weights[i]):
        load, k = heapq.heappop(heap)
        tasks[k].append((i, 0, -1))
        heapq.heappush(heap, (load + weights[i], k))
    share = -(-sum(weights) // count)
    for i in sorted((i for i in range(len(sizes)) if cut[i]), key=lambda i: -weights[i]):
        size, weight, start = sizes[i], weights[i], 0
        assert size is not None
        while True:
            load, k = heapq.heappop(heap)
            rest = size - start
            room = (share - load) * size // weight  # bytes of this file that fill task k
            if room >= rest or room < min_piece or rest - room < min_piece:
                tasks[k].append((i, start, -1))
                heapq.heappush(heap, (load + rest * weight // size, k))
                break
            tasks[k].append((i, start, start + room))
            heapq.heappush(heap, (load + room * weight // size, k))
            start += room
    loads = {k: load for load, k in heap}
    order = sorted(range(count), key=lambda k: -loads[k])
    return [sorted(tasks[k]) for k in order if tasks[k]]


def _input_size(location: str) -> int | None:
    if is_remote(location):
        return None
    try:
        return os.path.getsize(local_path(location))
    except OSError:
        return None  # reported by the task that tries to read it


#: A task's pieces of input files: ``(location, warc_filename, file_index, start, end)`` (:data:`Piece`).
TaskFiles = list[tuple[str, str, int, int, int]]


def input_tasks(
    spark, files: list[tuple[str, str]], num_partitions: int | None, min_piece: int = 0
) -> list[TaskFiles]:
    """The Spark tasks of ``files``: each task's pieces ``(location, warc_filename, file_index,
    start, end)``, planned by :func:`plan_tasks` (``num_partitions`` sets the number of tasks
    instead).  ``min_piece`` > 0: local gzip WARCs may be cut in pieces of at least that many
    bytes (:func:`_splittable`)."""
    conf = spark.conf
    slots = spark.sparkContext.defaultParallelism
    if num_partitions:
        min_tasks, max_bytes, slots = num_partitions, 1 << 62, 1
    else:
        min_tasks = 2 * slots
        max_bytes = _conf_bytes(spark, conf.get("spark.sql.files.maxPartitionBytes", "128m"))
    open_cost = _conf_bytes(spark, conf.get("spark.sql.files.openCostInBytes", "4m"))
    sizes = [_input_size(loc) for loc, _name in files]
    splittable = [
        bool(min_piece) and size is not None and size >= 2 * min_piece and _splittable(loc)
        for (loc, _name), size in zip(files, sizes, strict=True)
    ]
    tasks = plan_tasks(sizes, min_tasks, max_bytes, open_cost, slots, splittable, min_piece)
    return [[(files[i][0], files[i][1], i, start, end) for i, start, end in task] for task in tasks]


def _splittable(location: str) -> bool:
    """A local gzip WARC whose records can be read in pieces (:func:`..warc.split.splittable`)."""
    from ..warc.split import splittable

    try:
        with open(local_path(location), "rb") as stream:
            return splittable(stream)
    except OSError:
        return False  # (reported by the task that reads it)


def task_frame(spark, count: int):
    """One row per task (``id`` 0 .. count-1, one per partition), made in the JVM: the Python
    worker of a task maps its id to its files (:func:`files_of_tasks`).  A DataFrame of the file
    rows themselves needs a Python RDD, i.e. a second Python worker per task that pickles the
    rows to the JVM before they are turned into Arrow for the worker that reads them."""
    return spark.range(0, count, 1, max(1, count))


def files_of_tasks(fn, tasks: list[TaskFiles]):
    """Wrap a ``mapInArrow`` function of file batches (``location``, ``warc_filename``,
    ``file_index``, ``start``, ``end``: :data:`TaskFiles`) into one of :func:`task_frame`'s batches
    of task ids."""

    def run(batches):
        import pyarrow as pa

        def file_batches():
            for batch in batches:
                for k in batch.column(0).to_pylist():
                    columns = list(zip(*tasks[k], strict=True)) if tasks[k] else [()] * 5
                    yield pa.RecordBatch.from_pydict(
                        {
                            "location": pa.array(columns[0], pa.string()),
                            "warc_filename": pa.array(columns[1], pa.string()),
                            "file_index": pa.array(columns[2], pa.int32()),
                            "start": pa.array(columns[3], pa.int64()),
                            "end": pa.array(columns[4], pa.int64()),
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
