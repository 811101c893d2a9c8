"""The corpus job's driver: extraction tables in, a filtered and deduplicated corpus and a report out.

Thin: the inputs are read and checked in :mod:`.tables`, the column filters are in :mod:`.filters`,
the repeated lines across the crawl (``--line-dedup``) in :mod:`.line_dedup` and :mod:`.lines`,
the per-document pass (line removal, quality filters, MinHash bands) in :mod:`.per_document`,
the signals of ``--signals`` in :mod:`.signals` (``contentx select`` reuses :func:`finish`),
duplicate removal in :mod:`.dedup` and :mod:`.graph`, the report in :mod:`.report`; this module
wires them, only ever collects aggregates to the driver, and does all its file work through
Hadoop's FileSystem, so ``--output``, ``--input`` and ``--against`` may be any URI Spark can read
and write.

Output (``--output DIR``)::

    DIR/documents/*.parquet   the kept documents (see README "Building a corpus")
    DIR/_report.json          counts per filter, languages, lengths, hosts, cluster sizes
    DIR/report.md             the same for people, with DIR/plots/*.png
    DIR/signals/*.parquet     with --signals: every document's quality measures (:mod:`.signals`)
    DIR/texts/*.parquet       with --signals: the staged first pass, every filtered document's
                              text as if kept (``select``)
    DIR/_SUCCESS              written last: the corpus is complete (readers check it)

Commit: everything is first written under ``DIR/_staging/<run>/`` (the first pass's table, the
checkpoints of the duplicate graph, the documents); only when all of it is done are the old
corpus's files (with ``--overwrite``) removed, the documents moved into place, the report written
and ``_SUCCESS`` written last.  A run killed at any point leaves no ``_SUCCESS``; a rerun with
``--overwrite`` starts again from the inputs and gives the same corpus.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa  # the Arrow UDF's type hints name it

from ..errors import UserError, job_main
from ..runtime import background, class_archive
from ..runtime.console import StageLines
from ..runtime.java import check_java
from ..runtime.session import arrow_batch_rows, spark_session
from ..runtime.store import OutputStore, check_local_output
from . import final_touches
from .by_language import KEPT, check_totals, per_language, reason_counts, token_totals
from .config import CorpusConfig, build_config, build_parser
from .dedup import NearSettings, decide, preference, reuse_clusters
from .filters import FILTERS, with_drop_reason
from .line_dedup import LinePlan
from .line_dedup import plan as line_plan
from .line_dedup import summary as line_summary
from .minhash import differing_texts, same_bands_but_words, words_of
from .output import STAGING, checkpointer, commit, new_run_dir, prepare_output
from .per_document import RESULT_DDL, PassSettings, document_batch
from .quality.settings import FILTER_ORDER, PRESETS, describe
from .report import (
    LENGTH_BINS,
    length_bin_labels,
    preload_plots,
    start_plots,
    summary_lines,
)
from .schema import EXCERPT_CHARS, MEASURED, PASS_COUNTS, PASSED, TOKEN_COLUMN, WRITTEN, pass_columns
from .schema import document_columns as schema_document_columns
from .scores import prepare as prepare_models
from .scores import report_thresholds, score_groups, score_report
from .tables import (
    CORPUS_FORMAT,
    InputVanished,
    extraction_of,
    is_transient,
    methods_in,
    read_against,
    read_retries,
    read_tables,
)

TOP_HOSTS = 20


def document_columns(config: CorpusConfig) -> tuple[str, ...]:
    """The kept-documents table's columns (:func:`.schema.document_columns`): each model's score,
    and ``token_count`` with ``--tokenizer``."""
    return schema_document_columns(list(config.quality_models), bool(config.tokenizer))


#: Rows per Arrow batch over the signals (numbers only, about 60 columns: a few MB a batch), where
#: numpy's cost per batch, not per row, dominates (the sensitivity table, select's verdicts).
SIGNALS_BATCH_ROWS = 10_000
#: Rows per Arrow batch of the pass: the quality filters pay about 11 ms per batch (pyarrow
#: compiles their regexes on every call), 0.01 ms per document at 1,024.
ARROW_BATCH_ROWS = 1024
#: A Common Crawl crawl's name in a WARC file's path.
CRAWL_NAME = r"(CC-MAIN-[0-9]{4}-[0-9]{2})"


def tokenizer_spec(config: CorpusConfig):
    """The ``--tokenizer`` file read (:func:`..text.tokens.load_spec`), or None."""
    from ..text.tokens import load_spec

    return load_spec(config.tokenizer) if config.tokenizer else None


def token_count_udf(spec, count_eos: bool):
    """An Arrow UDF: a text column's token counts (:func:`..text.tokens.count_tokens`)."""
    from pyspark.sql.functions import arrow_udf

    from ..text.tokens import count_tokens

    @arrow_udf("bigint")
    def token_count(text: pa.Array) -> pa.Array:
        return count_tokens(spec, text, count_eos)

    return token_count


def _length_bin():
    from pyspark.sql import functions as F

    labels = length_bin_labels()
    expr = F.lit(labels[-1])
    for high, label in reversed(list(zip(LENGTH_BINS, labels, strict=False))):
        expr = F.when(F.col("text_length") < high, F.lit(label)).otherwise(expr)
    return expr


def _pass_udf(settings: PassSettings):
    from pyspark.sql.functions import arrow_udf

    @arrow_udf(RESULT_DDL)
    def per_document(
        text: pa.Array,
        url: pa.Array,
        language: pa.Array,
        score: pa.Array,
        dropped: pa.Array,
        host: pa.Array,
        line_keys: pa.Array,
    ) -> pa.Array:
        return document_batch(text, url, language, score, dropped, settings, host, line_keys)

    return per_document


def first_pass(rows, config: CorpusConfig, settings: PassSettings):
    """Every input row with its ``doc_id``, ``drop`` reason, (edited) text and band hashes: the
    columns of :func:`.schema.pass_columns`."""
    from pyspark.sql import functions as F

    line_keys = "_line_keys" if "_line_keys" in rows.columns else F.lit(None).cast("array<bigint>")
    rows = rows.withColumn(
        "r",
        _pass_udf(settings)("text", "url", "language", "language_score", "drop", "url_host_name", line_keys),
    )
    passed = F.col("r.drop").isNull() & F.col("drop").isNull()
    measured = F.col("r.signals").isNotNull()
    # with --signals, the text as if kept of every measured document: the staged pass becomes texts/
    written = passed | measured if settings.signals else passed
    rows = rows.select("*", passed.alias(PASSED), measured.alias(MEASURED), written.alias(WRITTEN))
    models = [m.name for m in settings.models]
    return rows.select(*(F.expr(sql).alias(name) for name, sql in pass_columns(models, settings.signals)))


def _write_first_pass(
    spark, inputs, config: CorpusConfig, settings: PassSettings, uri: str, lines_uri: str
) -> LinePlan | None:
    """Write the first pass (after finding the repeated lines, with ``--line-dedup``); a file that
    turns out damaged inside (its footer whole) stops the job with one line naming it, or with
    ``--skip-damaged`` is left out and the pass written again.  A file unreadable for a moment
    (missing, denied, a connection reset: :func:`.tables.is_transient`) is tried again with
    backoff (:func:`.tables.read_retries`); one replaced since it was checked is one line."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    attempts, backoff = read_retries()
    failed = 0
    while True:
        try:
            rows = with_drop_reason(inputs.frame(spark), config)
            with arrow_batch_rows(spark, ARROW_BATCH_ROWS):
                lines = line_plan(rows, settings, lines_uri) if settings.lines is not None else None
                if lines is not None:
                    rows, settings_used = lines.rows, lines.settings
                else:
                    settings_used = settings
                first_pass(rows, config, settings_used).write.mode("overwrite").parquet(uri)
            return lines
        except InputVanished as exc:
            if failed + 1 < attempts:
                time.sleep(backoff * 2**failed)  # not there for a moment: plan the pass again, later
                failed += 1
                continue
            check_unchanged(spark, inputs)
            raise UserError(f"--input file {exc} cannot be read (not found, {attempts} attempts)") from None
        except (Py4JJavaError, PySparkException) as exc:
            if inputs.named_in(exc) is not None and is_transient(exc) and failed + 1 < attempts:
                time.sleep(backoff * 2**failed)  # unreadable for a moment: the pass again, later
                failed += 1
                continue
            check_unchanged(spark, inputs)  # a file replaced under the read, rather than damaged
            damaged = inputs.named_in(exc)
            if damaged is None:
                raise
            reason = next((ln.strip() for ln in str(exc).splitlines() if "Exception" in ln), "unreadable")[
                :200
            ]
            if not config.skip_damaged:
                raise UserError(
                    f"damaged Parquet file {damaged} ({reason}); rerun with --skip-damaged to build the "
                    "corpus without it"
                ) from None
            inputs.leave_out(spark, damaged, f"damaged inside ({reason})")
            if not inputs.tables:
                raise UserError("no readable input file is left") from None


def check_unchanged(spark, inputs) -> None:
    """UserError when an input file was replaced, rewritten or removed since the job checked it:
    what the first pass read of it may be neither version (a file replaced after the first pass
    does not matter: everything later reads the staged pass)."""
    changed = inputs.changed(spark)
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        raise UserError(
            f"--input file {changed[0]}{more} changed while the job read it (replaced, rewritten or "
            "removed); no corpus was written: rerun once the table is stable"
        )


def run(config: CorpusConfig, spark, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the corpus; ``progress`` is told each finished stage (a
    :class:`~contentx_udf.runtime.console.StageLines`)."""
    from pyspark.sql import functions as F

    started = time.perf_counter()
    say = progress or (lambda stage: None)
    # each model opened and its label checked before any Spark work (one line when it fails)
    models = prepare_models(spark, config.quality_models, config.quality_labels, config.quality_min)
    store = prepare_output(spark, config)
    inputs = read_tables(spark, config.inputs, config.method, config.skip_damaged)
    if not inputs.tables:
        present = methods_in(spark, config.inputs)
        raise UserError(
            f"method {config.method!r} is not in the input table(s); methods there: "
            f"{', '.join(present) or 'none'}"
        )
    near = config.dedup == "near"
    minhash = config.minhash() if near else None
    notes: list[str] = []
    against_frames = []
    for corpus in read_against(spark, config.against):
        if near and not same_bands_but_words(corpus.minhash, minhash):
            notes.append(
                f"--against {corpus.path}: "
                + (
                    "no band hashes (built before near matching against earlier corpora)"
                    if corpus.minhash is None
                    else "band hashes of other MinHash parameters"
                )
                + ": matched on exact copies only"
            )
            against_frames.append(
                corpus.documents.select("text_hash", F.lit(None).cast("array<bigint>").alias("bands"))
            )
        else:
            if near and (theirs := words_of(corpus.minhash)) != minhash.words:
                notes.append(
                    f"--against {corpus.path}: built with near-dedup words {theirs} (this build: "
                    f"{minhash.words}): {differing_texts(theirs, minhash.words)} match its exact copies "
                    "only, all others its near copies too"
                )
            cols = ["text_hash", "bands"] if "bands" in corpus.documents.columns else ["text_hash"]
            frame = corpus.documents.select(*cols)
            if "bands" not in cols:
                frame = frame.withColumn("bands", F.lit(None).cast("array<bigint>"))
            against_frames.append(frame)
    against = None
    for frame in against_frames:
        against = frame if against is None else against.unionByName(frame)

    run_dir = new_run_dir()
    checkpoint = checkpointer(spark, store, run_dir)
    settings = PassSettings(
        minhash=minhash,
        sketch=near and config.verify_edges,
        quality=config.quality or (PRESETS["none"] if config.signals else None),
        lines=config.lines(),
        signals=config.signals,
        models=models,
        tokens=tokenizer_spec(config),
        count_eos=config.count_eos,
    )
    try:
        lines = _write_first_pass(
            spark, inputs, config, settings, store.uri(*run_dir, "pass"), store.uri(*run_dir, "lines")
        )
        check_unchanged(spark, inputs)
    except UserError:
        store.delete(STAGING)  # nothing of this run stays behind
        raise
    if lines is not None:
        say(f"repeated lines found: {lines.frequent_keys} (scope {config.line_dedup_scope})")
    say("first pass written (filters" + (", MinHash bands)" if near else ")"))
    table = spark.read.parquet(store.uri(*run_dir, "pass"))
    return finish(
        spark,
        config,
        store,
        run_dir,
        table,
        Finish(checkpoint, say, started, against, notes, minhash, lines, [asdict(d) for d in inputs.damaged]),
    )


def input_summary(table, paths: Sequence[str]) -> list[dict[str, Any]]:
    """Per input table: its WARC files and the Common Crawl crawls they belong to (the card's
    inputs), in one aggregation of the pass, and what extracted it (its batch markers' records,
    :func:`.tables.extraction_of`)."""
    from pyspark.sql import functions as F

    rows = (
        table.groupBy("_input")
        .agg(
            F.countDistinct("warc_filename").alias("warcs"),
            F.collect_set(F.nullif(F.regexp_extract("warc_filename", CRAWL_NAME, 1), F.lit(""))).alias(
                "crawls"
            ),
        )
        .collect()
    )
    found = {r["_input"]: r for r in rows}
    extraction = extraction_of(table.sparkSession, paths)
    return [
        {
            "table": path,
            "warc_files": int(found[i]["warcs"]) if i in found else 0,
            "crawls": sorted(found[i]["crawls"]) if i in found else [],
            "extraction": extraction[i],
        }
        for i, path in enumerate(paths)
    ]


def pass_groups(table, keys: Sequence[str] = ()) -> list:
    """One aggregation of the pass, collected: counts per filter and rule (and ``keys``), an
    example of each, the pass's sums (:data:`PASS_COUNTS`)."""
    from pyspark.sql import functions as F

    return (
        table.groupBy("drop", "rule", *keys)
        .agg(
            F.count("*").alias("count"),
            F.min_by(F.struct("url", "excerpt", "doc_id"), "doc_id").alias("example"),
            *(F.sum(c).alias(c) for c in PASS_COUNTS),
        )
        .collect()
    )


@dataclass
class Finish:
    """What :func:`finish` needs besides the pass table (the build's, or one ``select`` made)."""

    checkpoint: Any
    say: Any
    started: float
    against: Any = None
    notes: list[str] = field(default_factory=list)
    minhash: Any = None
    lines: LinePlan | None = None
    damaged: list[dict] = field(default_factory=list)
    #: extra report entries (``select``: where the signals came from)
    report: dict[str, Any] = field(default_factory=dict)
    #: the signals table the sensitivity table reads (``select``; a ``--signals`` build reads its own)
    signals: Any = None
    #: the build's ``texts/`` when ``table`` holds no text (``select``)
    texts: Any = None
    #: the build's dedup outcomes ``(doc_id, outcome, cluster, cluster_size)`` of the documents it
    #: passed, when every document of ``table`` that passes is among them (``select``): its
    #: clusters are reused (:func:`.dedup.reuse_clusters`)
    built: Any = None
    #: ``(doc_id, bands)`` the reused clusters' band hashes are read from when ``table`` has none
    #: (``select``: the build's ``texts/``, read for the clusters decided again only)
    bands: Any = None
    #: the rows of ``texts`` the kept documents are among, when fewer than all (``select`` keeping
    #: only documents the build's filters passed: ``texts/`` without the build's dropped rows,
    #: filtered in the scan, so fewer texts are shuffled to meet the kept rows)
    document_texts: Any = None
    #: :func:`pass_groups` of ``table`` when already collected (``select``: with ``_newly_kept``)
    groups: list | None = None
    #: a column of ``table`` the documents are written partitioned by (``select
    #: --quality-buckets``: ``bucket``, the documents under ``documents/bucket=K/``)
    partition: str | None = None


def finish(spark, config: CorpusConfig, store: OutputStore, run_dir: tuple[str, ...], table, f: Finish):
    """Everything after the pass: counts, dedup of the documents that passed, the documents and
    (``--signals``) the signals written, the report, the commit.  ``table``: the pass table
    (:func:`first_pass`' columns)."""
    preload_plots()  # matplotlib imported while the jobs below run
    # the sensitivity table, which only the report reads, counted while dedup runs
    # (:mod:`..spark.background`): from the build's own pass, or the build's signals (select)
    measured = f.signals if f.signals is not None else table.select("signals.*") if config.signals else None
    sensitive = None
    if measured is not None:
        from .signals import sensitivity

        sensitive = background.start(
            spark, lambda: sensitivity(measured, config.quality, SIGNALS_BATCH_ROWS), "contentx-sensitivity"
        )
    try:
        return _finish(spark, config, store, run_dir, table, f, sensitive)
    except BaseException:
        background.settle([sensitive])
        raise


def _finish(spark, config, store, run_dir, table, f: Finish, sensitive: Future | None):
    """:func:`finish` once the sensitivity table is counting (``sensitive``: its future)."""
    from pyspark.sql import functions as F

    checkpoint, say, started, against = f.checkpoint, f.say, f.started, f.against
    partition = (f.partition,) if f.partition else ()
    notes, minhash, lines = f.notes, f.minhash, f.lines
    groups = pass_groups(table) if f.groups is None else f.groups
    by_reason: dict[Any, tuple[int, Any]] = {}
    for g in groups:
        count, example = by_reason.get(g["drop"], (0, None))
        if example is None or g["example"]["doc_id"] < example["doc_id"]:
            example = g["example"]
        by_reason[g["drop"]] = (count + g["count"], example)
    rules = sorted(
        (g for g in groups if g["rule"] is not None), key=lambda g: (g["drop"] or "", -g["count"], g["rule"])
    )
    masked = {c: sum(int(g[c] or 0) for g in groups) for c in PASS_COUNTS}
    if f.texts is not None:  # select: the excerpts of documents the build kept are read from texts/
        missing = [ex["doc_id"] for name, (_, ex) in by_reason.items() if name and ex["excerpt"] is None]
        found = (
            {
                r["doc_id"]: r["excerpt"]
                for r in f.texts.where(F.col("doc_id").isin(missing))
                .select("doc_id", F.substring("text", 1, EXCERPT_CHARS).alias("excerpt"))
                .collect()
            }
            if missing
            else {}
        )
        by_reason = {
            name: (count, {"url": ex["url"], "excerpt": ex["excerpt"] or found.get(ex["doc_id"])})
            if ex is not None
            else (count, ex)
            for name, (count, ex) in by_reason.items()
        }
    input_rows = sum(count for count, _ in by_reason.values())
    passed_count = by_reason.get(None, (0, None))[0]
    line_step = ("line_dedup",) if config.line_dedup else ()
    dropped = {name: by_reason.get(name, (0, None))[0] for name in (*FILTERS, *line_step, *FILTER_ORDER)}
    dropped.update({name: count for name, (count, _) in by_reason.items() if name and name not in dropped})
    examples = {
        name: {"url": example["url"], "text": example["excerpt"]}
        for name, (_, example) in by_reason.items()
        if name is not None
    }
    passing = table.where(F.col("drop").isNull()).withColumn("pref", preference(config.keep))
    outcomes: dict[str, int] = {}
    if config.dedup == "none":
        kept_ids = passing.select("doc_id", F.lit(1).cast("long").alias("duplicate_count"))
        outcomes = {"kept": passed_count}
        per_document = (
            passing.withColumn("outcome", F.lit(KEPT))
            .withColumn("cluster", F.col("doc_id"))
            .withColumn("cluster_size", F.lit(1).cast("long"))
        )
    else:
        near = config.dedup == "near"
        near_settings = NearSettings(config.near_threshold, config.verify_edges) if near else None
        if f.built is not None:  # select, no document the build's filters dropped: its clusters reused
            kept_ids, outcome_rows, per_document = reuse_clusters(
                passing, f.built, near_settings, checkpoint, f.bands
            )
        else:
            kept_ids, outcome_rows, per_document = decide(passing, against, near_settings, checkpoint)
        outcomes = {r["outcome"]: int(r["documents"] or 0) for r in outcome_rows.collect()}
    for name in ("exact_duplicate", "near_duplicate", "seen_before"):
        dropped[name] = outcomes.get(name, 0)
    say(
        f"duplicates found: {dropped['exact_duplicate']} exact, {dropped['near_duplicate']} near, "
        f"{dropped['seen_before']} seen before"
    )

    documents_dir = store.uri(*run_dir, "documents")
    written = passing.join(kept_ids, "doc_id")
    if f.texts is not None:  # select: the kept documents read from the build's texts/
        from .signals import documents_from_texts

        source = f.texts if f.document_texts is None else f.document_texts
        written = documents_from_texts(written, source, document_columns(config), carry=partition)
    touched = None
    if config.touches.active:  # FineWeb-2's formatters, after dedup, on the texts written
        written, touched = final_touches.apply(written, config.touches)
        if config.tokenizer:  # the written text's tokens
            counted = token_count_udf(tokenizer_spec(config), config.count_eos)
            written = written.withColumn(TOKEN_COLUMN, counted("text"))
    signals_written = None
    if config.signals:  # written beside the documents (:mod:`..spark.background`)
        from .signals import write_signals

        signals_written = background.start(
            spark, lambda: write_signals(table, per_document, store, run_dir, config.argv), "contentx-signals"
        )
    try:
        written.select(*document_columns(config), *partition).write.partitionBy(*partition).parquet(
            documents_dir
        )
    except BaseException:
        background.settle([signals_written])
        raise
    say("documents written")
    if signals_written is not None:
        signals_written.result()
        say("signals written")
    kept_df = spark.read.parquet(documents_dir)
    # one aggregation of the kept documents: per language, length bin and duplicate count
    tokens = F.sum(TOKEN_COLUMN) if config.tokenizer else F.lit(None).cast("long")
    kept_groups = (
        kept_df.groupBy("language", _length_bin().alias("bin"), "duplicate_count")
        .agg(
            F.count("*").alias("documents"),
            F.sum("text_length").alias("characters"),
            tokens.alias("tokens"),
        )
        .collect()
    )
    per_lang: dict[Any, list[int]] = {}
    kept_tokens: dict[Any, int] = {}
    hist_counts: dict[str, int] = {}
    size_counts: dict[int, int] = {}
    for g in kept_groups:
        entry = per_lang.setdefault(g["language"], [0, 0])
        entry[0] += g["documents"]
        entry[1] += int(g["characters"] or 0)
        kept_tokens[g["language"]] = kept_tokens.get(g["language"], 0) + int(g["tokens"] or 0)
        hist_counts[g["bin"]] = hist_counts.get(g["bin"], 0) + g["documents"]
        size = int(g["duplicate_count"])
        size_counts[size] = size_counts.get(size, 0) + g["documents"]
    languages = [
        {
            "language": language,
            "documents": documents,
            "characters": characters,
            **({"tokens": kept_tokens[language]} if config.tokenizer else {}),
        }
        for language, (documents, characters) in sorted(
            per_lang.items(), key=lambda item: (-item[1][0], item[0] is not None, item[0] or "")
        )
    ]
    kept = sum(x["documents"] for x in languages)
    hosts = kept_df.groupBy("host").count().orderBy(F.desc("count"), "host").limit(TOP_HOSTS).collect()
    plotted = {
        "languages": languages,
        "text_length_histogram": {label: hist_counts.get(label, 0) for label in length_bin_labels()},
        "dropped": dropped,
        "input_rows": input_rows,
        "kept": kept,
        "top_hosts": [{"host": r["host"], "documents": r["count"]} for r in hosts],
        "cluster_sizes": dict(sorted(size_counts.items())),
    }
    plots = start_plots(plotted)  # drawn while the counts below run
    if sensitive is not None:
        sensitive = sensitive.result()
        say("sensitivity counted")
    by_language = per_language(
        reason_counts(table.where(F.col("drop").isNotNull()), per_document, bool(config.tokenizer)).collect(),
        dropped,
        {x["language"]: x["characters"] for x in languages},
    )
    quality_scores = None
    if config.quality_models:
        names = list(config.quality_models)
        thresholds = {n: report_thresholds(_cuts(config, f.report, n)) for n in names}
        quality_scores = score_report(score_groups(table, names, thresholds), names, thresholds)
    token_report = (
        token_totals(by_language, languages, tokenizer_spec(config), config.count_eos, touched is not None)
        if config.tokenizer
        else {}
    )
    say("report counted")
    line_report = None
    if lines is not None:
        line_report = {
            "scope": config.line_dedup_scope,
            "min_docs": config.line_dedup_min_docs,
            "min_chars": config.line_dedup_min_chars,
            "frequent_lines": lines.frequent_keys,
            "joined": lines.joined,
            "documents_emptied": dropped.get("line_dedup", 0),
            **line_summary(table),
        }
    elapsed = time.perf_counter() - started
    report = {
        "format": CORPUS_FORMAT,
        "output": config.output,
        "config": {k: v for k, v in asdict(config).items() if k != "quality"},
        "filters": describe(config.quality) if config.quality else {"preset": "none"},
        "minhash": asdict(minhash) if minhash else None,
        "input_rows": input_rows,
        "dropped": dropped,
        "dropped_rules": [{"filter": r["drop"], "rule": r["rule"], "documents": r["count"]} for r in rules],
        "examples": examples,
        "kept": kept,
        "kept_characters": sum(x["characters"] for x in languages),
        "pii_masked": {"emails": masked["emails_masked"], "ips": masked["ips_masked"]},
        "c4_lines_removed": masked["c4_lines_removed"],
        "final_touches": touched.summary() if touched is not None else None,
        "line_dedup": line_report,
        "sensitivity": sensitive or [],
        "quality_scores": quality_scores,
        **token_report,
        "languages": languages,
        "by_language": by_language,
        "text_length_histogram": plotted["text_length_histogram"],
        "top_hosts": plotted["top_hosts"],
        "cluster_sizes": plotted["cluster_sizes"],
        "damaged_files": f.damaged,
        "inputs": input_summary(table, config.inputs),
        "notes": notes,
        "elapsed_seconds": round(elapsed, 2),
        "records_per_second": round(input_rows / elapsed, 1) if elapsed > 0 else None,
        "jvm_class_archive": class_archive.status(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **f.report,
    }
    if input_rows != kept + sum(dropped.values()):  # the counts are the report's promise
        raise RuntimeError(f"counts do not add up: {input_rows} rows, {kept} kept, dropped {dropped}")
    check_totals(by_language, input_rows, kept, dropped)
    report = commit(store, run_dir, report, config.signals, plots)
    say("committed (report and plots written)")
    return report


def _cuts(config: CorpusConfig, extra: dict[str, Any], name: str) -> list[float]:
    """The thresholds model ``name`` is cut at (``--quality-min``; ``select``'s ``--keep-top``):
    the report shows the share kept at each."""
    cuts = [config.quality_min[name]] if name in config.quality_min else []
    top = (extra.get("quality_cuts") or {}).get("keep_top") or {}
    if top.get("model") == name and top.get("threshold") is not None:
        cuts.append(top["threshold"])
    return cuts


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body(args) -> int:
        config = build_config(args)
        config.argv = tuple(args_list)
        check_local_output(config.output, replace=config.overwrite)
        check_java()
        spark = spark_session("contentx-build-corpus", verbose=args.verbose)
        with StageLines("contentx corpus") as say:
            report = run(config, spark, progress=say)
        print("\n" + "\n".join(summary_lines(report)))
        return 0

    return job_main("contentx corpus", args_list, build_parser(), body, rerun="with --overwrite")
