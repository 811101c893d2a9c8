"""The extraction job's progress line (contentx_udf.spark.progress), without Spark: its rate and
time left, the records counted from the workers' statistics rows, the accumulators a partition
adds to, the line on a terminal and off it."""

from __future__ import annotations

import io
import re
import time

import pyarrow as pa
import pytest

from contentx_udf.spark import progress
from contentx_udf.spark.progress import (
    Counters,
    Progress,
    count_files,
    progress_line,
    records_read,
    time_left,
)


def test_time_left_is_the_pace_so_far():
    assert time_left(30.0, 0, 40) is None  # nothing done yet: no guess
    assert time_left(30.0, 10, 40) == pytest.approx(90.0)
    assert time_left(30.0, 2.5, 10) == pytest.approx(90.0)  # pieces of files count their share
    assert time_left(30.0, 40, 40) == 0.0


def test_progress_line():
    line = progress_line("contentx run", 10, 40, 95310, 79.0, 10.0)
    assert (
        line == "contentx run: files 10/40 done, records 95,310 (1,206/s), 1 min 19 s, about 3 min 57 s left"
    )
    # the share of the input covered (pieces of a large file) gives the time left before a file is done
    assert progress_line("contentx run", 0, 1, 500, 20.0, 0.25).endswith("about 1 min 00 s left")
    assert (
        progress_line("contentx run", 0, 1, 0, 3.0, 0.0)
        == "contentx run: files 0/1 done, records 0 (0.0/s), 3 s"
    )
    # done: no time left shown
    assert (
        progress_line("contentx run", 2, 2, 100, 8.0, 2.0)
        == "contentx run: files 2/2 done, records 100 (12/s), 8 s"
    )


SCORES = pa.map_(pa.string(), pa.float64())


def test_records_are_read_from_the_statistics_rows_of_either_writer():
    scores = pa.array(
        [
            [("records.response", 16.0), ("records.request", 17.0), ("rows.combined.ok", 15.0)],
            None,
            [("records.warcinfo", 1.0)],
        ],
        SCORES,
    )
    stats = pa.record_batch({"warc_filename": ["a", "b", "c"], "scores": scores, "error": [None, "x", None]})
    assert records_read(stats) == 34
    assert records_read(stats.slice(1, 2)) == 1  # a slice counts its own rows only
    assert records_read(stats.slice(0, 0)) == 0
    # Spark's writer: table rows and one statistics row per file (method _files)
    table = pa.record_batch({"method": ["combined", "_files", "_files"], "scores": scores})
    assert records_read(table) == 1
    assert records_read(pa.record_batch({"warc_filename": ["a"]})) == 0  # no scores column


class FakeAccumulator:
    def __init__(self, value=0):
        self.value = value

    def add(self, n):
        self.value += n


class FakeSpark:
    class sparkContext:  # noqa: N801 (as pyspark names it)
        @staticmethod
        def accumulator(value):
            return FakeAccumulator(value)


def test_count_files_adds_files_pieces_and_records_when_the_partition_ends(tmp_path):
    big = tmp_path / "big.warc.gz"
    big.write_bytes(b"x" * 1000)
    counters = Counters(FakeAccumulator(), FakeAccumulator(), FakeAccumulator(0.0))
    stats = pa.record_batch({"scores": pa.array([[("records.response", 7.0)]], SCORES)})

    def partition(batches):
        for _batch in batches:
            yield stats

    inputs = pa.record_batch(
        {
            "location": ["a.warc.gz", str(big), str(big)],
            "start": pa.array([0, 0, 250], pa.int64()),
            "end": pa.array([-1, 250, -1], pa.int64()),  # a whole file; the first and last piece of one
        }
    )
    out = count_files(partition, counters)(iter([inputs]))
    assert next(out) is stats and counters.files.value == 0  # nothing added before the partition ends
    assert list(out) == []
    assert counters.files.value == 2  # the whole file and the big one's last piece
    assert counters.work.value == pytest.approx(2.0)  # 1 + 0.25 + 0.75
    assert counters.records.value == 7


def test_a_line_at_the_end_when_not_a_terminal_none_with_interval_zero():
    out = io.StringIO()
    with Progress(FakeSpark, 3, 10, out=out) as p:
        p.counters.files.add(3)
        p.counters.records.add(120)
        p.counters.work.add(3.0)
    assert re.fullmatch(r"contentx run: files 3/3 done, records 120 \([\d.,]+/s\), \d+ s\n", out.getvalue())
    quiet = io.StringIO()
    with Progress(FakeSpark, 3, 0, out=quiet):
        pass
    assert quiet.getvalue() == ""


def test_on_a_terminal_one_line_rewritten_then_ended(monkeypatch):
    monkeypatch.setattr(progress, "TERMINAL_INTERVAL", 0.01)
    out = io.StringIO()
    with Progress(FakeSpark, 2, 10, out=out, terminal=True) as p:
        time.sleep(0.1)
        p.counters.files.add(2)
    text = out.getvalue()
    assert text.startswith("\rcontentx run: files 0/2 done") and text.endswith("\n")
    assert text.count("\n") == 1  # one line, rewritten in place
    assert text.rsplit("\r", 1)[1].startswith("contentx run: files 2/2 done")
