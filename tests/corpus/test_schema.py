"""The pass table's schema is defined once (``corpus/schema.py``): the build's pass, ``texts/``,
the documents, the signals ``select`` reads and ``select``'s own pass table all follow it, and a
column added there alone reaches each of them."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import schema, select
from contentx_udf.corpus.config import config_from_argv
from contentx_udf.corpus.quality.signals import SIGNALS
from contentx_udf.corpus.signals import IDENTITY, OUTCOME

from .tables import month_table, texts_of


def _signals_table_columns() -> set[str]:
    return {name for name, _, _ in (*IDENTITY, *OUTCOME)} | {s.name for s in SIGNALS}


def test_what_select_reads_from_the_signals_is_in_the_signals_table():
    read = {re.split(r"\s+as\s+", c)[-1] for c in select.signal_columns_read()}
    assert read - _signals_table_columns() == set()


def test_the_signals_table_reads_only_pass_columns():
    """Each identity and outcome expression of the signals names columns of the ``--signals``
    pass (or dedup's outcome columns, joined in)."""
    names = {name for name, _ in schema.pass_columns(["m"], signals=True)}
    names |= {"outcome", "cluster", "cluster_size"}
    for column, sql, _ in (*IDENTITY, *OUTCOME):
        words = set(re.findall(r"[a-z_]+", sql)) - {"cast", "as", "int", "coalesce"}
        assert words <= names, (column, words - names)


def test_derived_lists_follow_the_one_definition():
    plain = [n for n, _ in schema.pass_columns([], signals=False)]
    full = [n for n, _ in schema.pass_columns(["a", "b"], signals=True)]
    assert len(set(full)) == len(full)
    assert [n for n in full if n in plain] == plain  # --signals adds columns at the end
    assert {"quality_a", "quality_b", "signals", "text_bytes"} <= set(full) - set(plain)
    assert "text_bytes" not in {n for n, _ in schema.pass_columns([], signals=True)}
    # select's pass table is the build's without the --signals columns, in the same order
    assert [n for n, _ in schema.recut_columns(["a", "b"])] == [
        n for n, _ in schema.pass_columns(["a", "b"], signals=False)
    ]
    documents = schema.document_columns(["a"], tokens=True)
    assert documents[-2:] == ("quality_a", schema.TOKEN_COLUMN)
    assert "duplicate_count" in documents and "duplicate_count" not in plain
    assert set(documents) - {"duplicate_count"} <= {n for n, _ in schema.pass_columns(["a"], False)}


@pytest.mark.spark
def test_a_column_added_to_the_schema_reaches_every_table(spark, tmp_path, monkeypatch):
    added = schema.Column("url_chars", "length(url)", "the URL's length", source="texts", document=True)
    at = [c.name for c in schema.COLUMNS].index("url") + 1
    monkeypatch.setattr(schema, "COLUMNS", (*schema.COLUMNS[:at], added, *schema.COLUMNS[at:]))
    texts = texts_of("one", range(16))
    texts += [(f"https://copy.example/{i}", t.upper()) for i, (_, t) in enumerate(texts[:3])]
    table = month_table(tmp_path / "table", texts)
    out = tmp_path / "built"
    argv = ["--input", str(table), "--output", str(out), "--dedup", "near", "--signals"]
    report = corpus_job.run(config_from_argv(argv), spark)
    assert report["dropped"]["exact_duplicate"] == 3

    staged = pq.read_table(str(out / "texts"))
    assert staged.column_names == [n for n, _ in schema.pass_columns([], signals=True)]
    documents = pq.read_table(str(out / "documents"))
    assert documents.column_names == list(schema.document_columns([], tokens=False))
    lengths = [len(u) for u in documents.column("url").to_pylist()]
    assert documents.column("url_chars").to_pylist() == lengths and documents.num_rows > 0

    recut = tmp_path / "recut"
    # the re-cut's pass table is put back together from signals/ and texts/
    where = "url not like '%/15'"
    assert cli.main(["select", "--from", str(out), "--output", str(recut), "--where", where]) == 0
    again = pq.read_table(str(recut / "documents"))
    assert again.column_names == documents.column_names
    assert again.num_rows == documents.num_rows - 1
    assert again.column("url_chars").to_pylist() == [len(u) for u in again.column("url").to_pylist()]
