"""The corpus job's pass table, defined once: every column, how the build's first pass computes it,
how ``contentx select`` puts it back together from a ``--signals`` build, and whether the kept
documents carry it.  The column lists of the job, of ``select`` and of the documents are derived
from :data:`COLUMNS` (pure: SQL expressions as text, no Spark at import).

* **build**: a Spark SQL expression over an input row of the extraction table (after the column
  filters: ``drop``), ``r`` the struct the per-document pass returns
  (:data:`.per_document.RESULT_DDL`), and three flags: ``_passed`` (no filter dropped it),
  ``_measured`` (the quality filters measured it) and ``_written`` (its text is staged: passed,
  or measured with ``--signals``).  None: not a pass column (``duplicate_count``: dedup's).
* **recut** and **source**: ``select``'s expression over the build's ``signals/`` joined to a few
  columns of its ``texts/`` (``source``: which of them holds the column, read as the column's own
  name, through ``read`` when given), and ``_passed`` (the re-cut's filters passed it).  A column
  without a source is not read before the kept documents are known (the documents take it from
  ``texts/``, the build's staged pass).
* **document**: a column of the kept-documents table, in this order (:func:`document_columns`).
* **only**: ``"signals"``: written with ``--signals`` only (what ``select`` needs of every filtered
  document; not in ``select``'s pass table); ``"models"``: with ``--signals`` and a model.

The signals table (:mod:`.signals`) is its own definition over these columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .scores import PREFIX as SCORE_PREFIX

#: Characters of a dropped document's text shown as the report's example of its filter.
EXCERPT_CHARS = 200
#: The column of each ``--quality-model``'s score (:func:`.scores.column`), ``{}`` its name.
SCORE_COLUMN = SCORE_PREFIX + "{}"
#: The column the documents (and signals) get with ``--tokenizer``.
TOKEN_COLUMN = "token_count"
#: Counts of the pass summed by the report over the kept documents.
PASS_COUNTS = ("emails_masked", "ips_masked", "c4_lines_removed")
#: The flags the build's expressions may read (set by :func:`.job.first_pass`).
PASSED, MEASURED, WRITTEN = "_passed", "_measured", "_written"


@dataclass(frozen=True)
class Column:
    """One column of the pass table (see the module's text for the fields)."""

    name: str
    build: str | None
    about: str
    recut: str | None = None
    source: str | None = None
    read: str | None = None
    document: bool = False
    only: str = ""


_TEXT = "coalesce(r.text, text)"  # the text as the filters left it (null: unchanged)

#: Every column, in the pass table's order (the documents' order too).  ``quality_{}``: one column
#: per model, ``{}`` its name (``r.quality[{}]`` its index in the pass).
COLUMNS: tuple[Column, ...] = (
    Column("doc_id", "monotonically_increasing_id()", "the row's id (dedup's tie-break)", source="signals"),
    Column("_input", "_input", "the index of the input table it came from", source="texts"),
    Column("url", "url", "the page's URL", source="signals", document=True),
    Column("host", "url_host_name", "its host", source="signals", document=True),
    Column("fetch_time", "fetch_time", "when it was fetched", source="texts", document=True),
    Column("language", "language", "the extraction's language label", source="signals", document=True),
    Column("language_score", "language_score", "its confidence", source="signals", document=True),
    Column("title", "title", "the page's title", recut="cast(null as string)", document=True),
    Column(
        "text",
        f"CASE WHEN {WRITTEN} THEN {_TEXT} END",
        "the text as written (with --signals: every measured document's, as if kept)",
        recut="cast(null as string)",
        document=True,
    ),
    Column(
        "text_length",
        f"CASE WHEN {PASSED} THEN length({_TEXT}) ELSE text_length END",
        "characters of the text as written (the input's for a dropped document)",
        recut=f"cast(CASE WHEN {PASSED} THEN text_length ELSE input_length END as bigint)",
        document=True,
    ),
    Column(
        "text_hash",
        "coalesce(r.text_hash, text_hash)",
        "hash of the text as written (exact dedup)",
        source="signals",
        document=True,
    ),
    Column("warc_filename", "warc_filename", "the record's WARC file", source="signals", document=True),
    Column("warc_record_offset", "warc_record_offset", "its offset", source="signals", document=True),
    Column(
        "warc_record_length",
        "warc_record_length",
        "its length",
        recut="cast(null as bigint)",
        document=True,
    ),
    Column("drop", "coalesce(`drop`, r.`drop`)", "the filter that dropped it (null: passed)", recut="_drop"),
    Column("rule", "r.rule", "that filter's rule", recut="_rule"),
    Column(
        "excerpt",
        f"CASE WHEN NOT {PASSED} THEN substring(text, 1, {EXCERPT_CHARS}) END",
        "a dropped document's text cut short (the report's example)",
        recut=f"CASE WHEN NOT {PASSED} THEN excerpt END",
        source="texts",
    ),
    Column("duplicate_count", None, "documents in its duplicate cluster (dedup)", document=True),
    Column(
        "bands",
        "r.bands",
        "MinHash band hashes (null: dropped, shorter than a shingle, no near dedup)",
        recut="cast(null as array<bigint>)",
        document=True,
    ),
    Column("sketch", "r.sketch", "the signature cut short (--verify-edges)", recut="cast(null as binary)"),
    Column(
        "emails_masked",
        f"CASE WHEN {PASSED} THEN r.emails_masked ELSE 0 END",
        "e-mail addresses masked (kept documents)",
        recut=f"CASE WHEN {PASSED} THEN emails_masked ELSE 0 END",
        source="signals",
    ),
    Column(
        "ips_masked",
        f"CASE WHEN {PASSED} THEN r.ips_masked ELSE 0 END",
        "IP addresses masked (kept documents)",
        recut=f"CASE WHEN {PASSED} THEN ips_masked ELSE 0 END",
        source="signals",
    ),
    Column(
        "c4_lines_removed",
        f"CASE WHEN {PASSED} THEN r.c4_lines_removed ELSE 0 END",
        "lines C4's line filter removed (kept documents)",
        recut=f"CASE WHEN {PASSED} THEN c4_lines_removed ELSE 0 END",
        source="texts",
        read="cast(c4_removed as int)",
    ),
    Column("profile", "r.profile", "the FineWeb-2 language profile that filtered it", source="signals"),
    Column("fallback", "r.fallback", "why that profile's own settings were not used", source="texts"),
    Column("lines_removed", "r.lines_removed", "lines --line-dedup removed", source="signals"),
    Column("line_chars_removed", "r.line_chars_removed", "their characters", source="signals"),
    Column(
        "line_example",
        "r.line_example",
        "the first line --line-dedup removed",
        recut="cast(null as string)",
    ),
    Column(
        SCORE_COLUMN,
        "r.quality[{}]",
        "each --quality-model's score of the text as written",
        source="signals",
        document=True,
    ),
    Column(
        TOKEN_COLUMN,
        "r.token_count",
        "--tokenizer: tokens of the text as written",
        source="signals",
        document=True,
    ),
    # with --signals: what ``select`` needs of every filtered document
    Column("signals", "r.signals", "every measure (.quality.signals)", only="signals"),
    Column(
        "kept_length",
        f"CASE WHEN {MEASURED} THEN length({_TEXT}) END",
        "characters of a measured document's text as if kept",
        only="signals",
    ),
    Column("input_length", "text_length", "characters of the input text", only="signals"),
    Column(
        "column_drop",
        "coalesce(`drop`, CASE WHEN r.`drop` = 'line_dedup' THEN r.`drop` END)",
        "the column filter (or line dedup) that dropped it",
        only="signals",
    ),
    Column("pii_emails", "r.emails_masked", "e-mail addresses masked, as if kept", only="signals"),
    Column("pii_ips", "r.ips_masked", "IP addresses masked, as if kept", only="signals"),
    Column("c4_removed", "r.c4_lines_removed", "C4's lines removed, as if kept", only="signals"),
    Column(
        "text_bytes",
        f"CASE WHEN {WRITTEN} THEN octet_length({_TEXT}) END",
        "UTF-8 bytes of the staged text (select --keep-top-weight bytes)",
        only="models",
    ),
)


def expand(column: Column, models: Sequence[str]) -> list[tuple[str, Column]]:
    """``(name, column)`` of ``column``: one per model for :data:`SCORE_COLUMN`, else itself."""
    if column.name != SCORE_COLUMN:
        return [(column.name, column)]
    return [(SCORE_COLUMN.format(m), column) for m in models]


def pass_columns(models: Sequence[str], signals: bool) -> list[tuple[str, str]]:
    """``(name, SQL)`` of the build's pass table, in order (``models``: the ``--quality-model``
    names; ``signals``: ``--signals``)."""
    out = []
    for c in COLUMNS:
        wanted = {"": True, "signals": signals, "models": signals and bool(models)}[c.only]
        if c.build is None or not wanted:
            continue
        for j, (name, _) in enumerate(expand(c, models)):
            out.append((name, c.build.format(j) if c.name == SCORE_COLUMN else c.build))
    return out


def recut_columns(models: Sequence[str]) -> list[tuple[str, str]]:
    """``(name, SQL)`` of ``select``'s pass table (the build's, without the ``--signals``-only
    columns), in order; ``models``: the build's model names."""
    return [
        (name, c.recut or name)
        for c in COLUMNS
        if c.build is not None and not c.only
        for name, _ in expand(c, models)
    ]


def source_columns(source: str) -> list[str]:
    """The SQL select list of what ``select`` reads from the build's ``signals`` or ``texts``
    (``source``) for its pass table (``doc_id`` first; scores and tokens not among them: their
    presence depends on the build)."""
    out = ["doc_id"]
    for c in COLUMNS:
        if c.source == source and c.name not in ("doc_id", SCORE_COLUMN, TOKEN_COLUMN):
            out.append(f"{c.read} as {c.name}" if c.read else c.name)
    return out


def document_columns(models: Sequence[str], tokens: bool) -> tuple[str, ...]:
    """The kept-documents table's columns: each model's score; ``token_count`` with ``tokens``."""
    return tuple(
        name
        for c in COLUMNS
        if c.document and (c.name != TOKEN_COLUMN or tokens)
        for name, _ in expand(c, models)
    )


#: The kept documents' columns without a model or a tokenizer.
DOCUMENT_COLUMNS = document_columns((), False)
