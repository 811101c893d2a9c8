"""Inputs that change under the jobs: a WARC deleted after the listing was read, a WARC cut
short after it, one Parquet part of the corpus job's input replaced mid-run.  Each gives its
documented outcome -- an ``error`` row naming the file (the summary counts it among the file
errors); for a cut file the records before the cut and an error; for the replaced part one line
naming it and exit code 2 when the first pass read it after the change, the corpus of the table
as it was when the change came after that pass -- and nothing else of the run is lost."""

from __future__ import annotations

import shutil

import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import stages
from contentx_udf.corpus.config import CorpusConfig
from contentx_udf.spark import job
from contentx_udf.spark.inputs import expand_inputs

from ..spark.test_job import _comparable, config
from .inputs import corpus_docs, replace_part, sample_copies, two_part_table

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


def test_a_corpus_input_part_replaced_during_the_first_pass_is_one_line(spark, tmp_path, monkeypatch, capsys):
    """Replaced after the job listed it, before its first pass read it: one line naming the
    file, exit code 2, no corpus and nothing staged; the rerun builds from the new table."""
    table, part = two_part_table(tmp_path / "table")
    first_pass = corpus_job.first_pass

    def replaced_under_the_read(*args, **kw):
        replace_part(part)  # the first pass's frame was planned on the old file; its write reads now
        return first_pass(*args, **kw)

    monkeypatch.setattr(corpus_job, "first_pass", replaced_under_the_read)
    out = tmp_path / "out"
    argv = ["corpus", "--input", str(table), "--output", str(out), "--dedup", "near"]
    assert cli.main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1 and "changed while the job read it" in err[0] and part.name in err[0], err
    assert not (out / "_SUCCESS").exists() and not (out / "documents").exists()
    assert not (out / "_staging").exists()

    monkeypatch.setattr(corpus_job, "first_pass", first_pass)
    assert cli.main(argv) == 0  # the rerun, on the table as it is now
    reference = tmp_path / "reference"
    shutil.copytree(table, tmp_path / "copy")
    report = corpus_job.run(CorpusConfig(inputs=[str(tmp_path / "copy")], output=str(reference)), spark)
    assert corpus_docs(out) == corpus_docs(reference)
    assert report["input_rows"] == 15  # 6 of the first part, 9 of the new second


def test_a_corpus_input_part_replaced_after_the_first_pass_changes_nothing(
    spark, tmp_path, monkeypatch, two_part_corpus
):
    """Replaced during the duplicate graph (the first pass is staged, later stages read that):
    the corpus and report counts are those of an uninterrupted run on the table as it was."""
    table, part = two_part_table(tmp_path / "table")
    reference, expected = two_part_corpus
    decide = stages.decide

    def replaced_during_the_graph(*args, **kw):
        replace_part(part)
        return decide(*args, **kw)

    monkeypatch.setattr(stages, "decide", replaced_during_the_graph)
    report = corpus_job.run(CorpusConfig(inputs=[str(table)], output=str(tmp_path / "out")), spark)
    assert corpus_docs(tmp_path / "out") == corpus_docs(reference)
    for key in ("input_rows", "kept", "dropped"):
        assert report[key] == expected[key], key
