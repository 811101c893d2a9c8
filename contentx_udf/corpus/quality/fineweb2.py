"""FineWeb-2's per-language filter configurations, as the filters' settings.

The 1,929 files ``configs/{iso639-3}_{Script}.yml`` of ``huggingface/fineweb-2`` (Apache-2.0;
``data/NOTICE``) ship packed in ``data/fineweb2.json.gz`` (``tools/pack_fineweb2_configs.py``).
``fineweb-2-pipeline.py`` passes each file's values to datatrove's filters as below
(:data:`CONFIG_KEYS`); datatrove's filters test some thresholds with ``if threshold and ...``,
so there a 0 switches the rule off (:data:`ZERO_IS_OFF`: Gopher repetition's ``dup_line_frac``,
Gopher quality's ``min/max_avg_word_length`` and ``max_non_alpha_words_ratio``); the others are
compared as they are: a 0 n-gram fraction drops any text with a repeated n-gram, and
``line_punct_thr`` 0 or -1 never drops (FineWeb quality drops when the share is *below* it).
"""

from __future__ import annotations

import gzip
import json
import statistics
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "fineweb2.json.gz"

#: A config's scalar fields -> the setting each one sets (``stopwords`` sets the profile's stop
#: words; ``top_n_grams`` / ``dup_n_grams`` set ``gopher_repetition.top_<n>_gram_frac`` /
#: ``dup_<n>_gram_frac``).
CONFIG_KEYS = {
    "language_score": "min_language_score",
    "dup_line_frac": "gopher_repetition.dup_line_frac",
    "line_punct_thr": "fineweb.min_line_punct_ratio",
    "new_line_ratio": "fineweb.max_newline_word_ratio",
    "min_avg_word_length": "gopher_quality.min_mean_word_length",
    "max_avg_word_length": "gopher_quality.max_mean_word_length",
    "max_non_alpha_words_ratio": "gopher_quality.min_alpha_words_ratio",
}
STOP_WORDS_FIELD = "stopwords"

#: The language key FineWeb-2 has no configuration for (FineWeb covers English).
ENGLISH = "eng_Latn"

#: Config fields that datatrove reads as off when 0.
ZERO_IS_OFF = frozenset(
    {"dup_line_frac", "min_avg_word_length", "max_avg_word_length", "max_non_alpha_words_ratio"}
)


@cache
def configs() -> dict[str, dict[str, Any]]:
    """Every configuration by its key (``deu_Latn``), as the YAML files hold them."""
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        return json.load(fh)["configs"]


def config_values(config: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(setting key, value)`` pairs of one configuration (stop words aside), 0 as None where
    datatrove reads 0 as off."""
    values: list[tuple[str, Any]] = []
    for field, key in CONFIG_KEYS.items():
        value = config[field]
        values.append((key, None if field in ZERO_IS_OFF and value == 0 else value))
    for n, frac in config["top_n_grams"]:
        values.append((f"gopher_repetition.top_{n}_gram_frac", frac))
    for n, frac in config["dup_n_grams"]:
        values.append((f"gopher_repetition.dup_{n}_gram_frac", frac))
    return values


@cache
def median_config() -> dict[str, Any]:
    """A configuration whose every threshold is the median of FineWeb-2's 1,929 (no stop words):
    what a language without a configuration gets (:mod:`.profiles`)."""
    all_configs = list(configs().values())
    out: dict[str, Any] = {field: statistics.median(c[field] for c in all_configs) for field in CONFIG_KEYS}
    for field in ("top_n_grams", "dup_n_grams"):
        ns = [n for n, _ in all_configs[0][field]]
        out[field] = [[n, statistics.median(dict(c[field])[n] for c in all_configs)] for n in ns]
    out[STOP_WORDS_FIELD] = []
    return out
