"""``contentx export --from CORPUS --output DIR --format parquet|jsonl|datatrove``: a finished corpus's
documents as files a trainer or the ``datasets`` library reads (the files: :mod:`.shards`).

The documents are put in one order, shuffled with ``--shuffle-seed`` (by a 64-bit hash of the seed
and the document: the same seed gives the same order) or, without it, by URL then text hash; they
are cut into ranges of about ``--shard-size`` bytes (estimated from the corpus's report), and each
Spark task writes its range as one file (:mod:`.shards`, through a ``pyarrow.fs`` filesystem) and
returns only its counts.  The driver then names the files ``train-00000-of-0000N`` (parquet, jsonl)
or ``00000.ds`` (datatrove), and writes ``_manifest.json`` (each file's documents and tokens), the
dataset card ``README.md`` (:mod:`.card`) and ``_SUCCESS``, last.

Committed output: the files are written under ``DIR/_staging/<run>/`` and moved into place only
when every task is done; ``--overwrite`` replaces an earlier export only (a directory with its
``_manifest.json``); an unfinished corpus (no ``_SUCCESS``) is refused.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ..errors import UserError, job_main
from ..runtime.console import add_verbose_flag
from ..runtime.java import check_java
from ..runtime.session import spark_session
from ..runtime.store import Store, check_owned
from .card import README, card
from .shards import (
    EXPORT_COLUMNS,
    FINAL_NAMES,
    FORMATS,
    staged_name,
    write_datatrove,
    write_jsonl,
    write_parquet,
)
from .tables import SUCCESS, open_store

MANIFEST = "_manifest.json"
STAGING = "_staging"
EXPORT_FORMAT = 1
#: ``--shard-size`` default: the Hub's advice for Parquet files is a few hundred MB.
DEFAULT_SHARD_SIZE = "500MB"
#: Bytes of a file per character of text, by format (zstd Parquet, gzip JSON Lines: web text
#: compresses about 3:1), and characters per token when the corpus has no token counts.
BYTES_PER_CHAR = {"parquet": 0.4, "jsonl": 0.4}
CHARS_PER_TOKEN = 4.0
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``500MB``, ``1GiB``, ``2G``, ``1000000`` as bytes (K/M/G/T: powers of 1024)."""
    match = _SIZE.match(text or "")
    if not match:
        raise UserError(f"--shard-size {text!r}: not a size (e.g. 500MB, 2GB, 1000000)")
    number, unit = float(match.group(1)), match.group(2).upper()
    value = number * (1024 ** ("KMGT".index(unit) + 1) if unit else 1)
    if value < 1:
        raise UserError(f"--shard-size {text!r} must be at least one byte")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="contentx export",
        description="Write a finished corpus's documents as Parquet or gzip JSON Lines files the "
        "Hugging Face datasets library loads, or as datatrove's tokenized shards, with a dataset card.",
    )
    p.add_argument("--from", dest="source", required=True, metavar="CORPUS", help="a finished corpus")
    p.add_argument("--output", required=True, metavar="DIR", help="the export directory")
    p.add_argument("--format", required=True, choices=FORMATS, help="parquet, jsonl (gzip) or datatrove")
    p.add_argument(
        "--tokenizer",
        default=None,
        metavar="FILE",
        help="a tokenizers tokenizer.json: token_count of every document (parquet, jsonl; as "
        "contentx corpus counts) or the token ids of the shards (datatrove, required)",
    )
    p.add_argument(
        "--shard-size",
        default=DEFAULT_SHARD_SIZE,
        metavar="SIZE",
        help=f"about this many bytes per file, e.g. 200MB, 1GB (default {DEFAULT_SHARD_SIZE})",
    )
    p.add_argument(
        "--shuffle-seed",
        type=int,
        default=None,
        metavar="N",
        help="shuffle the documents with this seed (default: ordered by URL, then text hash)",
    )
    p.add_argument(
        "--eos-token",
        default=None,
        metavar="TOKEN",
        help="datatrove: this token (e.g. '<|endoftext|>') after each document, as datatrove's eos_token",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier export in DIR (a folder holding other files is refused)",
    )
    add_verbose_flag(p)
    return p


def check_args(args: argparse.Namespace):
    """The tokenizer read and the flags checked on the driver, before Spark: ``(spec, eos_id,
    shard bytes)``."""
    from ..text.tokens import load_spec, token_id

    size = parse_size(args.shard_size)
    if args.format == "datatrove" and not args.tokenizer:
        raise UserError("--format datatrove writes token ids: it needs --tokenizer")
    if args.eos_token is not None and args.format != "datatrove":
        raise UserError("--eos-token applies to --format datatrove")
    spec = load_spec(args.tokenizer) if args.tokenizer else None
    eos_id = token_id(spec, args.eos_token) if args.eos_token is not None else None
    return spec, eos_id, size


def check_source(spark, source: str) -> tuple[Store, dict[str, Any]]:
    """The corpus's store and report; UserError when it is not a finished corpus."""
    store = open_store(spark, source, "--from")
    if not store.exists() or store.is_file():
        raise UserError(f"--from {source}: no such corpus directory")
    if not store.exists("documents") or not store.exists("_report.json"):
        raise UserError(
            f"--from {source} is not a corpus (no documents/ and _report.json of contentx corpus)"
        )
    if not store.exists(SUCCESS):
        raise UserError(
            f"--from {source} is not a finished corpus (no {SUCCESS}): its build is running or was killed"
        )
    return store, json.loads(store.read_text("_report.json"))


def prepare_output(spark, args, source: Store) -> Store:
    """The output's store: refused when it is the corpus, a file, or holds anything but an earlier
    export (``--overwrite`` replaces only that); a killed export's staging removed."""
    store = open_store(spark, args.output, "--output", "written")
    if store.uri() == source.uri():
        raise UserError(f"--output {args.output} is the corpus it exports; write it elsewhere")
    if store.is_file():
        raise UserError(f"--output {args.output} is a file")
    entries = store.list()
    if entries:
        if not store.exists(MANIFEST) and set(entries) != {STAGING}:
            raise UserError(
                f"--output {args.output} exists and is not an export of contentx (no {MANIFEST}); "
                "write the export elsewhere"
            )
        if not args.overwrite and set(entries) != {STAGING}:
            raise UserError(f"--output {args.output} exists; pass --overwrite to replace the earlier export")
        check_owned(store, args.output)  # only contentx's own files are replaced
    if STAGING in entries:
        store.delete(STAGING)
    return store


#: URI schemes the workers write through ``pyarrow.fs`` (``s3a://``, Hadoop's S3, as ``s3://``).
PYARROW_SCHEMES = {"": "", "file": "file", "s3": "s3", "s3a": "s3", "gs": "gs", "gcs": "gs", "hdfs": "hdfs"}


def pyarrow_filesystem(uri: str):
    """``(filesystem, path)`` of ``uri`` for the workers' own writes, or None when pyarrow cannot
    write there (a scheme it has no filesystem for, e.g. ``viewfs://``, or one it cannot open
    here, e.g. ``hdfs://`` without libhdfs): Spark's writers then write through Hadoop's."""
    from urllib.parse import urlparse

    import pyarrow.fs as pafs

    scheme = urlparse(uri).scheme
    if scheme not in PYARROW_SCHEMES:
        return None
    if PYARROW_SCHEMES[scheme] != scheme:
        uri = PYARROW_SCHEMES[scheme] + uri[len(scheme) :]
    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception:  # noqa: BLE001 (no filesystem of pyarrow's reaches it)
        return None


def refuse_binary_shards(uri: str) -> None:
    """``--format datatrove`` on a filesystem only Hadoop writes: one line saying why."""
    raise UserError(
        f"--output {uri}: datatrove's binary shards are written by the Python workers through "
        "pyarrow's filesystems (local, s3://, gs://, hdfs:// with libhdfs), which cannot write "
        "here; Spark's own writers, which write parquet and jsonl exports here, put a line "
        "separator after every row and so cannot write exact binary files. Export to one of those "
        "and copy the files (e.g. hadoop fs -cp)"
    )


def shard_count(fmt: str, report: dict[str, Any], spec, size: int) -> int:
    """Files of about ``size`` bytes for the corpus (estimated from its report), at most one per
    document, at least one."""
    characters = int(report.get("kept_characters") or 0)
    documents = int(report.get("kept") or 0)
    if fmt == "datatrove":
        tokens = (
            report.get("kept_tokens")
            if (report.get("tokenizer") or {}).get("sha256") == spec.sha256
            else None
        )
        tokens = tokens if tokens is not None else characters / CHARS_PER_TOKEN
        from ..text.tokens import token_dtype

        estimate = tokens * token_dtype(spec.vocab_size).itemsize
    else:
        estimate = characters * BYTES_PER_CHAR[fmt]
    return max(1, min(documents, math.ceil(estimate / size)))


def export_frame(spark, source: Store, seed: int | None, shards: int):
    """The documents in their export order, in ``shards`` ranges (one per task), with the
    :data:`EXPORT_COLUMNS` the corpus has and its ``quality_*`` columns."""
    from pyspark.sql import functions as F

    docs = spark.read.parquet(source.uri("documents"))
    doc_id = F.concat_ws("#", F.col("warc_filename"), F.col("warc_record_offset").cast("string"))
    available = {
        "text": F.col("text"),
        "id": doc_id.alias("id"),
        "url": F.col("url"),
        "language": F.col("language"),
        "language_score": F.col("language_score"),
        "token_count": F.col("token_count"),
    }
    columns = [available[c].alias(c) for c in EXPORT_COLUMNS if c in docs.columns or c == "id"]
    columns += [F.col(c) for c in docs.columns if c.startswith("quality_")]
    if seed is not None:
        key = [
            F.xxhash64(F.lit(seed), F.col("text_hash"), F.col("url"), F.col("warc_record_offset")).alias("_k")
        ]
    else:
        key = [F.col("url").alias("_k"), F.col("text_hash").alias("_k2")]
    keyed = docs.select(*columns, *key)
    keys = [c for c in keyed.columns if c.startswith("_k")]
    return keyed.repartitionByRange(shards, *keys).sortWithinPartitions(*keys).drop(*keys)


def _writer(fmt: str, root: str, spec, count_eos: bool, eos_id: int | None, name: str):
    """``mapInArrow`` body: the task's range written as one staged file; one row of counts."""
    import pyarrow as pa

    def run(batches):
        from pyspark import TaskContext

        shard = TaskContext.get().partitionId()
        iterator = iter(batches)
        first = next((b for b in iterator if b.num_rows), None)
        if first is None:
            return  # an empty range: no file
        import itertools

        fs, base = pyarrow_filesystem(root)
        fs.create_dir(base, recursive=True)
        relative = staged_name(fmt, shard)
        path = f"{base.rstrip('/')}/{relative}"
        rest = (b for b in itertools.chain([first], iterator) if b.num_rows)
        if fmt == "parquet":
            documents, tokens = write_parquet(fs, path, rest, spec, count_eos)
        elif fmt == "jsonl":
            documents, tokens = write_jsonl(fs, path, rest, spec, count_eos)
        else:
            documents, tokens = write_datatrove(fs, path, rest, spec, eos_id, name)
        size = fs.get_file_info(path).size
        yield pa.record_batch(
            [
                pa.array([shard], pa.int32()),
                pa.array([relative]),
                pa.array([documents], pa.int64()),
                pa.array([tokens], pa.int64()),
                pa.array([size], pa.int64()),
            ],
            names=["shard", "file", "documents", "tokens", "bytes"],
        )

    return run


def _shard_counts():
    """An accumulator of ``{task: (documents, tokens)}``, each task's entry replaced, not summed,
    when a task runs again."""
    from pyspark.accumulators import AccumulatorParam

    class PerShard(AccumulatorParam):
        def zero(self, value):
            return {}

        def addInPlace(self, value1, value2):
            value1.update(value2)
            return value1

    return PerShard()


def _rows_for_spark(fmt: str, spec, count_eos: bool, counts):
    """``mapInArrow`` body for Spark's writers: the batches with ``token_count`` counted (parquet)
    or as JSON lines (jsonl, one ``value`` string per document), each task's counts added to
    ``counts``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .shards import json_rows, with_counts

    def run(batches):
        from pyspark import TaskContext

        shard = TaskContext.get().partitionId()
        documents, tokens = 0, None
        for batch in batches:
            if not batch.num_rows:
                continue
            batch = with_counts(batch, spec, count_eos)
            documents += batch.num_rows
            if "token_count" in batch.schema.names:
                tokens = (tokens or 0) + int(pc.sum(batch.column("token_count")).as_py() or 0)
            if fmt == "jsonl":
                yield pa.record_batch([pa.array(json_rows(batch), pa.string())], names=["value"])
            else:
                yield batch
        if documents:
            counts.add({shard: (documents, tokens)})

    return run


def write_with_spark(spark, frame, fmt: str, store: Store, run_dir, spec, count_eos: bool) -> list:
    """The export's files written by Spark's writers through Hadoop's FileSystem (a filesystem
    pyarrow cannot write, e.g. ``viewfs://``): Parquet (zstd) or gzip text of JSON lines, one file
    per range; each file's documents and tokens from an accumulator of the writing tasks, its
    bytes from the listing.  The same rows as :func:`_writer`'s."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    counts = spark.sparkContext.accumulator({}, _shard_counts())
    if fmt == "jsonl":
        schema = StructType([StructField("value", StringType())])
    else:
        fields = list(frame.schema.fields)
        if spec is not None and "token_count" not in frame.columns:
            at = (
                frame.columns.index("language_score") + 1
                if "language_score" in frame.columns
                else len(fields)
            )
            fields.insert(at, StructField("token_count", LongType()))
        schema = StructType(fields)
    rows = frame.mapInArrow(_rows_for_spark(fmt, spec, count_eos, counts), schema)
    staged = store.uri(*run_dir, "data")
    if fmt == "jsonl":
        rows.write.option("compression", "gzip").text(staged)
    else:
        rows.write.option("compression", "zstd").parquet(staged)
    found = counts.value
    out = []
    for name, length in store.files(*run_dir, "data"):
        match = re.match(r"part-(\d+)-", name)
        if match is None or name.endswith(".crc"):
            continue
        shard = int(match.group(1))
        if shard not in found:  # Spark's one empty file of an empty export
            continue
        documents, tokens = found[shard]
        out.append({"shard": shard, "file": name, "documents": documents, "tokens": tokens, "bytes": length})
    return sorted(out, key=lambda r: r["shard"])


def run(args: argparse.Namespace, spark) -> dict[str, Any]:
    spec, eos_id, size = check_args(args)
    source, report = check_source(spark, args.source)
    store = prepare_output(spark, args, source)
    run_dir = (STAGING, time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8])
    staged = store.uri(*run_dir, "data")
    by_workers = pyarrow_filesystem(staged) is not None
    if not by_workers and args.format == "datatrove":
        refuse_binary_shards(args.output)  # before any task
    shards = shard_count(args.format, report, spec, size)
    frame = export_frame(spark, source, args.shuffle_seed, shards)
    schema = "shard int, file string, documents long, tokens long, bytes long"
    count_eos = False
    try:
        if by_workers:
            written = frame.mapInArrow(
                _writer(args.format, staged, spec, count_eos, eos_id, args.tokenizer or ""), schema
            )
            rows = sorted(written.collect(), key=lambda r: r["shard"])  # one row per file
        else:
            rows = write_with_spark(spark, frame, args.format, store, run_dir, spec, count_eos)
    except BaseException:
        store.delete(STAGING)
        raise
    manifest = commit(store, run_dir, args, report, rows, spec, eos_id)
    return manifest


def commit(store: Store, run_dir, args, report, rows, spec, eos_id) -> dict[str, Any]:
    """The staged files moved into place under their final names, then the manifest, the card and
    ``_SUCCESS`` (last); an earlier export's files removed first."""
    check_owned(store, args.output)  # again, right before the earlier export is replaced
    for entry in (SUCCESS, MANIFEST, README, "data"):
        if store.exists(entry):
            store.delete(entry)
    n = len(rows)
    store.mkdirs("data")
    shards = []
    for i, row in enumerate(rows):
        final = FINAL_NAMES[args.format].format(i=i, n=n)
        suffixes = ("", ".index", ".metadata") if args.format == "datatrove" else ("",)
        for suffix in suffixes:
            store.rename((*run_dir, "data", row["file"] + suffix), ("data", final + suffix))
        shards.append(
            {
                "file": f"data/{final}",
                "documents": row["documents"],
                "tokens": row["tokens"],
                "bytes": row["bytes"],
            }
        )
    tokens = [s["tokens"] for s in shards]
    manifest = {
        "format": args.format,
        "export_format": EXPORT_FORMAT,
        "source": args.source,
        "documents": sum(s["documents"] for s in shards),
        "tokens": None if not shards or any(t is None for t in tokens) else sum(tokens),
        "shuffle_seed": args.shuffle_seed,
        "order": "shuffled" if args.shuffle_seed is not None else "url, text_hash",
        "tokenizer": spec.describe() if spec is not None else None,
        "eos_token": args.eos_token,
        "eos_id": eos_id,
        "token_bytes": None,
        "shards": shards,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if args.format == "datatrove":
        from ..text.tokens import token_dtype

        manifest["token_bytes"] = token_dtype(spec.vocab_size).itemsize
    if manifest["documents"] != int(report.get("kept") or 0):
        raise RuntimeError(
            f"export wrote {manifest['documents']} documents of the corpus's {report.get('kept')}"
        )
    data_files = {"parquet": "data/*.parquet", "jsonl": "data/*.jsonl.gz"}.get(args.format)
    store.write_text(json.dumps(manifest, indent=2), MANIFEST)
    store.write_text(card(report, data_files, manifest), README)
    store.write_text(json.dumps({"format": EXPORT_FORMAT, "documents": manifest["documents"]}), SUCCESS)
    store.delete(STAGING)
    return manifest


def summary_lines(manifest: dict[str, Any], output: str) -> list[str]:
    tokens = f", {manifest['tokens']} tokens" if manifest.get("tokens") is not None else ""
    return [
        "contentx export summary",
        f"  output: {output} ({manifest['format']})",
        f"  written: {manifest['documents']} documents{tokens} in {len(manifest['shards'])} file(s), "
        + (
            "shuffled with seed " + str(manifest["shuffle_seed"])
            if manifest["shuffle_seed"] is not None
            else "ordered by URL"
        ),
        f"  card: {output.rstrip('/')}/{README}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body(args) -> int:
        check_args(args)  # the tokenizer and flags, before the JVM starts
        check_java()
        manifest = run(args, spark_session("contentx-export", verbose=args.verbose))
        print("\n".join(summary_lines(manifest, args.output)))
        return 0

    return job_main("contentx export", args_list, build_parser(), body, rerun="with --overwrite")
