"""The block classifier of ``combined``: gradient-boosted oblivious trees evaluated with numpy.

An oblivious (symmetric) tree asks the same question at every node of a level, so a tree of
depth ``d`` is ``d`` (feature, border) pairs and ``2**d`` leaf values: the leaf of a row is
the number whose bit ``j`` says ``x[feature_j] > border_j``.  A whole ensemble is then one
gather, one comparison and one small matrix product over all trees at once, with no loop over
trees or levels: for the hundred-odd blocks of a page that costs about as much as a handful of
numpy calls (a Python tree walk or a general tree runtime costs more per call than the work).

A page-type classifier (:class:`PageTypes`, the same trees with one output per type) rides in
the same file: it sets each page's decision threshold (see :meth:`BlockModel.page_threshold`).

The model file (``.npz``) holds the arrays (the page-type classifier's prefixed ``page_``) and a
JSON record: the feature names it was trained with, the training data, the training parameters
and the contentx version.  It is
read once per process (:func:`shipped_model`); nothing is ever downloaded.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..page import compiled
from .block_features import page_features

#: The model shipped inside the package (trained by ``contentx train``, see the README).
SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "models" / "combined.npz"

#: The default mode of ``combined``: the page-type thresholds chosen for the best F1.
BALANCED = "balanced"

#: Version of the file layout below (2 adds the optional page-type classifier, and
#: optionally its thresholds per mode; 1 still loads).
FORMAT_VERSION = 2


@dataclass(frozen=True, eq=False)
class TreeEnsemble:
    """Oblivious trees over the columns named by ``feature_names``: one output per row
    (``leaf_values`` of shape (trees, 2**depth)) or ``k`` (shape (trees, 2**depth, k))."""

    feature_names: tuple[str, ...]
    #: (trees, depth) column index and border of every level's split (``x > border``: bit set).
    split_feature: np.ndarray
    split_border: np.ndarray
    #: leaf values (raw scores, summed over trees, plus ``bias``).
    leaf_values: np.ndarray
    bias: float | np.ndarray

    def __post_init__(self) -> None:
        trees, depth = self.split_feature.shape
        if self.split_border.shape != (trees, depth) or self.leaf_values.shape[:2] != (trees, 1 << depth):
            raise ValueError("inconsistent tree ensemble arrays")
        if depth > 8:
            raise ValueError(f"trees of depth {depth}: at most 8 are supported")
        # the distinct (column, border) splits: each is compared once, then gathered per tree level
        pairs = np.stack(
            [self.split_feature.reshape(-1).astype(np.float64), self.split_border.reshape(-1)], axis=1
        )
        distinct, split_of = np.unique(pairs, axis=0, return_inverse=True)
        object.__setattr__(self, "_split_column", distinct[:, 0].astype(np.intp))
        object.__setattr__(self, "_split_border", distinct[:, 1].copy())
        object.__setattr__(self, "_split_of_level", split_of.reshape(-1).astype(np.intp))
        object.__setattr__(self, "_leaf_offset", np.arange(trees, dtype=np.intp) << depth)
        # 2**level per level: a leaf index fits a byte (depth <= 8)
        object.__setattr__(self, "_level_weights", np.left_shift(1, np.arange(depth)).astype(np.uint8))
        flat = self.leaf_values.reshape(trees << depth, *self.leaf_values.shape[2:]).astype(np.float64)
        object.__setattr__(self, "_flat_leaves", flat)
        # for the compiled inference: one row of leaf values per leaf, the splits as C arrays
        object.__setattr__(self, "_leaf_rows", np.ascontiguousarray(flat.reshape(trees << depth, -1)))
        object.__setattr__(self, "_c_split_column", self._split_column.astype(np.int64))
        object.__setattr__(self, "_c_split_of_level", self._split_of_level.astype(np.int64))

    @property
    def trees(self) -> int:
        return int(self.split_feature.shape[0])

    @property
    def depth(self) -> int:
        return int(self.split_feature.shape[1])

    def raw_scores(self, matrix: np.ndarray) -> np.ndarray:
        """Sum of the trees' leaf values for every row of ``matrix`` (the log-odds): shape (rows,)
        or (rows, k).

        Works on the transposed matrix (no copy for the column-major matrix of
        :func:`~contentx_udf.methods.block_features.block_features`) so that the gather copies
        whole rows: one comparison of every distinct split with every block, gathered for every
        (tree, level), then the levels' bits weighted by 2**level are summed into a byte per
        (tree, block): the leaf.
        """
        rows = matrix.shape[0]
        if rows == 0 or self.trees == 0 or self.depth == 0:
            constant = self.bias + self.leaf_values[:, 0].sum(axis=0)
            return np.repeat(np.asarray(constant, dtype=np.float64)[None], rows, axis=0)
        columns = np.ascontiguousarray(matrix.T)
        fast = compiled.module()
        if fast is not None:  # the same comparisons and the same sum, tree after tree
            out = np.zeros((rows, self._leaf_rows.shape[1]), dtype=np.float64)
            fast.tree_scores(
                columns,
                self._c_split_column,
                self._split_border,
                self._c_split_of_level,
                self.depth,
                self._leaf_rows,
                out,
            )
            return (out if self.leaf_values.ndim == 3 else out[:, 0]) + self.bias
        passed = columns.take(self._split_column, axis=0) > self._split_border[:, None]
        bits = passed.take(self._split_of_level, axis=0).reshape(self.trees, self.depth, rows).view(np.uint8)
        leaf = np.einsum("tdn,d->tn", bits, self._level_weights, dtype=np.uint8).astype(np.intp)
        leaf += self._leaf_offset[:, None]
        return self._flat_leaves.take(leaf, axis=0).sum(axis=0) + self.bias

    def _arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The trees' arrays as stored in a model file, their names prefixed by ``prefix``."""
        return {
            f"{prefix}split_feature": self.split_feature.astype(np.int16),
            f"{prefix}split_border": self.split_border.astype(np.float32),
            f"{prefix}leaf_values": self.leaf_values.astype(np.float32),
        }

    @staticmethod
    def _read_arrays(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
        """The trees' constructor arguments from what :meth:`_arrays` stored under ``prefix``."""
        return {
            "split_feature": arrays[f"{prefix}split_feature"].astype(np.int64),
            "split_border": arrays[f"{prefix}split_border"].astype(np.float64),
            "leaf_values": arrays[f"{prefix}leaf_values"].astype(np.float64),
        }


@dataclass(frozen=True, eq=False)
class PageTypes(TreeEnsemble):
    """A page-type classifier (softmax over ``classes``) and the block decision threshold that
    suits each type: the threshold of a page is the average of those, weighted by the page's
    type probabilities (articles want a stricter threshold than collection or product pages).

    ``thresholds`` are the ``balanced`` mode's; ``modes`` holds the thresholds of the other modes
    of ``combined`` (``precision``, ``recall``: see ``training.MODE_THRESHOLDS``), one per class."""

    classes: tuple[str, ...] = ()
    thresholds: tuple[float, ...] = ()
    modes: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        k = len(self.classes)
        if self.leaf_values.ndim != 3 or self.leaf_values.shape[2] != k or len(self.thresholds) != k:
            raise ValueError("page-type classifier arrays do not match its classes")
        if any(len(values) != k for values in self.modes.values()):
            raise ValueError("page-type mode thresholds do not match its classes")

    def mode_thresholds(self, mode: str = BALANCED) -> tuple[float, ...]:
        """The threshold of each class in ``mode`` (ValueError when the model has none for it)."""
        if mode == BALANCED:
            return self.thresholds
        try:
            return self.modes[mode]
        except KeyError:
            raise ValueError(
                f"block model has no thresholds for mode {mode!r} (it has: "
                f"{', '.join([BALANCED, *self.modes])}): retrain it with `contentx train`"
            ) from None

    def probabilities(self, vector: np.ndarray) -> np.ndarray:
        """Probability of each class for one page (``vector``: its page features)."""
        raw = self.raw_scores(vector.reshape(1, -1))[0]
        raw = np.exp(raw - raw.max())
        return raw / raw.sum()

    def threshold(self, probabilities: np.ndarray, mode: str = BALANCED) -> float:
        """The decision threshold of a page with type ``probabilities`` in ``mode``."""
        return float(probabilities @ np.asarray(self.mode_thresholds(mode), dtype=np.float64))


@dataclass(frozen=True, eq=False)
class BlockModel(TreeEnsemble):
    """The block classifier: log-odds that a block is main content, its decision threshold (used
    when there is no page-type classifier) and an optional :class:`PageTypes`."""

    #: The decision threshold on the probability and other figures chosen at training time.
    threshold: float = 0.5
    info: dict[str, Any] = field(default_factory=dict)
    page_types: PageTypes | None = None

    def predict(self, matrix: np.ndarray) -> np.ndarray:
        """Probability that each row (block) is main content."""
        return 1.0 / (1.0 + np.exp(-self.raw_scores(matrix)))

    def check_mode(self, mode: str) -> None:
        """ValueError unless the model has thresholds for ``mode`` (a model without a page-type
        classifier has one threshold: ``balanced`` only)."""
        if self.page_types is not None:
            self.page_types.mode_thresholds(mode)
        elif mode != BALANCED:
            raise ValueError(f"block model has no page-type classifier, so no mode {mode!r}: only {BALANCED}")

    def page_threshold(self, matrix: np.ndarray, mode: str = BALANCED) -> tuple[float, dict[str, float]]:
        """The decision threshold in ``mode`` for the page whose block matrix is ``matrix`` and the
        page's type probabilities (empty without a page-type classifier: then the threshold is
        fixed)."""
        if self.page_types is None or matrix.shape[0] == 0:
            self.check_mode(mode)
            return self.threshold, {}
        probabilities = self.page_types.probabilities(page_features(matrix))
        return self.page_types.threshold(probabilities, mode), dict(
            zip(self.page_types.classes, probabilities.tolist(), strict=True)
        )

    # --- file --------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        record: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "feature_names": list(self.feature_names),
            "bias": self.bias,
            "threshold": self.threshold,
            "info": self.info,
        }
        arrays = self._arrays("")
        if self.page_types is not None:
            types = self.page_types
            record["page_types"] = {
                "feature_names": list(types.feature_names),
                "bias": np.asarray(types.bias, dtype=np.float64).tolist(),
                "classes": list(types.classes),
                "thresholds": list(types.thresholds),
                "modes": {mode: list(values) for mode, values in types.modes.items()},
            }
            arrays.update(types._arrays("page_"))
        with open(path, "wb") as f:
            np.savez_compressed(
                f,
                **arrays,
                record=np.frombuffer(json.dumps(record, sort_keys=True).encode("utf-8"), dtype=np.uint8),
            )

    @classmethod
    def load(cls, path: str | Path) -> BlockModel:
        try:
            with np.load(path, allow_pickle=False) as data:
                record = json.loads(data["record"].tobytes().decode("utf-8"))
                arrays = {k: data[k] for k in data.files if k != "record"}
            if record.get("format") not in (1, FORMAT_VERSION):
                raise ValueError(f"format {record.get('format')}, expected {FORMAT_VERSION}")
            types = record.get("page_types")
            page_types = None
            if types is not None:
                page_types = PageTypes(
                    feature_names=tuple(types["feature_names"]),
                    **cls._read_arrays(arrays, "page_"),
                    bias=np.asarray(types["bias"], dtype=np.float64),
                    classes=tuple(types["classes"]),
                    thresholds=tuple(float(t) for t in types["thresholds"]),
                    modes={
                        mode: tuple(float(t) for t in values)
                        for mode, values in types.get("modes", {}).items()
                    },
                )
            return cls(
                feature_names=tuple(record["feature_names"]),
                **cls._read_arrays(arrays, ""),
                bias=float(record["bias"]),
                threshold=float(record["threshold"]),
                info=record.get("info", {}),
                page_types=page_types,
            )
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"cannot read block model {path}: {exc}") from exc


_LOADED: dict[str, BlockModel] = {}
_LOCK = threading.Lock()


def load_model(path: str | Path | None = None) -> BlockModel:
    """The model at ``path`` (default: the shipped one), read once per process and path."""
    key = str(path or SHIPPED_MODEL)
    model = _LOADED.get(key)
    if model is None:
        with _LOCK:
            model = _LOADED.get(key)
            if model is None:
                model = _LOADED[key] = BlockModel.load(key)
    return model


def shipped_model() -> BlockModel:
    """The model shipped inside the package."""
    return load_model(None)
