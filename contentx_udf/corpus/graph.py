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
        .agg(F.min(node).alias("_centre"), F.count("*").alias("_size"))
        .where(F.col("_size") > 1)
        .drop("_size")
    )
    return (
        members.join(centres, bucket_cols)
        .where(F.col(node) != F.col("_centre"))
        .select(F.col(node).alias("a"), F.col("_centre").alias("b"))
        .distinct()
    )


def _large_star(edges):
    """Kiveris et al. Algorithm 1: every node ``u`` links each larger neighbour to the smallest of
    ``u`` and its neighbours."""
    from pyspark.sql import functions as F

    both = edges.select(F.col("a").alias("u"), F.col("b").alias("v")).unionByName(
        edges.select(F.col("b").alias("u"), F.col("a").alias("v"))
    )
    smallest = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return (
        both.where(F.col("v") > F.col("u"))
        .join(smallest, "u")
        .select(F.col("v").alias("a"), F.col("m").alias("b"))
        .distinct()
    )


def _small_star(edges):
    """Kiveris et al. Algorithm 2: every node ``u`` links itself and each smaller neighbour to the
    smallest of them."""
    from pyspark.sql import functions as F

    down = edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v")).where(
        F.col("u") != F.col("v")
    )
    smallest = down.groupBy("u").agg(F.min("v").alias("m"))
    linked = down.join(smallest, "u").select(F.col("v").alias("a"), F.col("m").alias("b"))
    return (
        linked.where(F.col("a") != F.col("b"))
        .unionByName(smallest.select(F.col("u").alias("a"), F.col("m").alias("b")))
        .distinct()
    )


def _is_star_forest(edges) -> bool:
    """True when every edge ``(a, b)`` has ``a > b``, each ``a`` has one edge and no ``b`` is an ``a``:
    each component is a star around its smallest node (a fixed point of both steps)."""
    from pyspark.sql import functions as F

    roles = edges.select(
        F.col("a").alias("n"), F.lit(1).alias("child"), F.lit(0).alias("centre")
    ).unionByName(edges.select(F.col("b").alias("n"), F.lit(0).alias("child"), F.lit(1).alias("centre")))
    bad = (
        roles.groupBy("n")
        .agg(F.sum("child").alias("c"), F.max("centre").alias("k"))
        .where((F.col("c") > 1) | ((F.col("c") >= 1) & (F.col("k") == 1)))
    )
    return bad.limit(1).count() == 0 and edges.where(F.col("a") <= F.col("b")).limit(1).count() == 0


def connected_components(edges, checkpoint: Callable | None = None, max_rounds: int = MAX_ROUNDS):
    """``(node, component)`` for every node of ``edges`` (columns ``a``, ``b``: ``long``; undirected;
    repeats allowed), ``component`` the smallest node of its connected component.  A self-loop is
    no edge: a node with nothing but self-loops is not in the result.

    ``checkpoint`` materialises a DataFrame and cuts its lineage (``df.checkpoint()`` on a
    reliable directory, or ``df.localCheckpoint()``); it is applied to the edges after every round.
    """
    from pyspark.sql import functions as F

    checkpoint = checkpoint or (lambda df: df.localCheckpoint())
    current = checkpoint(
        edges.select(F.greatest("a", "b").alias("a"), F.least("a", "b").alias("b"))
        .where(F.col("a") != F.col("b"))
        .distinct()
    )
    for _ in range(max_rounds):
        if _is_star_forest(current):
            break
        current = checkpoint(_small_star(_large_star(current)))
    else:
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    roots = current.select(F.col("b").alias("node")).distinct().withColumn("component", F.col("node"))
    return current.select(F.col("a").alias("node"), F.col("b").alias("component")).unionByName(roots)
