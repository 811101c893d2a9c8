"""contentx_udf: main-content extraction from HTML (CETR, CCB, CoreEx, CETD, combined) and evaluation.

Public API::

    from contentx_udf import extract, extract_all, METHODS, Extraction
    result = extract(html_bytes, content_type="text/html; charset=utf-8")  # DEFAULT_METHOD
    result.text, result.title, result.scores, result.status, result.error

Every extractor is a pure function of a parsed :class:`~contentx_udf.page.document.Document`;
nothing here needs Spark.  The Spark job lives in :mod:`contentx_udf.spark`.
"""

from .core import Extraction, MethodResult, extract, extract_all
from .settings import DEFAULT_METHOD, METHODS

__all__ = ["DEFAULT_METHOD", "METHODS", "Extraction", "MethodResult", "extract", "extract_all"]
__version__ = "0.1.0"
