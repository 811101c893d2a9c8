"""The job's summary says when workers ran the pure-Python code instead of the compiled passes."""

from __future__ import annotations

import io

from contentx_udf.spark.config import JobConfig
from contentx_udf.spark.job import print_summary, summarize


def stats_row(name: str, compiled_passes: float) -> dict:
    return {
        "warc_filename": name,
        "error": None,
        "scores": {"records.response": 2.0, "content_records": 2.0, "compiled_passes": compiled_passes},
    }


def test_summary_counts_files_run_without_the_compiled_passes(tmp_path):
    config = JobConfig(inputs=["x.warc.gz"], output=str(tmp_path / "out"))
    on = summarize(config, [stats_row("a", 1.0), stats_row("b", 1.0)], 2, 0, 1.0)
    assert on["compiled_passes"] == "on"
    off = summarize(config, [stats_row("a", 1.0), stats_row("b", 0.0)], 2, 0, 1.0)
    assert off["compiled_passes"].startswith("off on 1 of 2 files: pure Python")
    out = io.StringIO()
    print_summary(off, out=out)
    assert "compiled passes: off on 1 of 2 files" in out.getvalue()
