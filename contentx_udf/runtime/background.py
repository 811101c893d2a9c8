"""Spark actions run from a background thread of the driver, so that their jobs overlap the main
thread's.

After the corpus job's first pass most of its jobs are small: one or two tasks, then the driver
plans the next job, so one of the two cores is idle about half the time (Spark's event log of a
100,000-document build: 1.2 cores busy on average, no task running for a third of the time).
A job that the main thread's next steps do not read (the sensitivity table, the ``--signals``
table) is started from another thread and fills those gaps; Spark's scheduler runs the jobs of
several threads side by side (``SparkContext`` is thread-safe; PySpark pins each Python thread to
a JVM thread, and :func:`pyspark.inheritable_thread_target` carries the job's local properties
over).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def start(spark, action: Callable[[], T], name: str) -> Future:
    """``action()`` (Spark jobs and all) run in a daemon thread named ``name`` with the local
    properties and tags of ``spark``'s current thread (``spark`` None: a thread that runs no
    Spark job); its result, or the exception it raised, is the returned future's."""
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(action())
        except BaseException as exc:  # re-raised by result() in the thread that waits
            future.set_exception(exc)

    target = run
    if spark is not None:
        from pyspark import inheritable_thread_target

        target = inheritable_thread_target(spark)(run)
    threading.Thread(target=target, name=name, daemon=True).start()
    return future


def settle(futures: Iterable[Future | None]) -> None:
    """Wait for every future to finish, whatever each gives: called before an error leaves the
    job, so that no background job still writes into a staging directory the error path deletes."""
    for future in futures:
        if future is not None:
            try:
                future.exception()
            except BaseException:  # noqa: S110  (cancelled: nothing runs any more)
                pass
