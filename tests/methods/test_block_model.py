"""Block model: oblivious trees evaluated with numpy give the leaf the splits name, the file keeps
every array and record, and the shipped model loads with the feature list this code computes."""

from __future__ import annotations

import numpy as np
import pytest

from contentx_udf.methods.block_features import FEATURE_NAMES
from contentx_udf.methods.block_model import SHIPPED_MODEL, BlockModel, load_model, shipped_model


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


def test_save_and_load_round_trip(tmp_path):
    m = two_tree_model()
    path = tmp_path / "m.npz"
    m.save(path)
    back = BlockModel.load(path)
    assert back.feature_names == m.feature_names and back.threshold == m.threshold
    assert back.info == m.info
    x = np.random.default_rng(0).normal(size=(50, 2)) * 4
    assert np.allclose(back.raw_scores(x), m.raw_scores(x), atol=1e-5)


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
