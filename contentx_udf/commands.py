"""The commands that run a Spark job, by name: the one place that names a job's module.

The command line (:mod:`.cli`), the JVM class archive's builder (:mod:`.jvm_archive`) and the
``spark-submit`` entries of ``jobs/`` look a job up here; no lower module names a job's ``main``.
A job's module has ``main(argv) -> int`` and ``build_parser() -> ArgumentParser`` (its options);
it is imported on first use, so ``contentx extract`` and ``evaluate`` never load a job.
A new command: one entry of :data:`JOBS` (and its module).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from types import ModuleType

#: Every job's module by command name.
JOBS: dict[str, str] = {
    "run": "contentx_udf.spark.job",
    "corpus": "contentx_udf.corpus.job",
    "select": "contentx_udf.corpus.select",
    "train-quality": "contentx_udf.corpus.train_quality",
    "export": "contentx_udf.corpus.export",
}


def module_of(name: str) -> ModuleType:
    """The module of job ``name`` (imported now); KeyError for an unknown name."""
    return importlib.import_module(JOBS[name])


def main_of(name: str) -> Callable[[Sequence[str] | None], int]:
    """Job ``name``'s entry point: ``main(argv)`` returning the exit code."""
    return module_of(name).main


def parser_of(name: str) -> argparse.ArgumentParser:
    """Job ``name``'s own argument parser (the manual's command reference renders it)."""
    return module_of(name).build_parser()
