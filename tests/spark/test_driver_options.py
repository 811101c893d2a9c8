"""The short-job JVM options of ``contentx select`` leave a user's own driver options alone."""

from __future__ import annotations

from contentx_udf.spark import worker_env


def test_driver_java_options_are_the_users_when_set(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("spark.master local[2]\n# spark.driver.extraJavaOptions -Xss4m (a comment)\n")
    assert not worker_env._driver_java_options_set()
    conf.write_text("spark.master local[2]\nspark.driver.extraJavaOptions  -Xss4m\n")
    assert worker_env._driver_java_options_set()
    conf.unlink()
    assert not worker_env._driver_java_options_set()
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.extraJavaOptions=-Xss4m pyspark-shell")
    assert worker_env._driver_java_options_set()
