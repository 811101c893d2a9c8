"""``contentx corpus --quality-model NAME=PATH`` (documents scored by a fastText classifier on the
workers), ``--quality-min``, the scores in the documents, the signals and the report; the options
and the user errors.  A tiny model is trained here (:mod:`.scored`)."""

from __future__ import annotations

import argparse
import json
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import scores
from contentx_udf.corpus.config import config_from_argv
from contentx_udf.corpus.per_document import PassSettings, document_batch
from contentx_udf.errors import UserError

from .scored import fasttext_scores, quality_text, train_model
from .tables import table_row, write_table

DOCUMENTS = 1200
COPIES = 15


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return train_model(tmp_path_factory.mktemp("model") / "dclm.bin")


@pytest.fixture(scope="module")
def texts():
    rng = random.Random(7)
    return [quality_text(rng, rng.random()) for _ in range(DOCUMENTS)]


@pytest.fixture(scope="module")
def table(tmp_path_factory, texts):
    """The texts on nine hosts, and exact copies of the first few fetched a day later."""
    rows = [table_row(f"https://s{i % 9}.example/p{i}", t, offset=i) for i, t in enumerate(texts)]
    rows += [
        table_row(f"https://copies.example/c{k}", texts[k], offset=10_000 + k, day=2) for k in range(COPIES)
    ]
    path = tmp_path_factory.mktemp("scored") / "table"
    write_table(path, "combined", rows)
    return path


def _options(argv):
    parser = argparse.ArgumentParser()
    scores.add_arguments(parser)
    return parser.parse_args(argv)


def test_options_from_the_flags_and_the_config_file():
    edu = {"path": "/models/edu.bin", "label": "__label__3", "min": 0.4}
    table = {"dclm": "/models/dclm.bin", "edu": edu}
    args = _options(["--quality-model", "edu=/other/edu.ftz", "--quality-min", "dclm=0.018112"])
    got = scores.model_options(args, table, "corpus.toml")
    assert got == {
        "quality_models": {"dclm": "/models/dclm.bin", "edu": "/other/edu.ftz"},
        "quality_labels": {"edu": "__label__3"},
        "quality_min": {"edu": 0.4, "dclm": 0.018112},
    }
    bad = [
        (["--quality-model", "DCLM=/m.bin"], "lowercase"),
        (["--quality-model", "dclm"], "NAME=VALUE"),
        (["--quality-model", "a=/m.bin", "--quality-min", "a=1.5"], "between 0 and 1"),
        (["--quality-model", "a=/m.bin", "--quality-min", "a=high"], "a number"),
        (["--quality-model", "a=/m.bin", "--quality-label", "b=__label__hq"], "no such model"),
    ]
    for argv, needle in bad:
        with pytest.raises(UserError, match=needle):
            scores.model_options(_options(argv), {}, "corpus.toml")
    with pytest.raises(UserError, match="unknown key"):
        scores.model_options(_options([]), {"a": {"path": "/m.bin", "threshold": 1}}, "corpus.toml")


def test_thresholds_compare_in_float32_and_read_back_as_the_same_float32():
    values = np.array([0.018112, 0.5, 1 / 3, 0.9999999, 1e-6], dtype=np.float32)
    for v in values:
        written = scores.threshold_text(float(v))
        assert np.float32(written) == v
        assert json.loads(json.dumps(written)) == written
        assert scores.at_least(values, written).sum() == (values >= v).sum()


def test_the_pass_scores_as_fasttext_and_drops_below_the_minimum(model, texts):
    sample = texts[:300]
    expected = np.array(fasttext_scores(model, sample), dtype=np.float32)
    minimum = float(np.median(expected))
    settings = PassSettings(models=(scores.ScoredModel("dclm", str(model), "__label__hq", minimum),))
    dropped = pa.array([None, "language"] + [None] * (len(sample) - 2), pa.string())
    out = document_batch(
        pa.array(sample),
        pa.array([f"https://x.example/{i}" for i in range(len(sample))]),
        pa.array(["en"] * len(sample)),
        pa.array([0.9] * len(sample)),
        dropped,
        settings,
    )
    got = out.field("quality").to_pylist()
    assert got[1] is None  # dropped by a column filter: not scored
    others = [i for i in range(len(sample)) if i != 1]
    assert np.allclose([got[i][0] for i in others], expected[others], atol=1e-5)
    drops = out.field("drop").to_pylist()
    below = {i for i in others if expected[i] < np.float32(minimum)}
    assert below and {i for i, d in enumerate(drops) if d == "quality_dclm"} == below
    # band hashes for the documents kept only
    assert all(out.field("bands")[i].as_py() is None for i in below)


@pytest.mark.spark
def test_a_build_stores_the_scores_and_cuts_below_the_minimum(spark, table, model, texts, tmp_path):
    out = tmp_path / "built"
    minimum = 0.3
    argv = ["--input", str(table), "--output", str(out), "--dedup", "exact"]
    argv += ["--quality-model", f"dclm={model}", "--quality-min", f"dclm={minimum}"]
    report = corpus_job.run(config_from_argv(argv), spark)
    expected = np.array(fasttext_scores(model, texts), dtype=np.float32)
    below = expected < np.float32(minimum)
    assert 0 < below.sum() < len(texts)
    docs = pq.read_table(str(out / "documents")).to_pylist()
    by_url = {d["url"]: d for d in docs}
    kept = {f"https://s{i % 9}.example/p{i}" for i in range(len(texts)) if not below[i]}
    assert set(by_url) == kept  # the copies fetched later are exact duplicates
    for i in np.flatnonzero(~below)[:50]:
        assert abs(by_url[f"https://s{i % 9}.example/p{i}"]["quality_dclm"] - expected[i]) < 1e-5
    copies_below = int(below[:COPIES].sum())
    assert report["dropped"]["quality_dclm"] == int(below.sum()) + copies_below
    assert report["dropped"]["exact_duplicate"] == COPIES - copies_below
    assert report["examples"]["quality_dclm"]["url"]
    entry = report["quality_scores"]["dclm"]["all"]
    assert entry["documents"] == len(texts) + COPIES == sum(entry["histogram"])
    share = {p["threshold"]: p["documents"] for p in entry["kept_share"]}
    reached = len(texts) + COPIES - report["dropped"]["quality_dclm"]
    assert share[minimum] == round(reached / entry["documents"], 6)
    assert "### quality_dclm" in (out / "report.md").read_text()


@pytest.mark.spark
def test_a_missing_label_or_a_bad_model_is_one_line(spark, table, model, tmp_path, capsys):
    truncated = tmp_path / "cut.bin"
    truncated.write_bytes(model.read_bytes()[:5000])
    base = ["corpus", "--input", str(table), "--output", str(tmp_path / "out")]
    cases = [
        ([f"--quality-model=dclm={model}", "--quality-label", "dclm=__label__edu"], "__label__cc"),
        ([f"--quality-model=dclm={truncated}"], "fastText model"),
        ([f"--quality-model=dclm={tmp_path / 'none.bin'}"], "no such file"),
    ]
    capsys.readouterr()
    for extra, needle in cases:
        assert cli.main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "out").exists()
