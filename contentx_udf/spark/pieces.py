"""The driver's side of files read in pieces: the pieces' check, their statistics merged.

The task plan cuts local gzip WARCs into pieces (:func:`.inputs.plan_tasks`) and each piece is
read by its own worker from the first record at or after its start (:mod:`..warc.split`).  When
the batch's tasks are done, each split file's pieces must chain: a piece's first record is where
the one before it stopped (``piece.first`` = the previous ``piece.next``, :func:`.worker.piece_scores`).

* They chain: the file's rows are exactly those of reading it whole; its statistics rows become
  one (counts added), so ``_contentx/files`` keeps one row per input file (written by the driver
  with the batch's other statistics rows: :func:`write_file_stats`).
* A piece stopped on damage (``error``): reading the whole file stops there too, so the pieces
  after it are dropped (their part files deleted).
* They do not chain (a record header found inside another record's payload, e.g. a stored
  ``.warc.gz``): the file's pieces are dropped and the file is read again, whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..outputs.table import FILES_METHOD, STAGED_SUFFIX
from .worker import PIECE_KEYS, is_piece, part_name

#: Statistics keys that are not added up over the pieces of a file: the smallest wins.
_MIN_KEYS = ("compiled_passes", "compiled_language_id")


@dataclass
class PieceCheck:
    """What :func:`check_pieces` decided for one batch."""

    #: the statistics rows of the batch: one per input file (split files' rows merged)
    stats: list[dict[str, Any]] = field(default_factory=list)
    #: part files to delete from every ``method=`` directory of the staging area
    drop: list[str] = field(default_factory=list)
    #: the files to read again whole: ``(location, warc_filename, file_index)``
    redo: list[tuple[str, str, int]] = field(default_factory=list)


def chain(pieces: list[tuple[int, int, dict[str, float], str | None]]) -> tuple[bool, int]:
    """Whether the pieces of one file, ``(start, end, scores, error)`` in file order, chain, and how
    many of them count (those up to and including the first that stopped on damage)."""
    expected: int | None = None  # where the next record starts, as the piece before saw it
    for k, (_start, end, scores, error) in enumerate(pieces):
        first, nxt = int(scores["piece.first"]), int(scores["piece.next"])
        if k > 0:
            if expected is None or expected < 0:  # the file ended in an earlier piece
                if first >= 0:
                    return False, k
                continue
            if end >= 0 and expected >= end:  # no record starts in this piece
                if first >= 0:
                    return False, k
                continue
            if first != expected:
                return False, k
        if error:
            return True, k + 1
        expected = nxt
    return True, len(pieces)


def check_pieces(
    stats_rows: Iterable[dict[str, Any]], tasks: list[list[tuple[str, str, int, int, int]]]
) -> PieceCheck:
    """Check the pieces of the split files of a batch (module docstring); ``stats_rows``: the
    workers' statistics rows (``warc_filename``, ``scores``, ``error``), ``tasks``: the plan."""
    pieces_of: dict[str, list[tuple[str, int, int, int]]] = {}
    for task in tasks:
        for location, name, index, start, end in task:
            if is_piece(start, end):
                pieces_of.setdefault(name, []).append((location, index, start, end))
    out = PieceCheck()
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in stats_rows:
        row = {
            "warc_filename": row["warc_filename"],
            "scores": dict(row["scores"] or {}),
            "error": row["error"],
        }
        if row["warc_filename"] in pieces_of and "piece.start" in row["scores"]:
            by_file.setdefault(row["warc_filename"], []).append(row)
        else:
            out.stats.append(row)
    for name, planned in pieces_of.items():
        rows = {int(r["scores"]["piece.start"]): r for r in by_file.get(name, [])}
        planned.sort(key=lambda p: p[2])
        location, index = planned[0][0], planned[0][1]
        parts = [part_name(index, start, end) for _loc, _i, start, end in planned]
        if any(start not in rows for _loc, _i, start, _end in planned):
            raise RuntimeError(f"no output reported for a piece of {name}")  # (cannot happen)
        ordered = [
            (start, end, rows[start]["scores"], rows[start]["error"]) for _l, _i, start, end in planned
        ]
        chains, counted = chain(ordered)
        if not chains:
            out.drop += parts
            out.redo.append((location, name, index))
            continue
        out.drop += parts[counted:]
        out.stats.append(
            merge_stats(name, [rows[start] for start, _end, _scores, _error in ordered[:counted]])
        )
    return out


def merge_stats(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One statistics row of a file from its pieces' rows: counts and seconds added, the first
    error kept, the ``piece.*`` keys left out."""
    total: dict[str, float] = {}
    for row in rows:
        for key, value in row["scores"].items():
            if key in PIECE_KEYS:
                continue
            if key in _MIN_KEYS:
                total[key] = min(total.get(key, value), value)
            else:
                total[key] = total.get(key, 0.0) + value
    error = next((r["error"] for r in rows if r["error"]), None)
    return {"warc_filename": name, "scores": total, "error": error}


def apply_check(staging: str, check: PieceCheck) -> None:
    """Carry out ``check`` in a local staging directory: delete the dropped pieces' part files."""
    drop = set(check.drop)
    for entry in os.listdir(staging) if os.path.isdir(staging) else ():
        if entry.startswith("method="):
            directory = os.path.join(staging, entry)
            for part in set(os.listdir(directory)) & drop:
                os.remove(os.path.join(directory, part))


#: The one statistics file of a batch written by the driver (under ``method=_files``), staged as
#: the workers' parts are (:func:`.worker.part_name`): committed as ``_contentx/files/<batch>/part-00000.pq``.
FILE_STATS_PART = f"part-00000.parquet{STAGED_SUFFIX}"


def write_file_stats(
    staging: str, rows: list[dict[str, Any]], files_schema, compression: str = "zstd"
) -> None:
    """Write a batch's statistics rows (``warc_filename``, ``scores``, ``error``: one per input
    file) as one Parquet file under ``method=_files`` of a local staging directory, with the
    columns the workers would give them (:func:`.worker.stats_row`): one file per batch rather
    than one per input file, written where the rows already are (the driver collects them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .worker import naming_full_disk, rows_to_batch, stats_row

    full = [stats_row(r["warc_filename"], list((r["scores"] or {}).items()), r["error"]) for r in rows]
    directory = os.path.join(staging, f"method={FILES_METHOD}")
    path = os.path.join(directory, FILE_STATS_PART)
    try:
        os.makedirs(directory, exist_ok=True)
        pq.write_table(
            pa.Table.from_batches([rows_to_batch(full, files_schema)]), path, compression=compression
        )
    except OSError as exc:
        named = naming_full_disk(exc, path)
        if named is not None:
            raise named from exc
        raise
