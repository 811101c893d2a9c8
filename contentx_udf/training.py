"""Training the ``combined`` block classifier from labelled pages (``contentx train``).

Labels come from each page's gold text: a block is content when most of its word trigrams
occur in the gold text (:func:`block_labels`).  The model is a gradient-boosted ensemble of
oblivious trees fitted with CatBoost (the optional ``train`` extra) and stored as the numpy
arrays that :mod:`contentx_udf.methods.block_model` evaluates; a fixed seed, one thread and
the same pages give the same file.  Pages with a page type (WCXB's seven) also train the
page-type classifier that sets each page's decision threshold (:data:`PAGE_TYPE_THRESHOLDS`).
:func:`cross_validate` retrains both per fold with folds grouped by domain, so that no site is
both trained and scored on; :func:`out_of_fold` and :func:`search_mode_thresholds` choose the
thresholds of the ``precision`` and ``recall`` modes (:data:`MODE_THRESHOLDS`) the same way.

Never train on the scrapinghub benchmark: it is the independent check of this model.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .evaluation import GoldPage, PageRun, score_runs, url_host, word_tokens
from .methods.block_features import FEATURE_NAMES, PAGE_FEATURE_NAMES, block_features, page_features
from .methods.block_model import BALANCED, BlockModel, PageTypes, TreeEnsemble
from .methods.blocks import content_document
from .methods.combined import block_probability, decide_blocks
from .page.document import Document
from .settings import DEFAULTS

#: Training parameters (CatBoost names).  Chosen by 5-fold grouped cross-validation on WCXB dev.
TRAIN_PARAMS: dict[str, Any] = {
    "iterations": 300,
    "depth": 6,
    "learning_rate": 0.1,
    "border_count": 64,
    "l2_leaf_reg": 10.0,
}
#: A block is a positive example when this share of its words is aligned with the gold text.
LABEL_THRESHOLD = 0.5
#: Default decision threshold stored in the model: the best of 0.3-0.7 in 5-fold grouped
#: cross-validation on WCXB dev (0.4-0.5 are within 0.001 of each other there).  It applies to
#: pages when the model has no page-type classifier.
DEFAULT_THRESHOLD = 0.45
#: Decision threshold per page type, the best of 0.3-0.7 in steps of 0.05 for each WCXB type in
#: 5-fold grouped cross-validation on WCXB dev (out-of-fold block probabilities; article F1
#: 0.947 at 0.45 -> 0.953 at 0.6-0.65, collection 0.612 -> 0.648 at 0.3).  A page's threshold
#: is their average weighted by its type probabilities; types not listed use DEFAULT_THRESHOLD.
PAGE_TYPE_THRESHOLDS: dict[str, float] = {
    "article": 0.6,
    "collection": 0.3,
    "documentation": 0.5,
    "forum": 0.45,
    "listing": 0.45,
    "product": 0.4,
    "service": 0.4,
}
#: The modes of ``combined`` (``params["mode"]``): per-type thresholds stored in the model beside
#: the balanced ones (PAGE_TYPE_THRESHOLDS).  Chosen by :func:`search_mode_thresholds` on the
#: out-of-fold block probabilities of 5-fold grouped cross-validation on WCXB dev
#: (``benchmarks/combined_modes.py``): ``precision`` is the best word F1 among per-type thresholds
#: no lower than balanced's whose word precision is at least balanced's + MODE_MARGIN;
#: ``recall`` the mirror (no higher, recall at least balanced's + MODE_MARGIN).
MODE_MARGIN = 0.03
#: WCXB dev CV on the threshold grid (benchmarks/combined_modes.py): balanced P 0.851 R 0.920 F1
#: 0.861; precision P 0.884 R 0.851 F1 0.838 (article F1 0.953 as in balanced); recall P 0.807
#: R 0.953 F1 0.848.
MODE_THRESHOLDS: dict[str, dict[str, float]] = {
    "precision": {
        "article": 0.825,
        "collection": 0.475,
        "documentation": 0.825,
        "forum": 0.7,
        "listing": 0.6,
        "product": 0.55,
        "service": 0.625,
    },
    "recall": {
        "article": 0.5,
        "collection": 0.175,
        "documentation": 0.35,
        "forum": 0.225,
        "listing": 0.075,
        "product": 0.2,
        "service": 0.2,
    },
}
#: Training parameters of the page-type classifier (CatBoost names; one row per page).
PAGE_TYPE_PARAMS: dict[str, Any] = {"iterations": 300, "depth": 5, "learning_rate": 0.1, "border_count": 64}


def block_labels(texts: Sequence[str], gold: str) -> np.ndarray:
    """Share of each block's words found in the gold text, in context.

    Blocks of three words or more: the share of their word trigrams that occur in the gold
    text.  Two words: whether the bigram occurs.  One word: whether it occurs at all (such
    blocks weigh little in training: examples are weighted by their words).
    """
    return _labels([word_tokens(t) for t in texts], word_tokens(gold))


def _labels(block_words: Sequence[list[str]], gold_words: list[str]) -> np.ndarray:
    """:func:`block_labels` of blocks and a gold text given as their words."""
    unigrams = set(gold_words)
    bigrams = set(zip(gold_words, gold_words[1:], strict=False))
    trigrams = set(zip(gold_words, gold_words[1:], gold_words[2:], strict=False))
    out = np.zeros(len(block_words), dtype=np.float64)
    for i, w in enumerate(block_words):
        if len(w) >= 3:
            grams = list(zip(w, w[1:], w[2:], strict=False))
            out[i] = sum(g in trigrams for g in grams) / len(grams)
        elif len(w) == 2:
            out[i] = float((w[0], w[1]) in bigrams)
        elif w:
            out[i] = float(w[0] in unigrams)
    return out


@dataclass(frozen=True)
class PageRows:
    """The training rows of one page."""

    page_id: str
    group: str  # the cross-validation group (the site)
    matrix: np.ndarray  # (blocks, features)
    labels: np.ndarray  # share of aligned words per block
    weights: np.ndarray  # words per block
    texts: list[str]
    templates: np.ndarray  # template number of every block (BlockFeatures.templates)
    gold_words: int  # pages without gold text (failed annotations) are scored, never trained on
    page_type: str | None = None  # trains the page-type classifier when known


def page_rows(page: GoldPage) -> PageRows:
    """Blocks, features and labels of one gold page (the same code path as extraction)."""
    doc, from_noscript = content_document(Document.parse(page.html, url=page.url))
    features = block_features(doc, noscript_view=from_noscript)
    texts = features.blocks.texts
    block_words = [word_tokens(t) for t in texts]
    gold_words = word_tokens(page.text)
    return PageRows(
        page_id=page.id,
        group=page_group(page),
        matrix=features.matrix,
        labels=_labels(block_words, gold_words),
        weights=np.fromiter(map(len, block_words), np.float64, len(block_words)),
        texts=texts,
        templates=features.templates,
        gold_words=len(gold_words),
        page_type=page.page_type,
    )


def page_group(page: GoldPage) -> str:
    """The site of a page: its recorded domain, else its URL's host without ``www.``, else its id."""
    return page.domain or url_host(page.url) or page.id


def build_rows(pages: Sequence[GoldPage], processes: int | None = None) -> list[PageRows]:
    """:func:`page_rows` of every page, in page order (in parallel processes when there are many)."""
    processes = processes or min(os.cpu_count() or 1, 8)
    if processes <= 1 or len(pages) < 50:
        return [page_rows(p) for p in pages]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        return pool.map(page_rows, pages, chunksize=8)


def _stack(rows: Iterable[PageRows]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [r for r in rows if r.labels.size and r.gold_words]
    if not rows:
        raise ValueError("no text blocks in the training pages")
    matrix = np.concatenate([r.matrix for r in rows])
    labels = np.concatenate([r.labels for r in rows]) >= LABEL_THRESHOLD
    # examples weigh their words, as the word metric does (sqrt(words): 0.003 lower in WCXB CV)
    weights = np.maximum(np.concatenate([r.weights for r in rows]), 1.0)
    return matrix, labels.astype(np.int64), weights


def _catboost():
    try:
        import catboost
    except ImportError as exc:
        raise RuntimeError(
            "training needs CatBoost: pip install 'contentx[train]' (extraction does not)"
        ) from exc
    return catboost


def fit(
    rows: Sequence[PageRows],
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    threshold: float | None = None,
    info: dict[str, Any] | None = None,
    threads: int = 1,
) -> BlockModel:
    """Fit the block classifier on ``rows`` (and the page-type classifier on those of them with
    a page type, when they have two types or more) and convert it to a :class:`BlockModel`.
    ``threshold`` fixes the decision threshold of every page (default: per page type).

    One thread by default: CatBoost's result then depends only on the data and the seed."""
    catboost = _catboost()
    matrix, labels, weights = _stack(rows)
    if labels.min() == labels.max():
        raise ValueError("the training pages have only one class of blocks (need content and boilerplate)")
    settings = {**TRAIN_PARAMS, **(params or {})}
    classifier = catboost.CatBoostClassifier(
        **settings, random_seed=seed, thread_count=threads, verbose=0, allow_writing_files=False
    )
    classifier.fit(matrix, labels, sample_weight=weights)
    split_feature, split_border, leaf_values, bias = _oblivious_trees(classifier, matrix[:256])
    page_types = fit_page_types(rows, seed=seed, threads=threads, threshold=threshold)
    return BlockModel(
        feature_names=FEATURE_NAMES,
        split_feature=split_feature,
        split_border=split_border,
        leaf_values=leaf_values,
        bias=float(bias[0]),
        threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
        info={
            **(info or {}),
            "params": settings,
            "seed": seed,
            **({"page_type_params": PAGE_TYPE_PARAMS} if page_types else {}),
        },
        page_types=page_types,
    )


def fit_page_types(
    rows: Sequence[PageRows], *, seed: int = 0, threads: int = 1, threshold: float | None = None
) -> PageTypes | None:
    """The page-type classifier over :func:`page_features` of every page of ``rows`` that has a
    page type and blocks, with :data:`PAGE_TYPE_THRESHOLDS` (or ``threshold`` for every type);
    None when they have fewer than two types."""
    typed = [r for r in rows if r.page_type and r.labels.size]
    classes = sorted({r.page_type for r in typed})
    if len(classes) < 2:
        return None
    matrix = np.stack([page_features(r.matrix) for r in typed])
    labels = np.array([classes.index(r.page_type) for r in typed], dtype=np.int64)
    classifier = _catboost().CatBoostClassifier(
        **PAGE_TYPE_PARAMS,
        loss_function="MultiClass",
        random_seed=seed,
        thread_count=threads,
        verbose=0,
        allow_writing_files=False,
    )
    classifier.fit(matrix, labels)
    split_feature, split_border, leaf_values, bias = _oblivious_trees(classifier, matrix[:256])
    return PageTypes(
        feature_names=PAGE_FEATURE_NAMES,
        split_feature=split_feature,
        split_border=split_border,
        leaf_values=leaf_values,
        bias=bias,
        classes=tuple(classes),
        thresholds=tuple(threshold or PAGE_TYPE_THRESHOLDS.get(c, DEFAULT_THRESHOLD) for c in classes),
        modes={}
        if threshold
        else {
            mode: tuple(table.get(c, PAGE_TYPE_THRESHOLDS.get(c, DEFAULT_THRESHOLD)) for c in classes)
            for mode, table in MODE_THRESHOLDS.items()
        },
    )


def _oblivious_trees(classifier, sample: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CatBoost's oblivious trees as arrays: split ``j`` of a tree sets bit ``j`` of the leaf
    index; leaf values (trees, 2**depth) for one output, (trees, 2**depth, k) for ``k`` classes;
    the bias per output.  Checked against CatBoost's own raw scores on ``sample``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        classifier.save_model(str(path), format="json")
        data = json.loads(path.read_text())
    flat = {f["feature_index"]: f["flat_feature_index"] for f in data["features_info"]["float_features"]}
    trees = data["oblivious_trees"]
    depth = max((len(t["splits"]) for t in trees), default=0)
    scale, biases = data.get("scale_and_bias", [1.0, [0.0]])
    bias = np.atleast_1d(np.asarray(biases, dtype=np.float64))
    outputs = bias.size
    split_feature = np.zeros((len(trees), depth), dtype=np.int64)
    split_border = np.full((len(trees), depth), np.inf)  # unused levels: never set the bit
    leaf_values = np.zeros((len(trees), 1 << depth, outputs), dtype=np.float64)
    for t, tree in enumerate(trees):
        for j, split in enumerate(tree["splits"]):
            split_feature[t, j] = flat[split["float_feature_index"]]
            split_border[t, j] = split["border"]
        values = np.asarray(tree["leaf_values"], dtype=np.float64).reshape(-1, outputs)  # leaf-major
        leaf_values[t, : values.shape[0]] = values
    leaf_values *= float(scale)
    if outputs == 1:
        leaf_values = leaf_values[:, :, 0]
    check = np.asarray(classifier.predict(sample, prediction_type="RawFormulaVal"), dtype=np.float64)
    converted = TreeEnsemble((), split_feature, split_border, leaf_values, bias if outputs > 1 else bias[0])
    mine = converted.raw_scores(sample)
    if not np.allclose(mine, check.reshape(mine.shape), atol=1e-4):
        raise RuntimeError("converted tree ensemble disagrees with CatBoost")  # a format change
    return split_feature, split_border, leaf_values, bias


def predicted_text(model: BlockModel, rows: PageRows, mode: str = BALANCED) -> str:
    """The text ``combined`` extracts in ``mode`` from a page's rows with ``model`` (same
    selection rule)."""
    if rows.labels.size == 0:
        return ""
    keep, _, _ = decide_blocks(model, rows.matrix, rows.templates, {**DEFAULTS["combined"], "mode": mode})
    return "\n".join(rows.texts[i] for i in keep.nonzero()[0].tolist())


def grouped_folds(groups: Sequence[str], folds: int, seed: int = 0) -> list[np.ndarray]:
    """Page indices of ``folds`` test folds; all pages of a group fall in the same fold.

    Groups are shuffled with ``seed`` and dealt largest first to the fold with fewest pages.
    """
    if folds < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    names = sorted(set(groups))
    if len(names) < folds:
        raise ValueError(f"{len(names)} groups cannot make {folds} folds")
    rng = np.random.default_rng(seed)
    names = [names[i] for i in rng.permutation(len(names))]
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    names.sort(key=lambda g: -len(members[g]))  # stable: equal sizes keep the shuffled order
    sizes = [0] * folds
    out: list[list[int]] = [[] for _ in range(folds)]
    for g in names:
        k = sizes.index(min(sizes))
        out[k].extend(members[g])
        sizes[k] += len(members[g])
    return [np.array(sorted(f), dtype=np.int64) for f in out]


def _fold_models(
    rows: Sequence[PageRows],
    folds: int,
    seed: int,
    params: dict[str, Any] | None,
    threads: int,
    progress: Callable[[str], None] | None,
) -> Iterator[tuple[BlockModel, list[int]]]:
    """For each of ``folds`` folds grouped by site: a model fitted on the other folds and the
    indices of the fold's pages."""
    for k, test in enumerate(grouped_folds([r.group for r in rows], folds, seed)):
        held_out = set(test.tolist())
        trained = [r for i, r in enumerate(rows) if i not in held_out]
        yield fit(trained, seed=seed, params=params, threads=threads), test.tolist()
        if progress:
            progress(f"fold {k + 1}/{folds}: trained on {len(trained)} pages")


def cross_validate(
    rows: Sequence[PageRows],
    folds: int = 5,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    threads: int = 1,
    modes: Sequence[str] = (BALANCED,),
) -> dict[str, list[str]]:
    """The text of every page in each of ``modes`` extracted by a model trained on the other
    folds (grouped by site)."""
    texts = {mode: [""] * len(rows) for mode in modes}
    for model, test in _fold_models(rows, folds, seed, params, threads, progress):
        for i in test:
            for mode in modes:
                texts[mode][i] = predicted_text(model, rows[i], mode)
    return texts


@dataclass(frozen=True)
class OutOfFold:
    """One page's block probabilities (smoothed over its templates, as ``combined`` decides on
    them) and page-type probabilities (over ``classes``) from a model that saw no page of its
    site."""

    probability: np.ndarray
    page_types: np.ndarray
    classes: tuple[str, ...]


def out_of_fold(
    rows: Sequence[PageRows],
    folds: int = 5,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    threads: int = 1,
) -> list[OutOfFold | None]:
    """:class:`OutOfFold` of every page (None for a page without blocks), by grouped K-fold
    cross-validation: the material :func:`search_mode_thresholds` chooses thresholds on."""
    combined = DEFAULTS["combined"]
    out: list[OutOfFold | None] = [None] * len(rows)
    for model, test in _fold_models(rows, folds, seed, params, threads, progress):
        if model.page_types is None:
            raise ValueError("out-of-fold thresholds need pages of two page types or more")
        for i in test:
            r = rows[i]
            if r.labels.size:
                probability = block_probability(model, r.matrix, r.templates, combined)
                types = model.page_types.probabilities(page_features(r.matrix))
                out[i] = OutOfFold(probability, types, model.page_types.classes)
    return out


#: Page thresholds at which :func:`threshold_scores` scores every page (a page's threshold, a
#: weighted mean of type thresholds, is rounded to the nearest).
THRESHOLD_GRID = np.round(np.arange(0.05, 0.9501, 0.0125), 4)


def threshold_scores(
    rows: Sequence[PageRows], oof: Sequence[OutOfFold | None], gold_texts: Sequence[str]
) -> np.ndarray:
    """Word precision, recall and F1 (WCXB metric) of every page at every page threshold of
    :data:`THRESHOLD_GRID`: shape (pages, thresholds, 3)."""
    from .evaluation import word_scores
    from .methods.combined import select_blocks

    heading = FEATURE_NAMES.index("heading")
    window = DEFAULTS["combined"]["heading_window"]
    out = np.zeros((len(rows), THRESHOLD_GRID.size, 3))
    for i, (r, o, gold) in enumerate(zip(rows, oof, gold_texts, strict=True)):
        gold_words = word_tokens(gold)
        if o is None:  # no blocks: an empty text at every threshold
            empty = word_scores([], gold_words)
            out[i] = (empty.precision, empty.recall, empty.f1)
            continue
        block_words = [word_tokens(t) for t in r.texts]
        seen: dict[bytes, tuple[float, float, float]] = {}  # a selection is scored once
        for j, t in enumerate(THRESHOLD_GRID.tolist()):
            keep = select_blocks(o.probability, r.matrix[:, heading] > 0, t, window)
            key = keep.tobytes()
            if key not in seen:
                words = [w for b in keep.nonzero()[0].tolist() for w in block_words[b]]
                score = word_scores(words, gold_words)
                seen[key] = (score.precision, score.recall, score.f1)
            out[i, j] = seen[key]
    return out


def page_type_matrix(oof: Sequence[OutOfFold | None]) -> np.ndarray:
    """The page-type probabilities of every page (zeros for a page without blocks, whose text is
    empty at every threshold): shape (pages, classes)."""
    k = next(o.page_types.size for o in oof if o is not None)
    return np.stack([o.page_types if o is not None else np.zeros(k) for o in oof])


def page_scores(scores: np.ndarray, types: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Every page's word precision, recall and F1 when each page type has the threshold of
    ``thresholds`` (the page's threshold, their mean weighted by its type probabilities, rounded
    to THRESHOLD_GRID): shape (pages, 3).  ``scores``: :func:`threshold_scores`; ``types``:
    :func:`page_type_matrix`."""
    page = types @ np.asarray(thresholds, dtype=np.float64)
    step = THRESHOLD_GRID[1] - THRESHOLD_GRID[0]
    index = np.clip(np.rint((page - THRESHOLD_GRID[0]) / step).astype(np.intp), 0, THRESHOLD_GRID.size - 1)
    return scores[np.arange(types.shape[0]), index]


def mode_result(scores: np.ndarray, types: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Mean word precision, recall and F1 over the pages (:func:`page_scores`)."""
    return page_scores(scores, types, thresholds).mean(axis=0)


def search_mode_thresholds(
    scores: np.ndarray,
    types: np.ndarray,
    balanced: Sequence[float],
    goal: str,
    margin: float = MODE_MARGIN,
    step: float = 0.025,
) -> tuple[tuple[float, ...], np.ndarray]:
    """Per-type thresholds for mode ``goal`` (``precision`` or ``recall``) and their mean
    (precision, recall, F1): the best F1 among thresholds on one side of ``balanced`` (higher for
    precision, lower for recall) whose mean ``goal`` is at least balanced's + ``margin``.

    Coordinate ascent on F1 + lambda * goal for a range of lambda, from ``balanced``; the best
    feasible point seen wins (balanced itself when none is).  Thresholds are on a ``step`` grid
    within THRESHOLD_GRID's range."""
    column = {"precision": 0, "recall": 1}[goal]
    sign = 1.0 if goal == "precision" else -1.0
    start = np.asarray(balanced, dtype=np.float64)
    need = mode_result(scores, types, start)[column] + margin
    bound = float(THRESHOLD_GRID[-1] if sign > 0 else THRESHOLD_GRID[0])
    candidates = [np.arange(s, bound + sign * 1e-9, sign * step) for s in start]
    best, best_result = tuple(start.tolist()), None
    for weight in np.arange(0.0, 8.01, 0.25):
        point = start.copy()
        for _sweep in range(6):
            before = point.copy()
            for k, values in enumerate(candidates):
                gain = [_objective(scores, types, point, k, c, column, weight) for c in values]
                point[k] = values[int(np.argmax(gain))]
            result = mode_result(scores, types, point)
            if result[column] >= need and (best_result is None or result[2] > best_result[2]):
                best, best_result = tuple(np.round(point, 4).tolist()), result
            if np.allclose(point, before):
                break
    return best, best_result if best_result is not None else mode_result(scores, types, start)


def _objective(scores, types, point: np.ndarray, k: int, value: float, column: int, weight: float) -> float:
    """F1 + ``weight`` x the goal's column with type ``k``'s threshold set to ``value``."""
    trial = point.copy()
    trial[k] = value
    result = mode_result(scores, types, trial)
    return float(result[2] + weight * result[column])


def cross_validated_result(
    pages: Sequence[GoldPage],
    folds: int,
    *,
    seed: int = 0,
    threads: int = 1,
    progress: Callable[[str], None] | None = None,
    n_bootstrap: int = 0,
    modes: Sequence[str] = (BALANCED,),
) -> list:
    """``combined`` in each of ``modes`` scored on ``pages`` by grouped K-fold cross-validation
    (each page by a model that saw no page of its site): rows of ``contentx evaluate``'s table,
    named ``combined (K-fold CV)`` and ``combined MODE (K-fold CV)`` for the other modes."""
    started = time.perf_counter()
    rows = build_rows(pages)
    texts = cross_validate(rows, folds, seed=seed, progress=progress, threads=threads, modes=modes)
    per_page = (time.perf_counter() - started) / max(len(pages), 1)
    results = []
    for mode in modes:
        runs = [PageRun(text, None, per_page) for text in texts[mode]]
        name = "combined" if mode == BALANCED else f"combined {mode}"
        results.append(score_runs(pages, f"{name} ({folds}-fold CV)", runs, n_bootstrap=n_bootstrap))
    return results


def describe_training(gold_dirs: Sequence[str | Path], pages: int, seed: int) -> dict[str, Any]:
    """What the model file records about its training data."""
    from . import __version__

    return {
        "trained_on": [Path(d).name for d in gold_dirs],
        "pages": pages,
        "seed": seed,
        "contentx_version": __version__,
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%d"),
        "labels": f"block word-trigram share in the gold main text >= {LABEL_THRESHOLD}",
    }


def train_from_gold(
    gold_dirs: Sequence[str | Path],
    out: str | Path,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    threshold: float | None = None,
    processes: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> BlockModel:
    """``contentx train``: load the gold sets, fit the block classifier on all their pages and
    write the model file ``out``.  The same gold sets and seed give the same file."""
    from .evaluation import load_gold

    pages: list[GoldPage] = []
    for gold in gold_dirs:
        pages.extend(load_gold(gold))
    if progress:
        progress(f"{len(pages)} pages from {', '.join(map(str, gold_dirs))}: computing block features")
    rows = build_rows(pages, processes)
    blocks = sum(r.labels.size for r in rows)
    if progress:
        progress(f"{blocks} blocks; fitting {TRAIN_PARAMS | (params or {})}")
    trained = [r for r in rows if r.gold_words]
    info = describe_training(gold_dirs, len(trained), seed)
    info["blocks"] = sum(r.labels.size for r in trained)
    info["pages_without_gold_text"] = len(rows) - len(trained)
    model = fit(rows, seed=seed, params=params, threshold=threshold, info=info)
    model.save(out)
    return model
