"""The extraction table's layout (``contentx run``), written by the extraction job and read by the
corpus job, side by side:

* ``DIR/_contentx/staging/<batch>`` (:data:`STAGING`) receives a batch's parts, named
  ``*.parquet.staged`` (:data:`STAGED_SUFFIX`) when the workers write them, so that no glob for
  ``*.parquet`` reads a batch that is not committed (Spark's writer names its files ``*.parquet``);
* :func:`commit_batch` moves them into place (``method=NAME/b<batch>-part-*.parquet``; the batch's
  file statistics, ``method=_files``, to ``DIR/_contentx/files/<batch>/*.pq``) and then writes the
  batch's marker (``DIR/_contentx/batches/<batch>.json``, :data:`MARKERS`): a part is committed
  when its batch's marker exists (:func:`batch_of`, :func:`committed_batches`);
* :func:`prepare_output` removes what an uncommitted batch left behind and tells ``--resume``
  which input files are done.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import UserError
from ..runtime.store import Store, check_owned

MARKERS = ("_contentx", "batches")
FILE_STATS = ("_contentx", "files")
#: The extension of the per-file statistics (Parquet) under :data:`FILE_STATS`: not ``.parquet``,
#: so that a glob over the table (DuckDB's ``read_parquet('DIR/**/*.parquet',
#: hive_partitioning=true)``) finds the table's files only (pyarrow, pandas and Spark leave out
#: ``_contentx/`` by its leading underscore).
STATS_SUFFIX = ".pq"
STAGING = ("_contentx", "staging")
#: Added to the name of a Parquet file staged by contentx's own writers (the workers' parts,
#: :func:`..spark.worker.part_name`, and the driver's batch statistics,
#: :data:`..spark.pieces.FILE_STATS_PART`) and taken off by :func:`commit_batch`: DuckDB's
#: ``**/*.parquet`` descends into ``_contentx/`` (and hidden directories), and would otherwise
#: read the rows of a batch that a killed run left uncommitted.
STAGED_SUFFIX = ".staged"
#: The ``method`` of the per-file statistics rows (``method=_files``), committed to :data:`FILE_STATS`.
FILES_METHOD = "_files"


def committed_batches(store: Store) -> set[str]:
    """The ids of the batches whose marker is written."""
    return {name[: -len(".json")] for name in store.list(*MARKERS) if name.endswith(".json")}


def prepare_output(store: Store, output: str, overwrite: bool, resume: bool) -> set[str]:
    """Check/clean the output location ``output`` (``--overwrite``, ``--resume``); return the input
    files already done (``--resume``)."""
    if store.is_file():
        raise UserError(f"output path is a file, not a directory: {output}")
    if not store.exists() or not store.list():
        return set()
    if not overwrite and not resume:
        raise UserError(
            f"output {output} already exists; pass --resume to add the inputs not yet processed, "
            "or --overwrite to replace it"
        )
    check_owned(store, output)  # --overwrite and --resume alike: only over contentx's own files
    if overwrite:
        store.delete()
        return set()
    # a run stopped in its first batch (killed, or a full disk) has left only its staging area
    if not store.exists(MARKERS[0]) and not store.exists("_summary.json"):
        raise UserError(
            f"output {output} exists but was not written by `contentx run`; refusing to resume into it"
        )
    committed = committed_batches(store)
    done: set[str] = set()
    for batch_id in committed:
        marker = json.loads(store.read_text(*MARKERS, f"{batch_id}.json"))
        done.update(marker["files"])
    # a run killed after moving some part files but before its marker: remove them
    for entry in store.list():
        if entry.startswith("method="):
            for part in store.list(entry):
                batch = batch_of(part)
                if batch is not None and batch not in committed:
                    store.delete(entry, part)
    for batch in store.list(*FILE_STATS):
        if batch not in committed:
            store.delete(*FILE_STATS, batch)
    store.delete(*STAGING)
    return done


def reopen(store: Store) -> None:
    """Before a run adds batches to a finished table: its ``_summary.json`` goes, so that until the
    run writes its own the table reads as unfinished (a killed ``--resume`` leaves no summary of the
    run before it).  A table of the version before batch markers keeps it (it marks the table)."""
    if store.exists(MARKERS[0]):
        store.delete("_summary.json")


def extraction_records(store: Store) -> list[dict[str, Any] | None]:
    """What extracted each committed batch of a table (its marker's ``extraction``; None for a
    batch written before contentx recorded it), each distinct record once, in batch order."""
    found: list[dict[str, Any] | None] = []
    for batch in sorted(committed_batches(store)):
        try:
            record = json.loads(store.read_text(*MARKERS, f"{batch}.json")).get("extraction")
        except (OSError, ValueError):
            record = None
        if record not in found:
            found.append(record)
    return found


def batch_of(part_name: str) -> str | None:
    m = re.match(r"^b(\d{8}T\d{6}-[0-9a-f]{8})-", part_name)
    return m.group(1) if m else None


def commit_batch(
    store: Store,
    batch_id: str,
    names: list[str],
    extraction: dict[str, Any] | None = None,
) -> None:
    """Move the staged parts of a batch into place, names prefixed with the batch id (and
    :data:`STAGED_SUFFIX` taken off), then write
    its marker (the input files ``names``; ``extraction``: what extracted them,
    :func:`..methods.versions.extraction_record`) and remove its staging directory."""
    for entry in store.list(*STAGING, batch_id):
        if not entry.startswith("method="):
            continue
        method = entry[len("method=") :]
        # (the workers' and the driver's files: *.parquet.staged; Spark's writer's: *.parquet)
        parts = {
            p: p.removesuffix(STAGED_SUFFIX)
            for p in store.list(*STAGING, batch_id, entry)
            if p.removesuffix(STAGED_SUFFIX).endswith(".parquet")
        }
        if method == FILES_METHOD:
            store.mkdirs(*FILE_STATS, batch_id)
            for part, name in parts.items():
                stats = name[: -len(".parquet")] + STATS_SUFFIX
                store.rename((*STAGING, batch_id, entry, part), (*FILE_STATS, batch_id, stats))
            continue
        store.mkdirs(entry)
        for part, name in parts.items():
            store.rename((*STAGING, batch_id, entry, part), (entry, f"b{batch_id}-{name}"))
    store.write_text(
        json.dumps(
            {"batch": batch_id, "files": list(names), **({"extraction": extraction} if extraction else {})},
            indent=1,
        ),
        *MARKERS,
        f"{batch_id}.json",
    )
    store.delete(*STAGING, batch_id)
