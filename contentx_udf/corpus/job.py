"""The corpus job's driver: extraction tables in, a filtered and deduplicated corpus and a report out.

Thin: the inputs are read and checked in :mod:`.tables`, the column filters are in :mod:`.filters`,
the repeated lines across the crawl (``--line-dedup``) in :mod:`.line_dedup` and :mod:`.lines`,
the per-document pass (line removal, quality filters, MinHash bands) in :mod:`.per_document`,
the signals of ``--signals`` in :mod:`.signals`, duplicate removal in :mod:`.dedup` and
:mod:`.graph`, the report in :mod:`.report`.  This module is the *build* stage (the inputs read,
the per-document pass written: :func:`build`); the stages after it (tally, dedup, write,
report, commit) are in :mod:`.stages`, which ``contentx select`` composes too.  It wires them,
only ever collects aggregates to the driver, and does all its file work through Hadoop's
FileSystem, so ``--output``, ``--input`` and ``--against`` may be any URI Spark can read and
write.

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
from dataclasses import asdict
from typing import Any

import pyarrow as pa  # the Arrow UDF's type hints name it

from ..errors import UserError, job_main
from ..runtime.console import StageLines
from ..runtime.java import check_java
from ..runtime.session import SHORT_JOB_JAVA_OPTIONS, arrow_batch_rows, spark_session
from ..runtime.store import check_local_output, is_remote, local_path
from .config import CorpusConfig, build_config, build_parser
from .filters import with_drop_reason
from .line_dedup import LinePlan
from .line_dedup import plan as line_plan
from .minhash import differing_texts, same_bands_but_words, words_of
from .output import STAGING, checkpointer, new_run_dir, prepare_output
from .per_document import RESULT_DDL, PassSettings, document_batch
from .quality.settings import PRESETS
from .report import summary_lines
from .schema import MEASURED, PASSED, WRITTEN, pass_columns
from .scores import prepare as prepare_models
from .stages import About, Run, commit, dedup, report, sensitivity_started, tally, tokenizer_spec, write
from .tables import (
    InputVanished,
    is_transient,
    methods_in,
    read_against,
    read_retries,
    read_tables,
)

#: Rows per Arrow batch of the pass: the quality filters pay about 11 ms per batch (pyarrow
#: compiles their regexes on every call), 0.01 ms per document at 1,024.
ARROW_BATCH_ROWS = 1024


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
    # SQL strings, not Column objects: each Column call is a py4j round trip
    rows = rows.selectExpr("*", *_flag_columns(settings.signals))
    models = tuple(m.name for m in settings.models)
    return rows.selectExpr(*_pass_select(models, settings.signals))


def _flag_columns(signals: bool) -> tuple[str, ...]:
    """The first pass's flags as SQL: passed every filter, measured (signals), written (with
    ``--signals``, the text as if kept of every measured document: the staged pass becomes
    texts/)."""
    passed = "(r.`drop` IS NULL AND `drop` IS NULL)"
    measured = "(r.signals IS NOT NULL)"
    written = f"({passed} OR {measured})" if signals else passed
    return (f"{passed} AS {PASSED}", f"{measured} AS {MEASURED}", f"{written} AS {WRITTEN}")


def _pass_select(models: tuple[str, ...], signals: bool) -> tuple[str, ...]:
    """The pass table's select list (:func:`.schema.pass_columns`) as SQL."""
    return tuple(f"{sql} AS `{name}`" for name, sql in pass_columns(list(models), signals))


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


def earlier_corpora(spark, config: CorpusConfig) -> tuple[Any, list[str]]:
    """``--against``: the earlier corpora's ``text_hash, bands`` as one frame (None: none), and the
    notes the report keeps of those matched on exact copies only or with other near-dedup words."""
    from pyspark.sql import functions as F

    near = config.dedup == "near"
    minhash = config.minhash() if near else None
    notes: list[str] = []
    against = None
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
            frame = corpus.documents.select("text_hash", F.lit(None).cast("array<bigint>").alias("bands"))
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
        against = frame if against is None else against.unionByName(frame)
    return against, notes


def pass_settings(config: CorpusConfig, models) -> PassSettings:
    """What the per-document pass computes for ``config`` (``models``: the opened
    ``--quality-model`` files, :func:`.scores.prepare`)."""
    near = config.dedup == "near"
    return PassSettings(
        minhash=config.minhash() if near else None,
        sketch=near and config.verify_edges,
        quality=config.quality or (PRESETS["none"] if config.signals else None),
        lines=config.lines(),
        signals=config.signals,
        models=models,
        tokens=tokenizer_spec(config),
        count_eos=config.count_eos,
    )


def build(run: Run, inputs, settings: PassSettings) -> tuple[Any, LinePlan | None]:
    """The build stage: the per-document pass over ``inputs`` (the checked extraction tables,
    :func:`.tables.read_tables`) staged under the run, then read back; returns the pass table
    (:func:`.schema.pass_columns`) and the ``--line-dedup`` plan (None: off).  An input error leaves
    nothing of the run behind."""
    spark, store, run_dir, config = run.spark, run.store, run.run_dir, run.config
    try:
        lines = _write_first_pass(
            spark, inputs, config, settings, store.uri(*run_dir, "pass"), store.uri(*run_dir, "lines")
        )
        check_unchanged(spark, inputs)
    except UserError:
        store.delete(STAGING)  # nothing of this run stays behind
        raise
    if lines is not None:
        run.say(f"repeated lines found: {lines.frequent_keys} (scope {config.line_dedup_scope})")
    run.say("first pass written (filters" + (", MinHash bands)" if settings.minhash is not None else ")"))
    return spark.read.parquet(store.uri(*run_dir, "pass")), lines


def run(config: CorpusConfig, spark, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the corpus: the build stage (:func:`build`), then :mod:`.stages`' tally, dedup, write,
    report and commit; ``progress`` is told each finished stage (a
    :class:`~contentx_udf.runtime.console.StageLines`)."""
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
    against, notes = earlier_corpora(spark, config)
    notes = inputs.notes() + notes
    run_dir = new_run_dir()
    run = Run(spark, config, store, run_dir, checkpointer(spark, store, run_dir), say, started)
    table, lines = build(run, inputs, pass_settings(config, models))
    about = About(lines=lines, notes=notes, damaged=[asdict(d) for d in inputs.damaged])
    # the stages after the pass; the sensitivity table from the pass's own measures
    with sensitivity_started(run, table.select("signals.*") if config.signals else None) as sensitive:
        counted = tally(config, table)
        deduped = dedup(run, table, counted, against=against)
        written = write(run, table, deduped)
        built, plots = report(run, table, counted, deduped, written, sensitive, about)
    return commit(run, built, plots)


#: A build whose inputs (``--input`` tables and ``--against`` corpora) are local and hold at most
#: this many bytes of Parquet runs the driver JVM it launches as a short job
#: (:data:`SHORT_BUILD_JAVA_OPTIONS`): below it the JVM's fixed costs, JIT compilation first, are
#: most of its CPU.  Measured on the 2-core machine (docs/performance.md, "Small builds' driver
#: JVM"): a 36-document build with --signals 29 -> 14 CPU-s of driver JVM, the scale benchmark's
#: 100,000 documents (203 MB) 46-56 -> 41-46 s and 92-107 -> 71-82 CPU-s.
SHORT_BUILD_MAX_BYTES = 512 * 2**20
#: The quick JIT tier only (no C2), and the serial collector (a small heap's young pauses cost less
#: CPU than G1's concurrent threads), as the extraction job's driver has them.
SHORT_BUILD_JAVA_OPTIONS = f"{SHORT_JOB_JAVA_OPTIONS} -XX:+UseSerialGC"


def small_local_inputs(config: CorpusConfig, limit: int | None = None) -> bool:
    """Whether the build's inputs and earlier corpora are all local directories holding at most
    ``limit`` (:data:`SHORT_BUILD_MAX_BYTES`) bytes of Parquet files (False for another
    filesystem, or a path that is not there: the job says so in its own words)."""
    from pathlib import Path

    limit = SHORT_BUILD_MAX_BYTES if limit is None else limit
    total = 0
    for path in (*config.inputs, *config.against):
        if is_remote(path):
            return False
        root = Path(local_path(path))
        if not root.is_dir():
            return False
        for part in root.rglob("*.parquet"):
            total += part.stat().st_size if part.is_file() else 0
            if total > limit:
                return False
    return True


def driver_java_options(config: CorpusConfig) -> str:
    """The options of the driver JVM the build launches: :data:`SHORT_BUILD_JAVA_OPTIONS` for small
    local inputs (:func:`small_local_inputs`), else the JVM's own defaults."""
    return SHORT_BUILD_JAVA_OPTIONS if small_local_inputs(config) else ""


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body(args) -> int:
        config = build_config(args)
        config.argv = tuple(args_list)
        check_local_output(config.output, replace=config.overwrite)
        check_java()
        spark = spark_session("contentx-build-corpus", driver_java_options(config), verbose=args.verbose)
        with StageLines("contentx corpus") as say:
            report = run(config, spark, progress=say)
        print("\n" + "\n".join(summary_lines(report)))
        return 0

    return job_main("contentx corpus", args_list, build_parser(), body, rerun="with --overwrite")
