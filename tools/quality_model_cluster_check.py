"""``--quality-model NAME=viewfs://...`` on a Spark standalone cluster: the model reaches each
executor (its own JVM, its own work directory) through ``SparkContext.addFile`` from a Hadoop
filesystem other than the local one, and every document's score equals the local file's.

    python tools/quality_model_cluster_check.py [--documents 300] [--workdir DIR]

Starts one master and two one-core workers on 127.0.0.1 (tests/spark/cluster.py), trains a tiny
model (tests/corpus/scored.py, fasttext-new), mounts a directory as ``viewfs://contentx/data``
(``spark.hadoop.fs.viewfs.mounttable...`` given to spark-submit, as a cluster's core-site.xml
would), submits ``jobs/build_corpus.py`` and prints the executors' copies of the model and the
comparison.  Slow (three JVMs and a job: a few minutes on two cores), so it is not part of the
suite; the suite's test of a ``viewfs://`` model runs in local mode
(tests/corpus/test_quality_models.py, ``signals_build``).  Exit 0 when the scores are identical.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    sys.path.insert(0, str(REPO))
    import numpy as np
    import pyarrow.parquet as pq

    from contentx_udf import quality_scores
    from tests.corpus.scored import quality_text, train_model
    from tests.corpus.tables import table_row, write_table
    from tests.spark.cluster import CORPUS_JOB, StandaloneCluster

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--documents", type=int, default=300)
    p.add_argument("--workdir", default=None, help="kept when given (default: a temporary one)")
    args = p.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="contentx-model-check-"))
    data = root / "data"
    data.mkdir(parents=True)
    model = train_model(root / "model.bin")
    shutil.copyfile(model, data / "remote.bin")
    rng = random.Random(7)
    texts = [quality_text(rng, rng.random()) for _ in range(args.documents)]
    rows = [table_row(f"https://s{i % 9}.example/p{i}", t, offset=i) for i, t in enumerate(texts)]
    write_table(data / "table", "combined", rows)
    cluster = StandaloneCluster(root / "cluster", workers=2, cores=1, memory="1g").start()
    try:
        mount = {"spark.hadoop.fs.viewfs.mounttable.contentx.link./data": data.as_uri()}
        # the executors' Python workers import this checkout (its compiled scorer), not another
        # installed copy of contentx_udf
        mount["spark.executorEnv.PYTHONPATH"] = str(REPO)
        uri = "viewfs://contentx/data"
        argv = ["--input", f"{uri}/table", "--output", f"{uri}/corpus", "--dedup", "exact"]
        argv += ["--quality-model", f"dclm={uri}/remote.bin"]
        proc = cluster.submit(argv, conf=mount, job=CORPUS_JOB, timeout=900)
    finally:
        cluster.stop()
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n")
        return 1
    copies = sorted(str(c.relative_to(root)) for c in (root / "cluster").glob("worker*/app-*/*/remote.bin"))
    docs = pq.read_table(str(data / "corpus" / "documents"), columns=["text", "quality_dclm"])
    got = np.array(docs.column("quality_dclm").to_pylist(), dtype=np.float32)
    expected = quality_scores(docs.column("text").to_pylist(), str(model))
    same = bool(np.array_equal(got, expected))
    print(f"executors' copies of the model: {len(copies)} ({', '.join(copies)})")
    largest = float(np.abs(got - expected).max())
    print(f"documents={len(got)} max_difference={largest:g} identical={int(same)}")
    if not args.workdir:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if same and copies else 1


if __name__ == "__main__":
    sys.exit(main())
