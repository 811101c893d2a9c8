"""The corpus job keeps one document per distinct text (exact copies across WARC copies, near copies
differing by a sentence or a date line), keeps different articles of one site apart, counts what every
filter drops (kept + dropped = input) and writes its report; bad input is one line, exit 2."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import CorpusConfig
from contentx_udf.errors import UserError
from contentx_udf.spark import job as extract_job
from contentx_udf.spark.config import JobConfig

from ..conftest import TEST_DATA
from .tables import article, table_row, write_table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def site_table(tmp_path_factory):
    """One site: article A fetched three times (once with an extra sentence, once with another date
    line), two other articles B and C, a short page, a German page and a failed extraction."""
    a, b, c = article(1), article(2), article(3)
    date = "Published on 1 May 2024 by the city desk."
    rows = [
        table_row("https://news.example/a", "\n".join([date, *a]), day=3, offset=1),
        table_row(
            "https://news.example/a?ref=home",
            "\n".join([date, *a[:15], "A late update was added.", *a[15:]]),
            day=4,
            offset=2,
        ),
        table_row(
            "https://news.example/a-print",
            "\n".join(["Published on 2 May 2024 by the city desk.", *a]),
            day=5,
            offset=3,
        ),
        table_row("https://news.example/b", "\n".join([date, *b]), day=6, offset=4),
        table_row("https://news.example/c", "\n".join([date, *c]), day=7, offset=5),
        table_row("https://news.example/short", "Contact us.", day=8, offset=6),
        table_row(
            "https://news.example/de",
            "Der Gemeinderat hat am Dienstag nach langer Debatte den neuen Haushalt beschlossen; "
            "umstritten waren vor allem die Kosten für den Nahverkehr und die Sanierung der alten Brücke.",
            day=9,
            offset=7,
        ),
        table_row("https://news.example/broken", None, status="error", day=10, offset=8),
    ]
    directory = tmp_path_factory.mktemp("site") / "table"
    write_table(directory, "cectd-ds", rows)
    write_table(
        directory,
        "combined",
        [
            table_row(
                "https://news.example/a",
                "\n".join(a),
                offset=1,
                scores={"content_confidence": 0.9, "page_type_article": 0.7, "page_type_forum": 0.3},
            ),
            table_row(
                "https://news.example/b",
                "\n".join(b),
                offset=4,
                scores={"content_confidence": 0.2, "page_type_article": 0.4, "page_type_product": 0.6},
            ),
        ],
    )
    return directory


def run(spark, tmp_path, inputs, **kw) -> dict:
    config = CorpusConfig(inputs=[str(i) for i in inputs], output=str(tmp_path / "corpus"), **kw)
    return corpus_job.run(config, spark)


def kept_rows(spark, report) -> list:
    """The kept documents by URL (read by pyarrow: no Spark job)."""
    return sorted(pq.read_table(f"{report['output']}/documents").to_pylist(), key=lambda r: r["url"])


def test_near_dedup_filters_and_report(spark, site_table, tmp_path):
    report = run(spark, tmp_path, [site_table], method="cectd-ds", languages=("en",), min_chars=100)
    kept = kept_rows(spark, report)
    # A once (its first fetch, standing for its 3 copies), B and C kept apart though they share a line
    assert [r["url"] for r in kept] == [
        "https://news.example/a",
        "https://news.example/b",
        "https://news.example/c",
    ]
    assert [r["duplicate_count"] for r in kept] == [3, 1, 1]
    assert all(r["language"] == "en" and r["host"] == "news.example" for r in kept)
    assert report["input_rows"] == 8
    assert report["dropped"] == {
        "status": 1,
        "language": 1,
        "min_chars": 1,
        "min_confidence": 0,
        "page_type": 0,
        **dict.fromkeys(("url", "language_score", "gopher_repetition", "gopher_quality", "c4", "fineweb"), 0),
        "exact_duplicate": 0,
        "near_duplicate": 2,
        "seen_before": 0,
    }
    assert report["kept"] == 3 and report["kept"] + sum(report["dropped"].values()) == report["input_rows"]
    out = tmp_path / "corpus"
    on_disk = json.loads((out / "_report.json").read_text())
    assert on_disk["kept"] == 3 and on_disk["cluster_sizes"] == {"1": 2, "3": 1}
    assert on_disk["languages"] == [
        {"language": "en", "documents": 3, "characters": report["kept_characters"]}
    ]
    assert sum(on_disk["text_length_histogram"].values()) == 3
    assert on_disk["top_hosts"] == [{"host": "news.example", "documents": 3}]
    md = (out / "report.md").read_text()
    assert "| dropped: near_duplicate | 2 |" in md and "| **kept** | **3** |" in md
    for plot in on_disk["plots"]:
        assert (out / plot).stat().st_size > 1000 and f"]({plot})" in md
    assert len(on_disk["plots"]) == 5


def test_keep_longest_and_no_dedup(spark, site_table, tmp_path):
    report = run(spark, tmp_path, [site_table], method="cectd-ds", languages=("en",), keep="longest")
    urls = [r["url"] for r in kept_rows(spark, report)]
    assert (
        "https://news.example/a?ref=home" in urls and "https://news.example/a" not in urls
    )  # the longer copy
    assert report["dropped"]["near_duplicate"] == 2
    # --overwrite replaces all of a contentx output, another layout's entries too (an extraction
    # table's, written into the same folder): the corpus is not mixed in with them
    write_table(tmp_path / "corpus", "combined", [table_row("https://x.example/1", "Old text.")])
    report = run(spark, tmp_path, [site_table], method="cectd-ds", dedup="none", overwrite=True)
    assert (
        report["kept"] == 7 and report["dropped"]["status"] == 1
    )  # the short page is kept without --min-chars
    assert sorted(p.name for p in (tmp_path / "corpus").iterdir()) == [
        "README.md", "_SUCCESS", "_report.json", "documents", "plots", "report.md"
    ]  # fmt: skip


def test_min_confidence_filters_only_rows_with_a_confidence(spark, site_table, tmp_path):
    report = run(spark, tmp_path, [site_table], method="combined", min_confidence=0.5, dedup="exact")
    assert [r["url"] for r in kept_rows(spark, report)] == ["https://news.example/a"]
    assert report["dropped"]["min_confidence"] == 1
    report = run(
        spark, tmp_path, [site_table], method="cectd-ds", min_confidence=0.5, dedup="none", overwrite=True
    )
    assert report["dropped"]["min_confidence"] == 0  # cectd-ds reports no confidence: every row passes


def test_page_types_keep_the_pages_whose_most_probable_type_is_listed(spark, site_table, tmp_path):
    report = run(spark, tmp_path, [site_table], method="combined", page_types=("article",), dedup="none")
    assert [r["url"] for r in kept_rows(spark, report)] == ["https://news.example/a"]
    assert report["dropped"]["page_type"] == 1  # b is most probably a product page
    report = run(
        spark, tmp_path, [site_table], method="combined", page_types=("product", "forum"), overwrite=True
    )
    assert [r["url"] for r in kept_rows(spark, report)] == ["https://news.example/b"]
    report = run(spark, tmp_path, [site_table], method="cectd-ds", page_types=("product",), overwrite=True)
    assert report["dropped"]["page_type"] == 0  # cectd-ds reports no page types: every row passes
    assert "page types product" in (tmp_path / "corpus" / "report.md").read_text()


def test_a_table_whose_run_did_not_finish_is_built_and_said_unfinished(spark, site_table, tmp_path, capsys):
    """Batch markers and no ``_summary.json``: a run killed between batches (or still running).  The
    corpus is built from the committed batches, and the summary and report say so."""
    table = tmp_path / "table"
    shutil.copytree(site_table, table)
    (table / "_summary.json").unlink()
    out = tmp_path / "corpus"
    code = cli.main(
        ["corpus", "--input", str(table), "--output", str(out), "--method", "cectd-ds", "--dedup", "exact"]
    )
    assert code == 0
    note = (
        f"--input {table} is unfinished (no _summary.json: its run was killed or is still running); "
        "built from its 1 committed batch(es) only; `contentx run --resume` finishes it"
    )
    assert f"  note: {note}" in capsys.readouterr().out.splitlines()
    report = json.loads((out / "_report.json").read_text())
    assert report["notes"] == [note] and report["input_rows"] == 8
    assert f"Note: {note}" in (out / "report.md").read_text()


def test_a_small_local_build_launches_a_short_driver_jvm(site_table, tmp_path, monkeypatch, capsys):
    """Local inputs of at most SHORT_BUILD_MAX_BYTES of Parquet (``--against`` corpora counted):
    the quick JIT tier and the serial collector; another filesystem or a missing path: the JVM's
    defaults (no Spark here: the options are chosen before the JVM starts)."""
    short = corpus_job.SHORT_BUILD_JAVA_OPTIONS
    assert short == "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    small = CorpusConfig(inputs=[str(site_table)], output=str(tmp_path / "out"))
    assert corpus_job.driver_java_options(small) == short
    size = sum(f.stat().st_size for f in site_table.rglob("*.parquet"))
    assert size > 0
    assert corpus_job.small_local_inputs(small, limit=size)
    assert not corpus_job.small_local_inputs(small, limit=size - 1)
    against = CorpusConfig(inputs=[str(site_table)], against=[str(site_table)], output=str(tmp_path / "o"))
    assert corpus_job.small_local_inputs(against, limit=2 * size)
    assert not corpus_job.small_local_inputs(against, limit=2 * size - 1)
    assert corpus_job.driver_java_options(CorpusConfig(inputs=[f"file://{site_table}"], output="o")) == short
    for elsewhere in ("viewfs://cluster/table", str(tmp_path / "missing")):
        assert corpus_job.driver_java_options(CorpusConfig(inputs=[elsewhere], output="o")) == ""
    # `contentx corpus` launches its JVM with them
    launched = []

    def spark_session(name, options="", verbose=False):
        launched.append(options)
        raise UserError("stopped before the JVM")

    monkeypatch.setattr(corpus_job, "spark_session", spark_session)
    monkeypatch.setattr(corpus_job, "check_java", lambda: None)
    assert cli.main(["corpus", "--input", str(site_table), "--output", str(tmp_path / "c")]) == 2
    assert launched == [short] and "stopped before the JVM" in capsys.readouterr().err
    monkeypatch.setattr(corpus_job, "SHORT_BUILD_MAX_BYTES", size - 1)
    assert cli.main(["corpus", "--input", str(site_table), "--output", str(tmp_path / "c")]) == 2
    assert launched == [short, ""]


def test_exact_dedup_across_copies_of_a_warc(spark, tmp_path, capsys):
    copies = tmp_path / "warcs"
    copies.mkdir()
    for i in range(3):
        shutil.copy(TEST_DATA / "sample.warc.gz", copies / f"copy{i}.warc.gz")
    table = tmp_path / "table"
    # the default method end to end: extraction, then the corpus job (both default to it)
    extract_job.run(JobConfig(inputs=[str(copies)], output=str(table)), spark=spark)
    rows = spark.read.parquet(str(table)).where("status = 'ok'").select("text_hash").collect()
    distinct = len({r["text_hash"] for r in rows})
    assert len(rows) == 3 * distinct
    code = cli.main(
        ["corpus", "--input", str(table), "--output", str(tmp_path / "corpus"), "--dedup", "exact"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "corpus" / "_report.json").read_text())
    assert f"kept: {distinct} documents" in printed
    assert "unfinished" not in printed and not report["notes"]  # the job's table is finished
    assert report["kept"] == distinct and report["dropped"]["exact_duplicate"] == 2 * distinct
    kept = pq.read_table(str(tmp_path / "corpus" / "documents")).to_pylist()
    assert len({r["text_hash"] for r in kept}) == len(kept) == distinct
    assert {r["duplicate_count"] for r in kept} == {3}
    assert {r["warc_filename"].rsplit("/", 1)[-1] for r in kept} == {
        "copy0.warc.gz"
    }  # same fetch time: ties by id
    # what extracted the table: in its batch marker and summary, and in the corpus's card
    import hashlib

    from contentx_udf import __version__
    from contentx_udf.methods.block_model import SHIPPED_MODEL

    sha = hashlib.sha256(SHIPPED_MODEL.read_bytes()).hexdigest()
    (marker,) = (table / "_contentx" / "batches").glob("*.json")
    recorded = json.loads(marker.read_text())["extraction"]
    assert recorded == json.loads((table / "_summary.json").read_text())["extraction"]
    assert recorded == {
        "contentx": __version__,
        "methods": {"combined": {"model": "combined.npz (shipped)", "model_sha256": sha, "mode": "balanced"}},
    }
    assert report["inputs"][0]["extraction"] == [recorded]
    card = (tmp_path / "corpus" / "README.md").read_text()
    assert f"contentx {__version__}: `combined` with model combined.npz (shipped) (SHA-256 `{sha}`" in card


@pytest.mark.parametrize(
    "args, message",
    [
        (["--input", "{tmp}/nothing"], "no such table directory"),
        (["--input", "{tmp}/notatable"], "is not an extraction table"),
        (
            ["--input", "{site}", "--method", "cetr"],
            "method 'cetr' is not in the input table(s); methods there: cectd-ds, combined",
        ),
        (["--input", "{site}", "--languages", "en,klingon"], "unknown language code(s): klingon"),
        (["--input", "{site}", "--near-threshold", "1.5"], "--near-threshold must be in (0, 1]"),
        (["--input", "{site}", "--against", "{tmp}", "--dedup", "none"], "--against compares documents"),
        (["--input", "{site}", "--bands", "4"], "--bands and --rows go together"),
        (["--input", "{site}", "--filters", "refinedweb"], "unknown filter preset 'refinedweb'"),
        (
            ["--input", "{site}", "--page-types", "article,blog"],
            "--page-types: unknown page type(s) ['blog']",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(spark, site_table, tmp_path, capsys, args, message):
    (tmp_path / "notatable").mkdir()
    (tmp_path / "notatable" / "notes.txt").write_text("hello")
    argv = [a.format(tmp=tmp_path, site=site_table) for a in args] + ["--output", str(tmp_path / "out")]
    assert cli.main(["corpus", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err


def test_existing_output_needs_overwrite(spark, site_table, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    assert cli.main(["corpus", "--input", str(site_table), "--output", str(tmp_path / "out")]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
