"""Inputs that change under the extraction job: a WARC deleted after the listing was read, and a
WARC cut short after it.  Each gives its documented outcome -- an ``error`` row naming the file
(the summary counts it among the file errors), or, for a cut file, the records before the cut and
an error -- and nothing else of the run is lost."""

from __future__ import annotations

import pytest

from contentx_udf.spark import job
from contentx_udf.spark.inputs import expand_inputs

from ..spark.test_job import _comparable, config
from .inputs import sample_copies

pytestmark = pytest.mark.spark


def _rows_of(spark, out, name_part: str) -> list[tuple]:
    return [row[1:] for row in _comparable(spark, out) if name_part in row[0]]


def test_a_warc_deleted_after_the_listing_is_an_error_row_and_the_rest_is_whole(spark, tmp_path):
    inputs = sample_copies(tmp_path, 3)
    cfg = config(inputs, tmp_path / "out", methods=("cectd-ds",))
    files = expand_inputs(cfg.inputs, None)  # the listing is read ...
    inputs[1].unlink()  # ... then one file vanishes
    summary = job.run(cfg, spark=spark, files=files)

    assert summary["files_processed"] == 3
    assert list(summary["file_errors"]) == [str(inputs[1])]
    assert "not found" in summary["file_errors"][str(inputs[1])]
    gone = [row for row in _comparable(spark, tmp_path / "out") if row[0] == str(inputs[1])]
    assert [(r[3], "not found" in r[4]) for r in gone] == [("error", True)]  # one row, naming it

    reference = tmp_path / "reference"
    job.run(config([inputs[0]], reference, methods=("cectd-ds",)), spark=spark)
    expected = _rows_of(spark, reference, "part-0")
    assert _rows_of(spark, tmp_path / "out", "part-0") == expected
    assert _rows_of(spark, tmp_path / "out", "part-2") == expected


def test_a_warc_cut_short_after_the_listing_keeps_its_whole_records(spark, tmp_path):
    inputs = sample_copies(tmp_path, 2)
    cfg = config(inputs, tmp_path / "out", methods=("cectd-ds",))
    files = expand_inputs(cfg.inputs, None)
    data = inputs[1].read_bytes()
    inputs[1].write_bytes(data[: len(data) * 2 // 3])  # cut while "being read"
    summary = job.run(cfg, spark=spark, files=files)

    assert summary["files_processed"] == 2
    rows = [row for row in _comparable(spark, tmp_path / "out") if row[0] == str(inputs[1])]
    whole = [row for row in _comparable(spark, tmp_path / "out") if row[0] == str(inputs[0])]
    ok = [row for row in rows if row[3] == "ok"]
    assert 0 < len(ok) < len([row for row in whole if row[3] == "ok"])
    assert all(row[1:] in {w[1:] for w in whole} for row in ok)  # what was kept is exact
    assert any(row[3] == "error" for row in rows) or str(inputs[1]) in summary["file_errors"]
