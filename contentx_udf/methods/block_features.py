"""Features of every text block, the input of the ``combined`` classifier.

One row per block (:func:`~contentx_udf.methods.blocks.page_blocks`), the columns named by
:data:`FEATURE_NAMES` (the model file records the list it was trained with).  Everything is
read from the one parse and the arrays the seed methods share (``extract_all`` computes each
once):

* seed signals at the block: CETR's text-to-tag ratio over the block's stretch of the DOM, raw,
  Gaussian-smoothed over the block sequence and its derivative (CETR §3, histogram paper
  Eq. 1-3); CETD's text density (Def. 1), composite text density (Def. 2) and DensitySum
  (Def. 3) of the owner and its ancestors, and whether CECTD-DS selects the block; a CCB-style
  content/code vector blurred over the blocks (CCB §III); CoreEx scores (§2.1) of the owner and
  its ancestors and whether the CoreEx node's set holds the block; link density of the block
  and (CoreEx's linkCnt/textCnt) of its parent and grandparent;
* structure: owner tag, depth, relative position, enclosing ``article``/``main``/``nav``/...;
* repeated structure: how many siblings of the owner and of its three nearest ancestors share
  their tag and class (list items, cards, posts) and how often the block's text recurs;
* class/id/role/itemprop keywords of the owner and of all its ancestors (comment, share, nav,
  footer, content, ...);
* text shape: length, words, punctuation and sentence ends, digits, capitals, separators;
* the same signals for the neighbouring blocks (a window, as CETR smooths);
* page level: link density, block count, text length, JSON-LD ``@type``.

Ancestor flags are bit sets (one ``uint64`` per node) OR-ed down the tree by pointer doubling,
so no feature loops over nodes in Python; the only per-block Python is the block text itself.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache, reduce
from operator import attrgetter, or_
from urllib.parse import urlsplit

import numpy as np

from ..page import compiled
from ..page.document import Document, DomArrays, first_occurrence
from ..page.tags import TAG_IDS
from ..settings import DEFAULTS
from .blocks import Blocks, page_blocks
from .cetd import densities, density_sum_selection
from .coreex import cached_word_counts, coreex_analysis
from .page_signals import jsonld_types, title_hits

# --- vocabularies (changing any of them changes FEATURE_NAMES: retrain the model) ---------

#: Keyword groups: a class/id/role/itemprop/itemtype token (split at non-alphanumerics) matches
#: a group when it contains one of its words, or equals one of its ``=``-prefixed words.
KEYWORD_GROUPS: dict[str, tuple[str, ...]] = {
    "comment": ("comment", "reply", "respond", "discuss", "disqus"),
    "share": ("share", "social", "sharing", "facebook", "twitter", "whatsapp"),
    "related": ("related", "recommend", "similar", "popular", "trending", "readnext", "readmore"),
    "nav": ("nav", "menu", "breadcrumb", "pagination", "pager", "=toc", "skip"),
    "footer": ("footer", "copyright", "legal", "colophon", "contentinfo"),
    "header": ("header", "masthead", "topbar", "banner", "logo"),
    "sidebar": ("sidebar", "aside", "widget", "rail", "secondary", "complementary"),
    "ad": ("advert", "=ad", "=ads", "sponsor", "promo", "dfp", "taboola", "outbrain"),
    "cookie": ("cookie", "consent", "gdpr"),
    "newsletter": ("newsletter", "subscribe", "signup", "login", "register", "modal", "popup"),
    "tag": ("tag", "categor", "label", "topic"),
    "author": ("author", "byline", "contributor", "=bio"),
    "meta": ("meta", "date", "time", "posted", "published", "updated"),
    "caption": ("caption", "credit", "figure", "image", "photo", "gallery"),
    "content": ("content", "article", "post", "entry", "story", "body", "main", "text", "prose", "rich"),
    "title": ("title", "headline", "heading"),
    "product": ("product", "price", "cart", "=buy", "review", "rating", "offer"),
    "hidden": ("hidden", "sronly", "screenreader", "offscreen", "=sr"),
    "forum": ("message", "thread", "cooked", "postbody", "usertext"),
    "list": ("list", "card", "item", "grid", "tile", "teaser", "feed"),
    "button": ("btn", "button", "=cta", "action"),
    "doc": ("doc", "markdown", "=rst", "=api", "example", "highlight", "code"),
    "navigation": ("navigation",),
    "search": ("search",),
    "dialog": ("dialog", "overlay"),
}

#: Tags of the owner element, one feature each.
OWNER_TAGS = (
    "p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
    "dd", "dt", "figcaption", "section", "article", "body", "form", "option", "header", "footer",
    "nav", "aside", "main", "table", "tr", "ul", "ol", "br", "center", "address", "summary",
)  # fmt: skip
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")

#: Enclosing elements, one feature each (a tuple: any of them).
ANCESTOR_TAGS: tuple[tuple[str, ...], ...] = (
    ("article",), ("main",), ("nav",), ("aside",), ("header",), ("footer",), ("form",), ("li",),
    ("table",), ("a",), ("h1",), ("h2", "h3", "h4", "h5", "h6"), ("blockquote",), ("pre",),
    ("code",), ("figure",), ("button",), ("select",), ("label",), ("ul", "ol"), ("p",),
    ("section",), ("time",), ("strong", "b"), ("em", "i"), ("dl",), ("address",), ("details",),
)  # fmt: skip

#: JSON-LD ``@type`` values (lower case), one page-level feature each.
JSONLD_TYPES = (
    "article", "newsarticle", "blogposting", "product", "discussionforumposting", "qapage",
    "faqpage", "itemlist", "collectionpage", "webpage", "techarticle", "howto", "recipe",
    "event", "organization", "breadcrumblist", "offer", "review", "service", "localbusiness",
    "softwareapplication", "searchresultspage",
)  # fmt: skip

#: Words of the URL path (split at non-alphanumerics) hinting at the page type, one feature each.
URL_GROUPS: dict[str, frozenset[str]] = {
    "article": frozenset("article articles news blog blogs story stories post posts opinion".split()),
    "product": frozenset("product products shop store item items p dp buy".split()),
    "collection": frozenset("category categories collection collections tag tags topic topics c".split()),
    "forum": frozenset("forum forums thread threads t community discussion discussions questions q".split()),
    "docs": frozenset(
        "docs doc documentation api reference guide guides manual help wiki kb tutorial".split()
    ),
    "listing": frozenset("search list lists listing listings jobs events results page archive".split()),
    "service": frozenset("services service solutions pricing about contact features plans".split()),
}

#: Block features repeated for the neighbours at these offsets.
WINDOW_FEATURES = ("log_chars", "link_ratio", "in_cectd", "in_coreex", "ttr_smooth", "punct_ratio", "heading")
WINDOW_OFFSETS = (-2, -1, 1, 2)

_BASE_NAMES = (
    # text shape
    "log_chars", "log_words", "mean_word_len", "punct_ratio", "sentence_ends", "sentences_per_word",
    "digit_ratio", "upper_ratio", "separator_ratio", "ends_like_sentence", "title_overlap",
    # links
    "link_ratio", "log_links",
    # structure
    *(f"tag_{t}" for t in OWNER_TAGS), "heading", "depth", "depth_rel", "position", "position_chars",
    "chars_share", "before_h1", "after_h1",
    *(f"in_{t[0]}" for t in ANCESTOR_TAGS),
    # CETR / CCB
    "ttr", "ttr_smooth", "ttr_derivative", "ccb_blur", "ccb_blur_wide",
    # CETD
    "td", "ctd", "ctd_parent", "ctd_grandparent", "ds", "ds_parent", "ds_grandparent",
    "ctd_rel_body", "ds_rel_max", "in_cectd", "in_cectd_target",
    # CoreEx
    "coreex", "coreex_parent", "coreex_grandparent", "in_coreex", "coreex_set_share",
    "link_words_parent", "link_words_grandparent",
    # repeated structure
    "repeat_owner", "repeat_parent", "repeat_grandparent", "repeat_ggparent", "text_repeats",
    # keywords
    *(f"kw_{g}_near" for g in KEYWORD_GROUPS), *(f"kw_{g}_above" for g in KEYWORD_GROUPS),
    # page
    "page_link_ratio", "page_blocks", "page_chars", "page_noscript",
    "url_depth", "url_date", "url_number", "url_root", "url_query", "url_extension",
    *(f"url_{g}" for g in URL_GROUPS),
    *(f"ld_{t}" for t in JSONLD_TYPES),
)  # fmt: skip

#: The columns of the feature matrix, in order.
FEATURE_NAMES: tuple[str, ...] = _BASE_NAMES + tuple(
    f"{name}@{offset:+d}" for name in WINDOW_FEATURES for offset in WINDOW_OFFSETS
)
_COLUMN = {name: i for i, name in enumerate(FEATURE_NAMES)}
assert len(_COLUMN) == len(FEATURE_NAMES)
# block_features writes each of these runs (the owner and its ancestors) as one slice of columns
for _run in (
    ("ctd", "ctd_parent", "ctd_grandparent"),
    ("ds", "ds_parent", "ds_grandparent"),
    ("coreex", "coreex_parent", "coreex_grandparent"),
    ("repeat_owner", "repeat_parent", "repeat_grandparent", "repeat_ggparent"),
):
    assert [_COLUMN[n] - _COLUMN[_run[0]] for n in _run] == list(range(len(_run))), _run
#: The columns the neighbour features copy; the neighbour columns come last, feature by feature,
#: offset by offset.
_WINDOW_SOURCE = np.array([_COLUMN[name] for name in WINDOW_FEATURES])
_WINDOW_START = len(_BASE_NAMES)

# --- lookup tables -----------------------------------------------------------------------

_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
#: Bit set of each attribute token seen so far (tokens repeat across pages: a bounded cache).
_TOKEN_BITS: dict[str, int] = {}
_TOKEN_CACHE_SIZE = 200_000
#: Bit set of each (class, id, role, itemprop, itemtype) value seen so far (same bound).
_VALUE_BITS: dict[tuple[str | None, ...], int] = {}


def _keyword_tables() -> tuple[dict[str, int], dict[str, int], dict[str, int], re.Pattern[str]]:
    """The group bits of every exact keyword (``=word``); of every other keyword; for every other
    keyword the bits of the keywords that are its prefixes (itself included: found at a position,
    they are all there); and one pattern that finds the longest keyword starting at every
    position of a token."""
    exact: dict[str, int] = {}
    inside: dict[str, int] = {}
    for bit, words in enumerate(KEYWORD_GROUPS.values()):
        for word in words:
            table, key = (exact, word[1:]) if word.startswith("=") else (inside, word)
            table[key] = table.get(key, 0) | 1 << bit
    with_prefixes = {w: reduce(or_, (b for v, b in inside.items() if w.startswith(v)), 0) for w in inside}
    longest_first = sorted(inside, key=len, reverse=True)
    return exact, inside, with_prefixes, re.compile("(?=(" + "|".join(map(re.escape, longest_first)) + "))")


_EXACT_KEYWORD_BITS, _KEYWORD_BITS, _KEYWORD_PREFIX_BITS, _KEYWORD_AT = _keyword_tables()


def _compiled_keywords():
    """The compiled module with the keyword tables handed to it (once per module), or None."""
    fast = compiled.module()
    if fast is not None and not getattr(fast, "_contentx_keywords", False):
        fast.set_keywords(
            [(w.encode(), b) for w, b in _KEYWORD_BITS.items()],
            [(w.encode(), b) for w, b in _EXACT_KEYWORD_BITS.items()],
        )
        fast._contentx_keywords = True
    return fast


def token_bits(token: str) -> int:
    """The keyword groups (as a bit set) that the attribute token ``token`` matches: a group's
    ``=word`` when the token is that word, its other words when the token contains one."""
    bits = _TOKEN_BITS.get(token)
    if bits is None:
        bits = _EXACT_KEYWORD_BITS.get(token, 0)
        for keyword in _KEYWORD_AT.findall(token):
            bits |= _KEYWORD_PREFIX_BITS[keyword]
        if len(_TOKEN_BITS) >= _TOKEN_CACHE_SIZE:
            _TOKEN_BITS.clear()
        _TOKEN_BITS[token] = bits
    return bits


#: The attributes read for keywords (the first is the class, also read for repeated structure).
_ATTRIBUTES = ("class", "id", "role", "itemprop", "itemtype")
_ATTRIBUTE_SELECTOR = ", ".join(f"[{a}]" for a in _ATTRIBUTES)
_MEM_ID = attrgetter("mem_id")


def _tag_bits(groups: tuple[tuple[str, ...], ...]) -> np.ndarray:
    """256 bit sets over the small tag ids: bit ``i`` set for the tags of ``groups[i]``."""
    table = np.zeros(256, dtype=np.uint64)
    for bit, names in enumerate(groups):
        for name in names:
            tid = TAG_IDS.get(name, -1)
            if 0 <= tid < 255:
                table[tid] |= np.uint64(1) << np.uint64(bit)
    return table


_ANCESTOR_BITS = _tag_bits(ANCESTOR_TAGS)
#: The keyword bits sit above the ancestor tag bits in the one bit set OR-ed down the tree.
_KEYWORD_SHIFT = np.uint64(len(ANCESTOR_TAGS))
assert len(ANCESTOR_TAGS) + len(KEYWORD_GROUPS) <= 64
_OWNER_TAG_IDS = np.array([TAG_IDS.get(t, -999) for t in OWNER_TAGS], dtype=np.int64)
_HEADING_TABLE = np.zeros(256, dtype=bool)
_HEADING_TABLE[[TAG_IDS[h] for h in HEADINGS]] = True
_H1_ID = TAG_IDS["h1"]
_A_ID = TAG_IDS["a"]
_URL_DATE_RE = re.compile(r"/(?:19|20)\d\d[/-](?:0?[1-9]|1[0-2])\b")
_URL_NUMBER_RE = re.compile(r"\d{4,}")


#: Character classes counted per block (one code unit belongs to at most one class; 0 = none).
_CHAR_CLASSES = {
    "punct": ",;:",  # punctuation: these and the next class
    "sentence_end": ".!?",  # sentence ends: these and the wide ones
    "digit": "0123456789",
    "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "separator": "|·•»«›/",
    "wide_sentence_end": "。！？",
}
_CLASS_OF = np.zeros(0x10000, dtype=np.int64)
for _number, _chars in enumerate(_CHAR_CLASSES.values(), start=1):
    _CLASS_OF[[ord(c) for c in _chars]] = _number
_CLASSES = len(_CHAR_CLASSES) + 1
#: Code units a sentence ends with (all in the BMP: one UTF-16 unit each).
_SENTENCE_TAIL = np.zeros(0x10000, dtype=bool)
_SENTENCE_TAIL[[ord(c) for c in ".!?:;\"'”’)。！？"]] = True
_SENTENCE_TAIL_U8 = _SENTENCE_TAIL.view(np.uint8)
_WORD_RE = re.compile(r"\w+")
#: Gaussian sigmas (in blocks) of the CETR and CCB signals over the block sequence.
TTR_SIGMA = 2.0
CCB_SIGMA = 3.0
CCB_WIDE_SIGMA = 8.0
#: Characters a tag counts as in the CCB-style content/code vector.
CCB_TAG_CHARS = 8.0
#: A block's template: the tag and class of its owner and of this many of the owner's nearest
#: ancestors (the items of a list, the cards of a grid, the posts of a thread share one).
TEMPLATE_LEVELS = 2


@dataclass(frozen=True)
class BlockFeatures:
    """The blocks of a page and their feature rows (``matrix[i]`` describes ``blocks.texts[i]``)."""

    blocks: Blocks
    #: Template number of every block (0, 1, ...): blocks with the same number have owners of
    #: the same tag and class under ancestors of the same tags and classes (TEMPLATE_LEVELS).
    templates: np.ndarray
    #: float64, (blocks, len(FEATURE_NAMES)), column-major: each feature is one contiguous column
    #: (written one at a time here, read as the model's rows by ``matrix.T``)
    matrix: np.ndarray

    def column(self, name: str) -> np.ndarray:
        return self.matrix[:, _COLUMN[name]]


@lru_cache(maxsize=16)
def _gaussian_kernel(sigma: float) -> np.ndarray:
    """The Gaussian weights at -3 sigma .. 3 sigma (whole steps)."""
    radius = int(3 * sigma)
    return np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)


def smooth_gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian smoothing over a sequence, renormalised at the edges (CETR histogram paper Eq. 1-3)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n <= 1 or sigma <= 0:
        return values.copy()
    kernel = _gaussian_kernel(sigma)
    radius = kernel.size // 2
    num = np.convolve(values, kernel)[radius : radius + n]
    den = np.convolve(np.ones(n), kernel)[radius : radius + n]
    return num / den


def _or_down(dom: DomArrays, own: np.ndarray) -> np.ndarray:
    """For every node the OR of ``own`` over the node and all its ancestors (pointer doubling, or
    one compiled pass in document order)."""
    fast = compiled.module()
    if fast is not None:
        return fast.or_down(dom.parent, own)
    acc = own.copy()
    up = dom.parent0.copy()  # the root points at itself: its bits are OR-ed in harmlessly
    while True:
        acc |= acc.take(up)
        nxt = up.take(up)
        if (nxt == up).all():
            return acc
        up = nxt


def _text_bits(values: str) -> int:
    """The keyword groups (as a bit set) of the tokens of ``values`` (attribute values joined by
    a space)."""
    bits = 0
    for token in _TOKEN_SPLIT.split(values.lower()):
        bits |= token_bits(token)
    return bits


def _value_bits(key: tuple[str | None, ...]) -> int:
    """The keyword groups (as a bit set) of the attribute values ``key``, remembered in
    ``_VALUE_BITS`` (attribute values repeat within a page, menu items, and a site, templates)."""
    bits = _VALUE_BITS.get(key)
    if bits is None:
        bits = _text_bits(" ".join(v for v in key if v))
        if len(_VALUE_BITS) >= _TOKEN_CACHE_SIZE:
            _VALUE_BITS.clear()
        _VALUE_BITS[key] = bits
    return bits


def _raw_value_bits(key: bytes) -> int:
    """:func:`_value_bits` of the compiled look-up's key (called on a cache miss of a non-ASCII
    key: the compiled look-up stores it)."""
    return _text_bits(key.decode("utf-8", "replace"))


def _keyword_bits(doc: Document, dom: DomArrays, first_nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Own keyword bit set of the elements above some block (the only ones any block reads),
    from one CSS query for the elements with attributes; and a hash of their class value."""
    tree = doc.tree
    root = tree.body if tree.body is not None else tree.root
    fast = _compiled_keywords()
    if fast is not None and root is not None and dom.size:  # one compiled walk, the wanted elements
        above_blocks = fast.ancestors_marked(dom.parent, first_nodes)
        return fast.attribute_keys(root.mem_id, dom.size, _raw_value_bits, _TOKEN_CACHE_SIZE, above_blocks)
    own = np.zeros(dom.size, dtype=np.uint64)
    class_hash = np.zeros(dom.size, dtype=np.int64)
    if root is None or dom.size == 0:
        return own, class_hash
    nodes = root.css(_ATTRIBUTE_SELECTOR)
    if not nodes:
        return own, class_hash
    marks = np.zeros(dom.size, dtype=bool)
    marks[first_nodes] = True
    above_blocks = dom.subtree_sum(marks) > 0
    index = dom.indices_of_parents(np.fromiter(map(_MEM_ID, nodes), np.int64, len(nodes)))
    wanted = (index >= 0).nonzero()[0]
    wanted = wanted[above_blocks.take(index.take(wanted))]
    wanted_nodes = index.take(wanted)
    found_bits: list[int] = []
    classes: list[str] = []
    for k in wanted.tolist():
        key = tuple(map(nodes[k].attributes.get, _ATTRIBUTES))
        found_bits.append(_value_bits(key))
        classes.append(key[0] or "")  # (the hash of "" is 0: no class)
    own[wanted_nodes] = np.array(found_bits, dtype=np.uint64)
    class_hash[wanted_nodes] = np.fromiter(map(hash, classes), np.int64, len(classes)) & 0xFFFFFFFF
    return own, class_hash


def _repeated_siblings(dom: DomArrays, class_hash: np.ndarray) -> np.ndarray:
    """For every node, how many children of its parent share its tag and class (itself included):
    the items of a list, the cards of a grid, the posts of a thread."""
    fast = compiled.module()
    if fast is not None:  # one pass with a hash table instead of a sort
        return fast.repeated_siblings(dom.parent0, dom.small_tag_id, class_hash, dom.is_text.view(np.uint8))
    elements = (~dom.is_text).nonzero()[0]
    key = (dom.parent0.take(elements).astype(np.int64) << 40) | (
        dom.small_tag_id.take(elements).astype(np.int64) << 32
    )
    key |= class_hash.take(elements)
    out = np.ones(dom.size, dtype=np.int64)  # a text node is alone of its kind
    first = first_occurrence(key)  # (the same index for every element of a group)
    out[elements] = np.bincount(first).take(first)
    return out


def _templates(dom: DomArrays, lineage: np.ndarray, class_hash: np.ndarray) -> np.ndarray:
    """Template number of every block from ``lineage`` (its owner and the owner's ancestors, one
    row each): the distinct (tag, class) paths of the first TEMPLATE_LEVELS + 1 rows, numbered."""
    node_key = (dom.tag_id.astype(np.int64) << 32) | class_hash  # (class_hash < 2**32)
    path = node_key.take(lineage[0])
    for level in range(1, TEMPLATE_LEVELS + 1):  # (wraps around: a hash of the path)
        path = path * _PATH_MULTIPLIER + node_key.take(lineage[level])
    fast = compiled.module()
    if fast is not None:  # numbered in order of first occurrence (np.unique: in sorted order)
        return fast.key_groups(path)[0]
    return np.unique(path, return_inverse=True)[1].reshape(-1)


_PATH_MULTIPLIER = np.int64(0x9E3779B97F4A7C15 - (1 << 64))  # (odd: 2**64 / golden ratio)
_PATH_MULTIPLIER_U64 = int(_PATH_MULTIPLIER) & ((1 << 64) - 1)  # the same odd number, as uint64

#: The columns :func:`block_features` has ``lineage_columns`` write (its ``at`` argument: the
#: order of the ``L_...`` constants of ``_compiled.pyx``; the runs from these as asserted).
_LINEAGE_COLUMNS = np.array(
    [
        _COLUMN[name]
        for name in (
            "td", "ctd_rel_body", "ds_rel_max", "in_cectd_target", "coreex", "link_words_parent",
            "coreex_set_share", "repeat_owner",
        )
    ],
    dtype=np.int64,
)  # fmt: skip
_TD = _COLUMN["td"]
_REPEAT = _COLUMN["repeat_owner"]
assert [_COLUMN[n] - _TD for n in ("ctd", "ds", "ds_grandparent")] == [1, 4, 6]
assert _COLUMN["link_words_grandparent"] == _COLUMN["link_words_parent"] + 1


def _put_url_features(put, url: str | None) -> None:
    """Page-level features of the URL path (nothing for an unknown URL)."""
    if not url:
        return
    parts = urlsplit(url)
    path = parts.path or "/"
    segments = [seg for seg in path.split("/") if seg]
    put("url_depth", min(len(segments), 10))
    put("url_date", _URL_DATE_RE.search(path) is not None)
    put("url_number", _URL_NUMBER_RE.search(path) is not None)
    put("url_root", not segments)
    put("url_query", bool(parts.query))
    put("url_extension", bool(segments) and "." in segments[-1])
    words = set(_TOKEN_SPLIT.split(path.lower()))
    for group, hints in URL_GROUPS.items():
        if not words.isdisjoint(hints):
            put(f"url_{group}", 1.0)


def _bit_columns(bits: np.ndarray, count: int) -> np.ndarray:
    """(len(bits), count) 0/1 matrix of the low ``count`` bits of a uint64 array."""
    as_bytes = np.ascontiguousarray(bits, dtype="<u8").view(np.uint8).reshape(-1, 8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :count]


def _gradient(values: np.ndarray) -> np.ndarray:
    """``np.gradient`` of at least two values (unit spacing): central differences inside,
    one-sided at the ends, the same arithmetic without its generic set-up."""
    out = np.empty_like(values)
    np.subtract(values[2:], values[:-2], out=out[1:-1])
    out[1:-1] /= 2.0
    out[0] = values[1] - values[0]
    out[-1] = values[-1] - values[-2]
    return out


#: The columns :func:`_compiled_columns` has the compiled pass write (its ``at`` argument: the
#: order of the ``C_...`` constants of ``_compiled.pyx``; the bit columns are runs from these).
_COMPILED_COLUMNS = np.array(
    [
        _COLUMN[name]
        for name in (
            "log_chars", "log_words", "mean_word_len", "punct_ratio", "sentence_ends",
            "sentences_per_word", "digit_ratio", "upper_ratio", "separator_ratio",
            "ends_like_sentence", "link_ratio", "log_links", "heading", "depth", "depth_rel",
            "position", "position_chars", "chars_share", "before_h1", "after_h1", "ttr", "in_cectd",
            f"in_{ANCESTOR_TAGS[0][0]}", f"kw_{next(iter(KEYWORD_GROUPS))}_near",
            f"kw_{next(iter(KEYWORD_GROUPS))}_above",
        )
    ],
    dtype=np.int64,
)  # fmt: skip
assert _COLUMN["log_words"] == _COLUMN["log_chars"] + 1
#: The column of each owner tag (``tag_<name>``) by small tag id, -1 for the others.
_OWNER_COLUMN = np.full(256, -1, dtype=np.int64)
for _k, _tid in enumerate(_OWNER_TAG_IDS.tolist()):
    if 0 <= _tid < 255:
        _OWNER_COLUMN[_tid] = _COLUMN[f"tag_{OWNER_TAGS[_k]}"]
assert all(0 <= t < 255 for t in _OWNER_TAG_IDS.tolist() if t != -999)
_WINDOW_OFFSETS = np.array(WINDOW_OFFSETS, dtype=np.int64)
_NO_DERIVATIVE = np.zeros(0, dtype=np.float64)


def _links(dom: DomArrays) -> tuple[np.ndarray, np.ndarray]:
    """Which nodes are ``<a>`` elements, and which are inside one (or one)."""
    is_a = dom.small_tag_id == _A_ID
    return is_a, dom.within(is_a) if is_a.any() else np.zeros(dom.size, dtype=bool)


def _compiled_columns(
    fast,
    columns: np.ndarray,
    dom: DomArrays,
    blocks: Blocks,
    shape: tuple[np.ndarray, np.ndarray, np.ndarray],
    ancestor_bits: np.ndarray,
    near: np.ndarray,
    cectd_mask: np.ndarray,
) -> tuple[float, float, float]:
    """:func:`_numpy_columns` by one compiled pass (``fast.block_columns``), numpy's ``log1p``
    over the four columns it leaves as arguments, and the compiled Gaussian smoothing (whose sums
    run in another order than ``np.convolve``'s: equal to about 1e-15, not bit for bit)."""
    lengths, classes, ends = shape
    is_a, in_a = _links(dom)
    content = np.empty(blocks.size, dtype=np.float64)
    totals = fast.block_columns(
        columns, _COMPILED_COLUMNS, lengths, classes, ends.view(np.uint8), dom.text_nodes,
        blocks.text_block, cached_word_counts(dom), dom.text_len, in_a.view(np.uint8),
        is_a.view(np.uint8), dom.is_text.view(np.uint8), cectd_mask.view(np.uint8),
        blocks.first_node, blocks.owner, dom.small_tag_id, dom.depth, _OWNER_COLUMN,
        _HEADING_TABLE.view(np.uint8), _H1_ID, ancestor_bits, near, len(ANCESTOR_TAGS),
        len(KEYWORD_GROUPS), content,
    )  # fmt: skip
    log_chars = _COLUMN["log_chars"]
    np.log1p(columns[log_chars : log_chars + 2], out=columns[log_chars : log_chars + 2])
    for name in ("log_links", "ttr"):
        np.log1p(columns[_COLUMN[name]], out=columns[_COLUMN[name]])
    fast.smooth_columns(
        columns[_COLUMN["ttr"]], _gaussian_kernel(TTR_SIGMA), columns[_COLUMN["ttr_smooth"]],
        columns[_COLUMN["ttr_derivative"]],
    )  # fmt: skip
    fast.smooth_columns(content, _gaussian_kernel(CCB_SIGMA), columns[_COLUMN["ccb_blur"]], _NO_DERIVATIVE)
    fast.smooth_columns(
        content, _gaussian_kernel(CCB_WIDE_SIGMA), columns[_COLUMN["ccb_blur_wide"]], _NO_DERIVATIVE
    )
    return totals


def _numpy_columns(
    columns: np.ndarray,
    dom: DomArrays,
    blocks: Blocks,
    shape: tuple[np.ndarray, np.ndarray, np.ndarray],
    ancestor_bits: np.ndarray,
    near: np.ndarray,
    cectd_mask: np.ndarray,
) -> tuple[float, float, float]:
    """The columns of text shape (from ``shape``: the blocks' lengths, character class counts and
    whether they end like a sentence), links, owner tag, depth and positions, enclosing tags and
    keywords (``ancestor_bits``, ``near``), the share of CECTD-DS's text nodes (``cectd_mask``)
    and CETR and CCB of every block, written into ``columns``; returns the page's characters,
    link characters and block text length (at least 1)."""
    nb = blocks.size
    matrix = columns.T

    def put(name: str, value) -> None:
        columns[_COLUMN[name]] = value

    text_nodes = dom.text_nodes
    in_block = blocks.text_block >= 0
    block_of = blocks.text_block[in_block]

    def per_block(values: np.ndarray) -> np.ndarray:
        """Sum over each block's text nodes of ``values`` (one value per text node)."""
        return np.bincount(block_of, weights=values[in_block], minlength=nb)

    lengths, classes, ends_like_sentence = shape
    words_per_node = cached_word_counts(dom)
    words = np.maximum(per_block(words_per_node.take(text_nodes).astype(np.float64)), 1.0)
    length1 = np.maximum(lengths, 1.0)
    sentence_ends = classes[:, 2] + classes[:, 6]
    put("log_chars", np.log1p(lengths))
    put("log_words", np.log1p(words))
    put("mean_word_len", lengths / words)
    put("punct_ratio", (classes[:, 1] + classes[:, 2]) / length1)
    put("sentence_ends", np.minimum(sentence_ends, 50))
    put("sentences_per_word", sentence_ends / words)
    put("digit_ratio", classes[:, 3] / length1)
    put("upper_ratio", classes[:, 4] / length1)
    put("separator_ratio", classes[:, 5] / length1)
    put("ends_like_sentence", ends_like_sentence)

    # --- links
    text_len = dom.text_len.astype(np.float64)
    is_a, in_a = _links(dom)
    chars = per_block(text_len.take(text_nodes))
    link_chars = per_block((text_len * in_a).take(text_nodes))
    put("link_ratio", link_chars / np.maximum(chars, 1.0))
    first = blocks.first_node
    span_end = np.append(first[1:], dom.size)
    a_at = is_a.nonzero()[0]
    put("log_links", np.log1p(a_at.searchsorted(span_end) - a_at.searchsorted(first)))

    # --- structure
    owner = blocks.owner
    owner_tag = dom.tag_id.take(owner)
    start = _COLUMN[f"tag_{OWNER_TAGS[0]}"]
    columns[start : start + len(OWNER_TAGS)] = _OWNER_TAG_IDS[:, None] == owner_tag[None, :]
    heading = _HEADING_TABLE.take(np.minimum(owner_tag, 255))
    put("heading", heading)
    depth = dom.depth
    put("depth", depth.take(owner))
    put("depth_rel", depth.take(owner) / max(float(depth.max()), 1.0))
    put("position", np.arange(nb) / max(nb - 1, 1))
    total_chars = max(float(lengths.sum()), 1.0)
    put("position_chars", (np.add.accumulate(lengths) - lengths) / total_chars)
    put("chars_share", lengths / total_chars)
    is_h1 = owner_tag == _H1_ID
    if is_h1.any():
        first_h1 = int(is_h1.argmax())
        put("before_h1", np.arange(nb) < first_h1)
        put("after_h1", (np.arange(nb) - first_h1) / nb)
    start = _COLUMN[f"in_{ANCESTOR_TAGS[0][0]}"]
    matrix[:, start : start + len(ANCESTOR_TAGS)] = _bit_columns(ancestor_bits, len(ANCESTOR_TAGS))
    groups = len(KEYWORD_GROUPS)
    near_start = _COLUMN[f"kw_{next(iter(KEYWORD_GROUPS))}_near"]
    above_start = _COLUMN[f"kw_{next(iter(KEYWORD_GROUPS))}_above"]
    matrix[:, near_start : near_start + groups] = _bit_columns(near, groups)
    matrix[:, above_start : above_start + groups] = _bit_columns(ancestor_bits >> _KEYWORD_SHIFT, groups)

    # --- CETR: text-to-tag ratio of the block's stretch of the DOM; CCB: content/code blur
    is_element = ~dom.is_text
    elements_before = np.zeros(dom.size + 1, dtype=np.int64)
    np.add.accumulate(is_element, out=elements_before[1:])
    tags = (elements_before.take(span_end) - elements_before.take(first)).astype(np.float64)
    ttr = np.log1p(chars / np.maximum(tags, 1.0))
    ttr_smooth = smooth_gaussian(ttr, TTR_SIGMA)
    put("ttr", ttr)
    put("ttr_smooth", ttr_smooth)
    put("ttr_derivative", np.abs(_gradient(ttr_smooth)) if nb > 1 else 0.0)
    content = chars / np.maximum(chars + CCB_TAG_CHARS * tags, 1.0)
    put("ccb_blur", smooth_gaussian(content, CCB_SIGMA))
    put("ccb_blur_wide", smooth_gaussian(content, CCB_WIDE_SIGMA))

    # --- CETD: the share of the block's text nodes that CECTD-DS selects
    nodes_per_block = np.maximum(np.bincount(block_of, minlength=nb), 1)
    put("in_cectd", per_block(cectd_mask.take(text_nodes).astype(np.float64)) / nodes_per_block)
    return float(chars.sum()), float(link_chars.sum()), total_chars


def _numpy_lineage_columns(
    columns: np.ndarray,
    lineage: np.ndarray,
    first: np.ndarray,
    density: np.ndarray,
    composite: np.ndarray,
    sums: np.ndarray,
    selection,
    dom: DomArrays,
    score: np.ndarray,
    core_counts,
    set_text: np.ndarray,
    repeats: np.ndarray,
) -> None:
    """The columns of the owner and its ancestors (``lineage``, one row each): CETD's density,
    composite density and DensitySum, whether the block is in CECTD-DS's target, CoreEx's scores
    and link words, and the repeated siblings (the reference of ``lineage_columns``)."""

    def put(name: str, value) -> None:
        columns[_COLUMN[name]] = value

    def lineage_columns(name: str, levels: int) -> np.ndarray:
        """The columns from ``name`` on, for the owner and its ``levels - 1`` nearest ancestors."""
        start = _COLUMN[name]
        return columns[start : start + levels]

    owner, owner_parent, owner_grandparent = lineage[0], lineage[1], lineage[2]
    finite_sums = np.maximum(np.where(np.isfinite(sums), sums, 0.0), 0.0)
    positive = np.maximum(composite, 0.0)
    put("td", np.log1p(density.take(owner)))
    np.log1p(positive.take(lineage[:3]), out=lineage_columns("ctd", 3))
    np.log1p(finite_sums.take(lineage[:3]), out=lineage_columns("ds", 3))
    put("ctd_rel_body", composite.take(owner) / max(float(composite[0]), 1e-9))
    put("ds_rel_max", finite_sums.take(owner) / max(float(finite_sums.max()), 1e-9))
    target_end = dom.end[selection.target]
    put("in_cectd_target", (first >= selection.target) & (first < target_end))
    finite_score = np.where(np.isfinite(score), score, 0.0)
    lineage_columns("coreex", 3)[:] = finite_score.take(lineage[:3])
    link_words = core_counts.link_cnt / np.maximum(core_counts.text_cnt, 1.0)
    put("link_words_parent", link_words.take(owner_parent))
    put("link_words_grandparent", link_words.take(owner_grandparent))
    put("coreex_set_share", set_text.take(owner_parent) / max(float(core_counts.text_cnt[0]), 1.0))
    np.log1p(repeats.astype(np.float64).take(lineage), out=lineage_columns("repeat_owner", 4))


def block_features(doc: Document, *, noscript_view: bool = False) -> BlockFeatures:
    """The blocks of ``doc`` and their features (:data:`FEATURE_NAMES`)."""
    dom = doc.dom
    blocks = page_blocks(dom)
    nb = blocks.size
    columns = np.zeros((len(FEATURE_NAMES), nb), dtype=np.float64)  # one contiguous row per feature
    matrix = columns.T
    if nb == 0:
        return BlockFeatures(blocks, np.zeros(0, dtype=np.int64), matrix)

    def put(name: str, value) -> None:
        columns[_COLUMN[name]] = value

    # --- text shape (one pass over the code units of all block texts)
    texts = blocks.texts
    fast = compiled.module()
    if fast is not None:  # one compiled pass over the characters
        lengths, classes, ends_like_sentence = fast.text_shape(texts, _CLASS_OF, _SENTENCE_TAIL_U8, _CLASSES)
        lowered = fast.lower_texts(texts)  # (the ASCII texts lowered without str.lower's table)
    else:
        joined = "\x00".join(texts)
        lengths = np.fromiter(map(len, texts), np.float64, nb)
        codes = np.frombuffer(joined.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
        separators = codes == 0
        unit_block = np.add.accumulate(separators)
        classes = np.bincount(unit_block * _CLASSES + _CLASS_OF.take(codes), minlength=nb * _CLASSES)
        classes = classes[: nb * _CLASSES].reshape(nb, _CLASSES).astype(np.float64)
        block_last = np.append(separators.nonzero()[0] - 1, codes.size - 1)  # (no block is empty)
        ends_like_sentence = _SENTENCE_TAIL.take(codes.take(block_last))
        # one lower() for all: "\x00" is neither cased nor case-ignorable, so each block lowers alone
        lowered = joined.lower().split("\x00")
    title_words = set(_WORD_RE.findall((doc.title or "").lower()))
    if title_words:  # share of the title's words in each short block
        short = (lengths <= 200).nonzero()[0]
        hits = title_hits([lowered[i] for i in short.tolist()], title_words)
        if hits.any():
            overlap = np.zeros(nb)
            overlap[short] = hits
            put("title_overlap", np.minimum(overlap / len(title_words), 1.0))

    # --- structure: the owner and its three nearest ancestors, one row each
    first = blocks.first_node
    owner = blocks.owner
    if fast is not None:
        lineage = fast.lineage(dom.parent0, owner)
    else:
        parent = dom.parent0
        owner_parent = parent.take(owner)
        owner_grandparent = parent.take(owner_parent)
        lineage = np.stack((owner, owner_parent, owner_grandparent, parent.take(owner_grandparent)))
    owner_parent = lineage[1]

    # enclosing tags and keywords of all ancestors: one bit set OR-ed down the tree
    own_keywords, class_hash = _keyword_bits(doc, dom, first)
    own_bits = _ANCESTOR_BITS.take(dom.small_tag_id) | (own_keywords << _KEYWORD_SHIFT)
    ancestor_bits = _or_down(dom, own_bits).take(first)
    near = own_keywords.take(owner) | own_keywords.take(owner_parent)

    # --- CETD (the arrays and selection of cectd-ds with its defaults, cached on dom)
    _, density = densities(dom, DEFAULTS["cetd-ds"], composite=False)
    _, composite, sums, selection = density_sum_selection(dom, DEFAULTS["cectd-ds"], composite=True)

    # --- text shape, links, structure, enclosing tags and keywords, CETR and CCB
    shape = (lengths, classes, ends_like_sentence)
    if fast is not None:  # one compiled pass writes them
        chars_sum, link_sum, total_chars = _compiled_columns(
            fast, columns, dom, blocks, shape, ancestor_bits, near, selection.text_mask
        )
    else:
        chars_sum, link_sum, total_chars = _numpy_columns(
            columns, dom, blocks, shape, ancestor_bits, near, selection.text_mask
        )

    core_counts, score, in_set, set_text, _ = coreex_analysis(dom, DEFAULTS["coreex"])
    repeats = _repeated_siblings(dom, class_hash)
    if fast is not None:  # the values of the owner and its ancestors in one pass, then log1p
        templates = fast.lineage_columns(
            columns, _LINEAGE_COLUMNS, lineage, first, density, composite, sums, selection.target,
            dom.end[selection.target], score, core_counts.link_cnt, core_counts.text_cnt, set_text,
            repeats, dom.tag_id, class_hash, _PATH_MULTIPLIER_U64, TEMPLATE_LEVELS,
        )  # fmt: skip
        np.log1p(columns[_TD : _TD + 7], out=columns[_TD : _TD + 7])
        np.log1p(columns[_REPEAT : _REPEAT + 4], out=columns[_REPEAT : _REPEAT + 4])
    else:
        _numpy_lineage_columns(
            columns, lineage, first, density, composite, sums, selection, dom, score, core_counts,
            set_text, repeats,
        )  # fmt: skip
        templates = _templates(dom, lineage, class_hash)
    if fast is not None:  # (the same in one compiled pass)
        fast.best_set_share(score, in_set.view(np.uint8), dom.parent, first, columns[_COLUMN["in_coreex"]])
    elif np.isfinite(score).any():  # (CoreEx's set: settings.DEFAULTS["coreex"], shared through dom's cache)
        best = int(score.argmax())
        members = (in_set & (dom.parent == best)).nonzero()[0]
        put("in_coreex", dom.within(members).take(first))

    # --- how often the block's text recurs
    repeats_column = columns[_COLUMN["text_repeats"]]
    if fast is not None:  # (the counts of Counter(lowered), one compiled pass)
        fast.text_repeats(lowered, repeats_column)
    else:
        same_text = Counter(lowered)
        repeats_column[:] = np.fromiter(map(same_text.__getitem__, lowered), np.float64, nb)
    np.log(repeats_column, out=repeats_column)

    # --- page level
    put("page_link_ratio", link_sum / max(chars_sum, 1.0))
    put("page_blocks", np.log1p(nb))
    put("page_chars", np.log1p(total_chars))
    put("page_noscript", float(noscript_view))
    found = jsonld_types(doc.decoded_html, doc.utf8)
    for t in JSONLD_TYPES:
        if t in found:
            put(f"ld_{t}", 1.0)

    _put_url_features(put, doc.url)

    # --- neighbours: for each offset one copy of all window columns (the rest stays 0)
    if fast is not None:
        fast.window_columns(columns, _WINDOW_SOURCE, _WINDOW_START, _WINDOW_OFFSETS)
        return BlockFeatures(blocks, templates, matrix)
    window = columns.take(_WINDOW_SOURCE, axis=0)
    for k, offset in enumerate(WINDOW_OFFSETS):
        shifted = columns[_WINDOW_START + k :: len(WINDOW_OFFSETS)]
        if offset < 0:
            shifted[:, -offset:] = window[:, :offset]
        else:
            shifted[:, :-offset] = window[:, offset:]
    return BlockFeatures(blocks, templates, matrix)


#: Columns that describe the whole page (the same on every row of a page).
PAGE_COLUMNS: tuple[str, ...] = tuple(n for n in FEATURE_NAMES if n.startswith(("page_", "url_", "ld_")))
_PAGE_COLUMN_INDEX = np.array([_COLUMN[n] for n in PAGE_COLUMNS], dtype=np.intp)
#: Inputs of the page-type classifier (:func:`page_features`).
PAGE_FEATURE_NAMES: tuple[str, ...] = PAGE_COLUMNS + tuple(f"mean:{n}" for n in FEATURE_NAMES)


def page_features(matrix: np.ndarray) -> np.ndarray:
    """One page's features from its block matrix: the page-level columns and every column's
    mean over the page's words (each block weighs its words + 1), in :data:`PAGE_FEATURE_NAMES`
    order; zeros for a page without blocks."""
    if matrix.shape[0] == 0:
        return np.zeros(len(PAGE_FEATURE_NAMES), dtype=np.float64)
    weights = np.expm1(matrix[:, _COLUMN["log_words"]]) + 1.0
    return np.concatenate([matrix[0].take(_PAGE_COLUMN_INDEX), weights @ matrix / weights.sum()])
