"""On a real Spark standalone cluster (one master, two one-core workers on 127.0.0.1) and
against a local S3 server (moto), the job gives the table of a ``local[*]`` run: same keys
(warc_filename, warc_record_offset, method), texts and statuses, with either writer; S3
failures (missing object, missing bucket, denied access) are one line in the file's error
row and the other files are still processed; the driver prints files done / total while it runs.

These are the commands of the manual's "Running on a cluster" (docs/cluster.md).  Nothing leaves 127.0.0.1.
The packed-environment test (venv-pack) is slow and runs only when asked for:
``CONTENTX_PACKED_ENV=1 ./dev.sh test tests/spark/test_cluster.py -m packed_env``
(``tools/packed_env_check.sh``)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from contentx_udf.errors import UserError
from contentx_udf.spark import job
from contentx_udf.spark.config import JobConfig
from contentx_udf.spark.inputs import expand_inputs

from ..conftest import SHARED_WARC, TEST_DATA
from .cluster import CORPUS_JOB, REPO, free_port, run_local, settled

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

SAMPLE = TEST_DATA / "sample.warc.gz"
SMALL_REAL = [
    "cc-2024-22__whirlwind.warc.gz",
    "cc__jwarc-cc.warc.gz",
    "misc__tika-testWARC-multiple.warc.gz",
    "warcprox__warcio-example-iana-chunked.warc",
]


def job_inputs() -> list[Path]:
    real = [SHARED_WARC / "real" / name for name in SMALL_REAL]
    return [SAMPLE] + [p for p in real if p.exists()]  # the sample alone when ../shared is absent


def table_rows(out: Path) -> list[tuple]:
    """(warc_filename, warc_record_offset, method, status, text, error) of every row, sorted."""
    table = ds.dataset(str(out), format="parquet", partitioning="hive").to_table(
        columns=["warc_filename", "warc_record_offset", "method", "status", "text", "error"]
    )
    return sorted(tuple(r.values()) for r in table.to_pylist())


def check_run(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"


@pytest.fixture()
def cluster(standalone_cluster):
    """The session's cluster (tests/conftest.py), settled."""
    return settled(standalone_cluster)


@pytest.fixture(scope="module")
def local_rows(spark, tmp_path_factory):
    """The same job in local mode (the suite's shared session)."""
    out = tmp_path_factory.mktemp("local") / "out"
    job.run(JobConfig(inputs=[str(p) for p in job_inputs()], output=str(out)), spark=spark)
    return table_rows(out)


@pytest.mark.parametrize("writer", ["arrow", "spark"])
def test_cluster_run_equals_local_run(cluster, local_rows, tmp_path, writer):
    out = tmp_path / "out"
    apps_before = len(cluster.state().get("completedapps", []))
    proc = cluster.submit(
        ["--input", *map(str, job_inputs()), "--output", str(out), "--overwrite", "--writer", writer,
         "--progress-seconds", "1", "--show-rows", "1"]
    )  # fmt: skip
    check_run(proc)
    assert "contentx run summary" in proc.stdout
    rows = table_rows(out)
    assert len(rows) > 15
    assert rows == local_rows
    # it ran on the cluster: the master lists the application as completed
    apps = cluster.state().get("completedapps", [])
    assert len(apps) == apps_before + 1 and apps[-1]["name"] == "contentx-extract-warc"
    # the driver's progress line (every second here, and once at the end).
    # spark-submit merges the Python driver's stderr into its stdout.
    console = proc.stdout + proc.stderr
    assert re.search(
        rf"contentx run: files {len(job_inputs())}/{len(job_inputs())} done, records", console
    ), console[-3000:]


# --- the corpus job on a Hadoop filesystem other than the local one (viewfs://) --------------


def corpus_documents(out: Path) -> list[tuple]:
    table = ds.dataset(str(out / "documents"), format="parquet").to_table(
        columns=["url", "text_hash", "duplicate_count", "text"]
    )
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_corpus_job_on_viewfs_equals_local_paths(
    cluster, month_tables, month1_corpus, month2_against_month1, tmp_path
):
    """Input, output and --against as viewfs:// URIs (Spark's bundled Hadoop client mounts
    /data on a local directory), the job submitted to the standalone cluster: its documents are
    those of the same build on local paths (the session's, tests/conftest.py).  Its --against is
    the session's month 1 corpus, mounted read only (building that again on the cluster would
    test the same reads and writes a second time)."""
    data = tmp_path / "data"
    data.mkdir()
    for table in month_tables:
        os.symlink(table, data / table.name)
    os.symlink(month1_corpus[0], data / "c1")
    mount = {"spark.hadoop.fs.viewfs.mounttable.contentx.link./data": data.as_uri()}
    root = "viewfs://contentx/data"
    args = ["--input", f"{root}/month2", "--output", f"{root}/c2", "--against", f"{root}/c1"]
    check_run(cluster.submit(args, conf=mount, job=CORPUS_JOB))
    assert (data / "c2" / "_SUCCESS").exists() and (data / "c2" / "report.md").exists()
    assert corpus_documents(data / "c2") == corpus_documents(month2_against_month1[0])
    report = json.loads((data / "c2" / "_report.json").read_text())
    assert report["output"] == f"{root}/c2" and report["dropped"]["seen_before"] == 12
    assert report["config"]["against"] == [f"{root}/c1"], report["config"].get("against")


# --- S3 (moto's server on 127.0.0.1) ---------------------------------------------------------

CRAWL = "crawl-data/CC-MAIN-2024-22/segments/1715971057216.39/warc/"
DENY_GET = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::denied/*"}
    ],
}


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server on 127.0.0.1: bucket ``crawl`` with the WARCs and a ``warc.paths.gz``
    listing (plus one missing object), bucket ``denied`` whose policy denies GetObject."""
    boto3 = pytest.importorskip("boto3")
    server_mod = pytest.importorskip("moto.server")
    port = free_port()
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    try:
        client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_keys(env))
        client.create_bucket(Bucket="crawl")
        rels = []
        for path in job_inputs():
            rel = CRAWL + path.name
            client.upload_file(str(path), "crawl", rel)
            rels.append(rel)
        listing = "\n".join([*rels, CRAWL + "missing.warc.gz"]) + "\n"
        client.put_object(Bucket="crawl", Key="warc.paths.gz", Body=gzip.compress(listing.encode()))
        client.create_bucket(Bucket="denied")
        client.upload_file(str(SAMPLE), "denied", "sample.warc.gz")
        client.put_bucket_policy(Bucket="denied", Policy=json.dumps(DENY_GET))
        yield env, rels
    finally:
        server.stop()


def _keys(env):
    return {
        "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
        "region_name": env["AWS_DEFAULT_REGION"],
    }


def test_s3_inputs_on_the_cluster(cluster, s3, local_rows, tmp_path):
    env, rels = s3
    out = tmp_path / "out"
    # the workers' executors get the endpoint and credentials through spark.executorEnv.*
    conf = {f"spark.executorEnv.{k}": v for k, v in env.items()}
    proc = cluster.submit(
        ["--input", "s3://crawl/warc.paths.gz", "s3://no-such-bucket/x.warc.gz", "s3://denied/sample.warc.gz",
         "--input-base-url", "s3://crawl/", "--output", str(out), "--overwrite", "--show-rows", "0"],
        conf=conf, env=env,
    )  # fmt: skip
    check_run(proc)
    rows = table_rows(out)
    by_file: dict[str, list[tuple]] = {}
    for row in rows:
        by_file.setdefault(row[0], []).append(row)
    # every uploaded file: warc_filename is the listing's relative path, rows as in local mode
    local = [(CRAWL + Path(r[0]).name, *r[1:]) for r in local_rows]
    assert sorted(r for name in rels for r in by_file[name]) == sorted(local)
    # each failure: one error row with one readable line, the other files processed
    errors = {
        CRAWL + "missing.warc.gz": "no such S3 object",
        "s3://no-such-bucket/x.warc.gz": "bucket 'no-such-bucket' does not exist",
        "s3://denied/sample.warc.gz": "S3 access denied",
    }
    for name, expected in errors.items():
        [(_name, offset, method, status, text, error)] = by_file[name]
        assert (offset, method, status, text) == (None, "none", "error", None)
        assert expected in error and "\n" not in error and "Traceback" not in error, error
    summary = json.loads((out / "_summary.json").read_text())
    assert set(summary["file_errors"]) == set(errors)


def test_s3_missing_listing_is_one_clear_line(s3, tmp_path, monkeypatch):
    env, _rels = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(UserError, match=r"cannot read input listing s3://crawl/nothing/\S+: .*no such S3"):
        expand_inputs(["s3://crawl/nothing/warc.paths.gz"], "s3://crawl/")
    # and from the command line: exit 2, one line on stderr, no stack trace
    listing = ["--input", "s3://nob/warc.paths.gz", "--input-base-url", "s3://nob/"]
    proc = run_local([*listing, "--output", str(tmp_path / "o")], env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "bucket 'nob' does not exist" in lines[0], proc.stderr


def test_s3_error_codes_map_to_one_line():
    """The mapping itself, for codes moto does not produce (a botocore ClientError)."""
    from botocore.exceptions import ClientError

    from contentx_udf.warc.inputs import _s3_error

    def err(code, message=""):
        return ClientError({"Error": {"Code": code, "Message": message}}, "GetObject")

    assert isinstance(_s3_error(err("AccessDenied", "Access Denied"), "s3://b/k", "b"), PermissionError)
    assert isinstance(_s3_error(err("InvalidAccessKeyId"), "s3://b/k", "b"), PermissionError)
    assert isinstance(_s3_error(err("NoSuchKey"), "s3://b/k", "b"), FileNotFoundError)
    slow = _s3_error(err("SlowDown", "Please reduce your request rate."), "s3://b/k", "b")
    assert str(slow) == "S3 error for s3://b/k: SlowDown Please reduce your request rate."


# --- packed environment (venv-pack), slow: only when asked for -------------------------------


@pytest.mark.packed_env
@pytest.mark.skipif(not os.environ.get("CONTENTX_PACKED_ENV"), reason="slow; CONTENTX_PACKED_ENV=1 runs it")
def test_packed_environment_on_the_cluster(cluster, local_rows, tmp_path):
    """``venv-pack`` archive of a fresh venv with contentx installed (not editable), shipped
    with ``--archives env.tar.gz#env``; the executors run ``./env/bin/python``."""
    archive = os.environ.get("CONTENTX_PACKED_ENV_ARCHIVE")
    if not archive:
        archive = str(tmp_path / "contentx-env.tar.gz")
        script = REPO / "tools" / "packed_env_check.sh"
        subprocess.run(["bash", str(script), "--build-only", archive], check=True)
    out = tmp_path / "out"
    proc = cluster.submit(
        ["--input", *map(str, job_inputs()), "--output", str(out), "--overwrite", "--show-rows", "0"],
        archives=f"{archive}#env",
        conf={"spark.pyspark.python": "./env/bin/python", "spark.pyspark.driver.python": sys.executable},
        timeout=600,
    )
    check_run(proc)
    assert table_rows(out) == local_rows
    # the archive carries the compiled passes (built by the non-editable install) and the
    # executors ran them
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["compiled_passes"] == "on"
    assert summary["compiled_language_id"] == "on"  # the archive carries text/_lid too
