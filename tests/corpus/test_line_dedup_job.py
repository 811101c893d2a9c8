"""``contentx corpus --line-dedup`` end to end: a site's footer and newsletter box removed from its
pages before the quality filters and dedup, the texts written with their hash and length
recomputed, the report's counts and examples; the joined (large) path gives the same corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import line_dedup
from contentx_udf.corpus.config import CorpusConfig
from contentx_udf.text.language import text_hash

from .tables import article, table_row, write_table

pytestmark = pytest.mark.spark

FOOTER = "Copyright 2024 Riverside Gazette. All rights reserved. Contact the newsroom."
NEWSLETTER = "Sign up for the Riverside newsletter and get the week's best stories every Friday."


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """gazette.example: 4 articles with its footer (3 of them with its newsletter box) and a page
    that is only the footer; other.example: 2 articles, one with the same footer."""
    rows = []
    for i in range(4):
        extra = [NEWSLETTER] if i < 3 else []
        text = "\n".join([*article(10 + i, sentences=8), *extra, FOOTER])
        rows.append(table_row(f"https://gazette.example/{i}", text, offset=i))
    rows.append(table_row("https://gazette.example/contact", f"{FOOTER}\n", offset=9))
    rows.append(table_row("https://other.example/1", "\n".join([*article(30), FOOTER]), offset=10))
    rows.append(table_row("https://other.example/2", "\n".join(article(31)), offset=11))
    directory = tmp_path_factory.mktemp("lines") / "table"
    write_table(directory, "combined", rows)
    return directory


def build(spark, tmp_path, table, name="corpus", **kw) -> dict:
    config = CorpusConfig(inputs=[str(table)], output=str(tmp_path / name), dedup="exact", **kw)
    return corpus_job.run(config, spark)


def documents(spark, report) -> dict:
    """``{url: row}`` of the kept documents (read by pyarrow: no Spark job)."""
    return {r["url"]: r for r in pq.read_table(f"{report['output']}/documents").to_pylist()}


@pytest.fixture(scope="module")
def at_k3(spark, crawl, tmp_path_factory) -> dict:
    """The report of the crawl built with --line-dedup at its default K (3: the first test checks
    the report says so), the repeated lines shipped to the workers; read by two tests."""
    return build(spark, tmp_path_factory.mktemp("k3"), crawl, line_dedup=True)


def test_repeated_lines_of_a_host_are_removed_before_the_filters(spark, at_k3):
    report = at_k3
    docs = documents(spark, report)
    gazette = [docs[f"https://gazette.example/{i}"] for i in range(4)]
    assert all(FOOTER not in d["text"] and NEWSLETTER not in d["text"] for d in gazette)
    assert gazette[0]["text"] == "\n".join(article(10, sentences=8))
    for d in docs.values():  # what was written is the text left, with its own hash and length
        assert d["text_hash"] == text_hash(d["text"]) and d["text_length"] == len(d["text"])
    assert FOOTER in docs["https://other.example/1"]["text"]  # the footer once on another host
    assert "https://gazette.example/contact" not in docs  # nothing left of it
    assert report["dropped"]["line_dedup"] == 1
    lines = report["line_dedup"]
    assert (lines["scope"], lines["min_docs"], lines["frequent_lines"]) == ("host", 3, 2)
    assert lines["lines_removed"] == 5 + 3  # the footers (the contact page's too) and the boxes
    assert lines["documents_changed"] == 5
    assert lines["characters_removed"] == 5 * (len(FOOTER) + 1) + 3 * (len(NEWSLETTER) + 1)
    assert [h["host"] for h in lines["top_hosts"]] == ["gazette.example"]
    assert {e["line"] for e in lines["examples"]} == {NEWSLETTER[:80], FOOTER}
    md = (Path(report["output"]) / "report.md").read_text()
    assert "## Repeated lines removed (--line-dedup)" in md and NEWSLETTER[:80] in md


def test_at_k4_the_box_on_three_pages_stays(spark, crawl, tmp_path):
    report = build(spark, tmp_path, crawl, line_dedup=True, line_dedup_min_docs=4)
    docs = documents(spark, report)
    assert all(NEWSLETTER in docs[f"https://gazette.example/{i}"]["text"] for i in range(3))
    assert all(FOOTER not in docs[f"https://gazette.example/{i}"]["text"] for i in range(4))
    assert report["line_dedup"]["frequent_lines"] == 1


def test_global_scope_counts_the_footer_on_both_hosts(spark, crawl, tmp_path):
    report = build(spark, tmp_path, crawl, line_dedup=True, line_dedup_min_docs=6, line_dedup_scope="global")
    docs = documents(spark, report)
    assert FOOTER not in docs["https://other.example/1"]["text"]  # 6 documents over two hosts
    assert all(NEWSLETTER in docs[f"https://gazette.example/{i}"]["text"] for i in range(3))
    per_host = build(spark, tmp_path, crawl, "per-host", line_dedup=True, line_dedup_min_docs=6)
    assert per_host["line_dedup"]["lines_removed"] == 0


def test_the_joined_path_gives_the_same_corpus(spark, crawl, at_k3, tmp_path, monkeypatch):
    shipped = at_k3  # (--line-dedup at its default K, the repeated lines shipped)
    monkeypatch.setattr(line_dedup, "BROADCAST_KEYS", 0)
    joined = build(spark, tmp_path, crawl, "joined", line_dedup=True)
    assert joined["line_dedup"]["joined"] and not shipped["line_dedup"]["joined"]
    a, b = documents(spark, shipped), documents(spark, joined)
    assert {u: d["text"] for u, d in a.items()} == {u: d["text"] for u, d in b.items()}
    assert shipped["line_dedup"]["lines_removed"] == joined["line_dedup"]["lines_removed"] > 0


def test_cli_flags_and_a_bad_k(spark, crawl, tmp_path, capsys):
    out = tmp_path / "cli"
    argv = ["corpus", "--input", str(crawl), "--output", str(out), "--dedup", "none", "--line-dedup"]
    assert cli.main([*argv, "--line-dedup-min-docs", "3", "--line-dedup-min-chars", "40"]) == 0
    report = json.loads((out / "_report.json").read_text())
    assert (report["line_dedup"]["min_docs"], report["line_dedup"]["min_chars"]) == (3, 40)
    assert "repeated lines (host, K=3, N=40)" in capsys.readouterr().out
    assert cli.main([*argv, "--overwrite", "--line-dedup-min-docs", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--line-dedup-min-docs must be" in err


def test_the_quality_filters_judge_the_text_left(spark, tmp_path):
    """A page of a short note and the site's long boilerplate has 50 words only with the
    boilerplate: Gopher's min_words keeps it without --line-dedup and drops it with it."""
    from contentx_udf.corpus.config import build_config, build_parser

    boiler = [
        "Read the full council budget report and every other story from the river desk archive online.",
        "Our weekly newsletter brings the market, harbour and station news to your inbox each Monday.",
        "Tickets for the summer festival and the winter market are sold at the museum and the library.",
    ]
    rows = [
        table_row(f"https://town.example/{i}", "\n".join([*article(40 + i), *boiler]), offset=i)
        for i in range(3)
    ]
    rows.append(
        table_row(
            "https://town.example/note", "\n".join(["The bridge repair ends on Friday.", *boiler]), offset=5
        )
    )
    table = tmp_path / "town"
    write_table(table, "combined", rows)
    kept = {}
    for flag in ([], ["--line-dedup"]):
        args = ["--input", str(table), "--output", str(tmp_path / f"out{len(flag)}"), "--dedup", "none",
                "--filters", "gopher", "--filter-set", "gopher_quality.min_stop_words=off",
                "--filter-set", "gopher_repetition.enabled=false", *flag]  # fmt: skip
        report = corpus_job.run(build_config(build_parser().parse_args(args)), spark)
        kept[bool(flag)] = (set(documents(spark, report)), report["dropped"].get("gopher_quality", 0))
    assert "https://town.example/note" in kept[False][0] and kept[False][1] == 0
    assert "https://town.example/note" not in kept[True][0] and kept[True][1] == 1
    assert len(kept[True][0]) == 3
