"""The driver's progress line while a batch runs: files done / total, every few seconds.

Spark's console progress bar counts the tasks of a stage, and a task holds several small
files or one large Common Crawl WARC; on a cluster its bar may not show at all.  The job
counts files instead: each task adds the number of its input files to an accumulator when
it finishes (Spark merges accumulator updates on task completion, from successful tasks), and
a driver thread prints ``contentx: files 12/40 done, 95 s`` to stderr every ``interval``
seconds.  A run shorter than the interval prints nothing.  The thread reads only the
accumulator, which lives in the Python driver: a py4j call from it (``statusTracker()``)
stalled until the running job ended under ``spark-submit``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO


def count_files(fn: Callable[[Iterator[Any]], Iterator[Any]], accumulator) -> Callable:
    """Wrap a ``mapInArrow`` partition function: add its input rows (files) to ``accumulator``
    once the partition is done."""

    def counted(batches):
        seen = 0

        def inputs():
            nonlocal seen
            for batch in batches:
                if "end" in batch.schema.names:  # (pieces of a file: the last one counts it)
                    seen += sum(1 for end in batch.column("end").to_pylist() if end < 0)
                else:
                    seen += batch.num_rows
                yield batch

        yield from fn(inputs())
        accumulator.add(seen)

    return counted


class Progress:
    """``with Progress(spark, total, interval) as p: ... count_files(fn, p.files) ...``"""

    def __init__(self, spark, total_files: int, interval: float, out: TextIO | None = None):
        self.sc = spark.sparkContext
        self.total = total_files
        self.interval = interval
        self.out = out
        self.files = self.sc.accumulator(0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name="contentx-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def line(self) -> str:
        files = min(int(self.files.value), self.total)
        return f"contentx: files {files}/{self.total} done, {time.monotonic() - self._started:.0f} s"

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            print(self.line(), file=self.out or sys.stderr, flush=True)
