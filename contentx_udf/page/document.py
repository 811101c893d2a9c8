"""Parse once: the shared representation every extractor reads.

A page is decoded (:mod:`contentx_udf.page.decode`), bounded, parsed a single time with
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

import codecs
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from . import compiled
from .decode import decode_html, utf8_source
from .nesting import bound_nesting, nesting_within
from .source import SourceArrays
from .tags import (
    BLOCK_TAGS,
    COMMENT_TAG_ID,
    HIDDEN_SELECTOR,
    REMOVED_TAGS,
    TAG_IDS,  # noqa: F401  (re-exported: tests look tags up by name from here)
    TEXT_TAG_ID,
    tag_ids,
)


class cached_property:  # noqa: N801 (named as the functools decorator it replaces)
    """``functools.cached_property`` without its lock: Python 3.11's takes an ``RLock`` on every
    first access (removed in 3.12), a few microseconds each on a page's dozen cached views.  The
    value is stored in the instance's ``__dict__``, which later reads find first (a non-data
    descriptor); two threads computing one view at once would compute the same value twice."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


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

#: A hidden element this close to ``<body>`` (1 = a child of it) that holds more than
#: ``HIDDEN_CONTENT_SHARE`` of the body's text is the page itself, hidden until a script shows
#: it (an anti-flicker wrapper ``style="visibility:hidden"``): kept.
HIDDEN_CONTENT_DEPTH = 2
HIDDEN_CONTENT_SHARE = 0.5
#: Below this many characters a hidden element is removed without measuring the body.
HIDDEN_CONTENT_MIN_CHARS = 500
#: React's streamed server rendering puts each resolved part of the page in ``<div hidden
#: id="S:n">`` and a script moves it into place: the page's content, kept.
_REACT_STREAMED_ID = re.compile(r"S:\d+$")


def _shown_by_script(node, body, body_chars) -> bool:
    """Whether the hidden element ``node`` is page content that a script reveals: a React
    streamed part, or an element near ``<body>`` holding most of its text (``body_chars()``)."""
    attrs = node.attributes
    if node.tag == "div" and "hidden" in attrs and _REACT_STREAMED_ID.match(attrs.get("id") or ""):
        return True
    depth, up, body_id = 0, node, body.mem_id  # (a node's Python object is new at every access)
    while up is not None and up.mem_id != body_id and depth <= HIDDEN_CONTENT_DEPTH:
        up, depth = up.parent, depth + 1
    if up is None or depth > HIDDEN_CONTENT_DEPTH:
        return False
    chars = len(node.text(deep=True))
    return chars >= HIDDEN_CONTENT_MIN_CHARS and chars > HIDDEN_CONTENT_SHARE * body_chars()


#: Lexbor tag ids of REMOVED_TAGS as a table by tag id (the compiled cleaning reads it).
def _removed_tag_table() -> np.ndarray | None:
    """1 at the Lexbor tag id of each of REMOVED_TAGS (read from a parsed sample); None when one
    is not found (the compiled cleaning then stays off)."""
    sample = "<html><head></head><body>" + "".join(f"<{t}></{t}>" for t in REMOVED_TAGS) + "</body></html>"
    ids = {node.tag: node.tag_id for node in LexborHTMLParser(sample).root.traverse()}
    if not all(t in ids for t in REMOVED_TAGS):
        return None
    table = np.zeros(max(ids[t] for t in REMOVED_TAGS) + 1, dtype=np.uint8)
    table[[ids[t] for t in REMOVED_TAGS]] = 1
    return table


_REMOVED_TAG_TABLE = _removed_tag_table()
_DIV_TAG_ID = int(tag_ids(["div"])[0])


def _clean(tree) -> int:
    """Cleaning: the removed tags and hidden elements under ``<body>`` (or the whole tree without
    one) removed; the compiled pass when it decides alone, else :func:`_remove_unseen`.  Returns
    how many hidden elements were kept."""
    body = tree.body
    fast = compiled.module()
    if fast is not None and body is not None and _REMOVED_TAG_TABLE is not None:
        head = tree.head
        removed = fast.remove_unseen(
            body.mem_id,
            head.mem_id if head is not None else 0,
            _REMOVED_TAG_TABLE,
            _DIV_TAG_ID,
            HIDDEN_CONTENT_DEPTH,
            HIDDEN_CONTENT_MIN_CHARS,
        )
        if removed is not None:
            return 0
    return _remove_unseen(body if body is not None else tree, body)


_TITLE_TAG_ID = int(tag_ids(["title"])[0])


def _title(tree) -> str | None:
    """The text of the first ``<title>`` in document order, whitespace collapsed (None without one):
    the compiled walk from ``<html>`` that stops there, or ``tags``, Lexbor's walk by tag name over
    the whole tree (the node ``css_first("title")`` finds without compiling a selector)."""
    fast = compiled.module()
    if fast is not None:
        root = tree.root
        text = fast.first_text_of(root.mem_id, _TITLE_TAG_ID) if root is not None else None
    else:
        titles = tree.tags("title")
        text = titles[0].text() if titles else None
    return " ".join(text.split()) if text is not None else None


def _remove_unseen(scope, body) -> int:
    """Remove the removed tags and the hidden elements under ``scope`` (later nodes first, so no
    node is removed after its subtree was freed), except hidden page content that a script shows
    (:func:`_shown_by_script`).  Returns how many hidden elements were kept."""
    kept = 0
    measured: list[int] = []

    def body_chars() -> int:  # measured once, when first needed
        if not measured:
            measured.append(len(body.text(deep=True)))
        return measured[0]

    for node in reversed(scope.css(_CLEAN_SELECTOR)):
        if body is not None and node.tag not in REMOVED_TAGS and _shown_by_script(node, body, body_chars):
            kept += 1
            continue
        node.decompose()
    return kept


_BLOCK_END = np.array(["\x00"], dtype=object)
_CLEAN_SELECTOR = ", ".join(REMOVED_TAGS) + ", " + HIDDEN_SELECTOR


def _encode(text: str) -> tuple[bytes, bool]:
    """``text.encode("utf-8", "ignore")`` and whether that is ``text``'s exact encoding (lone
    surrogates are dropped)."""
    try:
        return text.encode("utf-8"), True
    except UnicodeEncodeError:
        return text.encode("utf-8", "ignore"), False


_BOM_PREFIXES = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _valid_utf8(html: str | bytes, content_type: str | None) -> tuple[bytes, int] | None:
    """``(html, characters)`` when :func:`decode_html` decodes the bytes ``html`` as UTF-8 with
    nothing replaced (no byte-order mark, valid UTF-8, no other charset declared first), found
    with the compiled check instead of decoding; None otherwise (or without the compiled passes)."""
    fast = compiled.module()
    if fast is None or not isinstance(html, bytes) or html.startswith(_BOM_PREFIXES):
        return None
    valid, chars, is_ascii = fast.utf8_check(html)
    if not valid or utf8_source(html, content_type, is_ascii) is None:
        return None
    return html, chars


def _utf8_input(html: str | bytes, decoded) -> bytes | None:
    """The page bytes when they are exactly the UTF-8 encoding of the decoded text."""
    if isinstance(html, bytes) and decoded.encoding == "utf-8" and not decoded.replaced:
        return html[3:] if html.startswith(codecs.BOM_UTF8) else html
    return None


# --- the DOM view ---------------------------------------------------------------------


@dataclass(eq=False)
class DomArrays:
    """The ``<body>`` subtree flattened in document order (index 0 is ``<body>``).

    Comments are not included.  ``end[i]`` is one past the last node of ``i``'s subtree,
    so the subtree of ``i`` is ``i:end[i]``.  The text of the text nodes is kept once,
    joined with ``"\\x00"`` (which no text node contains) in :attr:`joined_text`, as
    Lexbor's C-level text walk returns it; per-node views are derived lazily.
    """

    tag_id: np.ndarray  # int64 Lexbor tag id; TEXT_TAG_ID for text nodes
    parent: np.ndarray  # int64, -1 for the root
    end: np.ndarray  # int64, exclusive end of the subtree
    text_list: list[str]  # text of the text nodes, in document order
    joined_text: str  # "\x00".join(text_list)
    truncated: bool = False  # True when max_nodes cut the traversal
    #: Lexbor node id (``mem_id``) of every node's parent (-1 or unknown for the root): maps
    #: nodes found by a CSS query back to array indices (:meth:`indices_of_parents`).
    parent_mem: np.ndarray | None = field(default=None, repr=False)
    #: Per-page statistics shared by the methods (``extract_all`` computes each once).
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.tag_id)

    # NumPy's Python-level wrappers (np.cumsum, np.flatnonzero, ...) cost more than the work on
    # a page of ~1000 nodes: the hot paths call ufunc methods and array methods directly.

    @cached_property
    def is_text(self) -> np.ndarray:
        return self.tag_id == TEXT_TAG_ID

    @cached_property
    def text_nodes(self) -> np.ndarray:
        """Indices of the text nodes (the nodes of :attr:`text_list`)."""
        return self.is_text.nonzero()[0]

    @cached_property
    def small_tag_id(self) -> np.ndarray:
        """``tag_id`` with custom elements (large ids) mapped to 255: an index into tag tables."""
        return np.minimum(self.tag_id, 255)

    @cached_property
    def depth(self) -> np.ndarray:
        """Depth of every node (0 for ``<body>``): the subtrees that contain it, less its own."""
        return self.cover_count(np.arange(self.size)) - 1

    @cached_property
    def texts(self) -> list[str]:
        """Text of every node, ``""`` for elements."""
        out = np.full(self.size, "", dtype=object)
        out[self.text_nodes] = self.text_list
        return out.tolist()

    @cached_property
    def text_len(self) -> np.ndarray:
        """Characters of each text node without leading/trailing whitespace (0 for elements)."""
        out = np.zeros(self.size, dtype=np.int64)
        fast = compiled.module()
        if fast is not None:
            out.put(self.text_nodes, self.text_counts(fast)[1])
            return out
        lengths = np.fromiter(map(len, map(str.strip, self.text_list)), np.int64, len(self.text_list))
        out.put(self.text_nodes, lengths)
        return out

    def text_counts(self, fast) -> tuple[np.ndarray, np.ndarray]:
        """Words (``len(t.split())``) and stripped length (``len(t.strip())``) of every text node
        from one compiled pass (``fast``: the compiled module), once per page."""
        counts = self.cache.get("text_counts")
        if counts is None:
            counts = self.cache["text_counts"] = fast.text_counts(self.text_list)
        return counts

    def has_tag(self, names) -> np.ndarray:
        """Boolean mask of element nodes whose tag is one of ``names``."""
        return _tag_table(names if isinstance(names, frozenset | tuple) else tuple(names)).take(
            self.small_tag_id
        )

    def subtree_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each node's subtree, the node included (int64 for integer
        and boolean values, float64 for floats)."""
        csum = np.empty(self.size + 1, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
        csum[0] = 0
        np.add.accumulate(values, dtype=csum.dtype, out=csum[1:])
        return csum.take(self.end) - csum[:-1]

    @cached_property
    def parent0(self) -> np.ndarray:
        """``parent`` with the root's -1 replaced by 0 (for gathers; mask with ``parent >= 0``)."""
        return np.maximum(self.parent, 0)

    @cached_property
    def has_parent(self) -> np.ndarray:
        return self.parent >= 0

    @cached_property
    def is_block(self) -> np.ndarray:
        """Mask of the block-level elements (:data:`BLOCK_TAGS`)."""
        return self.has_tag(BLOCK_TAGS)

    @cached_property
    def child_count(self) -> np.ndarray:
        """Number of children (elements and text nodes) of every node."""
        parent = self.parent[1:]
        return np.bincount(parent[parent >= 0], minlength=self.size)

    @cached_property
    def child_elements(self) -> np.ndarray:
        """Number of element children of every node."""
        inner = (~self.is_text & self.has_parent).nonzero()[0]
        return np.bincount(self.parent.take(inner), minlength=self.size)

    def children_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each node's direct children."""
        if self.size <= 1:
            return np.zeros(self.size, dtype=np.float64)
        fast = compiled.module()
        if fast is not None:  # (the same additions in the same order)
            return fast.children_sum(self.parent, np.ascontiguousarray(values, dtype=np.float64))
        return np.bincount(self.parent[1:], weights=values[1:], minlength=self.size)

    def within(self, roots: np.ndarray) -> np.ndarray:
        """Mask of all nodes inside the subtrees of ``roots`` (boolean mask or indices)."""
        fast = compiled.module()
        if fast is not None and self.size:  # one pass in document order
            if roots.dtype == bool:
                marked = np.ascontiguousarray(roots).view(np.uint8)
            else:
                marked = np.zeros(self.size, dtype=np.uint8)
                marked[roots] = 1
            return fast.within(self.parent, marked)
        return self.cover_count(roots) > 0

    def cover_count(self, roots: np.ndarray) -> np.ndarray:
        """For every node, how many of the subtrees of ``roots`` contain it."""
        roots = roots.nonzero()[0] if roots.dtype == bool else np.asarray(roots, dtype=np.int64)
        n = self.size + 1
        delta = np.bincount(roots, minlength=n) - np.bincount(self.end.take(roots), minlength=n)
        return np.add.accumulate(delta[:-1])

    @cached_property
    def block_seq(self) -> np.ndarray:
        """Block counter: two text nodes are in the same block iff their values are equal."""
        starts = self.is_block.nonzero()[0]
        n = self.size + 1
        delta = np.bincount(starts, minlength=n) + np.bincount(self.end.take(starts), minlength=n)
        return np.add.accumulate(delta[:-1])

    @cached_property
    def text_array(self) -> np.ndarray:
        """:attr:`text_list` as an object array (for fancy indexing)."""
        out = np.empty(len(self.text_list), dtype=object)
        out[:] = self.text_list
        return out

    @cached_property
    def text_block_seq(self) -> np.ndarray:
        """:attr:`block_seq` of the text nodes."""
        return self.block_seq.take(self.text_nodes)

    def text_of(self, mask: np.ndarray) -> str:
        """Text of the text nodes selected by ``mask`` (nodes; non-text entries are ignored).

        Remembered per selection: methods that select the same nodes (CETD-DS and CECTD-DS
        often do) share the text in ``extract_all``.
        """
        picked = mask.take(self.text_nodes)
        key = ("text_of", np.packbits(picked).tobytes())
        text = self.cache.get(key)
        if text is None:
            text = self.cache[key] = self._text_of(picked.nonzero()[0])
        return text

    def _text_of(self, ordinal: np.ndarray) -> str:
        return "\n".join(filter(None, self.block_texts(ordinal)))

    def block_texts(self, ordinal: np.ndarray) -> list[str]:
        """The text of each block that the text nodes ``ordinal`` (indices into
        :attr:`text_nodes`, in order) fall in, whitespace collapsed (``""`` for a blank one)."""
        if ordinal.size == 0:
            return []
        seq = self.text_block_seq.take(ordinal)
        fast = compiled.module()
        if fast is not None:  # the same, one compiled pass over the texts
            return fast.block_texts(self.text_list, ordinal.astype(np.int64, copy=False), seq)
        texts = self.text_array.take(ordinal)
        # a "\x00" (in no text) closes each block but the last, then one join and split
        ends = (seq[1:] != seq[:-1]).nonzero()[0]
        if ends.size:
            texts[ends] += _BLOCK_END  # (an object array: a numpy str would drop the NUL)
        return [" ".join(s.split()) for s in "".join(texts.tolist()).split("\x00")]

    def indices_of_parents(self, mem_ids: np.ndarray) -> np.ndarray:
        """Array index of each Lexbor node id in ``mem_ids`` that is the parent of some node
        (-1 for the others: childless elements and nodes outside the arrays)."""
        mem_ids = np.asarray(mem_ids, dtype=np.int64)
        if self.parent_mem is None or self.size <= 1:
            return np.full(mem_ids.size, -1, dtype=np.int64)
        known = self.parent_mem[1:]
        order = known.argsort(kind="stable")
        ordered = known.take(order)
        pos = np.minimum(ordered.searchsorted(mem_ids), ordered.size - 1)
        found = ordered.take(pos) == mem_ids
        return np.where(found, self.parent[1:].take(order.take(pos)), -1)

    @cached_property
    def full_text(self) -> str:
        """All visible text of the page, formatted like an extraction."""
        return self.text_of(np.ones(self.size, dtype=bool))


@lru_cache(maxsize=32)
def _tag_table(names: frozenset[str] | tuple[str, ...]) -> np.ndarray:
    """256 flags over the (small) tag ids; entry 255, where every custom element maps, is False."""
    ids = tag_ids(names)
    table = np.zeros(256, dtype=bool)
    table[ids[(ids >= 0) & (ids < 255)]] = True
    return table


_BLOCK_TABLE_U8 = _tag_table(BLOCK_TAGS).view(np.uint8)


def flatten_dom(root, max_nodes: int) -> DomArrays:
    """One pre-order pass over ``root`` collecting the arrays of :class:`DomArrays`.

    The Python loop reads two attributes per node: the tag id and the node id of the parent.
    A node's parent is the node just before the first node with the same parent id (the
    first child follows its parent in pre-order), so parent indices need no node ids of
    their own; subtree ends follow the last-child pointers (pointer jumping).  The text
    comes from one C-level walk of Lexbor (``text`` with a separator).  With the compiled passes
    (:mod:`.compiled`) one compiled walk gives the node arrays (and the depth) instead.
    """
    fast = compiled.module()
    if fast is not None:
        return _flatten_compiled(fast, root, max_nodes)
    tags: list[int] = []
    parent_ids: list[int] = []
    add_tag, add_parent = tags.append, parent_ids.append
    nodes = root.traverse(include_text=True)
    try:
        for node in islice(nodes, max_nodes + 1):
            add_tag(node.tag_id)
            add_parent(node.parent.mem_id)
    except AttributeError:  # a parentless root (not <body>, not <html>)
        return _flatten_slow(root, max_nodes)
    tag_id = np.array(tags, dtype=np.int64)
    keep = tag_id != COMMENT_TAG_ID
    kept = np.count_nonzero(keep)
    if len(tags) > max_nodes and kept <= max_nodes:
        return _flatten_slow(root, max_nodes)  # comments hid where max_nodes cuts
    if kept == 0:
        return _empty_dom()
    parent_mem = np.array(parent_ids, dtype=np.int64)
    parent = first_occurrence(parent_mem) - 1
    if kept < tag_id.size:  # drop the comments (leaves: never a parent; the root is no comment)
        new_index = np.add.accumulate(keep, dtype=np.int64) - 1
        parent = new_index.take(parent[keep])
        parent[0] = -1
        tag_id = tag_id[keep]
        parent_mem = parent_mem[keep]
    truncated = kept > max_nodes
    if truncated:
        tag_id, parent, parent_mem = tag_id[:max_nodes], parent[:max_nodes], parent_mem[:max_nodes]
    texts = _text_nodes(root, int(np.count_nonzero(tag_id == TEXT_TAG_ID)), truncated)
    if texts is None:
        return _flatten_slow(root, max_nodes)
    text_list, joined = texts
    return DomArrays(
        tag_id=tag_id,
        parent=parent,
        end=_subtree_ends(parent),
        text_list=text_list,
        joined_text=joined,
        truncated=truncated,
        parent_mem=parent_mem,
    )


def _text_nodes(root, n_text: int, truncated: bool) -> tuple[list[str], str] | None:
    """The ``n_text`` text nodes of ``root`` in document order and their NUL-joined text, read with
    one ``text(separator=NUL)`` call (the first ``n_text`` of them when the walk was truncated);
    None when the call does not give one piece per node (an empty text node without data, or a
    text holding a NUL): the caller reads them one by one."""
    if not n_text:
        return [], ""
    joined = root.text(separator="\x00")
    text_list = joined.split("\x00")
    if len(text_list) == n_text:
        return text_list, joined
    if truncated and len(text_list) > n_text:
        text_list = text_list[:n_text]
        return text_list, "\x00".join(text_list)
    return None


def _flatten_compiled(fast, root, max_nodes: int) -> DomArrays:
    """:func:`flatten_dom` with the node arrays from the compiled walk (``fast.walk``)."""
    tag_id, parent, end, depth, parent_mem, truncated, text_list = fast.walk_texts(root.mem_id, max_nodes)
    if tag_id.size == 0:
        return _empty_dom()
    views = fast.node_views(tag_id, parent, end, _BLOCK_TABLE_U8)
    if text_list is not None and len(text_list) == len(views[1]):  # (the walk read the texts)
        texts = text_list, "\x00".join(text_list)
    else:  # (a text node the walk could not read as Lexbor's text walk does)
        texts = _text_nodes(root, len(views[1]), bool(truncated))
    if texts is None:
        return _flatten_slow(root, max_nodes)
    text_list, joined = texts
    dom = DomArrays(
        tag_id=tag_id,
        parent=parent,
        end=end,
        text_list=text_list,
        joined_text=joined,
        truncated=truncated,
        parent_mem=parent_mem,
    )
    dom.__dict__["depth"] = depth  # (the cached properties, from the walk and one pass over it)
    dom.__dict__.update(zip(_NODE_VIEWS, views, strict=True))
    return dom


#: The cached properties of :class:`DomArrays` that ``node_views`` gives, in its order.
_NODE_VIEWS = ("is_text", "text_nodes", "small_tag_id", "parent0", "is_block", "block_seq")


def _flatten_slow(root, max_nodes: int) -> DomArrays:
    """:func:`flatten_dom` reading node ids and texts node by node (odd trees only)."""
    tag_list: list[int] = []
    mem_ids: list[int] = []
    parent_mem: list[int] = []
    texts: list[str] = []
    truncated = False
    for node in root.traverse(include_text=True):
        tid = node.tag_id
        if tid == COMMENT_TAG_ID:
            continue
        if len(tag_list) >= max_nodes:
            truncated = True
            break
        tag_list.append(tid)
        mem_ids.append(node.mem_id)
        parent = node.parent
        parent_mem.append(parent.mem_id if parent is not None else -1)
        if tid == TEXT_TAG_ID:
            texts.append(node.text_content or "")
    if not tag_list:
        return _empty_dom()
    parent_mem[0] = -1  # the root's parent is outside the arrays
    parent_mem_ids = np.array(parent_mem, dtype=np.int64)
    parent = _parent_indices(np.array(mem_ids, dtype=np.int64), parent_mem_ids)
    return DomArrays(
        tag_id=np.array(tag_list, dtype=np.int64),
        parent=parent,
        end=_subtree_ends(parent),
        text_list=texts,
        joined_text="\x00".join(texts),
        truncated=truncated,
        parent_mem=parent_mem_ids,
    )


def first_occurrence(values: np.ndarray) -> np.ndarray:
    """For every entry, the index of the first entry with the same value (``np.bincount`` of
    it, taken at it, gives each entry's group size)."""
    order = values.argsort(kind="stable")
    ordered = values.take(order)
    new_group = np.empty(values.size, dtype=bool)
    new_group[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_group[1:])
    group_first = order[new_group]  # stable sort: the first index of each value
    out = np.empty(values.size, dtype=np.int64)
    out[order] = group_first.take(np.add.accumulate(new_group, dtype=np.int64) - 1)
    return out


def _parent_indices(mem_ids: np.ndarray, parent_mem: np.ndarray) -> np.ndarray:
    """Map parent node ids to array indices (-1 where the parent is not in the arrays)."""
    order = np.argsort(mem_ids, kind="stable")
    sorted_ids = mem_ids[order]
    pos = np.searchsorted(sorted_ids, parent_mem)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    found = sorted_ids[pos] == parent_mem
    return np.where(found, order[pos], -1).astype(np.int64)


def _subtree_ends(parent: np.ndarray) -> np.ndarray:
    """Exclusive end of each pre-order subtree: one past its last descendant, found by
    following last-child pointers (pointer jumping, ``log2(depth)`` rounds)."""
    n = parent.size
    last = np.arange(n, dtype=np.int64)
    inner = (parent >= 0).nonzero()[0]
    np.maximum.at(last, parent.take(inner), inner)  # last child, or the node itself for a leaf
    while True:
        nxt = last.take(last)
        if (nxt == last).all():
            return last + 1
        last = nxt


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
    #: The decoded (and bounded) page as parsed (:attr:`html`); None when it is ``utf8`` decoded,
    #: which :attr:`html` then does on first use.
    decoded_html: str | None = field(default="", repr=False)
    #: The page's address when the caller knows it (``WARC-Target-URI``).
    url: str | None = None
    #: ``html`` in UTF-8 (what Lexbor parsed) when it is exactly that: searched instead of
    #: ``html`` with the compiled ``find_all`` (most pages' ``str`` is UCS-2 or UCS-4, where
    #: ``str.find`` is slow).
    utf8: bytes | None = field(default=None, repr=False)

    @classmethod
    def parse(
        cls,
        html: str | bytes,
        *,
        content_type: str | None = None,
        limits: Limits = DEFAULT_LIMITS,
        url: str | None = None,
    ) -> Document:
        notes: dict[str, float] = {}
        utf8 = _valid_utf8(html, content_type)
        if utf8 is not None and b"\x00" not in utf8[0] and utf8[1] <= limits.max_chars:
            # valid UTF-8 that decode_html decodes as UTF-8: parsed as it is, decoded only if needed
            data, encoding, text = utf8[0], "utf-8", None
            exact = True
            if not nesting_within(data, limits.max_depth):
                text = data.decode("utf-8")
                text, dropped = bound_nesting(text, limits.max_depth)
                if dropped:
                    notes["dropped_deep_tags"] = float(dropped)
                    data, exact = _encode(text)
            return cls._parsed(data, exact, text, encoding, limits, notes, url)
        decoded = decode_html(html, content_type)
        text = decoded.text
        if decoded.replaced:
            notes["decode_replaced"] = 1.0
        data = _utf8_input(html, decoded)
        # (a NUL is searched in the UTF-8 bytes when there are some: memchr, not a str scan)
        if (b"\x00" in data) if data is not None else ("\x00" in text):
            text = text.replace("\x00", "\ufffd")
            data = None
        if len(text) > limits.max_chars:
            notes["cut_chars"] = float(len(text) - limits.max_chars)
            text = text[: limits.max_chars]
            data = None
        exact = True  # (data is the UTF-8 of text)
        if data is None:
            data, exact = _encode(text)  # what Lexbor would be given for ``text``
        if not nesting_within(data, limits.max_depth):
            text, dropped = bound_nesting(text, limits.max_depth)
            if dropped:
                notes["dropped_deep_tags"] = float(dropped)
                data, exact = _encode(text)
        return cls._parsed(data, exact, text, decoded.encoding, limits, notes, url)

    @classmethod
    def _parsed(
        cls,
        data: bytes,
        exact: bool,
        text: str | None,
        encoding: str,
        limits: Limits,
        notes: dict[str, float],
        url: str | None,
    ) -> Document:
        """The document of the bounded page ``text`` whose UTF-8 is ``data`` (``exact``: exactly
        its encoding; ``text`` None: ``data`` decoded), parsed and cleaned."""
        tree = LexborHTMLParser(data)
        title = _title(tree)
        # Only <body> is ever read (or the whole tree when there is none): one selector walk
        # there finds the removed tags and the hidden elements (<body> itself included); the
        # later nodes (descendants) go first, so no node is removed after its subtree was freed.
        kept_hidden = _clean(tree)
        if kept_hidden:
            notes["kept_hidden_content"] = float(kept_hidden)
        if tree.body is None and tree.head is not None:  # a hidden <body> was removed
            tree.head.decompose()  # (the DOM view then reads the whole tree)
        return cls(
            tree=tree,
            title=title or None,
            encoding=encoding,
            limits=limits,
            notes=notes,
            decoded_html=text,
            url=url,
            utf8=data if exact else None,
        )

    @property
    def html(self) -> str:
        """The decoded (and bounded) page as parsed: read by methods that look at what cleaning
        removes (JSON-LD in ``<script>``, the ``<noscript>`` crawler view)."""
        if self.decoded_html is None:
            self.decoded_html = self.utf8.decode("utf-8") if self.utf8 is not None else ""
        return self.decoded_html

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
            return self.source.non_space_chars
        dom = self.dom
        return non_space_chars(dom.joined_text) - max(len(dom.text_list) - 1, 0)  # less the "\x00"


def non_space_chars(text: str) -> int:
    """Characters of ``text`` that are not whitespace (" \\n\\t\\r\\f\\v" and no-break space),
    counted at C level: the ASCII ones deleted from the UTF-8 bytes, no-break spaces counted (or
    one compiled pass over the string)."""
    fast = compiled.module()
    if fast is not None:
        return fast.non_space_chars(text)
    if text.isascii():
        return len(text.encode("ascii").translate(None, _ASCII_SPACES))
    data = text.encode("utf-8", "surrogatepass")
    return len(text) - (len(data) - len(data.translate(None, _ASCII_SPACES))) - text.count("\xa0")


_ASCII_SPACES = b" \n\t\r\f\v"


def _empty_dom() -> DomArrays:
    z = np.zeros(0, dtype=np.int64)
    return DomArrays(tag_id=z, parent=z, end=z, text_list=[], joined_text="")
