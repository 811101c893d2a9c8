"""Exact and near-duplicate removal, and matching against earlier corpora (Spark DataFrames over
narrow columns: ids, preference keys, hashes; texts never take part, nothing reaches the driver
but counts).

Every document has a ``doc_id`` (``long``, fixed when the job's first pass is written) and a
preference key ``pref`` (a struct: smaller is preferred): with ``keep = first`` the earliest
``fetch_time``, then the longest text; with ``keep = longest`` the longest text, then the earliest
fetch; then the record's location (``input|warc_filename|offset``, as a string), then ``doc_id``.

1. **Seen before** (``--against``): a document whose ``text_hash`` is in an earlier corpus is
   dropped (``seen_before``) with all its copies.
2. **Exact**: documents sharing ``text_hash`` (the lowercased text with whitespace runs made one
   space) form a group; its preferred document represents it and carries the group's size.
3. **Near** (banded MinHash, :mod:`.minhash`): each representative's ``bands`` are exploded to
   ``(band, value)`` rows; documents sharing a row form a bucket, and each bucket links every
   member to its smallest id (:func:`.graph.star_edges`: ``k - 1`` edges, never all pairs).
   Optionally an edge is kept only when the two documents' sketches estimate a Jaccard similarity
   of at least the threshold (``verify``).  The edges' connected components
   (:func:`.graph.connected_components`, large-star / small-star) are the clusters; each keeps
   its preferred document, whose ``duplicate_count`` sums the exact-group sizes of its cluster.
   Documents of earlier corpora take part with negative ids (their stored band hashes), so a
   cluster holding one of them has a negative smallest id: every new document of it is
   ``seen_before``.  Clusters are transitive: A~B and B~C put A and C together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_FAR_FUTURE = "9999-12-31 00:00:00"


def preference(keep: str):
    """The ``pref`` struct column (see the module doc); needs ``fetch_time``, ``text_length``,
    ``_input``, ``warc_filename``, ``warc_record_offset`` and ``doc_id``."""
    from pyspark.sql import functions as F

    return F.expr(preference_sql(keep))


@lru_cache(maxsize=4)
def preference_sql(keep: str) -> str:
    """:func:`preference` as SQL (one expression: each Column call is a py4j round trip)."""
    fetched = f"coalesce(fetch_time, to_timestamp('{_FAR_FUTURE}'))"
    shorter = "-coalesce(text_length, 0)"
    first = (fetched, shorter) if keep == "first" else (shorter, fetched)
    location = "concat_ws('|', CAST(_input AS STRING), warc_filename, CAST(warc_record_offset AS STRING))"
    return f"struct({first[0]} AS k1, {first[1]} AS k2, {location} AS k3, doc_id AS k4)"


@dataclass(frozen=True)
class NearSettings:
    """``threshold``: Jaccard similarity of near duplicates; ``verify``: keep only the edges whose
    sketches agree on at least ``threshold`` of their positions."""

    threshold: float = 0.8
    verify: bool = False


def exact_representatives(docs, carry: list[str]):
    """One row per ``text_hash``: ``(doc_id, text_hash, pref, n, *carry)``, the group's preferred
    document (with its ``carry`` columns) and the group's size.  ``docs``: ``(doc_id, text_hash,
    pref, *carry)``."""
    from pyspark.sql import functions as F

    return (
        docs.groupBy("text_hash")
        .agg(
            F.expr("min(pref) AS pref"),
            F.expr("count(*) AS n"),
            *(F.expr(f"min_by({c}, pref) AS {c}") for c in carry),
        )
        .selectExpr("pref.k4 AS doc_id", "text_hash", "pref", "n", *carry)
    )


def _band_rows(nodes):
    """``(node, band, value)`` for every band hash of ``nodes`` (``node``, ``bands``)."""
    from pyspark.sql import functions as F

    return nodes.where(F.col("bands").isNotNull()).select(
        "node", F.posexplode("bands").alias("band", "value")
    )


def _verified(edges, sketches, threshold: float):
    """The edges whose two sketches agree on at least ``threshold`` of their positions; an edge with
    a document that has no sketch (from an earlier corpus) is kept unverified."""
    from pyspark.sql import functions as F

    from .per_document import SKETCH_BITS

    width = SKETCH_BITS // 8
    left = sketches.select(F.col("node").alias("a"), F.col("sketch").alias("_sa"))
    right = sketches.select(F.col("node").alias("b"), F.col("sketch").alias("_sb"))
    joined = edges.join(left, "a", "left").join(right, "b", "left")
    positions = F.length("_sa") / width
    agree = F.aggregate(
        F.sequence(F.lit(0), (positions - 1).cast("int")),
        F.lit(0),
        lambda acc, i: (
            acc
            + F.when(
                F.substring("_sa", i * width + 1, width) == F.substring("_sb", i * width + 1, width), 1
            ).otherwise(0)
        ),
    )
    unverifiable = F.col("_sa").isNull() | F.col("_sb").isNull() | (F.length("_sa") != F.length("_sb"))
    return joined.where(unverifiable | (agree >= F.ceil(positions * F.lit(threshold) - F.lit(1e-9)))).select(
        "a", "b"
    )


def near_clusters(nodes, settings: NearSettings, checkpoint: Callable):
    """``(node, cluster)`` for the nodes in a near-duplicate cluster of two or more (``cluster``:
    its smallest node).  ``nodes``: ``(node, bands[, sketch])``, negative nodes from earlier
    corpora.  The band rows are checkpointed: the buckets read them twice."""
    from .graph import connected_components, star_edges

    edges = star_edges(checkpoint(_band_rows(nodes)), ["band", "value"], node="node")
    if settings.verify:
        edges = _verified(
            edges, nodes.select("node", "sketch").where("sketch is not null"), settings.threshold
        )
    return connected_components(edges, checkpoint).withColumnRenamed("component", "cluster")


def decide(passing, against, near: NearSettings | None, checkpoint: Callable):
    """The fate of every document that passed the filters.

    ``passing``: ``(doc_id, text_hash, pref, bands[, sketch], ...)``; ``against``: ``(text_hash,
    bands)`` of earlier corpora, or None.  Returns ``(kept, outcomes, per_document)``: ``kept`` is
    ``(doc_id, duplicate_count)`` for the documents to write; ``outcomes`` is ``(outcome,
    documents)`` rows (``seen_before``, ``exact_duplicate``, ``near_duplicate``, ``kept``) to count;
    ``per_document`` is every row of ``passing`` with its ``outcome`` (to count by other columns,
    such as the language, in one aggregation; nothing of it is collected here).
    """
    from pyspark.sql import functions as F

    docs = passing
    seen_exact = None
    if against is not None:
        hashes = against.select("text_hash").where(F.col("text_hash").isNotNull()).distinct()
        seen_exact = docs.join(hashes, "text_hash", "left_semi")
        docs = docs.join(hashes, "text_hash", "left_anti")
    carry = [] if near is None else (["bands", "sketch"] if near.verify else ["bands"])
    reps = exact_representatives(docs.select("doc_id", "text_hash", "pref", *carry), carry)
    if near is None:
        clustered = reps.withColumn("cluster", F.col("doc_id"))
    else:
        reps = checkpoint(reps)
        nodes = reps.select(F.col("doc_id").alias("node"), *carry)
        if against is not None:
            old = against.where(F.col("bands").isNotNull()).select(
                (-1 - F.monotonically_increasing_id()).alias("node"), "bands"
            )
            if near.verify:
                old = old.withColumn("sketch", F.lit(None).cast("binary"))
            nodes = nodes.unionByName(old)
        clusters = near_clusters(nodes, near, checkpoint)
        clustered = (
            reps.drop(*carry)
            .join(clusters.withColumnRenamed("node", "doc_id"), "doc_id", "left")
            .withColumn("cluster", F.coalesce("cluster", "doc_id"))
        )
    per_cluster = clustered.groupBy("cluster").agg(F.expr("min(pref) AS _best"), F.expr("sum(n) AS _total"))
    fates = checkpoint(
        clustered.join(per_cluster, "cluster").selectExpr(
            "doc_id",
            "text_hash",
            "n",
            "CASE WHEN cluster < 0 THEN 'seen_before' WHEN pref = _best THEN 'kept' "
            "ELSE 'near_duplicate' END AS outcome",
            "CAST(_total AS BIGINT) AS duplicate_count",
            "cluster",
        )
    )
    kept = fates.where("outcome = 'kept'").selectExpr("doc_id", "duplicate_count")
    # a representative stands for n documents: itself (its outcome) and n - 1 exact duplicates,
    # except in a cluster seen before, where all n are seen before
    counted = fates.groupBy("outcome").agg(
        F.expr("sum(CASE WHEN outcome = 'seen_before' THEN n ELSE 1 END) AS documents"),
        F.expr("sum(CASE WHEN outcome = 'seen_before' THEN 0 ELSE n - 1 END) AS copies"),
    )
    outcomes = counted.selectExpr("outcome", "documents").unionByName(
        counted.selectExpr("'exact_duplicate' AS outcome", "copies AS documents")
    )
    if seen_exact is not None:
        outcomes = outcomes.unionByName(
            seen_exact.selectExpr("'seen_before' AS outcome", "CAST(1 AS BIGINT) AS documents")
        )
    outcomes = outcomes.groupBy("outcome").agg(F.expr("sum(documents) AS documents"))
    return kept, outcomes, document_outcomes(docs, fates, seen_exact)


def document_outcomes(docs, fates, seen_exact=None):
    """Every row of ``docs`` with its ``outcome``: its exact group's representative (``fates``:
    ``doc_id, text_hash, outcome``) has the group's outcome, the other members are
    ``exact_duplicate`` (``seen_before`` when the group is); ``seen_exact`` rows (their text in an
    earlier corpus) are ``seen_before``.  Each row also has its near-duplicate ``cluster`` (its
    smallest representative's id) and ``cluster_size`` (documents in it, exact copies counted)."""
    from pyspark.sql import functions as F

    groups = fates.selectExpr(
        "text_hash AS _hash",
        "doc_id AS _rep",
        "outcome AS _fate",
        "cluster AS cluster",
        "duplicate_count AS cluster_size",
    )
    joined = docs.join(groups, docs["text_hash"].eqNullSafe(groups["_hash"]))
    outcome = (
        "CASE WHEN _fate = 'seen_before' THEN 'seen_before' WHEN doc_id = _rep THEN _fate "
        "ELSE 'exact_duplicate' END"
    )
    result = joined.withColumn("outcome", F.expr(outcome)).drop("_hash", "_rep", "_fate")
    if seen_exact is not None:
        result = result.unionByName(
            seen_exact.withColumn("outcome", F.lit("seen_before"))
            .withColumn("cluster", F.lit(None).cast("long"))
            .withColumn("cluster_size", F.lit(None).cast("long"))
        )
    return result


#: ``built`` of :func:`reuse_clusters` when ``passing`` carries the build's outcome itself, as
#: ``built_outcome``, ``built_cluster``, ``built_size`` (``select``: read with the signals)
BUILT_IN_PASS = "passing"


def reuse_clusters(passing, built, near: NearSettings | None, checkpoint: Callable, bands=None):
    """:func:`decide` for documents that are all among those a build passed (``contentx select``
    with no document the build's filters dropped), reusing the build's clusters.

    ``built``: ``(doc_id, outcome, cluster, cluster_size)`` of every document the build passed (its dedup
    outcome), or :data:`BUILT_IN_PASS` (no join). Without edge verification removing documents never links
    two clusters, it can only split one: a cluster that lost no document (as many survivors as its
    ``cluster_size``) is the same cluster with the same preferred member and size, and keeps its outcomes;
    the survivors of a cluster that lost one are decided again, each such cluster on its own, in one
    grouped pass (:func:`.regroup.decide_cluster`, numpy over the cluster's rows in a Spark task). Same
    result as :func:`decide` over ``passing``, without the duplicate search. With verification (a star
    edge to a bucket's new smallest member may hold where the build's did not) :func:`decide` runs over
    ``passing``. No ``--against`` (``select`` refuses such builds). ``bands``: ``(doc_id, bands)`` to read
    the band hashes from, for the rows of the clusters decided again only (None: ``passing`` has them)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from .regroup import REGROUP_DDL, decide_cluster

    if near is not None and near.verify:
        return decide(passing, None, near, checkpoint)
    carry = ["bands"] if near is not None and bands is None else []
    if isinstance(built, str) and built == BUILT_IN_PASS:
        tagged = passing.select(
            "doc_id",
            "text_hash",
            "pref",
            *carry,
            F.col("built_cluster").cast("long").alias("_cluster"),
            F.col("built_outcome").alias("_outcome"),
            F.col("built_size").cast("long").alias("_size"),
        )
    else:
        built = built.select(
            "doc_id",
            F.col("cluster").cast("long").alias("_cluster"),
            F.col("outcome").alias("_outcome"),
            F.col("cluster_size").cast("long").alias("_size"),
        )
        tagged = passing.select("doc_id", "text_hash", "pref", *carry).join(built, "doc_id")
    tagged = tagged.withColumn("_left", F.count("*").over(Window.partitionBy("_cluster")))
    same = tagged.where(F.col("_left") == F.col("_size")).select(
        "doc_id",
        F.col("_outcome").alias("outcome"),
        F.col("_cluster").alias("cluster"),
        F.col("_size").alias("cluster_size"),
    )
    broken = tagged.where(F.col("_left") < F.col("_size")).select(
        "_cluster", "doc_id", "text_hash", "pref", *carry
    )
    if near is not None and bands is not None:
        broken = broken.join(bands.select("doc_id", "bands"), "doc_id", "left")
    again = broken.groupBy("_cluster").applyInArrow(
        lambda table: decide_cluster(table.drop_columns(["_cluster"])), REGROUP_DDL
    )
    fates = checkpoint(same.unionByName(again))
    kept = fates.where(F.col("outcome") == "kept").select(
        "doc_id", F.col("cluster_size").alias("duplicate_count")
    )
    outcomes = fates.groupBy("outcome").agg(F.count("*").alias("documents"))
    return kept, outcomes, passing.join(fates, "doc_id")
