"""CETD — Content Extraction via Text Density (Sun, Song & Liao, SIGIR 2011).

Three methods share one pipeline on the ``<body>`` DOM (:attr:`Document.dom`, pre-order
arrays, no recursion):

* ``cetd-ds``  — Text Density (Def. 1) + DensitySum (Def. 3, §4.2),
* ``cectd-s``  — Composite Text Density (Def. 2) + smoothing with the sibling nodes (§4.3),
* ``cectd-ds`` — Composite Text Density + DensitySum (the library's default method).

Per element ``i`` (§3.2–3.3): ``C_i`` characters, ``T_i`` tags, ``LC_i`` hyperlink characters and
``LT_i`` hyperlink tags under it, all subtree sums (``cumsum`` differences).  Buttons and drop-down
lists count as hyperlinks (§4.3).  Details taken from the authors' reference code
(``textdensity.cpp`` in FeiSun/ContentExtraction), each a named parameter:

* an element that holds nothing but links (no non-link text, every leaf inside a link) is itself
  counted as a hyperlink tag (``link_only_elements_as_links``);
* DensitySum adds the loose text between the child elements: a text child is a node with
  ``T = 0`` in Def. 1/2 (``loose_text_in_sum``);
* the nodes on the path from ``<body>`` to a content node keep their own text (``keep_path_text``).

Extraction (§4.1–4.2, Algorithm 2): the element with the maximum DensitySum is found in the whole
page; the threshold is the minimum density on the path from it to ``<body>`` (times λ).  Algorithm 2
visits every element whose density and whose ancestors' densities reach the threshold and marks the
maximum-DensitySum element of its subtree as content (multiple content blocks).  Here that walk is
array work: the visited set is "not inside any element below the threshold" (:meth:`DomArrays.within`)
and the maximum of each visited subtree is a range-argmax query on a sparse table.

Improvements measured on the development set (shingle F1, scrapinghub, 181 pages), each a
parameter whose value 0 restores the paper:

* ``block_min_sum_ratio`` (0.5): an extra content block must reach half of the maximum DensitySum.
  With every visited element marking a block, a low threshold marks dozens of small dense
  fragments (comments, newsletter boxes, cookie notices).  CECTD-DS 0.853 → 0.927.
* ``prune_ratio`` (0.3): a block-level child of a content root whose density is below 0.3 × the
  root's is dropped (share bars, galleries, "most read" boxes inside a wide wrapper).
  CECTD-DS 0.927 → 0.938, CETD-DS 0.926 → 0.934.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..page import compiled
from ..page.document import Document, DomArrays
from .base import MethodResult

#: Hyperlinks, and what §4.3 treats like them ("buttons and drop-down lists").
LINK_TAGS = ("a", "button", "select")

_E = math.e


@dataclass(frozen=True)
class NodeCounts:
    """The four per-node statistics of §3.2–3.3 (arrays over all DOM nodes, pre-order).

    For an element: counts over its subtree (``tags`` counts the elements strictly below it).
    For a text node: its own characters (``tags = 0``), as a pseudo-node for DensitySum.
    """

    chars: np.ndarray  # C_i
    tags: np.ndarray  # T_i
    link_chars: np.ndarray  # LC_i
    link_tags: np.ndarray  # LT_i
    is_element: np.ndarray

    @property
    def body_link_ratio(self) -> float:
        """``LC_b / C_b`` of Def. 2 (0 for an empty page)."""
        if self.chars.size == 0 or self.chars[0] == 0:
            return 0.0
        return float(self.link_chars[0] / self.chars[0])


def node_counts(dom: DomArrays, *, link_only_elements_as_links: bool = True) -> NodeCounts:
    """C, T, LC, LT for every node (§3.2 CharNumber/TagNumber, §3.3 LinkCharNumber/LinkTagNumber).

    Characters are those of the text nodes (stripped of surrounding whitespace).  A node is a
    *link tag* for LT when it is a hyperlink, button or drop-down (§4.3) or lies inside one; with
    ``link_only_elements_as_links`` (reference code, ``CountLinkTag``) also an element outside links
    that has child elements, no non-link text and no leaf element outside a link — the reference
    code's recursive rule "all tags and all characters below are link ones", which unrolls to that
    non-recursive test.

    Computed once per page and flag (cached on ``dom``: the three CETD methods share it).
    """
    key = ("cetd.node_counts", link_only_elements_as_links)
    cached = dom.cache.get(key)
    if cached is None:
        cached = dom.cache[key] = _node_counts(dom, link_only_elements_as_links)
    return cached


def _node_counts(dom: DomArrays, link_only_elements_as_links: bool) -> NodeCounts:
    is_element = ~dom.is_text
    text_len = dom.text_len
    is_link = dom.has_tag(LINK_TAGS)
    fast = compiled.module()
    if fast is not None:  # one pass down and one up the tree: the same integer sums
        flags = (dom.is_text.view(np.uint8), text_len, is_link.view(np.uint8))
        chars, tags, link_chars, link_tags = fast.cetd_counts(dom.parent, *flags, link_only_elements_as_links)
        return NodeCounts(chars, tags, link_chars, link_tags, is_element)
    in_link = dom.within(is_link) if np.count_nonzero(is_link) else np.zeros(dom.size, dtype=bool)
    chars = dom.subtree_sum(text_len)
    link_chars = dom.subtree_sum(text_len * in_link)
    tags = (dom.subtree_sum(is_element) - 1) * is_element  # elements strictly below; 0 for text
    link_like = is_element & in_link
    if link_only_elements_as_links:
        has_child_elements = dom.child_elements > 0
        outside = is_element & ~in_link
        leaf_outside_links = outside & ~has_child_elements
        link_like |= (
            outside & has_child_elements & (chars == link_chars) & (dom.subtree_sum(leaf_outside_links) == 0)
        )
    link_tags = dom.subtree_sum(link_like) - link_like
    return NodeCounts(
        chars=chars.astype(np.float64),
        tags=tags.astype(np.float64),
        link_chars=link_chars.astype(np.float64),
        link_tags=link_tags.astype(np.float64),
        is_element=is_element,
    )


def text_density(chars: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """Text Density, Def. 1: ``TD_i = C_i / T_i`` with ``T_i = 0`` set to 1 (Algorithm 1)."""
    chars = np.asarray(chars, dtype=np.float64)
    return chars / np.maximum(np.asarray(tags, dtype=np.float64), 1.0)


def composite_text_density(
    chars: np.ndarray,
    tags: np.ndarray,
    link_chars: np.ndarray,
    link_tags: np.ndarray,
    body_link_ratio: float,
) -> np.ndarray:
    """Composite Text Density, Def. 2 (§3.3)::

        CTD_i = C_i/T_i · log_B( C_i/LC_i · T_i/LT_i ),  B = ln( C_i/¬LC_i · LC_i + LC_b/C_b · C_i + e )

    ``¬LC_i = C_i − LC_i``; zero denominators are set to 1; a node without characters has density 0
    (reference code).  ``log_B x = ln x / ln B``.
    """
    fast = compiled.module()
    if fast is not None:  # the terms and the division compiled, the logarithms numpy's
        c = np.ascontiguousarray(chars, dtype=np.float64)
        t = np.ascontiguousarray(tags, dtype=np.float64)
        lc = np.ascontiguousarray(link_chars, dtype=np.float64)
        lt = np.ascontiguousarray(link_tags, dtype=np.float64)
        terms = fast.composite_terms(c, t, lc, lt, float(body_link_ratio), _E)
        logs = terms[:2]
        np.log(logs, out=logs)
        np.log(logs[0], out=logs[0])
        return fast.composite_finish(c, terms)
    c = np.asarray(chars, dtype=np.float64)
    t = np.maximum(np.asarray(tags, dtype=np.float64), 1.0)
    lc_raw = np.asarray(link_chars, dtype=np.float64)
    lc = np.maximum(lc_raw, 1.0)
    lt = np.maximum(np.asarray(link_tags, dtype=np.float64), 1.0)
    non_link = np.maximum(c - lc_raw, 1.0)
    has_text = c > 0
    c1 = np.where(has_text, c, 1.0)
    base = np.log(c1 / non_link * lc + body_link_ratio * c1 + _E)
    value = (c1 / t) * np.log(c1 * t / (lc * lt)) / np.log(base)
    return np.where(has_text, value, 0.0)


def density_sum(
    dom: DomArrays, density: np.ndarray, is_element: np.ndarray, *, loose_text_in_sum: bool = True
) -> np.ndarray:
    """DensitySum, Def. 3: the sum of the children's densities (−inf for text nodes).

    With ``loose_text_in_sum`` the text children count as children (the reference code adds the
    text between child elements, as a node with ``T = 0``); without it only child elements do.  An
    element without such children keeps its own density (reference code, ``ComputeDensitySum``):
    for a single text child both readings agree.
    """
    fast = compiled.module()
    if loose_text_in_sum and fast is not None:  # the same sums in one pass
        values = np.ascontiguousarray(density, dtype=np.float64)
        return fast.density_sums(dom.parent, values, np.ascontiguousarray(is_element).view(np.uint8))
    if loose_text_in_sum:
        sums = dom.children_sum(density)
        children = dom.child_count
    else:
        sums = dom.children_sum(np.where(is_element, density, 0.0))
        children = dom.children_sum(is_element.astype(np.float64))
    sums = np.where(children > 0, sums, density)
    return np.where(is_element, sums, -np.inf)


def subtree_argmax(
    dom: DomArrays, values: np.ndarray, nodes: np.ndarray, floor: float = -np.inf
) -> np.ndarray:
    """For each of ``nodes``: the first node (pre-order) of its subtree with the maximal value, or
    −1 when no node of the subtree reaches ``floor``.

    Only the *candidates* (finite values ≥ ``floor``) can be a maximum that matters; in pre-order
    the candidates of a subtree ``[i, end[i])`` are a contiguous run of the sorted candidate
    indices.  A sparse table of range argmaxes over that run (``log2`` levels of vector work)
    answers each query with two overlapping power-of-two blocks; ties go to the earlier node (the
    reference code's ``FindMaxDensitySum`` keeps the first maximum).
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    fast = compiled.module()
    if fast is not None:  # one pass up the tree
        return fast.subtree_argmax(dom.parent, np.ascontiguousarray(values, dtype=np.float64), nodes, floor)
    result = np.full(nodes.size, -1, dtype=np.int64)
    is_candidate = np.isfinite(values) if floor == -np.inf else (values >= floor) & np.isfinite(values)
    if nodes.size == 0 or not np.count_nonzero(is_candidate):
        return result
    candidates = is_candidate.nonzero()[0]
    cand_values = values.take(candidates)
    # candidates before each position: a node's run is [before[i], before[end[i]])
    before = np.empty(values.size + 1, dtype=np.int64)
    before[0] = 0
    np.add.accumulate(is_candidate, dtype=np.int64, out=before[1:])
    lo = before.take(nodes)
    length = before.take(dom.end.take(nodes)) - lo
    has = (length > 0).nonzero()[0]
    if has.size == 0:
        return result
    lo, length = lo.take(has), length.take(has)
    n = candidates.size
    if n == 1:  # every non-empty run is that candidate
        result[has] = candidates[0]
        return result
    level = np.frexp(length.astype(np.float64))[1] - 1  # floor(log2(length))
    top = int(level.max())
    if top == 0:  # every run has one candidate
        result[has] = candidates.take(lo)
        return result
    table = [np.arange(n, dtype=np.int64)]
    for k in range(1, top + 1):
        prev = table[-1]
        width = n - (1 << k) + 1
        left = prev[:width]
        right = prev[1 << (k - 1) : (1 << (k - 1)) + width]
        table.append(np.where(cand_values.take(right) > cand_values.take(left), right, left))
    first = np.empty(lo.size, dtype=np.int64)
    second = np.empty(lo.size, dtype=np.int64)
    for k in np.bincount(level).nonzero()[0].tolist():
        sel = (level == k).nonzero()[0]
        start = lo.take(sel)
        first[sel] = table[k].take(start)
        second[sel] = table[k].take(start + length.take(sel) - (1 << k))
    best = np.where(cand_values.take(second) > cand_values.take(first), second, first)
    result[has] = candidates.take(best)
    return result


def ancestors_of(dom: DomArrays, nodes: np.ndarray) -> np.ndarray:
    """Mask of the nodes that have one of ``nodes`` in their subtree (the nodes themselves included)."""
    marks = np.zeros(dom.size, dtype=bool)
    marks[np.asarray(nodes, dtype=np.int64)] = True
    return dom.subtree_sum(marks) > 0


def smooth_with_siblings(dom: DomArrays, density: np.ndarray, weight: float) -> np.ndarray:
    """CECTD-S (§4.3): "weighted averaging with sibling nodes".

    ``s_i = (d_i + w·d_prev + w·d_next) / (1 + w·[prev exists] + w·[next exists])`` over the
    element siblings; text nodes are left unchanged.
    """
    smoothed = density.copy()
    if weight == 0:
        return smoothed
    order, has_prev, has_next = _element_siblings(dom)
    if order.size == 0:
        return smoothed
    d = density[order]
    prev_d = np.concatenate(([0.0], d[:-1]))
    next_d = np.concatenate((d[1:], [0.0]))
    total = d + weight * (np.where(has_prev, prev_d, 0.0) + np.where(has_next, next_d, 0.0))
    smoothed[order] = total / (1.0 + weight * (has_prev.astype(np.float64) + has_next))
    return smoothed


def _element_siblings(dom: DomArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The elements below ``<body>`` grouped by parent in document order, and whether each has a
    previous / next element sibling (cached on ``dom``)."""
    cached = dom.cache.get("cetd.element_siblings")
    if cached is None:
        elements = (~dom.is_text).nonzero()[0][1:]  # below <body>, an element
        order = elements.take(dom.parent.take(elements).argsort(kind="stable"))
        parents = dom.parent.take(order)
        same = parents[1:] == parents[:-1]
        cached = (order, np.concatenate(([False], same)), np.concatenate((same, [False])))
        dom.cache["cetd.element_siblings"] = cached
    return cached


@dataclass(frozen=True)
class Selection:
    """Text nodes chosen by the DensitySum extraction, with the figures reported as scores."""

    text_mask: np.ndarray
    threshold: float
    target: int
    blocks: int
    pruned: int


def extract_by_density_sum(
    dom: DomArrays,
    density: np.ndarray,
    sums: np.ndarray,
    is_element: np.ndarray,
    *,
    lambda_: float = 1.0,
    multiple_blocks: bool = True,
    block_min_sum_ratio: float = 0.0,
    prune_ratio: float = 0.0,
    keep_path_text: bool = True,
) -> Selection:
    """§4.2 and Algorithm 2 as array operations.

    1. ``target``: the element with the maximum DensitySum in the whole page (first one on ties).
    2. threshold: ``λ ×`` the minimum density on the path from ``target`` up to ``<body>``.
    3. Algorithm 2 (``multiple_blocks``) visits the elements whose density and whose ancestors'
       densities reach the threshold (= not inside an element below it); each visited element marks
       the maximum-DensitySum element of its subtree as a content root.  Improvement: with
       ``block_min_sum_ratio`` > 0 a root other than ``target`` must reach that share of the
       maximum DensitySum (paper: 0, every visited element marks its root).
    4. Improvement ``prune_ratio`` > 0: inside a content root, block-level elements whose density is
       below ``prune_ratio ×`` the root's density are dropped with their subtree (paper: 0, the
       whole subtree of a root is content).
    5. Text: all text inside the content roots, plus (``keep_path_text``) the own text of the
       elements on the paths from ``<body>`` to the roots (the reference code keeps those nodes).
    """
    fast = compiled.module()
    if fast is not None:  # the same steps in passes over the nodes (None: numpy decides)
        found = fast.density_sum_select(
            dom.parent, dom.end, dom.is_text.view(np.uint8), dom.is_block.view(np.uint8),
            np.ascontiguousarray(density, dtype=np.float64), np.ascontiguousarray(sums, dtype=np.float64),
            float(lambda_), multiple_blocks, float(block_min_sum_ratio), float(prune_ratio), keep_path_text,
        )  # fmt: skip
        if found is not None:  # (text_mask, threshold, target, blocks, pruned)
            return Selection(*found)
    target = int(sums.argmax())
    upto = target + 1  # the ancestors of target precede it
    on_path = (dom.end[:upto] > target) & is_element[:upto]
    threshold = lambda_ * float(density[:upto][on_path].min())
    if multiple_blocks:
        below = is_element & (density < threshold)
        visited = is_element & ~dom.within(below) if np.count_nonzero(below) else is_element
        floor = block_min_sum_ratio * sums[target] if block_min_sum_ratio > 0 else -np.inf
        extra = subtree_argmax(dom, sums, visited.nonzero()[0], floor)
        is_root = np.zeros(dom.size, dtype=bool)
        is_root[target] = True
        is_root[extra[extra >= 0]] = True
        roots = is_root.nonzero()[0]
    else:
        roots = np.array([target], dtype=np.int64)
    # the content blocks: roots not nested in another root
    cover = dom.cover_count(roots)
    roots = roots[cover.take(roots) == 1]
    in_roots = cover > 0  # inside a content block (nested roots add nothing)
    content = in_roots
    has_parent = dom.has_parent
    parent = dom.parent0
    pruned = 0
    if prune_ratio > 0:
        is_root = np.zeros(dom.size, dtype=bool)
        is_root[roots] = True
        weak = (
            has_parent & is_root.take(parent) & dom.is_block & (density < prune_ratio * density.take(parent))
        )
        pruned = np.count_nonzero(weak)
        if pruned:
            content = content & ~dom.within(weak)
    text_mask = dom.is_text & content
    if keep_path_text:
        path = ancestors_of(dom, roots) & ~in_roots
        text_mask |= dom.is_text & has_parent & path.take(parent)
    return Selection(
        text_mask=text_mask, threshold=threshold, target=target, blocks=int(roots.size), pruned=pruned
    )


def _empty_result() -> MethodResult:
    return MethodResult(text="", scores={"threshold": 0.0, "blocks": 0.0})


def densities(dom: DomArrays, params: dict[str, Any], composite: bool) -> tuple[NodeCounts, np.ndarray]:
    """Node counts and (composite) text density, computed once per page (cached on ``dom``)."""
    flag = params["link_only_elements_as_links"]
    counts = node_counts(dom, link_only_elements_as_links=flag)
    key = ("cetd.density", flag, composite)
    density = dom.cache.get(key)
    if density is None:
        if composite:
            density = composite_text_density(
                counts.chars, counts.tags, counts.link_chars, counts.link_tags, counts.body_link_ratio
            )
        else:
            density = text_density(counts.chars, counts.tags)
        dom.cache[key] = density
    return counts, density


#: The parameters a DensitySum selection depends on (its cache key).
_SELECTION_PARAMS = (
    "link_only_elements_as_links",
    "loose_text_in_sum",
    "lambda_",
    "multiple_blocks",
    "block_min_sum_ratio",
    "prune_ratio",
    "keep_path_text",
)


def density_sum_selection(
    dom: DomArrays, params: dict[str, Any], composite: bool
) -> tuple[NodeCounts, np.ndarray, np.ndarray, Selection]:
    """Counts, (composite) text density, DensitySum and the §4.2 selection of a CETD-DS method
    with ``params``, computed once per page and parameters (cached on ``dom``: ``combined`` reads
    the ``cectd-ds`` selection that method made)."""
    key = ("cetd.selection", composite, *(params[name] for name in _SELECTION_PARAMS))
    cached = dom.cache.get(key)
    if cached is None:
        counts, density = densities(dom, params, composite)
        sums = density_sum(dom, density, counts.is_element, loose_text_in_sum=params["loose_text_in_sum"])
        sel = extract_by_density_sum(
            dom,
            density,
            sums,
            counts.is_element,
            lambda_=params["lambda_"],
            multiple_blocks=params["multiple_blocks"],
            block_min_sum_ratio=params["block_min_sum_ratio"],
            prune_ratio=params["prune_ratio"],
            keep_path_text=params["keep_path_text"],
        )
        cached = dom.cache[key] = (counts, density, sums, sel)
    return cached


def _run_density_sum(doc: Document, params: dict[str, Any], composite: bool) -> MethodResult:
    dom = doc.dom
    if dom.size == 0 or dom.is_text[0]:
        return _empty_result()
    _, density, sums, sel = density_sum_selection(dom, params, composite)
    scores = {
        "threshold": sel.threshold,
        "body_density": float(density[0]),
        "max_density_sum": float(sums[sel.target]),
        "target_density": float(density[sel.target]),
        "blocks": float(sel.blocks),
        "pruned_blocks": float(sel.pruned),
    }
    return MethodResult(text=dom.text_of(sel.text_mask), scores=scores)


def cetd_ds(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CETD-DS: Text Density (Def. 1) with DensitySum (§4.2)."""
    return _run_density_sum(doc, params, composite=False)


def cectd_ds(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CECTD-DS: Composite Text Density (Def. 2) with DensitySum (§4.2)."""
    return _run_density_sum(doc, params, composite=True)


def nearest_block(dom: DomArrays) -> np.ndarray:
    """For every node, its nearest block-level ancestor-or-self (``<body>`` for the top ones).

    Pointer doubling on ``parent``: ``log2(depth)`` vector steps, no per-node loop.
    """
    cached = dom.cache.get("cetd.nearest_block")
    if cached is not None:
        return cached
    is_block = dom.is_block.copy()
    is_block[0] = True
    fast = compiled.module()
    if fast is not None:  # one pass in document order (a parent comes before its children)
        up = dom.cache["cetd.nearest_block"] = fast.nearest_marked(dom.parent, is_block.view(np.uint8))
        return up
    up = np.where(is_block, np.arange(dom.size), dom.parent0)
    for _ in range(64):  # 2**64 levels: never reached; converges after log2(depth) steps
        nxt = up.take(up)
        if (nxt == up).all():
            break
        up = nxt
    dom.cache["cetd.nearest_block"] = up
    return up


def cectd_s(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CECTD-S: Composite Text Density smoothed with the sibling nodes (§4.3), thresholded at
    λ × ``<body>``'s density (§4.1): an element whose smoothed density reaches the threshold is
    content and keeps its own text (§4: "any node with text density ≥ t is content").

    Improvement ``inline_follows_block``: the text of inline elements (links, emphasis...) follows
    the decision of the nearest block-level element, so that a link inside a content paragraph is
    not lost for its own density of 0 (paper reading: every element decides for its own text).
    """
    dom = doc.dom
    if dom.size == 0 or dom.is_text[0]:
        return _empty_result()
    counts, density = densities(dom, params, composite=True)
    smoothed = smooth_with_siblings(dom, density, params["sibling_weight"])
    threshold = params["lambda_"] * float(smoothed[0])
    content = counts.is_element & (smoothed >= threshold)
    scores = {
        "threshold": threshold,
        "body_density": float(density[0]),
        "content_elements": float(np.count_nonzero(content)),
    }
    if not content[1:].any():
        # no element is denser than <body> itself: the page is uniformly dense (no boilerplate
        # to tell apart), so all of it is content rather than none of it
        scores["whole_page"] = 1.0
        return MethodResult(text=dom.text_of(dom.is_text), scores=scores)
    owner = dom.parent0
    if params["inline_follows_block"]:
        owner = nearest_block(dom).take(owner)
    text_mask = dom.is_text & dom.has_parent & content.take(owner)
    return MethodResult(text=dom.text_of(text_mask), scores=scores)


__all__ = [
    "LINK_TAGS",
    "NodeCounts",
    "cectd_ds",
    "cectd_s",
    "cetd_ds",
    "composite_text_density",
    "density_sum",
    "node_counts",
    "smooth_with_siblings",
    "subtree_argmax",
    "text_density",
]
