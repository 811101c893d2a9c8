"""datatrove's MinHash deduplication in its FineWeb configuration, as a benchmark peer.

    python benchmarks/datatrove_minhash.py --input JSONL_DIR --work DIR [--workers 2]

The four stages of datatrove's ``examples/fineweb.py`` (signatures, buckets, clusters, filter) with
its ``MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8)``
(word 5-grams of spaCy's English tokenizer over datatrove's simplified text), on the JSONL files
of ``--input`` (one task per file), run by ``LocalPipelineExecutor`` with ``--workers`` processes.
Prints one JSON line: ``{"seconds": ..., "kept": ..., "input": ...}``.  Needs the ``bench`` extra.

Guarded by ``if __name__ == "__main__"``: datatrove's workers re-import this script.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import time
from collections.abc import Iterator


def minhash_dedup(input_dir: str, work: str, workers: int, tasks: int) -> str:
    """Run the four MinHash stages on the JSONL files of ``input_dir`` (``tasks`` tasks for the
    reading stages, ``workers`` processes; logs under ``WORK/logs``) and return the folder of the
    deduplicated JSONL files."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    config = MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8)
    logs = os.path.join(work, "logs")
    signatures = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(input_dir),
            MinhashDedupSignature(output_folder=f"{work}/signatures", config=config),
        ],
        tasks=tasks,
        workers=workers,
        logging_dir=f"{logs}/signatures",
    )
    buckets = LocalPipelineExecutor(
        pipeline=[
            MinhashDedupBuckets(
                input_folder=f"{work}/signatures", output_folder=f"{work}/buckets", config=config
            )
        ],
        tasks=config.num_buckets,
        workers=workers,
        logging_dir=f"{logs}/buckets",
        depends=signatures,
    )
    clusters = LocalPipelineExecutor(
        pipeline=[
            MinhashDedupCluster(
                input_folder=f"{work}/buckets", output_folder=f"{work}/remove_ids", config=config
            )
        ],
        tasks=1,
        logging_dir=f"{logs}/clusters",
        depends=buckets,
    )
    dedup = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(input_dir),
            MinhashDedupFilter(input_folder=f"{work}/remove_ids"),
            JsonlWriter(f"{work}/deduplicated"),
        ],
        tasks=tasks,
        workers=workers,
        logging_dir=f"{logs}/filter",
        depends=clusters,
    )
    dedup.run()
    return f"{work}/deduplicated"


def jsonl_lines(paths) -> Iterator[str]:
    """The lines of JSONL files, gzipped or not."""
    for path in paths:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            yield from fh


def run(input_dir: str, work: str, workers: int) -> dict:
    files = sorted(glob.glob(os.path.join(input_dir, "*.jsonl*")))
    started = time.perf_counter()
    output = minhash_dedup(input_dir, work, workers, len(files))
    seconds = time.perf_counter() - started
    kept = sum(1 for _ in jsonl_lines(glob.glob(f"{output}/*")))
    total = sum(1 for _ in jsonl_lines(files))
    return {"seconds": round(seconds, 2), "kept": kept, "input": total}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--input", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(run(args.input, args.work, args.workers)))
