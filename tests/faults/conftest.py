"""Uninterrupted corpora the fault tests compare with, built once per session."""

from __future__ import annotations

import pytest

from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import CorpusConfig

from ..corpus.tables import two_months
from .inputs import two_part_table


@pytest.fixture(scope="session")
def months_corpus(spark, tmp_path_factory):
    """The corpus tests' two monthly tables (read only) and their uninterrupted corpus (near
    dedup): ``(month1, month2, corpus directory, report)``."""
    root = tmp_path_factory.mktemp("months")
    month1, month2 = two_months(root)
    report = corpus_job.run(
        CorpusConfig(inputs=[str(month1), str(month2)], output=str(root / "corpus")), spark
    )
    return month1, month2, root / "corpus", report


@pytest.fixture(scope="session")
def two_part_corpus(spark, tmp_path_factory):
    """The uninterrupted corpus of :func:`.inputs.two_part_table`: ``(corpus directory, report)``."""
    root = tmp_path_factory.mktemp("two-part")
    table, _part = two_part_table(root / "table")
    return root / "corpus", corpus_job.run(
        CorpusConfig(inputs=[str(table)], output=str(root / "corpus")), spark
    )
