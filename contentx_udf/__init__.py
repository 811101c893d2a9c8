"""contentx_udf: main-content extraction from HTML (CETR, CCB, CoreEx, CETD, combined) and evaluation.

Public API::

    from contentx_udf import extract, extract_all, METHODS, Extraction
    result = extract(html_bytes, content_type="text/html; charset=utf-8")  # DEFAULT_METHOD
    result.text, result.title, result.scores, result.status, result.error

    from contentx_udf import quality_scores, QualityModel
    scores = quality_scores(texts, "model.bin", label="__label__hq")  # fastText's probabilities

Every extractor is a pure function of a parsed :class:`~contentx_udf.page.document.Document`;
nothing here needs Spark.  The Spark job lives in :mod:`contentx_udf.spark`.

The names are imported when first used (PEP 562), so that importing a submodule does not import
numpy: PySpark's daemon (:mod:`contentx_udf.spark.daemon`) must start no thread before it forks,
and numpy's BLAS starts one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Extraction, MethodResult, extract, extract_all
    from .settings import DEFAULT_METHOD, METHODS
    from .text.classifier import QualityModel, quality_scores

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "Extraction",
    "MethodResult",
    "QualityModel",
    "extract",
    "extract_all",
    "quality_scores",
]
__version__ = "0.1.0"

#: Each public name and the submodule it lives in.
_HOMES = {
    "Extraction": "core",
    "MethodResult": "core",
    "extract": "core",
    "extract_all": "core",
    "DEFAULT_METHOD": "settings",
    "METHODS": "settings",
    "QualityModel": "text.classifier",
    "quality_scores": "text.classifier",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
