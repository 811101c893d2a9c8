"""Slow and failing storage.

* An HTTP input on 127.0.0.1 that answers 503 and drops the connection mid-body is retried (with
  backoff, resumed with a Range request) inside the extraction job, and the table equals the
  local file's; a server that never recovers gives that file one ``error`` row after the attempts,
  counted in the summary, and the other files are whole.
* A ``viewfs://`` input of the corpus job whose part file is unreadable for a moment: the tests
  run as root, for whom ``chmod 000`` blocks nothing, so the file is renamed away and renamed
  back 0.3 s later (a path that does not resolve for a moment, as on a store that fails a read).
  Its footer check and the first pass are tried again with backoff, and the corpus equals an
  uninterrupted run's; a file that does not come back is one line naming it, exit code 2.
"""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path

import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import tables
from contentx_udf.corpus.config import CorpusConfig
from contentx_udf.spark import job

from ..spark.test_job import SAMPLE, _comparable, config
from ..warc.test_http import Flaky, serve  # noqa: F401 (a fixture)
from .inputs import corpus_docs, sample_copies, two_part_table

pytestmark = pytest.mark.spark


def test_http_inputs_that_fail_for_a_while_are_retried_in_the_job(spark, tmp_path, serve):  # noqa: F811
    flaky = Flaky(SAMPLE.read_bytes(), ["503", "drop", "503", "drop"])
    down = Flaky(b"", ["503"] * 100)  # never recovers
    urls = [serve(flaky) + "/file.warc.gz", serve(down) + "/file.warc.gz"]
    [local] = sample_copies(tmp_path, 1)
    summary = job.run(config([*urls, local], tmp_path / "out", methods=("cectd-ds",)), spark=spark)

    rows = _comparable(spark, tmp_path / "out")
    by_file = {name: sorted(r[1:] for r in rows if r[0] == name) for name in {r[0] for r in rows}}
    assert by_file[urls[0]] == by_file[str(local)]  # retried to the end: every record
    assert flaky.plan == [] and len(flaky.requests) >= 5
    [(status, error)] = [(r[3], r[4]) for r in rows if r[0] == urls[1]]
    assert status == "error" and "503" in error and "attempts" in error
    assert list(summary["file_errors"]) == [urls[1]]
    assert len(down.requests) == 6  # the default attempts (contentx_udf/warc/http.py)


@pytest.fixture()
def viewfs_table(spark, tmp_path):
    """A two-part extraction table under a ``viewfs://`` mount; yields (URI, second part)."""
    mount = f"mt{uuid.uuid4().hex[:8]}"
    (tmp_path / "data").mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{mount}.link./data", (tmp_path / "data").as_uri()
    )
    _root, part = two_part_table(tmp_path / "data" / "table")
    return f"viewfs://{mount}/data/table", part


def away_for_a_moment(part: Path, seconds: float = 0.3) -> threading.Thread:
    """Rename ``part`` away now and back after ``seconds`` (its length and mtime unchanged)."""
    hidden = part.with_name("." + part.name + ".away")
    os.rename(part, hidden)
    back = threading.Timer(seconds, os.rename, (hidden, part))
    back.start()
    return back


@pytest.mark.parametrize("when", ["footer check", "first pass"])
def test_a_viewfs_input_unreadable_for_a_moment_is_retried(
    spark, tmp_path, monkeypatch, viewfs_table, two_part_corpus, when
):
    uri, part = viewfs_table
    reference_dir, reference = two_part_corpus
    timers = []
    target, name = (tables, "find_damaged") if when == "footer check" else (corpus_job, "first_pass")
    original = getattr(target, name)

    def unreadable_now(*args, **kw):
        if not timers:
            timers.append(away_for_a_moment(part))  # the listing is done; the reads begin
        return original(*args, **kw)

    monkeypatch.setattr(target, name, unreadable_now)
    report = corpus_job.run(CorpusConfig(inputs=[uri], output=str(tmp_path / "out")), spark)
    timers[0].join()
    assert corpus_docs(tmp_path / "out") == corpus_docs(reference_dir)
    for key in ("input_rows", "kept", "dropped"):
        assert report[key] == reference[key], key
    assert not report["damaged_files"]


def test_a_viewfs_input_that_stays_unreadable_is_one_line(spark, tmp_path, monkeypatch, viewfs_table, capsys):
    uri, part = viewfs_table
    monkeypatch.setenv("CONTENTX_READ_BACKOFF", "0.05")
    original = corpus_job.first_pass

    def gone_for_good(*args, **kw):
        if part.exists():
            os.rename(part, part.with_name("gone"))
        return original(*args, **kw)

    monkeypatch.setattr(corpus_job, "first_pass", gone_for_good)
    out = tmp_path / "out"
    assert cli.main(["corpus", "--input", uri, "--output", str(out)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1 and part.name in err[0] and "removed" in err[0], err
    assert not (out / "_SUCCESS").exists() and not (out / "_staging").exists()
