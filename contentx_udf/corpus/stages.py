"""The corpus job's stages after its per-document pass, each with explicit inputs and outputs,
composed by ``contentx corpus`` (:mod:`.job`, the *build*) and by ``contentx select``
(:mod:`.select`, a re-cut), in this order:

1. :func:`tally`: the pass table counted per filter and rule, an example of each (:class:`Tally`);
2. :func:`dedup`: exact or near duplicates among the documents that passed, or the build's
   clusters reused by a re-cut (:class:`Deduped`);
3. :func:`write`: the kept documents (FineWeb-2's final touches on their texts) and, with
   ``--signals``, the signals beside them (:class:`Written`);
4. :func:`report`: the written documents counted, the report's entries, its checks;
5. :func:`commit`: the documents moved into place, the report, ``_SUCCESS`` last (:mod:`.output`).

The sensitivity table, which only the report reads, is counted on a driver thread from the start
(:func:`sensitivity_started`).  A stage reads the run it belongs to from one :class:`Run`; what a
re-cut does differently is in the stages' own arguments (``groups``, ``texts``, ``reuse``), what
the report says of its run in :class:`About`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa  # the Arrow UDF's type hints name it

from ..runtime import background, class_archive
from ..runtime.store import Store
from . import final_touches
from . import output as corpus_output
from .by_language import KEPT, check_totals, per_language, reason_counts, token_totals
from .config import CorpusConfig
from .dedup import NearSettings, decide, preference, reuse_clusters
from .filters import FILTERS
from .line_dedup import LinePlan
from .line_dedup import summary as line_summary
from .quality.settings import FILTER_ORDER, describe
from .report import LENGTH_BINS, length_bin_labels, preload_plots, start_plots
from .schema import EXCERPT_CHARS, PASS_COUNTS, TOKEN_COLUMN
from .schema import document_columns as schema_document_columns
from .scores import report_thresholds, score_groups, score_report
from .tables import CORPUS_FORMAT, extraction_of

TOP_HOSTS = 20
#: Rows per Arrow batch over the signals (numbers only, about 60 columns: a few MB a batch), where
#: numpy's cost per batch, not per row, dominates (the sensitivity table, select's verdicts).
SIGNALS_BATCH_ROWS = 10_000
#: A Common Crawl crawl's name in a WARC file's path.
CRAWL_NAME = r"(CC-MAIN-[0-9]{4}-[0-9]{2})"
#: The outcomes of dedup, counted with the filters' drops.
DEDUP_OUTCOMES = ("exact_duplicate", "near_duplicate", "seen_before")


@dataclass(frozen=True)
class Run:
    """What every stage of one run shares: its session and configuration, the output's store and
    the run's staging directory (:func:`.output.new_run_dir`), its checkpointer
    (:func:`.output.checkpointer`), the progress line (``say``) and its start."""

    spark: Any
    config: CorpusConfig
    store: Store
    run_dir: tuple[str, ...]
    checkpoint: Callable
    say: Callable[[str], None]
    started: float


@dataclass(frozen=True)
class About:
    """What the report says of the run besides its counts: the ``--line-dedup`` plan, the notes
    (``--against``), the damaged input files left out, and entries of the run's own (``select``:
    where the re-cut came from, its changes, its model cuts)."""

    lines: LinePlan | None = None
    notes: Sequence[str] = ()
    damaged: Sequence[dict] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def document_columns(config: CorpusConfig) -> tuple[str, ...]:
    """The kept-documents table's columns (:func:`.schema.document_columns`): each model's score,
    and ``token_count`` with ``--tokenizer``."""
    return schema_document_columns(list(config.quality_models), bool(config.tokenizer))


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


@contextmanager
def sensitivity_started(run: Run, measured) -> Iterator[Future | None]:
    """The sensitivity table of ``measured`` (the signals, or the build's pass's ``signals.*``;
    None: no table) counted on a driver thread (:mod:`..runtime.background`) while the stages run;
    yields its future (:func:`report` waits for it), settled if a stage fails.  Starts importing
    matplotlib too."""
    preload_plots()
    sensitive = None
    if measured is not None:
        from .signals import sensitivity

        quality = run.config.quality
        sensitive = background.start(
            run.spark, lambda: sensitivity(measured, quality, SIGNALS_BATCH_ROWS), "contentx-sensitivity"
        )
    try:
        yield sensitive
    except BaseException:
        background.settle([sensitive])
        raise


def pass_groups(table, keys: Sequence[str] = ()) -> list:
    """One aggregation of the pass, collected: counts per filter and rule (and ``keys``), an
    example of each, the pass's sums (:data:`.schema.PASS_COUNTS`)."""
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


# -- 1. tally ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """The pass counted: its rows, those that passed the filters, the documents per filter
    (``dropped``, in the report's order), the rules' counts, an example of each filter, the sums of
    :data:`.schema.PASS_COUNTS`."""

    input_rows: int
    passed: int
    dropped: dict[str, int]
    rules: list
    examples: dict[str, dict]
    masked: dict[str, int]


def tally(config: CorpusConfig, table, groups: list | None = None, texts=None) -> Tally:
    """Stage 1: the pass ``table``'s counts per filter and rule, an example of each.  ``groups``:
    :func:`pass_groups` of ``table`` already collected (``select``); ``texts``: the build's
    ``texts/`` when ``table`` holds no text (``select``: the excerpts of documents the build kept
    are read from it)."""
    from pyspark.sql import functions as F

    groups = pass_groups(table) if groups is None else groups
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
    if texts is not None:
        missing = [ex["doc_id"] for name, (_, ex) in by_reason.items() if name and ex["excerpt"] is None]
        found = (
            {
                r["doc_id"]: r["excerpt"]
                for r in texts.where(F.col("doc_id").isin(missing))
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
    line_step = ("line_dedup",) if config.line_dedup else ()
    dropped = {name: by_reason.get(name, (0, None))[0] for name in (*FILTERS, *line_step, *FILTER_ORDER)}
    dropped.update({name: count for name, (count, _) in by_reason.items() if name and name not in dropped})
    return Tally(
        input_rows=sum(count for count, _ in by_reason.values()),
        passed=by_reason.get(None, (0, None))[0],
        dropped=dropped,
        rules=rules,
        examples={
            name: {"url": example["url"], "text": example["excerpt"]}
            for name, (_, example) in by_reason.items()
            if name is not None
        },
        masked=masked,
    )


# -- 2. dedup ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reuse:
    """A re-cut's build clusters to reuse (:func:`.dedup.reuse_clusters`): ``built``, the build's
    outcomes (or :data:`.dedup.BUILT_IN_PASS`), and ``bands``, ``(doc_id, bands)`` the band hashes
    of the clusters decided again are read from when the pass table has none."""

    built: Any
    bands: Any = None


@dataclass(frozen=True)
class Deduped:
    """The documents that passed the filters (``passing``), those kept (``kept_ids``: ``doc_id``,
    ``duplicate_count``), every passing document's outcome (``per_document``: ``doc_id, outcome,
    cluster, cluster_size``) and the documents per outcome (``outcomes``)."""

    passing: Any
    kept_ids: Any
    per_document: Any
    outcomes: dict[str, int]

    def dropped(self, tally: Tally) -> dict[str, int]:
        """The tally's documents per filter, with dedup's outcomes."""
        return {**tally.dropped, **{name: self.outcomes.get(name, 0) for name in DEDUP_OUTCOMES}}


def dedup(run: Run, table, tally: Tally, against=None, reuse: Reuse | None = None) -> Deduped:
    """Stage 2: exact or near duplicates among the documents of ``table`` that passed (and of
    ``against``, the earlier corpora's ``text_hash, bands``), or the build's clusters reused
    (``reuse``: a re-cut keeping only documents its build passed)."""
    from pyspark.sql import functions as F

    config = run.config
    passing = table.where(F.col("drop").isNull()).withColumn("pref", preference(config.keep))
    if config.dedup == "none":
        kept_ids = passing.select("doc_id", F.lit(1).cast("long").alias("duplicate_count"))
        outcomes = {"kept": tally.passed}
        per_document = (
            passing.withColumn("outcome", F.lit(KEPT))
            .withColumn("cluster", F.col("doc_id"))
            .withColumn("cluster_size", F.lit(1).cast("long"))
        )
    else:
        near = NearSettings(config.near_threshold, config.verify_edges) if config.dedup == "near" else None
        if reuse is not None:
            found = reuse_clusters(passing, reuse.built, near, run.checkpoint, reuse.bands)
        else:
            found = decide(passing, against, near, run.checkpoint)
        kept_ids, outcome_rows, per_document = found
        outcomes = {r["outcome"]: int(r["documents"] or 0) for r in outcome_rows.collect()}
    deduped = Deduped(passing, kept_ids, per_document, outcomes)
    dropped = deduped.dropped(tally)
    run.say(
        f"duplicates found: {dropped['exact_duplicate']} exact, {dropped['near_duplicate']} near, "
        f"{dropped['seen_before']} seen before"
    )
    return deduped


# -- 3. write ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """What :func:`write` changed on the way: FineWeb-2's final touches' counts (None: off)."""

    touched: Any = None


def write(run: Run, table, deduped: Deduped, texts=None, partition: str | None = None) -> Written:
    """Stage 3: the kept documents into the run's ``documents/`` (``texts``: the rows of the build's
    ``texts/`` they are read from when ``table`` holds no text, ``select``; ``partition``: a column
    of ``table`` they are written partitioned by, ``select --quality-buckets``), FineWeb-2's final
    touches on their texts, and with ``--signals`` the signals beside them (a driver thread)."""
    config, store, run_dir, say = run.config, run.store, run.run_dir, run.say
    carry = (partition,) if partition else ()
    written = deduped.passing.join(deduped.kept_ids, "doc_id")
    if texts is not None:
        from .signals import documents_from_texts

        written = documents_from_texts(written, texts, document_columns(config), carry=carry)
    touched = None
    if config.touches.active:  # FineWeb-2's formatters, after dedup, on the texts written
        written, touched = final_touches.apply(written, config.touches)
        if config.tokenizer:  # the written text's tokens
            counted = token_count_udf(tokenizer_spec(config), config.count_eos)
            written = written.withColumn(TOKEN_COLUMN, counted("text"))
    signals_written = None
    if config.signals:  # written beside the documents (:mod:`..runtime.background`)
        from .signals import write_signals

        per_document = deduped.per_document
        signals_written = background.start(
            run.spark,
            lambda: write_signals(table, per_document, store, run_dir, config.argv),
            "contentx-signals",
        )
    try:
        written.select(*document_columns(config), *carry).write.partitionBy(*carry).parquet(
            store.uri(*run_dir, "documents")
        )
    except BaseException:
        background.settle([signals_written])
        raise
    say("documents written")
    if signals_written is not None:
        signals_written.result()
        say("signals written")
    return Written(touched)


# -- 4. report --------------------------------------------------------------------------------------


def _length_bin() -> str:
    """The ``text_length`` bin of :data:`.report.LENGTH_BINS` as SQL (one expression: a Column
    chain costs a py4j round trip a call); the last bin for a null length."""
    labels = length_bin_labels()
    cases = " ".join(
        f"WHEN text_length < {high} THEN '{label}'" for high, label in zip(LENGTH_BINS, labels, strict=False)
    )
    return f"CASE {cases} ELSE '{labels[-1]}' END"


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


def report(
    run: Run,
    table,
    tally: Tally,
    deduped: Deduped,
    written: Written,
    sensitive: Future | None,
    about: About,
) -> tuple[dict[str, Any], Future]:
    """Stage 4: the written documents counted (languages, lengths, hosts, cluster sizes), the plots
    started, the counts by language, the models' scores, the tokens, the report's entries; checks
    that the counts add up.  Returns the report and the plots' future (:func:`commit` writes
    both)."""
    from pyspark.sql import functions as F

    config, say = run.config, run.say
    dropped, input_rows, touched = deduped.dropped(tally), tally.input_rows, written.touched
    kept_df = run.spark.read.parquet(run.store.uri(*run.run_dir, "documents"))
    # one aggregation of the kept documents: per language, length bin and duplicate count
    tokens = F.sum(TOKEN_COLUMN) if config.tokenizer else F.lit(None).cast("long")
    kept_groups = (
        kept_df.groupBy("language", F.expr(f"{_length_bin()} AS bin"), "duplicate_count")
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
        reason_counts(
            table.where(F.col("drop").isNotNull()), deduped.per_document, bool(config.tokenizer)
        ).collect(),
        dropped,
        {x["language"]: x["characters"] for x in languages},
    )
    quality_scores = None
    if config.quality_models:
        names = list(config.quality_models)
        thresholds = {n: report_thresholds(_cuts(config, about.extra, n)) for n in names}
        quality_scores = score_report(score_groups(table, names, thresholds), names, thresholds)
    token_report = (
        token_totals(by_language, languages, tokenizer_spec(config), config.count_eos, touched is not None)
        if config.tokenizer
        else {}
    )
    say("report counted")
    line_report = None
    if about.lines is not None:
        line_report = {
            "scope": config.line_dedup_scope,
            "min_docs": config.line_dedup_min_docs,
            "min_chars": config.line_dedup_min_chars,
            "frequent_lines": about.lines.frequent_keys,
            "joined": about.lines.joined,
            "documents_emptied": dropped.get("line_dedup", 0),
            **line_summary(table),
        }
    minhash = config.minhash() if config.dedup == "near" else None
    elapsed = time.perf_counter() - run.started
    built = {
        "format": CORPUS_FORMAT,
        "output": config.output,
        "config": {k: v for k, v in asdict(config).items() if k != "quality"},
        "filters": describe(config.quality) if config.quality else {"preset": "none"},
        "minhash": asdict(minhash) if minhash else None,
        "input_rows": input_rows,
        "dropped": dropped,
        "dropped_rules": [
            {"filter": r["drop"], "rule": r["rule"], "documents": r["count"]} for r in tally.rules
        ],
        "examples": tally.examples,
        "kept": kept,
        "kept_characters": sum(x["characters"] for x in languages),
        "pii_masked": {"emails": tally.masked["emails_masked"], "ips": tally.masked["ips_masked"]},
        "c4_lines_removed": tally.masked["c4_lines_removed"],
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
        "damaged_files": list(about.damaged),
        "inputs": input_summary(table, config.inputs),
        "notes": list(about.notes),
        "elapsed_seconds": round(elapsed, 2),
        "records_per_second": round(input_rows / elapsed, 1) if elapsed > 0 else None,
        "jvm_class_archive": class_archive.status(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **about.extra,
    }
    if input_rows != kept + sum(dropped.values()):  # the counts are the report's promise
        raise RuntimeError(f"counts do not add up: {input_rows} rows, {kept} kept, dropped {dropped}")
    check_totals(by_language, input_rows, kept, dropped)
    return built, plots


def _cuts(config: CorpusConfig, extra: Mapping[str, Any], name: str) -> list[float]:
    """The thresholds model ``name`` is cut at (``--quality-min``; ``select``'s ``--keep-top``):
    the report shows the share kept at each."""
    cuts = [config.quality_min[name]] if name in config.quality_min else []
    top = (extra.get("quality_cuts") or {}).get("keep_top") or {}
    if top.get("model") == name and top.get("threshold") is not None:
        cuts.append(top["threshold"])
    return cuts


# -- 5. commit --------------------------------------------------------------------------------------


def commit(run: Run, built: dict[str, Any], plots: Future | None) -> dict[str, Any]:
    """Stage 5: the run's output committed (:func:`.output.commit`: documents and signals moved into
    place, the report and the plots written, ``_SUCCESS`` last); returns the report as written."""
    built = corpus_output.commit(run.store, run.run_dir, built, run.config.signals, plots)
    run.say("committed (report and plots written)")
    return built
