"""``contentx_udf.runtime.background``: Spark actions from a driver thread, beside the main thread's."""

from __future__ import annotations

import threading
import time

import pytest

from contentx_udf.runtime import background

pytestmark = pytest.mark.spark


def test_a_background_action_runs_its_jobs_beside_the_main_threads(spark):
    started = threading.Event()

    def count() -> int:
        started.set()
        return spark.range(200_000).selectExpr("sum(id % 7) as s").collect()[0]["s"]

    future = background.start(spark, count, "test-background")
    assert started.wait(30)
    main = spark.range(1000).count()  # the main thread's job meanwhile
    assert main == 1000
    assert future.result(timeout=120) == sum(i % 7 for i in range(200_000))


def test_the_job_description_of_the_starting_thread_is_inherited(spark):
    spark.sparkContext.setLocalProperty("spark.job.description", "contentx-background-test")
    try:
        future = background.start(
            spark, lambda: spark.sparkContext.getLocalProperty("spark.job.description"), "test-props"
        )
        assert future.result(timeout=60) == "contentx-background-test"
    finally:
        spark.sparkContext.setLocalProperty("spark.job.description", None)


def test_an_error_is_raised_where_the_result_is_read_and_settle_waits(spark):
    def fails() -> None:
        spark.sql("select * from a_table_that_does_not_exist").collect()

    future = background.start(spark, fails, "test-fails")
    with pytest.raises(Exception, match="a_table_that_does_not_exist"):
        future.result(timeout=60)

    done = []

    def slow() -> None:
        time.sleep(0.5)
        done.append(True)
        raise RuntimeError("ignored by settle")

    pending = background.start(spark, slow, "test-slow")
    background.settle([pending, None])
    assert done == [True] and pending.done()
