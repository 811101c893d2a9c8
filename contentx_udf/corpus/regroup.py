"""Deduplication decided again inside one of a build's clusters that lost documents (``contentx
select``), with numpy over the cluster's surviving rows (one Arrow table per cluster, in a Spark
``applyInArrow`` task: no row reaches the driver).

Same rules as :func:`.dedup.decide` over those rows (see :mod:`.dedup`): exact groups by
``text_hash`` (all nulls one group, as Spark's ``groupBy``) keep their preferred document; the
representatives sharing a band hash ``(band, value)`` are linked; each connected component keeps
its preferred representative, ``cluster`` its smallest representative's id, ``cluster_size`` its
documents (exact copies counted).  Without edge verification a band bucket never spans two of the
build's clusters, so deciding each old cluster on its own is deciding the whole selection.
Components by hooking and pointer jumping (Shiloach-Vishkin style: each round at least halves the
components still linked to another, so O(E log n), never all pairs).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

#: The Spark schema of :func:`decide_cluster`'s output.
REGROUP_DDL = "doc_id long, outcome string, cluster long, cluster_size long"


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Component label (its smallest node index) of each of ``n`` nodes linked by edges ``a-b``."""
    label = np.arange(n, dtype=np.int64)
    while True:
        la, lb = label[a], label[b]
        differ = la != lb
        if not differ.any():
            return label
        low, high = np.minimum(la, lb)[differ], np.maximum(la, lb)[differ]
        np.minimum.at(label, high, low)  # hook each root to a smaller root it is linked to
        while True:  # pointer jumping: every node points at its root
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt


def preference_rank(table: pa.Table) -> np.ndarray:
    """Rank (0: preferred) of each row by ``pref`` (:func:`.dedup.preference`: ``k1`` .. ``k4``
    compared in order, strings by their bytes, as Spark compares the struct)."""
    import pyarrow.compute as pc

    pref = table.column("pref").combine_chunks()
    names = ("k1", "k2", "k3", "k4")
    keys = pa.table([pref.field(k) for k in names], names=list(names))
    order = pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in names]).to_numpy()
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank


def decide_cluster(table: pa.Table) -> pa.Table:
    """``doc_id, outcome, cluster, cluster_size`` of each row of ``table`` (``doc_id, text_hash,
    pref, bands``: the surviving documents of one build cluster)."""
    n = table.num_rows
    doc_id = table.column("doc_id").to_numpy()
    rank = preference_rank(table)
    # exact groups: all nulls one group, as Spark's groupBy
    hashes = table.column("text_hash").combine_chunks().dictionary_encode(null_encoding="encode")
    group = hashes.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    by_rank = np.argsort(rank)
    groups, first = np.unique(group[by_rank], return_index=True)
    reps = by_rank[first]  # each exact group's preferred row, in group order
    size = np.bincount(group)[groups]
    rep_of_group = np.full(group.max() + 1, -1, np.int64)
    rep_of_group[groups] = np.arange(len(reps))
    node_of_row = rep_of_group[group]  # each row's representative (index into reps)
    m = len(reps)
    a = b = np.zeros(0, np.int64)
    if "bands" in table.column_names:
        bands = table.column("bands").combine_chunks().take(pa.array(reps))
        lengths = bands.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
        if lengths.sum():
            node = np.repeat(np.arange(m), lengths)
            position = np.arange(len(node)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            value = bands.flatten().to_numpy(zero_copy_only=False)
            order = np.lexsort((node, value, position))
            p, v, nd = position[order], value[order], node[order]
            start = np.r_[True, (p[1:] != p[:-1]) | (v[1:] != v[:-1])]
            head = nd[np.maximum.accumulate(np.where(start, np.arange(len(nd)), 0))]
            a, b = nd[~start], head[~start]  # each member to its bucket's first member
    label = components(m, a, b)
    comp_ids, comp = np.unique(label, return_inverse=True)
    rep_doc = doc_id[reps]
    rep_rank = rank[reps]
    k = len(comp_ids)
    cluster = np.full(k, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(cluster, comp, rep_doc)
    total = np.zeros(k, np.int64)
    np.add.at(total, comp, size)
    best = np.full(k, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(best, comp, rep_rank)
    rep_kept = rep_rank == best[comp]
    is_rep = np.zeros(n, bool)
    is_rep[reps] = True
    row_comp = comp[node_of_row]
    outcome = np.where(is_rep, np.where(rep_kept[node_of_row], "kept", "near_duplicate"), "exact_duplicate")
    return pa.table(
        {
            "doc_id": pa.array(doc_id, pa.int64()),
            "outcome": pa.array(outcome.tolist(), pa.string()),
            "cluster": pa.array(cluster[row_comp], pa.int64()),
            "cluster_size": pa.array(total[row_comp], pa.int64()),
        }
    )
