"""The corpus job on any Hadoop filesystem, its committed output and its incremental builds.

* input, output and ``--against`` on ``viewfs://`` (a Hadoop filesystem other than the local one,
  built into Spark's Hadoop client) give the documents of the same run on local paths;
* ``--against`` earlier corpora drops their exact and near copies as ``seen_before`` and keeps the
  new documents; a corpus of the previous version (no band hashes) still matches exact copies;
* a table still being written, a damaged Parquet file, a missing path, an existing output, an
  ``--against`` that is no finished corpus, an unknown filesystem: one line, exit code 2;
  ``--skip-damaged`` builds from the rest and counts what it left out;
* a run killed part-way leaves no ``_SUCCESS``, and a rerun with ``--overwrite`` gives the corpus
  of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import CorpusConfig

from ..conftest import SESSION_SQL_SUBMIT_ARGS
from .tables import DATE, article, month_table, table_row, texts_of, write_table

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def run(spark, inputs, output, **kw) -> dict:
    config = CorpusConfig(inputs=[str(i) for i in inputs], output=str(output), **kw)
    return corpus_job.run(config, spark)


def documents(spark, output) -> list[tuple]:
    """``(url, text_hash, duplicate_count)`` of the kept documents, sorted: read by Spark from a
    Hadoop filesystem's URI, by pyarrow (no Spark job) from a local path."""
    if "://" in str(output):
        rows = spark.read.parquet(f"{output}/documents").collect()
    else:
        rows = pq.read_table(f"{output}/documents").to_pylist()
    return sorted((r["url"], r["text_hash"], r["duplicate_count"]) for r in rows)


@pytest.fixture()
def viewfs(spark, tmp_path):
    """A ``viewfs://`` mount table (unique per test) whose ``/data`` is ``tmp_path/data``."""
    table = f"mt{uuid.uuid4().hex[:8]}"
    (tmp_path / "data").mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{table}.link./data", (tmp_path / "data").as_uri()
    )
    return f"viewfs://{table}/data", tmp_path / "data"


def test_incremental_build_drops_what_earlier_corpora_hold(
    spark, month1_corpus, month2_corpus, month2_against_month1
):
    """(the three builds are the session's, tests/conftest.py: month 1's, month 2's alone, and
    month 2's ``--against`` month 1's)"""
    c1, first = month1_corpus
    assert first["kept"] == 30 and (c1 / "_SUCCESS").exists()
    _plain_dir, plain = month2_corpus
    assert plain["kept"] == 30 and plain["dropped"]["seen_before"] == 0
    c2, report = month2_against_month1
    kept = documents(spark, c2)
    assert {url for url, _h, _n in kept} == {f"https://two.example/{s}" for s in range(100, 118)}
    assert report["dropped"]["seen_before"] == 12 and report["kept"] == 18
    assert report["kept"] + sum(report["dropped"].values()) == report["input_rows"] == 30
    stored = pq.read_table(str(c2 / "documents"))
    assert {"text_hash", "bands"} <= set(stored.column_names)
    assert all(len(bands) == report["minhash"]["bands"] for bands in stored.column("bands").to_pylist())


def test_a_corpus_of_the_previous_version_matches_exact_copies_only(
    spark, month_tables, month1_corpus, tmp_path, capsys
):
    _month1, month2 = month_tables
    old = tmp_path / "old"
    shutil.copytree(month1_corpus[0], old)  # (month 1's corpus of the session, changed here)
    # the previous version wrote no _SUCCESS, no band hashes, and a report without "format"
    (old / "_SUCCESS").unlink()
    report = json.loads((old / "_report.json").read_text())
    del report["format"]
    (old / "_report.json").write_text(json.dumps(report))
    frame = spark.read.parquet(str(old / "documents")).drop("bands")
    frame.write.mode("overwrite").parquet(str(tmp_path / "old-docs"))
    (old / "documents").rename(tmp_path / "gone")
    (tmp_path / "old-docs").rename(old / "documents")
    code = cli.main(
        ["corpus", "--input", str(month2), "--output", str(tmp_path / "c2"), "--against", str(old)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert (
        "no band hashes (built before near matching against earlier corpora): matched on exact copies only"
        in printed
    )
    result = json.loads((tmp_path / "c2" / "_report.json").read_text())
    assert result["dropped"]["seen_before"] == 6  # the exact repeats; the near ones are new to it
    assert result["kept"] == 24


def test_viewfs_input_output_and_against_equal_local_paths(
    spark, month_tables, month1_corpus, month2_against_month1, viewfs
):
    """The same build as the session's month 2 ``--against`` month 1 (local paths), on viewfs://:
    its input, its output and its ``--against`` (the session's month 1 corpus, mounted there)."""
    _month1, month2 = month_tables
    root, local = viewfs
    os.symlink(month2, local / "month2")
    os.symlink(month1_corpus[0], local / "c1")  # (read only)
    report = run(spark, [f"{root}/month2"], f"{root}/c2", against=[f"{root}/c1"])
    assert (local / "c2" / "_SUCCESS").exists() and (local / "c2" / "report.md").exists()
    assert report["output"] == f"{root}/c2" and len(report["plots"]) == 5
    assert all((local / "c2" / p).stat().st_size > 1000 for p in report["plots"])
    assert documents(spark, f"{root}/c2") == documents(spark, month2_against_month1[0])
    assert not (local / "c2" / "_staging").exists()


def damaged_table(tmp_path: Path) -> Path:
    table = month_table(tmp_path / "table", texts_of("one", range(10)))
    write_table(
        table,
        "combined",
        [table_row("https://x.example/1", "\n".join(article(99)))],
        batch="20240502T000000-0000beef",
    )
    part = table / "method=combined" / "b20240502T000000-0000beef-part-00000.parquet"
    part.write_bytes(part.read_bytes()[:1000])
    return table


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "--input {tmp}/nothing: no such table directory"),
        ("staged", "is still being written, or its run was killed"),
        ("uncommitted", "holds files of an uncommitted batch"),
        ("damaged", "1 damaged Parquet file(s) (cut short or not Parquet (no footer)): method=combined/"
                    "b20240502T000000-0000beef-part-00000.parquet; rerun with --skip-damaged"),
        ("against_not_corpus", "is not a corpus"),
        ("against_unfinished", "is not finished (no _SUCCESS)"),
        ("unknown_scheme", "cannot be read"),
        ("viewfs_missing", "no such table directory"),
        ("viewfs_output_exists", "exists and is not empty; pass --overwrite"),
        ("output_is_input", "is also an input"),
        ("output_unknown_scheme", "--output nosuchfs://bucket/out: cannot be written"),
    ],
)  # fmt: skip
def test_bad_inputs_are_one_line_exit_2(spark, tmp_path, capsys, viewfs, case, message, request):
    root, local = viewfs
    table = month_table(tmp_path / "good", texts_of("one", range(3)))
    argv = ["--input", str(table), "--output", str(tmp_path / "out")]
    if case == "missing":
        argv[1] = str(tmp_path / "nothing")
    elif case == "staged":
        (table / "_contentx" / "staging" / "20240509T000000-00000000").mkdir(parents=True)
    elif case == "uncommitted":
        (table / "method=combined" / "b20240509T000000-0000dead-part-00000.parquet").write_bytes(b"PAR1")
    elif case == "damaged":
        argv[1] = str(damaged_table(tmp_path))
    elif case == "against_not_corpus":
        argv += ["--against", str(table)]
    elif case == "against_unfinished":  # (a copy of the session's month 1 corpus)
        shutil.copytree(request.getfixturevalue("month1_corpus")[0], tmp_path / "c1")
        (tmp_path / "c1" / "_SUCCESS").unlink()
        argv += ["--against", str(tmp_path / "c1")]
    elif case == "unknown_scheme":
        argv[1] = "nosuchfs://bucket/table"
    elif case == "viewfs_missing":
        argv[1] = f"{root}/nothing"
    elif case == "viewfs_output_exists":
        (local / "out").mkdir()
        (local / "out" / "x").write_text("x")
        argv[3] = f"{root}/out"
    elif case == "output_is_input":
        argv[3] = str(table) + "/"
    elif case == "output_unknown_scheme":
        argv[3] = "nosuchfs://bucket/out"
    assert cli.main(["corpus", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message.format(tmp=tmp_path) in err and "Traceback" not in err


def damaged_inside(tmp_path: Path) -> tuple[Path, str]:
    """A table whose second file keeps its footer but has its column data overwritten."""
    table = month_table(tmp_path / "table", texts_of("one", range(10)))
    batch = "20240502T000000-0000cafe"
    rows = [table_row(f"https://x.example/{i}", "\n".join(article(200 + i))) for i in range(20)]
    write_table(table, "combined", rows, batch=batch)
    part = table / "method=combined" / f"b{batch}-part-00000.parquet"
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[4 : len(data) - 8 - footer] = b"\xff" * (len(data) - 12 - footer)
    part.write_bytes(bytes(data))
    return table, part.name


def test_a_file_damaged_inside_is_named_or_left_out(spark, tmp_path, capsys):
    table, name = damaged_inside(tmp_path)
    argv = ["corpus", "--input", str(table), "--output", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "damaged Parquet file " in err and name in err, err
    report = run(spark, [table], tmp_path / "out2", skip_damaged=True)
    assert report["kept"] == 10 and report["input_rows"] == 10
    [damaged] = report["damaged_files"]
    assert damaged["path"].endswith(name) and damaged["rows"] == 20  # its footer still counts them


def test_skip_damaged_builds_from_the_rest_and_counts_it(spark, tmp_path):
    table = damaged_table(tmp_path)
    report = run(spark, [table], tmp_path / "out", skip_damaged=True)
    assert report["kept"] == 10 and report["input_rows"] == 10
    assert [d["path"].rsplit("/", 1)[-1] for d in report["damaged_files"]] == [
        "b20240502T000000-0000beef-part-00000.parquet"
    ]
    assert report["damaged_files"][0]["rows"] is None  # its footer was cut away
    assert "Damaged input files left out" in (tmp_path / "out" / "report.md").read_text()


def test_a_killed_run_leaves_no_finished_corpus_and_a_rerun_gives_the_same(
    spark, month_tables, month2_corpus, tmp_path
):
    _month1, month2 = month_tables
    reference_dir, reference = month2_corpus
    out = tmp_path / "out"
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    # the job runs as the suite's session: its driver JVM compiles with the JIT's quick tier, its SQL
    # expressions are evaluated without generated code (given as a user gives Spark settings: the
    # run is small, and what is tested is where it is killed)
    env.setdefault("PYSPARK_SUBMIT_ARGS", SESSION_SQL_SUBMIT_ARGS)
    cmd = [
        sys.executable,
        str(REPO / "jobs" / "build_corpus.py"),
        "--input",
        str(month2),
        "--output",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 240
        while not list(out.glob("_staging/*/pass/_SUCCESS")):  # killed after its first pass
            assert proc.poll() is None and time.monotonic() < deadline, (
                "the job ended before it could be killed"
            )
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (out / "_SUCCESS").exists() and not (out / "documents").exists()
    assert cli.main(["corpus", "--input", str(month2), "--output", str(out)]) == 2  # not finished: refused
    rerun = run(spark, [month2], out, overwrite=True)
    assert documents(spark, out) == documents(spark, reference_dir)
    assert rerun["kept"] == reference["kept"] and (out / "_SUCCESS").exists()
    assert not (out / "_staging").exists()


def chinese_months(root: Path):
    """Month 1: three English articles and two Chinese pages (UDHR sentences, shared data) A and B.
    Month 2: the English articles and page A with another date line, and a new Chinese page C."""
    from ..conftest import SHARED, shared_or_skip

    udhr = shared_or_skip(SHARED / "data" / "udhr2" / "cmn_hans.txt").read_text(encoding="utf-8")
    lines = [line.strip() for line in udhr.splitlines() if len(line.strip()) > 12]
    pages = {"a": lines[0:20], "b": lines[22:42], "c": lines[44:64]}
    english = texts_of("en", range(3))
    first = [*english]
    first += [(f"https://zh.example/{k}", "\n".join(["发布于2024年5月3日", *pages[k]])) for k in "ab"]
    second = [
        (f"https://en2.example/{i}", text.replace(DATE, "Updated on 9 June 2024."))
        for i, (_url, text) in enumerate(english)
    ]
    second += [(f"https://zh2.example/{k}", "\n".join(["更新于2024年6月9日", *pages[k]])) for k in "ac"]
    return month_table(root / "zh1", first), month_table(root / "zh2", second, day=9)


def test_chinese_near_copies_match_corpora_of_the_same_word_rule_only(spark, tmp_path, capsys):
    """A Chinese page's near copy is found (dictionary words), a different Chinese page is left
    apart; a corpus built before the words were segmented (``letters``, no rule in its report)
    still matches near copies of English texts, not of Chinese ones, and the job says so."""
    month1, month2 = chinese_months(tmp_path)
    first = run(spark, [month1], tmp_path / "c1")
    assert first["kept"] == 5 and first["minhash"]["words"] == "segmented-2"  # A and B stay apart
    report = run(spark, [month2], tmp_path / "c2", against=[str(tmp_path / "c1")])
    assert report["dropped"]["seen_before"] == 4 and report["kept"] == 1  # C is new
    assert {url for url, _h, _n in documents(spark, tmp_path / "c2")} == {"https://zh2.example/c"}
    assert not report["notes"]

    run(spark, [month1], tmp_path / "old", near_words="letters")
    old = json.loads((tmp_path / "old" / "_report.json").read_text())
    del old["minhash"]["words"]  # as corpora built before the rule was recorded
    (tmp_path / "old" / "_report.json").write_text(json.dumps(old))
    argv = [
        "corpus",
        "--input",
        str(month2),
        "--output",
        str(tmp_path / "c3"),
        "--against",
        str(tmp_path / "old"),
    ]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "built with near-dedup words letters (this build: segmented-2)" in printed
    # the word rule's general note is the report's, not the console's (only the --against note matters there)
    assert "a later --against finds" not in printed
    assert "Near-dedup words: segmented-2; a later --against" in (tmp_path / "c3" / "report.md").read_text()
    result = json.loads((tmp_path / "c3" / "_report.json").read_text())
    assert result["dropped"]["seen_before"] == 3  # the English near copies; not Chinese page A's
    assert {url for url, _h, _n in documents(spark, tmp_path / "c3")} == {
        "https://zh2.example/a",
        "https://zh2.example/c",
    }
