"""Uninterrupted corpora the fault tests compare with, built once per session (the two months'
``months_corpus`` is in tests/conftest.py, shared with other test files)."""

from __future__ import annotations

import pytest

from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import CorpusConfig

from .inputs import two_part_table


@pytest.fixture(scope="session")
def two_part_corpus(spark, tmp_path_factory):
    """The uninterrupted corpus of :func:`.inputs.two_part_table`: ``(corpus directory, report)``."""
    root = tmp_path_factory.mktemp("two-part")
    table, _part = two_part_table(root / "table")
    return root / "corpus", corpus_job.run(
        CorpusConfig(inputs=[str(table)], output=str(root / "corpus")), spark
    )
