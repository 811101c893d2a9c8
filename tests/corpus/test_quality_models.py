"""``contentx corpus --quality-model NAME=PATH`` (documents scored by a fastText classifier on the
workers), ``--quality-min``, the scores in the documents, the signals and the report; the options
and the user errors.  A tiny model is trained here (:mod:`.scored`)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import quantiles, scores
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


# -- select: --keep-top and --quality-buckets --------------------------------------------------


@pytest.mark.spark
def test_thresholds_are_the_exact_weighted_quantiles(spark):
    """Three aggregations find every threshold of two columns, ties and nulls included, as the
    in-memory reference does."""
    rng = np.random.default_rng(3)
    n = 5000
    a = rng.random(n).astype(np.float32)
    a[:400] = a[400]  # a tie across the cut of some fractions
    b = (rng.random(n) ** 3).astype(np.float32)
    weights = rng.integers(1, 5000, n)
    missing = rng.random(n) < 0.05
    frame = spark.createDataFrame(
        pa.table(
            {
                "a": pa.array(a, mask=missing),
                "b": pa.array(b),
                "w": pa.array(weights, pa.int64()),
            }
        ).to_pandas()
    )
    fractions = [0.001, 0.1, 0.5, 0.9, 0.97, 1.0]
    found = quantiles.top_thresholds(frame, ["a", "b"], "w", {"a": fractions, "b": fractions[:3]})
    for name, scores_, keep in (("a", a, ~missing), ("b", b, np.ones(n, bool))):
        for cut in found[name]:
            expected = quantiles.reference_threshold(scores_[keep], weights[keep], cut.fraction)
            assert cut.threshold == expected, (name, cut)
            assert cut.total_weight == weights[keep].sum()
            assert cut.kept_weight == weights[keep][scores_[keep] >= np.float32(expected)].sum()
            assert cut.kept_weight >= cut.fraction * cut.total_weight
    documents = quantiles.top_thresholds(frame, ["b"], None, {"b": [0.25]})["b"][0]
    assert documents.threshold == quantiles.reference_threshold(b, np.ones(n), 0.25)


@pytest.fixture(scope="module")
def second_model(tmp_path_factory):
    return train_model(tmp_path_factory.mktemp("model") / "edu.ftz", seed=5, dim=4, wordNgrams=1)


@pytest.fixture(scope="module")
def signals_build(spark, table, model, second_model, tmp_path_factory, texts):
    """The texts built with --signals, two models and a tokenizer trained on them.  The second
    model is read from a ``viewfs://`` mount (a Hadoop filesystem other than the local one: the
    job ships it to the workers with ``addFile``), the first from its local path."""
    from .test_tokens import train_tokenizer

    out = tmp_path_factory.mktemp("signals") / "built"
    tokenizer = train_tokenizer(out.parent / "tokenizer.json", [t for t in texts if t][:50], 300)
    mounted = out.parent / "models"
    mounted.mkdir()
    remote = f"edu-{uuid.uuid4().hex[:8]}.ftz"  # a name no other test ships into the session
    shutil.copyfile(second_model, mounted / remote)
    table_name = f"mt{uuid.uuid4().hex[:8]}"
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{table_name}.link./models", mounted.as_uri()
    )
    argv = ["--input", str(table), "--output", str(out), "--dedup", "exact", "--signals"]
    argv += ["--tokenizer", tokenizer]
    argv += ["--quality-model", f"dclm={model}"]
    argv += ["--quality-model", f"edu=viewfs://{table_name}/models/{remote}"]
    corpus_job.run(config_from_argv(argv), spark)
    return out


@pytest.mark.spark
def test_a_model_on_another_hadoop_filesystem_scores_as_its_local_file(signals_build, second_model):
    """``--quality-model edu=viewfs://...``: every measured document's stored score is bit-identical
    to the local file's score of its text (the text as the build keeps it, texts/)."""
    from contentx_udf import quality_scores

    signals = pq.read_table(str(signals_build / "signals"), columns=["doc_id", "quality_edu"])
    text_of = _stored_texts(signals_build)
    ids = signals.column("doc_id").to_pylist()
    got = np.array(signals.column("quality_edu").to_pylist(), dtype=np.float32)
    expected = quality_scores([text_of[i] for i in ids], str(second_model))
    assert len(ids) == DOCUMENTS + COPIES and np.ptp(expected) > 0.1
    assert np.array_equal(got, expected)
    build = json.loads((signals_build / "signals" / "_build.json").read_text())
    assert any(a.startswith("edu=viewfs://") for a in build["argv"])


def _stored_texts(corpus) -> dict[str, str]:
    """``{doc_id: text}`` of a ``--signals`` build's ``texts/`` (the text as the build keeps it)."""
    stored = pq.read_table(str(corpus / "texts"), columns=["doc_id", "text"])
    return dict(zip(stored.column("doc_id").to_pylist(), stored.column("text").to_pylist(), strict=True))


def _equals_a_full_build(spark, table, model, threshold, cut, report, full) -> None:
    """A full build with ``--quality-min dclm=threshold`` keeps the documents the re-cut ``cut``
    kept and drops as many below it."""
    argv = ["--input", str(table), "--output", str(full), "--dedup", "exact"]
    argv += ["--quality-model", f"dclm={model}", "--quality-min", f"dclm={threshold}"]
    built = corpus_job.run(config_from_argv(argv), spark)
    assert _urls(full) == _urls(cut)
    assert built["dropped"]["quality_dclm"] == report["dropped"]["quality_dclm"]


def _urls(path) -> set[tuple]:
    t = pq.read_table(str(path / "documents"), columns=["url", "text_hash", "duplicate_count"])
    return set(zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True))


@pytest.mark.spark
def test_keep_top_keeps_the_documents_at_its_threshold_and_equals_a_full_build(
    spark, signals_build, table, model, tmp_path
):
    cut = tmp_path / "top"
    assert (
        cli.main(["select", "--from", str(signals_build), "--output", str(cut), "--keep-top", "dclm=0.3"])
        == 0
    )
    report = json.loads((cut / "_report.json").read_text())
    top = report["quality_cuts"]["keep_top"]
    signals = pq.read_table(str(signals_build / "signals"), columns=["url", "quality_dclm"]).to_pylist()
    scores_ = np.array([r["quality_dclm"] for r in signals], dtype=np.float32)
    expected = quantiles.reference_threshold(scores_, np.ones(len(scores_)), 0.3)
    assert np.float32(top["threshold"]) == np.float32(expected)  # written as float32's shortest decimal
    at_or_above = {r["url"] for r in signals if np.float32(r["quality_dclm"]) >= np.float32(top["threshold"])}
    assert top["kept_weight"] == len(at_or_above) and top["total_weight"] == len(signals)
    assert 0.3 <= top["kept_share"] < 0.3 + 2 / len(signals)
    kept = {url for url, _, _ in _urls(cut)}
    assert kept <= at_or_above
    assert report["kept"] + report["dropped"]["exact_duplicate"] == len(at_or_above)
    assert report["dropped"]["quality_dclm"] == len(signals) - len(at_or_above)
    assert f"--quality-min dclm={top['threshold']!r}" in (cut / "report.md").read_text()
    # the same corpus from a full build with --quality-min at the recorded threshold
    _equals_a_full_build(spark, table, model, top["threshold"], cut, report, tmp_path / "full")


@pytest.mark.spark
def test_keep_top_by_bytes_then_buckets_of_two_models(spark, signals_build, tmp_path):
    """The top half of the bytes by dclm, then Nemotron-CC's buckets of dclm and edu over it: the
    kept bytes within 0.5 % of the half asked (before dedup), every document in one bucket
    directory, each model's bins 1/10 of the bytes +- 0.5 %."""
    cut = tmp_path / "buckets"
    argv = ["select", "--from", str(signals_build), "--output", str(cut), "--keep-top", "dclm=0.5"]
    argv += ["--keep-top-weight", "bytes", "--quality-buckets", "dclm,edu", "--bins", "10"]
    assert cli.main(argv) == 0
    report = json.loads((cut / "_report.json").read_text())
    cuts = report["quality_cuts"]
    signals = pq.read_table(str(signals_build / "signals")).to_pylist()
    threshold = np.float32(cuts["keep_top"]["threshold"])
    weights = np.array([r["text_bytes"] for r in signals])
    dclm = np.array([r["quality_dclm"] for r in signals], dtype=np.float32)
    assert threshold == np.float32(quantiles.reference_threshold(dclm, weights, 0.5))
    top = dclm >= threshold
    assert abs(weights[top].sum() / weights.sum() - 0.5) <= 0.005
    # the buckets among the top half: each model's bins by its recorded edges
    buckets = cuts["buckets"]
    kept_rows = [r for r, t in zip(signals, top, strict=True) if t]
    total = sum(r["text_bytes"] for r in kept_rows)
    expected_bucket = {}
    for name in ("dclm", "edu"):
        edges = np.array(buckets["edges"][name], dtype=np.float32)
        assert list(edges) == sorted(edges)
        bins = np.array([(np.float32(r[f"quality_{name}"]) >= edges).sum() for r in kept_rows])
        per_bin = np.bincount(bins, weights=[r["text_bytes"] for r in kept_rows], minlength=10)
        assert np.all(np.abs(per_bin / total - 0.1) <= 0.005), (name, per_bin / total)
        assert buckets["per_model_bin"][name]["bytes"] == [int(x) for x in per_bin]
        for r, b in zip(kept_rows, bins, strict=True):
            expected_bucket[r["url"]] = max(expected_bucket.get(r["url"], 0), int(b))
    written = pq.read_table(str(cut / "documents")).to_pylist()  # bucket from the directories
    assert {p.name for p in (cut / "documents").iterdir() if p.is_dir()} <= {f"bucket={k}" for k in range(10)}
    urls = [d["url"] for d in written]
    assert len(urls) == len(set(urls)) == report["kept"]
    assert all(int(d["bucket"]) == expected_bucket[d["url"]] for d in written)
    assert sum(buckets["per_bucket"]["documents"]) == len(kept_rows)
    # the build's token counts (select inherits its --tokenizer), summed per bucket
    tokens = [0] * 10
    for r in kept_rows:
        tokens[expected_bucket[r["url"]]] += r["token_count"]
    assert buckets["per_bucket"]["tokens"] == tokens and sum(tokens) > 0


def _tokens_cut(report, signals, weights, fraction):
    """The recorded ``--keep-top-weight tokens`` cut checked against the in-memory reference: its
    threshold, its weights, the kept tokens within 0.5 % of the fraction (before dedup); the URLs
    at or above it."""
    top = report["quality_cuts"]["keep_top"]
    assert top["weight"] == "tokens"
    dclm = np.array([r["quality_dclm"] for r in signals], dtype=np.float32)
    assert np.float32(top["threshold"]) == np.float32(quantiles.reference_threshold(dclm, weights, fraction))
    above = dclm >= np.float32(top["threshold"])
    assert top["kept_weight"] == weights[above].sum() and top["total_weight"] == weights.sum()
    assert abs(weights[above].sum() / weights.sum() - fraction) <= 0.005
    assert report["dropped"]["quality_dclm"] == int((~above).sum())
    assert report["kept"] + report["dropped"]["exact_duplicate"] == int(above.sum())
    return {r["url"] for r, a in zip(signals, above, strict=True) if a}


@pytest.mark.spark
def test_keep_top_by_tokens_reused_or_counted_again_equals_a_full_build(
    spark, signals_build, table, model, texts, tmp_path
):
    """--keep-top-weight tokens by the build's token counts (select without --tokenizer) and by the
    re-cut's own tokenizer (counted from texts/ before the cut): each threshold is the exact
    token-weighted quantile and keeps the fraction of the tokens to 0.5 %; a full build with
    --quality-min at the recorded threshold keeps the same documents."""
    from .test_tokens import own_count, train_tokenizer

    signals = pq.read_table(str(signals_build / "signals")).to_pylist()
    reused = tmp_path / "reused"
    argv = ["select", "--from", str(signals_build), "--output", str(reused), "--keep-top", "dclm=0.4"]
    assert cli.main([*argv, "--keep-top-weight", "tokens"]) == 0
    report = json.loads((reused / "_report.json").read_text())
    built_counts = np.array([r["token_count"] for r in signals], dtype=np.int64)
    above = _tokens_cut(report, signals, built_counts, 0.4)
    assert {url for url, _, _ in _urls(reused)} <= above
    assert "by tokens" in (reused / "report.md").read_text()
    # the re-cut's own tokenizer (another vocabulary: other counts, another threshold)
    tokenizer = train_tokenizer(tmp_path / "small.json", texts[100:130], 280)
    text_of = _stored_texts(signals_build)
    own = np.array([own_count(tokenizer, text_of[r["doc_id"]]) for r in signals], dtype=np.int64)
    assert not np.array_equal(own, built_counts)
    counted = tmp_path / "counted"
    argv = ["select", "--from", str(signals_build), "--output", str(counted), "--keep-top", "dclm=0.25"]
    assert cli.main([*argv, "--keep-top-weight", "tokens", "--tokenizer", tokenizer]) == 0
    report = json.loads((counted / "_report.json").read_text())
    _tokens_cut(report, signals, own, 0.25)
    threshold = report["quality_cuts"]["keep_top"]["threshold"]
    _equals_a_full_build(spark, table, model, threshold, counted, report, tmp_path / "full")


@pytest.mark.spark
def test_select_cuts_need_a_model_the_build_scored(spark, signals_build, tmp_path, capsys):
    base = ["select", "--from", str(signals_build), "--output", str(tmp_path / "x")]
    cases = [
        (["--keep-top", "nope=0.1"], "no model 'nope'"),
        (["--keep-top", "dclm=0"], "0 < FRACTION"),
        (["--quality-buckets", "dclm,other"], "no model 'other'"),
        (["--quality-min", "other=0.2"], "no such model"),
    ]
    capsys.readouterr()
    for extra, needle in cases:
        assert cli.main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err, err


def test_keep_top_by_tokens_needs_token_counts(signals_build, tmp_path, capsys):
    """A build without --tokenizer (its command line without one) and a select without one: a
    fraction of the tokens is one line, exit 2, before Spark (the corpus's signals are not read)."""
    source = tmp_path / "untokenized"
    (source / "signals").mkdir(parents=True)
    (source / "_SUCCESS").write_text("")
    build = json.loads((signals_build / "signals" / "_build.json").read_text())
    argv = build["argv"]
    at = argv.index("--tokenizer")
    build["argv"] = argv[:at] + argv[at + 2 :]
    (source / "signals" / "_build.json").write_text(json.dumps(build))
    base = ["select", "--from", str(source), "--output", str(tmp_path / "x"), "--keep-top", "dclm=0.1"]
    capsys.readouterr()
    assert cli.main([*base, "--keep-top-weight", "tokens"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--keep-top-weight tokens" in err and "--tokenizer" in err, err
    assert not (tmp_path / "x").exists()
