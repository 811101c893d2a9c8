"""Extraction tables written by hand for the corpus job's tests: rows of the job's schema, a part
file per method and the batch's commit marker, as ``contentx run`` leaves them."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from contentx_udf.corpus.language import detect_language, text_hash
from contentx_udf.spark.worker import arrow_schema

WORDS = (
    "council budget river bridge transport repair school library museum market harbour station "
    "garden festival teacher student farmer doctor nurse engineer artist weather winter summer "
    "election mayor street traffic housing rent price energy water forest mountain village city "
    "report survey study result plan project history season team match player coach ticket"
).split()


def article(seed: int, sentences: int = 30) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
        for _ in range(sentences)
    ]


def table_row(url: str, text: str | None, *, status: str = "ok", day: int = 1, offset: int = 0, scores=None):
    language, score = detect_language(text) if status == "ok" else (None, None)
    return {
        "url": url,
        "url_host_name": url.split("/")[2],
        "fetch_time": datetime(2024, 5, day, tzinfo=UTC),
        "warc_filename": "crawl.warc.gz",
        "warc_record_offset": offset,
        "warc_record_length": 100,
        "title": url,
        "text": text,
        "text_length": None if text is None else len(text),
        "language": language,
        "language_score": score,
        "text_hash": text_hash(text) if status == "ok" else None,
        "scores": list((scores or {}).items()),
        "status": status,
        "error": None if status == "ok" else "boom",
    }


BATCH = "20240501T000000-0000abcd"


def write_table(directory, method: str, rows: list[dict], batch: str = BATCH) -> None:
    """An extraction table as the job writes it: method=<m>/b<batch>-part.parquet with the job's
    schema, and the batch's commit marker."""
    schema = arrow_schema()
    schema = schema.remove(schema.get_field_index("method"))
    part = directory / f"method={method}"
    part.mkdir(parents=True, exist_ok=True)
    columns = {name: [r.get(name) for r in rows] for name in schema.names}
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), part / f"b{batch}-part-00000.parquet")
    markers = directory / "_contentx" / "batches"
    markers.mkdir(parents=True, exist_ok=True)
    (markers / f"{batch}.json").write_text(json.dumps({"batch": batch, "files": ["crawl.warc.gz"]}))
