"""``--signals``: the per-document signals table and its texts, written with the corpus.

``DIR/signals/`` has one row per input document of the chosen method (:data:`IDENTITY`,
the measures of :data:`.quality.signals.SIGNALS`, :data:`OUTCOME`): numbers, a few short
strings (Parquet dictionary-encodes them) and no text.  ``DIR/texts/`` has, for the same rows,
what ``contentx select`` needs to write a document the build's filters dropped: its text as the
build would have written it (after line dedup, C4's line edits and PII masking), its MinHash
band hashes and the few columns of the document table the signals do not hold.  Both are staged
with the corpus and committed with it (:mod:`.job`); ``signals/_build.json`` keeps the build's
command line.

:func:`sensitivity` counts, for each rule with a threshold, the documents it alone drops at a
few thresholds around the chosen one, in one aggregation over the signals.
"""

from __future__ import annotations

import json
from typing import Any

from ..spark.output import OutputStore
from .quality.signals import SIGNALS
from .quality.verdicts import ratio  # noqa: F401  (the rules' ratio; :func:`_ratio` is its SQL twin)

#: The build's command line, beside the signals.
BUILD_FILE = "_build.json"
SIGNALS_FORMAT = 1

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
        "cast(coalesce(length(kept_text), input_length) as int)",
        "characters of the text as written if kept (after line dedup, C4, PII)",
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
#: Columns of ``DIR/texts/`` (SQL expressions over the pass table).
TEXT_COLUMNS = (
    "doc_id",
    "_input",
    "fetch_time",
    "title",
    "kept_text as text",
    "bands",
    "sketch",
    "warc_record_length",
    "fallback",
    "line_example",
    "excerpt",
    "cast(c4_removed as int) as c4_removed",
)


def signal_columns() -> list[str]:
    """The SQL select list of the signals table (over the pass table joined with the outcomes)."""
    measures = [f"signals.{s.name} as {s.name}" for s in SIGNALS]
    return [
        *(f"{expr} as {name}" for name, expr, _ in IDENTITY),
        *measures,
        *(f"{expr} as {name}" for name, expr, _ in OUTCOME),
    ]


def write_signals(table, per_document, store: OutputStore, run_dir: tuple[str, ...], argv) -> None:
    """Write ``signals/`` and ``texts/`` under ``run_dir`` (staged) from the pass ``table`` and the
    dedup ``per_document`` outcomes (``doc_id, outcome, cluster, cluster_size``)."""
    outcomes = per_document.select("doc_id", "outcome", "cluster", "cluster_size")
    joined = table.join(outcomes, "doc_id", "left")
    joined.selectExpr(*signal_columns()).write.parquet(store.uri(*run_dir, "signals"))
    table.selectExpr(*TEXT_COLUMNS).write.parquet(store.uri(*run_dir, "texts"))
    store.write_text(
        json.dumps({"format": SIGNALS_FORMAT, "argv": list(argv)}), *run_dir, "signals", BUILD_FILE
    )


def read_build(store: OutputStore) -> dict[str, Any] | None:
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


def sensitivity(signals, settings) -> list[dict[str, Any]]:
    """Per rule with a threshold: the documents it alone would drop at each threshold of
    :func:`sensitivity_plan`, among the documents the quality filters measured (one aggregation
    over ``signals``; only the counts reach the driver)."""
    from pyspark.sql import functions as F

    plan = sensitivity_plan(settings)
    if not plan:
        return []
    specs = {(f, r): (num, den, op, words) for f, r, num, den, op, words in SENSITIVITY_RULES}
    measured = signals.where(F.col("gr_chars").isNotNull())
    spaced = ~F.coalesce(F.col("no_space"), F.lit(False))
    sums = []
    for i, (filter_name, rule, _, value) in enumerate(plan):
        num, den, op, words = specs[(filter_name, rule)]
        x = F.col(num).cast("double") if den is None else _ratio(num, den)
        fails = (x > F.lit(value)) if op == ">" else (x < F.lit(value))
        if rule == "min_stop_words":
            fails = fails & (F.col(num) >= 0)
        if rule == "min_line_punct_ratio" and settings.fineweb.line_punct_exclude_zero:
            fails = fails & (x > 0)
        if words:
            fails = fails & spaced
        sums.append(F.sum(F.when(fails, 1).otherwise(0)).alias(f"c{i}"))
    row = measured.agg(F.count("*").alias("n"), *sums).first()
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for i, (filter_name, rule, factor, value) in enumerate(plan):
        entry = out.setdefault(
            (filter_name, rule),
            {"filter": filter_name, "rule": rule, "documents": int(row["n"]), "points": []},
        )
        entry["points"].append({"factor": factor, "threshold": value, "dropped": int(row[f"c{i}"] or 0)})
    return list(out.values())
