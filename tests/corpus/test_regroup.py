"""``select``'s reuse of a build's clusters (:func:`.dedup.reuse_clusters`, :mod:`.regroup`)
against the full duplicate search (:func:`.dedup.decide`) over the same surviving documents."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pyarrow as pa
import pytest

from contentx_udf.corpus.dedup import NearSettings, decide, preference, reuse_clusters
from contentx_udf.corpus.regroup import components, decide_cluster


def test_components_label_each_node_with_its_smallest_linked_node():
    # a path 5-4-3-2-1 (the longest chain), 0 alone, and 7-6 apart
    label = components(8, np.array([5, 4, 3, 2, 7]), np.array([4, 3, 2, 1, 6]))
    assert label.tolist() == [0, 1, 1, 1, 1, 1, 6, 6]


def test_decide_cluster_exact_groups_then_near_links():
    t0 = dt.datetime(2020, 1, 1)
    pref = pa.StructArray.from_arrays(
        [
            pa.array([t0] * 5, pa.timestamp("us")),
            pa.array([-10, -20, -20, -5, -7]),  # minus the text length: longer is preferred
            pa.array(["a", "b", "c", "d", "e"]),
            pa.array([1, 2, 3, 4, 5]),
        ],
        names=["k1", "k2", "k3", "k4"],
    )
    table = pa.table(
        {
            "doc_id": pa.array([1, 2, 3, 4, 5]),
            "text_hash": pa.array(["x", "y", "y", "w", "z"]),
            "pref": pref,
            "bands": pa.array([[1, 2], [9, 9], [9, 9], [1, 7], None], pa.list_(pa.int64())),
        }
    )
    out = decide_cluster(table).to_pylist()
    by_id = {r["doc_id"]: (r["outcome"], r["cluster"], r["cluster_size"]) for r in out}
    assert by_id == {
        1: ("kept", 1, 2),  # shares band 0's value 1 with 4, and is longer
        4: ("near_duplicate", 1, 2),
        2: ("kept", 2, 2),  # 2 and 3 are exact copies: the same text, 2 is preferred (location)
        3: ("exact_duplicate", 2, 2),
        5: ("kept", 5, 1),  # no band hashes (too short): alone
    }


def _passing(spark, seed: int, n: int = 400):
    """``n`` documents of 250 texts (exact copies share a text), each text's 4 band hashes drawn
    from few values, so that band buckets chain texts into clusters of many sizes."""
    rng = random.Random(seed)
    texts = {h: [rng.randrange(40) for _ in range(4)] for h in range(250)}
    for h in rng.sample(range(250), 20):
        texts[h] = None  # too short for a shingle
    start = dt.datetime(2024, 1, 1)
    rows = []
    for doc_id in range(n):
        h = rng.randrange(250)
        rows.append(
            (
                doc_id,
                f"h{h}",
                start + dt.timedelta(hours=rng.randrange(5)),
                100 + h % 7,
                rng.randrange(2),
                f"w{rng.randrange(3)}.warc.gz",
                rng.randrange(10_000),
                texts[h],
            )
        )
    schema = (
        "doc_id long, text_hash string, fetch_time timestamp, text_length long, _input int, "
        "warc_filename string, warc_record_offset long, bands array<bigint>"
    )
    return spark.createDataFrame(rows, schema).withColumn("pref", preference("first"))


def _fates(per_document):
    return {
        r["doc_id"]: (r["outcome"], r["cluster"], r["cluster_size"])
        for r in per_document.select("doc_id", "outcome", "cluster", "cluster_size").collect()
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_reused_clusters_equal_a_new_duplicate_search_over_the_survivors(spark, seed):
    check = lambda df: df.localCheckpoint(eager=True)  # noqa: E731
    near = NearSettings()
    everything = _passing(spark, seed)
    _, _, built = decide(everything, None, near, check)
    built_fates = _fates(built)
    sizes = {v[2] for v in built_fates.values()}
    assert max(sizes) >= 5 and 1 in sizes  # clusters of many sizes, chained by shared bands
    rng = random.Random(seed)
    dropped = set(rng.sample(range(400), 60))
    survivors = everything.where(~everything["doc_id"].isin(list(dropped)))
    kept_a, outcomes_a, per_a = reuse_clusters(survivors, built, near, check)
    kept_b, outcomes_b, per_b = decide(survivors, None, near, check)
    reused, fresh = _fates(per_a), _fates(per_b)
    assert len(reused) == 400 - len(dropped)
    assert reused == fresh
    assert sorted(map(tuple, kept_a.collect())) == sorted(map(tuple, kept_b.collect()))
    count = lambda df: {r["outcome"]: r["documents"] for r in df.collect()}  # noqa: E731
    assert count(outcomes_a) == count(outcomes_b)
    assert any(reused[d] != built_fates[d] for d in reused)  # some clusters were decided again
