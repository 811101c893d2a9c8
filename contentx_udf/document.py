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

# --- tags ------------------------------------------------------------------------------

#: Elements removed with their content before anything is measured.
REMOVED_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "applet",
    "canvas",
    "svg",
    "math",
    "head",
)

#: Elements hidden in the markup (the CETD paper names hidden text as its main precision loss).
HIDDEN_SELECTOR = (
    '[hidden], [style*="display:none" i], [style*="display: none" i], '
    '[style*="visibility:hidden" i], [style*="visibility: hidden" i], [type="hidden"]'
)

#: Block-level elements: their boundaries become line breaks in the output text.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body br caption center dd details dialog div dl dt
    fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 header hgroup hr
    legend li main menu nav ol option p pre section summary table tbody td tfoot th thead tr
    ul textarea select""".split()
)

#: Void elements (no end tag in the serialisation).
VOID_TAGS = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())

#: Elements whose end tag HTML allows to omit (not counted when bounding nesting depth).
_OPTIONAL_END_TAGS = frozenset(
    "p li dt dd option optgroup tr td th tbody thead tfoot colgroup caption rb rt rtc rp".split()
)

_TAG_IDS_SAMPLE = (
    "<html><head><title></title><base><link><meta></head><body>"
    + "".join(
        f"<{t}></{t}>"
        for t in """a abbr address article aside audio b bdi bdo blockquote button canvas
        center cite code data datalist dd del details dfn dialog div dl dt em embed fieldset
        figcaption figure font footer form h1 h2 h3 h4 h5 h6 header hgroup i iframe ins kbd
        label legend li main map mark menu meter nav noscript object ol optgroup option output
        p picture pre progress q s samp section select small span strike strong sub summary
        sup svg template textarea time tt u ul var video math big marquee nobr""".split()
    )
    + "<br><hr><img><input><wbr><area><param><source><track><keygen>"
    + "<table><caption></caption><colgroup><col></colgroup><thead><tr><th></th></tr></thead>"
    + "<tbody><tr><td></td></tr></tbody><tfoot></tfoot></table></body></html>"
)


def _build_tag_ids() -> dict[str, int]:
    tree = LexborHTMLParser(_TAG_IDS_SAMPLE)
    ids = {node.tag: node.tag_id for node in tree.root.traverse()}
    ids.update({"frame": ids.get("frame", -100), "frameset": ids.get("frameset", -101)})
    return ids


#: Lexbor tag id of each standard HTML tag name.
TAG_IDS: dict[str, int] = _build_tag_ids()
TEXT_TAG_ID = 2
COMMENT_TAG_ID = 4


def tag_ids(names) -> np.ndarray:
    """Lexbor tag ids of the given tag names (unknown names are left out)."""
    return np.array(sorted({TAG_IDS[n] for n in names if n in TAG_IDS}), dtype=np.int64)


_BLOCK_IDS = tag_ids(BLOCK_TAGS)

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


# --- the source view -------------------------------------------------------------------

_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
#: A tag of the serialised body: "<" then a name or "/" + name, up to the next ">".
_TAG_SPLIT_RE = re.compile(r"(</?[A-Za-z][^>]*>)")
_TAG_NAME_RE = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*>")


@dataclass
class SourceArrays:
    """The cleaned ``<body>`` as HTML source text, with per-character arrays.

    ``codes[i]`` is the code point of character ``i`` of :attr:`html`; ``is_tag[i]`` tells
    whether it belongs to a tag.  ``tag_start``/``tag_end`` are the character spans of the
    tags, ``tag_name`` their lower-case names and ``tag_closing`` whether they are end tags.
    Entities stay escaped in :attr:`html` (``&amp;`` is five characters); :meth:`text_of`
    unescapes them in the output.
    """

    html: str
    codes: np.ndarray
    is_tag: np.ndarray
    tag_start: np.ndarray
    tag_end: np.ndarray
    tag_name: list[str]
    tag_closing: np.ndarray

    @classmethod
    def from_html(cls, body_html: str) -> SourceArrays:
        # comments are dropped from the source; then "<" only opens tags (Lexbor escapes it in text)
        html = _COMMENT_RE.sub("", body_html) if "<!--" in body_html else body_html
        parts = _TAG_SPLIT_RE.split(html)  # text, tag, text, tag, ..., text
        lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        starts = np.zeros(len(parts), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        t_start = starts[1::2]
        t_end = t_start + lengths[1::2]
        part_is_tag = np.zeros(len(parts), dtype=bool)
        part_is_tag[1::2] = True
        is_tag = np.repeat(part_is_tag, lengths)
        found = _TAG_NAME_RE.findall(html)  # same matches as the split, in order
        names = [name.lower() for _slash, name in found]
        closing = np.fromiter((slash == "/" for slash, _name in found), dtype=bool, count=len(found))
        codes = np.frombuffer(html.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        return cls(
            html=html,
            codes=codes,
            is_tag=is_tag,
            tag_start=t_start,
            tag_end=t_end,
            tag_name=names,
            tag_closing=closing,
        )

    @property
    def size(self) -> int:
        return len(self.html)

    @cached_property
    def tag_is_block(self) -> np.ndarray:
        return np.fromiter((n in BLOCK_TAGS for n in self.tag_name), dtype=bool, count=len(self.tag_name))

    def tag_mask(self, names) -> np.ndarray:
        """Boolean mask over tags whose name is in ``names``."""
        names = set(names)
        return np.fromiter((n in names for n in self.tag_name), dtype=bool, count=len(self.tag_name))

    def inside(self, names) -> np.ndarray:
        """Per-character mask: the character lies inside an element named in ``names``
        (between its start and end tag, the tags included)."""
        sel = self.tag_mask(names)
        delta = np.zeros(self.size + 1, dtype=np.int64)
        opening = sel & ~self.tag_closing
        closing = sel & self.tag_closing
        np.add.at(delta, self.tag_start[opening], 1)
        np.add.at(delta, self.tag_end[closing], -1)
        return np.cumsum(delta[:-1]) > 0

    def text_of(self, char_mask: np.ndarray) -> str:
        """Text of the selected non-tag characters; block tags become line breaks."""
        keep = char_mask & ~self.is_tag
        if not keep.any():
            return ""
        out = self.codes.copy()
        block_starts = self.tag_start[self.tag_is_block]
        out[block_starts] = 10  # "\n"
        keep = keep.copy()
        keep[block_starts] = True
        text = out[keep].tobytes().decode("utf-32-le", "replace")
        text = _unescape(text)
        lines = (" ".join(line.split()) for line in text.split("\n"))
        return "\n".join(line for line in lines if line)

    @cached_property
    def full_text(self) -> str:
        return self.text_of(np.ones(self.size, dtype=bool))


def _unescape(text: str) -> str:
    if "&" not in text:
        return text
    import html as _html

    return _html.unescape(text)


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
