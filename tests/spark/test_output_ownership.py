"""``--overwrite`` (and ``--resume``) only over contentx's own output: a folder holding anything
contentx did not write (a file next to a finished output, a file in a subfolder, an empty folder of
another name) is refused with one line naming a foreign file, exit 2, and nothing in it is touched;
for ``run``, ``corpus`` and ``select`` alike (:func:`contentx_udf.runtime.store.check_owned`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contentx_udf import cli
from contentx_udf.errors import UserError
from contentx_udf.outputs import table
from contentx_udf.runtime import store as output
from contentx_udf.spark.config import JobConfig

from ..conftest import TEST_DATA
from ..corpus.tables import BATCH, table_row, write_table

SAMPLE = TEST_DATA / "sample.warc.gz"


def extraction_table(directory: Path) -> Path:
    """A finished extraction table as ``contentx run`` leaves it (part files, the batch's marker,
    its file statistics, the summary)."""
    write_table(directory, "combined", [table_row("https://x.example/1", "Some text of a page.")])
    stats = directory / "_contentx" / "files" / BATCH
    stats.mkdir(parents=True)
    (stats / "part-00000.parquet").write_bytes(b"PAR1")
    (directory / "_contentx" / "staging").mkdir()
    (directory / "_summary.json").write_text("{}")
    return directory


def finished_corpus(directory: Path) -> Path:
    """A finished corpus as ``contentx corpus --signals`` leaves it (Spark's directories with their
    checksums and markers, the report and plots, ``_SUCCESS``)."""
    for sub in ("documents", "signals", "texts"):
        (directory / sub).mkdir(parents=True)
        (directory / sub / "part-00000-1234.snappy.parquet").write_bytes(b"PAR1")
        (directory / sub / ".part-00000-1234.snappy.parquet.crc").write_bytes(b"crc")
        (directory / sub / "_SUCCESS").write_text("")
    (directory / "signals" / "_build.json").write_text("{}")
    (directory / "plots").mkdir()
    (directory / "plots" / "languages.png").write_bytes(b"\x89PNG")
    (directory / "_report.json").write_text("{}")
    (directory / "report.md").write_text("# report")
    (directory / "_SUCCESS").write_text("{}")
    return directory


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every path under ``directory`` with its content (None for a folder)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(directory.rglob("*")):
        out[str(path.relative_to(directory))] = None if path.is_dir() else path.read_bytes()
    return out


def foreign(directory: Path) -> list[str]:
    return output.foreign_files(output.LocalOutputStore(str(directory)))


def test_contentx_outputs_hold_nothing_foreign(tmp_path):
    assert foreign(extraction_table(tmp_path / "table")) == []
    assert foreign(finished_corpus(tmp_path / "corpus")) == []
    # a run killed while it wrote a file of the report: its NAME.tmp (LocalOutputStore.write_bytes)
    killed = finished_corpus(tmp_path / "killed-in-report")
    (killed / "report.md.tmp").write_text("# rep")
    (killed / "plots" / "hosts.png.tmp").write_bytes(b"\x89P")
    assert foreign(killed) == []
    staged = tmp_path / "killed"  # a corpus run killed in its first pass: only its staging area
    (staged / "_staging" / "20260101T000000-abcd" / "pass").mkdir(parents=True)
    (staged / "_staging" / "20260101T000000-abcd" / "pass" / "part-0.parquet").write_bytes(b"PAR1")
    assert foreign(staged) == []


@pytest.mark.parametrize(
    "plant, named",
    [
        ({"my-thesis.txt": "chapter 1"}, "my-thesis.txt"),
        ({"sub/data.csv": "a,b"}, "sub/data.csv"),
        ({"documents/notes.docx": "x"}, "documents/notes.docx"),
        ({"method=combined/my.csv": "x"}, "method=combined/my.csv"),
        ({"plots/holiday.jpg": "x"}, "plots/holiday.jpg"),
        ({"photos/": None}, "photos/"),  # an empty folder of no contentx name
    ],
)
def test_a_foreign_path_next_to_a_finished_output_is_named(tmp_path, plant, named):
    for build in (extraction_table, finished_corpus):
        directory = build(tmp_path / build.__name__)
        for rel, text in plant.items():
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            if text is None:
                (directory / rel).mkdir()
            else:
                (directory / rel).write_text(text)
        assert foreign(directory) == [named]


def test_without_a_marker_nothing_is_contentx_s(tmp_path):
    """A folder of contentx-like names but none of its markers (another job's ``documents/``)."""
    (tmp_path / "d" / "documents").mkdir(parents=True)
    (tmp_path / "d" / "documents" / "part-00000.parquet").write_bytes(b"PAR1")
    assert foreign(tmp_path / "d") == ["documents/part-00000.parquet"]
    spark_output = tmp_path / "spark"  # another Spark job's output: its _SUCCESS is no marker of ours
    spark_output.mkdir()
    (spark_output / "_SUCCESS").write_text("")
    (spark_output / "part-00000.parquet").write_bytes(b"PAR1")
    assert foreign(spark_output) == ["part-00000.parquet"]


def test_prepare_output_refuses_before_it_deletes(tmp_path):
    """The job's own check (Spark started: the path every output scheme takes), --overwrite and
    --resume alike."""
    out = extraction_table(tmp_path / "out")
    (out / "my-thesis.txt").write_text("chapter 1")
    before = snapshot(out)
    store = output.LocalOutputStore(str(out))
    for flag in ("overwrite", "resume"):
        config = JobConfig(inputs=[str(SAMPLE)], output=str(out), **{flag: True})
        with pytest.raises(UserError, match=r"holds files contentx did not write \(my-thesis.txt\)"):
            table.prepare_output(store, config.output, config.overwrite, config.resume)
        assert snapshot(out) == before


def refused(argv: list[str], out: Path, capsys, named: str) -> None:
    before = snapshot(out)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"holds files contentx did not write ({named}" in err and err.startswith("contentx "), err
    assert snapshot(out) == before  # nothing touched


@pytest.mark.parametrize("where", ["my-thesis.txt", "sub/data.csv"])
def test_every_command_refuses_to_overwrite_a_folder_with_foreign_files(tmp_path, capsys, where):
    table = extraction_table(tmp_path / "table")
    corpus = finished_corpus(tmp_path / "corpus")
    for out in (table, corpus, tmp_path / "mine"):
        (out / where).parent.mkdir(parents=True, exist_ok=True)
        (out / where).write_text("mine, not contentx's")
    for out in (table, corpus, tmp_path / "mine"):
        refused(["run", "--input", str(SAMPLE), "--output", str(out), "--overwrite"], out, capsys, where)
        refused(["run", "--input", str(SAMPLE), "--output", str(out), "--resume"], out, capsys, where)
        refused(["corpus", "--input", str(table), "--output", str(out), "--overwrite"], out, capsys, where)
        refused(["select", "--from", str(corpus), "--output", str(out), "--overwrite"], out, capsys, where)


def test_an_empty_output_path_is_one_line_before_spark_starts(tmp_path, capsys, monkeypatch):
    """``--output "$OUT"`` with ``OUT`` unset: refused, not read as the working directory or the
    root (whose walk for foreign files would never end)."""
    table = extraction_table(tmp_path / "table")
    corpus = finished_corpus(tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    for argv in (
        ["run", "--input", str(SAMPLE), "--output", "", "--overwrite"],
        ["corpus", "--input", str(table), "--output", " ", "--overwrite"],
        ["select", "--from", str(corpus), "--output", "", "--overwrite"],
    ):
        before = snapshot(tmp_path)
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        said = "--output is an empty path: give the directory to write"
        assert err == f"contentx {argv[0]}: error: {said}", err
        assert snapshot(tmp_path) == before


@pytest.mark.spark
def test_a_remote_output_is_checked_through_hadoop(spark, tmp_path, capsys):
    """``viewfs://`` (Hadoop's FileSystem, as HDFS or s3a): the corpus refuses after Spark starts."""
    table = f"mt{os.getpid()}{tmp_path.name}"
    (tmp_path / "data").mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{table}.link./data", (tmp_path / "data").as_uri()
    )
    out = finished_corpus(tmp_path / "data" / "out")
    (out / "sub").mkdir()
    (out / "sub" / "data.csv").write_text("a,b")
    store = output.OutputStore(spark, f"viewfs://{table}/data/out")
    assert store.walk("plots") == ["plots/languages.png"]
    assert output.foreign_files(store) == ["sub/data.csv"]
    source = extraction_table(tmp_path / "table")
    refused(
        ["corpus", "--input", str(source), "--output", f"viewfs://{table}/data/out", "--overwrite"],
        out,
        capsys,
        "sub/data.csv",
    )
    assert json.loads((out / "_SUCCESS").read_text()) == {}
