"""The driver's Spark session as ``conf/spark-defaults.conf`` sets it up (``runtime.session``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"


def test_columns_record_no_python_call_site(spark, monkeypatch):
    """PySpark's DataFrame query context is off (docs/performance.md, "Planning a query"): building
    columns walks no Python stack and sets no call site in the JVM, and the query still runs."""
    from pyspark.errors import utils
    from pyspark.sql import functions as F

    assert spark.conf.get(DEBUGGING, "true") == "false"
    captured: list[int] = []
    monkeypatch.setattr(utils, "_enable_debugging_cache", None)  # (read from the session again)
    monkeypatch.setattr(utils, "_capture_call_site", lambda depth: captured.append(depth) or "")
    frame = spark.range(4).select(
        (F.col("id") * 2).alias("twice"),
        F.when(F.col("id") > 1, F.lit("big")).otherwise(F.lit("small")).alias("size"),
    )
    assert [tuple(r) for r in frame.orderBy("twice").collect()] == [
        (0, "small"),
        (2, "small"),
        (4, "big"),
        (6, "big"),
    ]
    assert captured == []
