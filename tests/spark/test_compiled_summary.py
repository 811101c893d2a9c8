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


def test_summary_counts_files_whose_language_id_ran_through_fasttext(tmp_path):
    config = JobConfig(inputs=["x.warc.gz"], output=str(tmp_path / "out"))
    rows = [stats_row("a", 1.0), stats_row("b", 1.0)]
    rows[0]["scores"]["compiled_language_id"] = 1.0
    rows[1]["scores"]["compiled_language_id"] = 0.0
    summary = summarize(config, rows, 2, 0, 1.0)
    assert summary["compiled_passes"] == "on"
    assert summary["compiled_language_id"].startswith("off on 1 of 2 files: fastText")
    out = io.StringIO()
    print_summary(summary, out=out)
    assert "compiled language id: off on 1 of 2 files" in out.getvalue()


def test_a_worker_reports_how_it_ran_language_id():
    """The statistics row of a file carries the worker's own language-id path (compiled here,
    where the extension is built; fastText under CONTENTX_PURE_PYTHON=1)."""
    from collections import Counter

    from contentx_udf.spark.worker import file_row
    from contentx_udf.text.language import lid_status

    row = file_row("a.warc.gz", Counter(), Counter(), None, 0, 0.1)
    expected = 1.0 if lid_status() == "compiled" else 0.0
    assert dict(row["scores"])["compiled_language_id"] == expected
