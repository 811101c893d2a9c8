"""Extraction tables written by hand for the corpus job's tests: rows of the job's schema, a part
file per method and the batch's commit marker, as ``contentx run`` leaves them."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from contentx_udf.spark.worker import arrow_schema
from contentx_udf.text.language import detect_language, text_hash

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
    schema, the batch's commit marker and the run's ``_summary.json``."""
    schema = arrow_schema()
    schema = schema.remove(schema.get_field_index("method"))
    part = directory / f"method={method}"
    part.mkdir(parents=True, exist_ok=True)
    columns = {name: [r.get(name) for r in rows] for name in schema.names}
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), part / f"b{batch}-part-00000.parquet")
    markers = directory / "_contentx" / "batches"
    markers.mkdir(parents=True, exist_ok=True)
    (markers / f"{batch}.json").write_text(json.dumps({"batch": batch, "files": ["crawl.warc.gz"]}))
    (directory / "_summary.json").write_text(json.dumps({"input_files": 1, "files_processed": 1}))


DATE = "Published on 3 May 2024 by the city desk."


def month_table(directory, texts: list[tuple[str, str]], day: int = 1):
    """An extraction table of ``(url, text)`` documents (method ``combined``)."""
    rows = [table_row(url, text, day=day, offset=i) for i, (url, text) in enumerate(texts)]
    write_table(directory, "combined", rows)
    return directory


def texts_of(prefix: str, seeds: range) -> list[tuple[str, str]]:
    return [(f"https://{prefix}.example/{s}", "\n".join([DATE, *article(s)])) for s in seeds]


def two_months(root):
    """Month 1: 30 articles.  Month 2: 6 exact repeats (other case), 6 near repeats (another date
    line) of month 1, and 18 new articles.  Returns the two tables' paths."""
    first = texts_of("one", range(30))
    second = [(f"https://two.example/copy{i}", text.upper()) for i, (_u, text) in enumerate(first[:6])]
    second += [
        (f"https://two.example/near{i}", text.replace(DATE, "Updated on 9 June 2024 at 10:15."))
        for i, (_u, text) in enumerate(first[6:12])
    ]
    second += texts_of("two", range(100, 118))
    return month_table(root / "month1", first), month_table(root / "month2", second, day=9)
