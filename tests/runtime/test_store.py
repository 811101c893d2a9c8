"""contentx_udf.runtime.store: the os module's store of a local path answers every operation as
Hadoop's FileSystem answers it over the same folder, so the jobs may read and write a local path
through either; local paths and ``file:`` URIs get the os module's, other schemes Hadoop's."""

from __future__ import annotations

import os

import pytest

from contentx_udf.runtime.store import LocalOutputStore, OutputStore, local_path, resolves_locally, store_of

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
        store = store_of(spark, path)
        assert isinstance(store, LocalOutputStore) and store.output == str(tmp_path), path
        assert store.uri() == f"file:{tmp_path}"
    # a table's file URIs (as Hadoop qualifies them) name the same files
    assert local_path(f"file:{tmp_path}/x.parquet") == f"{tmp_path}/x.parquet"
    assert local_path("relative/x") == "relative/x"
    # forms Hadoop reads otherwise or refuses stay Hadoop's: another host, four slashes, a
    # relative file: URI, an empty path (an unset variable), other schemes
    for path in (f"file:///{tmp_path}", "file://otherhost/x", "file:relative", "", "hdfs:/x", "s3a://b/x"):
        assert not resolves_locally(spark, path), path
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("fs.viewfs.mounttable.storetest.link./data", tmp_path.as_uri())
    assert isinstance(store_of(spark, "viewfs://storetest/data"), OutputStore)


def test_a_path_without_a_scheme_is_on_hadoops_default_filesystem(spark, tmp_path):
    """On a cluster whose ``fs.defaultFS`` is HDFS, ``/user/me/table`` is HDFS's, as Spark reads it
    (here a viewfs mount stands for HDFS): the store is Hadoop's and lists what is there."""
    (tmp_path / "table" / "method=combined").mkdir(parents=True)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("fs.viewfs.mounttable.defaultfs.link./warehouse", tmp_path.as_uri())
    before = conf.get("fs.defaultFS")
    conf.set("fs.defaultFS", "viewfs://defaultfs/")
    try:
        store = store_of(spark, "/warehouse/table")
        assert isinstance(store, OutputStore) and store.list() == ["method=combined"]
        assert store.uri() == "viewfs://defaultfs/warehouse/table"
        assert isinstance(store_of(spark, str(tmp_path / "table")), OutputStore)  # (not the local disk)
        assert isinstance(store_of(spark, (tmp_path / "table").as_uri()), LocalOutputStore)
    finally:
        conf.set("fs.defaultFS", before)
    assert isinstance(store_of(spark, str(tmp_path / "table")), LocalOutputStore)


def test_a_linked_root_is_emptied_not_unlinked_and_a_link_loop_ends(tmp_path):
    """``--overwrite`` of an output that is a link to another disk empties the folder it points
    at and keeps the link (the next run writes there again); a walk over a link to a folder
    above it lists each file once and ends."""
    target = tmp_path / "big-disk" / "out"
    (target / "method=combined").mkdir(parents=True)
    (target / "method=combined" / "b00001-part-0.parquet").write_bytes(b"PAR1")
    (target / "_summary.json").write_text("{}")
    os.symlink(target, tmp_path / "out")
    LocalOutputStore(str(tmp_path / "out")).delete()
    assert (tmp_path / "out").is_symlink() and target.is_dir() and list(target.iterdir()) == []

    (target / "a").mkdir()
    (target / "a" / "x.txt").write_text("x")
    os.symlink(target, target / "a" / "up")  # a loop
    assert LocalOutputStore(str(target)).walk() == ["a/x.txt"]
