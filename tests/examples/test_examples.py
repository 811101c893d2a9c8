"""The scripts of examples/ run as a user runs them (the `contentx` console script of this
environment on PATH, from the repository root) on the bundled sample WARC, plus a Common Crawl WARC of
../shared/warc/real when present, and do what docs/examples.md says they do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ..conftest import SESSION_SQL_SUBMIT_ARGS, SHARED

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SAMPLE = ROOT / "tests" / "data" / "sample.warc.gz"
#: a second month's new pages: a small crawl of other sites (22 pages, 14 of them kept by FineWeb's
#: filters; the sample is of 2020): its month keeps documents of its own, so that what it keeps is
#: checked against the first month's (a WARC of one page the filters drop left that check empty)
NEW_MONTH = SHARED / "warc" / "real" / "wget__dolma-sample-0000.warc.gz"


def _env() -> dict[str, str]:
    """The user's environment with this environment's ``contentx`` first on PATH; the jobs run as
    the suite's own session (tests/conftest.py :data:`SESSION_SQL_SUBMIT_ARGS`, given as a user
    gives Spark settings, in ``PYSPARK_SUBMIT_ARGS``): their driver JVMs compile with the JIT's
    quick tier, and their SQL expressions are evaluated without generating code (the examples'
    builds are small: the monthly example's 4 jobs, 72-80 -> 62-76 CPU-s in all).  The product's
    code generation runs in the jobs of tests/faults/test_driver_killed.py and test_disk_fills.py,
    tests/corpus/test_tokens.py and tests/runtime/test_class_archive.py."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_SUBMIT_ARGS", SESSION_SQL_SUBMIT_ARGS)
    return env


def _run(*args: str | Path, check: bool = True, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def _report(corpus: Path) -> dict:
    return json.loads((corpus / "_report.json").read_text(encoding="utf-8"))


def _documents(corpus: Path, columns: list[str]) -> list[dict]:
    return pq.read_table(corpus / "documents", columns=columns).to_pylist()


@pytest.fixture(scope="module")
def months(tmp_path_factory) -> Path:
    """Two monthly builds: the sample, then the sample again with a new month's WARC."""
    work = tmp_path_factory.mktemp("monthly")
    _run(EXAMPLES / "monthly_build.sh", work, "2026-10", SAMPLE)
    second = [SAMPLE, NEW_MONTH] if NEW_MONTH.exists() else [SAMPLE]
    out = _run(EXAMPLES / "monthly_build.sh", work, "2026-11", *second)
    assert f"against 1 earlier corpora: {work / 'corpus-2026-10'}" in out.stdout
    # contentx run and corpus as a user runs them: their own summary, no JVM or Spark noise
    assert "\ncontentx corpus summary\n" in out.stdout, out.stdout[-3000:]
    for noise in ("WARN", "Using incubator modules", "[Stage", "Setting default log level"):
        assert noise not in out.stderr, out.stderr[-3000:]
    return work


@pytest.mark.spark
def test_monthly_build_drops_what_an_earlier_month_kept(months):
    first, second = months / "corpus-2026-10", months / "corpus-2026-11"
    r1, r2 = _report(first), _report(second)
    assert (first / "_SUCCESS").exists() and (second / "_SUCCESS").exists()
    assert r1["kept"] > 0 and r1["dropped"]["seen_before"] == 0
    # every document the first month kept, and each of its copies, is seen_before in the second
    copies = r1["dropped"]["exact_duplicate"] + r1["dropped"]["near_duplicate"]
    assert r2["dropped"]["seen_before"] == r1["kept"] + copies
    # the second month keeps only what the first did not have
    kept1 = {d["text_hash"] for d in _documents(first, ["text_hash"])}
    kept2 = _documents(second, ["text_hash", "warc_filename"])
    assert not kept1 & {d["text_hash"] for d in kept2}
    assert all(Path(d["warc_filename"]).name != SAMPLE.name for d in kept2)
    if NEW_MONTH.exists():
        assert r2["input_rows"] > r1["input_rows"]
        assert r2["kept"] > 0 and {Path(d["warc_filename"]).name for d in kept2} == {NEW_MONTH.name}


@pytest.mark.spark
def test_multilingual_corpus_filters_each_language_with_its_profile(months, tmp_path):
    out = _run(EXAMPLES / "multilingual_corpus.sh", months / "table-2026-11", tmp_path / "multi")
    report = _report(tmp_path / "multi")
    assert report["filters"]["preset"] == "fineweb2"
    rows = {row["language"]: row for row in report["by_language"]}
    assert sum(row["documents"] for row in rows.values()) == report["input_rows"]
    # the sample's Chinese and Russian pages are filtered with FineWeb-2's Chinese and Russian settings
    for language, profile in (("zh", "cmn_Hani"), ("ru", "rus_Cyrl")):
        assert profile in {p["profile"] for p in rows[language]["profiles"]}
        line = next(li for li in out.stdout.splitlines() if li.startswith(f"{language} "))
        assert profile in line and str(rows[language]["kept"]) in line.split()


@pytest.mark.spark
def test_read_corpus_with_duckdb_and_pyarrow(months, tmp_path):
    pytest.importorskip("duckdb")
    corpus = months / "corpus-2026-10"
    kept = _report(corpus)["kept"]
    out = _run(sys.executable, EXAMPLES / "read_corpus.py", corpus)
    assert out.stdout.splitlines()[-1] == f"documents: {kept} (DuckDB), {kept} (pyarrow)"
    # a corpus without _SUCCESS (being written, or its run killed) is refused
    (tmp_path / "unfinished" / "documents").mkdir(parents=True)
    refused = _run(sys.executable, EXAMPLES / "read_corpus.py", tmp_path / "unfinished", check=False)
    assert refused.returncode == 2 and "not a finished corpus" in refused.stderr


def test_evaluate_on_your_own_gold_set(tmp_path):
    results = tmp_path / "scores.json"
    out = _run(EXAMPLES / "evaluate_own_gold.sh", EXAMPLES / "gold", results)
    assert "(2 pages)" in out.stdout
    scores = {r["method"]: r for r in json.loads(results.read_text(encoding="utf-8"))["results"]}
    assert set(scores) == {"full-text", "combined", "cectd-ds", "cetr"}
    assert all(r["n_pages"] == 2 and r["n_errors"] == 0 for r in scores.values())
    # the extractors leave out the navigation, banners, comments and footers that full text keeps
    for method in ("combined", "cectd-ds"):
        assert scores[method]["precision"] > scores["full-text"]["precision"]
        assert scores[method]["f1"] > scores["full-text"]["f1"]


def test_evaluate_own_gold_writes_its_default_results_under_output(tmp_path):
    """Without RESULTS.json the scores go to output/evaluation.json of the directory it runs in
    (in a clone: the ignored output/), never next to the user's own files."""
    out = _run(EXAMPLES / "evaluate_own_gold.sh", cwd=tmp_path)
    assert "(2 pages)" in out.stdout
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == [
        "output",
        "output/evaluation.json",
    ]
    assert json.loads((tmp_path / "output" / "evaluation.json").read_text())["n_pages"] == 2


def test_read_corpus_on_a_corpus_without_documents(tmp_path):
    """A finished corpus that kept nothing: one line saying so, the counts, exit 0."""
    import pyarrow as pa

    corpus = tmp_path / "empty"
    (corpus / "documents").mkdir(parents=True)
    schema = pa.schema(
        [("url", pa.string()), ("language", pa.string()), ("text_length", pa.int32()),
         ("duplicate_count", pa.int64()), ("text", pa.string())]
    )  # fmt: skip
    pq.write_table(schema.empty_table(), corpus / "documents" / "part-00000.parquet")
    (corpus / "_SUCCESS").write_text("{}")
    out = _run(sys.executable, EXAMPLES / "read_corpus.py", corpus)
    assert f"no documents in {corpus}: every input row was dropped" in out.stdout
    assert "Empty DataFrame" not in out.stdout and "None" not in out.stdout
    assert out.stdout.splitlines()[-1] == "documents: 0 (DuckDB), 0 (pyarrow)"
