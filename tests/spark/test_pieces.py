"""Files read in pieces by the job: the plan that cuts them, the driver's check, and a job whose
table, statistics and summary equal those of reading every file whole."""

from __future__ import annotations

import errno
import random
import shutil
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from contentx_udf.errors import disk_full_line
from contentx_udf.spark import inputs as job_inputs
from contentx_udf.spark import job
from contentx_udf.spark.config import JobConfig
from contentx_udf.spark.pieces import FILE_STATS_PART, chain, check_pieces, merge_stats, write_file_stats
from contentx_udf.spark.worker import files_schema

from ..conftest import SHARED_WARC, TEST_DATA, shared_or_skip
from ..warc.builders import build_warc, member_offsets, response

MB = 1 << 20


def test_the_plan_cuts_equal_files_into_equal_shares():
    sizes = [int(6.5 * MB)] * 11
    tasks = job_inputs.plan_tasks(sizes, 4, 128 * MB, 4 * MB, 2, [True] * 11, MB)
    assert len(tasks) == 4
    loads = [sum((sizes[i] if end < 0 else end) - start for i, start, end in task) for task in tasks]
    assert max(loads) - min(loads) < 2 * MB  # (6, 5 files a core when read whole)
    covered = {}
    for task in tasks:
        for i, start, end in task:
            covered.setdefault(i, []).append((start, sizes[i] if end < 0 else end))
    for i, spans in covered.items():  # each file's pieces cover it once, each at least 1 MB
        spans.sort()
        assert spans[0][0] == 0 and spans[-1][1] == sizes[i]
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
        assert all(end - start >= MB for start, end in spans)
    assert sum(len(spans) - 1 for spans in covered.values()) <= 3  # at most a cut per task boundary


def test_one_large_file_gets_every_task_and_small_or_unsplittable_files_stay_whole():
    tasks = job_inputs.plan_tasks([1 << 30], 4, 128 * MB, 4 * MB, 2, [True], MB)
    # 1 GB (+ the open cost) over 128 MB tasks: 9, made 10 for the 2 cores, one piece each
    assert len(tasks) == 10 and all(len(t) == 1 for t in tasks)
    assert all(((1 << 30) if end < 0 else end) - start <= 128 * MB for ((_i, start, end),) in tasks)
    assert job_inputs.plan_tasks([1 << 30], 4, 128 * MB, 4 * MB, 2, [False], MB) == [[(0, 0, -1)]]
    assert job_inputs.plan_tasks([1 << 30], 4, 128 * MB, 4 * MB, 2, [True], 0) == [[(0, 0, -1)]]
    assert job_inputs.plan_tasks([MB + 5], 4, 128 * MB, 4 * MB, 2, [True], MB) == [[(0, 0, -1)]]
    # unsplittable files go first (LPT); the splittable one fills the rest
    tasks = job_inputs.plan_tasks([None, 40 * MB], 2, 128 * MB, 4 * MB, 2, [False, True], MB)
    assert [(0, 0, -1)] in tasks


def test_the_chain_of_pieces():
    def p(start, end, first, nxt, error=None):
        return (start, end, {"piece.first": first, "piece.next": nxt}, error)

    assert chain([p(0, 100, 0, 150), p(100, 200, 150, 250), p(200, -1, 250, -1)]) == (True, 3)
    # a piece without a record start (a long record spans it), then the file's end
    assert chain([p(0, 100, 0, 250), p(100, 200, -1, -1), p(200, -1, 250, -1)]) == (True, 3)
    assert chain([p(0, 100, 0, -1), p(100, -1, -1, -1)]) == (True, 2)
    # damage stops the file: the pieces after it do not count
    assert chain([p(0, 100, 0, -1, "corrupt"), p(100, -1, 120, -1)]) == (True, 1)
    # a piece that starts elsewhere than where the one before stopped: no chain
    assert chain([p(0, 100, 0, 150), p(100, -1, 120, -1)])[0] is False
    assert chain([p(0, 100, 0, -1), p(100, -1, 120, -1)])[0] is False
    assert chain([p(0, 100, 0, 150), p(100, -1, -1, -1)])[0] is False


def test_merged_statistics_add_counts_and_keep_the_first_error():
    rows = [
        {
            "scores": {"records.response": 2.0, "seconds": 1.0, "compiled_passes": 1.0, "piece.first": 0},
            "error": None,
        },
        {"scores": {"records.response": 3.0, "seconds": 2.0, "compiled_passes": 0.0}, "error": "cut"},
    ]
    merged = merge_stats("f", rows)
    assert merged == {
        "warc_filename": "f",
        "scores": {"records.response": 5.0, "seconds": 3.0, "compiled_passes": 0.0},
        "error": "cut",
    }
    stats = [{"warc_filename": "g", "scores": {"records.response": 1.0}, "error": None}]
    check = check_pieces(stats, [[("g", "g", 0, 0, -1)]])
    assert check.stats == stats and not check.drop and not check.redo  # whole files pass through


def test_the_batch_statistics_file_and_a_full_disk_there(tmp_path, monkeypatch):
    """The driver writes a batch's statistics rows as one Parquet file with the workers' columns;
    a full disk there names that file in the job's one line."""
    cc = "s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/1707947473347.0/warc/a.warc.gz"
    rows = [
        {"warc_filename": cc, "scores": {"records.response": 2.0, "seconds": 0.5}, "error": None},
        {"warc_filename": "local.warc.gz", "scores": {}, "error": "cannot read local.warc.gz: gone"},
    ]
    write_file_stats(str(tmp_path), rows, files_schema())
    written = pq.read_table(tmp_path / "method=_files" / FILE_STATS_PART).to_pylist()
    assert [
        (r["warc_filename"], r["crawl"], r["warc_segment"], r["status"], r["error"]) for r in written
    ] == [
        (cc, "CC-MAIN-2024-10", "1707947473347.0", "ok", None),
        ("local.warc.gz", None, None, "error", "cannot read local.warc.gz: gone"),
    ]
    assert written[0]["scores"] == [("records.response", 2.0), ("seconds", 0.5)]

    def full(*_args, **_kwargs):
        raise OSError("IOError: No space left on device")  # (pyarrow's message names no file)

    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(OSError) as caught:
        write_file_stats(str(tmp_path / "b"), rows, files_schema())
    assert caught.value.errno == errno.ENOSPC
    path = tmp_path / "b" / "method=_files" / FILE_STATS_PART
    assert f"no space left on device writing {path}:" in disk_full_line(caught.value)


def _table(output: Path) -> list[dict]:
    """The output rows in file order, timings left out."""
    rows = ds.dataset(str(output), format="parquet", partitioning="hive", exclude_invalid_files=True)
    out = []
    for row in rows.to_table().to_pylist():
        row["scores"] = sorted((k, v) for k, v in (row["scores"] or []) if k != "ms")
        out.append(row)
    return sorted(out, key=lambda r: (r["warc_filename"], r["warc_record_offset"] or -1, r["method"]))


def _file_stats(output: Path) -> dict[str, dict]:
    table = pq.read_table(str(output / "_contentx" / "files")).to_pylist()
    out = {}
    for r in table:
        out[r["warc_filename"]] = {k: v for k, v in r["scores"] if k != "seconds"} | {"error": r["error"]}
    return out


@pytest.mark.spark
def test_a_job_reading_files_in_pieces_equals_reading_them_whole(spark, tmp_path, monkeypatch):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for rel in ("fixtures/hostile.warc.gz", "real/heritrix-2014__ukwa-BL-20140325121225068.warc.gz"):
        shutil.copy(shared_or_skip(SHARED_WARC / rel), inputs)
    shutil.copy(TEST_DATA / "sample.warc.gz", inputs)
    noise = random.Random(3).randbytes
    inner = build_warc([response("http://inner.example/", noise(50_000), [("Content-Type", "image/png")])])
    outer = build_warc(
        [
            response("http://a.example/", b"<html><body><p>first page, read twice</p></body></html>", rid=1),
            response("http://b.example/x.bin", noise(20_000) + inner + noise(20_000), rid=2),
            response("http://c.example/", b"<html><body><p>last page</p></body></html>", rid=3),
        ]
    )
    (inputs / "stored.warc.gz").write_bytes(outer)
    files = sorted(str(p) for p in inputs.iterdir())
    methods = ("cectd-ds",)
    whole_config = JobConfig(files, str(tmp_path / "whole"), methods=methods, min_piece_bytes=0)
    whole = job.run(whole_config, spark=spark)

    # the plan as the job makes it with small pieces, plus a cut of the stored file just after its
    # second record's start, where the search finds the stored WARC: those pieces cannot chain
    planned = job_inputs.plan_tasks
    cut = sorted(o for o, _l, _t in member_offsets(outer))[1] + 1
    stored = files.index(str(inputs / "stored.warc.gz"))

    def plan(sizes, *args):
        tasks = [[p for p in t if p[0] != stored] for t in planned(sizes, *args)]
        return [t for t in tasks if t] + [[(stored, 0, cut)], [(stored, cut, -1)]]

    monkeypatch.setattr(job_inputs, "plan_tasks", plan)
    checks = []
    monkeypatch.setattr(job, "check_pieces", lambda *a: checks.append(check_pieces(*a)) or checks[-1])
    config = JobConfig(
        files, str(tmp_path / "pieces"), methods=methods, min_piece_bytes=16_384, num_partitions=9
    )
    pieces = job.run(config, spark=spark)
    monkeypatch.undo()

    assert [name for _loc, name, _i in checks[0].redo] == [files[stored]]  # read again, whole
    assert {r["warc_filename"] for r in checks[0].stats} == set(files) - {files[stored]}
    tasks = job_inputs.input_tasks(spark, [(f, f) for f in files], 9, 16_384)
    assert sum(1 for t in tasks for _f, _n, _i, start, end in t if start > 0 or end >= 0) >= 6  # cut
    assert _table(tmp_path / "pieces") == _table(tmp_path / "whole")
    assert _file_stats(tmp_path / "pieces") == _file_stats(tmp_path / "whole")  # one row per file
    for key in ("files_processed", "content_records", "records_by_warc_type"):
        assert pieces[key] == whole[key], key
    for key in ("rows_by_method_status", "file_errors"):
        assert pieces[key] == whole[key], key
    staged = list((tmp_path / "pieces").rglob("*"))
    assert not [p for p in staged if "_contentx/staging" in str(p) and p.is_file()]
