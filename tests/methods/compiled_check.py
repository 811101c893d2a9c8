"""The compiled passes against the Python code on one page (shared by test_compiled.py and
benchmarks/compiled_equality.py): every difference found, as a line of text."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from contentx_udf.methods import block_features as bf
from contentx_udf.methods.blocks import content_document, page_blocks
from contentx_udf.methods.combined import decide_blocks, model_for
from contentx_udf.methods.coreex import word_counts
from contentx_udf.page import compiled
from contentx_udf.page.document import Document, flatten_dom
from contentx_udf.settings import resolve_params

PARAMS = resolve_params("combined", {})


@contextmanager
def compiled_passes(enabled: bool):
    """The compiled passes on or off for the block (then on again)."""
    compiled.set_enabled(enabled)
    try:
        yield
    finally:
        compiled.set_enabled(True)


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings group the same entries together (the numbers themselves may differ:
    class hashes and template numbers are equal within a run, not across implementations)."""
    if a.shape != b.shape:
        return False
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def cleaned(doc: Document) -> tuple[str, str, dict[str, float]]:
    """What parsing and cleaning left: the tree's HTML, the ``<body>``'s and the notes."""
    body = doc.tree.body
    return doc.tree.html or "", body.html if body is not None else "", dict(doc.notes)


def _features(html: bytes, url: str | None):
    view, from_noscript = content_document(Document.parse(html, url=url))
    features = bf.block_features(view, noscript_view=from_noscript)
    model = model_for(PARAMS)
    if features.blocks.size == 0:
        return features, None, None, None
    raw = model.raw_scores(features.matrix)
    keep, probability, page_types = decide_blocks(model, features.matrix, features.templates, PARAMS)
    return features, raw, keep, page_types


def differences(html: bytes, url: str | None = None, max_nodes: int = 200_000) -> list[str]:
    """What the compiled passes compute differently from the Python code on the page ``html``:
    the cleaned tree (and the parse's notes), the DOM arrays and the class/id look-up on one parse
    (``max_nodes`` bounds the walk), then the whole of ``combined`` (features, templates, model
    scores, page types, kept blocks)."""
    found: list[str] = []
    with compiled_passes(False):
        slow_doc = Document.parse(html, url=url)
    doc = Document.parse(html, url=url)
    if cleaned(doc) != cleaned(slow_doc):
        found.append("cleaned tree / notes")
    root = doc.tree.body if doc.tree.body is not None else doc.tree.root
    if root is not None:
        with compiled_passes(False):
            slow = flatten_dom(root, max_nodes)
            slow_depth = slow.depth
            slow_counts = (slow.text_len, word_counts(slow), slow.block_texts(np.arange(len(slow.text_list))))
        with compiled_passes(True):
            fast = flatten_dom(root, max_nodes)
            fast_counts = (fast.text_len, word_counts(fast), fast.block_texts(np.arange(len(fast.text_list))))
        if not np.array_equal(slow_counts[0], fast_counts[0]):
            found.append("dom.text_len")
        if not np.array_equal(slow_counts[1], fast_counts[1]):
            found.append("word counts")
        if slow_counts[2] != fast_counts[2]:
            found.append("block texts")
        for name in ("tag_id", "parent", "end"):
            if not np.array_equal(getattr(slow, name), getattr(fast, name)):
                found.append(f"dom.{name}")
        if not np.array_equal(slow_depth, fast.depth):
            found.append("dom.depth")
        if slow.text_list != fast.text_list or slow.truncated != fast.truncated:
            found.append("dom.text_list/truncated")
        blocks = page_blocks(fast)
        if blocks.size and not found:
            with compiled_passes(False):
                own_slow, hash_slow = bf._keyword_bits(doc, fast, blocks.first_node)
            with compiled_passes(True):
                own_fast, hash_fast = bf._keyword_bits(doc, fast, blocks.first_node)
            if not np.array_equal(own_slow, own_fast):
                found.append("keyword bits")
            if not same_partition(hash_slow, hash_fast) or not np.array_equal(hash_slow == 0, hash_fast == 0):
                found.append("class hashes")
    with compiled_passes(False):
        f_slow, raw_slow, keep_slow, types_slow = _features(html, url)
    with compiled_passes(True):
        f_fast, raw_fast, keep_fast, types_fast = _features(html, url)
    if f_slow.blocks.texts != f_fast.blocks.texts:
        found.append("block texts")
        return found
    if f_slow.matrix.shape != f_fast.matrix.shape or not np.allclose(
        f_slow.matrix, f_fast.matrix, rtol=0.0, atol=1e-9
    ):
        found.append("feature matrix")
    if not same_partition(f_slow.templates, f_fast.templates):
        found.append("templates")
    if raw_slow is not None:
        if not np.array_equal(raw_slow, raw_fast):
            found.append("block model scores")
        if types_slow != types_fast:
            found.append("page types")
        if not np.array_equal(keep_slow, keep_fast):
            found.append("kept blocks")
    return found
