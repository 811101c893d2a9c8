"""``contentx select --from DIR --output DIR2``: a corpus re-cut from a ``--signals`` build without
recomputing a filter or a MinHash.

The build's command line (``DIR/signals/_build.json``) with the changes asked (``--filters``,
``--filter-set``, ``--min-language-score``, ``--languages``) gives the configuration of the full
build this re-cut stands for.  Each document's verdict is read from its signals
(:func:`.quality.signals.judge`: the filters' own comparisons over the stored counts), an SQL
``--where`` over the signals drops more, and the rows are put back together as the build's pass
table (the texts as the build would write them, their hashes and band hashes from
``DIR/texts/``, the build's staged first pass; no text is read until the kept documents are
known).  From there the build's own stages run (:mod:`.stages`): exact and near dedup over
the documents selected, so a cluster keeps its preferred *surviving* member, as a full build
does: when the re-cut keeps only documents the build's filters passed, the build's clusters that
lost no document are reused as they are and only those that lost one are decided again, each
on its own in one grouped pass (:func:`.dedup.reuse_clusters`, :mod:`.regroup`); otherwise the
band hashes of the documents the build's filters dropped (the build computed none) are computed
from their stored texts and the duplicate graph is rebuilt over the whole selection.  Then the
documents (``texts/`` joined to the kept rows), the report, the commit (staging, ``_SUCCESS``
last).

A re-cut cannot change what the signals were measured with (:data:`.quality.signals.MEASURE_KEYS`:
C4's line rules, stop words, PII masking ...), nor let in documents the build's column filters
dropped (a ``--languages`` it did not keep): it says so in one line.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import pyarrow as pa  # the Arrow UDF's type hints name it

from ..errors import UserError, job_main
from ..runtime.console import StageLines, add_verbose_flag
from ..runtime.java import check_java
from ..runtime.session import SHORT_JOB_JAVA_OPTIONS, arrow_batch_rows, spark_session
from ..runtime.store import Store, check_local_output, local_store
from .config import CorpusConfig, add_token_arguments, config_from_argv
from .cuts import BUCKET, DEFAULT_BINS, WEIGHTS, Request, needs_counts, parse_request
from .cuts import apply as apply_cuts
from .cuts import check as check_cuts
from .dedup import BUILT_IN_PASS
from .output import checkpointer, new_run_dir, prepare_output
from .per_document import minhash_columns
from .quality.settings import PRESETS
from .quality.signals import SIGNALS, changed_measure_keys, judge
from .report import summary_lines
from .schema import PASSED, recut_columns, source_columns
from .scores import PREFIX as SCORE_PREFIX
from .signals import SIGNALS_FORMAT, read_build
from .stages import (
    SIGNALS_BATCH_ROWS,
    About,
    Reuse,
    Run,
    commit,
    dedup,
    pass_groups,
    report,
    sensitivity_started,
    tally,
    token_count_udf,
    tokenizer_spec,
    write,
)
from .tables import SUCCESS, open_store

#: What the re-cut decides with, read from ``signals/`` besides the pass table's own columns: the
#: input and as-if-kept lengths, the build's drops and its dedup outcomes.
DECISION_COLUMNS = (
    "input_length",
    "text_length",
    "column_drop",
    "drop",
    "outcome",
    "cluster",
    "cluster_size",
)


def signal_columns_read() -> list[str]:
    """The columns of ``signals/`` the pass table reads besides the measures (the judging pass
    returns only these and its verdicts: the measures, about 40 columns, go to Python and not
    back): the pass table's own (:func:`.schema.source_columns`) and :data:`DECISION_COLUMNS`."""
    return [*source_columns("signals"), *DECISION_COLUMNS]


#: The ``--where`` condition's value, computed over the signals before they are judged.
WHERE_COLUMN = "_where"

#: A re-cut of at most this many documents runs its local driver JVM as a short job
#: (:data:`..runtime.session.SHORT_JOB_JAVA_OPTIONS`: no C2 compiler): below it the JVM's fixed
#: costs, JIT compilation first, are most of the time (100,000 documents: 40 % less CPU); at
#: 1,000,000 the compiled code's speed matters more (C1 alone was slower there).
SHORT_RECUT_MAX_DOCUMENTS = 300_000

#: Build flags a re-cut drops from the build's command line (it sets its own output).
_DROPPED_FLAGS = ("--overwrite", "--signals")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="contentx select",
        description="Re-cut a corpus built with --signals: other filter settings, an SQL condition "
        "over the signals, fewer languages; no filter or MinHash recomputed (docs/curation.md).",
    )
    p.add_argument(
        "--from", dest="source", required=True, metavar="DIR", help="a corpus built with --signals"
    )
    p.add_argument("--output", required=True, metavar="DIR2", help="the re-cut corpus")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing DIR2 written by contentx (a folder holding other files is refused)",
    )
    p.add_argument(
        "--filters", default=None, metavar="PRESET", help="quality filter preset (as contentx corpus)"
    )
    p.add_argument(
        "--filter-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set one threshold or switch over the build's (as contentx corpus; repeatable)",
    )
    p.add_argument("--min-language-score", default=None, metavar="X", help="as contentx corpus")
    p.add_argument("--languages", default=None, help="keep only these languages (among the build's)")
    p.add_argument(
        "--where",
        default=None,
        metavar="SQL",
        help="keep only the documents for which this SQL condition over the signals columns holds, "
        "e.g. \"gq_real_words >= 200 and host not like '%%.example'\"",
    )
    scored = p.add_argument_group("documents chosen by a model's score (a build with --quality-model)")
    scored.add_argument(
        "--quality-min",
        action="append",
        default=[],
        metavar="NAME=SCORE",
        help="drop the documents whose quality_NAME is below SCORE (as contentx corpus; repeatable)",
    )
    scored.add_argument(
        "--keep-top",
        default=None,
        metavar="NAME=FRACTION",
        help="keep the documents whose quality_NAME is at or above the (1 - FRACTION) quantile among "
        "those that pass the other filters (e.g. dclm=0.1, DCLM's top 10 %%); the threshold is "
        "recorded in _report.json (quality_cuts), and a full build with --quality-min at it gives the "
        "same corpus",
    )
    scored.add_argument(
        "--keep-top-weight",
        choices=WEIGHTS,
        default="documents",
        help="what --keep-top's fraction counts: documents, the bytes of their texts, or their tokens "
        "(token_count: the build's --tokenizer counts, or this re-cut's own --tokenizer) "
        "(default documents)",
    )
    scored.add_argument(
        "--quality-buckets",
        default=None,
        metavar="NAME,NAME,...",
        help="Nemotron-CC's ensemble: each model's score becomes its percentile bin (byte-weighted), a "
        "document's bucket is the highest of its bins; the documents are written as bucket=K/",
    )
    scored.add_argument(
        "--bins",
        type=int,
        default=DEFAULT_BINS,
        help=f"percentile bins of --quality-buckets (default {DEFAULT_BINS})",
    )
    add_verbose_flag(p)
    add_token_arguments(p)
    return p


def asked(args: argparse.Namespace) -> list[str]:
    """What the user changed over the build, one setting each as typed (``--filters gopher``,
    ``--filter-set c4.enabled=false``, ``--where ...``): the re-cut's report and summary name them."""
    pairs = [("--filters", args.filters)]
    pairs += [("--filter-set", item) for item in args.filter_set]
    pairs += [("--min-language-score", args.min_language_score), ("--languages", args.languages)]
    pairs += [("--where", args.where)]
    pairs += [("--quality-min", item) for item in getattr(args, "quality_min", None) or []]
    pairs += [("--keep-top", getattr(args, "keep_top", None))]
    if getattr(args, "keep_top", None) is not None:
        pairs += [("--keep-top-weight", args.keep_top_weight)]
    pairs += [("--quality-buckets", getattr(args, "quality_buckets", None))]
    if getattr(args, "quality_buckets", None) is not None:
        pairs += [("--bins", str(args.bins))]
    return [f"{flag} {value}" for flag, value in pairs if value is not None]


def _changes(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    if args.filters is not None:
        out += ["--filters", args.filters]
    for item in args.filter_set:
        out += ["--filter-set", item]
    if args.min_language_score is not None:
        out += ["--min-language-score", args.min_language_score]
    if args.languages is not None:
        out += ["--languages", args.languages]
    if getattr(args, "tokenizer", None) is not None:
        out += ["--tokenizer", args.tokenizer]
    if getattr(args, "count_eos", None):
        out += ["--count-eos"]
    for item in getattr(args, "quality_min", None) or []:
        out += ["--quality-min", item]
    return out


def counts_reused(built: CorpusConfig, wanted: CorpusConfig, signals) -> bool:
    """Whether the build's signals hold the re-cut's token counts: the same tokenizer file (by
    SHA-256) and ``--count-eos``; otherwise :func:`pass_table` counts again from ``texts/``."""
    if not wanted.tokenizer or not built.tokenizer or "token_count" not in signals.columns:
        return False
    same = tokenizer_spec(built).sha256 == tokenizer_spec(wanted).sha256
    return same and built.count_eos == wanted.count_eos


def configs(build_argv: Sequence[str], args: argparse.Namespace) -> tuple[CorpusConfig, CorpusConfig]:
    """``(the build's configuration, the re-cut's)``: the build's command line, then the changes."""
    built = config_from_argv(build_argv)
    argv = [a for a in build_argv if a not in _DROPPED_FLAGS] + ["--output", args.output]
    argv += ["--overwrite"] if args.overwrite else []
    wanted = config_from_argv(argv + _changes(args))
    return built, wanted


def check(built: CorpusConfig, wanted: CorpusConfig, changes: Sequence[str] = ()) -> None:
    """One :class:`UserError` line for a re-cut the signals cannot give, naming the user's own
    ``changes`` (:func:`asked`) that cause it."""
    if built.against:
        raise UserError("the build used --against; re-cut without it is not supported, rebuild instead")
    b = built.quality or PRESETS["none"]
    w = wanted.quality or PRESETS["none"]
    changed = changed_measure_keys(b, w)
    if changed:
        causes = _causes(changed, changes)
        raise UserError(
            f"{', '.join(causes)} would change what the build's signals measured or the text itself; "
            f"rebuild with {'it' if len(causes) == 1 else 'them'} instead"
        )
    if built.languages and wanted.languages and not set(wanted.languages) <= set(built.languages):
        extra = sorted(set(wanted.languages) - set(built.languages))
        raise UserError(f"--languages {','.join(extra)} were dropped by the build; rebuild to keep them")
    if built.languages and not wanted.languages:
        raise UserError("the build kept only some languages; --languages must name a subset of them")


def _causes(keys: Sequence[str], changes: Sequence[str]) -> list[str]:
    """The user's changes behind ``keys``, as typed and in the user's order, never a setting the
    user did not name: for each key the ``--filter-set`` item naming it, else the preset
    (``--filters``, which changes settings the user never named), else every change made."""
    preset = [c for c in changes if c.startswith("--filters ")]
    set_items = {c: c.split(" ", 1)[1].split("=")[0] for c in changes if c.startswith("--filter-set ")}
    causes: set[str] = set()
    for key in keys:
        causes.update([c for c, named in set_items.items() if named == key] or preset or changes)
    return [c for c in changes if c in causes] or ["the build's settings"]


def _judge_udf(settings, passed: Sequence[str]):
    """``mapInArrow`` body: the ``passed`` columns of every signals row with the re-cut's verdict
    of each measured document (``q_drop``, ``q_rule``; null for a document the quality filters did
    not measure), so that no join puts the verdicts back; the measures are read, not returned."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [s.name for s in SIGNALS]
    passed = list(passed)

    def run(batches):
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            m = {}
            for name in names:
                column = batch.column(name)
                if name == "url_match":
                    m[name] = np.asarray(column.to_pylist(), dtype=object)
                elif name == "no_space":
                    m[name] = column.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
                else:
                    m[name] = column.fill_null(0).to_numpy(zero_copy_only=False)
            scores = (
                batch.column("language_score")
                .cast(pa.float64())
                .fill_null(np.nan)
                .to_numpy(zero_copy_only=False)
            )
            keys = np.asarray(batch.column("profile").to_pylist(), dtype=object)
            drop, rule = judge(m, scores, settings, keys)
            measured = batch.column("gr_chars").is_valid()
            null = pa.nulls(n, pa.string())
            yield pa.RecordBatch.from_arrays(
                [
                    *(batch.column(c) for c in passed),
                    pc.if_else(measured, pa.array(drop, pa.string()), null),
                    pc.if_else(measured, pa.array(rule, pa.string()), null),
                ],
                names=[*passed, "q_drop", "q_rule"],
            )

    return run


@contextmanager
def _quiet_query_errors():
    """PySpark logs a query's analysis error (its whole Java stack) before raising it: switched
    off while ``--where`` is checked, whose error is then one line."""
    from pyspark.logger import PySparkLogger

    names = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
    loggers = [PySparkLogger.getLogger(n) for n in names]
    before = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, was in zip(loggers, before, strict=True):
            lg.disabled = was


class Plan(NamedTuple):
    """A re-cut planned (:func:`pass_table`): its pass table, the build's signals and texts, the
    model cuts' report (:mod:`.cuts`)."""

    table: Any
    signals: Any
    texts: Any
    cuts: dict


def pass_table(
    spark,
    source_store,
    wanted: CorpusConfig,
    where: str | None,
    reuse_counts: bool = False,
    request: Request | None = None,
    kept: list | None = None,
):
    """The build's pass table as the re-cut's settings would have made it
    (:func:`.schema.recut_columns`: the build's columns without the texts, which join the kept
    documents only), the signals, the texts, and
    the model cuts' report (:mod:`.cuts`; ``request``: ``--keep-top``, ``--quality-buckets``).
    Token counts (``wanted.tokenizer``) are the signals' when ``reuse_counts``, else counted from
    ``texts/`` (every measured document's text as if kept; none for a column filter's drops),
    joined to the judged rows before the cuts when a threshold is searched
    (:func:`.cuts.needs_counts`: ``--keep-top-weight tokens`` sums them)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    signals = spark.read.parquet(source_store.uri("signals"))
    texts = spark.read.parquet(source_store.uri("texts"))
    # only the few columns of texts/ every re-cut needs (no text, no band hashes: those join the
    # rows that need them only, :func:`with_bands`, :func:`.dedup.reuse_clusters`)
    narrow_columns = source_columns("texts")  # the rest are read for the rows that need them
    narrow = texts.selectExpr(*narrow_columns)
    settings = wanted.quality or PRESETS["none"]
    source = signals
    passed = signal_columns_read()
    request = request or Request()
    counts = None  # the re-cut's own counts, when the cuts read them (joined before, not after)
    if wanted.tokenizer and reuse_counts:
        passed.append("token_count")
    elif wanted.tokenizer:
        counted = token_count_udf(tokenizer_spec(wanted), wanted.count_eos)
        if needs_counts(request):
            counts = texts.select("doc_id", counted("text").alias("token_count"))
        else:
            narrow = texts.select(*(F.expr(c) for c in narrow_columns), counted("text").alias("token_count"))
    else:
        narrow = narrow.withColumn("token_count", F.lit(None).cast("long"))
    scores = [c for c in signals.columns if c.startswith(SCORE_PREFIX)]
    passed += [*scores, *(["text_bytes"] if scores else [])]
    if where:
        try:
            condition = F.expr(where)
            with _quiet_query_errors():
                signals.select(condition).limit(0).collect()  # analysed now: a bad condition is one line
        except Exception as exc:  # ParseException, AnalysisException
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"--where {where!r}: {first}") from None
        source = signals.withColumn(WHERE_COLUMN, F.coalesce(condition, F.lit(False)))
        passed.append(WHERE_COLUMN)
    fields = {f.name: f for f in source.schema.fields}
    measures = [s.name for s in SIGNALS if s.name not in passed]
    schema = StructType(
        [
            *(fields[c] for c in passed),
            StructField("q_drop", StringType()),
            StructField("q_rule", StringType()),
        ]
    )
    # every row, no join back; only the columns judged or passed on go to Python
    rows = source.select(*passed, *measures).mapInArrow(_judge_udf(settings, passed), schema)
    column_drop = F.col("column_drop")
    if wanted.languages:
        # the column filters' order: status, language, then the others
        outside = ~F.coalesce(F.col("language").isin(*wanted.languages), F.lit(False))
        column_drop = (
            F.when(column_drop == "status", column_drop)
            .when(outside, F.lit("language"))
            .otherwise(column_drop)
        )
    drop = F.coalesce(column_drop, F.col("q_drop"))
    rule = F.when(column_drop.isNull(), F.col("q_rule"))
    if where:
        drop = F.coalesce(drop, F.when(~F.col(WHERE_COLUMN), F.lit("where")))
        rule = F.when(drop == "where", F.lit("where")).otherwise(rule)
    rows = rows.withColumn("_drop", drop).withColumn("_rule", rule)
    if counts is not None:  # --keep-top-weight tokens (and the buckets' totals) by these counts
        rows = rows.join(counts, "doc_id", "left")
    rows, cut_report, bucketed = apply_cuts(
        rows, wanted.quality_min, request, lambda df: _kept(df, kept if kept is not None else [])
    )
    passed = F.col("_drop").isNull()
    newly_kept = passed & F.col("drop").isNotNull()  # the build's filters dropped it: no band hashes
    models = [c[len(SCORE_PREFIX) :] for c in scores]
    table = (
        rows.join(narrow, "doc_id")
        .withColumn(PASSED, passed)
        .select(
            # the text's columns null: they join the kept documents only (stages.write); the band
            # hashes too (:func:`with_bands`); a re-cut has no --line-dedup report
            *(F.expr(sql).alias(name) for name, sql in recut_columns(models)),
            newly_kept.alias("_newly_kept"),
            # the build's dedup outcome, for reusing its clusters (:data:`.dedup.BUILT_IN_PASS`)
            F.col("outcome").alias("built_outcome"),
            F.col("cluster").alias("built_cluster"),
            F.col("cluster_size").alias("built_size"),
            *([BUCKET] if bucketed else []),
        )
    )
    return Plan(table, signals, texts, cut_report)


def _minhash_udf(params, with_sketch: bool):
    """The band hashes (and sketch) of a text, as the build's pass computes them."""
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("struct<bands: array<bigint>, sketch: binary>")
    def fresh(text: pa.Array, language: pa.Array) -> pa.Array:
        bands, sketches = minhash_columns(text, params, with_sketch, language)
        return pa.StructArray.from_arrays([bands, sketches], names=["bands", "sketch"])

    return fresh


def _kept(df, kept: list):
    """``df`` persisted (memory, spilled to local disk when short) for the jobs that read it; it is
    appended to ``kept`` to be unpersisted when the re-cut ends."""
    from pyspark import StorageLevel

    kept.append(df.persist(StorageLevel.MEMORY_AND_DISK))
    return df


def with_bands(spark, table, texts, wanted: CorpusConfig, store, run_dir, kept: list, newly: bool):
    """The pass ``table`` (no band hashes) with the band hashes (and sketches) every passing document
    needs when the whole duplicate search runs: when the re-cut newly keeps documents (the build's
    filters dropped them, so the build computed none: MinHash of those texts only, written beside
    the pass) or with ``--verify-edges``; the build's others joined from ``texts/``.  Unchanged
    otherwise (the build's clusters are reused and only the rows of a cluster that lost a document
    get theirs, :func:`.dedup.reuse_clusters`).  ``newly``: whether there are newly kept
    documents."""
    from pyspark.sql import functions as F

    if wanted.dedup != "near" or not (newly or wanted.verify_edges):
        return table
    passed = F.col("drop").isNull()
    new = F.col("_newly_kept")
    joined = table.join(
        texts.select("doc_id", F.col("bands").alias("_bands"), F.col("sketch").alias("_sketch")),
        "doc_id",
        "left",
    )
    if newly:
        ids = table.where("_newly_kept").select("doc_id")
        udf = _minhash_udf(wanted.minhash(), wanted.verify_edges)
        fresh = ids.join(texts.select("doc_id", "text", "language"), "doc_id").select(
            "doc_id", udf("text", "language").alias("_m")
        )
        uri = store.uri(*run_dir, "fresh_bands")
        m = F.col("_m")
        fresh.select("doc_id", m["bands"].alias("_fb"), m["sketch"].alias("_fs")).write.parquet(uri)
        joined = (
            joined.join(spark.read.parquet(uri), "doc_id", "left")
            .withColumn("_bands", F.when(new, F.col("_fb")).otherwise(F.col("_bands")))
            .withColumn("_sketch", F.when(new, F.col("_fs")).otherwise(F.col("_sketch")))
        )
    joined = (
        joined.withColumn("bands", F.when(passed, F.col("_bands")))
        .withColumn("sketch", F.when(passed, F.col("_sketch")))
        .select(*table.columns)
    )
    return _kept(joined, kept)


def run(args: argparse.Namespace, spark, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    say = progress or (lambda stage: None)
    source = open_store(spark, args.source, "--from")
    wanted = check_source(source, args)
    if open_store(spark, args.output, "--output").uri() == source.uri():
        raise UserError(f"--output {args.output} is the corpus it selects from; write it elsewhere")
    store = prepare_output(spark, wanted)
    run_dir = new_run_dir()
    run = Run(spark, wanted, store, run_dir, checkpointer(spark, store, run_dir), say, started)
    built = config_from_argv(read_build(source)["argv"])
    reuse = counts_reused(built, wanted, spark.read.parquet(source.uri("signals")))
    request = cut_request(args)
    kept: list = []
    try:
        plan = pass_table(spark, source, wanted, args.where, reuse, request, kept)
        say("re-cut planned" + (" (thresholds found)" if request.models() else ""))
        return _recut(run, args, plan, kept)
    finally:
        for df in kept:
            df.unpersist()


def check_source(source: Store, args: argparse.Namespace) -> CorpusConfig:
    """The re-cut's configuration, once ``--from`` is checked: a finished corpus built with
    ``--signals`` of this version, and a re-cut its signals can give (:func:`check`); UserError
    else.  Before Spark starts (a local ``--from``) and again in the job."""
    if not source.exists():
        raise UserError(f"--from {args.source}: no such corpus directory")
    if not source.exists(SUCCESS):
        raise UserError(f"--from {args.source} is not a finished corpus (no {SUCCESS})")
    build = read_build(source)
    if build is None:
        raise UserError(
            f"--from {args.source} was built without --signals; rebuild with --signals to re-cut it"
        )
    if build.get("format") != SIGNALS_FORMAT:
        raise UserError(
            f"--from {args.source} has signals of another version (format {build.get('format')}); "
            "rebuild it with --signals"
        )
    built, wanted = configs(build["argv"], args)
    check(built, wanted, asked(args))
    check_cuts(cut_request(args), list(built.quality_models), counted=bool(wanted.tokenizer))
    return wanted


def cut_request(args: argparse.Namespace) -> Request:
    """``--keep-top``, ``--keep-top-weight``, ``--quality-buckets``, ``--bins`` (:mod:`.cuts`)."""
    return parse_request(
        getattr(args, "keep_top", None),
        getattr(args, "keep_top_weight", "documents"),
        getattr(args, "quality_buckets", None),
        getattr(args, "bins", DEFAULT_BINS),
    )


def _recut(run: Run, args: argparse.Namespace, plan: Plan, kept: list) -> dict[str, Any]:
    """:func:`run` from the planned pass on: judged and kept once (``kept``: what to unpersist at
    the end), then the build's stages (:mod:`.stages`): tally, dedup (the build's clusters reused
    when it can), write (the documents from the build's ``texts/``), report, commit."""
    spark, wanted, texts = run.spark, run.config, plan.texts
    # the pass is judged once and kept (memory, then local disk) for the report's, the dedup's and
    # the documents' jobs: no staged Parquet written and read back
    with arrow_batch_rows(spark, SIGNALS_BATCH_ROWS):
        table = _kept(plan.table, kept)
        # the report's counts per filter and rule, split by newly kept or not: the one job that
        # fills the kept pass also says whether the re-cut keeps documents the build dropped
        groups = pass_groups(table, ("_newly_kept",))
        newly = any(g["_newly_kept"] for g in groups)
        table = with_bands(spark, table, texts, wanted, run.store, run.run_dir, kept, newly)
    run.say(
        "verdicts read from the signals"
        + (", band hashes of the documents newly kept computed" if newly else "")
    )
    about = About(
        extra={
            "selected_from": args.source,
            "where": args.where,
            "changes": asked(args),
            "quality_cuts": plan.cuts or None,
        }
    )
    with sensitivity_started(run, plan.signals) as sensitive:
        counted = tally(wanted, table, groups, texts)
        # only documents the build passed: its clusters are reused where the selection left them
        # whole, and every kept document's texts/ row has no drop (fewer texts read)
        reuse = None if newly else Reuse(BUILT_IN_PASS, texts.select("doc_id", "bands"))
        deduped = dedup(run, table, counted, reuse=reuse)
        source = texts if newly else texts.where("drop is null")
        partition = BUCKET if BUCKET in table.columns else None
        written = write(run, table, deduped, texts=source, partition=partition)
        built, plots = report(run, table, counted, deduped, written, sensitive, about)
    return commit(run, built, plots)


def local_documents(source: str) -> int | None:
    """Rows of ``source``'s ``signals/`` when it is on the local filesystem (Parquet footers read
    with pyarrow, before any JVM starts), else None (another filesystem: not looked at)."""
    from pathlib import Path
    from urllib.parse import urlparse

    parsed = urlparse(source)
    if parsed.scheme not in ("", "file"):
        return None
    files = sorted((Path(parsed.path if parsed.scheme else source) / "signals").glob("*.parquet"))
    if not files:
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.read_metadata(f).num_rows for f in files)
    except (OSError, pa.ArrowException):
        return None  # unreadable here: the job says so in its own words


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body(args) -> int:
        check_local_output(args.output, replace=args.overwrite)
        if (local := local_store(args.source)) is not None:  # the user's mistakes said before the JVM
            check_source(local, args)
        check_java()
        documents = local_documents(args.source)
        short = documents is not None and documents <= SHORT_RECUT_MAX_DOCUMENTS
        options = SHORT_JOB_JAVA_OPTIONS if short else ""
        spark = spark_session("contentx-select", options, verbose=args.verbose)
        with StageLines("contentx select") as say:
            report = run(args, spark, progress=say)
        print("\n" + "\n".join(summary_lines(report)))
        return 0

    return job_main("contentx select", args_list, build_parser(), body, rerun="with --overwrite")
