"""Duplicate graphs in Spark DataFrames: star edges from LSH buckets, and connected components.

Both are thin DataFrame plans over ``long`` node ids; every step is a shuffle of edges, never of
texts or signatures, and nothing is collected to the driver but a count per round.

* :func:`star_edges` — each bucket (documents sharing one band value) links every member to its
  smallest member: ``k`` members give ``k - 1`` edges, never the ``k (k - 1) / 2`` pairs, so a
  bucket of 100,000 documents (one template on 100,000 pages) costs linear time.
* :func:`connected_components` — the alternating algorithm of Kiveris, Lattanzi, Mirrokni, Rastogi
  and Vassilvitskii, "Connected Components in MapReduce and Beyond" (SoCC 2014), Algorithm 3:
  large-star and small-star steps in turn until the graph is a set of stars around each
  component's smallest node.  Each step is one aggregation and one join over the edges, it needs
  O(log^2 n) rounds in the worst case (a few in practice: 10 for a chain of 1,000 nodes), and the
  edges are checkpointed after every round so the plan never grows.  No GraphFrames (a Maven
  package, and its components have been wrong under adaptive query execution).
"""

from __future__ import annotations

from collections.abc import Callable

#: Rounds (large-star + small-star) before the search gives up: the algorithm needs O(log^2 n).
MAX_ROUNDS = 100


def star_edges(members, bucket_cols: list[str], node: str = "node"):
    """``(a, b)`` edges, ``b`` the smallest ``node`` of ``a``'s bucket (``a > b``; distinct).

    ``members`` has one row per (bucket, node) with the ``bucket_cols`` naming the bucket; a node
    may sit in many buckets.  One aggregation (partial aggregation on the map side, so a skewed
    bucket is no problem) and one join against it (its side holds one row per bucket).
    """
    from pyspark.sql import functions as F

    centres = (
        members.groupBy(*bucket_cols)
        .agg(F.expr(f"min({node}) AS _centre"), F.expr("count(*) AS _size"))
        .where("_size > 1")
        .selectExpr(*bucket_cols, "_centre")
    )
    return (
        members.join(centres, bucket_cols)
        .where(f"{node} != _centre")
        .selectExpr(f"{node} AS a", "_centre AS b")
        .distinct()
    )


def _large_star(edges):
    """Kiveris et al. Algorithm 1: every node ``u`` links each larger neighbour to the smallest of
    ``u`` and its neighbours."""
    from pyspark.sql import functions as F

    both = edges.selectExpr("a AS u", "b AS v").unionByName(edges.selectExpr("b AS u", "a AS v"))
    smallest = both.groupBy("u").agg(F.expr("least(min(v), u) AS m"))
    return both.where("v > u").join(smallest, "u").selectExpr("v AS a", "m AS b").distinct()


def _small_star(edges):
    """Kiveris et al. Algorithm 2: every node ``u`` links itself and each smaller neighbour to the
    smallest of them."""
    from pyspark.sql import functions as F

    down = edges.selectExpr("greatest(a, b) AS u", "least(a, b) AS v").where("u != v")
    smallest = down.groupBy("u").agg(F.expr("min(v) AS m"))
    linked = down.join(smallest, "u").selectExpr("v AS a", "m AS b")
    return linked.where("a != b").unionByName(smallest.selectExpr("u AS a", "m AS b")).distinct()


def _is_star_forest(edges) -> bool:
    """True when every edge ``(a, b)`` has ``a > b``, each ``a`` has one edge and no ``b`` is an ``a``:
    each component is a star around its smallest node (a fixed point of both steps).  One count:
    an edge with ``a <= b`` makes its ``a`` a bad node too."""
    from pyspark.sql import functions as F

    roles = edges.selectExpr("a AS n", "1 AS child", "0 AS centre", "a <= b AS wrong").unionByName(
        edges.selectExpr("b AS n", "0 AS child", "1 AS centre", "false AS wrong")
    )
    bad = (
        roles.groupBy("n")
        .agg(F.expr("sum(child) AS c"), F.expr("max(centre) AS k"), F.expr("max(wrong) AS w"))
        .where("c > 1 OR (c >= 1 AND k = 1) OR w")
    )
    return bad.limit(1).count() == 0


def connected_components(edges, checkpoint: Callable | None = None, max_rounds: int = MAX_ROUNDS):
    """``(node, component)`` for every node of ``edges`` (columns ``a``, ``b``: ``long``; undirected;
    repeats allowed), ``component`` the smallest node of its connected component.  A self-loop is
    no edge: a node with nothing but self-loops is not in the result.

    ``checkpoint`` materialises a DataFrame and cuts its lineage (``df.checkpoint()`` on a
    reliable directory, or ``df.localCheckpoint()``); it is applied to the edges after every round.
    """
    checkpoint = checkpoint or (lambda df: df.localCheckpoint())
    current = checkpoint(
        edges.selectExpr("greatest(a, b) AS a", "least(a, b) AS b").where("a != b").distinct()
    )
    for _ in range(max_rounds):
        if _is_star_forest(current):
            break
        current = checkpoint(_small_star(_large_star(current)))
    else:
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    roots = current.selectExpr("b AS node").distinct().selectExpr("node", "node AS component")
    return current.selectExpr("a AS node", "b AS component").unionByName(roots)
