"""``combined``: every seed signal in one learned block classifier.

Each seed method reads one signal (tag ratio, blur, link counts, text density) and most pick
one region of the page.  ``combined`` classifies every text block of the page
(:mod:`.blocks`) from all of those signals read at the block, plus structure, attribute
keywords, text shape and the neighbouring blocks (:mod:`.block_features`), with a model
trained on the WCXB development split (:mod:`.block_model`; ``contentx train`` rebuilds it).

Blocks of one template (owners of the same tag and class under ancestors of the same tags and
classes: the items of a list, the posts of a thread) are decided alike: each block's probability
moves ``template_mix`` of the way to the mean over its template's blocks, weighted by their words,
when the template has ``template_min`` blocks or more (+0.002 word F1 in 5-fold grouped
cross-validation on WCXB dev, on every page type; a smoothing over the page's templates as CETR and
CCB smooth over its lines).

The decision threshold depends on the page: a page-type classifier (from the page-level
columns and the word-weighted mean of every block feature) gives the probability of each WCXB
page type, and the threshold is the average of the types' thresholds weighted by them (an
article wants a stricter one than a collection or product page); ``threshold`` > 0 in the
parameters fixes it instead.  ``mode`` picks the type thresholds: ``balanced`` (the best word F1
in 5-fold grouped cross-validation on WCXB dev), ``precision`` (the best F1 among per-type
thresholds no lower than balanced's whose cross-validated word precision is at least balanced's
plus 0.03: for corpora, where a wrong line costs more than a missed one, as trafilatura's
``favor_precision``) and ``recall``, its mirror (see ``training.MODE_THRESHOLDS``).

Output: the kept blocks in document order, one per line; a heading just before kept content
is kept with it.  Scores: ``content_confidence`` (mean probability of the kept blocks),
``blocks_kept``, ``blocks_total``, ``noscript_view`` (1 when the page's ``<noscript>``
crawler view was classified instead of the visible body, as on Discourse forums) and
``page_type_<type>`` (the probability of each page type: article, collection, documentation,
forum, listing, product, service).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..page import compiled
from ..page.document import Document
from .base import MethodResult
from .block_features import FEATURE_NAMES, PAGE_FEATURE_NAMES, block_features
from .block_model import BALANCED, BlockModel, load_model
from .blocks import content_document


def model_for(params: dict[str, Any]) -> BlockModel:
    """The model named by ``params["model"]`` (the shipped one when empty), checked against the
    features this code computes and for thresholds of ``params["mode"]`` (once per process for
    each model and mode: ``load_model`` keeps every model it read)."""
    key = (params["model"] or None, params.get("mode", BALANCED))
    model = _CHECKED.get(key)
    if model is None:
        model = _CHECKED[key] = _checked_model(*key)
    return model


#: The models :func:`model_for` checked, by (model path or None, mode).
_CHECKED: dict[tuple[Any, str], BlockModel] = {}


def _checked_model(path: Any, mode: str) -> BlockModel:
    """The model at ``path`` checked (see :func:`model_for`)."""
    model = load_model(path)
    model.check_mode(mode)
    page_names = model.page_types.feature_names if model.page_types is not None else PAGE_FEATURE_NAMES
    if model.feature_names != FEATURE_NAMES or page_names != PAGE_FEATURE_NAMES:
        raise ValueError(
            "block model was trained with other features than this version computes "
            f"({len(model.feature_names)} vs {len(FEATURE_NAMES)}): retrain it with `contentx train`"
        )
    return model


def select_blocks(probability: np.ndarray, heading: np.ndarray, threshold: float, window: int) -> np.ndarray:
    """Blocks whose probability reaches ``threshold``, plus every heading whose next non-heading
    block within ``window`` blocks is kept (a section title belongs to its section)."""
    keep = probability >= threshold
    if window <= 0 or not heading.any():
        return keep
    n = keep.size
    for i in (heading & ~keep).nonzero()[0].tolist():
        for j in range(i + 1, min(n, i + 1 + window)):
            if not heading[j]:
                keep[i] = keep[j]
                break
    return keep


def smooth_by_template(
    probability: np.ndarray, templates: np.ndarray, weights: np.ndarray, mix: float, min_size: int
) -> np.ndarray:
    """Each block's probability moved ``mix`` of the way to the ``weights``-weighted mean
    probability of the blocks of its template (``templates``: a number per block), for templates
    of ``min_size`` blocks or more; the other blocks keep theirs."""
    if mix <= 0 or probability.size == 0:
        return probability
    fast = compiled.module()
    if fast is not None:  # the same sums and steps in two passes
        as_array = np.ascontiguousarray
        return fast.template_smooth(
            as_array(probability, dtype=np.float64), as_array(templates, dtype=np.int64),
            as_array(weights, dtype=np.float64), float(mix), int(min_size),
        )  # fmt: skip
    sizes = np.bincount(templates)
    mean = np.bincount(templates, probability * weights) / np.bincount(templates, weights)
    shared = sizes.take(templates) >= min_size
    return np.where(shared, (1.0 - mix) * probability + mix * mean.take(templates), probability)


def block_probability(
    model: BlockModel, matrix: np.ndarray, templates: np.ndarray, params: dict[str, Any]
) -> np.ndarray:
    """The model's probability that each block is content, smoothed over the page's templates
    (weighted by the blocks' words)."""
    words = np.expm1(matrix[:, _LOG_WORDS])
    return smooth_by_template(
        model.predict(matrix), templates, words + 1.0, params["template_mix"], params["template_min"]
    )


def decide_blocks(
    model: BlockModel, matrix: np.ndarray, templates: np.ndarray, params: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """The blocks to keep of a page with feature rows ``matrix`` (at least one), the probability
    they were decided on and the page-type probabilities: the model's probabilities smoothed over
    the templates, the page's threshold (or ``params["threshold"]``), headings with their section."""
    probability = block_probability(model, matrix, templates, params)
    threshold, page_types = model.page_threshold(matrix, params.get("mode", BALANCED))
    if params["threshold"] > 0:
        threshold = params["threshold"]
    heading = matrix[:, _HEADING] > 0
    return select_blocks(probability, heading, threshold, params["heading_window"]), probability, page_types


_LOG_WORDS = FEATURE_NAMES.index("log_words")
_HEADING = FEATURE_NAMES.index("heading")


def combined(doc: Document, params: dict[str, Any]) -> MethodResult:
    """The ``combined`` method (see the module docstring)."""
    model = model_for(params)
    view, from_noscript = content_document(doc)
    features = block_features(view, noscript_view=from_noscript)
    blocks = features.blocks
    scores = {"blocks_total": float(blocks.size), "noscript_view": float(from_noscript)}
    if blocks.size == 0:
        return MethodResult(text="", scores={**scores, "blocks_kept": 0.0, "content_confidence": 0.0})
    keep, probability, page_types = decide_blocks(model, features.matrix, features.templates, params)
    scores.update((f"page_type_{name}", p) for name, p in page_types.items())
    kept = keep.nonzero()[0]
    scores["blocks_kept"] = float(kept.size)
    # (ndarray.mean's pairwise sum and division, without its Python wrapper)
    confidence = float(np.add.reduce(probability.take(kept))) / kept.size if kept.size else 0.0
    scores["content_confidence"] = confidence
    text = "\n".join(blocks.texts[i] for i in kept.tolist())
    return MethodResult(text=text, scores=scores)
