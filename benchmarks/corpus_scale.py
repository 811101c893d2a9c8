"""The corpus job at scale: near dedup of a synthetic extraction table with a known answer.

    python benchmarks/corpus_scale.py --docs 100000 [1000000 ...] [--peer] [--work /tmp/contentx-scale]

1. **Lines of real pages.** The WCXB development pages (``../shared/data/wcxb-dev``) are written
   into a WARC and run through the extraction job (``combined``); the lines of its ``ok`` texts
   (English pages), paragraphs cut into pieces of at most 40 words, are the material (cached in
   ``WORK/lines-v2.json``).
2. **A table with a known answer**, for each ``--docs N``: 80 % originals, each 20-50 lines drawn
   at random from the pool, some with recurring boilerplate lines (a cookie notice, a newsletter
   line, a footer); 10 % exact copies of an original with other case and spacing; 10 % near copies
   of an original with one line replaced by another and a dated line added.  Written as an
   extraction table (method ``combined``, commit marker), files of 50,000 rows.  The right answer
   is one document per original.
3. **contentx**: ``jobs/build_corpus.py --input TABLE --output OUT --dedup near`` (the repository's
   ``conf/``: embedded ``local[*,3]`` Spark, 2 GB driver) in a subprocess, polled every 0.2 s for
   the peak RSS of its JVM and of its Python workers; prints seconds, input rows/s, documents kept
   against the originals, and whether the log holds an ``OutOfMemoryError``.
4. **A quality model** (``--quality-model``): a fastText classifier as DCLM's (word bigrams,
   softmax, 32 dimensions, 2,000,000 buckets: 256 MB) trained here with ``fasttext-new`` on the
   line pool (documents with a boilerplate line against the others: what it learns does not
   matter, its cost does), and the same build with ``--quality-model bench=MODEL`` after each
   build without it (``--rounds`` pairs); prints the ratio of the median times (issue 42: at most
   1.15 at 100,000 documents).
5. **datatrove** (``--peer``, on the smallest ``--docs``): the same documents as JSONL through its
   MinHash pipeline in the FineWeb configuration (``benchmarks/datatrove_minhash.py``), with the
   same 2 workers, in the same run.  Needs the ``bench`` extra.

6. **Token counts** (``--tokenizer FILE``, or ``--tokenizer bpe``: a byte-level BPE of 32,000 ids
   trained here on the line pool with ``tokenizers``' own trainer): each build is run again with
   ``--tokenizer``, right after the one without (``--rounds`` pairs), and the time it adds is
   printed (``token_overhead``: the ratio of the median times, less one).

Ends with a ``RESULT`` line.  A benchmark, not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
#: the shared data (``CONTENTX_SHARED``, as the tests: a worktree is not beside it)
WCXB = Path(os.environ.get("CONTENTX_SHARED", REPO.parent / "shared")) / "data" / "wcxb-dev"
ROWS_PER_FILE = 50_000
BATCH = "20240601T000000-5ca1e000"
BOILERPLATE = (
    "We use cookies to improve your experience. By continuing to browse you agree to our use of cookies.",
    "Sign up for our newsletter to get the latest stories delivered to your inbox every week.",
    "Copyright 2024 All rights reserved. Terms of use and privacy policy apply.",
    "Share this article on Facebook, Twitter and LinkedIn.",
)


def wcxb_warc(path: Path) -> int:
    """The WCXB dev pages as one WARC of response records (their URLs from the ground truth)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    pages = 0
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for html_path in sorted((WCXB / "html").glob("*.html.gz")):
            page_id = html_path.name.split(".")[0]
            truth = json.loads((WCXB / "ground-truth" / f"{page_id}.json").read_text())
            body = gzip.decompress(html_path.read_bytes())
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            record = writer.create_warc_record(
                truth.get("url") or f"https://wcxb.example/{page_id}",
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": "2025-01-01T00:00:00Z"},
            )
            writer.write_record(record)
            pages += 1
    return pages


#: A line of the pool has at most this many words: longer paragraphs are cut into pieces, so no
#: single line makes up most of a document (two originals sharing one 2,000-word paragraph would
#: be near duplicates, not the distinct documents the known answer counts them as).
MAX_LINE_WORDS = 40


def pieces(line: str) -> list[str]:
    """A line of 3 words or more, cut into pieces of at most :data:`MAX_LINE_WORDS` words."""
    words = line.split()
    if len(words) < 3:
        return []
    return [" ".join(words[i : i + MAX_LINE_WORDS]) for i in range(0, len(words), MAX_LINE_WORDS)]


def line_pool(work: Path) -> list[str]:
    """Lines of the English ``ok`` texts of the WCXB dev pages (via the job), cut by :func:`pieces`."""
    cache = work / "lines-v2.json"
    if cache.exists():
        return json.loads(cache.read_text())
    from contentx_udf.runtime.session import spark_session
    from contentx_udf.spark import job as extract_job
    from contentx_udf.spark.config import JobConfig

    warc = work / "wcxb-dev.warc.gz"
    pages = wcxb_warc(warc)
    spark = spark_session("contentx-scale-lines")
    table = work / "wcxb-table"
    extract_job.run(
        JobConfig(inputs=[str(warc)], output=str(table), progress_seconds=0, overwrite=True), spark=spark
    )
    rows = spark.read.parquet(str(table)).where("status = 'ok' and language = 'en'").select("text").collect()
    spark.stop()
    lines = sorted({piece for r in rows for ln in r["text"].split("\n") for piece in pieces(ln)})
    print(
        f"line pool: {pages} WCXB dev pages through the job, {len(rows)} English ok texts, {len(lines)} lines"
    )
    cache.write_text(json.dumps(lines))
    return lines


def synthetic_documents(n: int, lines: list[str], seed: int = 0):
    """``(url, text, kind)`` of ``n`` documents: 80 % originals, 10 % exact copies, 10 % near copies."""
    rng = random.Random(seed)
    originals: list[str] = []
    n_originals = n * 8 // 10
    kinds = ["original"] * n_originals + ["exact"] * (n // 10) + ["near"] * (n - n_originals - n // 10)
    rng.shuffle(kinds)
    # a copy needs an original before it: the first documents are originals
    first_copy = next((i for i, k in enumerate(kinds) if k != "original"), len(kinds))
    if first_copy == 0:
        swap = kinds.index("original")
        kinds[0], kinds[swap] = kinds[swap], kinds[0]
    for i, kind in enumerate(kinds):
        if kind == "original" or not originals:
            body = [rng.choice(lines) for _ in range(rng.randint(20, 50))]
            for line in BOILERPLATE:
                if rng.random() < 0.3:
                    body.insert(rng.randrange(len(body) + 1), line)
            text = "\n".join(body)
            originals.append(text)
            kind = "original"
        elif kind == "exact":
            source = rng.choice(originals)
            text = source.upper() if rng.random() < 0.5 else re.sub(r" ", "  ", source).replace("\n", " \n ")
        else:
            body = rng.choice(originals).split("\n")
            body[rng.randrange(len(body))] = rng.choice(lines)
            day = rng.randint(1, 28)
            body.insert(
                rng.randrange(len(body) + 1), f"Updated on {day} June 2024 at 10:{day:02d} by the web desk."
            )
            text = "\n".join(body)
        yield f"https://site{rng.randrange(5000)}.example/page/{i}", text, kind


def write_rows(table: Path, docs, day: int = 1, jsonl: Path | None = None) -> None:
    """An extraction table (method ``combined``, files of 50,000 rows, a commit marker) of the
    ``(url, text)`` or ``(url, text, language)`` tuples ``docs`` (language ``en`` when not given;
    ``warc_record_offset`` is the document's position); the same documents as JSONL files in
    ``jsonl`` for datatrove."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from contentx_udf.spark.worker import arrow_schema
    from contentx_udf.text.language import text_hash

    schema = arrow_schema()
    schema = schema.remove(schema.get_field_index("method"))
    part_dir = table / "method=combined"
    part_dir.mkdir(parents=True)
    if jsonl is not None:
        jsonl.mkdir(parents=True)
    start = datetime(2024, 6, day, tzinfo=UTC)
    rows, files = [], 0

    def flush() -> None:
        nonlocal rows, files
        if not rows:
            return
        columns = {name: [r.get(name) for r in rows] for name in schema.names}
        pq.write_table(
            pa.Table.from_pydict(columns, schema=schema),
            part_dir / f"b{BATCH}-part-{files:05d}.parquet",
            compression="zstd",
        )
        if jsonl is not None:
            with open(jsonl / f"part-{files:05d}.jsonl", "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps({"id": str(r["warc_record_offset"]), "text": r["text"]}) + "\n")
        files += 1
        rows = []

    for i, (url, text, *language) in enumerate(docs):
        rows.append(
            {
                "url": url,
                "url_host_name": url.split("/")[2],
                "fetch_time": start + timedelta(seconds=i),
                "warc_filename": f"synthetic-{i // ROWS_PER_FILE:05d}.warc.gz",
                "warc_record_offset": i,
                "warc_record_length": 1000,
                "title": url,
                "text": text,
                "text_length": len(text),
                "language": language[0] if language else "en",
                "language_score": 0.9,
                "text_hash": text_hash(text),
                "scores": [("content_confidence", 0.9)],
                "status": "ok",
                "error": None,
            }
        )
        if len(rows) == ROWS_PER_FILE:
            flush()
    flush()
    markers = table / "_contentx" / "batches"
    markers.mkdir(parents=True)
    (markers / f"{BATCH}.json").write_text(json.dumps({"batch": BATCH, "files": ["synthetic"]}))


def write_table(n: int, lines: list[str], table: Path, jsonl: Path | None) -> int:
    """Write the synthetic table (and the JSONL for datatrove); returns the number of originals."""
    originals = 0

    def docs():
        nonlocal originals
        for url, text, kind in synthetic_documents(n, lines):
            originals += kind == "original"
            yield url, text

    write_rows(table, docs(), jsonl=jsonl)
    return originals


class PeakRss:
    """Polls the process tree of ``pid`` for the peak RSS (MiB) of Java and of Python workers."""

    def __init__(self, pid: int):
        self.pid = pid
        self.jvm = 0.0
        self.python_workers = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _tree(self) -> dict[int, int]:
        """``{pid: parent pid}`` of the tree."""
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(ppid, []).append(int(entry))
        out, todo = {}, [(self.pid, 0)]
        while todo:
            p, parent = todo.pop()
            out[p] = parent
            todo += [(c, p) for c in children.get(p, [])]
        return out

    def _poll(self) -> None:
        while not self._stop.is_set():
            jvm = workers = 0.0
            tree = self._tree()
            seen = {}
            for p in tree:
                try:
                    status = Path(f"/proc/{p}/status").read_text()
                    cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
                rss = (
                    next((int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS:")), 0) / 1024
                )
                seen[p] = (cmd, rss)
            for p, (cmd, rss) in seen.items():
                if os.path.basename(cmd.split(b" ")[0]) == b"java":
                    # not a process the JVM is spawning (Hadoop's chmod, say): until it execs, it
                    # shares the JVM's memory and its RSS reads as the JVM's
                    parent = seen.get(tree[p])
                    if parent is None or os.path.basename(parent[0].split(b" ")[0]) != b"java":
                        jvm += rss
                elif b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
                    workers += rss
            self.jvm = max(self.jvm, jvm)
            self.python_workers = max(self.python_workers, workers)
            self._stop.wait(0.2)


def train_bpe(lines: list[str], path: Path, vocab: int = 32_000) -> None:
    """A byte-level BPE of ``vocab`` ids trained on ``lines`` with ``tokenizers``' own trainer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(lines, trainer)
    tokenizer.save(str(path))


def run_contentx(table: Path, output: Path, log: Path, extra: list[str]) -> dict:
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)  # the job points it at the repository's conf/
    job = str(REPO / "jobs" / "build_corpus.py")
    cmd = [
        sys.executable,
        job,
        "--input",
        str(table),
        "--output",
        str(output),
        "--dedup",
        "near",
        "--overwrite",
    ]
    cmd += extra
    started = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        with PeakRss(proc.pid) as rss:
            code = proc.wait()
    seconds = time.perf_counter() - started
    text = log.read_text(errors="replace")
    report = json.loads((output / "_report.json").read_text()) if code == 0 else None
    return {
        "code": code,
        "seconds": seconds,
        "report": report,
        "jvm_mb": rss.jvm,
        "workers_mb": rss.python_workers,
        "oom": "OutOfMemoryError" in text,
        "log": str(log),
    }


def paired_rounds(
    first: dict,
    rounds: int,
    table: Path,
    corpus: Path,
    job_args: list[str],
    extra: list[str],
    suffix: str,
    label: str,
    describe,
) -> tuple[list[float], list[float], dict] | None:
    """``rounds`` pairs of builds of ``table``: the plain build into ``corpus`` (the first pair
    reuses ``first``), then the same with ``extra`` into ``corpus-SUFFIX``, one after the other so
    that a change in the machine's load reaches both sides.  Prints each round (``describe`` gives
    what it says of the build with ``extra``); returns the plain and the other seconds and the last
    build with ``extra``, or None (said) when one failed."""
    plain, timed, last = [first["seconds"]], [], first
    for k in range(rounds):
        if k:
            again = run_contentx(table, corpus, corpus.with_name(f"{corpus.name}.log"), job_args)
            plain.append(again["seconds"])
        other = corpus.with_name(f"{corpus.name}-{suffix}")
        last = run_contentx(table, other, other.with_name(f"{other.name}.log"), [*job_args, *extra])
        if last["code"] != 0:
            print(f"contentx corpus with {label} failed; log: {other}.log")
            return None
        timed.append(last["seconds"])
        print(
            f"round {k + 1}: {plain[-1]:.1f} s without {label}, {timed[-1]:.1f} s with it "
            f"(+{timed[-1] / plain[-1] - 1:.1%}), {describe(last)}"
        )
    return plain, timed, last


def train_quality_model(work: Path, lines: list[str]) -> Path:
    """A DCLM-shaped fastText model (word bigrams, dim 32, 2M buckets) trained on the line pool."""
    import fasttext_new

    path = work / "quality-bench.bin"
    if path.exists():
        return path
    rng = random.Random(42)
    rows = []
    for i in range(4000):
        doc = " ".join(rng.choice(lines) for _ in range(rng.randint(5, 30)))
        label = "__label__cc" if i % 2 else "__label__hq"
        if label == "__label__cc":
            doc += " " + rng.choice(BOILERPLATE)
        rows.append(f"{label} {doc}")
    data = work / "quality-bench.txt"
    data.write_text("\n".join(rows) + "\n")
    model = fasttext_new.train_supervised(
        str(data), dim=32, wordNgrams=2, bucket=2_000_000, epoch=3, thread=2, verbose=0
    )
    model.save_model(str(path))
    return path


def run_datatrove(jsonl: Path, work: Path) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "datatrove_minhash.py"), "--input", str(jsonl), "--work",
         str(work), "--workers", "2"],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"datatrove failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, nargs="+", default=[100_000])
    parser.add_argument("--peer", action="store_true", help="also datatrove's MinHash on the smallest --docs")
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-scale"))
    parser.add_argument("--keep-tables", action="store_true", help="reuse tables already written in --work")
    parser.add_argument(
        "--job-args", default="", help="extra arguments for the corpus job, e.g. '--verify-edges'"
    )
    parser.add_argument(
        "--tokenizer",
        default=None,
        metavar="FILE|bpe",
        help="also build with --tokenizer FILE (bpe: one trained here on the line pool) and print its cost",
    )
    parser.add_argument(
        "--quality-model",
        action="store_true",
        help="also the same build with a fastText quality model trained here, and the time ratio",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="builds without and with the model or the tokenizer (pairs)"
    )
    args = parser.parse_args()
    if not WCXB.exists():
        sys.exit(f"missing {WCXB} (set CONTENTX_SHARED)")
    args.work.mkdir(parents=True, exist_ok=True)
    lines = line_pool(args.work)
    tokenizer = args.tokenizer
    if tokenizer == "bpe":
        tokenizer = str(args.work / "bpe-32000.json")
        train_bpe(lines, Path(tokenizer))
    results = []
    token_runs = []
    peer = None
    for n in sorted(args.docs):
        table, jsonl = args.work / f"table-{n}", args.work / f"jsonl-{n}"
        want_jsonl = args.peer and n == min(args.docs)
        meta = args.work / f"table-{n}.json"
        if not (args.keep_tables and meta.exists()) or (want_jsonl and not jsonl.exists()):
            shutil.rmtree(table, ignore_errors=True)
            shutil.rmtree(jsonl, ignore_errors=True)
            started = time.perf_counter()
            originals = write_table(n, lines, table, jsonl if want_jsonl else None)
            meta.write_text(json.dumps({"originals": originals}))
            print(f"{n} documents written in {time.perf_counter() - started:.0f} s ({originals} originals)")
        originals = json.loads(meta.read_text())["originals"]
        run = run_contentx(
            table, args.work / f"corpus-{n}", args.work / f"corpus-{n}.log", args.job_args.split()
        )
        if run["code"] != 0:
            print(
                f"contentx corpus failed on {n} documents (exit {run['code']}); "
                f"log: {args.work}/corpus-{n}.log"
            )
            return 1
        kept = run["report"]["kept"]
        if args.quality_model:
            model = train_quality_model(args.work, lines)
            paired = paired_rounds(
                run, args.rounds, table, args.work / f"corpus-{n}", args.job_args.split(),
                ["--quality-model", f"bench={model}"], "q", "the model",
                lambda scored: (
                    f"kept {scored['report']['kept']}, Python workers {scored['workers_mb']:.0f} MB"
                ),
            )  # fmt: skip
            if paired is None:
                return 1
            plain, scored, _ = paired
            without, with_ = statistics.median(plain), statistics.median(scored)
            run["quality"] = {"plain": plain, "scored": scored, "ratio": with_ / without}
            print(
                f"quality model, {n} docs: median {without:.1f} s without, {with_:.1f} s with: "
                f"x {run['quality']['ratio']:.3f}"
            )
        results.append((n, originals, run))
        if tokenizer:
            paired = paired_rounds(
                run, args.rounds, table, args.work / f"corpus-{n}", args.job_args.split(),
                ["--tokenizer", tokenizer], "tokens", "--tokenizer",
                lambda counted: (
                    f"kept {counted['report']['kept_tokens']} tokens, peak RSS JVM "
                    f"{counted['jvm_mb']:.0f} MB, Python workers {counted['workers_mb']:.0f} MB"
                ),
            )  # fmt: skip
            if paired is None:
                return 1
            plain, counted_s, counted = paired
            without_s, with_s = statistics.median(plain), statistics.median(counted_s)
            token_runs.append((n, without_s, with_s, counted["report"]["kept_tokens"]))
            print(
                f"contentx {n} docs with --tokenizer: median {with_s:.1f} s against {without_s:.1f} s "
                f"(+{with_s / without_s - 1:.1%}) over {args.rounds} round(s)"
            )
        print(
            f"contentx {n} docs: {run['seconds']:.1f} s, {n / run['seconds']:.0f} input rows/s, "
            f"kept {kept} of {originals} originals ({kept / originals:.2%}), "
            f"dropped {run['report']['dropped']}, peak RSS JVM {run['jvm_mb']:.0f} MB, "
            f"Python workers {run['workers_mb']:.0f} MB, OutOfMemoryError: {'YES' if run['oom'] else 'no'}"
        )
        if want_jsonl:
            peer = run_datatrove(jsonl, args.work / f"datatrove-{n}")
            peer["docs"] = n
            peer["originals"] = originals
            print(
                f"datatrove {n} docs: {peer['seconds']:.1f} s, {n / peer['seconds']:.0f} input rows/s, kept "
                f"{peer['kept']} of {originals} originals ({peer['kept'] / originals:.2%})"
            )
    parts = []
    for n, originals, run in results:
        parts += [
            f"docs={n}",
            f"seconds={run['seconds']:.1f}",
            f"rows_per_s={n / run['seconds']:.0f}",
            f"kept_vs_originals={run['report']['kept'] / originals:.4f}",
            f"jvm_mb={run['jvm_mb']:.0f}",
            f"workers_mb={run['workers_mb']:.0f}",
            f"oom={int(run['oom'])}",
        ]
        if "quality" in run:
            parts.append(f"quality_model_ratio={run['quality']['ratio']:.3f}")
    for n, without, with_tokens, kept_tokens in token_runs:
        overhead = with_tokens / without - 1
        parts += [f"tokens_docs={n}", f"seconds_with_tokenizer={with_tokens:.1f}",
                  f"token_overhead={overhead:.3f}", f"kept_tokens={kept_tokens}"]  # fmt: skip
    if len(results) > 1:
        (n0, _, r0), (n1, _, r1) = results[0], results[-1]
        parts.append(f"time_ratio_{n1 // n0}x={r1['seconds'] / r0['seconds']:.2f}")
    if peer:
        parts += [f"datatrove_docs={peer['docs']}", f"datatrove_seconds={peer['seconds']:.1f}",
                  f"datatrove_rows_per_s={peer['docs'] / peer['seconds']:.0f}",
                  f"datatrove_kept_vs_originals={peer['kept'] / peer['originals']:.4f}"]  # fmt: skip
        n_max, _, r_max = results[-1]
        parts.append(
            f"speed_vs_datatrove={(n_max / r_max['seconds']) / (peer['docs'] / peer['seconds']):.2f}"
        )
    print("RESULT " + " ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
