"""FineWeb-2's final touches in the corpus job: the written documents through
:func:`.formatters.format_batch` (an Arrow UDF), their hash and length recomputed, and what changed
counted while they are written (a Spark ``Observation``: no second pass over the texts).

FineWeb-2 runs its formatters after dedup on the documents it writes, so here: dedup has decided
on the texts as the filters left them (their hashes and band hashes), and the touches change only
what is written.  The stored band hashes stay those dedup compared (an ``--against`` build
compares its near copies with them); ``text_hash`` and ``text_length`` are the written text's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # the Arrow UDF's type hints name it

from .formatters import RESULT_DDL, FormatSettings, format_batch


def _touch_udf(settings: FormatSettings):
    from pyspark.sql.functions import arrow_udf

    @arrow_udf(RESULT_DDL)
    def final_touches(text: pa.Array) -> pa.Array:
        return format_batch(text, settings)

    return final_touches


@dataclass
class Touched:
    """The observation of the touches over the written documents (read after the write)."""

    observation: Any
    settings: FormatSettings

    def summary(self) -> dict[str, Any]:
        """The report's ``final_touches``: documents sent to ftfy, changed by each step, examples."""
        metrics = self.observation.get
        out: dict[str, Any] = {
            "fix_encoding": self.settings.fix_encoding,
            "symbol_lines": self.settings.symbol_lines,
            "documents": int(metrics.get("documents") or 0),
            "sent_to_ftfy": int(metrics.get("sent_to_ftfy") or 0),
            "encoding_fixed": int(metrics.get("encoding_fixed") or 0),
            "symbol_lines_changed": int(metrics.get("symbol_lines_changed") or 0),
            "changed": int(metrics.get("changed") or 0),
        }
        for key in ("encoding_examples", "symbol_lines_examples"):
            out[key] = [{"url": r["url"], "change": r["example"]} for r in metrics.get(key) or []]
        return out


def apply(written, settings: FormatSettings):
    """``written`` (the documents about to be written) with the touches applied, ``text_hash`` and
    ``text_length`` recomputed where the text changed, and a :class:`Touched` to read after the
    write."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    touched = written.withColumn("_touch", _touch_udf(settings)("text"))
    changed = F.col("_touch.text_hash").isNotNull()

    def examples(flag: str):
        # bounded: the changed documents of the least and the greatest URL (not every change)
        key = F.when(F.col(f"_touch.{flag}"), F.col("url"))
        row = F.struct("url", F.col("_touch.example").alias("example"))
        return F.array_distinct(
            F.filter(F.array(F.min_by(row, key), F.max_by(row, key)), lambda r: r.isNotNull())
        )

    observation = Observation()
    touched = touched.observe(
        observation,
        F.count(F.lit(1)).alias("documents"),
        F.sum(F.col("_touch.sent_to_ftfy").cast("long")).alias("sent_to_ftfy"),
        F.sum(F.col("_touch.encoding_fixed").cast("long")).alias("encoding_fixed"),
        F.sum(F.col("_touch.symbol_lines").cast("long")).alias("symbol_lines_changed"),
        F.sum(changed.cast("long")).alias("changed"),
        examples("encoding_fixed").alias("encoding_examples"),
        examples("symbol_lines").alias("symbol_lines_examples"),
    )
    return (
        touched.withColumn("text", F.col("_touch.text"))
        .withColumn("text_hash", F.coalesce(F.col("_touch.text_hash"), F.col("text_hash")))
        .withColumn("text_length", F.when(changed, F.length("text")).otherwise(F.col("text_length")))
        .drop("_touch")
    ), Touched(observation, settings)
