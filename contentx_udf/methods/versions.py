"""What extracted a table: the contentx version and, per method, the model it ran (the card's
"extraction method and model version", issue 43).

``combined`` runs a learned block model: its file (the shipped ``models/combined.npz`` or the
``model`` parameter's) is named with its SHA-256, and its mode given; the other methods are rules
without a model.  The extraction job writes this record into each batch's commit marker (a table
resumed by another contentx keeps one record per batch) and into ``_summary.json``.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..settings import resolve_params


@lru_cache(maxsize=8)
def file_sha256(path: str) -> str:
    """The SHA-256 of a file, read once per process."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def method_record(method: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """One method's record: ``{"model": NAME, "model_sha256": ..., "mode": ...}`` for ``combined``,
    ``{"model": None}`` for a method without one."""
    if method != "combined":
        return {"model": None}
    from .block_model import SHIPPED_MODEL

    params = resolve_params(method, overrides)
    path = str(params.get("model") or SHIPPED_MODEL)
    shipped = Path(path).resolve() == SHIPPED_MODEL.resolve()
    return {
        "model": "combined.npz (shipped)" if shipped else path,
        "model_sha256": file_sha256(path),
        "mode": params.get("mode"),
    }


def extraction_record(
    version: str, methods, params: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``{"contentx": version, "methods": {NAME: record}}`` of a run of ``methods``."""
    return {
        "contentx": version,
        "methods": {m: method_record(m, (params or {}).get(m)) for m in methods},
    }
