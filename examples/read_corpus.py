"""Read a corpus built by `contentx corpus`: with DuckDB (SQL over the Parquet files) and with
pyarrow and pandas.

    python examples/read_corpus.py CORPUS_DIR [LANGUAGE]

Prints the documents and characters per language (DuckDB), then the longest documents of LANGUAGE
(default: the language with most documents) as a pandas DataFrame, and the count each way.
DuckDB is not a dependency of contentx: `pip install duckdb`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pyarrow.dataset as ds


def main(corpus: Path, language: str | None = None) -> int:
    # A corpus is finished when _SUCCESS exists; without it the corpus is being written, or its
    # run was killed: do not read it.
    if not (corpus / "_SUCCESS").exists():
        print(f"{corpus}: no _SUCCESS, not a finished corpus", file=sys.stderr)
        return 2
    documents = corpus / "documents"

    # DuckDB: SQL straight over the Parquet files, reading only the columns the query needs.
    con = duckdb.connect()
    per_language = con.execute(
        "SELECT coalesce(language, '(none)') AS language, count(*) AS documents, "
        "sum(text_length) AS characters, sum(duplicate_count) AS with_duplicates "
        "FROM read_parquet(?) GROUP BY 1 ORDER BY documents DESC, language",
        [str(documents / "**" / "*.parquet")],
    ).fetchall()
    print("language    documents  characters  with their duplicates")
    for lang, docs, chars, with_dups in per_language:
        print(f"{lang:<10} {docs:>10} {chars:>11} {with_dups:>22}")
    duckdb_total = sum(row[1] for row in per_language)
    if not duckdb_total:  # every input row was dropped (report.md says by which filter)
        print(f"\nno documents in {corpus}: every input row was dropped (see {corpus / 'report.md'})")
        print(f"\ndocuments: 0 (DuckDB), {ds.dataset(documents, format='parquet').count_rows()} (pyarrow)")
        return 0

    # pyarrow: a dataset over the same files, a column selection and a filter pushed into the scan;
    # then pandas for the rest.
    dataset = ds.dataset(documents, format="parquet")
    language = language or (per_language[0][0] if per_language else None)
    table = dataset.to_table(
        columns=["url", "language", "text_length", "duplicate_count", "text"],
        filter=ds.field("language") == language,
    )
    frame = table.to_pandas()
    frame["start"] = frame["text"].str.slice(0, 60).str.replace("\n", " ")
    longest = frame.sort_values("text_length", ascending=False).head(5)
    print(f"\nthe longest documents in {language}:")
    print(longest[["url", "text_length", "duplicate_count", "start"]].to_string(index=False))

    arrow_total = dataset.count_rows()
    print(f"\ndocuments: {duckdb_total} (DuckDB), {arrow_total} (pyarrow)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) == 3 else None))
