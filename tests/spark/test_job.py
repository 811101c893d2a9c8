"""The Spark job end to end: every response record of every input file lands in the table, per method,
and a resumed run gives the table of an uninterrupted one (real WARC files, one shared SparkSession)."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from warcio.archiveiterator import ArchiveIterator

from contentx_udf.errors import UserError
from contentx_udf.outputs import table as job_table
from contentx_udf.runtime import store as job_store
from contentx_udf.spark import inputs as job_inputs
from contentx_udf.spark import job
from contentx_udf.spark import worker as job_worker
from contentx_udf.spark.config import JobConfig
from contentx_udf.spark.inputs import expand_inputs

from ..conftest import SHARED_WARC, TEST_DATA, shared_or_skip, warcio_records

SAMPLE = TEST_DATA / "sample.warc.gz"
CONTENT_TYPES = {"response", "revisit", "resource"}

pytestmark = pytest.mark.spark


def read_table(spark, output: Path):
    return spark.read.parquet(str(output))


def config(inputs, output, **kw) -> JobConfig:
    kw.setdefault("methods", ("cectd-ds", "coreex"))
    return JobConfig(inputs=[str(i) for i in inputs], output=str(output), **kw)


@pytest.fixture(scope="module")
def sample_run(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("job") / "sample"
    summary = job.run(config([SAMPLE], out), spark=spark)
    return out, summary


def test_schema_matches_the_declared_columns(spark, sample_run):
    out, _ = sample_run
    df = read_table(spark, out)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for name, ddl in job_worker.OUTPUT_COLUMNS:
        assert name in types, name
        expected = {"int": "int", "long": "bigint", "timestamp": "timestamp"}.get(ddl, ddl)
        assert types[name] == expected, (name, types[name])
    assert set(types) == {n for n, _ in job_worker.OUTPUT_COLUMNS}


def test_every_content_record_is_accounted_for(spark, sample_run):
    out, summary = sample_run
    truth = warcio_records(SAMPLE)
    rows = (
        read_table(spark, out).select("warc_record_offset", "warc_type", "method", "status", "url").collect()
    )
    by_offset: dict[int, list] = {}
    for r in rows:
        by_offset.setdefault(r["warc_record_offset"], []).append(r)
    content = [t for t in truth if t["type"] in CONTENT_TYPES]
    assert len(by_offset) == len(content)
    for t in content:
        got = by_offset[t["offset"]]
        methods = sorted(r["method"] for r in got)
        if t["html"]:
            assert methods == ["cectd-ds", "coreex"], t
            assert all(r["status"] == "ok" for r in got), got
        else:
            assert methods == ["none"], t
            assert got[0]["status"] in {"skipped", "error"}
        assert all(r["url"] == t["uri"] for r in got)
    assert summary["records_by_warc_type"] == dict(sorted(Counter(t["type"] for t in truth).items()))
    assert json.loads((out / "_summary.json").read_text())["files_processed"] == 1


def test_rows_join_back_to_the_warc_by_offset(spark, sample_run):
    out, _ = sample_run
    rows = (
        read_table(spark, out)
        .select("url", "warc_filename", "warc_record_offset", "warc_record_length")
        .distinct()
        .collect()
    )
    assert rows
    for r in rows:
        with open(r["warc_filename"], "rb") as fh:
            fh.seek(r["warc_record_offset"])
            member = fh.read(r["warc_record_length"])
        rec = next(iter(ArchiveIterator(io.BytesIO(member))))
        assert rec.rec_headers.get_header("WARC-Target-URI") == r["url"]


def test_extracted_text_is_real_text(spark, sample_run):
    out, _ = sample_run
    ok = read_table(spark, out).where("status = 'ok' and method = 'cectd-ds'").collect()
    assert ok
    assert sum(1 for r in ok if r["text_length"] and r["text_length"] > 200) >= len(ok) // 2
    for r in ok:
        assert r["text_length"] == len(r["text"])
        assert "content_ratio" in r["scores"]


def test_ok_rows_carry_language_and_hash_and_others_none(spark, sample_run):
    from contentx_udf.text.language import LANGUAGES, text_hash

    rows = read_table(spark, sample_run[0]).select(
        "status", "text", "language", "language_score", "text_hash", "content_languages"
    )
    ok = rows.where("status = 'ok'").collect()
    assert ok
    for r in ok:
        if r["language"] is None:  # a text without a single letter (digits, symbols) has none
            assert not any(ch.isalpha() for ch in r["text"]) and r["language_score"] is None
        else:
            assert r["language"] in LANGUAGES and 0 < r["language_score"] <= 1
        assert r["text_hash"] == text_hash(r["text"])
    # where Common Crawl's metadata names the languages (CLD2), the first one is ours
    cc = [r for r in ok if r["content_languages"] and len(r["text"]) >= 200]
    agree = sum(r["language"] == r["content_languages"].split(",")[0] for r in cc)
    assert cc and agree >= 0.8 * len(cc), (agree, len(cc))
    others = rows.where("status != 'ok'").collect()
    assert all(r["language"] is None and r["text_hash"] is None for r in others)


def test_refuses_to_overwrite_an_existing_output(spark, sample_run, tmp_path):
    out, _ = sample_run
    with pytest.raises(UserError, match="already exists"):
        job.run(config([SAMPLE], out), spark=spark)


def test_output_that_is_a_file_is_refused(tmp_path, capsys):
    target = tmp_path / "file.parquet"
    target.write_text("x")
    code = job.main(["--input", str(SAMPLE), "--output", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert "output path is a file" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--input", "/nonexistent/x.warc.gz"], "input not found"),
        (["--input", str(SAMPLE), "--methods", "nope"], "unknown method 'nope'"),
        (["--input", str(SAMPLE), "--max-html-bytes", "-5"], "--max-html-bytes"),
        (["--input", str(SAMPLE), "--resume", "--overwrite"], "exclude each other"),
        (["--input", str(SAMPLE), "--writer", "arrow", "--output", "s3a://bucket/x"], "local paths only"),
        (["--input", str(SAMPLE), "--combined-mode", "fast"], "must be one of balanced, precision, recall"),
    ],
)
def test_user_errors_are_one_clear_line(argv, message, tmp_path, capsys):
    if "--output" not in argv:
        argv = [*argv, "--output", str(tmp_path / "out")]
    code = job.main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_model_without_the_mode_is_one_line_before_any_task(tmp_path, capsys):
    cfg = tmp_path / "mode.toml"
    cfg.write_text(f'[params.combined]\nmodel = "{tmp_path / "missing.npz"}"\nmode = "precision"\n')
    code = job.main(["--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--config", str(cfg)])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read block model" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_bad_config_value_is_one_clear_line(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[params.cectd-ds]\nlambda_ = "high"\n')
    code = job.main(["--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--config", str(cfg)])
    err = capsys.readouterr().err
    assert code == 2 and "lambda_" in err and "Traceback" not in err


def test_common_crawl_listing_with_local_base(spark, tmp_path):
    rel = "crawl-data/CC-MAIN-2020-34/segments/1596439738015.38/warc/CC-MAIN-20200808165417-00395.warc.gz"
    mirror = tmp_path / "mirror"
    (mirror / rel).parent.mkdir(parents=True)
    shutil.copy(SAMPLE, mirror / rel)
    listing = tmp_path / "warc.paths.gz"
    with gzip.open(listing, "wt") as fh:
        fh.write(rel + "\n")
    files = expand_inputs([str(listing)], str(mirror))
    assert files == [(str(mirror / rel), rel)]
    out = tmp_path / "out"
    job.run(config([listing], out, methods=("cectd-ds",), input_base_url=str(mirror)), spark=spark)
    rows = read_table(spark, out).select("warc_filename", "crawl", "warc_segment").distinct().collect()
    assert [tuple(r) for r in rows] == [(rel, "CC-MAIN-2020-34", "1596439738015.38")]


def test_empty_listing_is_a_user_error(tmp_path):
    listing = tmp_path / "warc.paths"
    listing.write_text("\n")
    with pytest.raises(UserError, match="empty"):
        expand_inputs([str(listing)], str(tmp_path))


def test_arrow_and_spark_writers_give_the_same_table(spark, tmp_path):
    """The workers' pyarrow writer (local outputs) and Spark's writer: same rows, same types."""
    cut = tmp_path / "cut.warc.gz"  # a truncated copy: error rows and a file error too
    cut.write_bytes(SAMPLE.read_bytes()[: SAMPLE.stat().st_size // 2])
    inputs = [SAMPLE, cut]
    tables = {}
    for writer in ("arrow", "spark"):
        out = tmp_path / writer
        summary = job.run(config(inputs, out, writer=writer), spark=spark)
        df = read_table(spark, out)  # (without the timing in the scores)
        df = df.withColumn("scores", F.map_filter("scores", lambda k, _v: k != "ms"))
        tables[writer] = (
            df.schema.simpleString(),
            sorted(tuple(map(str, r)) for r in df.collect()),
            summary["rows_by_method_status"],
            summary["records_by_warc_type"],
        )
        stats = spark.read.parquet(str(out / "_contentx" / "files" / "*")).collect()
        assert len(stats) == len(inputs)
        assert not list(out.rglob(".*.tmp")), "no temporary file is left behind"
    assert tables["arrow"][0] == tables["spark"][0]
    assert len(tables["arrow"][1]) > 0
    assert tables["arrow"][1] == tables["spark"][1]
    assert tables["arrow"][2:] == tables["spark"][2:]


def test_a_retried_file_replaces_its_parts(tmp_path):
    """A task that runs again (retry, speculation) rewrites the same part names: no duplicates."""
    settings = job_worker.WorkerSettings(("cectd-ds",), {}, 1_048_576, 8, write_dir=str(tmp_path))
    first = dict(job_worker.write_file_output(str(SAMPLE), "sample", 3, settings)["scores"])
    second = dict(job_worker.write_file_output(str(SAMPLE), "sample", 3, settings)["scores"])
    written = sum(v for k, v in first.items() if k.startswith("rows."))
    assert written == sum(v for k, v in second.items() if k.startswith("rows.")) > 0
    import pyarrow.parquet as pq

    parts = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    # (the statistics row: the driver's; staged: no glob for *.parquet reads it before the commit)
    assert parts == ["method=cectd-ds/part-00003.parquet.staged"]
    rows = sum(pq.read_metadata(tmp_path / p).num_rows for p in parts)
    assert rows == written


def _comparable(spark, out: Path) -> list[tuple]:
    df = read_table(spark, out).select(
        "warc_filename", "warc_record_offset", "method", "status", "error", "text", "title"
    )
    return sorted(tuple(r) for r in df.collect())


def test_resume_after_a_killed_run_gives_the_uninterrupted_table(spark, tmp_path):
    inputs = []
    for i in range(3):
        p = tmp_path / "in" / f"part-{i}.warc.gz"
        p.parent.mkdir(exist_ok=True)
        shutil.copy(SAMPLE, p)
        inputs.append(p)
    methods = ("cectd-ds",)
    full = tmp_path / "full"
    job.run(config(inputs, full, methods=methods, files_per_batch=1), spark=spark)

    killed = tmp_path / "killed"
    cfg = config(inputs, killed, methods=methods, files_per_batch=1)
    files = expand_inputs(cfg.inputs, None)
    store = job_store.OutputStore(spark, str(killed))
    job_table.prepare_output(store, cfg.output, cfg.overwrite, cfg.resume)
    job.run_batch(spark, store, files[:1], cfg, "20260101T000000-aaaaaaaa")
    # second batch: parts moved into place, then "killed" before its commit marker
    job.run_batch(spark, store, files[1:2], cfg, "20260101T000001-bbbbbbbb")
    (killed / "_contentx" / "batches" / "20260101T000001-bbbbbbbb.json").unlink()
    assert len(_comparable(spark, killed)) > 0

    summary = job.run(config(inputs, killed, methods=methods, files_per_batch=1, resume=True), spark=spark)
    assert summary["files_already_done"] == 1
    assert summary["files_processed"] == 2
    assert _comparable(spark, killed) == _comparable(spark, full)

    # resuming a complete output adds nothing
    again = job.run(config(inputs, killed, methods=methods, resume=True), spark=spark)
    assert again["files_processed"] == 0
    assert _comparable(spark, killed) == _comparable(spark, full)


def test_a_resume_that_adds_batches_takes_the_old_summary_away_until_done(spark, tmp_path, monkeypatch):
    """A ``--resume`` killed before its new batch commits leaves no ``_summary.json`` of the run
    before it: the table reads as unfinished (the corpus job says so) until a run finishes it."""
    a, b = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    shutil.copy(SAMPLE, a)
    shutil.copy(SAMPLE, b)
    out = tmp_path / "out"
    job.run(config([a], out, methods=("cectd-ds",)), spark=spark)
    again = job.run(config([a], out, methods=("cectd-ds",), resume=True), spark=spark)
    assert again["files_processed"] == 0 and (out / "_summary.json").exists()  # nothing to add: kept

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the driver stopped before the new batch's marker

    monkeypatch.setattr(job, "run_batch", killed)
    with pytest.raises(KeyboardInterrupt):
        job.run(config([a, b], out, methods=("cectd-ds",), resume=True), spark=spark)
    assert not (out / "_summary.json").exists()
    assert len(list((out / "_contentx" / "batches").glob("*.json"))) == 1
    monkeypatch.undo()
    summary = job.run(config([a, b], out, methods=("cectd-ds",), resume=True), spark=spark)
    assert summary["files_already_done"] == 1 and summary["files_processed"] == 1
    assert json.loads((out / "_summary.json").read_text())["files_processed"] == 1


def test_growing_input_list_processes_only_new_files(spark, tmp_path):
    a = tmp_path / "a.warc.gz"
    b = tmp_path / "b.warc.gz"
    shutil.copy(SAMPLE, a)
    shutil.copy(SAMPLE, b)
    out = tmp_path / "out"
    job.run(config([a], out, methods=("cectd-ds",)), spark=spark)
    summary = job.run(config([a, b], out, methods=("cectd-ds",), resume=True), spark=spark)
    assert summary["files_already_done"] == 1 and summary["files_processed"] == 1
    names = {r[0] for r in read_table(spark, out).select("warc_filename").distinct().collect()}
    assert names == {str(a), str(b)}


def test_shared_corpus_every_response_accounted(spark, tmp_path):
    """All real WARCs and both fixtures in one invocation; compare with INDEX.json/manifests."""
    real = shared_or_skip(SHARED_WARC / "real")
    fixtures = shared_or_skip(SHARED_WARC / "fixtures")
    inputs = sorted(p for p in real.iterdir() if ".warc" in p.name) + sorted(fixtures.glob("*.warc.gz"))
    out = tmp_path / "all"
    summary = job.run(config(inputs, out, methods=("cectd-ds",)), spark=spark)
    df = read_table(spark, out)
    rows = df.select("warc_filename", "warc_type", "method", "status", "error").collect()
    per_file = Counter(
        (Path(r["warc_filename"]).name, r["warc_type"]) for r in rows if r["method"] != "cectd-ds"
    )
    per_file_html = Counter(Path(r["warc_filename"]).name for r in rows if r["method"] == "cectd-ds")
    files = json.loads((real / "INDEX.json").read_text()) + json.loads((fixtures / "INDEX.json").read_text())
    checked = 0
    for entry in files:
        name = entry["file"]
        types = entry["records_by_type"]
        if ".wet" in name or ".wat" in name:
            continue
        for wtype in CONTENT_TYPES:
            expected = types.get(wtype, 0)
            got = per_file[(name, wtype)] + (per_file_html[name] if wtype == "response" else 0)
            assert got == expected, (name, wtype, got, expected)
        checked += 1
    assert checked == len(inputs) - 2  # every file but the WET and the WAT
    assert summary["files_processed"] == len(inputs)
    for name in ("cc-2024-22__whirlwind.warc.wet.gz", "cc-2024-22__whirlwind.warc.wat.gz"):
        errs = [r for r in rows if Path(r["warc_filename"]).name == name]
        assert len(errs) == 1 and errs[0]["status"] == "error", errs


def test_hostile_fixture_gives_the_expected_status_per_record(spark, tmp_path):
    fixtures = shared_or_skip(SHARED_WARC / "fixtures")
    manifest = json.loads((fixtures / "hostile.manifest.json").read_text())
    out = tmp_path / "hostile"
    job.run(config([fixtures / "hostile.warc.gz"], out, methods=("cectd-ds",)), spark=spark)
    rows = read_table(spark, out).collect()
    by_offset = {r["warc_record_offset"]: r for r in rows if r["warc_type"] is not None}
    for rec in manifest["records"]:
        if rec["warc_type"] != "response":
            continue
        row = by_offset[rec["offset"]]
        special = rec["special"]
        if special == "truncated-gzip-member":
            assert row["status"] == "error" and row["error"].startswith("truncated"), row
        elif rec["expect_text"]:
            assert row["status"] == "ok" and row["method"] == "cectd-ds", (special, row["error"])
            assert row["text_length"] > 0, special
            if rec.get("expected_text_contains"):
                assert rec["expected_text_contains"] in row["text"]
        else:
            assert row["status"] == "skipped" and row["error"], (special, row)
    huge = next(r for r in rows if r["warc_record_offset"] == 67648)
    assert huge["scores"]["payload_cut_bytes"] > 4_000_000


def test_damaged_warcs_never_fail_the_job(spark, tmp_path):
    """Byte flips and cuts in a real WARC: the job finishes, records before the damage are kept."""
    import random

    data = SAMPLE.read_bytes()
    clean = [t for t in warcio_records(SAMPLE) if t["type"] in CONTENT_TYPES]
    rng = random.Random(1234)
    damaged = {}
    for i in range(4):
        buf = bytearray(data)
        pos = rng.randrange(len(buf) // 4, len(buf))
        if i % 2:
            del buf[pos:]
        else:
            for p in range(pos, min(len(buf), pos + 16)):
                buf[p] = rng.randrange(256)
        path = tmp_path / f"damaged-{i}.warc.gz"
        path.write_bytes(bytes(buf))
        damaged[str(path)] = pos
    out = tmp_path / "out"
    summary = job.run(config(list(damaged), out, methods=("cectd-ds",)), spark=spark)
    assert summary["files_processed"] == len(damaged)
    rows = read_table(spark, out).select("warc_filename", "warc_record_offset", "status", "error").collect()
    for name, pos in damaged.items():
        got = [r for r in rows if r["warc_filename"] == name]
        offsets = {r["warc_record_offset"] for r in got}
        # every record that ends before the damage is there
        ends = [t["offset"] for t in clean[1:]] + [len(data)]
        intact = [t["offset"] for t, end in zip(clean, ends, strict=True) if end <= pos]
        assert set(intact) <= offsets, name
        assert any(r["status"] == "error" for r in got) or name in summary["file_errors"], name


def test_missing_java_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path))
    code = job.main(["--input", str(SAMPLE), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Java 17" in err and "install" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_per_page_time_limit_gives_timeout_rows_and_the_task_goes_on(spark, tmp_path):
    out = tmp_path / "timeouts"
    cfg = config([SAMPLE], out, methods=("ccb",), params={"ccb": {"time_limit": 1e-6}})
    summary = job.run(cfg, spark=spark)
    rows = read_table(spark, out).where("method = 'ccb'").select("status", "error").collect()
    truth = [t for t in warcio_records(SAMPLE) if t["type"] == "response" and t["html"]]
    assert len(rows) == len(truth)
    assert all(r["status"] == "error" and r["error"] == "timeout" for r in rows), rows
    assert summary["rows_by_method_status"]["ccb"] == {"error": len(truth)}


def test_worker_writer_splits_large_outputs_into_row_groups(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    monkeypatch.setattr(job_worker, "ROW_GROUP_BYTES", 1)
    monkeypatch.setattr(job_worker, "MIN_ROW_GROUP_BYTES", 20_000)  # a few pages of text per row group
    settings = job_worker.WorkerSettings(("cectd-ds", "coreex"), {}, 1_048_576, 4, write_dir=str(tmp_path))
    stats = dict(job_worker.write_file_output(str(SAMPLE), "sample", 0, settings)["scores"])
    for method in ("cectd-ds", "coreex"):
        meta = pq.read_metadata(tmp_path / f"method={method}" / job_worker.part_name(0))
        assert meta.num_row_groups > 1
        assert meta.num_rows == sum(v for k, v in stats.items() if k.startswith(f"rows.{method}."))
    table = pq.read_table(tmp_path / "method=cectd-ds" / job_worker.part_name(0))
    assert "method" not in table.column_names  # the partition directory holds it
    assert table.num_rows == len(set(table.column("warc_record_offset").to_pylist()))


def test_plan_tasks_packs_small_files_and_keeps_every_core_busy():
    mb = 1 << 20

    def plan(*args, **kw):  # (files read whole: the file indexes of each task)
        tasks = job_inputs.plan_tasks(*args, **kw)
        assert all(start == 0 and end == -1 for task in tasks for _i, start, end in task)
        return [[i for i, _start, _end in task] for task in tasks]

    # eleven 6.5 MB files: packed into the minimum of four tasks, balanced (3, 3, 3, 2 files)
    tasks = plan([int(6.5 * mb)] * 11, 4, 128 * mb, 4 * mb)
    assert sorted(len(t) for t in tasks) == [2, 3, 3, 3]
    assert sorted(i for t in tasks for i in t) == list(range(11))
    # 1 GB files (Common Crawl): one per task, and unknown (remote) sizes count as a full task
    assert plan([1 << 30] * 3, 4, 128 * mb, 4 * mb) == [[0], [1], [2]]
    assert len(plan([None] * 5, 2, 128 * mb, 4 * mb)) == 5
    # 300 MB of small files over a 128 MB cap: three tasks at least, the big file alone
    sizes = [200 * mb] + [5 * mb] * 20
    tasks = plan(sizes, 1, 128 * mb, 4 * mb)
    assert [0] in tasks and len(tasks) == 3
    assert plan([], 4, 128 * mb, 4 * mb) == []
    # 55 such files fill 5 tasks of 128 MB; on 2 cores that is 6 (no last wave on one core)
    assert len(plan([int(6.5 * mb)] * 55, 4, 128 * mb, 4 * mb)) == 5
    tasks = plan([int(6.5 * mb)] * 55, 4, 128 * mb, 4 * mb, slots=2)
    assert sorted(len(t) for t in tasks) == [9, 9, 9, 9, 9, 10]


def test_spark_size_settings_are_read_like_spark(spark):
    assert job_inputs._conf_bytes(spark, "128m") == 128 << 20
    assert job_inputs._conf_bytes(spark, "4194304") == 4194304
    assert job_inputs._conf_bytes(spark, "1g") == 1 << 30
    assert job_inputs._conf_bytes(spark, "64MB") == 64 << 20
    with pytest.raises(UserError):
        job_inputs._conf_bytes(spark, "lots")


def _write_warc(path: Path, pages: list[tuple[str, str]]) -> None:
    """A gzipped WARC of HTML responses ``(url, html)``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, html in pages:
            body = html.encode("utf-8")
            headers = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            writer.write_record(
                writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers)
            )


def test_a_page_with_nothing_extracted_is_an_empty_row_counted_in_the_summary(spark, tmp_path):
    from ..helpers import ARTICLE, NAV
    from ..test_empty_status import DISCOURSE

    article = "<html><body>" + NAV + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</body></html>"
    warc = tmp_path / "empty.warc.gz"
    _write_warc(
        warc, [("https://forum.example.org/t/123", DISCOURSE), ("https://news.example.org/a", article)]
    )
    out = tmp_path / "out"
    summary = job.run(config([warc], out, methods=("cectd-ds", "coreex")), spark=spark)
    rows = read_table(spark, out).select("url", "method", "status", "error", "text", "text_length").collect()
    forum = [r for r in rows if r["url"] == "https://forum.example.org/t/123"]
    assert sorted(r["method"] for r in forum) == ["cectd-ds", "coreex"]
    for r in forum:
        assert r["status"] == "empty" and r["error"].startswith("no text extracted"), r
        assert r["text"] == "" and r["text_length"] == 0  # the method ran and found nothing
    news = [r for r in rows if r["url"] == "https://news.example.org/a"]
    assert all(r["status"] == "ok" and r["text_length"] > 0 for r in news), news
    assert summary["rows_by_method_status"] == {
        "cectd-ds": {"empty": 1, "ok": 1},
        "coreex": {"empty": 1, "ok": 1},
    }
    text = io.StringIO()
    job.print_summary(summary, out=text)
    assert "rows cectd-ds: empty 1, ok 1" in text.getvalue()


def test_lid_model_file_gives_the_default_languages_and_scores(spark, sample_run, tmp_path, monkeypatch):
    """lid.176's own file as --lid-model, shipped as on a cluster (SparkContext.addFile, read by the
    workers through SparkFiles): every row's language and score equal the bundled default's."""
    from contentx_udf.text.language import bundled_model

    model = tmp_path / "lid-copy.ftz"  # a copy: the job reads the file it is given, not the bundled one
    shutil.copy(bundled_model(), model)
    monkeypatch.setattr(job, "workers_share_driver_files", lambda _spark: False)
    out = tmp_path / "custom"
    summary = job.run(config([SAMPLE], out, methods=("cectd-ds",), lid_model=str(model)), spark=spark)
    assert summary["lid_model"] == str(model)

    def languages(path):
        rows = read_table(spark, path).where("method = 'cectd-ds'")
        return {
            r["warc_record_offset"]: (r["language"], r["language_score"])
            for r in rows.select("warc_record_offset", "language", "language_score").collect()
        }

    default, custom = languages(sample_run[0]), languages(out)
    assert custom == default
    assert sum(lang is not None for lang, _ in custom.values()) >= 5


@pytest.mark.parametrize("kind", ["missing", "directory", "not fastText"])
def test_a_bad_lid_model_is_one_line_before_any_task(kind, tmp_path, capsys):
    model = tmp_path / "model.bin"
    if kind == "directory":
        model.mkdir()
    elif kind == "not fastText":
        model.write_bytes(b"<html>404 Not Found</html>" * 10)
    out = tmp_path / "o"
    code = job.main(["--input", str(SAMPLE), "--output", str(out), "--lid-model", str(model)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--lid-model" in err and str(model) in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_lid_model_from_the_config_file(tmp_path, capsys):
    cfg = tmp_path / "job.toml"
    cfg.write_text(f'[job]\nlid_model = "{tmp_path / "none.bin"}"\n')
    code = job.main(["--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--config", str(cfg)])
    assert code == 2 and "--lid-model: no such file" in capsys.readouterr().err


def test_each_failed_input_is_a_file_error_and_a_run_where_all_failed_exits_1(spark, tmp_path, capsys):
    """Empty, not a WARC (plain text; a gzip member whose header block ends early) and unreadable
    (a dangling link) inputs each print a ``file error:`` line and are counted in ``file_errors``;
    every input failed: exit code 1 and one line.  A file cut short after some records is a file
    error too, but not a failed file: the run that adds it (``--resume``) exits 0."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    bad = {
        "empty.warc.gz": "empty file: no WARC records",
        "notes.warc.gz": "not a WARC file: looks like an ARC record or plain text",
        "garbled.warc.gz": "not a WARC file: gzip-compressed, its first record's header cannot be parsed",
        "gone.warc.gz": "WARC file not found",
    }
    (crawl / "empty.warc.gz").write_bytes(b"")
    (crawl / "notes.warc.gz").write_text("my notes, not a crawl\n")
    (crawl / "garbled.warc.gz").write_bytes(gzip.compress(b"WARC/1.0\r\nWARC-Type: response\r\n"))
    (crawl / "gone.warc.gz").symlink_to(tmp_path / "nowhere.warc.gz")
    out = tmp_path / "out"
    argv = ["--input", str(crawl), "--output", str(out), "--show-rows", "0", "--methods", "cectd-ds"]
    assert job.main(argv) == job.ALL_FAILED_EXIT == 1
    captured = capsys.readouterr()
    said = [line.strip() for line in captured.out.splitlines() if line.strip().startswith("file error:")]
    summary = json.loads((out / "_summary.json").read_text())
    assert len(said) == len(summary["file_errors"]) == summary["files_failed"] == len(bad)
    for name, reason in bad.items():
        path = str(crawl / name)
        assert reason in summary["file_errors"][path], (name, summary["file_errors"])
        assert any(line.startswith(f"file error: {path}: ") and reason in line for line in said), name
    assert "file errors: 4 of 4 files (4 gave no record)" in captured.out
    last = [line for line in captured.err.splitlines() if line.startswith("contentx run: error")]
    assert last == ["contentx run: error: every input file failed (4 of 4: see the file errors above); "
                    "the table holds only their error rows"]  # fmt: skip
    (crawl / "cut.warc.gz").write_bytes(SAMPLE.read_bytes()[:30000])
    assert job.main([*argv, "--resume"]) == 0
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["files_processed"] == 1 and summary["files_failed"] == 0
    assert summary["file_errors"][str(crawl / "cut.warc.gz")].startswith("truncated: ")
    assert f"file error: {crawl / 'cut.warc.gz'}: truncated: " in capsys.readouterr().out


def test_the_table_reads_with_a_plain_glob_in_duckdb_pandas_pyarrow_and_spark(spark, sample_run):
    """The bookkeeping under ``_contentx/`` (per-file statistics, markers) is in no reader's way:
    DuckDB's ``**/*.parquet`` with hive partitioning, pandas and pyarrow on the folder, Spark."""
    import duckdb
    import pandas as pd
    import pyarrow.dataset as ds

    out, summary = sample_run
    expected = Counter(r["method"] for r in read_table(spark, out).select("method").collect())
    assert set(expected) == {"cectd-ds", "coreex"}
    glob = f"read_parquet('{out}/**/*.parquet', hive_partitioning=true)"
    got = duckdb.sql(f"select method, count(*) from {glob} group by all").fetchall()
    assert dict(got) == expected
    assert Counter(pd.read_parquet(out)["method"]) == expected
    table = ds.dataset(str(out), partitioning="hive").to_table()
    assert Counter(table.column("method").to_pylist()) == expected
    stats = list((out / "_contentx" / "files").rglob("*"))  # the statistics are there, as Parquet
    assert [p.suffix for p in stats if p.is_file()] == [".pq"]
    assert pq.read_table(next(p for p in stats if p.is_file())).num_rows == summary["files_processed"]


def test_a_killed_runs_staged_batch_is_read_by_no_plain_glob(tmp_path):
    """A run killed mid-batch leaves the batch's files in its staging area (here written by the
    workers' and the driver's own code: an input file in two pieces and the batch's statistics):
    DuckDB's ``**/*.parquet``, which descends into ``_contentx/``, reads the committed batch alone.
    ``--resume``'s clean-up removes the staging; the piece check drops a piece by its staged name;
    the commit names the parts ``*.parquet`` and the statistics ``*.pq``."""
    import duckdb

    from contentx_udf.spark.pieces import PieceCheck, apply_check, write_file_stats

    out = tmp_path / "out"
    store = job_store.LocalOutputStore(str(out))
    first, second = "20260101T000000-aaaaaaaa", "20260101T000001-bbbbbbbb"
    cut = 60_000  # (SAMPLE's second piece starts at a later record)

    def stage(batch: str, *files: tuple[int, int, int]) -> tuple[Path, list[int]]:
        """The staging of ``batch`` as its tasks (``files``: index, start, end of SAMPLE) and then
        the driver write it; the rows written of each file."""
        staging = out.joinpath(*job_table.STAGING, batch)
        settings = job_worker.WorkerSettings(("cectd-ds",), {}, 1_048_576, 64, write_dir=str(staging))
        stats = [
            job_worker.write_file_output(str(SAMPLE), f"in-{index}", index, settings, start, end)
            for index, start, end in files
        ]
        rows = [{**row, "scores": dict(row["scores"])} for row in stats]
        write_file_stats(str(staging), rows, job_worker.files_schema())
        return staging, [int(sum(v for k, v in r["scores"].items() if k.startswith("rows."))) for r in rows]

    def plain_glob() -> dict[str, int]:
        glob = f"read_parquet('{out}/**/*.parquet', hive_partitioning=true, filename=true)"
        got = duckdb.sql(f"select filename, count(*) from {glob} group by all").fetchall()
        return {Path(name).relative_to(out).as_posix(): n for name, n in got}

    _staging, [whole] = stage(first, (0, 0, -1))
    job_table.commit_batch(store, first, ["in-0"])
    assert plain_glob() == {f"method=cectd-ds/b{first}-part-00000.parquet": whole} and whole > 0

    # killed with the second batch staged
    staging, _rows = stage(second, (1, 0, cut), (1, cut, -1))
    assert plain_glob() == {f"method=cectd-ds/b{first}-part-00000.parquet": whole}
    staged = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    assert staged == [
        "method=_files/part-00000.parquet.staged",
        "method=cectd-ds/part-00001-000000000000.parquet.staged",
        f"method=cectd-ds/part-00001-{cut:012d}.parquet.staged",
    ]

    # --resume: the uncommitted batch is removed, the committed one's files are done
    assert job_table.prepare_output(store, str(out), overwrite=False, resume=True) == {"in-0"}
    assert not staging.exists()
    assert plain_glob() == {f"method=cectd-ds/b{first}-part-00000.parquet": whole}

    # the resumed run: the piece check drops the second piece, the commit names the rest
    staging, [kept, _dropped] = stage(second, (1, 0, cut), (1, cut, -1))
    apply_check(str(staging), PieceCheck(drop=[job_worker.part_name(1, cut, -1)]))
    job_table.commit_batch(store, second, ["in-1"])
    assert plain_glob() == {
        f"method=cectd-ds/b{first}-part-00000.parquet": whole,
        f"method=cectd-ds/b{second}-part-00001-000000000000.parquet": kept,
    }
    assert sorted(p.relative_to(out / "_contentx" / "files").as_posix() for p in out.rglob("*.pq")) == [
        f"{first}/part-00000.pq",
        f"{second}/part-00000.pq",
    ]
    assert not list(out.rglob("*.staged"))


class _Console(io.StringIO):
    """A stderr that says whether it is a terminal."""

    def __init__(self, terminal: bool):
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


_PROGRESS = re.compile(r"contentx run: files (\d+)/3 done, records ([\d,]+)")


@pytest.mark.parametrize("terminal", [False, True], ids=["plain lines", "terminal"])
def test_the_progress_line_follows_a_real_run(spark, tmp_path, monkeypatch, terminal):
    """Three files in three tasks: off a terminal a plain line every interval and one at the end;
    on a terminal one line rewritten in place (``\\r``) and ended once.  The counts come from the
    tasks' accumulators: they never go down, and the last line has every file and record."""
    from contentx_udf.spark import progress

    inputs = []
    for i in range(3):
        inputs.append(tmp_path / f"part-{i}.warc.gz")
        shutil.copy(SAMPLE, inputs[-1])
    records = 3 * sum(1 for _ in ArchiveIterator(SAMPLE.open("rb")))
    console = _Console(terminal)
    monkeypatch.setattr("sys.stderr", console)
    monkeypatch.setattr(progress, "TERMINAL_INTERVAL", 0.02)
    config = JobConfig(
        inputs=[str(p) for p in inputs],
        output=str(tmp_path / "out"),
        methods=("combined",),
        num_partitions=3,
        progress_seconds=0.05,  # (the command line takes whole seconds; the line any interval)
    )
    job.run(config, spark=spark)
    text = console.getvalue()
    if terminal:
        assert text.endswith("\n") and text.count("\n") == 1, text  # one line, ended once
        lines = [part.rstrip(" \n") for part in text.split("\r")[1:]]
    else:
        assert "\r" not in text
        lines = [line for line in text.splitlines() if _PROGRESS.match(line)]
    assert len(lines) >= 2, text  # a line while it ran, and the last
    counts = [_PROGRESS.match(line).groups() for line in lines]
    files = [int(f) for f, _ in counts]
    seen = [int(r.replace(",", "")) for _, r in counts]
    assert files == sorted(files) and seen == sorted(seen), lines
    assert (files[-1], seen[-1]) == (3, records), lines[-1]
