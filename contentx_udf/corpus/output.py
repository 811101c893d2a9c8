"""The corpus's output protocol (``contentx corpus`` and ``select``): a run writes under
``DIR/_staging/<run>/`` (:func:`new_run_dir`; its Spark checkpoints there too, :func:`checkpointer`),
and :func:`commit` moves the documents (and signals) into place, writes the report, then
``_SUCCESS`` last; :func:`prepare_output` refuses what must not be replaced and removes what a
killed run left staged.  A run killed at any point leaves no ``_SUCCESS``."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import Future
from typing import Any

from ..errors import UserError
from ..runtime.store import Store, check_owned
from .card import README, card
from .config import CorpusConfig
from .report import write_report
from .tables import CORPUS_FORMAT, SUCCESS, open_store

#: The staging directory of the runs, under the output.
STAGING = "_staging"


def prepare_output(spark, config: CorpusConfig) -> Store:
    """The output's store.  Refuses an output that is an input or an earlier corpus, that exists
    without ``--overwrite``, or that holds anything contentx did not write (:func:`check_owned`);
    removes what killed runs left staged."""
    store = open_store(spark, config.output, "--output", "written")
    for path in [*config.inputs, *config.against]:
        if open_store(spark, path, "--input" if path in config.inputs else "--against").uri() == store.uri():
            raise UserError(f"--output {config.output} is also an input; write the corpus elsewhere")
    if store.is_file():
        raise UserError(f"--output {config.output} is a file")
    entries = store.list()
    if entries and not config.overwrite:
        raise UserError(f"--output {config.output} exists and is not empty; pass --overwrite to replace it")
    if entries:
        check_owned(store, config.output)
    if STAGING in entries:
        store.delete(STAGING)  # a killed run's staging (the old corpus itself stays until commit)
    return store


def new_run_dir() -> tuple[str, ...]:
    """A run's staging directory (relative to the output): ``_staging/<UTC time>-<8 hex>``."""
    return (STAGING, time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8])


def checkpointer(spark, store: Store, run_dir: tuple[str, ...]):
    """Reliable checkpoints under the run's staging directory (on the output's filesystem)."""
    spark.sparkContext.setCheckpointDir(store.uri(*run_dir, "checkpoints"))
    return lambda df: df.checkpoint(eager=True)


def commit(
    store: Store,
    run_dir: tuple[str, ...],
    report: dict[str, Any],
    signals: bool = False,
    plots: Future | None = None,
) -> dict[str, Any]:
    """Move the staged documents into place (with ``signals``: the signals, and the staged first
    pass as ``texts/``), write the report (``plots``: drawn already, :func:`.report.start_plots`),
    then ``_SUCCESS`` (last).  What ``--overwrite`` replaces (an older corpus or table: all of it
    contentx's own, checked again now) is removed first, ``_SUCCESS`` first."""
    check_owned(store, store.output)
    old = [entry for entry in store.list() if entry != STAGING]
    for entry in sorted(old, key=lambda e: e != SUCCESS):  # from here on the old output is not whole
        store.delete(entry)
    store.rename((*run_dir, "documents"), ("documents",))
    if signals:
        store.rename((*run_dir, "signals"), ("signals",))
        store.rename((*run_dir, "pass"), ("texts",))  # every measured document's text, as if kept
    report = write_report(report, store, plots)
    store.write_text(card(report, "documents/*.parquet"), README)  # the dataset card (.card)
    store.write_text(
        json.dumps({"format": CORPUS_FORMAT, "kept": report["kept"], "finished": report["finished"]}),
        SUCCESS,
    )
    store.delete(STAGING)
    return report
