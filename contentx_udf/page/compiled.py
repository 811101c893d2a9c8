"""The compiled passes (:mod:`contentx_udf.page._compiled`, Cython, built at install) and whether
they run.

They replace, with identical results, the Python/numpy code of the DOM walk into arrays
(:func:`~contentx_udf.page.document.flatten_dom`), the class/id keyword look-up of ``combined``
(:func:`~contentx_udf.methods.block_features.block_features`) and the tree ensembles' inference
(:class:`~contentx_udf.methods.block_model.TreeEnsemble`).  Lexbor is reached through the
accessor functions selectolax's extension exports; :func:`status` says why the compiled passes
are off when they are (extension not built, selectolax without those functions) — the Python code
then runs, slower, and the job's summary says so.  ``CONTENTX_PURE_PYTHON=1`` turns them off.
"""

from __future__ import annotations

from types import ModuleType

from ..extensions import pure_python

_module: ModuleType | None = None
_reason = ""
#: What the Python code calls (an extension built from an older .pyx lacks some).
_FUNCTIONS = (
    "bind", "walk", "walk_texts", "attribute_keys", "clear_key_cache", "set_keywords", "tree_scores",
    "or_down", "nearest_marked", "within", "block_texts", "word_hits", "text_shape", "text_counts",
    "nesting_within",
    "remove_unseen", "find_all", "key_groups", "repeated_siblings", "block_columns", "smooth_columns",
    "window_columns", "cetd_counts", "children_sum", "subtree_argmax",
    "coreex_pass", "density_sum_select", "utf8_check", "block_runs", "non_space_chars",
    "lineage", "lineage_columns", "best_set_share", "composite_terms", "composite_finish", "density_sums",
    "template_smooth",
    "node_views", "ancestors_marked", "first_text_of", "text_repeats", "lower_texts", "noscript_tags",
)  # fmt: skip


def _load() -> None:
    global _module, _reason
    if pure_python():
        _reason = "turned off by CONTENTX_PURE_PYTHON"
        return
    try:
        import selectolax.lexbor

        from . import _compiled
    except ImportError as exc:
        _reason = f"extension not built ({exc}): reinstall contentx with a C compiler"
        return
    missing = [name for name in _FUNCTIONS if not hasattr(_compiled, name)]
    if missing:
        _reason = f"extension out of date (no {', '.join(missing)}): reinstall contentx"
        return
    try:
        _compiled.bind(selectolax.lexbor.__file__)
    except OSError as exc:
        _reason = f"selectolax not usable from compiled code ({exc})"
        return
    _module = _compiled


_load()


def module() -> ModuleType | None:
    """The compiled module when the compiled passes are on, else None."""
    return _module


def set_enabled(enabled: bool) -> None:
    """Turn the compiled passes on or off in this process (tests compare both paths)."""
    global _module, _reason
    if enabled:
        _reason = ""
        _load()
    else:
        _module, _reason = None, "turned off by set_enabled(False)"


def status() -> str:
    """``"compiled"`` or ``"pure Python (<why>)"``."""
    return "compiled" if _module is not None else f"pure Python ({_reason})"
