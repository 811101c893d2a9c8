"""``contentx train-quality``: a fastText quality classifier trained on a positive and a negative
set of documents, as DCLM trains its own (word bigrams, fastText's other defaults).

* The sources are read by Spark from any Hadoop filesystem: a corpus (its ``documents/``), an
  extraction table (committed, :func:`.tables.read_tables`), Parquet or JSONL files (a ``text``
  column), or text files (one document per line).  Empty texts are left out.
* Spark draws a balanced sample: ``min(--max-per-class, positives, negatives)`` documents of each
  class (Bernoulli samples a little larger, :func:`oversampled`, shuffled, then capped), prepared
  as DCLM prepares them (:func:`~contentx_udf.text.classifier.prepare`), labelled, shuffled and
  split into training and validation documents.  The sample reaches the driver one partition at a time
  (``toLocalIterator``) and is written straight to two local files, fastText's training and
  validation files: the driver never holds more than a partition of it.
* fastText trains on the training file (``fasttext-new``, the ``quality`` extra); the model is
  then scored on the validation file by contentx's own scorer (:mod:`~contentx_udf.text.classifier`),
  and the precision, recall and F1 of the positive label are printed at 0.5 and at the threshold
  that keeps the top 10 % (:func:`metrics`).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import UserError, job_main
from ..runtime.console import add_verbose_flag
from ..text.classifier import DEFAULT_LABEL, QualityModel, prepare

#: The labels of the two classes (DCLM's: ``__label__hq`` and ``__label__cc``).
POSITIVE_LABEL = DEFAULT_LABEL
NEGATIVE_LABEL = "__label__cc"
#: fastText's training settings by default: DCLM's word bigrams, the rest fastText's defaults.
DEFAULTS = {"word_ngrams": 2, "dim": 100, "epoch": 5, "lr": 0.1, "bucket": 2_000_000, "min_count": 1}
#: The share of the validation documents the second threshold keeps (DCLM keeps its top 10 %).
TOP_SHARE = 0.10
#: Validation documents scored at once.
SCORE_BATCH = 4096


@dataclass
class Quality:
    """Precision, recall and F1 of the positive class among the documents scored at or above
    ``threshold`` (NaN where undefined: nothing kept, or no positive document)."""

    threshold: float
    kept: int
    precision: float
    recall: float
    f1: float


def metrics(scores: np.ndarray, positive: np.ndarray, threshold: float) -> Quality:
    """:class:`Quality` of keeping the documents with ``scores >= threshold`` (``positive``: the
    documents' true class)."""
    kept = scores >= threshold
    hits = int(np.count_nonzero(kept & positive))
    n_kept, n_pos = int(np.count_nonzero(kept)), int(np.count_nonzero(positive))
    precision = hits / n_kept if n_kept else math.nan
    recall = hits / n_pos if n_pos else math.nan
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else math.nan
    return Quality(float(threshold), n_kept, precision, recall, f1)


def top_threshold(scores: np.ndarray, share: float = TOP_SHARE) -> float:
    """The score of the last document kept when the ``share`` best-scored are kept (at least one):
    keeping ``scores >= top_threshold`` keeps that share (more only on ties)."""
    if len(scores) == 0:
        return math.nan
    k = max(1, math.ceil(share * len(scores)))
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def quality_line(q: Quality, what: str) -> str:
    def f(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.3f}"

    return (
        f"  {what} (score >= {q.threshold:.6g}, {q.kept:,} kept): precision {f(q.precision)}, "
        f"recall {f(q.recall)}, F1 {f(q.f1)}"
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="contentx train-quality",
        description="Train a fastText quality classifier (DCLM's settings: word bigrams) on a "
        "balanced sample of a positive and a negative set, and print its precision, recall and F1 "
        "on held-out documents. A source is a corpus, an extraction table, Parquet or JSONL files "
        "(a `text` column) or text files (one document per line). The model's labels are "
        f"{POSITIVE_LABEL} and {NEGATIVE_LABEL}; it scores with --quality-model as it is. Needs "
        "the `quality` extra (fasttext-new).",
    )
    p.add_argument("--positive", required=True, metavar="SRC", help="documents of the wanted kind")
    p.add_argument("--negative", required=True, metavar="SRC", help="documents of the other kind")
    p.add_argument("--output", required=True, metavar="MODEL", help="the model file (.bin) to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing fastText model MODEL")
    p.add_argument(
        "--max-per-class",
        type=int,
        default=100_000,
        metavar="N",
        help="documents drawn from each class at most (fewer when a class has fewer)",
    )
    p.add_argument(
        "--validation",
        type=float,
        default=0.1,
        metavar="SHARE",
        help="share of the sample held out to measure the model (0: none)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the sample, the split and the training")
    t = p.add_argument_group("fastText's training settings (fastText's defaults but word bigrams)")
    t.add_argument("--word-ngrams", type=int, default=DEFAULTS["word_ngrams"], metavar="N")
    t.add_argument("--dim", type=int, default=DEFAULTS["dim"], metavar="N", help="vector size")
    t.add_argument("--epoch", type=int, default=DEFAULTS["epoch"], metavar="N")
    t.add_argument("--lr", type=float, default=DEFAULTS["lr"], metavar="X", help="learning rate")
    t.add_argument(
        "--bucket", type=int, default=DEFAULTS["bucket"], metavar="N", help="hash buckets of the n-grams"
    )
    t.add_argument("--min-count", type=int, default=DEFAULTS["min_count"], metavar="N")
    t.add_argument("--threads", type=int, default=None, metavar="N", help="training threads (default: cores)")
    add_verbose_flag(p)
    return p


def check_args(args: argparse.Namespace) -> None:
    """Every user error that needs no Spark, as one line."""
    if args.max_per_class < 1:
        raise UserError("--max-per-class must be at least 1")
    if not 0 <= args.validation < 1:
        raise UserError("--validation must be a share in [0, 1)")
    for name in ("word_ngrams", "dim", "epoch", "bucket", "min_count"):
        if getattr(args, name) < (0 if name == "bucket" else 1):
            raise UserError(f"--{name.replace('_', '-')} must be positive")
    if args.threads is not None and args.threads < 1:
        raise UserError("--threads must be at least 1")
    _check_output(args.output, args.overwrite)


def _check_output(output: str, overwrite: bool) -> None:
    from ..runtime.store import is_remote, local_path

    if is_remote(output):
        return
    path = local_path(output)
    if os.path.isdir(path):
        raise UserError(f"--output {output} is a directory; give the model file's path")
    if os.path.exists(path):
        if not overwrite:
            raise UserError(f"--output {output} exists; rerun with --overwrite to replace it")
        with open(path, "rb") as fh:
            head = fh.read(8)
        from ..text.fasttext_file import MAGIC

        if len(head) < 4 or int.from_bytes(head[:4], "little") != MAGIC:
            raise UserError(f"--output {output} is not a fastText model: --overwrite replaces only a model")


def _trainer():
    try:
        import fasttext_new
    except ImportError:
        raise UserError(
            "contentx train-quality needs the quality extra (fastText's trainer): "
            "pip install 'contentx[quality]'"
        ) from None
    return fasttext_new


def read_source(spark, source: str, option: str):
    """The non-empty texts of ``source`` as a one-column (``text``) DataFrame; UserError when it is
    missing, of no known kind, or without a ``text`` column."""
    from pyspark.sql import functions as F

    from ..runtime.store import store_of
    from .tables import read_tables

    store = store_of(spark, source)
    if not store.exists():
        raise UserError(f"{option} {source}: no such file or directory")
    names = [] if store.is_file() else store.list()
    lower = source.lower().rstrip("/")
    if "documents" in names and ("_SUCCESS" in names or "_report.json" in names):
        df = spark.read.parquet(store.uri("documents"))
    elif "_contentx" in names:
        tables = read_tables(spark, [source])
        files = [f for t in tables.tables for f in t.files]
        if not files:
            raise UserError(f"{option} {source}: an extraction table without a committed Parquet file")
        df = spark.read.parquet(*files)
    elif lower.endswith(".parquet") or any(n.endswith(".parquet") for n in names):
        df = spark.read.parquet(source)
    elif lower.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")) or any(
        n.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")) for n in names
    ):
        df = spark.read.json(source)
    else:
        return spark.read.text(source).select(F.col("value").alias("text")).where(F.trim("text") != "")
    if "text" not in df.columns:
        raise UserError(f"{option} {source}: no text column (its columns: {', '.join(df.columns)})")
    return df.select(F.col("text").cast("string")).where(F.col("text").isNotNull() & (F.trim("text") != ""))


def _labelled_lines(spark, positive, negative, n: int, counts: tuple[int, int], args):
    """The balanced sample as ``(line, valid)`` rows in a random order: ``line`` is fastText's
    training line (label, space, the prepared text)."""
    from pyspark.sql import functions as F

    prepared = F.udf(lambda text: prepare(text), "string")  # (no type hints for Spark to read)

    parts = []
    for df, label, count, salt in (
        (positive, POSITIVE_LABEL, counts[0], 1),
        (negative, NEGATIVE_LABEL, counts[1], 2),
    ):
        if n < count:  # (a Bernoulli sample a little above n: capped at n once shuffled)
            df = df.sample(False, min(1.0, oversampled(n) / count), seed=args.seed * 7 + salt)
        parts.append(df.select(F.lit(label).alias("label"), "text"))
    both = parts[0].unionByName(parts[1])
    line = F.concat_ws(" ", F.col("label"), prepared(F.col("text")))
    return (
        both.select(
            line.alias("line"),
            F.col("label"),
            (F.rand(args.seed * 7 + 3) < F.lit(args.validation)).alias("valid"),
            F.rand(args.seed * 7 + 4).alias("order"),
        )
        .orderBy("order")
        .select("line", "label", "valid")
    )


def oversampled(n: int) -> float:
    """The expected size of a Bernoulli sample that holds at least ``n`` documents but for a chance
    below 1e-6 (six standard deviations above ``n``)."""
    return n + 6 * math.sqrt(n) + 10


def write_sample(rows, n: int, train_path: str, valid_path: str) -> dict[str, int]:
    """Stream ``rows`` (``(line, label, valid)``) into the training and validation files, each
    class capped at ``n`` documents; the counts written."""
    written = {"train": 0, "valid": 0, POSITIVE_LABEL: 0, NEGATIVE_LABEL: 0}
    with open(train_path, "w", encoding="utf-8") as train, open(valid_path, "w", encoding="utf-8") as valid:
        for line, label, is_valid in rows:
            if written[label] >= n:
                continue
            written[label] += 1
            (valid if is_valid else train).write(line + "\n")
            written["valid" if is_valid else "train"] += 1
    return written


def validate(model_path: str, valid_path: str) -> tuple[Quality, Quality] | None:
    """The model's :func:`metrics` on the validation file at 0.5 and at :func:`top_threshold`."""
    model = QualityModel.open(model_path)
    scores, positive = [], []
    batch: list[str] = []

    def flush() -> None:
        if batch:
            scores.append(model.score(batch, POSITIVE_LABEL))
            batch.clear()

    with open(valid_path, encoding="utf-8") as fh:
        for line in fh:
            label, _, text = line.rstrip("\n").partition(" ")
            positive.append(label == POSITIVE_LABEL)
            batch.append(text)
            if len(batch) >= SCORE_BATCH:
                flush()
    flush()
    if not positive:
        return None
    s, y = np.concatenate(scores), np.array(positive)
    return metrics(s, y, 0.5), metrics(s, y, top_threshold(s))


def _publish(spark, local_model: str, output: str) -> None:
    """The trained model to ``output``: a rename on the local filesystem, else Hadoop's copy."""
    from ..runtime.store import is_remote, local_path

    if not is_remote(output):
        target = local_path(output)
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        shutil.move(local_model, target)
        return
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(output)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(local_model), path)


def run(args: argparse.Namespace, spark) -> dict:
    """The job: sample, train, validate, write; returns what it printed as a dict."""
    trainer = _trainer()
    positive = read_source(spark, args.positive, "--positive")
    negative = read_source(spark, args.negative, "--negative")
    counts = (positive.count(), negative.count())
    for count, option, source in (
        (counts[0], "--positive", args.positive),
        (counts[1], "--negative", args.negative),
    ):
        if count == 0:
            raise UserError(f"{option} {source}: no document with a text")
    n = min(args.max_per_class, *counts)
    lines = _labelled_lines(spark, positive, negative, n, counts, args)
    with tempfile.TemporaryDirectory(prefix="contentx-train-quality-") as tmp:
        train_path, valid_path = os.path.join(tmp, "train.txt"), os.path.join(tmp, "valid.txt")
        written = write_sample(lines.toLocalIterator(), n, train_path, valid_path)
        if written["train"] == 0:
            raise UserError("no training document left after the validation share; lower --validation")
        model = trainer.train_supervised(
            input=train_path,
            wordNgrams=args.word_ngrams,
            dim=args.dim,
            epoch=args.epoch,
            lr=args.lr,
            bucket=args.bucket,
            minCount=args.min_count,
            thread=args.threads or os.cpu_count() or 1,
            seed=args.seed,
            verbose=0,
        )
        local_model = os.path.join(tmp, "model.bin")
        model.save_model(local_model)
        del model
        quality = validate(local_model, valid_path) if written["valid"] else None
        size = os.path.getsize(local_model)
        _publish(spark, local_model, args.output)
    return {"counts": counts, "per_class": n, "written": written, "quality": quality, "size": size}


def summary_lines(result: dict, args: argparse.Namespace) -> list[str]:
    w = result["written"]
    out = [
        f"sample: {w[POSITIVE_LABEL]:,} positive of {result['counts'][0]:,} and {w[NEGATIVE_LABEL]:,} "
        f"negative of {result['counts'][1]:,} documents (at most {args.max_per_class:,} per class); "
        f"{w['train']:,} to train, {w['valid']:,} to validate",
        f"model: {args.output} ({result['size'] / 1e6:,.1f} MB; labels {POSITIVE_LABEL}, {NEGATIVE_LABEL})",
    ]
    if result["quality"] is None:
        out.append("validation: none (--validation 0)")
    else:
        at_half, top = result["quality"]
        out += [
            f"validation ({POSITIVE_LABEL} as the positive class):",
            quality_line(at_half, "at 0.5"),
            quality_line(top, f"keeping the top {TOP_SHARE:.0%}"),
        ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body(args) -> int:
        from ..runtime.java import check_java
        from ..runtime.session import SHORT_JOB_JAVA_OPTIONS, spark_session

        check_args(args)
        _trainer()
        check_java()
        result = run(
            args, spark_session("contentx-train-quality", SHORT_JOB_JAVA_OPTIONS, verbose=args.verbose)
        )
        print("\n".join(summary_lines(result, args)))
        return 0

    return job_main("contentx train-quality", args_list, build_parser(), body)
