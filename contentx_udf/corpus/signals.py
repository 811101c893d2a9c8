"""``--signals``: the per-document signals table and its texts, written with the corpus.

``DIR/signals/`` has one row per input document of the chosen method (:data:`IDENTITY`,
the measures of :data:`.quality.signals.SIGNALS`, :data:`OUTCOME`): numbers, a few short
strings (Parquet dictionary-encodes them) and no text.  ``DIR/texts/`` is the build's staged
first pass, committed as it is: for the same rows, what ``contentx select`` needs to write a
document the build's filters dropped: its text as the build would have written it (after line
dedup, C4's line edits and PII masking), the MinHash band hashes of the documents the build's
filters kept, and the few columns of the document table the signals do not hold.  Both are
staged with the corpus and committed with it (:mod:`.job`); ``signals/_build.json`` keeps the
build's command line.

:func:`sensitivity` counts, for each rule with a threshold, the documents it alone drops at a
few thresholds around the chosen one, in one aggregation over the signals.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..runtime.store import Store
from .quality.signals import SIGNALS
from .quality.verdicts import ratio  # noqa: F401  (the rules' ratio; :func:`failing_counts` follows it)
from .scores import PREFIX as SCORE_PREFIX

#: The build's command line, beside the signals.
BUILD_FILE = "_build.json"
#: 2: ``texts/`` is the staged first pass (every document column; band hashes of the kept only)
SIGNALS_FORMAT = 2

#: ``(column, SQL expression over the pass table, what it is)`` of the identity columns.
IDENTITY: tuple[tuple[str, str, str], ...] = (
    ("doc_id", "doc_id", "the build's row id (the dedup tie-break; joins signals and texts)"),
    ("warc_filename", "warc_filename", "the record's WARC file (with the offset: its location)"),
    ("warc_record_offset", "warc_record_offset", "the record's offset in that file"),
    ("url", "url", "the page's URL"),
    ("host", "host", "its host"),
    ("language", "language", "the extraction's language label"),
    ("language_score", "language_score", "its confidence (double: compared with the threshold as is)"),
    ("input_length", "cast(input_length as int)", "characters of the extracted text"),
    (
        "text_length",
        "cast(coalesce(kept_length, input_length) as int)",
        "characters of the text as written if kept (after line dedup, C4, PII)",
    ),
    (
        "token_count",
        "token_count",
        "tokens of the text as written if kept (--tokenizer; null without, text/tokens.py)",
    ),
    ("lines_removed", "lines_removed", "lines --line-dedup removed (repeated across the crawl)"),
    ("line_chars_removed", "line_chars_removed", "their characters"),
    ("profile", "profile", "the FineWeb-2 language profile that filtered it (fineweb2)"),
)
#: ``(column, SQL expression, what it is)`` after the measures.
OUTCOME: tuple[tuple[str, str, str], ...] = (
    ("emails_masked", "pii_emails", "e-mail addresses masked (--mask-pii), as if kept"),
    ("ips_masked", "pii_ips", "public IP addresses masked, as if kept"),
    ("text_hash", "text_hash", "hash of the text as written if kept (exact dedup)"),
    (
        "cluster",
        "cluster",
        "near-duplicate cluster: its smallest member's doc_id (null: dropped before dedup)",
    ),
    ("cluster_size", "cast(cluster_size as int)", "documents in the cluster, exact copies counted"),
    (
        "column_drop",
        "column_drop",
        "the column filter (or line_dedup) that dropped it before the quality filters",
    ),
    ("drop", "drop", "the first filter it failed under the build's settings (null: passed them all)"),
    ("rule", "rule", "that filter's rule"),
    ("outcome", "outcome", "dedup: kept, exact_duplicate, near_duplicate, seen_before (null: dropped)"),
)


def documents_from_texts(kept, texts, columns, carry: Sequence[str] = ()):
    """The documents a re-cut keeps, read from the build's ``texts/`` (its staged first pass, which
    has every column of the document table): ``kept`` (``doc_id, duplicate_count, text_length,
    bands, _newly_kept``, one row per kept document) is joined to ``texts/`` by Spark (a broadcast
    only under spark.sql.autoBroadcastJoinThreshold: the kept rows are per-document data, which
    never go to the driver whole).  ``text_length`` is the text's as kept; ``bands`` those ``select``
    computed for the documents the build's filters dropped (``_newly_kept``), else the build's;
    ``carry``: columns of ``kept`` the documents take as they are (``bucket``)."""
    from pyspark.sql import functions as F

    new = F.col("_newly_kept")
    tokens = "token_count" in columns  # --tokenizer: the re-cut's counts (the build's or counted again)
    small = kept.select(
        "doc_id",
        "duplicate_count",
        F.col("text_length").alias("_length"),
        F.when(new, F.col("bands")).alias("_bands"),
        new,
        *([F.col("token_count").alias("_tokens")] if tokens else []),
        *carry,
    )
    joined = texts.join(small, "doc_id")
    replaced = {
        "text_length": F.col("_length").alias("text_length"),
        "bands": F.when(new, F.col("_bands")).otherwise(F.col("bands")).alias("bands"),
        "token_count": F.col("_tokens").alias("token_count"),
    }
    return joined.select(*(replaced.get(c, F.col(c)) for c in columns), *carry)


def signal_columns(scores: Sequence[str] = ()) -> list[str]:
    """The SQL select list of the signals table (over the pass table joined with the outcomes);
    ``scores``: the ``quality_NAME`` columns of the build's models (with ``text_bytes``, the UTF-8
    bytes of the text as if kept: ``select``'s byte weights)."""
    measures = [f"signals.{s.name} as {s.name}" for s in SIGNALS]
    return [
        *(f"{expr} as {name}" for name, expr, _ in IDENTITY),
        *measures,
        *(f"{expr} as {name}" for name, expr, _ in OUTCOME),
        *(f"{name} as {name}" for name in scores),
        *(["cast(text_bytes as long) as text_bytes"] if scores else []),
    ]


def write_signals(table, per_document, store: Store, run_dir: tuple[str, ...], argv) -> None:
    """Write ``signals/`` under ``run_dir`` (staged) from the pass ``table`` and the dedup
    ``per_document`` outcomes (``doc_id, outcome, cluster, cluster_size``).  ``texts/`` is the
    staged pass itself, moved into place at commit (:func:`.output.commit`): no text is written twice."""
    outcomes = per_document.select("doc_id", "outcome", "cluster", "cluster_size")
    joined = table.join(outcomes, "doc_id", "left")
    scores = [c for c in table.columns if c.startswith(SCORE_PREFIX)]
    joined.selectExpr(*signal_columns(scores)).write.parquet(store.uri(*run_dir, "signals"))
    store.write_text(
        json.dumps({"format": SIGNALS_FORMAT, "argv": list(argv)}), *run_dir, "signals", BUILD_FILE
    )


def read_build(store: Store) -> dict[str, Any] | None:
    """The build's ``_build.json`` (None when the corpus has no signals)."""
    if not store.exists("signals", BUILD_FILE):
        return None
    return json.loads(store.read_text("signals", BUILD_FILE))


# -- sensitivity ------------------------------------------------------------------------------------

#: Factors of the chosen threshold shown by the sensitivity table.
FACTORS = (0.5, 0.8, 1.0, 1.25, 1.5)

#: ``(filter, rule, numerator, denominator or None, op, word rule)``: the rules with a threshold,
#: each as its filter compares it (``op``: ``>`` fails above, ``<`` below).
SENSITIVITY_RULES: tuple[tuple[str, str, str, str | None, str, bool], ...] = (
    ("gopher_repetition", "dup_para_frac", "gr_dup_paragraphs", "gr_paragraphs", ">", False),
    ("gopher_repetition", "dup_para_char_frac", "gr_dup_paragraph_chars", "gr_chars", ">", False),
    ("gopher_repetition", "dup_line_frac", "gr_dup_lines", "gr_lines", ">", False),
    ("gopher_repetition", "dup_line_char_frac", "gr_dup_line_chars", "gr_chars", ">", False),
    *(
        ("gopher_repetition", f"top_{n}_gram_frac", f"gr_top_{n}_gram_chars", "gr_chars", ">", False)
        for n in (2, 3, 4)
    ),
    *(
        ("gopher_repetition", f"dup_{n}_gram_frac", f"gr_dup_{n}_gram_chars", "gr_chars", ">", False)
        for n in range(5, 11)
    ),
    ("gopher_quality", "min_words", "gq_real_words", None, "<", True),
    ("gopher_quality", "max_words", "gq_real_words", None, ">", True),
    ("gopher_quality", "min_mean_word_length", "gq_real_word_chars", "gq_real_words", "<", True),
    ("gopher_quality", "max_mean_word_length", "gq_real_word_chars", "gq_real_words", ">", True),
    ("gopher_quality", "max_hash_word_ratio", "gq_hashes", "gq_words", ">", True),
    ("gopher_quality", "max_ellipsis_word_ratio", "gq_ellipses", "gq_words", ">", True),
    ("gopher_quality", "max_bullet_lines_ratio", "gq_bullet_lines", "gq_lines", ">", False),
    ("gopher_quality", "max_ellipsis_lines_ratio", "gq_ellipsis_lines", "gq_lines", ">", False),
    ("gopher_quality", "min_alpha_words_ratio", "gq_alpha_words", "gq_words", "<", True),
    ("gopher_quality", "min_stop_words", "gq_stop_words", None, "<", True),
    ("c4", "min_sentences", "c4_sentences", None, "<", False),
    ("fineweb", "min_line_punct_ratio", "fw_punct_lines", "fw_lines", "<", False),
    ("fineweb", "max_short_line_ratio", "fw_short_lines", "fw_lines", ">", False),
    ("fineweb", "max_dup_line_char_ratio", "fw_dup_line_chars", "fw_chars", ">", False),
    ("fineweb", "max_newline_word_ratio", "fw_newlines", "fw_words", ">", True),
)


def _ratio(numerator: str, denominator: str):
    """:func:`.quality.verdicts.ratio` in SQL: 0/0 = 0, x/0 = +inf."""
    from pyspark.sql import functions as F

    n, d = F.col(numerator).cast("double"), F.col(denominator).cast("double")
    return F.when(d > 0, n / d).when(n > 0, F.lit(float("inf"))).otherwise(F.lit(0.0))


def sensitivity_plan(settings) -> list[tuple[str, str, float, float]]:
    """``(filter, rule, factor, threshold)`` for the rules ``settings`` applies with one threshold for
    every document (a per-language threshold of ``fineweb2`` is left out)."""
    plan = []
    if settings is None:
        return plan
    for filter_name, rule, *_ in SENSITIVITY_RULES:
        section = getattr(settings, filter_name)
        chosen = getattr(section, rule)
        if (
            not section.enabled
            or chosen is None
            or not isinstance(chosen, int | float)
            or isinstance(chosen, bool)
        ):
            continue
        if settings.language_profiles:
            continue
        for factor in FACTORS:
            value = chosen * factor
            if rule in ("min_words", "max_words", "min_stop_words", "min_sentences"):
                value = round(value)
            elif "ratio" in rule or "frac" in rule:
                value = min(value, 1.0) if "max_newline" not in rule else value
            plan.append((filter_name, rule, factor, float(value)))
    return plan


def failing_counts(batch, plan, exclude_zero: bool) -> list[int]:
    """For each ``plan`` entry (:func:`sensitivity_plan`), the documents of an Arrow ``batch`` of
    measured signals that rule fails at that threshold (numpy over the batch; SQL's null rules:
    a comparison with a null measure fails nothing; ratios as :func:`.quality.verdicts.ratio`:
    0/0 = 0, x/0 = +inf)."""
    import numpy as np

    specs = {(f, r): (num, den, op, words) for f, r, num, den, op, words in SENSITIVITY_RULES}
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def column(name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in cache:
            a = batch.column(name)
            valid = a.is_valid().to_numpy(zero_copy_only=False)
            cache[name] = (a.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64), valid)
        return cache[name]

    spaced = ~batch.column("no_space").fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    counts = []
    for filter_name, rule, _, value in plan:
        num, den, op, words = specs[(filter_name, rule)]
        n, n_ok = column(num)
        if den is None:
            x, x_ok = n, n_ok
        else:
            d, d_ok = column(den)
            positive = d_ok & (d > 0)
            x = np.where(positive, n / np.where(positive, d, 1.0), np.where(n_ok & (n > 0), np.inf, 0.0))
            x_ok = np.where(positive, n_ok, True)
        fails = x_ok & ((x > value) if op == ">" else (x < value))
        if rule == "min_stop_words":
            fails &= n_ok & (n >= 0)
        if rule == "min_line_punct_ratio" and exclude_zero:
            fails &= x > 0
        if words:
            fails &= spaced
        counts.append(int(fails.sum()))
    return counts


def _failing_counts(plan, exclude_zero: bool, batch_rows: int):
    """``mapInArrow`` body of :func:`sensitivity`: one row of counts (and rows) per ``batch_rows``
    rows or so.  The session's Arrow batches (a few hundred rows, sized for HTML) are joined up to
    that many first: the counts are a fixed number of numpy passes per batch, and the rows are
    numbers only (about 40 columns: a few MB), so memory stays bounded without a session setting
    that the main thread's jobs would share."""
    import pyarrow as pa

    def counted(pending: list) -> pa.RecordBatch:
        batch = pending[0] if len(pending) == 1 else pa.concat_batches(pending)
        counts = [batch.num_rows, *failing_counts(batch, plan, exclude_zero)]
        return pa.record_batch(
            [pa.array([c], pa.int64()) for c in counts],
            names=["n", *(f"c{i}" for i in range(len(counts) - 1))],
        )

    def run(batches):
        pending, rows = [], 0
        for batch in batches:
            pending.append(batch)
            rows += batch.num_rows
            if rows >= batch_rows:
                yield counted(pending)
                pending, rows = [], 0
        if pending:
            yield counted(pending)

    return run


def sensitivity(signals, settings, batch_rows: int = 10_000) -> list[dict[str, Any]]:
    """Per rule with a threshold: the documents it alone would drop at each threshold of
    :func:`sensitivity_plan`, among the documents the quality filters measured (numpy over the
    signals' Arrow batches, joined up to ``batch_rows`` rows, one row of counts each; only the
    counts reach the driver).  ``signals``: the signals table, or the build's pass table's
    ``signals.*`` (the same measures)."""
    from pyspark.sql import functions as F

    plan = sensitivity_plan(settings)
    if not plan:
        return []
    needed = sorted({c for *_, num, den, _, _ in SENSITIVITY_RULES for c in (num, den) if c} | {"no_space"})
    measured = signals.where(F.col("gr_chars").isNotNull()).select(*needed)
    schema = ", ".join(["n long", *(f"c{i} long" for i in range(len(plan)))])
    exclude_zero = settings.fineweb.line_punct_exclude_zero
    rows = measured.mapInArrow(_failing_counts(plan, exclude_zero, batch_rows), schema)
    totals = [0] * (len(plan) + 1)
    for row in rows.collect():
        for i, value in enumerate(row):
            totals[i] += int(value)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for i, (filter_name, rule, factor, value) in enumerate(plan):
        entry = out.setdefault(
            (filter_name, rule),
            {"filter": filter_name, "rule": rule, "documents": totals[0], "points": []},
        )
        entry["points"].append({"factor": factor, "threshold": value, "dropped": totals[i + 1]})
    return list(out.values())
