"""Reader of fastText's binary model file (``.bin`` / ``.ftz``, format version 12), for the
compiled fastText predictors (:mod:`contentx_udf.text._lid`, :mod:`contentx_udf.text._quality`) and
the numpy one (:mod:`contentx_udf.text.classifier`).

The layout is fastText's own ``FastText::loadModel`` (src/fasttext.cc): the header, ``Args::load``
(src/args.cc), ``Dictionary::load`` (src/dictionary.cc: words, their counts and types, the
pruned n-gram index of a quantized model), the input matrix (``DenseMatrix`` or ``QuantMatrix``
with its ``ProductQuantizer``, src/quantmatrix.cc, src/productquantizer.cc) and the output matrix.
Everything is little-endian, as the files are written on x86 and ARM.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: fastText's ``FASTTEXT_FILEFORMAT_MAGIC_INT32`` and ``FASTTEXT_VERSION``.
MAGIC, VERSION = 793712314, 12
#: fastText's ``loss_name`` and ``model_name`` values (src/args.h).
LOSS_HS, LOSS_SOFTMAX = 1, 3
MODEL_SUP = 3
#: Centroids per sub-quantizer (``ProductQuantizer::ksub_``).
KSUB = 256


@dataclass
class Quantized:
    """A ``QuantMatrix``: rows of ``nsubq`` one-byte codes into ``centroids``; with ``qnorm`` each
    row is scaled by ``norm_centroids[norm_codes[row]]``."""

    rows: int
    dim: int
    nsubq: int
    dsub: int
    lastdsub: int
    codes: np.ndarray  # uint8, rows * nsubq
    centroids: np.ndarray  # float32, dim * KSUB
    qnorm: bool
    norm_codes: np.ndarray | None  # uint8, rows
    norm_centroids: np.ndarray | None  # float32, KSUB


@dataclass
class FastTextFile:
    """The parts of a supervised fastText model that prediction reads."""

    dim: int
    word_ngrams: int
    loss: int
    model: int
    bucket: int
    minn: int
    maxn: int
    words: list[bytes]  # the dictionary: words first, then labels
    counts: np.ndarray  # int64 per entry
    types: np.ndarray  # int8 per entry: 0 word, 1 label
    nwords: int
    nlabels: int
    pruneidx_size: int
    prune_keys: np.ndarray  # int32: n-gram bucket
    prune_values: np.ndarray  # int32: its row after the words
    input: np.ndarray | Quantized  # dense float32 (rows, dim) or quantized
    output: np.ndarray | Quantized  # dense float32 (labels, dim) or quantized
    label_prefix: bytes = b"__label__"


class _Reader:
    def __init__(self, data: bytes | mmap.mmap, copy: bool = True) -> None:
        self.data, self.pos, self.copy = data, 0, copy

    def unpack(self, fmt: str) -> tuple:
        fmt = "<" + fmt
        try:
            values = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            raise ValueError("truncated file") from None
        self.pos += struct.calcsize(fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        dt = np.dtype(dtype).newbyteorder("<")
        if count < 0 or self.pos + dt.itemsize * count > len(self.data):
            raise ValueError("truncated file")
        out = np.frombuffer(self.data, dtype=dt, count=count, offset=self.pos)
        self.pos += dt.itemsize * count
        if not self.copy:  # (a read-only view of the map: little-endian is the native order here)
            return out
        return out.astype(dt.newbyteorder("="), copy=True)

    def cstring(self) -> bytes:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise ValueError("truncated dictionary")
        word = bytes(self.data[self.pos : end])
        self.pos = end + 1
        return word


def _matrix(r: _Reader, quantized: bool) -> np.ndarray | Quantized:
    if not quantized:
        rows, dim = r.unpack("qq")
        return r.array("float32", rows * dim).reshape(rows, dim)
    (qnorm,) = r.unpack("?")
    rows, dim = r.unpack("qq")
    (codesize,) = r.unpack("i")
    codes = r.array("uint8", codesize)
    pq_dim, nsubq, dsub, lastdsub = r.unpack("iiii")
    centroids = r.array("float32", pq_dim * KSUB)
    norm_codes = norm_centroids = None
    if qnorm:
        norm_codes = r.array("uint8", rows)
        n_dim, _, _, _ = r.unpack("iiii")
        norm_centroids = r.array("float32", n_dim * KSUB)
    if codesize != rows * nsubq or pq_dim != dim:
        raise ValueError("inconsistent quantized matrix")
    return Quantized(rows, dim, nsubq, dsub, lastdsub, codes, centroids, qnorm, norm_codes, norm_centroids)


#: Bytes of the header and of ``Args``: magic, version, 12 int32 and a double.
ARGS_BYTES = 8 + 12 * 4 + 8


def read_args(path: str | Path) -> dict[str, int]:
    """The training arguments in the model file's header (its first :data:`ARGS_BYTES` bytes;
    raises ``ValueError`` on another format)."""
    with open(path, "rb") as fh:
        head = fh.read(ARGS_BYTES)
    if len(head) < ARGS_BYTES or struct.unpack_from("<ii", head) != (MAGIC, VERSION):
        raise ValueError(f"{path}: not a fastText binary model (format version {VERSION})")
    names = "dim ws epoch min_count neg word_ngrams loss model bucket minn maxn lr_update_rate"
    return dict(zip(names.split(), struct.unpack_from("<12i", head, 8), strict=True))


def read_model(path: str | Path, mapped: bool = False) -> FastTextFile:
    """Parse the fastText model file at ``path`` (raises ``ValueError`` on another format, or a
    truncated file).  The arrays are copies, or with ``mapped`` read-only views of the file's
    memory map (no copy: the processes that map one file share its pages through the page cache;
    the map stays open as long as an array refers to it)."""
    with open(path, "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if not mapped:
        with data:
            return _parse(_Reader(data), path)
    return _parse(_Reader(data, copy=False), path)


def _parse(r: _Reader, path: str | Path) -> FastTextFile:
    if r.unpack("ii") != (MAGIC, VERSION):
        raise ValueError(f"{path}: not a fastText binary model (format version {VERSION})")
    dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn, _lr_update = r.unpack(
        "12i"
    )
    r.unpack("d")  # sampling threshold t
    size, nwords, nlabels = r.unpack("iii")
    _ntokens, pruneidx_size = r.unpack("qq")
    words, counts, types = [], [], []
    for _ in range(size):
        words.append(r.cstring())
        count, kind = r.unpack("qb")
        counts.append(count)
        types.append(kind)
    prune = r.array("int32", 2 * max(pruneidx_size, 0)).reshape(-1, 2)
    (quant_input,) = r.unpack("?")
    inp = _matrix(r, quant_input)
    (qout,) = r.unpack("?")
    out = _matrix(r, qout)
    return FastTextFile(
        dim=dim,
        word_ngrams=word_ngrams,
        loss=loss,
        model=model,
        bucket=bucket,
        minn=minn,
        maxn=maxn,
        words=words,
        counts=np.array(counts, dtype=np.int64),
        types=np.array(types, dtype=np.int8),
        nwords=nwords,
        nlabels=nlabels,
        pruneidx_size=pruneidx_size,
        prune_keys=np.ascontiguousarray(prune[:, 0]),
        prune_values=np.ascontiguousarray(prune[:, 1]),
        input=inp,
        output=out,
    )


def huffman_tree(counts: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``HierarchicalSoftmaxLoss::buildTree`` (src/loss.cc): the children (``left``, ``right``;
    -1 for a leaf) of the ``2 n - 1`` nodes of the Huffman tree over the ``n`` label counts
    (sorted by decreasing count, as the dictionary stores them); the root is the last node."""
    osz = len(counts)
    tree_count = [int(c) for c in counts] + [10**15] * (osz - 1)
    left = np.full(2 * osz - 1, -1, dtype=np.int32)
    right = np.full(2 * osz - 1, -1, dtype=np.int32)
    leaf, node = osz - 1, osz
    for i in range(osz, 2 * osz - 1):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and tree_count[leaf] < tree_count[node]:
                mini[j] = leaf
                leaf -= 1
            else:
                mini[j] = node
                node += 1
        left[i], right[i] = mini
        tree_count[i] = tree_count[mini[0]] + tree_count[mini[1]]
    return left, right
