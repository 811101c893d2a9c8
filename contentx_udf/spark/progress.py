"""The driver's progress line while a batch runs: files and records done, the rate, the time left.

Spark's console progress bar counts the tasks of a stage, and a task holds several small
files, one file, or a piece of a large Common Crawl WARC; on a cluster its bar may not show at
all (and contentx turns it off: :mod:`.console`).  The job counts its own units instead: each task
adds, when it finishes, the files it completed, the WARC records it read and the share of the
input it covered (a piece of a file counts its share of the file's bytes) to three accumulators
(Spark merges accumulator updates on task completion, from successful tasks; no per-record data
reaches the driver).  A driver thread turns them into one line (:func:`progress_line`)::

    contentx run: files 12/40 done, records 95,310 (1,204/s), 1 min 19 s, about 3 min 05 s left

On a terminal the line is rewritten in place every second (``\\r``) and ended when the batch is
done; otherwise (a log file, a pipe) it is printed every ``interval`` seconds and once at the end.
The thread reads only the accumulators, which live in the Python driver: a py4j call from it
(``statusTracker()``) stalled until the running job ended under ``spark-submit``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TextIO

from ..runtime.console import LiveLine, format_duration, format_rate

#: How often the line is rewritten on a terminal (seconds).
TERMINAL_INTERVAL = 1.0


class Counters(NamedTuple):
    """The accumulators the tasks add to: whole ``files`` done, WARC ``records`` read, ``work``
    (files' worth of input covered, pieces as fractions)."""

    files: Any
    records: Any
    work: Any


def time_left(elapsed: float, done: float, total: float) -> float | None:
    """Seconds left at the pace so far (``done`` of ``total`` units in ``elapsed`` s); None before
    any unit is done."""
    if done <= 0 or total <= 0:
        return None
    return elapsed * max(0.0, total - done) / done


def progress_line(
    name: str, files: int, total: int, records: int, elapsed: float, work: float | None = None
) -> str:
    """The line: files done of ``total``, ``records`` read and their rate, the time so far and
    the estimated time left (from ``work``, the files' worth of input covered; ``files`` when None)."""
    files = min(files, total)
    rate = format_rate(records / elapsed) if elapsed > 0 else "-"
    line = f"{name}: files {files}/{total} done, records {records:,} ({rate}), {format_duration(elapsed)}"
    if files < total:
        left = time_left(elapsed, files if work is None else min(work, total), total)
        if left is not None:
            line += f", about {format_duration(left)} left"
    return line


def _piece_share(location: str, start: int, end: int) -> float:
    """The share of its file a piece ``[start, end)`` covers (``end`` -1: to the file's end)."""
    from .inputs import local_path

    try:
        size = os.path.getsize(local_path(location))
    except OSError:
        return 1.0 if end < 0 else 0.0
    if size <= 0:
        return 1.0 if end < 0 else 0.0
    return max(0.0, min(size if end < 0 else end, size) - start) / size


def records_read(batch) -> int:
    """WARC records read, from a batch of the job's output: the ``records.*`` scores of its
    statistics rows (all rows with the workers' writer; those of method ``_files`` with Spark's)."""
    import pyarrow.compute as pc

    from ..outputs.table import FILES_METHOD

    names = batch.schema.names
    if "scores" not in names or batch.num_rows == 0:
        return 0
    scores = batch.column("scores")
    if "method" in names:
        scores = scores.filter(pc.equal(batch.column("method"), FILES_METHOD))
    offsets = scores.offsets  # (of these rows: ``keys`` and ``items`` are the whole children)
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    if last <= first:
        return 0
    keys, values = scores.keys.slice(first, last - first), scores.items.slice(first, last - first)
    total = pc.sum(values.filter(pc.starts_with(keys, "records.")))
    return int(total.as_py() or 0)


def count_files(fn: Callable[[Iterator[Any]], Iterator[Any]], counters: Counters) -> Callable:
    """Wrap a ``mapInArrow`` partition function: once the partition is done, add its input files
    (the last piece of a file counts it), their share of the input and the records read to
    ``counters``."""

    def counted(batches):
        files, work, records = 0, 0.0, 0

        def inputs():
            nonlocal files, work
            for batch in batches:
                if "end" in batch.schema.names:
                    data = batch.select(["location", "start", "end"]).to_pydict()
                    for location, start, end in zip(
                        data["location"], data["start"], data["end"], strict=True
                    ):
                        files += end < 0
                        work += 1.0 if start <= 0 and end < 0 else _piece_share(location, start, end)
                else:
                    files += batch.num_rows
                    work += batch.num_rows
                yield batch

        for out in fn(inputs()):
            records += records_read(out)
            yield out
        counters.files.add(files)
        counters.work.add(work)
        counters.records.add(records)

    return counted


class Progress:
    """``with Progress(spark, total, interval) as p: ... count_files(fn, p.counters) ...``

    ``interval`` 0: no line at all.  ``terminal``: rewrite one line in place (default: when
    ``out`` is a terminal and Spark's own stage bars are off)."""

    def __init__(
        self,
        spark,
        total_files: int,
        interval: float,
        out: TextIO | None = None,
        name: str = "contentx run",
        terminal: bool | None = None,
    ):
        sc = spark.sparkContext
        self.total = total_files
        self.interval = interval
        self.out = out
        self.name = name
        self.counters = Counters(sc.accumulator(0), sc.accumulator(0), sc.accumulator(0.0))
        self.terminal = terminal
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        if self.terminal is None:
            stream = self._stream()
            self.terminal = bool(getattr(stream, "isatty", lambda: False)())
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name="contentx-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.interval <= 0:
            return
        if self.terminal:
            self._show(self.line(), end="\n")  # (the last state stays on screen; an error starts below)
        elif exc_type is None:
            print(self.line(), file=self._stream(), flush=True)

    def line(self) -> str:
        c = self.counters
        elapsed = time.monotonic() - self._started
        return progress_line(
            self.name, int(c.files.value), self.total, int(c.records.value), elapsed, c.work.value
        )

    def _stream(self) -> TextIO:
        return self.out or sys.stderr

    def _show(self, line: str, end: str = "") -> None:
        LiveLine.show(self._stream(), line, end)

    def _loop(self) -> None:
        if self.terminal:
            while not self._stop.wait(TERMINAL_INTERVAL):
                self._show(self.line())
            return
        while not self._stop.wait(self.interval):
            print(self.line(), file=self._stream(), flush=True)
