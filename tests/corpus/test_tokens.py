"""``--tokenizer``: every document's ``token_count`` in the documents and signals equals the
``tokenizers`` library's own count, the report's totals (per language, per filter, kept) are their
sums, ``select`` reuses or recounts them; a bad tokenizer file is one line, exit 2."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from contentx_udf.corpus import job as corpus_job
from contentx_udf.corpus import select as corpus_select

from .tables import WORDS, article, table_row, write_table

pytestmark = pytest.mark.spark


def train_tokenizer(path, texts, vocab_size: int = 400) -> str:
    """A byte-level BPE trained on ``texts`` with ``tokenizers``' own trainer, saved to ``path``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.save(str(path))
    return str(path)


def _rows(directory: str) -> list[dict]:
    """The rows of a table the job wrote (a local directory of Parquet files), read by pyarrow:
    no Spark job."""
    return pq.read_table(directory).to_pylist()


def own_count(path: str, text: str) -> int:
    from tokenizers import Tokenizer

    return len(Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """A corpus built with --tokenizer --signals --filters gopher: articles kept (one of them three
    times, exact copies), short pages the Gopher quality filter drops, a German page, a failure."""
    root = tmp_path_factory.mktemp("tokens")
    texts = ["\n".join(article(seed)) for seed in range(1, 7)]
    rows = [table_row(f"https://news.example/{i}", t, offset=i) for i, t in enumerate(texts)]
    rows += [table_row(f"https://copy.example/{i}", texts[0], offset=10 + i) for i in range(2)]
    rows += [
        table_row(f"https://short.example/{i}", " ".join(WORDS[i : i + 12]) + ".", offset=20 + i)
        for i in range(3)
    ]
    rows += [
        table_row(
            "https://news.example/de",
            "Der Gemeinderat hat am Dienstag nach langer Debatte den neuen Haushalt beschlossen; "
            "umstritten waren vor allem die Kosten für den Nahverkehr und die Sanierung der Brücke.",
            offset=30,
        ),
        table_row("https://news.example/broken", None, status="error", offset=31),
    ]
    write_table(root / "table", "combined", rows)
    tokenizer = train_tokenizer(root / "tokenizer.json", texts[:3])
    out = root / "corpus"
    code = corpus_job.main(
        [
            "--input",
            str(root / "table"),
            "--output",
            str(out),
            "--filters",
            "gopher",
            "--filter-set",
            "gopher_repetition.enabled=false",
            "--filter-set",
            "gopher_quality.min_stop_words=off",
            "--filter-set",
            "gopher_quality.min_alpha_words_ratio=off",
            "--dedup",
            "exact",
            "--signals",
            "--tokenizer",
            tokenizer,
        ]
    )
    assert code == 0
    return {"root": root, "corpus": out, "tokenizer": tokenizer, "texts": texts}


def test_counts_are_the_librarys_own_and_the_totals_their_sums(spark, built):
    report = json.loads((built["corpus"] / "_report.json").read_text())
    documents = _rows(str(built["corpus"] / "documents"))
    assert len(documents) == 6  # six articles (one standing for its exact copies)
    for row in documents:
        assert row["token_count"] == own_count(built["tokenizer"], row["text"]) > 0
    assert report["kept_tokens"] == sum(r["token_count"] for r in documents)
    assert report["tokenizer"]["sha256"] and report["tokenizer"]["vocab_size"] <= 400
    per_language = {x["language"]: x["tokens"] for x in report["languages"]}
    assert per_language == {
        lang: sum(r["token_count"] for r in documents if r["language"] == lang)
        for lang in {r["language"] for r in documents}
    }
    signals = _rows(str(built["corpus"] / "signals"))
    by_reason: dict[str, int] = {}
    for row in signals:
        reason = row["drop"] or (row["outcome"] if row["outcome"] != "kept" else None)
        if reason is not None:
            by_reason[reason] = by_reason.get(reason, 0) + (row["token_count"] or 0)
    assert {k: v for k, v in report["dropped_tokens"].items() if v} == {
        k: v for k, v in by_reason.items() if v
    }
    assert by_reason["exact_duplicate"] == 2 * own_count(built["tokenizer"], built["texts"][0])
    assert by_reason["gopher_quality"] > 0
    assert report["input_tokens"] == report["kept_tokens"] + sum(by_reason.values())
    markdown = (built["corpus"] / "report.md").read_text()
    assert "## Tokens" in markdown and f"**{report['kept_tokens']}**" in markdown


def test_select_reuses_the_builds_counts_or_counts_again(spark, built, capsys):
    """The first re-cut runs as a user runs it, ``contentx select`` in its own process at the
    default log level: its console is quiet (no JVM or Spark warning, no stage bar, only its own
    stage lines) and its summary says it is a re-cut, of which corpus, with what changed."""
    import subprocess
    import sys

    from ..spark.cluster import REPO, quick_jit_env

    same = built["root"] / "same"
    argv = ["select", "--from", str(built["corpus"]), "--output", str(same), "--filters", "none"]
    done = subprocess.run(
        [sys.executable, "-m", "contentx_udf", *argv],
        env=quick_jit_env(), capture_output=True, text=True, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for noise in ("WARN", "Using incubator modules", "[Stage", "Setting default log level"):
        assert noise not in done.stderr, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("contentx select: ") for line in lines), done.stderr[-3000:]
    summary = done.stdout.split("\ncontentx select summary\n", 1)[1]
    assert "contentx corpus summary" not in done.stdout
    assert summary.startswith(f"  a re-cut of the corpus {built['corpus']} "), summary[:500]
    assert "  changed from the build: --filters none\n" in summary, summary[:500]
    assert "tokens" in done.stdout.split("kept:")[1].splitlines()[0]
    eos = built["root"] / "eos"
    args = ["--from", str(built["corpus"]), "--output", str(eos), "--count-eos"]
    assert corpus_select.main(args) == 0
    for directory, extra in ((same, 0), (eos, 1)):
        documents = _rows(str(directory / "documents"))
        report = json.loads((directory / "_report.json").read_text())
        for row in documents:
            assert row["token_count"] == own_count(built["tokenizer"], row["text"]) + extra
        assert report["kept_tokens"] == sum(r["token_count"] for r in documents)
    # --filters none keeps the short pages (and the German one) the build's Gopher filter dropped
    assert len(_rows(str(same / "documents"))) == 6 + 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not a tokenizers tokenizer.json"),
        ('{"version": "1.0"}', "not a tokenizers tokenizer.json"),
    ],
)
def test_a_bad_tokenizer_file_is_one_line_exit_2(built, tmp_path, capsys, content, message):
    path = tmp_path / "tokenizer.json"
    if content is not None:
        path.write_text(content)
    args = [
        "--input",
        str(built["root"] / "table"),
        "--output",
        str(tmp_path / "out"),
        "--tokenizer",
        str(path),
    ]
    assert corpus_job.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("contentx corpus: error: --tokenizer")
    assert not (tmp_path / "out").exists()  # checked before any Spark work


def _card(directory) -> tuple[dict, str]:
    import yaml

    text = (directory / "README.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def test_the_corpus_card_says_what_the_corpus_holds(spark, built):
    report = json.loads((built["corpus"] / "_report.json").read_text())
    header, body = _card(built["corpus"])
    documents = _rows(str(built["corpus"] / "documents"))
    assert header["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "documents/*.parquet"}]}
    ]
    assert header["language"] == sorted({r["language"] for r in documents})
    assert header["task_categories"] == ["text-generation"] and header["size_categories"] == ["n<1K"]
    assert header["pretty_name"]
    row = f"| en | {len(documents)} | {sum(r['text_length'] for r in documents)} | "
    assert row + f"{sum(r['token_count'] for r in documents)} |" in body
    assert "1 WARC files" in body and "`gopher_quality`: min_words = 50" in body
    assert report["inputs"][0]["warc_files"] == 1
    # a table written by hand, its marker without the extraction record: said, not invented
    assert report["inputs"][0]["extraction"] == [None]
    assert "not recorded (the table was written before contentx recorded it)" in body


def test_the_card_names_the_extraction_model_of_each_batch():
    from contentx_udf.corpus.card import body

    record = {
        "contentx": "0.1.0",
        "methods": {
            "combined": {"model": "combined.npz (shipped)", "model_sha256": "ab12", "mode": "balanced"}
        },
    }
    older = {"contentx": "0.0.9", "methods": {"cetr": {"model": None}}}
    report = {
        "config": {"method": "combined"},
        "inputs": [{"table": "t1", "extraction": [record, None]}, {"table": "t2", "extraction": [older]}],
    }
    text = body(report)
    assert (
        "- `t1`: contentx 0.1.0: `combined` with model combined.npz (shipped) (SHA-256 `ab12`, mode "
        "balanced); not recorded" in text
    )
    assert "- `t2`: contentx 0.0.9: `cetr` (rules, no model)" in text


def _export(built, name: str, *extra: str) -> tuple[int, object]:
    from contentx_udf.corpus import export

    out = built["root"] / name
    code = export.main(["--from", str(built["corpus"]), "--output", str(out), *extra])
    return code, out


def _load(directory):
    import os

    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    return load_dataset(str(directory), cache_dir=str(directory.parent / f"{directory.name}-hf-cache"))


def _snapshot(directory) -> dict[str, bytes | None]:
    """Every path under ``directory``: a file's bytes, None for a folder."""
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None
        for p in sorted(directory.rglob("*"))
    }


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_export_loads_with_datasets_as_it_is(spark, built, fmt, capsys):
    args = ["--format", fmt, "--shard-size", "2KB", "--shuffle-seed", "7"]
    code, out = _export(built, f"export-{fmt}", *args)
    assert code == 0
    documents = _rows(str(built["corpus"] / "documents"))
    manifest = json.loads((out / "_manifest.json").read_text())
    assert (out / "_SUCCESS").exists() and not (out / "_staging").exists()
    assert len(manifest["shards"]) > 1  # about 2 KB a file
    loaded = _load(out)["train"]
    assert (
        len(loaded)
        == len(documents)
        == manifest["documents"]
        == sum(s["documents"] for s in manifest["shards"])
    )
    assert sorted(loaded["text"]) == sorted(r["text"] for r in documents)
    assert {"text", "id", "url", "language", "token_count"} <= set(loaded.column_names)
    by_text = {r["text"]: r["token_count"] for r in documents}
    assert all(by_text[t] == n for t, n in zip(loaded["text"], loaded["token_count"], strict=True))
    assert manifest["tokens"] == sum(by_text.values())
    header, _ = _card(out)
    suffix = "parquet" if fmt == "parquet" else "jsonl.gz"
    assert header["configs"][0]["data_files"][0]["path"] == f"data/*.{suffix}"
    # the same seed, the same order; --overwrite replaces the earlier export only
    assert _export(built, f"export-{fmt}", *args, "--overwrite")[0] == 0
    assert _load(out)["train"]["text"] == loaded["text"]
    # a file contentx did not write next to the finished export (at the top, or among the data
    # files): --overwrite is refused in one line that names it, and nothing there is touched
    foreign = "my-thesis.txt" if fmt == "parquet" else "data/notes.csv"
    (out / foreign).write_text("mine, not contentx's")
    before = _snapshot(out)
    assert {"_SUCCESS", "_manifest.json", "README.md", foreign} <= set(before)
    capsys.readouterr()
    assert _export(built, f"export-{fmt}", *args, "--overwrite")[0] == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"contentx export: error: --output {out} holds files "), err
    assert f"contentx did not write ({foreign}); nothing was touched" in err[0], err
    assert _snapshot(out) == before


def test_datatrove_shards_hold_each_documents_tokens_and_the_eos(spark, built):
    from tokenizers import Tokenizer

    from contentx_udf.corpus.shards import read_datatrove

    code, out = _export(
        built,
        "export-ds",
        "--format",
        "datatrove",
        "--tokenizer",
        built["tokenizer"],
        "--eos-token",
        "<|endoftext|>",
    )
    assert code == 0
    own = Tokenizer.from_file(built["tokenizer"])
    eos = own.token_to_id("<|endoftext|>")
    texts = [r["text"] for r in _rows(str(built["corpus"] / "documents"))]
    expected = sorted(tuple(own.encode(t, add_special_tokens=False).ids) + (eos,) for t in texts)
    manifest = json.loads((out / "_manifest.json").read_text())
    found = []
    for shard in manifest["shards"]:
        ds = (out / shard["file"]).read_bytes()
        sequences = read_datatrove(ds, (out / (shard["file"] + ".index")).read_bytes(), 2)
        assert len(sequences) == shard["documents"] and sum(map(len, sequences)) == shard["tokens"]
        meta = (out / (shard["file"] + ".metadata")).read_text().splitlines()
        assert meta[0] == f"{built['tokenizer']}|2" and int(meta[1]) == shard["tokens"]
        found += [tuple(int(i) for i in s) for s in sequences]
    assert sorted(found) == expected
    assert manifest["token_bytes"] == 2 and manifest["tokens"] == sum(map(len, expected))


def test_export_to_a_hadoop_only_filesystem_through_sparks_writers(spark, built, tmp_path, capsys):
    """``--output viewfs://...`` (a filesystem pyarrow cannot write): parquet and jsonl written by
    Spark's writers through Hadoop's, loaded by ``datasets`` from the mount's directory with every
    document, token counts counted again with --tokenizer; datatrove's binary shards refused in
    one line before any task."""
    import uuid

    from contentx_udf.corpus import export

    table = f"mt{uuid.uuid4().hex[:8]}"
    (tmp_path / "data").mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{table}.link./data", (tmp_path / "data").as_uri()
    )
    documents = _rows(str(built["corpus"] / "documents"))
    by_text = {r["text"]: r["token_count"] for r in documents}
    for fmt in ("parquet", "jsonl"):
        out = f"viewfs://{table}/data/{fmt}"
        args = ["--format", fmt, "--shard-size", "2KB", "--tokenizer", built["tokenizer"]]
        assert export.main(["--from", str(built["corpus"]), "--output", out, *args]) == 0
        local = tmp_path / "data" / fmt
        manifest = json.loads((local / "_manifest.json").read_text())
        assert (local / "_SUCCESS").exists() and not (local / "_staging").exists()
        files = sorted(p.name for p in (local / "data").iterdir() if not p.name.startswith("."))  # (.crc)
        assert len(manifest["shards"]) > 1 and files == [s["file"].split("/")[1] for s in manifest["shards"]]
        assert all((local / s["file"]).stat().st_size == s["bytes"] for s in manifest["shards"])
        loaded = _load(local)["train"]
        assert len(loaded) == len(documents) == manifest["documents"]
        assert sorted(loaded["text"]) == sorted(by_text)
        assert all(by_text[t] == n for t, n in zip(loaded["text"], loaded["token_count"], strict=True))
        assert manifest["tokens"] == sum(s["tokens"] for s in manifest["shards"]) == sum(by_text.values())
    capsys.readouterr()
    code = export.main(
        ["--from", str(built["corpus"]), "--output", f"viewfs://{table}/data/ds", "--format", "datatrove"]
        + ["--tokenizer", built["tokenizer"]]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot write exact binary files" in err[0]
    assert not (tmp_path / "data" / "ds" / "data").exists()


def test_export_refuses_an_unfinished_corpus_and_a_foreign_directory(built, tmp_path, capsys):
    import shutil

    from contentx_udf.corpus import export

    unfinished = tmp_path / "unfinished"
    shutil.copytree(built["corpus"], unfinished)
    (unfinished / "_SUCCESS").unlink()
    args = ["--from", str(unfinished), "--output", str(tmp_path / "out"), "--format", "parquet"]
    assert export.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a finished corpus (no _SUCCESS)" in err[0]
    assert not (tmp_path / "out").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    args = ["--from", str(built["corpus"]), "--output", str(foreign), "--format", "jsonl", "--overwrite"]
    assert export.main(args) == 2
    assert "not an export of contentx" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "mine"
    args = ["--from", str(built["corpus"]), "--output", str(tmp_path / "o"), "--format", "datatrove"]
    assert export.main(args) == 2
    assert "needs --tokenizer" in capsys.readouterr().err
