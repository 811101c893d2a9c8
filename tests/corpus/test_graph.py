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
