"""Parse once: the shared representation every extractor reads.

A page is decoded (:mod:`contentx_udf.decode`), bounded, parsed a single time with
selectolax's Lexbor parser and cleaned (script/style/comments and elements hidden in the
markup removed).  Two views are then derived lazily and cached, so that running eleven
methods on a page costs one parse and at most one computation of each view:

* :attr:`Document.dom` — the ``<body>`` subtree flattened into numpy arrays in document
  (pre-)order: tag ids, parent indices, subtree end indices, depth and the text of text
  nodes.  Subtree sums are ``cumsum`` differences and child sums are ``bincount`` over the
  parent array, so DOM methods (CETD, CoreEx) need no recursion and no per-node Python.
* :attr:`Document.source` — the cleaned ``<body>`` serialised back to HTML (Lexbor's
  serialiser: well-formed, every tag on one line) as a character array with a tag mask,
  for the source-based methods (CETR works on lines, CCB on characters and tokens).

Both views turn a selection back into text with block-level elements separated by a
newline and whitespace collapsed inside a block (:meth:`DomArrays.text_of`,
:meth:`SourceArrays.text_of`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from .decode import decode_html
from .source import SourceArrays
from .tags import (  # noqa: F401  (re-exported: the algorithm modules import them from here)
    _BLOCK_IDS,
    _OPTIONAL_END_TAGS,
    BLOCK_TAGS,
    COMMENT_TAG_ID,
    HIDDEN_SELECTOR,
    REMOVED_TAGS,
    TAG_IDS,
    TEXT_TAG_ID,
    VOID_TAGS,
    tag_ids,
)

# --- limits ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Bounds applied before the expensive work (parse, arrays)."""

    #: Decoded characters parsed; the rest of the page is cut (recorded in ``notes``).
    max_chars: int = 5_000_000
    #: DOM nodes (elements + text nodes) flattened into arrays; later nodes are dropped.
    max_nodes: int = 200_000
    #: Nesting depth of container elements; deeper tags are dropped before parsing
    #: (Lexbor's end-tag handling is quadratic in depth: 100k nested ``div`` take minutes).
    max_depth: int = 1_000


DEFAULT_LIMITS = Limits()

_TAG_TOKEN_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)[^>]*>")


def bound_nesting(html: str, max_depth: int) -> tuple[str, int]:
    """Drop start and end tags nested deeper than ``max_depth`` (their text is kept).

    Only container elements are counted (void elements and elements with optional end
    tags are not), so the estimate errs towards the real depth.  Returns the new HTML and
    the number of tags dropped.  Cheap exit when the page cannot be that deep.
    """
    if html.count("</") <= max_depth:
        return html, 0
    matches = list(_TAG_TOKEN_RE.finditer(html))
    if len(matches) <= max_depth:
        return html, 0
    names = [m.group(2).lower() for m in matches]
    closing = np.array([m.group(1) == "/" for m in matches])
    counted = np.array([n not in VOID_TAGS and n not in _OPTIONAL_END_TAGS for n in names])
    step = np.where(counted, np.where(closing, -1, 1), 0)
    depth_after = np.cumsum(step)
    # depth of an opening tag = depth after it; of a closing tag = depth before it.
    depth = np.where(closing, depth_after + 1, depth_after)
    drop = counted & (depth > max_depth)
    if not drop.any():
        return html, 0
    pieces: list[str] = []
    last = 0
    for i in np.flatnonzero(drop):
        m = matches[i]
        pieces.append(html[last : m.start()])
        last = m.end()
    pieces.append(html[last:])
    return "".join(pieces), int(drop.sum())


# --- the DOM view ---------------------------------------------------------------------


@dataclass
class DomArrays:
    """The ``<body>`` subtree flattened in document order (index 0 is ``<body>``).

    Comments are not included.  ``end[i]`` is one past the last node of ``i``'s subtree,
    so the subtree of ``i`` is ``i:end[i]``.
    """

    tag_id: np.ndarray  # int64 Lexbor tag id; TEXT_TAG_ID for text nodes
    parent: np.ndarray  # int64, -1 for the root
    end: np.ndarray  # int64, exclusive end of the subtree
    depth: np.ndarray  # int64, 0 for the root
    texts: list[str]  # text of text nodes, "" for elements
    truncated: bool = False  # True when max_nodes cut the traversal

    @property
    def size(self) -> int:
        return len(self.tag_id)

    @cached_property
    def is_text(self) -> np.ndarray:
        return self.tag_id == TEXT_TAG_ID

    @cached_property
    def text_len(self) -> np.ndarray:
        """Characters of each text node without leading/trailing whitespace (0 for elements)."""
        return np.fromiter((len(t.strip()) for t in self.texts), dtype=np.int64, count=self.size)

    def has_tag(self, names) -> np.ndarray:
        """Boolean mask of element nodes whose tag is one of ``names``."""
        return np.isin(self.tag_id, tag_ids(names))

    def subtree_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each node's subtree, the node included."""
        csum = np.concatenate(([0], np.cumsum(values)))
        return csum[self.end] - csum[np.arange(self.size)]

    def children_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each node's direct children."""
        if self.size <= 1:
            return np.zeros(self.size, dtype=np.float64)
        return np.bincount(self.parent[1:], weights=values[1:], minlength=self.size)

    def within(self, roots: np.ndarray) -> np.ndarray:
        """Mask of all nodes inside the subtrees of ``roots`` (boolean mask or indices)."""
        roots = np.flatnonzero(roots) if roots.dtype == bool else np.asarray(roots, dtype=np.int64)
        delta = np.zeros(self.size + 1, dtype=np.int64)
        np.add.at(delta, roots, 1)
        np.add.at(delta, self.end[roots], -1)
        return np.cumsum(delta[:-1]) > 0

    @cached_property
    def block_seq(self) -> np.ndarray:
        """Block counter: two text nodes are in the same block iff their values are equal."""
        is_block = np.isin(self.tag_id, _BLOCK_IDS)
        delta = np.zeros(self.size + 1, dtype=np.int64)
        starts = np.flatnonzero(is_block)
        np.add.at(delta, starts, 1)
        np.add.at(delta, self.end[starts], 1)
        return np.cumsum(delta[:-1])

    def text_of(self, mask: np.ndarray) -> str:
        """Text of the text nodes selected by ``mask`` (nodes; non-text entries are ignored)."""
        idx = np.flatnonzero(mask & self.is_text)
        if idx.size == 0:
            return ""
        seq = self.block_seq[idx]
        texts = self.texts
        blocks: list[str] = []
        current: list[str] = []
        prev = seq[0]
        for i, s in zip(idx.tolist(), seq.tolist(), strict=True):
            if s != prev:
                blocks.append("".join(current))
                current = []
                prev = s
            current.append(texts[i])
        blocks.append("".join(current))
        lines = (" ".join(b.split()) for b in blocks)
        return "\n".join(line for line in lines if line)

    @cached_property
    def full_text(self) -> str:
        """All visible text of the page, formatted like an extraction."""
        return self.text_of(np.ones(self.size, dtype=bool))


def flatten_dom(root, max_nodes: int) -> DomArrays:
    """One pre-order pass over ``root`` collecting the arrays of :class:`DomArrays`.

    The Python loop only records (tag id, node id, parent id, text) per node; parent
    indices, subtree ends and depths are then derived with numpy (sorting and pointer
    jumping), so the per-node cost is a few attribute reads.
    """
    tag_list: list[int] = []
    mem_ids: list[int] = []
    parent_mem: list[int] = []
    texts: list[str] = []
    truncated = False
    add_tag, add_mem, add_parent, add_text = tag_list.append, mem_ids.append, parent_mem.append, texts.append
    for node in root.traverse(include_text=True):
        tid = node.tag_id
        if tid == COMMENT_TAG_ID:
            continue
        if len(tag_list) >= max_nodes:
            truncated = True
            break
        add_tag(tid)
        add_mem(node.mem_id)
        add_parent(node.parent.mem_id)
        add_text(node.text_content or "" if tid == TEXT_TAG_ID else "")
    n = len(tag_list)
    if n == 0:
        return _empty_dom()
    parent_mem[0] = -1  # the root's parent is outside the arrays
    parent = _parent_indices(np.array(mem_ids, dtype=np.int64), np.array(parent_mem, dtype=np.int64))
    return DomArrays(
        tag_id=np.array(tag_list, dtype=np.int64),
        parent=parent,
        end=_subtree_ends(parent),
        depth=_depths(parent),
        texts=texts,
        truncated=truncated,
    )


def _parent_indices(mem_ids: np.ndarray, parent_mem: np.ndarray) -> np.ndarray:
    """Map parent node ids to array indices (-1 where the parent is not in the arrays)."""
    order = np.argsort(mem_ids, kind="stable")
    sorted_ids = mem_ids[order]
    pos = np.searchsorted(sorted_ids, parent_mem)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    found = sorted_ids[pos] == parent_mem
    return np.where(found, order[pos], -1).astype(np.int64)


def _pointer_jump(step: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Follow ``step`` from every node until a node with ``done`` is reached (or -1).

    O(n log depth): each round doubles the distance covered.
    """
    target = np.where(done, np.arange(step.size), step)
    while True:
        live = target >= 0
        nxt = np.where(live, target, 0)
        jumped = np.where(live & ~done[nxt], target[nxt], target)
        if np.array_equal(jumped, target):
            return target
        target = jumped


def _subtree_ends(parent: np.ndarray) -> np.ndarray:
    """Exclusive end of each pre-order subtree: the next sibling of the nearest ancestor-or-self
    that has one, else the array length."""
    n = parent.size
    idx = np.arange(n)
    order = np.lexsort((idx, parent))  # grouped by parent, in document order
    next_sibling = np.full(n, -1, dtype=np.int64)
    same = parent[order[1:]] == parent[order[:-1]]
    next_sibling[order[:-1][same]] = order[1:][same]
    has_next = next_sibling >= 0
    anchor = _pointer_jump(parent, has_next)
    return np.where(anchor >= 0, next_sibling[np.maximum(anchor, 0)], n).astype(np.int64)


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node (0 for roots) by pointer jumping (list ranking)."""
    depth = (parent >= 0).astype(np.int64)
    anc = parent.copy()
    while True:
        live = anc >= 0
        if not live.any():
            return depth
        nxt = np.where(live, anc, 0)
        depth = depth + np.where(live, depth[nxt], 0)
        anc = np.where(live, anc[nxt], -1)


# --- the document -----------------------------------------------------------------------


@dataclass
class Document:
    """A decoded, bounded, parsed and cleaned page: the single input of every extractor."""

    tree: LexborHTMLParser
    title: str | None
    encoding: str
    limits: Limits
    #: What bounding and decoding did to the page (recorded in every method's scores).
    notes: dict[str, float] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        html: str | bytes,
        *,
        content_type: str | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Document:
        decoded = decode_html(html, content_type)
        text = decoded.text
        notes: dict[str, float] = {}
        if decoded.replaced:
            notes["decode_replaced"] = 1.0
        if "\x00" in text:
            text = text.replace("\x00", "\ufffd")
        if len(text) > limits.max_chars:
            notes["cut_chars"] = float(len(text) - limits.max_chars)
            text = text[: limits.max_chars]
        text, dropped = bound_nesting(text, limits.max_depth)
        if dropped:
            notes["dropped_deep_tags"] = float(dropped)
        tree = LexborHTMLParser(text)
        title_node = tree.css_first("title")
        title = " ".join(title_node.text().split()) if title_node is not None else None
        tree.strip_tags(list(REMOVED_TAGS))
        for node in reversed(tree.css(HIDDEN_SELECTOR)):
            node.decompose()
        return cls(tree=tree, title=title or None, encoding=decoded.encoding, limits=limits, notes=notes)

    @cached_property
    def dom(self) -> DomArrays:
        body = self.tree.body
        if body is None:
            return flatten_dom(self.tree.root, self.limits.max_nodes) if self.tree.root else _empty_dom()
        dom = flatten_dom(body, self.limits.max_nodes)
        if dom.truncated:
            self.notes["node_limit"] = float(self.limits.max_nodes)
        return dom

    @cached_property
    def source(self) -> SourceArrays:
        body = self.tree.body
        return SourceArrays.from_html(body.html if body is not None else "")

    @cached_property
    def visible_chars(self) -> int:
        """Non-whitespace characters of all visible text (the denominator of ``content_ratio``).

        Read from whichever view a method already built, so that no view is built just for it.
        """
        if "dom" not in self.__dict__ and "source" in self.__dict__:
            src = self.source
            text = ~src.is_tag & ~np.isin(src.codes, _SPACE_CODES)
            return int(np.count_nonzero(text))
        return non_space_chars("".join(self.dom.texts))


_SPACE_CODES = np.array([ord(c) for c in " \n\t\r\f\v\xa0"], dtype=np.uint32)


def non_space_chars(text: str) -> int:
    """Characters of ``text`` that are not whitespace (C-level counting, no per-char Python)."""
    return len(text) - sum(text.count(c) for c in " \n\t\r\f\v\xa0")


def _empty_dom() -> DomArrays:
    z = np.zeros(0, dtype=np.int64)
    return DomArrays(tag_id=z, parent=z, end=z, depth=z, texts=[])
