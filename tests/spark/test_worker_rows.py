"""The worker's rows carry the language and text hash of their own text, whether computed in
groups of rows (``label_rows``) one record after another or all at the end of a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from contentx_udf.outputs.table import FILES_METHOD
from contentx_udf.settings import resolve_params
from contentx_udf.spark import worker
from contentx_udf.text.language import detect_language, text_hash

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.warc.gz"
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
