"""The files of ``contentx export`` (pure: a worker writes one shard from its Arrow batches).

* ``parquet``: one Parquet file per shard (zstd), the columns of :data:`EXPORT_COLUMNS` the corpus
  has, as the Hugging Face Hub's Parquet datasets are laid out (``data/train-00000-of-00004.parquet``).
* ``jsonl``: one gzip JSON Lines file per shard, one object per document with the same fields
  (``data/train-00000-of-00004.jsonl.gz``).
* ``datatrove``: datatrove's tokenized files (``datatrove.pipeline.tokens.tokenizer.TokenizedFile``):
  ``NAME.ds``, every document's token ids end to end, little-endian ``uint16`` when the vocabulary
  has at most 65,536 ids, else ``uint32``; ``NAME.ds.index``, each document's end (in tokens) as a
  little-endian ``uint64``; ``NAME.ds.metadata``, three lines: ``TOKENIZER|TOKEN_BYTES``, the
  token count and that count in short (``1.23 MT``).  Ids as datatrove's ``DocumentTokenizer``
  writes them (:func:`..text.tokens.encode_ids`): the tokenizer's own special tokens, or with
  ``--eos-token`` the text's tokens and that token.

Each writer writes through a ``pyarrow.fs`` filesystem and returns its shard's counts.
"""

from __future__ import annotations

import gzip
import io
import json
import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..text.tokens import TokenizerSpec, count_tokens, encode_ids, token_dtype

FORMATS = ("parquet", "jsonl", "datatrove")
#: The exported columns, in this order, when the corpus has them (``quality_*`` after them).
EXPORT_COLUMNS = ("text", "id", "url", "language", "language_score", "token_count")
#: File name of a shard, by format (``{i}`` / ``{n}``: its position and the number of shards).
FINAL_NAMES = {
    "parquet": "train-{i:05d}-of-{n:05d}.parquet",
    "jsonl": "train-{i:05d}-of-{n:05d}.jsonl.gz",
    "datatrove": "{i:05d}.ds",
}


@dataclass
class ShardStats:
    """What a worker wrote: its staged ``file`` (relative), documents, tokens (None: not counted)
    and bytes."""

    shard: int
    file: str
    documents: int
    tokens: int | None
    bytes: int


def staged_name(fmt: str, shard: int) -> str:
    """A shard's name while staged (its final name needs the number of shards)."""
    return FINAL_NAMES[fmt].replace("-of-{n:05d}", "").format(i=shard)


def metric(count: int, unit: str = "T") -> str:
    """``count`` in short with three significant digits, as humanize's ``metric`` (what datatrove's
    ``.ds.metadata`` third line holds): ``1.23 kT``, ``12.0 T``."""
    if count == 0:
        return f"0.00 {unit}"
    exponent = min(int(math.floor(math.log10(abs(count)) / 3)) * 3, 24)
    value = count / 10**exponent
    prefix = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E", 21: "Z", 24: "Y"}[exponent]
    digits = max(0, 3 - len(str(int(abs(value)))))
    return f"{value:.{digits}f} {prefix}{unit}"


def with_counts(batch: pa.RecordBatch, spec: TokenizerSpec | None, count_eos: bool) -> pa.RecordBatch:
    """The batch with ``token_count`` counted by ``spec`` (when given; else as it is)."""
    if spec is None:
        return batch
    counts = count_tokens(spec, batch.column("text"), count_eos)
    names = batch.schema.names
    if "token_count" in names:
        columns = [counts if n == "token_count" else batch.column(n) for n in names]
        return pa.RecordBatch.from_arrays(columns, names=names)
    at = names.index("language_score") + 1 if "language_score" in names else len(names)
    columns = [*batch.columns[:at], counts, *batch.columns[at:]]
    return pa.RecordBatch.from_arrays(columns, names=[*names[:at], "token_count", *names[at:]])


def _tokens_of(batch: pa.RecordBatch) -> int | None:
    if "token_count" not in batch.schema.names:
        return None
    return int(pc.sum(batch.column("token_count")).as_py() or 0)


def write_parquet(fs, path: str, batches, spec=None, count_eos: bool = False) -> tuple[int, int | None]:
    """One Parquet shard of ``batches`` (``token_count`` counted with ``spec``); ``(documents, tokens)``."""
    writer = None
    documents, tokens = 0, None
    with fs.open_output_stream(path, compression=None) as sink:
        try:
            for batch in batches:
                batch = with_counts(batch, spec, count_eos)
                if writer is None:
                    writer = pq.ParquetWriter(sink, batch.schema, compression="zstd")
                writer.write_batch(batch)
                documents += batch.num_rows
                found = _tokens_of(batch)
                tokens = None if found is None else (tokens or 0) + found
        finally:
            if writer is not None:
                writer.close()
    return documents, tokens


def json_rows(batch: pa.RecordBatch) -> list[str]:
    """Each document of ``batch`` as one JSON object (no newline inside: JSON escapes it)."""
    return [json.dumps(r, ensure_ascii=False) for r in batch.to_pylist()]


def _json_lines(batch: pa.RecordBatch) -> bytes:
    return "".join(row + "\n" for row in json_rows(batch)).encode("utf-8")


def write_jsonl(fs, path: str, batches, spec=None, count_eos: bool = False) -> tuple[int, int | None]:
    """One gzip JSON Lines shard; ``(documents, tokens)``."""
    documents, tokens = 0, None
    with (
        fs.open_output_stream(path, compression=None) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out,
    ):
        for batch in batches:
            batch = with_counts(batch, spec, count_eos)
            out.write(_json_lines(batch))
            documents += batch.num_rows
            found = _tokens_of(batch)
            tokens = None if found is None else (tokens or 0) + found
    return documents, tokens


def write_datatrove(
    fs, path: str, batches, spec: TokenizerSpec, eos_id: int | None, name: str
) -> tuple[int, int | None]:
    """One datatrove shard (``path``, ``path.index``, ``path.metadata``; ``name``: the tokenizer as
    the metadata names it); ``(documents, tokens)``."""
    dtype = token_dtype(spec.vocab_size)
    ends: list[np.ndarray] = []
    written = 0
    with fs.open_output_stream(path, compression=None) as out:
        for batch in batches:
            texts = batch.column("text").fill_null("")
            ids, lengths = encode_ids(spec, texts, eos_id)
            out.write(ids.astype(dtype).tobytes())
            ends.append(written + np.cumsum(lengths))
            written += int(lengths.sum())
    index = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
    with fs.open_output_stream(path + ".index", compression=None) as out:
        out.write(index.astype("<u8").tobytes())
    with fs.open_output_stream(path + ".metadata", compression=None) as out:
        out.write(f"{name}|{dtype.itemsize}\n{written}\n{metric(written)}".encode())
    return len(index), written


def read_datatrove(ds: bytes, index: bytes, token_bytes: int) -> list[np.ndarray]:
    """Each document's token ids of a shard's ``.ds`` and ``.ds.index`` bytes (the layout above)."""
    tokens = np.frombuffer(ds, dtype="<u2" if token_bytes == 2 else "<u4")
    ends = np.frombuffer(index, dtype="<u8").astype(np.int64)
    starts = np.concatenate([[0], ends[:-1]])
    return [tokens[s:e] for s, e in zip(starts, ends, strict=True)]


def read_jsonl(data: bytes) -> list[dict]:
    """The documents of a gzip JSON Lines shard."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
        return [json.loads(line) for line in fh]
