"""Uninterrupted corpora the fault tests compare with, built once per run (the two months'
``months_corpus`` is in tests/conftest.py, shared with other test files)."""

from __future__ import annotations

import pytest

from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import CorpusConfig

from ..conftest import built_once
from .inputs import two_part_table


@pytest.fixture(scope="session")
def two_part_corpus(spark, tmp_path_factory):
    """The uninterrupted corpus of :func:`.inputs.two_part_table`: ``(corpus directory, report)``;
    built once for the whole run (:func:`..conftest.built_once`: test_storage.py and
    test_inputs_change.py may run in two pytest-xdist workers).  Read only."""

    def build(root):
        table, _part = two_part_table(root / "table")
        return corpus_job.run(CorpusConfig(inputs=[str(table)], output=str(root / "corpus")), spark)

    root, report = built_once(tmp_path_factory, "two-part-corpus", build)
    return root / "corpus", report
