"""The text blocks of a page, the unit the ``combined`` method classifies.

A block is a run of text nodes between two block-level boundaries (the same boundaries that
put line breaks into every method's output, :attr:`DomArrays.block_seq`) that holds some
non-space text.  Its *owner* is the nearest block-level element of its first text node.
Blocks are found with array operations over the flattened DOM of the one parse.

Discourse and other forum software put their posts only in ``<noscript>`` (the crawler view)
and fill the visible page with script.  Every method drops ``<noscript>``;
:func:`content_document` gives ``combined`` the crawler view instead when it holds clearly
more text than the visible body.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from ..page import compiled
from ..page.document import Document, DomArrays, non_space_chars
from .cetd import nearest_block

_TAG_RE = re.compile(r"<[^>]*>")

#: The ``<noscript>`` view replaces the body when its text has at least this many non-space
#: characters and more than ``NOSCRIPT_SHARE`` times the visible body's.
NOSCRIPT_MIN_CHARS = 500
NOSCRIPT_SHARE = 0.5


@dataclass(frozen=True)
class Blocks:
    """The blocks of one page in document order (arrays indexed by block)."""

    #: Block index of every text node of the DOM (-1 for text nodes in no block: whitespace).
    text_block: np.ndarray
    #: DOM index of the first text node of every block.
    first_node: np.ndarray
    #: DOM index of the nearest block-level element of that text node (``<body>`` at the top).
    owner: np.ndarray
    #: The text of every block, whitespace collapsed.
    texts: list[str]

    @property
    def size(self) -> int:
        return len(self.texts)


def page_blocks(dom: DomArrays) -> Blocks:
    """The blocks of ``dom`` (see the module docstring)."""
    text_nodes = dom.text_nodes
    if text_nodes.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Blocks(text_block=empty, first_node=empty, owner=empty, texts=[])
    seq = dom.text_block_seq
    fast = compiled.module()
    if fast is not None:  # the runs, their text and numbering in one compiled pass
        text_block, kept_nodes, first = fast.block_runs(seq, dom.text_counts(fast)[1])
        if kept_nodes.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Blocks(text_block=text_block, first_node=empty, owner=empty, texts=[])
        first_node = text_nodes.take(first)
        return Blocks(
            text_block=text_block,
            first_node=first_node,
            owner=nearest_block(dom).take(first_node),
            texts=dom.block_texts(kept_nodes),
        )
    starts = np.empty(seq.size, dtype=bool)
    starts[0] = True
    np.not_equal(seq[1:], seq[:-1], out=starts[1:])
    run = np.add.accumulate(starts, dtype=np.int64) - 1
    # runs with some non-space text (text_len: stripped length), found without their strings
    has_text = np.bincount(run, weights=dom.text_len.take(text_nodes), minlength=int(run[-1]) + 1) > 0
    kept_nodes = has_text.take(run).nonzero()[0]
    if kept_nodes.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Blocks(
            text_block=np.full(text_nodes.size, -1, dtype=np.int64), first_node=empty, owner=empty, texts=[]
        )
    kept_run = run.take(kept_nodes)
    ends = (kept_run[1:] != kept_run[:-1]).nonzero()[0]
    texts = dom.block_texts(kept_nodes)
    new_index = np.add.accumulate(has_text, dtype=np.int64) - 1
    text_block = np.where(has_text.take(run), new_index.take(run), -1)
    first_node = text_nodes.take(kept_nodes[np.concatenate(([0], ends + 1))])
    return Blocks(
        text_block=text_block,
        first_node=first_node,
        owner=nearest_block(dom).take(first_node),
        texts=texts,
    )


def noscript_html(html: str | None, utf8: bytes | None = None) -> str:
    """The concatenated content of the page's ``<noscript>`` elements (``""`` if none).

    Found with ``str.find`` (C-level) rather than a regex scan of the whole page: most pages
    have none or a tracking pixel.  ``utf8``: ``html`` in UTF-8 (``Document.utf8``), searched
    instead with the compiled ``find_all`` when there is one (the same parts); ``html`` may then
    be None (``Document.decoded_html`` of a page not decoded)."""
    fast = compiled.module()
    if utf8 is not None and fast is not None:
        return _noscript_in_utf8(fast, utf8)
    if html is None:
        html = utf8.decode("utf-8") if utf8 is not None else ""
    parts: list[str] = []
    for opening, closing in (("<noscript", "</noscript"), ("<NOSCRIPT", "</NOSCRIPT")):
        at = html.find(opening)
        while at >= 0:
            start = html.find(">", at)
            if start < 0:
                break
            end = html.find(closing, start)
            if end < 0:
                break
            parts.append(html[start + 1 : end])
            at = html.find(opening, end)
    return "".join(parts)


def _noscript_in_utf8(fast, utf8: bytes) -> str:
    """:func:`noscript_html` on the page's UTF-8 bytes: the same searches, answered from every
    place of each tag (``noscript_tags``: one pass over the bytes for the four tags); the parts
    are cut at ASCII characters, so they decode to the ``str`` slices."""
    parts: list[str] = []
    opens_lower, closes_lower, opens_upper, closes_upper = fast.noscript_tags(utf8)
    for opens, closes in ((opens_lower, closes_lower), (opens_upper, closes_upper)):
        if not opens:
            continue
        at = opens[0]
        while True:
            start = utf8.find(b">", at)
            if start < 0:
                break
            k = bisect_left(closes, start)  # (html.find(closing, start))
            if k == len(closes):
                break
            end = closes[k]
            parts.append(utf8[start + 1 : end].decode("utf-8"))
            k = bisect_left(opens, end)  # (html.find(opening, end))
            if k == len(opens):
                break
            at = opens[k]
    return "".join(parts)


def content_document(doc: Document) -> tuple[Document, bool]:
    """The document whose blocks ``combined`` classifies: ``doc`` itself, or a document of its
    ``<noscript>`` content when that holds much more text than the visible body (the second
    value says which).  The crawler view is parsed with the same limits and cleaning."""
    inner = noscript_html(doc.decoded_html, doc.utf8)  # (the bytes are searched: no decoding)
    if not inner:
        return doc, False
    chars = non_space_chars(_TAG_RE.sub(" ", inner))
    if chars < NOSCRIPT_MIN_CHARS or chars <= NOSCRIPT_SHARE * doc.visible_chars:
        return doc, False
    view = Document.parse(f"<html><body>{inner}</body></html>", limits=doc.limits)
    # the tag-stripped estimate counts what the parse drops (a <style> in <noscript>): decide on
    # the view's visible text
    seen = view.visible_chars
    if seen < NOSCRIPT_MIN_CHARS or seen <= NOSCRIPT_SHARE * doc.visible_chars:
        return doc, False
    view.title = doc.title
    view.url = doc.url
    return view, True
