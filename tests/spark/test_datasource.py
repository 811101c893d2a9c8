"""``spark.read.format("warc")`` (contentx_udf.spark.datasource) gives the reader's records with the job's
columns, on real and generated WARC files."""

from __future__ import annotations

import gzip
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from contentx_udf.spark import config as job_config
from contentx_udf.spark import datasource
from contentx_udf.spark import inputs as job_inputs
from contentx_udf.spark import worker as job_worker
from contentx_udf.warc.reader import iter_warc_rows

from ..conftest import SHARED_WARC, TEST_DATA, shared_or_skip, warcio_records

SAMPLE = TEST_DATA / "sample.warc.gz"
WARC_DIR = TEST_DATA / "warc"
HOSTILE = SHARED_WARC / "fixtures" / "hostile.warc.gz"
CONTENT_TYPES = {"response", "revisit", "resource"}

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def warc(spark):
    """A fresh ``spark.read.format("warc")`` per call (a DataFrameReader keeps its options)."""
    datasource.register(spark)
    return lambda: spark.read.format("warc")


def make_warc(path: Path) -> None:
    """Every record type the reader distinguishes, one gzip member each."""
    html = b"<html><head><title>T</title></head><body><p>" + b"Hello world. " * 50 + b"</p></body></html>"

    def http(ctype: str, body: bytes) -> StatusAndHeaders:
        return StatusAndHeaders(
            "200 OK",
            [("Content-Type", ctype), ("Content-Length", str(len(body)))],
            protocol="HTTP/1.1",
        )

    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        w.write_record(w.create_warcinfo_record(path.name, {"software": "contentx tests"}))
        req = w.create_warc_record(
            "http://example.org/a.html",
            "request",
            payload=io.BytesIO(b"GET /a.html HTTP/1.1\r\nHost: example.org\r\n\r\n"),
        )
        w.write_record(req)
        for uri, ctype, body in [
            ("http://example.org/a.html", "text/html; charset=utf-8", html),
            ("http://example.org/b.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100),
            ("http://example.org/c.html", "text/html", html.replace(b"Hello", b"Again")),
        ]:
            w.write_record(
                w.create_warc_record(
                    uri, "response", payload=io.BytesIO(body), http_headers=http(ctype, body)
                )
            )
        w.write_record(
            w.create_revisit_record(
                "http://example.org/a.html",
                digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                refers_to_uri="http://example.org/a.html",
                refers_to_date="2024-01-01T00:00:00Z",
            )
        )
        for uri, rtype, body, ctype in [
            ("urn:example:notes.txt", "resource", b"plain text resource", "text/plain"),
            ("http://example.org/a.html", "metadata", b"fetchTimeMs: 12\r\n", "application/warc-fields"),
        ]:
            w.write_record(
                w.create_warc_record(uri, rtype, payload=io.BytesIO(body), warc_content_type=ctype)
            )


# --- schema --------------------------------------------------------------------------------


def test_schema_is_the_jobs_record_columns_plus_payload(warc):
    df = warc().load(str(SAMPLE))
    assert df.schema == datasource.record_schema()
    extraction = {
        "method",
        "title",
        "text",
        "text_length",
        "language",
        "language_score",
        "text_hash",
        "scores",
    }
    expected = [(n, t) for n, t in job_worker.OUTPUT_COLUMNS if n not in extraction]
    expected += [("http_content_type", "string"), ("payload", "binary")]
    spark_names = {"long": "bigint"}
    got = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    assert got == [(n, spark_names.get(t, t)) for n, t in expected]
    assert all(f.nullable for f in df.schema.fields)
    # job output and data source agree on the types of the shared columns
    job_types = {f.name: f.dataType for f in job_worker.spark_schema().fields}
    for f in df.schema.fields:
        if f.name in job_types:
            assert f.dataType == job_types[f.name], f.name


def test_arrow_schema_is_exactly_what_spark_checks():
    """Spark compares the first batch with to_arrow_schema(schema, timezone="UTC") (Schema.equals)."""
    types = {
        "string": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "int": pa.int32(),
        "long": pa.int64(),
        "binary": pa.binary(),
    }
    expected = pa.schema([pa.field(n, types[t], nullable=True) for n, t in datasource.RECORD_COLUMNS])
    assert datasource.arrow_schema().equals(expected)
    batch = next(datasource.record_batches(str(SAMPLE), str(SAMPLE)))
    assert batch.schema.equals(expected)
    # the job's own Arrow schema agrees on the shared columns
    job_arrow = job_worker.arrow_schema()
    for field in expected:
        if field.name in job_arrow.names:
            assert job_arrow.field(field.name).type == field.type, field.name


# --- record accounting ------------------------------------------------------------------------


def test_every_content_record_of_the_sample_exactly_once(warc):
    rows = warc().load(str(SAMPLE)).collect()
    truth = [t for t in warcio_records(SAMPLE) if t["type"] in CONTENT_TYPES]
    assert truth
    got = Counter((r["warc_record_offset"], r["warc_type"], r["url"], r["warc_record_id"]) for r in rows)
    want = Counter((t["offset"], t["type"], t["uri"], t["id"]) for t in truth)
    assert got == want
    assert {r["warc_filename"] for r in rows} == {str(SAMPLE)}


def test_rows_are_the_warc_readers_rows(warc):
    """The data source adds nothing and loses nothing of what WarcReader yields."""
    rows = warc().option("maxHtmlBytes", 5000).load(str(SAMPLE)).collect()
    direct = list(iter_warc_rows(str(SAMPLE), str(SAMPLE), max_html_bytes=5000))
    assert len(rows) == len(direct)
    for row, rec in zip(rows, direct, strict=True):
        for name in ("url", "fetch_status", "content_mime_type", "content_digest", "warc_record_length"):
            assert row[name] == getattr(rec, name), name
        assert row["fetch_time"].replace(tzinfo=None) == rec.fetch_time.replace(tzinfo=None)
        assert row["status"] == rec.status and row["error"] == rec.error
        assert row["http_content_type"] == rec.http_content_type
        assert row["notes"] == ("; ".join(rec.notes) if rec.notes else None)
        assert row["payload"] == (rec.payload if rec.is_html else None)
    cut = [r for r in rows if r["payload"] is not None and r["notes"] and "payload cut" in r["notes"]]
    assert cut and all(len(r["payload"]) == 5000 for r in cut)


def test_fetch_time_is_the_same_instant_in_any_session_time_zone(spark, warc):
    """Batches are built in UTC whatever spark.sql.session.timeZone says; the instant is kept."""
    from pyspark.sql import functions as F

    direct = {r.warc_record_offset: r.fetch_time for r in iter_warc_rows(str(SAMPLE))}
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        rows = (
            warc()
            .load(str(SAMPLE))
            .select("warc_record_offset", F.unix_timestamp("fetch_time").alias("epoch"))
            .collect()
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert rows
    for r in rows:
        assert r["epoch"] == int(direct[r["warc_record_offset"]].timestamp())


def test_all_content_types_and_no_other(warc, tmp_path):
    path = tmp_path / "types.warc.gz"
    make_warc(path)
    truth = warcio_records(path)
    assert {t["type"] for t in truth} >= CONTENT_TYPES | {"request", "warcinfo", "metadata"}
    rows = warc().load(str(path)).collect()
    assert Counter((r["warc_record_offset"], r["warc_type"]) for r in rows) == Counter(
        (t["offset"], t["type"]) for t in truth if t["type"] in CONTENT_TYPES
    )
    by_uri = {(r["warc_type"], r["url"]): r for r in rows}
    page = by_uri[("response", "http://example.org/a.html")]
    assert page["status"] == "ok" and page["payload"].startswith(b"<html>")
    assert page["http_content_type"] == "text/html; charset=utf-8" and page["fetch_status"] == 200
    image = by_uri[("response", "http://example.org/b.png")]
    assert image["status"] == "skipped" and image["payload"] is None and "not HTML" in image["error"]
    revisit = by_uri[("revisit", "http://example.org/a.html")]
    assert revisit["status"] == "skipped" and revisit["payload"] is None
    resource = by_uri[("resource", "urn:example:notes.txt")]
    assert resource["status"] == "skipped" and resource["payload"] is None


def test_rows_join_back_to_their_record_by_offset(warc, tmp_path):
    path = tmp_path / "types.warc.gz"
    make_warc(path)
    for source in (SAMPLE, path):
        rows = (
            warc()
            .load(str(source))
            .select(
                "warc_filename", "warc_record_offset", "warc_record_length", "warc_record_id", "warc_type"
            )
        )
        data = source.read_bytes()
        for r in rows.collect():
            member = data[r["warc_record_offset"] : r["warc_record_offset"] + r["warc_record_length"]]
            recs = list(ArchiveIterator(io.BytesIO(member)))
            assert len(recs) == 1, r
            assert recs[0].rec_headers.get_header("WARC-Record-ID") == r["warc_record_id"]
            assert recs[0].rec_type == r["warc_type"]


# --- inputs --------------------------------------------------------------------------------


def test_directory_input_one_partition_per_file(warc, tmp_path):
    inputs = tmp_path / "in"
    (inputs / "sub").mkdir(parents=True)
    shutil.copy(SAMPLE, inputs / "a.warc.gz")
    for f in WARC_DIR.iterdir():
        shutil.copy(f, inputs / "sub" / f.name)
    (inputs / "README.txt").write_text("not a WARC, not picked up\n")
    df = warc().load(str(inputs))
    files = [name for _loc, name in job_inputs.expand_inputs([str(inputs)], None)]
    assert len(files) == 3
    assert df.rdd.getNumPartitions() == len(files)
    per_file = Counter(r["warc_filename"] for r in df.select("warc_filename").collect())
    assert set(per_file) == set(files)
    for name in files:
        want = sum(1 for t in warcio_records(Path(name)) if t["type"] in CONTENT_TYPES)
        assert per_file[name] == want, name
    # a list of inputs and a glob give the same files
    listed = warc().load([str(inputs / "a.warc.gz"), str(inputs / "sub")])
    globbed = warc().load(str(inputs / "**" / "*.warc*"))
    for other in (listed, globbed):
        assert Counter(r["warc_filename"] for r in other.select("warc_filename").collect()) == per_file


def test_listing_with_base_url(warc, tmp_path):
    mirror = tmp_path / "mirror"
    rel = "crawl-data/CC-MAIN-2024-22/segments/1715971057216.39/warc/sample.warc.gz"
    (mirror / rel).parent.mkdir(parents=True)
    shutil.copy(SAMPLE, mirror / rel)
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress((rel + "\n").encode()))
    rows = warc().option("inputBaseUrl", str(mirror)).load(str(listing)).collect()
    assert rows and {r["warc_filename"] for r in rows} == {rel}
    assert {(r["crawl"], r["warc_segment"]) for r in rows} == {("CC-MAIN-2024-22", "1715971057216.39")}


def test_bad_inputs_and_options_fail_at_planning(warc, tmp_path):
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException, match="input not found"):
        warc().load(str(tmp_path / "missing.warc.gz")).count()
    with pytest.raises(PySparkException, match="maxHtmlBytes must be an integer"):
        warc().option("maxHtmlBytes", "lots").load(str(SAMPLE)).count()
    with pytest.raises(PySparkException, match="no input given"):
        warc().load().count()
    with pytest.raises(PySparkException, match="unknown column"):
        warc().schema("url string, text string").load(str(SAMPLE)).count()
    with pytest.raises(PySparkException, match="has type bigint, not int"):
        warc().schema("warc_record_offset int").load(str(SAMPLE)).count()
    with pytest.raises(PySparkException, match="is nullable"):
        warc().schema("url string not null").load(str(SAMPLE)).count()


def test_a_schema_may_select_columns(warc):
    df = warc().schema("warc_record_offset long, status string, warc_filename string").load(str(SAMPLE))
    rows = df.collect()
    assert len(rows) == sum(1 for t in warcio_records(SAMPLE) if t["type"] in CONTENT_TYPES)
    assert {r["warc_filename"] for r in rows} == {str(SAMPLE)} and {r["status"] for r in rows} == {"ok"}


# --- damage ----------------------------------------------------------------------------------


def test_damaged_and_foreign_files_give_rows_not_failures(warc, tmp_path):
    data = SAMPLE.read_bytes()
    truth = [t for t in warcio_records(SAMPLE) if t["type"] in CONTENT_TYPES]
    cut_at = truth[5]["offset"] + truth[5]["length"] // 2
    (tmp_path / "cut.warc.gz").write_bytes(data[:cut_at])
    (tmp_path / "text.warc").write_text("this is not a WARC file\n" * 10)
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    (tmp_path / "flipped.warc.gz").write_bytes(data[:cut_at] + bytes(64) + data[cut_at + 64 :])
    rows = warc().load(str(tmp_path)).collect()
    by_file: dict[str, list] = {}
    for r in rows:
        by_file.setdefault(Path(r["warc_filename"]).name, []).append(r)
    assert set(by_file) == {"cut.warc.gz", "text.warc", "empty.warc.gz", "flipped.warc.gz"}
    for name in ("cut.warc.gz", "flipped.warc.gz"):
        got = by_file[name]
        intact = {t["offset"] for t in truth[:5]}
        assert intact <= {r["warc_record_offset"] for r in got if r["status"] == "ok"}, name
        assert any(r["status"] == "error" for r in got), name
    (foreign,) = by_file["text.warc"]
    assert foreign["status"] == "error" and foreign["warc_type"] is None
    assert foreign["error"].startswith("not a WARC file")
    (empty,) = by_file["empty.warc.gz"]
    assert empty["status"] == "skipped" and empty["error"] == "empty file: no WARC records"


def test_unreadable_file_gives_an_error_row_or_raises_on_request(tmp_path):
    missing = str(tmp_path / "gone.warc.gz")
    (batch,) = list(datasource.record_batches(missing, "gone.warc.gz"))
    (row,) = batch.to_pylist()
    assert row["status"] == "error" and row["error"].startswith(f"cannot read {missing}: FileNotFoundError")
    assert row["warc_filename"] == "gone.warc.gz" and row["warc_type"] is None
    strict = datasource.WarcReaderOptions(fail_on_read_error=True)
    with pytest.raises(FileNotFoundError):
        list(datasource.record_batches(missing, "gone.warc.gz", options=strict))


def test_batches_are_bounded_in_rows_and_payload_bytes():
    small = datasource.WarcReaderOptions(rows_per_batch=5)
    batches = list(datasource.record_batches(str(SAMPLE), str(SAMPLE), options=small))
    total = sum(b.num_rows for b in batches)
    assert total == sum(1 for t in warcio_records(SAMPLE) if t["type"] in CONTENT_TYPES)
    assert all(b.num_rows <= 5 for b in batches)
    by_bytes = datasource.WarcReaderOptions(max_batch_payload_bytes=50_000)
    batches = list(datasource.record_batches(str(SAMPLE), str(SAMPLE), options=by_bytes))
    assert sum(b.num_rows for b in batches) == total and len(batches) > 1
    for b in batches:  # a batch closes as soon as it reaches the bound: at most one payload over it
        sizes = [len(p) for p in b.column("payload").to_pylist() if p]
        assert sum(sizes[:-1]) < 50_000


# --- hostile fixture -------------------------------------------------------------------------


def test_hostile_fixture(warc):
    shared_or_skip(HOSTILE)
    manifest = json.loads(HOSTILE.with_name("hostile.manifest.json").read_text())
    rows = warc().load(str(HOSTILE)).collect()
    by_offset = {r["warc_record_offset"]: r for r in rows}
    responses = [rec for rec in manifest["records"] if rec["warc_type"] == "response"]
    assert len(rows) == len(responses) == len(by_offset)
    for rec in responses:
        row = by_offset[rec["offset"]]
        special = rec["special"]
        assert row["warc_record_id"] == rec["record_id"], special
        if special == "truncated-gzip-member":
            assert row["status"] == "error" and row["error"].startswith("truncated"), row["error"]
            assert row["payload"] is None
        elif rec["expect_text"]:
            assert row["status"] == "ok" and row["payload"], special
        else:
            assert row["status"] == "skipped" and row["error"] and row["payload"] is None, special
    huge = by_offset[67648]
    assert len(huge["payload"]) == job_config.DEFAULT_MAX_HTML_BYTES and "payload cut" in huge["notes"]
    uncut = warc().option("maxHtmlBytes", 0).load(str(HOSTILE)).where("warc_record_offset = 67648")
    assert len(uncut.first()["payload"]) > 5_000_000
