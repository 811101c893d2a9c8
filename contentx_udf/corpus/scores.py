"""Documents scored by a model: ``--quality-model NAME=PATH`` (fastText supervised classifiers) in
the corpus job's per-document pass, ``quality_NAME`` in the documents and the signals,
``--quality-min NAME=SCORE`` (DCLM's fixed threshold) and the report's score histograms.

* The options (:func:`parse_assignments`, :func:`model_options`): the flags, else the config
  file's ``[quality_models]`` table (``NAME = "PATH"`` or ``NAME = {path = ..., label = ...,
  min = ...}``).
* The driver (:func:`prepare`): each model opened once before any Spark work, its labels checked
  (a bad or truncated file, or a label it lacks, is one line); a model on the local filesystem is
  read where it is (as the job's inputs are), one on another Hadoop filesystem reaches the workers
  with ``SparkContext.addFile``.
* The workers (:func:`score_texts`): each model opened once per Python process (memory-mapped:
  the workers of a node share its pages) and applied to a batch's texts at once; the scorer
  prepares a text as DCLM does, ``" ".join(text.strip().splitlines())``.
* A score is a float32 (fastText's own probability).  Every comparison with a threshold is made
  in float32 too (:func:`at_least`, and ``cast(... as float)`` in SQL), and a threshold is written
  as the shortest decimal that reads back as the same float32 (:func:`threshold_text`), so a
  threshold recorded by ``select`` and given back to ``--quality-min`` cuts at the same document.
* The report (:func:`score_report`): per model and language, a histogram of the scores of the
  documents that passed every other filter (before dedup) and the share of them (documents and
  characters) kept at a few thresholds.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ..errors import UserError

#: The label whose probability is the score unless ``--quality-label`` names another (DCLM's).
DEFAULT_LABEL = "__label__hq"
#: A model's name: the column is ``quality_NAME``.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
#: Prefix of the score columns and of the drop reason of ``--quality-min``.
PREFIX = "quality_"
#: Bins of the report's score histogram (equal widths over [0, 1]).
HISTOGRAM_BINS = 20
#: Thresholds of the report's kept share (with the run's own ``--quality-min`` added).
REPORT_THRESHOLDS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9)


def column(name: str) -> str:
    """The score column (and ``--quality-min``'s drop reason) of model ``name``."""
    return PREFIX + name


@dataclass(frozen=True)
class ScoredModel:
    """One model as the workers use it: ``path`` is a local path, or (``shipped``) the file's name
    among the job's files (``SparkFiles.get``); ``minimum``: ``--quality-min`` (None: no cut)."""

    name: str
    path: str
    label: str
    minimum: float | None = None
    shipped: bool = False

    def local_path(self) -> str:
        if not self.shipped:
            return self.path
        from pyspark import SparkFiles

        return SparkFiles.get(self.path)


# -- options ------------------------------------------------------------------------------------


def parse_assignments(items: Iterable[str] | None, flag: str) -> dict[str, str]:
    """``NAME=VALUE`` items of a repeatable flag (a later one replaces an earlier one)."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise UserError(f"{flag} expects NAME=VALUE, got {item!r}")
        check_name(name, flag)
        out[name] = value.strip()
    return out


def check_name(name: str, flag: str) -> None:
    if not NAME_PATTERN.fullmatch(name):
        raise UserError(
            f"{flag}: model name {name!r} must be lowercase letters, digits and _ (starting with a "
            "letter): it names the column quality_NAME"
        )


def parse_score(value: Any, what: str) -> float:
    """A score threshold in [0, 1]."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{what} must be a number between 0 and 1, got {value!r}") from None
    if not 0 <= score <= 1:
        raise UserError(f"{what} must be between 0 and 1, got {value!r}")
    return score


def model_options(args: argparse.Namespace, table: dict[str, Any], source: str) -> dict[str, Any]:
    """``quality_models``, ``quality_labels``, ``quality_min`` of the corpus configuration: the
    flags over the config file's ``[quality_models]`` table (``source`` names the file)."""
    models: dict[str, str] = {}
    labels: dict[str, str] = {}
    minima: dict[str, float] = {}
    if not isinstance(table, dict):
        raise UserError(f"{source}: [quality_models] must be a table")
    for name, entry in table.items():
        check_name(name, f"{source}: [quality_models]")
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise UserError(f"{source}: [quality_models] {name} must be a path or a table with a path")
        unknown = sorted(set(entry) - {"path", "label", "min"})
        if unknown:
            raise UserError(f"{source}: unknown key(s) in [quality_models] {name}: {', '.join(unknown)}")
        models[name] = entry["path"]
        if "label" in entry:
            labels[name] = str(entry["label"])
        if "min" in entry:
            minima[name] = parse_score(entry["min"], f"{source}: [quality_models] {name}.min")
    models.update(parse_assignments(getattr(args, "quality_model", None), "--quality-model"))
    labels.update(parse_assignments(getattr(args, "quality_label", None), "--quality-label"))
    for name, value in parse_assignments(getattr(args, "quality_min", None), "--quality-min").items():
        minima[name] = parse_score(value, f"--quality-min {name}")
    for flag, named in (("--quality-label", labels), ("--quality-min", minima)):
        unknown = sorted(set(named) - set(models))
        if unknown:
            raise UserError(
                f"{flag} {unknown[0]}: no such model (models: {', '.join(models) or 'none'}; "
                "add --quality-model NAME=PATH)"
            )
    return {"quality_models": models, "quality_labels": labels, "quality_min": minima}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The corpus job's model flags."""
    group = parser.add_argument_group("documents scored by a model (docs/corpus.md)")
    group.add_argument(
        "--quality-model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="score every document with this fastText supervised model (.bin or .ftz, any Hadoop "
        "filesystem) into the column quality_NAME (repeatable; also [quality_models] in the config)",
    )
    group.add_argument(
        "--quality-label",
        action="append",
        default=[],
        metavar="NAME=LABEL",
        help=f"the label whose probability is model NAME's score (default {DEFAULT_LABEL})",
    )
    group.add_argument(
        "--quality-min",
        action="append",
        default=[],
        metavar="NAME=SCORE",
        help="drop the documents whose quality_NAME is below SCORE (DCLM's fixed threshold, e.g. "
        "0.018112), counted as quality_NAME in the report",
    )


# -- thresholds in float32 ----------------------------------------------------------------------


def as_float32(value: float) -> np.float32:
    return np.float32(value)


def threshold_text(value: float) -> float:
    """The shortest decimal that reads back as ``value``'s float32: what a report records."""
    return float(np.format_float_positional(np.float32(value), unique=True, trim="-"))


def at_least(scores: np.ndarray, threshold: float) -> np.ndarray:
    """``scores >= threshold`` in float32 (as the SQL side compares them)."""
    return np.asarray(scores, dtype=np.float32) >= np.float32(threshold)


def below_sql(name: str, threshold: float):
    """The Spark condition ``quality_NAME < threshold`` (float32 comparison; null: not below)."""
    from pyspark.sql import functions as F

    score = F.col(column(name))
    return F.coalesce(score < F.lit(float(threshold)).cast("float"), F.lit(False))


# -- the driver ---------------------------------------------------------------------------------


def _is_local(uri: str) -> bool:
    return urlparse(uri).scheme in ("", "file")


def _local_path(uri: str) -> str:
    parsed = urlparse(uri)
    return parsed.path if parsed.scheme == "file" else uri


def prepare(spark, models: dict[str, str], labels: dict[str, str], minima: dict[str, float]):
    """The :class:`ScoredModel` of every ``--quality-model``, checked on the driver before any
    Spark work: a missing, unreadable or damaged file, or a label the model lacks, is one
    :class:`UserError` line (the model's labels listed)."""
    out = []
    shipped: dict[str, str] = {}
    for name, uri in models.items():
        label = labels.get(name, DEFAULT_LABEL)
        what = f"--quality-model {name}={uri}"
        if _is_local(uri):
            path = os.path.abspath(_local_path(uri))
            if not os.path.isfile(path):
                raise UserError(f"{what}: no such file")
            local, ref, ship = path, path, False
        else:
            base = uri.rstrip("/").rsplit("/", 1)[-1]
            if shipped.get(base, uri) != uri:
                raise UserError(f"{what}: another model has the file name {base}; rename one of them")
            shipped[base] = uri
            try:
                spark.sparkContext.addFile(uri)
                from pyspark import SparkFiles

                local = SparkFiles.get(base)
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                raise UserError(f"{what}: cannot be read ({first})") from None
            ref, ship = base, True
        try:
            model = open_model(local)
        except Exception as exc:
            raise UserError(f"{what}: not a readable fastText model ({_reason(exc)})") from None
        if label not in model.labels and f"__label__{label}" not in model.labels:
            raise UserError(
                f"--quality-label {name}={label}: the model has no such label; its labels: "
                f"{', '.join(model.labels)}"
            )
        out.append(ScoredModel(name, ref, label, minima.get(name), ship))
    return tuple(out)


def _reason(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    return text or type(exc).__name__


# -- the workers --------------------------------------------------------------------------------


def open_model(path: str):
    """The loaded model at local ``path``, opened once per process and memory-mapped
    (:class:`~contentx_udf.text.classifier.QualityModel`): ``.labels``, ``.score(texts, label)``."""
    from ..text.classifier import QualityModel

    return QualityModel.open(path)


def score_texts(texts, models: Sequence[ScoredModel]) -> list[np.ndarray]:
    """Each model's float32 scores of ``texts`` (an Arrow string array or a list; fastText's
    probabilities are float32, so the cast is exact)."""
    values = texts.to_pylist() if hasattr(texts, "to_pylist") else list(texts)
    return [open_model(m.local_path()).score(values, m.label).astype(np.float32) for m in models]


def first_below(scores: Sequence[np.ndarray], models: Sequence[ScoredModel]) -> np.ndarray:
    """Per document, the index of the first model whose ``--quality-min`` it fails, else -1."""
    n = len(scores[0]) if scores else 0
    out = np.full(n, -1, dtype=np.int64)
    for i in reversed(range(len(models))):
        if models[i].minimum is not None:
            out[~at_least(scores[i], models[i].minimum)] = i
    return out


# -- the report ---------------------------------------------------------------------------------


def report_thresholds(extra: Iterable[float] = ()) -> list[float]:
    return sorted({*REPORT_THRESHOLDS, *(threshold_text(x) for x in extra)})


def score_groups(table, names: Sequence[str], thresholds: dict[str, list[float]]) -> list:
    """One aggregation over the pass ``table``: per model, language and histogram bin, the
    documents scored that passed every other filter (``drop`` null, or a ``quality_*`` cut), their
    characters, and how many of them (and their characters) reach each threshold."""
    from pyspark.sql import functions as F

    others = F.col("drop").isNull() | F.col("drop").startswith(PREFIX)
    width = max(len(t) for t in thresholds.values())
    parts = []
    for name in names:
        score = F.col(column(name))
        ts = thresholds[name] + [2.0] * (width - len(thresholds[name]))  # 2: reached by none
        parts.append(
            F.struct(
                F.lit(name).alias("model"),
                score.alias("score"),
                F.least(F.floor(score * HISTOGRAM_BINS), F.lit(HISTOGRAM_BINS - 1)).cast("int").alias("bin"),
                F.array(*(score >= F.lit(t).cast("float") for t in ts)).alias("reached"),
            )
        )
    rows = table.where(others).select("language", "text_length", F.explode(F.array(*parts)).alias("m"))
    rows = rows.where(F.col("m.score").isNotNull())
    length = F.coalesce(F.col("text_length"), F.lit(0)).cast("long")
    return (
        rows.groupBy(F.col("m.model").alias("model"), "language", F.col("m.bin").alias("bin"))
        .agg(
            F.count("*").alias("documents"),
            F.sum(length).alias("characters"),
            *(F.sum(F.col("m.reached")[j].cast("long")).alias(f"d{j}") for j in range(width)),
            *(F.sum(F.when(F.col("m.reached")[j], length).otherwise(0)).alias(f"c{j}") for j in range(width)),
        )
        .collect()
    )


def _kept_share(entry: dict[str, Any], language: Any, thresholds: Sequence[float]) -> dict[str, Any]:
    """A report row: ``entry``'s counts with the shares of documents and characters at or above
    each threshold (its ``_d``/``_c`` sums)."""
    d, c = entry.pop("_d"), entry.pop("_c")
    entry["kept_share"] = [
        {
            "threshold": t,
            "documents": round(d[j] / entry["documents"], 6) if entry["documents"] else None,
            "characters": round(c[j] / entry["characters"], 6) if entry["characters"] else None,
        }
        for j, t in enumerate(thresholds)
    ]
    return {"language": language, **entry}


def score_report(groups: Sequence[Any], names: Sequence[str], thresholds: dict[str, list[float]]) -> dict:
    """The report's ``quality_scores`` entry from :func:`score_groups`' rows: per model, its
    histogram and kept shares over all languages and per language (most documents first)."""
    out: dict[str, Any] = {}
    for name in names:
        ts = thresholds[name]
        per: dict[Any, dict[str, Any]] = {}
        for g in (g for g in groups if g["model"] == name):
            for key in (g["language"], "all"):
                entry = per.setdefault(
                    key,
                    {
                        "documents": 0,
                        "characters": 0,
                        "histogram": [0] * HISTOGRAM_BINS,
                        "_d": [0] * len(ts),
                        "_c": [0] * len(ts),
                    },
                )
                entry["documents"] += g["documents"]
                entry["characters"] += int(g["characters"] or 0)
                entry["histogram"][g["bin"]] += g["documents"]
                for j in range(len(ts)):
                    entry["_d"][j] += int(g[f"d{j}"] or 0)
                    entry["_c"][j] += int(g[f"c{j}"] or 0)
        everything = per.pop("all", None)
        languages = sorted(per.items(), key=lambda kv: (-kv[1]["documents"], kv[0] is None, kv[0] or ""))
        out[name] = {
            "bins": [round(k / HISTOGRAM_BINS, 4) for k in range(HISTOGRAM_BINS + 1)],
            "all": _kept_share(everything, None, ts) if everything else None,
            "languages": [_kept_share(entry, language, ts) for language, entry in languages],
        }
    return out


def markdown(scores: dict[str, Any] | None, top: int = 10) -> list[str]:
    """The report's section on the scores (``_report.json``'s ``quality_scores``)."""
    if not scores:
        return []
    out = [
        "## Quality scores",
        "",
        "Scores of the documents that passed every other filter (before dedup): how many reach each "
        "threshold (share of documents / of characters), and their histogram.",
        "",
    ]
    for name, entry in scores.items():
        everything = entry["all"]
        if not everything:
            out += [f"### quality_{name}", "", "No document scored.", ""]
            continue
        ts = [p["threshold"] for p in everything["kept_share"]]
        out += [
            f"### quality_{name}",
            "",
            "| language | documents | " + " | ".join(f">= {t:g}" for t in ts) + " |",
            "|---|---:|" + "---:|" * len(ts),
        ]
        for row in [everything, *entry["languages"][:top]]:
            cells = [
                f"{p['documents']:.1%} / {p['characters']:.1%}" if p["documents"] is not None else "-"
                for p in row["kept_share"]
            ]
            label = "**all**" if row is everything else str(row["language"])
            out.append(f"| {label} | {row['documents']} | " + " | ".join(cells) + " |")
        edges = entry["bins"]
        out += ["", "| score | documents (all languages) |", "|---|---:|"]
        out += [
            f"| {edges[k]:.2f}-{edges[k + 1]:.2f} | {count} |"
            for k, count in enumerate(everything["histogram"])
        ]
        out += [""]
    return out


def cuts_markdown(cuts: dict[str, Any] | None) -> list[str]:
    """The report's section on ``select``'s cuts by score (``_report.json``'s ``quality_cuts``)."""
    if not cuts:
        return []
    out = ["## Cuts by model score", ""]
    for name, value in (cuts.get("quality_min") or {}).items():
        out.append(f"* `--quality-min {name}={value}`")
    if top := cuts.get("keep_top"):
        share = f"{top['kept_share']:.2%}" if top["kept_share"] is not None else "-"
        out.append(
            f"* `--keep-top {top['model']}={top['fraction']}` by {top['weight']}: threshold "
            f"{top['threshold']}, {share} of the {top['weight']} kept before dedup "
            f"({top['kept_weight']:g} of {top['total_weight']:g}); a full build with "
            f"`{top['same_as']}` keeps the same documents"
        )
    if buckets := cuts.get("buckets"):
        out.append(
            f"* `--quality-buckets {','.join(buckets['models'])}`, {buckets['bins']} byte-weighted bins; "
            "documents written as `documents/bucket=K/`"
        )
        per = buckets["per_bucket"]
        tokens = per.get("tokens")  # with --tokenizer (the build's counts)
        out += ["", "| bucket | documents | bytes |" + (" tokens |" if tokens else ""), "|---:|---:|---:|"]
        out[-1] += "---:|" if tokens else ""
        out += [
            f"| {k} | {d} | {b} |" + (f" {tokens[k]} |" if tokens else "")
            for k, (d, b) in enumerate(zip(per["documents"], per["bytes"], strict=True))
        ]
    return out + [""]
