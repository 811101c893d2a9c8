"""The public API: :func:`extract` and :func:`extract_all`.

Every method is a pure function ``(Document, params) -> MethodResult`` in the module of its
algorithm family (:mod:`.methods.cetr`, :mod:`.methods.ccb`, :mod:`.methods.coreex`,
:mod:`.methods.cetd`), found through ``_REGISTRY`` and imported on first use.  This module
decodes and parses the page once (:class:`~contentx_udf.page.document.Document`), runs the
requested methods on it, bounds their time, and turns every failure into a result with
``status = "error"`` — page content never makes these functions raise.  A method that runs
but extracts no text gets ``status = "empty"`` (never ``ok`` with an empty text), decided here
once for every method.  Unknown method
names and bad parameters are caller errors and raise ``ValueError``.
"""

from __future__ import annotations

import _signal
import importlib
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .methods.base import MethodResult
from .page.document import Document, Limits, non_space_chars
from .settings import DEFAULT_METHOD, METHODS, check_method, resolve_params


@dataclass(frozen=True)
class Extraction:
    """The result of one method on one page."""

    text: str
    method: str
    title: str | None = None
    scores: dict[str, float] = field(default_factory=dict)
    #: "ok" (text found), "empty" (the method ran but extracted no text: ``text`` is "" and
    #: ``error`` says so) or "error" (the method failed: ``error`` is the reason).
    status: str = "ok"
    error: str | None = None


#: ``Extraction.error`` of an ``empty`` result: the page has visible text, the method kept none,
#: or the page has no visible text at all.
EMPTY_ERROR = "no text extracted"
EMPTY_PAGE_ERROR = "no text extracted: the page has no visible text"

MethodFn = Callable[[Document, dict[str, Any]], MethodResult]

#: method name -> (module, function) implementing it.
_REGISTRY: dict[str, tuple[str, str]] = {
    "cetr-tm": ("contentx_udf.methods.cetr", "cetr_tm"),
    "cetr-km": ("contentx_udf.methods.cetr", "cetr_km"),
    "cetr": ("contentx_udf.methods.cetr", "cetr_tailored"),
    "cetr-dff": ("contentx_udf.methods.cetr", "cetr_dff"),
    "ccb": ("contentx_udf.methods.ccb", "ccb"),
    "accb": ("contentx_udf.methods.ccb", "accb"),
    "tccb": ("contentx_udf.methods.ccb", "tccb"),
    "coreex": ("contentx_udf.methods.coreex", "coreex"),
    "cetd-ds": ("contentx_udf.methods.cetd", "cetd_ds"),
    "cectd-s": ("contentx_udf.methods.cetd", "cectd_s"),
    "cectd-ds": ("contentx_udf.methods.cetd", "cectd_ds"),
    "combined": ("contentx_udf.methods.combined", "combined"),
}
assert tuple(_REGISTRY) == METHODS


def method_function(method: str) -> MethodFn:
    """The function implementing ``method``."""
    fn = _FUNCTIONS.get(method)
    if fn is None:
        module, name = _REGISTRY[check_method(method)]
        fn = _FUNCTIONS[method] = getattr(importlib.import_module(module), name)
    return fn


_FUNCTIONS: dict[str, MethodFn] = {}


class PageTimeout(Exception):
    """Raised inside a method when its page exceeds the time limit."""


def _raise_timeout(signum, frame):  # noqa: ARG001
    raise PageTimeout()


def _alarm_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


#: ``signal.signal`` without its enum wrapping of the previous handler (a Python handler costs
#: it a raised and caught ``ValueError``): the C function it wraps, same effect.
_set_handler = getattr(_signal, "signal", signal.signal)


@contextmanager
def _alarm_handler(usable: bool) -> Iterator[None]:
    """Install the ``SIGALRM`` handler for the block (the previous one is restored after).

    Installed once per page, the timers of its steps are then one ``setitimer`` each
    (``signal.signal`` costs more than the timer: it wraps handlers in enums).  The
    :class:`PageTimeout` arrives at the next Python bytecode, so C calls are not interrupted:
    every method bounds its C-level work through the page limits instead.
    """
    if not usable:
        yield
        return
    previous = _set_handler(signal.SIGALRM, _raise_timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _set_handler(signal.SIGALRM, previous)


def _limits(params: dict[str, Any]) -> Limits:
    return Limits(max_chars=params["max_chars"], max_nodes=params["max_nodes"], max_depth=params["max_depth"])


def _error(
    method: str, title: str | None, message: str, scores: dict[str, float] | None = None
) -> Extraction:
    return Extraction(text="", method=method, title=title, scores=scores or {}, status="error", error=message)


def _run(doc: Document, method: str, params: dict[str, Any], alarm: bool) -> Extraction:
    """One method on the parsed page; the caller installed the alarm handler when ``alarm``."""
    started = time.perf_counter()
    seconds = params["time_limit"]
    timed = alarm and seconds > 0
    try:
        try:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, seconds)
            result = method_function(method)(doc, params)
            visible = doc.visible_chars
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except PageTimeout:
        return _error(method, doc.title, "timeout", {"time_limit": float(seconds)})
    except (MemoryError, RecursionError) as exc:
        return _error(method, doc.title, f"{type(exc).__name__}: page too large or too deep")
    except Exception as exc:  # a bug on a strange page must not take the job down
        return _error(method, doc.title, f"{type(exc).__name__}: {exc}")
    scores = {k: float(v) for k, v in result.scores.items()}
    scores.update(doc.notes)
    chars = non_space_chars(result.text)
    scores["content_ratio"] = min(1.0, chars / visible) if visible else 0.0
    scores["ms"] = (time.perf_counter() - started) * 1000.0
    if not chars:  # one rule for every method: nothing extracted is not a success
        error = EMPTY_ERROR if visible else EMPTY_PAGE_ERROR
        return Extraction(text="", method=method, title=doc.title, scores=scores, status="empty", error=error)
    return Extraction(text=result.text, method=method, title=doc.title, scores=scores)


def _parse(
    html: str | bytes, content_type: str | None, params: dict[str, Any], alarm: bool, url: str | None
) -> Document:
    seconds = params["time_limit"]
    timed = alarm and seconds > 0
    try:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, seconds)
        return Document.parse(html, content_type=content_type, limits=_limits(params), url=url)
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def extract(
    html: str | bytes,
    method: str = DEFAULT_METHOD,
    *,
    url: str | None = None,
    content_type: str | None = None,
    **params: Any,
) -> Extraction:
    """Extract the main content of one page with one method.

    ``html`` may be bytes (decoded browser-like, see :mod:`.page.decode`; ``content_type`` is the
    HTTP header value, used for its charset) or str.  ``params`` override the method's
    defaults (:data:`contentx_udf.settings.DEFAULTS`).  ``url`` is the page's address (the
    ``combined`` method reads its path; the other methods ignore it).  Never raises on page
    content.
    """
    resolved = resolve_params(method, params)
    return _extract_resolved(html, (method,), {method: resolved}, content_type, url)[method]


def extract_all(
    html: str | bytes,
    methods: Iterable[str] = METHODS,
    *,
    url: str | None = None,
    content_type: str | None = None,
    params: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Extraction]:
    """Decode and parse the page once and run every requested method on the same document.

    ``params`` optionally maps a method name to parameter overrides for it.
    """
    methods = tuple(methods)
    resolved = {m: resolve_params(m, (params or {}).get(m)) for m in methods}
    for m in params or {}:
        check_method(m)
    return _extract_resolved(html, methods, resolved, content_type, url)


def _extract_resolved(
    html: str | bytes,
    methods: tuple[str, ...],
    resolved: dict[str, dict[str, Any]],
    content_type: str | None,
    url: str | None = None,
) -> dict[str, Extraction]:
    if not methods:
        return {}
    first = resolved[methods[0]]
    alarm = _alarm_usable()
    with _alarm_handler(alarm):
        try:
            doc = _parse(html, content_type, first, alarm, url)
        except PageTimeout:
            return {
                m: _error(m, None, "timeout", {"time_limit": float(first["time_limit"])}) for m in methods
            }
        except Exception as exc:
            return {m: _error(m, None, f"parse failed: {type(exc).__name__}: {exc}") for m in methods}
        return {m: _run(doc, m, resolved[m], alarm) for m in methods}
