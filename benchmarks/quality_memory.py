"""What a worker pays in memory for a quality model: two worker processes score with one model of
at least 1 GB, and their summed PSS (proportional set size: a page shared by two processes counts
half in each) is measured before the model is opened and after.

    python benchmarks/quality_memory.py [--model-gb 1.1] [--with-fasttext]

The model: a fastText supervised model trained here by fasttext-new on a few WCXB dev texts, with
``dim`` 128 and enough hash buckets to weigh ``--model-gb``.  Each worker is a fresh Python process
(``spawn``, as a Spark executor's Python worker is a process that has not opened the model):

1. its PSS after importing contentx (the baseline);
2. after :meth:`QualityModel.open` and scoring the 1,678 extracted pages (the rows they touch);
3. after reading every row of the input matrix (the worst case: every page of the file mapped in
   both processes).

and each worker's own (anonymous) memory once the model is open (the dictionary's look-up tables:
what a worker pays per model beyond the shared file) and after scoring (with the scoring's own
buffers, and the UTF-8 copies CPython keeps of the non-ASCII texts scored from a list of str).

The two workers hold their mappings until both have measured.  The goal (issue 42): the summed PSS
grows by at most 1.3 x the model's size.  ``--with-fasttext`` also measures fastText's own
``load_model`` in two processes (it reads the matrices into each process's own memory).
Prints one RESULT line.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _quality_pages import DEFAULT_CACHE, extracted_pages  # noqa: E402


def rollup_kb(field: str = "Pss") -> int:
    """A field of this process's ``/proc/self/smaps_rollup`` in kB: ``Pss`` (proportional set
    size) or ``Anonymous`` (its own memory, not a file's pages)."""
    with open("/proc/self/smaps_rollup") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in smaps_rollup")


def pss_kb() -> int:
    return rollup_kb("Pss")


def worker(kind: str, model: str, texts: list[str], barrier, results) -> None:
    import numpy as np

    import contentx_udf.text.classifier  # noqa: F401  (the imports a worker has anyway)

    base, base_anon = pss_kb(), rollup_kb("Anonymous")
    barrier.wait()
    if kind == "contentx":
        from contentx_udf import QualityModel

        m = QualityModel.open(model)
        opened = rollup_kb("Anonymous")
        m.score(texts)
        barrier.wait()
        scored, anon = pss_kb(), rollup_kb("Anonymous")
        barrier.wait()
        matrix = m.file.input
        total = float(np.add.reduce(np.asarray(matrix, dtype=np.float32), axis=None))  # every row read
        barrier.wait()
        full = pss_kb()
    else:
        import fasttext

        from contentx_udf.text.classifier import prepare

        m = fasttext.load_model(model)
        opened = rollup_kb("Anonymous")
        for t in texts:
            m.predict(prepare(t), k=-1)
        barrier.wait()
        scored, anon = pss_kb(), rollup_kb("Anonymous")
        barrier.wait()
        total = 0.0
        barrier.wait()
        full = pss_kb()
    barrier.wait()  # (both measured: the mappings go only now)
    results.put((os.getpid(), base, scored, full, total, anon - base_anon, opened - base_anon))


def measure(kind: str, model: str, texts: list[str]) -> list[tuple]:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(kind, model, texts, barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return out


def build_model(directory: Path, gb: float, texts: list[str]) -> Path:
    import fasttext_new

    from contentx_udf.text.classifier import prepare

    data = directory / "train.txt"
    lines = [f"__label__{'hq' if i % 2 else 'cc'} {prepare(t)}" for i, t in enumerate(texts[:400]) if t]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dim = 128
    bucket = int(gb * 1e9 / (dim * 4))
    model = fasttext_new.train_supervised(str(data), wordNgrams=2, dim=dim, bucket=bucket, epoch=1, verbose=0)
    path = directory / "large.bin"
    model.save_model(str(path))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--model-gb", type=float, default=1.1, help="size of the model to build")
    parser.add_argument("--with-fasttext", action="store_true", help="also fastText's load_model")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the model (a temp dir)")
    args = parser.parse_args()
    texts = [p["text"] for p in extracted_pages(args.cache)]
    with tempfile.TemporaryDirectory(prefix="contentx-quality-memory-", dir=args.dir) as tmp:
        model = build_model(Path(tmp), args.model_gb, texts)
        size_kb = model.stat().st_size / 1024
        kinds = ["contentx", "fasttext"] if args.with_fasttext else ["contentx"]
        for kind in kinds:
            rows = measure(kind, str(model), texts)
            base = sum(r[1] for r in rows)
            scored = sum(r[2] for r in rows) - base
            full = sum(r[3] for r in rows) - base
            print(
                f"RESULT scorer={kind} model_mb={size_kb / 1024:,.0f} workers=2 "
                f"pss_growth_after_scoring_mb={scored / 1024:,.0f} ({scored / size_kb:.3f} x model) "
                f"pss_growth_every_row_read_mb={full / 1024:,.0f} ({full / size_kb:.3f} x model) "
                f"per_worker_mb={[round((r[3] - r[1]) / 1024) for r in rows]} "
                f"private_per_worker_mb: opened={[round(r[6] / 1024, 1) for r in rows]} "
                f"scored={[round(r[5] / 1024, 1) for r in rows]}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
