"""CoreEx — content extraction from online news articles (Prasad & Paepcke, CIKM 2008).

Every DOM node gets two counts (§2): ``textCnt`` (words in its subtree; a link counts as one word)
and ``linkCnt`` (links in its subtree).  A link node is terminal: its anchor text is not counted,
only the link itself (``textCnt = linkCnt = 1``).  For each node, the subset ``S`` of its children
whose ratio ``(textCnt − linkCnt) / textCnt`` is above a threshold (0.9) gives ``setTextCnt`` and
``setLinkCnt``, and the node's score (§2.1) is::

    weight_ratio · (setTextCnt − setLinkCnt) / setTextCnt + weight_text · setTextCnt / pageText

with ``weight_ratio = 0.99`` and ``weight_text = 0.01``.  The best node wins (ties: the node higher
in the tree, then the earlier one); its set ``S`` is the extracted content.  ``select``, ``form``,
``input``, ``textarea`` and ``option`` are ignored, as are scripts (the :class:`Document` already
removed them).

Default weights 0.9 / 0.1 instead of the paper's 0.99 / 0.01 (still summing to 1, §2.1): with the
paper's weights one link-free paragraph outscores the article container holding a few inline
links (its ratio is 1 against ~0.97), so the extraction is a single paragraph; development-set
shingle F1 0.698 (recall 0.59) → 0.905.  ``weight_ratio=0.99, weight_text=0.01`` restores the paper.

Array formulation (no recursion): each node's own contribution (words of a text node, 1 for a
link) is zero inside links and ignored elements, so ``textCnt``/``linkCnt`` are subtree sums and
``setTextCnt``/``setLinkCnt`` are sums over the children in ``S`` (``bincount`` on ``parent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..page import compiled
from ..page.document import Document, DomArrays
from ..page.source import SPACE_CODE_POINTS
from .base import MethodResult

#: Elements ignored with their content (§2.1, "preprocessing steps").
IGNORED_TAGS = ("select", "form", "input", "textarea", "option")
#: The link node of §2.
LINK_TAGS = ("a",)

# Characters ``str.split()`` treats as whitespace, plus the separator 0 used between nodes.
_SPACE_TABLE = np.zeros(0x3002, dtype=bool)  # the last entry stays False for every larger code
_SPACE_TABLE[[0, *SPACE_CODE_POINTS]] = True
_ASCII_SPACE_TABLE = _SPACE_TABLE[:256].copy()
_ASCII_SPACE_TABLE[128:] = False  # not reached: ASCII text only
_UTF16_SPACE_TABLE = np.zeros(0x10000, dtype=bool)
_UTF16_SPACE_TABLE[: _SPACE_TABLE.size] = _SPACE_TABLE


def cached_word_counts(dom: DomArrays) -> np.ndarray:
    """:func:`word_counts`, once per page (cached on ``dom``: CoreEx and ``combined`` read it)."""
    cached = dom.cache.get("coreex.word_counts")
    if cached is None:
        cached = dom.cache["coreex.word_counts"] = word_counts(dom)
    return cached


def word_counts(dom: DomArrays) -> np.ndarray:
    """Number of whitespace-separated words (``str.split``) of every text node (0 for elements).

    One pass over the text nodes' text as Lexbor joined it (``"\x00"`` between nodes): a word
    starts at a non-space character preceded by a space or a node boundary.  ASCII text is read
    one byte per character.
    """
    out = np.zeros(dom.size, dtype=np.int64)
    joined = dom.joined_text
    if not joined:
        return out
    fast = compiled.module()
    if fast is not None:  # one compiled pass over the text nodes (str.split's whitespace)
        out.put(dom.text_nodes, dom.text_counts(fast)[0])
        return out
    if joined.isascii():
        codes = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        is_space = _ASCII_SPACE_TABLE.take(codes)
    else:  # UTF-16 units: a character outside the BMP is two non-space units, still one word
        codes = np.frombuffer(joined.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
        is_space = _UTF16_SPACE_TABLE.take(codes)  # (take: no fancy-index set-up)
    starts = ~is_space
    starts[1:] &= is_space[:-1]
    # the text node of a word: how many separators precede its first character
    node = (codes == 0).nonzero()[0].searchsorted(starts.nonzero()[0])
    out.put(dom.text_nodes, np.bincount(node, minlength=len(dom.text_list)))
    return out


@dataclass(frozen=True)
class CoreExCounts:
    """Per-node counts of §2 (arrays over all DOM nodes, pre-order)."""

    text_cnt: np.ndarray  # textCnt: words, a link counting as one word
    link_cnt: np.ndarray  # linkCnt: links
    counted: np.ndarray  # not ignored and not inside a link (a link is terminal)
    is_link: np.ndarray  # counted link nodes
    ignored: np.ndarray  # inside an ignored element


def coreex_counts(dom: DomArrays, words: np.ndarray, *, ignore_form_tags: bool = True) -> CoreExCounts:
    """``textCnt`` and ``linkCnt`` of every node (§2) as subtree sums of the own contributions."""
    none = np.zeros(dom.size, dtype=bool)
    is_link = dom.has_tag(LINK_TAGS)
    ignored_roots = dom.has_tag(IGNORED_TAGS) if ignore_form_tags else none
    ignored = dom.within(ignored_roots) if np.count_nonzero(ignored_roots) else none
    inside_link = dom.within(is_link) & ~is_link if np.count_nonzero(is_link) else none
    counted = ~ignored & ~inside_link
    own_link = is_link & counted
    own_text = words * (counted & dom.is_text) + own_link
    return CoreExCounts(
        text_cnt=dom.subtree_sum(own_text),
        link_cnt=dom.subtree_sum(own_link),
        counted=counted,
        is_link=own_link,
        ignored=ignored,
    )


def coreex_scores(
    dom: DomArrays,
    counts: CoreExCounts,
    *,
    subset_threshold: float,
    weight_ratio: float,
    weight_text: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Score of every node (§2.1; −inf where undefined), the membership of each node in its
    parent's set ``S``, and ``setTextCnt``/``setLinkCnt``."""
    text_cnt, link_cnt, counted = counts.text_cnt, counts.link_cnt, counts.counted
    text_f = text_cnt.astype(np.float64)
    child_ratio = np.where(text_cnt > 0, (text_f - link_cnt) / np.maximum(text_f, 1.0), -np.inf)
    in_set = counted & (child_ratio > subset_threshold)
    set_text = dom.children_sum(text_f * in_set)
    set_link = dom.children_sum(link_cnt * in_set.astype(np.float64))
    page_text = max(float(text_cnt[0]), 1.0) if dom.size else 1.0
    candidate = counted & ~dom.is_text & ~counts.is_link & (set_text > 0)
    safe = np.maximum(set_text, 1.0)
    score = weight_ratio * (set_text - set_link) / safe + weight_text * set_text / page_text
    return np.where(candidate, score, -np.inf), in_set, set_text, set_link


def coreex_analysis(
    dom: DomArrays, params: dict[str, Any]
) -> tuple[CoreExCounts, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`coreex_counts` and :func:`coreex_scores` with ``params``, once per page and
    parameters (cached on ``dom``: ``combined`` reads what ``coreex`` computed)."""
    key = (
        "coreex.analysis",
        *(params[name] for name in ("ignore_form_tags", "subset_threshold", "weight_ratio", "weight_text")),
    )
    cached = dom.cache.get(key)
    fast = compiled.module()
    if cached is None and fast is not None and dom.size:  # the same counts and scores in C
        ignored_roots = dom.has_tag(IGNORED_TAGS) if params["ignore_form_tags"] else np.zeros(dom.size, bool)
        text_cnt, link_cnt, counted, own_link, ignored, *scores = fast.coreex_pass(
            dom.parent, dom.is_text.view(np.uint8), dom.has_tag(LINK_TAGS).view(np.uint8),
            ignored_roots.view(np.uint8), cached_word_counts(dom), float(params["subset_threshold"]),
            float(params["weight_ratio"]), float(params["weight_text"]),
        )  # fmt: skip
        counts = CoreExCounts(text_cnt, link_cnt, counted, own_link, ignored)
        cached = dom.cache[key] = (counts, *scores)
    if cached is None:
        counts = coreex_counts(dom, cached_word_counts(dom), ignore_form_tags=params["ignore_form_tags"])
        scores = coreex_scores(
            dom,
            counts,
            subset_threshold=params["subset_threshold"],
            weight_ratio=params["weight_ratio"],
            weight_text=params["weight_text"],
        )
        cached = dom.cache[key] = (counts, *scores)
    return cached


def best_node(dom: DomArrays, score: np.ndarray) -> int:
    """The highest score; ties go to the node higher in the tree, then to the earlier one (§2)."""
    top = (score == score.max()).nonzero()[0]
    if top.size == 1:
        return int(top[0])
    return int(top[np.argmin(dom.depth.take(top))])


def coreex(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CoreEx (§2): the node with the best score; its set ``S`` of children is the content."""
    dom = doc.dom
    if dom.size == 0:
        return MethodResult(text="", scores={"best_score": 0.0})
    counts, score, in_set, set_text, set_link = coreex_analysis(dom, params)
    if not np.isfinite(score).any():
        return MethodResult(text="", scores={"best_score": 0.0, "page_text": float(counts.text_cnt[0])})
    best = best_node(dom, score)
    members = (in_set & (dom.parent == best)).nonzero()[0]
    mask = dom.within(members) & ~counts.ignored
    scores = {
        "best_score": float(score[best]),
        "text_cnt": float(counts.text_cnt[best]),
        "link_cnt": float(counts.link_cnt[best]),
        "set_text_cnt": float(set_text[best]),
        "set_link_cnt": float(set_link[best]),
        "set_size": float(members.size),
        "page_text": float(counts.text_cnt[0]),
    }
    return MethodResult(text=dom.text_of(mask), scores=scores)
