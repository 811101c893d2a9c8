"""Block model: oblivious trees evaluated with numpy give the leaf the splits name (one output or
one per class), the page-type classifier weighs the types' thresholds, the file keeps every array
and record, and the shipped model loads with the feature lists this code computes."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from contentx_udf.methods.block_features import FEATURE_NAMES, PAGE_FEATURE_NAMES, page_features
from contentx_udf.methods.block_model import (
    SHIPPED_MODEL,
    BlockModel,
    PageTypes,
    load_model,
    shipped_model,
)
from contentx_udf.settings import PAGE_TYPES


def two_tree_model() -> BlockModel:
    # tree 0: bit0 = x0 > 1, bit1 = x1 > 0 -> leaves 0..3; tree 1: depth 1 padded, x1 > 5
    return BlockModel(
        feature_names=("a", "b"),
        split_feature=np.array([[0, 1], [1, 0]]),
        split_border=np.array([[1.0, 0.0], [5.0, np.inf]]),
        leaf_values=np.array([[-2.0, 1.0, 0.5, 3.0], [0.0, 10.0, 0.0, 0.0]]),
        bias=0.25,
        threshold=0.5,
        info={"trained_on": ["unit-test"]},
    )


def test_leaf_index_is_the_split_bits():
    m = two_tree_model()
    x = np.array([[0.0, -1.0], [2.0, -1.0], [0.0, 1.0], [2.0, 1.0], [2.0, 6.0]])
    expected = np.array([-2.0, 1.0, 0.5, 3.0, 3.0 + 10.0]) + 0.25
    assert np.allclose(m.raw_scores(x), expected)
    assert np.allclose(m.predict(x), 1 / (1 + np.exp(-expected)))
    assert m.raw_scores(np.zeros((0, 2))).shape == (0,)


def two_type_classifier() -> PageTypes:
    # one tree over x0: x0 > 0 favours "listing" (leaf 1), else "article" (leaf 0)
    return PageTypes(
        feature_names=("a", "b"),
        split_feature=np.array([[0]]),
        split_border=np.array([[0.0]]),
        leaf_values=np.array([[[2.0, -2.0], [-1.0, 1.0]]]),
        bias=np.array([0.5, 0.0]),
        classes=("article", "listing"),
        thresholds=(0.6, 0.3),
    )


def test_one_output_per_class_and_the_weighted_threshold():
    types = two_type_classifier()
    assert np.allclose(types.raw_scores(np.array([[-1.0, 0.0], [1.0, 0.0]])), [[2.5, -2.0], [-0.5, 1.0]])
    article = types.probabilities(np.array([-1.0, 0.0]))
    assert np.isclose(article.sum(), 1.0) and np.isclose(article[0], 1 / (1 + np.exp(-4.5)))
    assert types.threshold(article) == pytest.approx(0.6 * article[0] + 0.3 * article[1])
    assert types.threshold(types.probabilities(np.array([1.0, 0.0]))) < 0.4  # mostly a listing
    with pytest.raises(ValueError, match="classes"):
        dataclasses.replace(types, thresholds=(0.5,))


def test_each_mode_has_its_own_type_thresholds(tmp_path):
    types = dataclasses.replace(two_type_classifier(), modes={"precision": (0.8, 0.5), "recall": (0.4, 0.2)})
    article = types.probabilities(np.array([-1.0, 0.0]))
    assert types.threshold(article, "precision") == pytest.approx(0.8 * article[0] + 0.5 * article[1])
    assert types.threshold(article, "recall") == pytest.approx(0.4 * article[0] + 0.2 * article[1])
    assert types.threshold(article) == types.threshold(article, "balanced")
    model = dataclasses.replace(two_tree_model(), page_types=types)
    model.save(tmp_path / "m.npz")
    assert BlockModel.load(tmp_path / "m.npz").page_types.modes == types.modes
    # a model without a mode's thresholds says so, and how to get them
    with pytest.raises(ValueError, match="no thresholds for mode 'precision'.*contentx train"):
        two_type_classifier().threshold(article, "precision")
    with pytest.raises(ValueError, match="only balanced"):
        two_tree_model().check_mode("recall")
    two_tree_model().check_mode("balanced")
    with pytest.raises(ValueError, match="mode thresholds"):
        dataclasses.replace(types, modes={"precision": (0.8,)})


def test_save_and_load_round_trip(tmp_path):
    m = two_tree_model()
    path = tmp_path / "m.npz"
    m.save(path)
    back = BlockModel.load(path)
    assert back.feature_names == m.feature_names and back.threshold == m.threshold
    assert back.info == m.info and back.page_types is None
    x = np.random.default_rng(0).normal(size=(50, 2)) * 4
    assert np.allclose(back.raw_scores(x), m.raw_scores(x), atol=1e-5)
    # with a page-type classifier
    typed = dataclasses.replace(m, page_types=two_type_classifier())
    typed.save(path)
    back = BlockModel.load(path).page_types
    assert back.classes == ("article", "listing") and back.thresholds == (0.6, 0.3)
    assert np.allclose(back.raw_scores(x), typed.page_types.raw_scores(x), atol=1e-5)


def test_a_broken_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="cannot read block model"):
        BlockModel.load(bad)


def test_shipped_model_matches_the_code():
    assert SHIPPED_MODEL.is_file()
    assert SHIPPED_MODEL.stat().st_size <= 2 * 1024 * 1024
    model = shipped_model()
    assert model is load_model()  # read once per process
    assert model.feature_names == FEATURE_NAMES
    assert model.info["trained_on"] == ["wcxb-dev"]  # never scrapinghub: it is the independent check
    assert 0.0 < model.threshold < 1.0 and model.trees > 0
    assert int(model.split_feature.max()) < len(FEATURE_NAMES)
    types = model.page_types  # WCXB's seven page types, each with its threshold
    assert types is not None and types.feature_names == PAGE_FEATURE_NAMES
    assert types.classes == tuple(sorted(PAGE_TYPES)) and all(0.0 < t < 1.0 for t in types.thresholds)
    # precision's threshold is no lower than balanced's for every type, recall's no higher
    assert set(types.modes) == {"precision", "recall"}
    precision, recall = types.modes["precision"], types.modes["recall"]
    assert all(p >= b >= r for p, b, r in zip(precision, types.thresholds, recall, strict=True))
    assert int(types.split_feature.max()) < len(PAGE_FEATURE_NAMES)
    threshold, probabilities = model.page_threshold(np.zeros((3, len(FEATURE_NAMES))))
    assert min(types.thresholds) <= threshold <= max(types.thresholds)
    assert set(probabilities) == set(PAGE_TYPES) and np.isclose(sum(probabilities.values()), 1.0)
    assert page_features(np.zeros((0, len(FEATURE_NAMES)))).shape == (len(PAGE_FEATURE_NAMES),)


def test_a_format_1_file_loads_without_page_types(tmp_path):
    # files written before the page-type classifier (format 1) keep working with their fixed threshold
    m = two_tree_model()
    record = {"format": 1, "feature_names": ["a", "b"], "bias": 0.25, "threshold": 0.4, "info": {}}
    path = tmp_path / "v1.npz"
    np.savez_compressed(
        path,
        split_feature=m.split_feature.astype(np.int16),
        split_border=m.split_border.astype(np.float32),
        leaf_values=m.leaf_values.astype(np.float32),
        record=np.frombuffer(json.dumps(record).encode(), dtype=np.uint8),
    )
    old = BlockModel.load(path)
    assert old.page_types is None and old.page_threshold(np.zeros((2, 2))) == (0.4, {})
    x = np.array([[2.0, 6.0]])
    assert np.allclose(old.raw_scores(x), m.raw_scores(x))
    record["format"] = 7
    np.savez_compressed(path, record=np.frombuffer(json.dumps(record).encode(), dtype=np.uint8))
    with pytest.raises(ValueError, match="format 7"):
        BlockModel.load(path)
