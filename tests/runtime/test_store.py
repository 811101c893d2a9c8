"""contentx_udf.runtime.store: the os module's store of a local path answers every operation as
Hadoop's FileSystem answers it over the same folder, so the jobs may read and write a local path
through either; local paths and ``file:`` URIs get the os module's, other schemes Hadoop's."""

from __future__ import annotations

import os

import pytest

from contentx_udf.runtime.store import LocalOutputStore, OutputStore, local_path, output_store

pytestmark = pytest.mark.spark


def _tree(root) -> None:
    """A table-like folder: partitions, bookkeeping, hidden sidecars, an empty folder, a file
    behind a symbolic link to a folder, non-ASCII and space in names."""
    (root / "method=combined").mkdir(parents=True)
    (root / "method=combined" / "b00001-part-0.parquet").write_bytes(bytes(range(256)) * 40)
    (root / "method=combined" / ".b00001-part-0.parquet.crc").write_bytes(b"crc")
    (root / "_contentx" / "batches").mkdir(parents=True)
    (root / "_contentx" / "batches" / "b00001").write_text("{}")
    (root / "_summary.json").write_text('{"rows": 3, "text": "Grüße"}', encoding="utf-8")
    (root / "empty").mkdir()
    (root / "a folder").mkdir()
    (root / "a folder" / "ü.txt").write_text("x")
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "linked.txt").write_text("linked")
    os.symlink(elsewhere, root / "link")


def test_the_local_store_answers_as_hadoops_filesystem_does(spark, tmp_path):
    root = tmp_path / "table"
    _tree(root)
    local, hadoop = LocalOutputStore(str(root)), OutputStore(spark, str(root))
    part = ("method=combined", "b00001-part-0.parquet")
    for name, ask in {
        "exists": lambda s: [s.exists(), s.exists(*part), s.exists("nothing"), s.exists("empty")],
        "is_file": lambda s: [s.is_file(), s.is_file(*part), s.is_file("nothing"), s.is_file("empty")],
        "list": lambda s: [s.list(), s.list("method=combined"), s.list("nothing"), s.list("empty")],
        "files": lambda s: [s.files(), s.files("method=combined"), s.files("nothing"), s.files("link")],
        "stamps": lambda s: [s.stamps("method=combined"), s.stamps("_contentx", "batches")],
        "walk": lambda s: [s.walk(), s.walk("method=combined"), s.walk("nothing")],
        "uri": lambda s: [s.uri(), s.uri(*part), s.uri("a folder", "ü.txt")],
        "length": lambda s: [s.length(*part), s.length("_summary.json")],
        "read": lambda s: [
            s.read_bytes(*part),
            s.read_text("_summary.json"),
            s.read_text("link", "linked.txt"),
        ],
        "read_range": lambda s: [s.read_range(250, 20, *part), s.read_range(10_230, 100, *part)],
    }.items():
        assert ask(local) == ask(hadoop), name
    assert local.uri(*part) == f"file:{root}/method=combined/b00001-part-0.parquet"
    assert "link/linked.txt" in local.walk()  # (Hadoop's recursive listing follows the link too)
    assert local.stamps("method=combined")[1][1:] == (
        10_240,
        os.stat(root / "method=combined" / "b00001-part-0.parquet").st_mtime_ns // 1_000_000,
    )

    # what one writes, the other reads; renames and deletes as Hadoop's
    local.write_bytes(b"\x00PNG", "plots", "a.png")
    hadoop.write_text("hadoop", "plots", "b.txt")
    assert hadoop.read_bytes("plots", "a.png") == b"\x00PNG" and local.read_text("plots", "b.txt") == "hadoop"
    assert local.list("plots") == hadoop.list("plots") == ["a.png", "b.txt"]  # (no .tmp left behind)
    local.rename(("plots",), ("figures",))
    assert hadoop.list("figures") == ["a.png", "b.txt"] and not hadoop.exists("plots")
    local.delete("link")  # the link, not what it points at
    assert not hadoop.exists("link") and (tmp_path / "elsewhere" / "linked.txt").exists()
    local.delete("figures")
    local.delete("nothing")
    assert local.list() == hadoop.list() and "figures" not in local.list()


def test_local_paths_and_file_uris_get_the_os_modules_store(spark, tmp_path):
    for path in (str(tmp_path), tmp_path.as_uri(), f"file:{tmp_path}", f"{tmp_path}/"):
        store = output_store(spark, path)
        assert isinstance(store, LocalOutputStore) and store.output == str(tmp_path), path
        assert store.uri() == f"file:{tmp_path}"
    # a table's file URIs (as Hadoop qualifies them) name the same files
    assert local_path(f"file:{tmp_path}/x.parquet") == f"{tmp_path}/x.parquet"
    assert local_path("relative/x") == "relative/x"
    spark.sparkContext._jsc.hadoopConfiguration().set(
        "fs.viewfs.mounttable.storetest.link./data", tmp_path.as_uri()
    )
    assert isinstance(output_store(spark, "viewfs://storetest/data"), OutputStore)
