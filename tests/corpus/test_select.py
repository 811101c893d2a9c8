"""``contentx corpus --signals`` and ``contentx select`` end to end on real page texts (the WCXB dev
pages' main texts) with near copies made from them.

* ``--signals`` changes no kept document, and writes one signals row per input row.
* ``select`` with a preset, ``--filter-set`` overrides, a language score, ``--languages`` keeps
  exactly the documents of a full build with those settings, near duplicates included: a near
  copy whose preferred (earlier) member a tighter threshold drops is kept, as the full build
  keeps it.
* A re-cut the signals cannot give (C4's line rules changed, a language the build dropped) is one
  line and exit code 2; the committed output rules hold for DIR2.
* The sensitivity table agrees with builds at the moved thresholds.
"""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from contentx_udf import cli
from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus.config import config_from_argv

from ..conftest import SHARED, shared_or_skip
from .tables import table_row, write_table

pytestmark = pytest.mark.spark

WCXB = SHARED / "data" / "wcxb-dev" / "ground-truth"
PAGES = 160


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """160 real pages; 12 near-copy pairs (a page cut to 130 words on day 1, the same with 25
    more words on day 2: a tighter min_words drops the earlier one only); 6 exact copies."""
    directory = shared_or_skip(WCXB)
    texts = []
    for path in sorted(directory.glob("*.json"))[:PAGES]:
        texts.append(json.loads(path.read_text())["ground_truth"].get("main_content") or "")
    rows = [table_row(f"https://site{i % 9}.example/p{i}", t, offset=i) for i, t in enumerate(texts) if t]
    long_texts = [t for t in texts if len(t.split()) > 400]
    for k, text in enumerate(long_texts[:12]):
        short = _words(text, 130) + "."
        rows.append(table_row(f"https://copies.example/a{k}", short, offset=1000 + k, day=1))
        longer = short + " " + " ".join(text.split()[300:325]) + "."
        rows.append(table_row(f"https://copies.example/b{k}", longer, offset=2000 + k, day=2))
    for k, text in enumerate(long_texts[12:18]):
        rows.append(table_row(f"https://mirror.example/m{k}", text, offset=3000 + k, day=3))
    table = tmp_path_factory.mktemp("select") / "table"
    write_table(table, "combined", rows)
    return table


def _docs(path) -> set[tuple]:
    table = pq.read_table(str(path / "documents"), columns=["url", "text_hash", "duplicate_count"])
    return set(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))


def _build(spark, argv) -> dict:
    return corpus_job.run(config_from_argv(argv), spark)


@pytest.fixture(scope="module")
def source(spark, crawl, tmp_path_factory):
    """A fineweb build with --signals (and the same without)."""
    root = tmp_path_factory.mktemp("built")
    argv = ["--input", str(crawl), "--filters", "fineweb", "--dedup", "near"]
    plain = _build(spark, [*argv, "--output", str(root / "plain")])
    signals = _build(spark, [*argv, "--output", str(root / "signals"), "--signals"])
    return root, argv, plain, signals


def test_signals_change_no_document_and_cover_every_row(spark, source):
    root, _, plain, signals = source
    assert _docs(root / "plain") == _docs(root / "signals")
    assert plain["dropped"] == signals["dropped"]
    rows = pq.read_table(str(root / "signals" / "signals"))
    assert rows.num_rows == signals["input_rows"]
    # the first failed filter recorded per document is the report's count per filter
    drops = [d for d in rows.column("drop").to_pylist() if d]
    for name, count in signals["dropped"].items():
        if name not in ("exact_duplicate", "near_duplicate", "seen_before"):
            assert drops.count(name) == count, name
    outcomes = rows.column("outcome").to_pylist()
    assert outcomes.count("kept") == signals["kept"]
    assert outcomes.count("near_duplicate") == signals["dropped"]["near_duplicate"] > 0
    assert (root / "signals" / "_SUCCESS").exists() and not (root / "signals" / "_staging").exists()
    assert signals["sensitivity"] and "Sensitivity" in (root / "signals" / "report.md").read_text()


def test_sensitivity_counted_from_the_pass_equals_the_signals_tables(spark, source):
    """The build counts its sensitivity table from its own pass while dedup runs; the committed
    signals table gives the same counts, in Arrow batches joined (or not) up to any size."""
    from contentx_udf.corpus.signals import sensitivity

    root, argv, _, built = source
    settings = config_from_argv([*argv, "--output", str(root / "unused")]).quality
    table = spark.read.parquet(str(root / "signals" / "signals"))
    for rows in (7, 100_000):
        assert sensitivity(table, settings, rows) == built["sensitivity"]
    assert any(p["dropped"] for r in built["sensitivity"] for p in r["points"])


def test_documents_of_a_local_build_are_counted_before_the_jvm_starts(source):
    root, _, _, signals = source
    from contentx_udf.corpus.select import local_documents

    assert local_documents(str(root / "signals")) == signals["input_rows"] > 0
    assert local_documents((root / "signals").as_uri()) == signals["input_rows"]
    assert local_documents(str(root / "plain")) is None  # no signals/
    assert local_documents("s3a://bucket/corpus") is None  # not looked at


#: A tighter min_words than the preset's: the day-1 near copies (130 words) fall below it.
TIGHT = ["--filter-set", "gopher_quality.min_words=150"]
CHANGES = [
    TIGHT,
    [
        "--filter-set",
        "gopher_repetition.dup_line_frac=0.1",
        "--filter-set",
        "fineweb.max_short_line_ratio=0.9",
    ],
    ["--min-language-score", "0.9", "--filter-set", "c4.min_sentences=12"],
    ["--filter-set", "gopher_quality.enabled=false", "--filter-set", "fineweb.enabled=false"],
]


@pytest.fixture(scope="module")
def tight(spark, source, tmp_path_factory):
    """:data:`TIGHT` both ways, each once for the module: the signals build re-cut to it (read by
    two tests), and a full build with it, with --signals (the source of a looser re-cut; --signals
    changes no document, test_signals_change_no_document_and_cover_every_row): ``(cut, full
    directory, full build's report)``."""
    root, argv, _, _ = source
    at = tmp_path_factory.mktemp("tight")
    assert cli.main(["select", "--from", str(root / "signals"), "--output", str(at / "cut"), *TIGHT]) == 0
    full = _build(spark, [*argv, "--output", str(at / "full"), "--signals", *TIGHT])
    return at / "cut", at / "full", full


@pytest.mark.parametrize("changes", CHANGES, ids=["min_words", "repetition", "score", "rules_off"])
def test_select_equals_a_full_build(spark, source, tmp_path, changes, request):
    root, argv, _, _ = source
    if changes is TIGHT:  # (built once for this test and two others)
        out, full_dir, full = request.getfixturevalue("tight")
    else:
        out, full_dir = tmp_path / "cut", tmp_path / "full"
        assert cli.main(["select", "--from", str(root / "signals"), "--output", str(out), *changes]) == 0
        full = _build(spark, [*argv, "--output", str(full_dir), *changes])
    assert _docs(out) == _docs(full_dir)
    report = json.loads((out / "_report.json").read_text())
    assert report["dropped"] == full["dropped"] and report["kept"] == full["kept"]
    assert _docs(out) != _docs(root / "signals")  # the change mattered
    assert (out / "_SUCCESS").exists() and not (out / "_staging").exists()


def test_a_near_copy_is_kept_when_its_preferred_member_is_dropped(spark, source, tight):
    root, _, _, _ = source
    out, _, _ = tight  # the signals build re-cut to TIGHT
    before = {u for u, _, _ in _docs(root / "signals")}
    after = {u for u, _, _ in _docs(out)}
    early = {u for u in before if "copies.example/a" in u}
    late = {u for u in after if "copies.example/b" in u}
    assert early and not (early & after)  # the day-1 copies (130 words) are dropped now
    assert late and not (late & before)  # and their day-2 near copies take their place


def test_a_looser_threshold_brings_back_near_copies_with_their_band_hashes(spark, source, tight, tmp_path):
    """A build whose tighter min_words dropped the day-1 copies stores no band hashes for them;
    a re-cut at the preset's own threshold computes them, so the day-1 copies are kept again and
    their day-2 near copies dropped: the plain build's documents."""
    root, _, _, _ = source
    _, built, _ = tight  # a --signals build at min_words=150
    assert _docs(built) != _docs(root / "plain")
    out = tmp_path / "cut"
    assert cli.main(["select", "--from", str(built), "--output", str(out),
                     "--filter-set", "gopher_quality.min_words=50"]) == 0  # fmt: skip
    assert _docs(out) == _docs(root / "plain")
    early = [{u for u, _, _ in _docs(d) if "copies.example/a" in u} for d in (built, out)]
    assert not early[0] and early[1]


def test_gopher_build_recut_to_other_presets_and_languages(spark, crawl, tmp_path):
    argv = ["--input", str(crawl), "--filters", "gopher", "--dedup", "near", "--line-dedup",
            "--line-dedup-min-docs", "3"]  # fmt: skip
    _build(spark, [*argv, "--output", str(tmp_path / "src"), "--signals"])
    for i, changes in enumerate(
        (
            ["--filters", "none"],
            ["--filters", "fineweb", "--filter-set", "c4.enabled=false"],
            ["--languages", "en"],
        )
    ):
        out = tmp_path / f"cut{i}"
        assert cli.main(["select", "--from", str(tmp_path / "src"), "--output", str(out), *changes]) == 0
        _build(spark, [*argv, "--output", str(tmp_path / f"full{i}"), *changes])
        assert _docs(out) == _docs(tmp_path / f"full{i}"), changes


def test_where_over_the_signals_and_the_user_errors(spark, source, tmp_path, capsys):
    root, _, _, _ = source
    out = tmp_path / "cut"
    argv = ["select", "--from", str(root / "signals"), "--output", str(out)]
    capsys.readouterr()
    assert cli.main([*argv, "--where", "gq_real_words < 400"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "_report.json").read_text())
    assert report["dropped"]["where"] > 0
    # it says what it is: a re-cut, of which corpus, what changed
    assert "contentx select summary" in printed and "contentx corpus summary" not in printed
    assert f"a re-cut of the corpus {root / 'signals'}" in printed
    assert "changed from the build: --where gq_real_words < 400" in printed
    md = (out / "report.md").read_text().splitlines()
    assert md[0] == "# Corpus report: a re-cut"
    assert md[2].startswith(f"A re-cut of the corpus {root / 'signals'} ")
    assert md[3].startswith("Changed from the build: `--where gq_real_words < 400`")
    signals = pq.read_table(str(root / "signals" / "signals")).to_pylist()
    words = {r["url"]: r["gq_real_words"] for r in signals}
    assert all(words[u] < 400 for u, _, _ in _docs(out))
    old = tmp_path / "old"  # signals of the first version (texts/ not the staged pass)
    shutil.copytree(root / "signals", old)
    build = json.loads((old / "signals" / "_build.json").read_text())
    (old / "signals" / "_build.json").write_text(json.dumps({**build, "format": 1}))
    capsys.readouterr()
    cases = [
        ([*argv, "--overwrite", "--filter-set", "c4.policy_lines=false"], "c4.policy_lines"),
        # a preset changes settings the user never named: the message names the preset
        ([*argv, "--overwrite", "--filters", "gopher"], "--filters gopher would change what the build's"),
        ([*argv, "--overwrite", "--where", "gq_real_words <"], "--where"),
        ([*argv, "--overwrite", "--where", "no_such_column > 1"], "--where"),
        ([*argv], "exists and is not empty"),
        (["select", "--from", str(root / "plain"), "--output", str(tmp_path / "x")], "without --signals"),
        (["select", "--from", str(old), "--output", str(tmp_path / "y")], "another version"),
    ]
    for args, needle in cases:
        assert cli.main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err, err
        assert "c4.enabled" not in err, err  # (what --filters gopher implies: never named)


GOPHER_QUALITY_RULES = ("min_words", "max_words", "min_mean_word_length", "max_mean_word_length",
                        "max_hash_word_ratio", "max_ellipsis_word_ratio", "max_bullet_lines_ratio",
                        "max_ellipsis_lines_ratio", "min_alpha_words_ratio", "min_stop_words")  # fmt: skip


def test_select_refuses_a_missing_or_unfinished_from_before_spark_starts(tmp_path, capsys, monkeypatch):
    from contentx_udf.corpus import select

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark started")

    monkeypatch.setattr(select, "spark_session", no_spark)
    monkeypatch.setattr(select, "check_java", no_spark)
    (tmp_path / "unfinished" / "documents").mkdir(parents=True)
    expected = {
        "nothing": f"--from {tmp_path / 'nothing'}: no such corpus directory",
        "unfinished": f"--from {tmp_path / 'unfinished'} is not a finished corpus (no _SUCCESS)",
    }
    for source, said in expected.items():
        argv = ["select", "--from", str(tmp_path / source), "--output", str(tmp_path / "out")]
        assert cli.main(argv) == 2
        assert capsys.readouterr().err.strip() == f"contentx select: error: {said}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("factor", [0.5, 1.5])
def test_sensitivity_matches_builds_at_the_moved_threshold(spark, source, tmp_path, factor):
    """The rule of Gopher quality the table says drops most at a moved threshold, alone in a build
    at that threshold (every other filter and rule off), drops that many documents."""
    _, argv, _, built = source
    rows = [r for r in built["sensitivity"] if r["filter"] == "gopher_quality"]
    rule, point = max(
        ((r["rule"], p) for r in rows for p in r["points"] if p["factor"] == factor),
        key=lambda item: item[1]["dropped"],
    )
    assert point["dropped"] > 0
    only = ["--filter-set", "gopher_repetition.enabled=false", "--filter-set", "c4.enabled=false",
            "--filter-set", "fineweb.enabled=false", "--min-language-score", "off"]  # fmt: skip
    for key in GOPHER_QUALITY_RULES:
        value = point["threshold"] if key == rule else "off"
        only += ["--filter-set", f"gopher_quality.{key}={value}"]
    full = _build(spark, [*argv, "--output", str(tmp_path / "full"), *only])
    assert full["dropped"]["gopher_quality"] == point["dropped"]


UDHR = SHARED / "data" / "udhr2"


def test_fineweb2_recut_equals_a_full_build(spark, tmp_path):
    """Per-language profiles: the UDHR in 8 languages and scripts, whole and cut, with real English
    pages; a global override and a language score are re-judged per document's profile."""
    directory = shared_or_skip(UDHR)
    rows = []
    for k, stem in enumerate(("deu", "fra", "rus", "arb", "cmn_hans", "jpn", "khm", "spa")):
        text = "\n".join(
            line.strip() for line in (directory / f"{stem}.txt").read_text().splitlines() if line.strip()
        )
        for j, cut in enumerate((text, text[: len(text) // 3], text[: len(text) // 9])):
            rows.append(table_row(f"https://udhr{k}.example/{j}", cut, offset=100 * k + j))
    for i, path in enumerate(sorted(shared_or_skip(WCXB).glob("*.json"))[:30]):
        text = json.loads(path.read_text())["ground_truth"].get("main_content") or ""
        if text:
            rows.append(table_row(f"https://en.example/{i}", text, offset=5000 + i))
    table = tmp_path / "table"
    write_table(table, "combined", rows)
    argv = ["--input", str(table), "--filters", "fineweb2", "--dedup", "near"]
    _build(spark, [*argv, "--output", str(tmp_path / "src"), "--signals"])
    changes = ["--filter-set", "gopher_quality.min_words=400", "--min-language-score", "0.5"]
    out = tmp_path / "cut"
    assert cli.main(["select", "--from", str(tmp_path / "src"), "--output", str(out), *changes]) == 0
    full = _build(spark, [*argv, "--output", str(tmp_path / "full"), *changes])
    assert _docs(out) == _docs(tmp_path / "full") != _docs(tmp_path / "src")
    assert json.loads((out / "_report.json").read_text())["dropped"] == full["dropped"]


def test_verify_edges_recut_joins_band_hashes_and_sketches_to_every_passing_row(spark, source, tmp_path):
    """With --verify-edges a re-cut runs the whole duplicate search, so the pass gets the build's
    band hashes and sketches (and fresh ones for the documents it newly keeps): a tighter and a
    looser threshold both give the full build's documents."""
    root, argv, _, _ = source
    verify = [*argv, "--verify-edges"]
    _build(spark, [*verify, "--output", str(tmp_path / "src"), "--signals"])
    for i, changes in enumerate(
        (["--filter-set", "gopher_quality.min_words=150"], ["--filter-set", "gopher_quality.min_words=20"])
    ):
        out = tmp_path / f"cut{i}"
        assert cli.main(["select", "--from", str(tmp_path / "src"), "--output", str(out), *changes]) == 0
        full = _build(spark, [*verify, "--output", str(tmp_path / f"full{i}"), *changes])
        assert _docs(out) == _docs(tmp_path / f"full{i}"), changes
        assert json.loads((out / "_report.json").read_text())["dropped"] == full["dropped"]
