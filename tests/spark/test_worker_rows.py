"""The worker's rows carry the language and text hash of their own text, whether computed in
groups of rows (``label_rows``) one record after another or all at the end of a file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contentx_udf.outputs.table import FILES_METHOD
from contentx_udf.settings import resolve_params
from contentx_udf.spark import worker
from contentx_udf.text.language import detect_language, text_hash

from ..warc.test_http import Flaky, serve  # noqa: F401 (a fixture)

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.warc.gz"
FAILURES = Path(__file__).resolve().parents[2] / "docs" / "failures.md"
METHODS = ("combined", "cectd-ds")


def _rows(monkeypatch, batch_rows: int) -> list[dict]:
    monkeypatch.setattr(worker, "LABEL_BATCH_ROWS", batch_rows)
    settings = worker.WorkerSettings(
        methods=METHODS,
        params={m: resolve_params(m, {}) for m in METHODS},
        max_html_bytes=1_048_576,
        rows_per_batch=256,
    )
    return list(worker.process_file(str(SAMPLE), SAMPLE.name, settings))


@pytest.mark.parametrize("batch_rows", [1, 3, 10_000])
def test_rows_carry_the_language_and_hash_of_their_text(monkeypatch, batch_rows):
    rows = _rows(monkeypatch, batch_rows)
    ok = [r for r in rows if r.get("status") == "ok" and r["method"] in METHODS]
    assert len(ok) >= 10
    for row in ok:
        assert (row["language"], row["language_score"]) == detect_language(row["text"])
        assert row["text_hash"] == text_hash(row["text"])
        assert row["language"] is not None
    for row in rows:
        assert worker.PENDING_LANGUAGE not in row
        if row["method"] in METHODS and row.get("status") != "ok":
            assert row.get("language") is None and row.get("text_hash") is None
    assert rows[-1]["method"] == FILES_METHOD  # the statistics row comes last


def test_rows_are_the_same_in_any_grouping(monkeypatch):
    one = _rows(monkeypatch, 1)
    many = _rows(monkeypatch, 10_000)
    strip = ("scores",)  # (the statistics row times the file; extraction scores hold "ms")
    assert [{k: v for k, v in r.items() if k not in strip} for r in one] == [
        {k: v for k, v in r.items() if k not in strip} for r in many
    ]


def test_a_worker_freezes_its_long_lived_objects_once_after_its_first_task():
    """The partition function, run in a fresh interpreter as in a Python worker: after its first
    task the surviving objects sit in the permanent generation, so the full ``gc.collect()`` that
    PySpark's daemon runs after every task walks only what later tasks create."""
    import json
    import subprocess
    import sys

    code = f"""
import gc, json
import pyarrow as pa
from contentx_udf.settings import resolve_params
from contentx_udf.runtime import worker_env
from contentx_udf.spark import worker
params = {{"combined": resolve_params("combined", {{}})}}
settings = worker.WorkerSettings(methods=("combined",), params=params, max_html_bytes=1_048_576,
                                 rows_per_batch=256)
batch = pa.RecordBatch.from_pydict({{"location": [{str(SAMPLE)!r}], "warc_filename": ["s.warc.gz"]}})
before = gc.get_freeze_count()
rows = sum(b.num_rows for b in worker.make_partition_fn(settings)(iter([batch])))
frozen = gc.get_freeze_count()
again = sum(b.num_rows for b in worker.make_partition_fn(settings)(iter([batch])))
print(json.dumps([before, rows, frozen, again, gc.get_freeze_count(), len(gc.get_objects()),
                  worker_env.freeze_long_lived()]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, rows, frozen, again, frozen_after, tracked, refroze = json.loads(out.stdout.splitlines()[-1])
    assert before == 0
    assert rows > 10 and again == rows
    assert frozen > 20_000  # the modules and models of a worker
    assert not refroze and abs(frozen_after - frozen) < frozen // 100  # once per process
    assert tracked < frozen // 4  # what a later collection walks


def _documented(row_start: str) -> list[str]:
    """The `error` forms docs/failures.md's "A failed input file" table gives in the row that
    starts with ``row_start``."""
    text = FAILURES.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith(f"| {row_start}"))
    return re.findall(r"`([^`]+)`", row.split(" | ")[1])


def test_an_unreadable_input_says_what_docs_failures_md_says(tmp_path, serve, monkeypatch):  # noqa: F811
    """A local file not found, an HTTP 404 and an HTTP 503 that lasts past the attempts: each
    file's one row (status ``error``, no records) begins with the form the manual gives for it,
    ``<file>``/``<url>`` filled in (Spark-free: the worker's own function)."""
    monkeypatch.setenv("CONTENTX_HTTP_BACKOFF", "0.001")  # (the default 6 attempts, as documented)
    monkeypatch.delenv("CONTENTX_HTTP_ATTEMPTS", raising=False)
    settings = worker.WorkerSettings(("cectd-ds",), {}, 1_048_576, 256)
    missing = str(tmp_path / "gone.warc.gz")
    [local] = _documented("unreadable: a local file not found")
    base = serve(Flaky(b"", ["503"] * 10))
    http = _documented("unreadable over HTTP(S)")
    assert len(http) == 2
    cases = [
        (missing, local.replace("<file>", missing)),
        (f"{base}/other.warc.gz", http[0].replace("<url>", f"{base}/other.warc.gz")),  # (404)
        (f"{base}/file.warc.gz", http[1].replace("<url>", f"{base}/file.warc.gz")),  # (503)
    ]
    for location, documented in cases:
        rows = list(worker.process_file(location, location, settings))
        error = rows[0]["error"]
        assert len(rows) == 2 and rows[0]["status"] == "error" and rows[1]["method"] == FILES_METHOD
        assert error.startswith(documented), (error, documented)
