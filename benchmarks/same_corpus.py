"""Are two corpora the same?  For a refactoring that must change no behaviour: the same inputs
built with two versions of the code (two checkouts), then compared here.

    python benchmarks/same_corpus.py BEFORE_DIR AFTER_DIR [NAME ...]

For each ``NAME`` (a corpus directory under both, default every one found in ``BEFORE_DIR``):

* ``documents/``, ``signals/`` and ``texts/``: the same schema (names, types, nullability) and the
  same rows, compared sorted (Parquet's file split may differ; hive partitions such as
  ``bucket=K`` read as a column);
* ``_report.json``: equal once the timings (``elapsed_seconds``, ``records_per_second``,
  ``finished``) are left out and the two directories' paths made one;
* the same file names apart from the Parquet parts.

Prints one line per corpus and table and a ``RESULT`` line (``same=1`` when every one agrees).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds

#: Report entries that are timings or the run's date.
TIMINGS = ("elapsed_seconds", "records_per_second", "finished")
#: Columns the rows are sorted by, per table (ties broken by the rest that sort).
KEYS = {"documents": ("url", "text_hash"), "signals": ("doc_id",), "texts": ("doc_id",)}


def _read(path: Path) -> pa.Table | None:
    if not path.exists():
        return None
    return ds.dataset(str(path), format="parquet", partitioning="hive").to_table()


def _sorted(table: pa.Table, keys: tuple[str, ...]) -> pa.Table:
    sortable = [
        n
        for n in table.column_names
        if not (
            pa.types.is_nested(table.schema.field(n).type) or pa.types.is_binary(table.schema.field(n).type)
        )
    ]
    order = [*keys, *(n for n in sortable if n not in keys)]
    return table.sort_by([(n, "ascending") for n in order])


def same_table(before: Path, after: Path, name: str) -> tuple[bool, str]:
    a, b = _read(before / name), _read(after / name)
    if a is None or b is None:
        return a is None and b is None, "absent" if a is None and b is None else "in one only"
    if a.schema != b.schema:
        return False, f"schemas differ:\n{a.schema}\n---\n{b.schema}"
    if a.num_rows != b.num_rows:
        return False, f"{a.num_rows} rows against {b.num_rows}"
    keys = tuple(k for k in KEYS[name] if k in a.column_names)
    same = _sorted(a, keys).equals(_sorted(b, keys))
    return same, f"{a.num_rows} rows, {a.num_columns} columns" + ("" if same else ": rows differ")


def _report(path: Path, base: Path) -> dict:
    text = (path / "_report.json").read_text()
    report = json.loads(text.replace(str(base), "BASE"))
    for key in TIMINGS:
        report.pop(key, None)
    return report


def _files(path: Path) -> set[str]:
    return {
        re.sub(r"part-\d+-[0-9a-f-]+", "part", str(p.relative_to(path)))
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    names = args.names or sorted(p.name for p in args.before.iterdir() if (p / "_SUCCESS").exists())
    all_same = True
    for name in names:
        before, after = args.before / name, args.after / name
        if not (after / "_SUCCESS").exists():
            all_same = False
            print(f"{name}: DIFFERENT (no finished corpus {after})")
            continue
        for table in KEYS:
            same, what = same_table(before, after, table)
            all_same &= same
            print(f"{name} {table}: {'same' if same else 'DIFFERENT'} ({what})")
        ra, rb = _report(before, args.before), _report(after, args.after)
        differing = sorted(k for k in set(ra) | set(rb) if ra.get(k) != rb.get(k))
        all_same &= not differing
        print(f"{name} _report.json: {'same' if not differing else 'DIFFERENT: ' + ', '.join(differing)}")
        files = _files(before) ^ _files(after)
        all_same &= not files
        print(f"{name} files: {'same' if not files else 'DIFFERENT: ' + ', '.join(sorted(files))}")
    print(f"RESULT corpora={len(names)} same={int(all_same)}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
