"""``contentx train-quality``: a balanced sample drawn by Spark from JSONL and text sources, a
fastText model that the scorer reads and that separates the two kinds on held-out documents,
the printed precision/recall/F1; user errors as one line with exit code 2.  The metrics without
Spark."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from contentx_udf import cli
from contentx_udf.corpus.train_quality import metrics, top_threshold, write_sample
from contentx_udf.text.classifier import QualityModel

from ..conftest import REPO

pytest.importorskip("fasttext_new", reason="fasttext-new (the quality extra) not installed")


def _prose() -> list[str]:
    out = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for block in page.read_text(encoding="utf-8").split("\n\n"):
            if len(block.split()) >= 12 and not block.lstrip().startswith(("|", "```", "#")):
                out.append(block)
    return out


def _code_lines() -> list[str]:
    out = []
    for path in sorted((REPO / "contentx_udf").rglob("*.py")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if len(line.split()) >= 3]
        out += [" ".join(lines[i : i + 4]) for i in range(0, len(lines) - 4, 4)]
    return out


def test_metrics_by_hand():
    scores = np.array([0.9, 0.8, 0.7, 0.4, 0.3, 0.2, 0.1, 0.05, 0.6, 0.55])
    positive = np.array([1, 1, 0, 1, 0, 0, 0, 0, 1, 0], dtype=bool)
    q = metrics(scores, positive, 0.5)  # kept: 0.9 0.8 0.7 0.6 0.55 -> 3 of them positive, of 4
    assert (q.kept, q.precision, q.recall) == (5, 3 / 5, 3 / 4)
    assert q.f1 == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert top_threshold(scores, 0.1) == 0.9 and top_threshold(scores, 0.25) == 0.7  # ceil(2.5) = 3
    nothing = metrics(scores, positive, 2.0)
    assert nothing.kept == 0 and math.isnan(nothing.precision) and math.isnan(nothing.f1)


def test_sample_capped_per_class(tmp_path):
    rows = [(f"__label__hq text {i}", "__label__hq", i % 3 == 0) for i in range(10)]
    rows += [(f"__label__cc text {i}", "__label__cc", False) for i in range(4)]
    written = write_sample(iter(rows), 6, str(tmp_path / "t.txt"), str(tmp_path / "v.txt"))
    assert written["__label__hq"] == 6 and written["__label__cc"] == 4
    assert written["train"] + written["valid"] == 10 and written["valid"] == 2  # rows 0 and 3
    assert (tmp_path / "v.txt").read_text().splitlines() == ["__label__hq text 0", "__label__hq text 3"]


@pytest.mark.spark
def test_train_quality_end_to_end(spark, tmp_path, capsys):
    prose, code = _prose(), _code_lines()
    positive = tmp_path / "prose.jsonl"
    positive.write_text("".join(json.dumps({"text": t, "n": i}) + "\n" for i, t in enumerate(prose)))
    negative = tmp_path / "code.txt"  # one document per line
    negative.write_text("\n".join(code) + "\n\n  \n")
    model = tmp_path / "models" / "prose.bin"
    argv = ["train-quality", "--positive", str(positive), "--negative", str(negative), "--output", str(model)]
    small = [
        "--dim",
        "16",
        "--bucket",
        "50000",
        "--epoch",
        "20",
        "--max-per-class",
        "250",
        "--validation",
        "0.3",
    ]
    assert cli.main(argv + small) == 0
    out = capsys.readouterr().out
    sample = re.search(r"sample: ([\d,]+) positive of ([\d,]+) and ([\d,]+) negative of ([\d,]+)", out)
    assert sample, out
    pos, n_pos, neg, n_neg = (int(g.replace(",", "")) for g in sample.groups())
    assert (n_pos, n_neg) == (len(prose), len(code))  # (the blank lines are no documents)
    assert pos == neg == min(250, len(prose), len(code))
    f1 = [float(x) for x in re.findall(r"F1 ([0-9.]+)", out)]
    assert len(f1) == 2 and f1[0] > 0.8, out  # prose and code are easy to tell apart
    scorer = QualityModel.open(model)
    assert set(scorer.labels) == {"__label__hq", "__label__cc"}
    scores = scorer.score(prose[:50] + code[:50])
    assert scores[:50].mean() > scores[50:].mean() + 0.3

    # the user's errors: one line, exit code 2, nothing written
    assert cli.main(argv + small) == 2
    assert "exists; rerun with --overwrite" in capsys.readouterr().err
    missing = ["train-quality", "--positive", str(tmp_path / "nope.jsonl"), "--negative", str(negative)]
    assert cli.main([*missing, "--output", str(tmp_path / "m2.bin"), *small]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--positive" in err and "no such file" in err
    no_text = tmp_path / "notext.jsonl"
    no_text.write_text('{"body": "a b c"}\n')
    wrong = ["train-quality", "--positive", str(no_text), "--negative", str(negative)]
    assert cli.main([*wrong, "--output", str(tmp_path / "m3.bin"), *small]) == 2
    err = capsys.readouterr().err.strip()
    assert "no text column (its columns: body)" in err and err.count("\n") == 0
    assert not (tmp_path / "m2.bin").exists() and not (tmp_path / "m3.bin").exists()
