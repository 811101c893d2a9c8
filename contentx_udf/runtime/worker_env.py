"""Per-process set-up of the Python workers (both jobs'): imports no driver code, so a worker loads
none of the driver's modules."""

from __future__ import annotations

import gc
import os


def prepare_worker(memory_mb: int = 0) -> None:
    """Per-task set-up in a Python worker (idempotent).

    ``memory_mb`` > 0 caps the worker's address space (``RLIMIT_AS``), so a pathological
    page fails its own row with ``MemoryError`` instead of taking the machine down.  This is
    what ``spark.executor.pyspark.memory`` does, without its messages on stderr.
    """
    # Lexbor and numpy are single-threaded here; keep BLAS from oversubscribing the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if memory_mb > 0:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if soft == resource.RLIM_INFINITY or soft > limit:
                new_hard = hard if hard != resource.RLIM_INFINITY and hard < limit else limit
                resource.setrlimit(resource.RLIMIT_AS, (min(limit, new_hard), new_hard))
        except (ImportError, ValueError, OSError):
            pass  # not supported on this platform: run unbounded


#: Set once this process has frozen its heap (:func:`freeze_long_lived`).
_frozen = False


def freeze_long_lived() -> bool:
    """Once per Python worker, after its first task: collect, then move every surviving object
    to the garbage collector's permanent generation (``gc.freeze``, Python 3.7+).  Returns True
    the one time it does so.

    PySpark's daemon runs a full ``gc.collect()`` in the worker after every task (pyspark 4.x,
    ``daemon.py``, the worker loop under ``SPARK_REUSE_WORKER``), and a full collection walks
    every tracked object: the modules of pyspark, pandas, pyarrow and ours, the loaded models,
    about 90,000 objects, 30-55 ms of CPU per task measured on the 2-core machine.  The survivors
    of the first task live as long as the worker, so later collections skip them; objects they
    stop referencing are still freed by their reference count.  What the first task leaves alive
    and only later drops inside a reference cycle (its deserialized function, its file list) is
    never collected: a one-time cost, bounded by one task's set-up.  The same idea as the
    ``gc.freeze`` that CPython's documentation gives for pre-fork servers."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.collect()
    gc.freeze()
    return True
