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


def test_a_worker_reports_how_it_ran_language_id(monkeypatch):
    """The statistics row of a file carries the worker's own language-id path: 1 where the
    extension is built and on (known here from the built file and the switch, not from the code
    under test), 0 under CONTENTX_PURE_PYTHON=1, where fastText's own predict runs."""
    import importlib.util
    import os
    from collections import Counter

    from contentx_udf.spark.worker import file_row
    from contentx_udf.text import language

    def reported() -> float:
        language._compiled.clear()  # (the identifier is chosen once per process: choose again)
        row = file_row("a.warc.gz", Counter(), Counter(), None, 0, 0.1)
        return dict(row["scores"])["compiled_language_id"]

    built = importlib.util.find_spec("contentx_udf.text._lid") is not None
    switched_off = os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0")
    saved = dict(language._compiled)
    try:
        assert reported() == (1.0 if built and not switched_off else 0.0)
        monkeypatch.setenv("CONTENTX_PURE_PYTHON", "1")
        assert reported() == 0.0
    finally:
        language._compiled.clear()
        language._compiled.update(saved)
