"""Scores of fastText supervised classifiers (quality models such as DCLM's), as fastText's own
``predict(line, k=-1)`` gives them, without fastText.

Any supervised model file: ``.bin`` or quantized ``.ftz``; softmax, hierarchical softmax or
one-vs-all loss; word n-grams of any order and character n-grams.  The file is memory-mapped
(:func:`~contentx_udf.text.fasttext_file.read_model` with ``mapped=True``): the input matrix, the
bulk of a model, is never copied, so the processes of a node that open one model share its pages
through the page cache; each process holds only the dictionary's look-up tables.

The texts are prepared as DCLM prepares them (``" ".join(text.strip().splitlines())``, one line)
and scored by the compiled predictor (:mod:`contentx_udf.text._quality`, Cython), or by the numpy
code below where it is not built (``CONTENTX_PURE_PYTHON=1``): the same probabilities within 1e-6.

What fastText (0.9.2, src/) computes for a line, and what both paths compute in the same order:
``Dictionary::getLine`` (tokens, their subword rows, then ``addWordNgrams``: ``h = h * 116049371
+ hash`` over the sign-extended 32-bit word hashes, ``h % bucket``), ``Model::computeHidden`` (the
float32 sum of the rows times ``1 / count``), then the loss's ``computeOutput`` and ``findKBest``
with ``k = -1`` and threshold 0: ``exp(log(p + 1e-5))`` per label.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import UserError
from ..extensions import optional_module
from . import fasttext_file as ff

#: DCLM's label of the high-quality class (``__label__hq``; the other is ``__label__cc``).
DEFAULT_LABEL = "__label__hq"
#: fastText's ``loss_name`` of the one-vs-all loss (src/args.h).
LOSS_OVA = 4
#: fastText's end-of-sentence token (the line's newline).
EOS = b"</s>"
#: ``Dictionary::readWord``'s separators.
_SEPARATORS = re.compile(rb"[ \n\r\t\v\f\x00]+")


class QualityModelError(UserError):
    """A model file that is not a readable fastText supervised model, or a label it lacks."""


def prepare(text: str) -> str:
    """DCLM's preparation of a document for its classifier: ``" ".join(text.strip().splitlines())``
    (one line; datatrove's ``FastTextClassifierFilter`` with ``newline_replacement=" "``)."""
    return " ".join(text.strip().splitlines())


def _fnv(data: bytes) -> int:
    """fastText's ``Dictionary::hash``: FNV-1a over the bytes, each sign-extended."""
    h = 2166136261
    for byte in data:
        h = ((h ^ (byte | 0xFFFFFF00 if byte >= 0x80 else byte)) * 16777619) & 0xFFFFFFFF
    return h


class QualityModel:
    """A fastText supervised model opened for scoring (:meth:`open`: once per process and file).

    ``labels``: the model's labels (``__label__hq``, ...), in the model's order."""

    _opened: dict[tuple[str, int, int], QualityModel] = {}
    _lock = threading.Lock()

    def __init__(self, path: str, parsed: ff.FastTextFile) -> None:
        self.path = path
        self.file = parsed
        self.labels: list[str] = [w.decode("utf-8", "replace") for w in parsed.words[parsed.nwords :]]
        compiled = optional_module("contentx_udf.text._quality")
        self._compiled = None
        if compiled is not None:
            left, right = ff.huffman_tree(parsed.counts[parsed.types == 1])
            self._compiled = compiled.Scorer(parsed, _sigmoid_table(), left, right)
        self._python: _PythonScorer | None = None

    @classmethod
    def open(cls, path: str | os.PathLike) -> QualityModel:
        """The model at ``path`` (a local file), loaded once per process: cached by its real path,
        size and modification time.  Raises :class:`QualityModelError` (one line) for a file that
        is missing, not a fastText model, not a supervised one, or truncated."""
        path = os.fspath(path)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise QualityModelError(f"quality model {path}: {exc.strerror or exc}") from None
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        with cls._lock:
            found = cls._opened.get(key)
            if found is None:
                found = cls._opened[key] = cls(path, _read(path))
        return found

    @property
    def compiled(self) -> bool:
        """Whether the compiled predictor scores (else the numpy code)."""
        return self._compiled is not None

    def label_index(self, label: str) -> int:
        """The index of ``label`` (``hq`` is taken as ``__label__hq``) in :attr:`labels`; raises
        :class:`QualityModelError` listing the model's labels."""
        for name in (label, "__label__" + label):
            if name in self.labels:
                return self.labels.index(name)
        raise QualityModelError(
            f"quality model {self.path} has no label {label!r}; its labels: {', '.join(self.labels)}"
        )

    def probabilities(self, texts: Iterable[str | None] | Any, prepared: bool = False) -> np.ndarray:
        """fastText's probability of each label (columns in :attr:`labels` order) for each text
        (rows), float32; a label fastText leaves out (below its threshold) is 0 and a None text
        NaN.  The texts are prepared with :func:`prepare` unless ``prepared``."""
        if self._compiled is not None and not prepared and _arrow_strings(texts):
            return self._arrow_probabilities(texts)
        items = _strings(texts)
        out = np.full((len(items), len(self.labels)), np.nan, dtype=np.float32)
        if self._compiled is not None and not prepared:
            self._compiled.probabilities(items, out)
            return out
        for i, text in enumerate(items):
            if text is None:
                continue
            line = text if prepared else prepare(text)
            data = line.encode("utf-8", "surrogatepass")
            if self._compiled is not None:
                self._compiled.predict(data, out[i])
            else:
                out[i] = self._python_scorer().predict(data)
        return out

    def _arrow_probabilities(self, texts: Any) -> np.ndarray:
        """:meth:`probabilities` of an Arrow string array (or chunked array), its UTF-8 bytes
        scored where they are: no Python string is made."""
        import pyarrow as pa

        chunks = texts.chunks if hasattr(texts, "chunks") else [texts]
        out = np.full((len(texts), len(self.labels)), np.nan, dtype=np.float32)
        row = 0
        for chunk in chunks:
            n = len(chunk)
            if n:
                _validity, offsets, data = chunk.buffers()[:3]
                wide = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
                offs = np.frombuffer(offsets, dtype=wide)[chunk.offset : chunk.offset + n + 1]
                nulls = np.ascontiguousarray(chunk.is_null().to_numpy(zero_copy_only=False), dtype=np.uint8)
                address, size = (data.address, data.size) if data is not None else (0, 0)
                self._compiled.probabilities_utf8(
                    address, size, offs.astype(np.int64), nulls, out[row : row + n]
                )
            row += n
        return out

    def score(self, texts: Iterable[str | None] | Any, label: str = DEFAULT_LABEL) -> np.ndarray:
        """The probability of ``label`` for each text (float64 array; NaN for None), the texts
        prepared with :func:`prepare`."""
        index = self.label_index(label)
        return self.probabilities(texts)[:, index].astype(np.float64)

    def _python_scorer(self) -> _PythonScorer:
        if self._python is None:
            self._python = _PythonScorer(self.file)
        return self._python


def quality_scores(
    texts: Iterable[str | None] | Any, path: str | os.PathLike, label: str = DEFAULT_LABEL
) -> np.ndarray:
    """The probability of ``label`` given by the fastText model at ``path`` to each text, prepared
    as DCLM prepares it (:func:`prepare`): a float64 array (NaN for a None text).  ``texts``: a
    list of str or a pyarrow string array.  Equals fastText's
    ``model.predict(prepare(text), k=-1)`` within 1e-5."""
    return QualityModel.open(path).score(texts, label)


def _arrow_strings(texts: Any) -> bool:
    """Whether ``texts`` is a pyarrow string array or chunked array (str or large_str)."""
    kind = getattr(texts, "type", None)
    if kind is None or not hasattr(texts, "to_pylist"):
        return False
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _strings(texts: Iterable[str | None] | Any) -> Sequence[str | None]:
    if hasattr(texts, "to_pylist"):  # a pyarrow array or chunked array
        return texts.to_pylist()
    return texts if isinstance(texts, Sequence) and not isinstance(texts, str) else list(texts)


def _read(path: str) -> ff.FastTextFile:
    try:
        parsed = ff.read_model(path, mapped=True)
    except (ValueError, OSError, UnicodeDecodeError, OverflowError, MemoryError) as exc:
        raise QualityModelError(f"quality model {path}: not a readable fastText model file ({exc})") from None
    if parsed.model != ff.MODEL_SUP:
        raise QualityModelError(f"quality model {path}: a fastText word-vector model, not a classifier")
    if parsed.nlabels < 1 or parsed.loss not in (ff.LOSS_HS, ff.LOSS_SOFTMAX, LOSS_OVA):
        raise QualityModelError(
            f"quality model {path}: a fastText model without labels or with loss {parsed.loss}"
        )
    rows = parsed.input.shape[0] if isinstance(parsed.input, np.ndarray) else parsed.input.rows
    orows = parsed.output.shape[0] if isinstance(parsed.output, np.ndarray) else parsed.output.rows
    buckets = parsed.bucket if parsed.pruneidx_size < 0 else int(parsed.prune_values.max(initial=-1)) + 1
    if (
        rows < parsed.nwords + max(buckets, 0)
        or orows != parsed.nlabels
        or parsed.prune_values.min(initial=0) < 0
    ):
        raise QualityModelError(f"quality model {path}: inconsistent fastText model file (matrix sizes)")
    return parsed


def _sigmoid_table() -> np.ndarray:
    """``Loss::t_sigmoid_`` (src/loss.cc): 513 values of ``1 / (1 + exp(-x))`` over [-8, 8]."""
    i = np.arange(513, dtype=np.int64)
    x = (i * 16).astype(np.float32) / np.float32(512) - np.float32(8)
    return (1.0 / (1.0 + np.exp(-x.astype(np.float32)).astype(np.float64))).astype(np.float32)


class _PythonScorer:
    """The numpy path of :class:`QualityModel` (the reference of the compiled one)."""

    def __init__(self, f: ff.FastTextFile) -> None:
        self.f = f
        self.ids = {word: i for i, word in enumerate(f.words)}
        self.prune = (
            dict(zip(f.prune_keys.tolist(), f.prune_values.tolist(), strict=True))
            if f.pruneidx_size > 0
            else None
        )
        self.label_prefix = f.label_prefix
        self.sigmoid = _sigmoid_table()
        self.subwords: dict[int, list[int]] = {}

    def _push(self, rows: list[int], bucket_id: int) -> None:
        f = self.f
        if f.pruneidx_size == 0 or bucket_id < 0:
            return
        if self.prune is not None:
            bucket_id = self.prune.get(bucket_id, -1)
            if bucket_id < 0:
                return
        rows.append(f.nwords + bucket_id)

    def _char_ngrams(self, word: bytes, rows: list[int]) -> None:
        """``Dictionary::computeSubwords`` of the bracketed ``word``."""
        f = self.f
        size = len(word)
        for i in range(size):
            if word[i] & 0xC0 == 0x80:
                continue
            j, n = i, 1
            while j < size and n <= f.maxn:
                j += 1
                while j < size and word[j] & 0xC0 == 0x80:
                    j += 1
                if n >= f.minn and not (n == 1 and (i == 0 or j == size)):
                    self._push(rows, _fnv(word[i:j]) % f.bucket)
                n += 1

    def _word_rows(self, wid: int) -> list[int]:
        found = self.subwords.get(wid)
        if found is None:
            found = [wid]
            word = self.f.words[wid]
            if word != EOS and self.f.maxn > 0:
                self._char_ngrams(b"<" + word + b">", found)
            self.subwords[wid] = found
        return found

    def rows(self, line: bytes) -> list[int]:
        """The input rows of ``line + "\\n"`` in ``Dictionary::getLine``'s order."""
        f = self.f
        rows: list[int] = []
        hashes: list[int] = []
        for token in [*(t for t in _SEPARATORS.split(line) if t), EOS]:
            wid = self.ids.get(token, -1)
            kind = int(f.types[wid]) if wid >= 0 else int(token.startswith(self.label_prefix))
            if kind == 0:
                if wid >= 0:
                    rows += self._word_rows(wid) if f.maxn > 0 else [wid]
                elif token != EOS:
                    self._char_ngrams(b"<" + token + b">", rows)
                h = _fnv(token)
                hashes.append(h - (1 << 32) if h >= 1 << 31 else h)  # (an int32_t)
            if token == EOS:
                break
        mask = (1 << 64) - 1
        for i in range(len(hashes)):
            h = hashes[i] & mask
            for j in range(i + 1, min(len(hashes), i + f.word_ngrams)):
                h = (h * 116049371 + (hashes[j] & mask)) & mask
                self._push(rows, h % f.bucket)
        return rows

    def _input_rows(self, rows: list[int]) -> np.ndarray:
        inp = self.f.input
        index = np.asarray(rows, dtype=np.int64)
        if isinstance(inp, np.ndarray):
            return np.asarray(inp[index], dtype=np.float32)
        return _decode(inp, index)

    def predict(self, line: bytes) -> np.ndarray:
        """The probability of each label (0 where fastText gives none) of ``line`` (no newline)."""
        f = self.f
        rows = self.rows(line)
        probs = np.zeros(f.nlabels, dtype=np.float32)
        if not rows:
            return probs
        hidden = np.cumsum(self._input_rows(rows), axis=0, dtype=np.float32)[-1]  # (in order)
        hidden = hidden * np.float32(1.0 / len(rows))
        if f.loss == ff.LOSS_HS:
            return self._hs(hidden)
        out = _dot_rows(f.output, hidden)
        if f.loss == ff.LOSS_SOFTMAX:
            e = np.exp((out - out.max()).astype(np.float64)).astype(np.float32)
            z = np.cumsum(e, dtype=np.float32)[-1]
            p = e / z
        else:
            x = out.astype(np.float32)
            index = ((x + np.float32(8)) * np.float32(512) / np.float32(8) / np.float32(2)).astype(np.int64)
            p = self.sigmoid[np.clip(index, 0, 512)]
            p = np.where(x < -8, np.float32(0), np.where(x > 8, np.float32(1), p)).astype(np.float32)
        return _std_exp(p)

    def _hs(self, hidden: np.ndarray) -> np.ndarray:
        """``HierarchicalSoftmaxLoss::predict`` with k = -1: every leaf reached above threshold."""
        f = self.f
        osz = f.nlabels
        left, right = ff.huffman_tree(f.counts[f.types == 1])
        probs = np.zeros(osz, dtype=np.float32)
        floor = _std_log(np.float32(0))
        out = f.output
        stack = [(2 * osz - 2, np.float32(0))]
        while stack:
            node, score = stack.pop()
            if score < floor:
                continue
            if left[node] == -1 and right[node] == -1:
                probs[node] = np.float32(np.exp(np.float64(score)))
                continue
            d = _dot_rows(out, hidden, np.array([node - osz]))[0]
            fx = np.float32(1.0 / float(np.float32(1) + np.float32(np.exp(np.float64(-d)))))
            stack.append((int(right[node]), np.float32(score + _std_log(np.float32(fx)))))
            stack.append((int(left[node]), np.float32(score + _std_log(np.float32(1) - fx))))
        return probs


def _std_log(x: np.float32) -> np.float32:
    return np.float32(np.log(np.float64(x) + 1e-5))


def _std_exp(p: np.ndarray) -> np.ndarray:
    """``exp(std_log(p))``: fastText's ``predictLine`` returns ``exp`` of the stored ``log(p + 1e-5)``."""
    logs = np.log(p.astype(np.float64) + 1e-5).astype(np.float32)
    return np.exp(logs.astype(np.float64)).astype(np.float32)


def _decode(q: ff.Quantized, index: np.ndarray) -> np.ndarray:
    """The rows ``index`` of a ``QuantMatrix``, each sub-vector ``norm * centroid`` in float32."""
    codes = q.codes.reshape(q.rows, q.nsubq)[index].astype(np.int64)
    parts = []
    for m in range(q.nsubq):
        if m == q.nsubq - 1:
            start = m * ff.KSUB * q.dsub
            width = q.lastdsub
        else:
            start = m * ff.KSUB * q.dsub
            width = q.dsub
        base = start + codes[:, m] * width
        parts.append(q.centroids[base[:, None] + np.arange(width)])
    rows = np.concatenate(parts, axis=1).astype(np.float32)
    if q.qnorm:
        alpha = q.norm_centroids[q.norm_codes[index]].astype(np.float32)
        rows = (alpha[:, None] * rows).astype(np.float32)
    return rows


def _dot_rows(
    matrix: np.ndarray | ff.Quantized, vec: np.ndarray, index: np.ndarray | None = None
) -> np.ndarray:
    """``Matrix::dotRow`` of each row (all, or ``index``): the float32 products summed in order;
    a quantized row's sum is scaled by its norm after (``ProductQuantizer::mulcode``)."""
    if isinstance(matrix, np.ndarray):
        rows = matrix if index is None else matrix[index]
        return np.cumsum(rows.astype(np.float32) * vec, axis=1, dtype=np.float32)[:, -1]
    index = np.arange(matrix.rows) if index is None else index
    raw = np.cumsum(_decode_plain(matrix, index) * vec, axis=1, dtype=np.float32)[:, -1]
    if matrix.qnorm:
        raw = raw * matrix.norm_centroids[matrix.norm_codes[index]]
    return raw.astype(np.float32)


def _decode_plain(q: ff.Quantized, index: np.ndarray) -> np.ndarray:
    plain = ff.Quantized(q.rows, q.dim, q.nsubq, q.dsub, q.lastdsub, q.codes, q.centroids, False, None, None)
    return _decode(plain, index)
