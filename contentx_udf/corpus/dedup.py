"""Exact and near-duplicate removal (Spark; no text ever reaches the driver).

Every document has a preference key ``pref`` (a struct: smaller is preferred): with
``keep = first`` the earliest ``fetch_time``, then the longest text; with ``keep = longest``
the longest text, then the earliest fetch; a document id breaks ties.

* **Exact**: documents sharing ``text_hash`` form a group; its preferred document is kept and
  carries the group's size.
* **Near**: on the documents exact dedup kept, word 5-gram shingles (``RegexTokenizer`` on
  non-letter/digit runs, ``NGram``, binary ``HashingTF`` of 2^20 features) are hashed by
  Spark's ``MinHashLSH`` and ``approxSimilarityJoin`` finds the pairs whose Jaccard distance
  is below ``1 - J`` (candidates are checked on their exact Jaccard distance, so a pair is
  never joined by a hash collision alone).  The pairs are edges of a graph whose connected
  components are the duplicate clusters, found by min-label propagation (each document takes
  the smallest ``pref`` among its neighbours until nothing changes; at most one round per
  step of the longest chain).  Each cluster keeps its preferred document, whose
  ``duplicate_count`` is the number of input documents (exact copies included) it stands for.
  Clusters are transitive: A~B and B~C put A and C together even if A and C are not similar.
  Texts of fewer than 5 words have no shingle and take part in exact dedup only.  Words are
  runs of letters and digits: texts in scripts without spaces (Chinese, Japanese, Thai) give
  long "words", so their near duplicates are found only when whole runs repeat.
"""

from __future__ import annotations

from .config import HASH_TABLES, SHINGLE_WORDS

#: How long a component search may go on (rounds of label propagation) before it gives up.
MAX_ROUNDS = 50
_FAR_FUTURE = "9999-12-31 00:00:00"


def with_preference(df, keep: str):
    """``df`` with ``doc_id`` (input, file, offset) and ``pref`` (see the module doc)."""
    from pyspark.sql import functions as F

    doc_id = F.concat_ws(
        "|",
        F.col("_input").cast("string"),
        F.col("warc_filename"),
        F.col("warc_record_offset").cast("string"),
    )
    fetched = F.coalesce(F.col("fetch_time"), F.to_timestamp(F.lit(_FAR_FUTURE)))
    shorter = -F.coalesce(F.col("text_length"), F.lit(0))
    first = (fetched, shorter) if keep == "first" else (shorter, fetched)
    return df.withColumn("doc_id", doc_id).withColumn(
        "pref", F.struct(first[0].alias("k1"), first[1].alias("k2"), F.col("doc_id").alias("k3"))
    )


def exact_dedup(df):
    """One document per ``text_hash`` (its preferred one), with ``duplicate_count`` = group size."""
    from pyspark.sql import functions as F

    groups = df.groupBy("text_hash").agg(F.min("pref").alias("_best"), F.count("*").alias("duplicate_count"))
    return (
        df.join(groups, "text_hash")
        .where(F.col("pref") == F.col("_best"))
        .drop("_best")
        .withColumn("duplicate_count", F.col("duplicate_count").cast("long"))
    )


def near_pairs(df, threshold: float, seed: int = 12):
    """Pairs ``(a, b)`` of ``doc_id`` (both directions) whose word-shingle Jaccard similarity
    is at least ``threshold``."""
    from pyspark.ml.feature import HashingTF, MinHashLSH, NGram, RegexTokenizer
    from pyspark.sql import functions as F

    words = RegexTokenizer(
        inputCol="text", outputCol="_words", pattern="[^\\p{L}\\p{N}]+", toLowercase=True
    ).transform(df.select("doc_id", "text"))
    words = words.where(F.size("_words") >= SHINGLE_WORDS)
    shingles = NGram(n=SHINGLE_WORDS, inputCol="_words", outputCol="_shingles").transform(words)
    features = HashingTF(
        inputCol="_shingles", outputCol="_features", numFeatures=1 << 20, binary=True
    ).transform(shingles)
    features = features.select("doc_id", "_features").persist()
    model = MinHashLSH(inputCol="_features", outputCol="_hashes", numHashTables=HASH_TABLES, seed=seed).fit(
        features
    )
    # a distance equal to 1 - J counts as similar: the join's test is strict, nudge it
    pairs = model.approxSimilarityJoin(features, features, 1.0 - threshold + 1e-9, distCol="_distance")
    return pairs.select(F.col("datasetA.doc_id").alias("a"), F.col("datasetB.doc_id").alias("b")).where(
        F.col("a") != F.col("b")
    )


def components(pairs, prefs):
    """``(doc_id, label)`` for every document of an edge: ``label`` is the smallest ``pref`` of
    its connected component.  ``prefs``: ``(doc_id, pref)`` of the documents."""
    from pyspark.sql import functions as F

    edges = pairs.localCheckpoint()  # near_pairs gives each pair once in each direction
    labels = (
        edges.select(F.col("a").alias("doc_id"))
        .distinct()
        .join(prefs, "doc_id")
        .select("doc_id", F.col("pref").alias("label"))
        .localCheckpoint()
    )
    for _ in range(MAX_ROUNDS):
        best = (
            edges.join(labels, edges.a == labels.doc_id)
            .groupBy(F.col("b").alias("doc_id"))
            .agg(F.min("label").alias("_nb"))
        )
        new = (
            labels.join(best, "doc_id", "left")
            .select("doc_id", F.least("label", F.coalesce("_nb", "label")).alias("label"), "label")
            .toDF("doc_id", "label", "_old")
            .localCheckpoint()
        )
        changed = new.where(F.col("label") != F.col("_old")).limit(1).count()
        labels = new.drop("_old")
        if not changed:
            break
    return labels


def near_dedup(df, threshold: float):
    """Keep the preferred document of each near-duplicate cluster of ``df`` (the output of
    :func:`exact_dedup`); ``duplicate_count`` sums the cluster's exact-group sizes."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    labels = components(near_pairs(df, threshold), df.select("doc_id", "pref"))
    joined = df.join(labels, "doc_id", "left").withColumn("_label", F.coalesce("label", "pref")).drop("label")
    cluster = Window.partitionBy("_label")
    return (
        joined.withColumn("_total", F.sum("duplicate_count").over(cluster))
        .where(F.col("pref") == F.col("_label"))
        .withColumn("duplicate_count", F.col("_total").cast("long"))
        .drop("_label", "_total")
    )
