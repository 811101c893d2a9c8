"""Token counts and tokenized shards on real pages, against the ``tokenizers`` library and datatrove.

    python benchmarks/token_export.py [--copies 20] [--vocab 32000] [--work /tmp/contentx-tokens]

1. **Texts.** The development pages (WCXB dev and scrapinghub, 1,678 pages) extracted with
   ``combined``; the ``ok`` texts are written as an extraction table, ``--copies`` times (each copy
   under other URLs, so a build with ``--dedup none`` keeps them all: a bigger job for the speed).
2. **A BPE tokenizer trained here** (``tokenizers``' own ``BpeTrainer``, byte-level, ``--vocab``
   ids, ``<|endoftext|>`` among its special tokens) on the texts.
3. **Counts exact.** ``contentx corpus --dedup none --tokenizer tok.json``: every kept document's
   ``token_count`` against ``len(tokenizer.encode(text, add_special_tokens=False).ids)``, and the
   report's totals (kept, per language) against their sums.
4. **Shards exact and their speed.** ``contentx export --format datatrove --eos-token
   '<|endoftext|>'`` against datatrove's ``DocumentTokenizer`` (no shuffling, the same
   ``eos_token``) over the same documents (JSONL, one file per worker, 2 workers), in the same run:
   the per-document token sequences compared as multisets (numpy over the documented layout), and
   tokens per second per core of each (wall time of the whole command, JVM start included, x 2
   cores).

Ends with a ``RESULT`` line.  A benchmark, not a test: it prints figures.  Needs the ``bench`` extra
(datatrove) and ``tokenizers``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
#: the shared data (``CONTENTX_SHARED``, as the tests: a worktree is not beside it)
SHARED = Path(os.environ.get("CONTENTX_SHARED", REPO.parent / "shared")) / "data"
GOLD = (SHARED / "wcxb-dev", SHARED / "scrapinghub")
EOS = "<|endoftext|>"
CORES = 2


def page_texts() -> list[tuple[str, str]]:
    """``(url, text)`` of every development page ``combined`` extracts a text from."""
    from contentx_udf import extract
    from contentx_udf.evaluation import load_gold

    out = []
    for gold in GOLD:
        for page in load_gold(gold):
            ex = extract(page.html, "combined", url=page.url)
            if ex.status == "ok" and ex.text:
                out.append((page.url or f"https://{gold.name}.example/{page.id}", ex.text))
    return out


def write_extraction_table(texts: list[tuple[str, str]], copies: int, table: Path) -> int:
    from tests.corpus.tables import table_row, write_table

    rows = []
    for copy in range(copies):
        for i, (url, text) in enumerate(texts):
            row = table_row(f"{url.rstrip('/')}/copy-{copy}", text, offset=copy * len(texts) + i)
            rows.append(row)
    write_table(table, "combined", rows)
    return len(rows)


def train(texts: list[str], vocab: int, path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=[EOS], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.save(str(path))


def contentx(*args: str, log: Path) -> float:
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    started = time.perf_counter()
    with open(log, "w") as fh:
        cmd = [sys.executable, "-m", "contentx_udf", *args]
        code = subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    if code != 0:
        raise SystemExit(f"contentx {args[0]} failed (exit {code}); log: {log}")
    return time.perf_counter() - started


def datatrove_tokenize(documents: list[str], tokenizer: Path, work: Path) -> float:
    """datatrove's DocumentTokenizer over ``documents`` (JSONL, one file per worker): seconds."""
    data = work / "datatrove-in"
    data.mkdir(parents=True)
    for part in range(CORES):
        with gzip.open(data / f"{part}.jsonl.gz", "wt", encoding="utf-8") as fh:
            for i in range(part, len(documents), CORES):
                fh.write(json.dumps({"text": documents[i], "id": str(i)}) + "\n")
    script = f"""
if __name__ == "__main__":
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens.tokenizer import DocumentTokenizer
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader({str(data)!r}),
            DocumentTokenizer({str(work / "datatrove-out")!r}, tokenizer_name_or_path={str(tokenizer)!r},
                              eos_token={EOS!r}, shuffle_documents=False),
        ],
        tasks={CORES}, workers={CORES}, logging_dir={str(work / "datatrove-logs")!r},
    ).run()
"""
    (work / "dt.py").write_text(script)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(work / "dt.py")], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"datatrove failed:\n{proc.stderr[-3000:]}")
    return seconds


def sequences(folder: Path, token_bytes: int) -> list[tuple[int, ...]]:
    from contentx_udf.corpus.shards import read_datatrove

    out = []
    for ds in sorted(folder.rglob("*.ds")):
        index = ds.with_name(ds.name + ".index").read_bytes()
        out += [tuple(s.tolist()) for s in read_datatrove(ds.read_bytes(), index, token_bytes)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=20, help="copies of every page (default 20)")
    parser.add_argument("--vocab", type=int, default=32000, help="BPE vocabulary (default 32000)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-tokens"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    started = time.perf_counter()
    texts = page_texts()
    print(f"pages extracted: {len(texts)} texts ({time.perf_counter() - started:.0f} s)", flush=True)
    tokenizer = args.work / "tokenizer.json"
    train([t for _, t in texts], args.vocab, tokenizer)
    rows = write_extraction_table(texts, args.copies, args.work / "table")
    corpus = args.work / "corpus"
    build = ["--input", str(args.work / "table"), "--output", str(corpus), "--dedup", "none"]
    seconds = contentx("corpus", *build, "--tokenizer", str(tokenizer), log=args.work / "corpus.log")
    print(f"corpus of {rows} rows built in {seconds:.0f} s", flush=True)

    import pyarrow.parquet as pq
    from tokenizers import Tokenizer

    own = Tokenizer.from_file(str(tokenizer))
    documents = pq.read_table(corpus / "documents", columns=["text", "language", "token_count"]).to_pylist()
    report = json.loads((corpus / "_report.json").read_text())
    texts_once = {t for _, t in texts}
    distinct = sorted(texts_once)
    encoded = own.encode_batch(distinct, add_special_tokens=False)
    counts = {t: len(e.ids) for t, e in zip(distinct, encoded, strict=True)}
    wrong = sum(d["token_count"] != counts[d["text"]] for d in documents)
    per_language = Counter()
    for d in documents:
        per_language[d["language"]] += d["token_count"]
    totals_ok = report["kept_tokens"] == sum(d["token_count"] for d in documents) and all(
        x["tokens"] == per_language[x["language"]] for x in report["languages"]
    )
    print(
        f"counts: {len(documents)} documents ({len(texts_once)} distinct texts), {wrong} counts differ from "
        f"tokenizers' own; totals equal their sums: {totals_ok} (kept {report['kept_tokens']} tokens)",
        flush=True,
    )

    export = args.work / "export"
    # files of 8 MB: several tasks, so the export uses both cores as datatrove's two workers do
    options = ["--format", "datatrove", "--tokenizer", str(tokenizer), "--eos-token", EOS]
    options += ["--shard-size", "8MB"]
    ours = contentx(
        "export", "--from", str(corpus), "--output", str(export), *options, log=args.work / "export.log"
    )
    theirs = datatrove_tokenize([d["text"] for d in documents], tokenizer, args.work)
    manifest = json.loads((export / "_manifest.json").read_text())
    mine = Counter(sequences(export / "data", manifest["token_bytes"]))
    peer = Counter(sequences(args.work / "datatrove-out", manifest["token_bytes"]))
    same = mine == peer
    tokens = manifest["tokens"]
    ours_rate, theirs_rate = tokens / ours / CORES, sum(len(s) * n for s, n in peer.items()) / theirs / CORES
    print(
        f"shards: {manifest['documents']} documents, {tokens} tokens in {len(manifest['shards'])} file(s); "
        f"the same per-document sequences as datatrove's DocumentTokenizer: {same}",
        flush=True,
    )
    print(
        f"speed: contentx export {ours:.1f} s ({ours_rate:,.0f} tokens/s/core), datatrove {theirs:.1f} s "
        f"({theirs_rate:,.0f} tokens/s/core): ratio {ours_rate / theirs_rate:.2f}",
        flush=True,
    )
    print(
        f"RESULT pages={len(texts)} documents={len(documents)} counts_differing={wrong} "
        f"totals_ok={int(totals_ok)} "
        f"shards_same={int(same)} tokens={tokens} export_s={ours:.1f} datatrove_s={theirs:.1f} "
        f"tokens_per_s_core={ours_rate:.0f} datatrove_tokens_per_s_core={theirs_rate:.0f} "
        f"speed_ratio={ours_rate / theirs_rate:.2f}"
    )
    return 0 if wrong == 0 and totals_ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
