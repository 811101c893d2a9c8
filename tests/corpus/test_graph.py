"""Star edges and connected components (large-star / small-star) on hand-made graphs: chains of
1,000 nodes, stars, cycles, disconnected pieces, a bucket of 20,000 members; every answer is
checked against a union-find over the same edges."""

from __future__ import annotations

import random

import pytest

from contentx_udf.corpus.graph import connected_components, star_edges

pytestmark = pytest.mark.spark


def union_find(edges: list[tuple[int, int]]) -> dict[int, int]:
    """node -> smallest node of its component (the reference)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


def components(spark, edges: list[tuple[int, int]]) -> tuple[dict[int, int], int]:
    """The Spark answer as node -> component, and the rounds it took (checkpoints after the first)."""
    calls = []

    def checkpoint(df):
        calls.append(1)
        return df.localCheckpoint()

    df = spark.createDataFrame(edges, "a long, b long")
    rows = connected_components(df, checkpoint).collect()
    found = {r["node"]: r["component"] for r in rows}
    assert len(found) == len(rows), "a node has two components"
    return found, len(calls) - 1


def test_chain_of_1000_nodes_in_random_order(spark):
    order = list(range(1000))
    random.Random(7).shuffle(order)  # ids along the chain are not sorted: the hard case
    edges = list(zip(order, order[1:], strict=False))
    found, rounds = components(spark, edges)
    assert found == union_find(edges) and set(found.values()) == {0}
    assert rounds <= 20  # O(log^2 n) in theory; a handful in practice


def test_stars_cycles_and_disconnected_pieces(spark):
    edges = [(100, i) for i in range(101, 140)]  # a star around its smallest node
    edges += [(i, 250) for i in range(200, 250)]  # a star around its largest node
    edges += [(300 + i, 300 + (i + 1) % 30) for i in range(30)]  # a cycle of 30
    edges += [(400, 401), (401, 400), (402, 402), (403, 404)]  # repeats, a self-loop, a pair
    edges += [(-5, 7), (7, 9)]  # negative ids sort first
    found, _ = components(spark, edges)
    expected = union_find([(a, b) for a, b in edges if a != b])
    assert found == expected
    assert found[139] == 100 and found[249] == 200 and found[329] == 300 and found[9] == -5
    assert 402 not in found  # a self-loop is no edge
    assert found[404] == 403 and len(set(found.values())) == 6


def test_random_graph_matches_union_find(spark):
    rng = random.Random(3)
    edges = [(rng.randrange(3000), rng.randrange(3000)) for _ in range(2500)]
    found, _ = components(spark, edges)
    assert found == union_find(edges)


def test_star_edges_are_linear_in_a_skewed_bucket(spark):
    # 20,000 documents in one bucket of band 0 (one template), pairs in buckets of band 1
    members = [(i, 0, 42) for i in range(20_000)]
    members += [(i, 1, 1000 + i // 2) for i in range(0, 20_000, 1)]
    members += [(50_000, 0, 7)]  # a bucket of one: no edge
    df = spark.createDataFrame(members, "node long, band int, value long")
    edges = sorted((r["a"], r["b"]) for r in star_edges(df, ["band", "value"]).collect())
    # k - 1 edges to the smallest member for the big bucket, one per pair bucket, none for a bucket of one
    expected = {(i, 0) for i in range(1, 20_000)} | {(i + 1, i) for i in range(0, 20_000, 2)}
    assert edges == sorted(expected)
    found, _ = components(spark, edges)
    assert set(found.values()) == {0} and len(found) == 20_000


@pytest.mark.parametrize("near", [True, False])
def test_decide_on_the_driver_equals_the_spark_plan(spark, near):
    """:func:`.dedup.decide_rows` (select's driver path for the few clusters a re-cut changed)
    gives every document the outcome, cluster and size that :func:`.dedup.decide` gives: 600
    random documents, exact copies (shared hashes), near copies (shared band values, chained),
    documents without band hashes, preference ties broken by the id."""
    from pyspark.sql import functions as F

    from contentx_udf.corpus.dedup import NearSettings, decide, decide_rows

    rng = random.Random(11)
    rows = []
    for doc_id in range(600):
        bands = None if rng.random() < 0.1 else [rng.randrange(300) * 7 + k for k in range(3)]
        rows.append((doc_id * 3 + 5, f"h{rng.randrange(450)}", rng.randrange(5), rng.randrange(3), bands))
    df = spark.createDataFrame(rows, "doc_id long, text_hash string, k1 int, k2 int, bands array<bigint>")
    df = df.select(
        "doc_id", "text_hash", "bands",
        F.struct("k1", "k2", F.lit("x").alias("k3"), F.col("doc_id").alias("k4")).alias("pref"),
    )  # fmt: skip
    settings = NearSettings() if near else None
    _, _, per_document = decide(df, None, settings, lambda d: d.localCheckpoint())
    spark_answer = {
        (r["doc_id"], r["outcome"], r["cluster"], r["cluster_size"])
        for r in per_document.select("doc_id", "outcome", "cluster", "cluster_size").collect()
    }
    driver_answer = set(decide_rows(df.collect(), near))
    assert driver_answer == spark_answer
    outcomes = {o for _, o, _, _ in driver_answer}
    assert {"kept", "exact_duplicate"} <= outcomes and (not near or "near_duplicate" in outcomes)
