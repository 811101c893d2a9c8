"""The compiled extensions' common switch and loader.

Every compiled pass (``page/_compiled``, ``text/_lid``, ``text/_quality``, ``corpus/_lines``;
Cython, built at install) has numpy or Python code that gives the same results;
``CONTENTX_PURE_PYTHON=1`` (or an extension that was not built) makes that code run instead.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def pure_python() -> bool:
    """Whether ``CONTENTX_PURE_PYTHON`` turns the compiled passes off."""
    return os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0")


def optional_module(name: str) -> ModuleType | None:
    """The compiled module ``name`` (absolute), or None when it is turned off or not built."""
    if pure_python():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
