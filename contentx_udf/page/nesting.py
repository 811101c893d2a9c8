"""The nesting bound of a page: how deep its tags open, estimated from the markup before the parse
(:func:`nesting_within`, compiled or numpy), and the page cut where it nests deeper than the
limit (:func:`bound_nesting`), so that a hostile page cannot exhaust the parser's stack
(:class:`.document.Limits` ``max_depth``)."""

from __future__ import annotations

import re

import numpy as np

from . import compiled
from .tags import OPTIONAL_END_TAGS, VOID_TAGS

_TAG_TOKEN_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)[^>]*>")


#: Tag names up to this long are told apart by the nesting estimate; an end tag of a longer name
#: never lowers it (errs towards depth).
NAME_WINDOW = 32


def open_depths(name_ids: np.ndarray, closing: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Estimated nesting depth of every tag token (of an opening tag: after it; of a closing tag:
    before it) from the counted tokens' names.

    Each name keeps its own count of open elements; an end tag lowers its name's count when it
    is above zero and is otherwise ignored, as a parser ignores a stray end tag (``<div></span>``
    repeated nests as deep as ``<div>`` alone).  The depth is the sum of the counts.  A parser's
    end tag also closes the elements opened after its element, so the estimate errs towards
    depth.  Vectorised: per-name prefix sums floored at zero (``x = S - min(0, min S)``).
    """
    n = name_ids.size
    step = np.where(counted, np.where(closing, -1, 1), 0).astype(np.int64)
    if n == 0:
        return step
    order = np.argsort(name_ids, kind="stable")
    ids = name_ids.take(order)
    start = np.ones(n, dtype=bool)
    start[1:] = ids[1:] != ids[:-1]
    segment = np.cumsum(start) - 1
    starts = np.flatnonzero(start)
    sums = np.cumsum(step.take(order))
    before = np.concatenate(([0], sums))[starts].take(segment)
    per_name = sums - before  # prefix sum of each name's steps
    # running minimum within each name: later names get a smaller offset than earlier ones
    big = 2 * n + 2
    offset = (segment[-1] + 1 - segment) * big
    running_min = np.minimum.accumulate(per_name + offset) - offset
    count = per_name - np.minimum(running_min, 0)  # open elements of the name after the token
    previous = np.zeros(n, dtype=np.int64)
    previous[1:] = count[:-1]
    previous[start] = 0
    delta = np.empty(n, dtype=np.int64)
    delta[order] = count - previous
    after = np.cumsum(delta)
    return np.where(closing, after - delta, after)


#: SVG elements that a self-closing tag ``<path ... />`` closes at once inside ``<svg>`` (foreign
#: content honours "/>"; in HTML an unknown ``<path/>`` stays open).  None is an HTML name that
#: leaves foreign content (``div``, ``p``, ``b``, ``font``...) or an HTML integration point
#: (``title``, ``desc``, ``foreignObject``); SVG's own ``style``, ``script`` and ``a`` leave
#: nothing either.
SVG_LEAF_TAGS = frozenset(
    "path g circle rect line polyline polygon ellipse use defs symbol stop clippath mask pattern "
    "text tspan textpath filter image marker animate set mpath view switch metadata "
    "lineargradient radialgradient animatemotion animatetransform fegaussianblur feoffset "
    "feblend fecolormatrix fecomposite feflood femerge femergenode fedropshadow feturbulence "
    "fedisplacementmap femorphology style script a".split()
)
_HTML_SPACE = frozenset(" \t\n\r\f")


def svg_leaves(leaf_name: np.ndarray, closed_start: np.ndarray, opens_svg: np.ndarray) -> np.ndarray:
    """The self-closed SVG leaves inside ``<svg>``: start tags the nesting estimate does not count
    (an icon set of 2,000 ``<path/>`` would otherwise look 2,000 deep).

    ``leaf_name``: a start or end tag of :data:`SVG_LEAF_TAGS` or with a ":" in its first 9
    letters (``sodipodi:namedview``: no HTML element, so it never leaves foreign content);
    ``closed_start``: a start tag ended by "/>" right after a name of at most 8 letters, a space
    or a quote (not inside an unquoted value: ``d=x/>`` is no self-closing); ``opens_svg``: an
    ``<svg>`` start tag not ending with "/>".  A leaf is inside ``<svg>`` when the last token
    before it that is no leaf tag opens an ``<svg>``: any other tag (an HTML tag, ``</svg>``,
    ``<foreignObject>``) may have left foreign content, so after it every tag counts again
    (errs towards depth).
    """
    n = leaf_name.size
    event = np.where(~leaf_name, np.arange(n), -1)
    np.maximum.accumulate(event, out=event)
    previous = np.concatenate(([-1], event[:-1]))
    inside = (previous >= 0) & opens_svg.take(np.maximum(previous, 0))
    return leaf_name & closed_start & inside


def bound_nesting(html: str, max_depth: int) -> tuple[str, int]:
    """Drop start and end tags nested deeper than ``max_depth`` (their text is kept).

    Only container elements are counted (void elements and elements with optional end
    tags are not) and the depth is :func:`open_depths`'s estimate, which errs towards the
    real depth.  Returns the new HTML and the number of tags dropped.  Cheap exit when the
    page has too few tags to be that deep.
    """
    if html.count("<") <= max_depth:
        return html, 0
    matches = list(_TAG_TOKEN_RE.finditer(html))
    if len(matches) <= max_depth:
        return html, 0
    names = [m.group(2).lower() for m in matches]
    closing = np.array([m.group(1) == "/" for m in matches])
    counted = np.array([n not in VOID_TAGS and n not in OPTIONAL_END_TAGS for n in names])
    tokens = [m.group(0) for m in matches]
    leaf_name = np.array([n in SVG_LEAF_TAGS or ":" in n[:9] for n in names])
    leaf_closed = ~closing & np.array(
        [
            t.endswith("/>") and (t[-3] in _HTML_SPACE or t[-3] in "\"'" or len(t) == len(n) + 3 <= 11)
            for t, n in zip(tokens, names, strict=True)
        ]
    )
    opens_svg = (
        np.array([n == "svg" and not t.endswith("/>") for t, n in zip(tokens, names, strict=True)]) & ~closing
    )
    counted &= ~svg_leaves(leaf_name, leaf_closed, opens_svg)
    _, name_ids = np.unique(np.array(names, dtype=object), return_inverse=True)
    long_name = np.array([len(n) >= NAME_WINDOW for n in names])
    depth = open_depths(name_ids.reshape(-1), closing, counted & ~(closing & long_name))
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


_NAME_BYTES = np.zeros(256, dtype=bool)
_NAME_BYTES[list(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-")] = True
_LETTER_BYTES = np.zeros(256, dtype=bool)
_LETTER_BYTES[list(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")] = True
_LOWER_BYTES = np.arange(256, dtype=np.uint8)
_LOWER_BYTES[ord("A") : ord("Z") + 1] += 32
_SPACE_OR_QUOTE_BYTES = np.zeros(256, dtype=bool)
_SPACE_OR_QUOTE_BYTES[list(b" \t\n\r\f\"'")] = True
_SLASH = ord("/")
_COLON = ord(":")


def _name_key(name: str) -> int:
    """A tag name of at most 8 letters as the little-endian 8-byte key nesting_within reads."""
    return int.from_bytes(name.encode().ljust(8, b"\0"), "little")


_SVG_LEAF_KEYS = np.array(sorted(_name_key(n) for n in SVG_LEAF_TAGS if len(n) <= 8), dtype=np.uint64)
#: The longer SVG leaf names as nesting_within's NAME_WINDOW-byte rows.
_SVG_LONG_LEAF_ROWS = np.array(
    [n.encode().ljust(NAME_WINDOW, b"\0") for n in SVG_LEAF_TAGS if len(n) > 8], dtype=f"V{NAME_WINDOW}"
)
_SVG_LONG_LEAF_LIST = _SVG_LONG_LEAF_ROWS.tolist()  # (as bytes, for the compiled pass)
_SVG_KEY = np.uint64(_name_key("svg"))
#: Tags not counted by :func:`bound_nesting`, as 8 little-endian bytes (all are <= 8 long).
_UNCOUNTED_KEYS = np.array(
    sorted(_name_key(n) for n in VOID_TAGS | OPTIONAL_END_TAGS),
    dtype=np.uint64,
)


def nesting_within(data: bytes, max_depth: int) -> bool:
    """True when :func:`bound_nesting` would drop nothing from the page whose UTF-8 bytes are
    ``data``: the same tag tokens and depth estimate, found with numpy instead of a regex."""
    fast = compiled.module()
    if fast is not None:  # (one memchr pass: no separate count of "<" first)
        return fast.nesting_within(
            data, max_depth, _UNCOUNTED_KEYS, _SVG_LEAF_KEYS, _SVG_LONG_LEAF_LIST, int(_SVG_KEY)
        )
    return _nesting_within_numpy(data, max_depth)


def _nesting_within_numpy(data: bytes, max_depth: int) -> bool:
    """:func:`nesting_within` with numpy (the reference of the compiled pass)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    opens = np.flatnonzero(buf == ord("<"))
    if opens.size <= max_depth:
        return True  # fewer "<" than max_depth
    last = buf.size - 1
    closing = (opens < last) & (buf.take(opens + 1, mode="clip") == ord("/"))
    name_at = opens + 1 + closing
    tag = (name_at <= last) & _LETTER_BYTES[buf.take(name_at, mode="clip")]
    if np.count_nonzero(tag & ~closing) <= max_depth:
        return True  # fewer start tags than max_depth
    opens, closing, name_at = opens[tag], closing[tag], name_at[tag]
    padded = np.zeros(buf.size + NAME_WINDOW + 2, dtype=np.uint8)
    padded[: buf.size] = buf
    closes_at = np.flatnonzero(buf == ord(">"))
    # a token runs to the next ">": a "<" before it belongs to the previous token, and a
    # "<" with no ">" after it is no tag (the regex's ``[^>]*>``)
    gt_before = np.searchsorted(closes_at, opens)
    real = gt_before < closes_at.size
    real[1:] &= gt_before[1:] > gt_before[:-1]
    window = _LOWER_BYTES.take(padded.take(name_at[:, None] + np.arange(9)))  # (take: no fancy-index set-up)
    in_name = _NAME_BYTES.take(window)
    length = np.where(in_name.all(axis=1), 9, np.argmin(in_name, axis=1))  # 9: longer than 8
    window[np.arange(9) >= length[:, None]] = 0
    keys = window[:, :8].copy().view("<u8")[:, 0]
    pos = np.minimum(np.searchsorted(_UNCOUNTED_KEYS, keys), _UNCOUNTED_KEYS.size - 1)
    uncounted = (length <= 8) & (_UNCOUNTED_KEYS[pos] == keys)
    counted = real & ~uncounted
    if np.count_nonzero(counted & ~closing) <= max_depth:
        return True  # too few counted start tags to be that deep
    # name ids: names up to 8 bytes by their key, longer ones by their first NAME_WINDOW bytes
    # (read for those tokens only)
    name_ids = np.empty(keys.size, dtype=np.int64)
    short = length <= 8
    _, short_ids = np.unique(keys[short], return_inverse=True)
    name_ids[short] = short_ids.reshape(-1)
    long_name = np.zeros(keys.size, dtype=bool)
    long_leaf = np.zeros(keys.size, dtype=bool)
    if not short.all():
        at = name_at[~short]
        full = _LOWER_BYTES.take(padded.take(at[:, None] + np.arange(NAME_WINDOW)))
        in_full = _NAME_BYTES.take(full)
        full_length = np.where(in_full.all(axis=1), NAME_WINDOW, np.argmin(in_full, axis=1))
        full[np.arange(NAME_WINDOW) >= full_length[:, None]] = 0
        rows = np.ascontiguousarray(full).view(f"V{NAME_WINDOW}")[:, 0]
        _, long_ids = np.unique(rows, return_inverse=True)
        long_leaf[~short] = np.isin(rows, _SVG_LONG_LEAF_ROWS)
        name_ids[~short] = long_ids.reshape(-1) + keys.size  # (above every short id)
        long_name[~short] = full_length >= NAME_WINDOW
    # self-closed SVG leaves inside <svg> (see svg_leaves); a "<" that is no token is no event
    gt = closes_at.take(np.minimum(gt_before, closes_at.size - 1))
    ends_closed = real & (padded.take(np.maximum(gt - 1, 0)) == _SLASH)
    before_slash = padded.take(np.maximum(gt - 2, 0))
    leaf_closed = (
        ~closing
        & ends_closed
        & (_SPACE_OR_QUOTE_BYTES[before_slash] | ((length <= 8) & (gt - 1 == name_at + length)))
    )
    pos = np.minimum(np.searchsorted(_SVG_LEAF_KEYS, keys), _SVG_LEAF_KEYS.size - 1)
    leaf_name = ((length <= 8) & (_SVG_LEAF_KEYS[pos] == keys)) | long_leaf
    opens_svg = real & ~closing & (length == 3) & (keys == _SVG_KEY) & ~ends_closed
    namespaced = (window == _COLON).any(axis=1)  # (in the first 9 letters)
    counted &= ~svg_leaves(leaf_name | namespaced | ~real, leaf_closed & real, opens_svg)
    depth = open_depths(name_ids, closing, counted & ~(closing & long_name))
    return not (counted & (depth > max_depth)).any()
