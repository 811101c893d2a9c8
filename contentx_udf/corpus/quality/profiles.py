"""Language profiles: per FineWeb-2 language key, the full :class:`.settings.Settings` the
filters read (thresholds, stop words) and the word segmenter, for the ``fineweb2`` preset.

A profile is built once per key (cached) in this order, later steps winning:

1. the ``fineweb2`` preset (:data:`.settings.PRESETS`): what FineWeb-2 sets for every language
   (``fineweb-2-pipeline.py``: Gopher repetition without its paragraph and line-character
   rules, FineWeb quality with ``char_duplicates_ratio`` 0.1 and no short-line rule, Gopher
   quality at datatrove's defaults with ``min_stop_words`` 2, no C4);
2. the language's configuration (:mod:`.fineweb2`): language score, ``dup_line_frac``, top and
   duplicate n-gram fractions, ``line_punct_thr``, ``new_line_ratio``, mean word length bounds,
   ``max_non_alpha_words_ratio`` (the share of words holding a letter) and the stop words;
3. the keys set over the preset (``conf/corpus.toml``, ``--filter-set``, ``--min-language-score``),
   for every language;
4. the keys set for this language: ``fineweb2.<key>.<name>``, where ``<name>`` is a config field
   (:data:`.fineweb2.CONFIG_KEYS`, ``stopwords``) or any setting key.

**Fallback** (the per-document ``fallback`` column says which, :data:`FALLBACK_REASONS`): FineWeb-2
has no configuration for English (FineWeb covers it), so ``eng_Latn`` gets FineWeb's English
settings for the same three filters (Gopher repetition and quality, FineWeb quality at datatrove's
defaults, Gopher's stop words, language score 0.65); a key whose language FineWeb-2 configures
in another script only (``rus_Latn``) gets that language's configuration (the profile is then
that key); any other key, and a document without a language label (``und``), gets the median of
every threshold over FineWeb-2's 1,929 configurations (what FineWeb-2 itself gives most of its
languages: language score 0.3, no line-punctuation rule) without the stop-word rule, since another
language's stop words would drop every document.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

import numpy as np

from ...text.codes import LID_KEYS
from ...text.segment import segmenter_for
from .fineweb2 import ENGLISH, STOP_WORDS_FIELD, config_values, configs, median_config
from .settings import (
    ENGLISH_STOP_WORDS,
    FINEWEB,
    GOPHER_QUALITY,
    GOPHER_REPETITION,
    PRESETS,
    SECTIONS,
    Settings,
    assign,
)

#: The profile key of a document without a language label (ISO 639-3 "undetermined").
UNDETERMINED = "und"

#: Why a document's own key did not give its profile (the ``fallback`` column).
FALLBACK_REASONS = {
    "english": "FineWeb's English settings (FineWeb-2 has no English configuration)",
    "other_script": "the configuration of the same language in another script",
    "no_config": "the median of FineWeb-2's thresholds, no stop-word rule (no configuration)",
    "no_language": "the median of FineWeb-2's thresholds, no stop-word rule (no language label)",
}


@dataclass(frozen=True)
class Profile:
    """The settings of one language: ``key`` (whose configuration was used), ``settings`` (what
    the filters read), ``segmenter`` (:func:`~contentx_udf.text.segment.segmenter_for`) and
    ``fallback`` (None, or a key of :data:`FALLBACK_REASONS`)."""

    key: str
    settings: Settings
    segmenter: str
    fallback: str | None


def resolve(key: str | None) -> tuple[str, str | None]:
    """``(profile key, fallback)`` of a document's language key (None: no language label)."""
    if key is None or key == UNDETERMINED:
        return UNDETERMINED, "no_language"
    known = configs()
    if key in known:
        return key, None
    if key == ENGLISH:
        return ENGLISH, "english"
    other = _other_script(key.split("_")[0])
    if other is not None:
        return other, "other_script"
    return key, "no_config"


@cache
def _other_script(language: str) -> str | None:
    """The usual key of an ISO 639-3 code FineWeb-2 configures (lid.176's first choice, else the
    first in name order), or None."""
    for keys in LID_KEYS.values():
        if keys[0].split("_")[0] == language and keys[0] in configs():
            return keys[0]
    return next((k for k in sorted(configs()) if k.split("_")[0] == language), None)


def profile_for(settings: Settings, key: str | None) -> Profile:
    """The profile of a document's language key under ``settings`` (the ``fineweb2`` preset and
    what was set over it)."""
    profile_key, fallback = resolve(key)
    fields = _profile_fields(settings.overrides, settings.language_overrides, profile_key, fallback)
    return Profile(profile_key, replace(settings, **fields), segmenter_for(profile_key), fallback)


@lru_cache(maxsize=4096)
def _profile_fields(
    overrides: tuple, language_overrides: tuple, key: str, fallback: str | None
) -> dict[str, Any]:
    """The settings fields of a profile (module docstring, steps 1-4)."""
    base = PRESETS["fineweb2"]
    if fallback == "english":
        quality = replace(GOPHER_QUALITY, stop_words=((key, ENGLISH_STOP_WORDS),))
        base = replace(
            base,
            min_language_score=0.65,
            gopher_repetition=GOPHER_REPETITION,
            gopher_quality=quality,
            fineweb=FINEWEB,
        )
    else:
        config = configs()[key] if fallback in (None, "other_script") else median_config()
        for name, value in config_values(config):
            base = _assign_raw(base, name, value)
        base = _with_stop_words(base, key, config[STOP_WORDS_FIELD])
    for name, value in overrides:
        base = assign(base, name, value)
    for language, name, value in language_overrides:
        if language == key:
            base = (
                _with_stop_words(base, key, value) if name == STOP_WORDS_FIELD else assign(base, name, value)
            )
    return {
        "min_language_score": base.min_language_score,
        "word_rules_without_spaces": base.word_rules_without_spaces,
        "gopher_repetition": base.gopher_repetition,
        "gopher_quality": base.gopher_quality,
        "c4": base.c4,
        "fineweb": base.fineweb,
    }


def _assign_raw(settings: Settings, name: str, value: Any) -> Settings:
    """One setting set to a configuration's value as it is (FineWeb-2 has thresholds outside the
    ranges a user may type: ``line_punct_thr`` -1, ``dup_line_frac`` 1.32)."""
    if name == "min_language_score":
        return replace(settings, min_language_score=value)
    section, field = name.split(".")
    return replace(settings, **{section: replace(getattr(settings, section), **{field: value})})


def _with_stop_words(settings: Settings, key: str, words) -> Settings:
    table = ((key, tuple(words)),) if words else ()
    return replace(settings, gopher_quality=replace(settings.gopher_quality, stop_words=table))


# -- several profiles in one pass --------------------------------------------------------------------


def combined_settings(profiles: list[Profile], index: np.ndarray) -> Settings:
    """One :class:`Settings` for documents of several profiles (``index``: each document's
    position in ``profiles``), so that the filters run once over them: a value all the profiles
    share stays as it is, any other becomes a per-document array (a threshold that is off for a
    document is -inf for a minimum, +inf for a maximum: it never fails); the stop-word tables
    are merged (each is keyed by its profile's key)."""
    first = profiles[0].settings
    if len(profiles) == 1:
        return first
    settings = [p.settings for p in profiles]
    fields: dict[str, Any] = {}
    for name in ("word_rules_without_spaces",):
        fields[name] = _per_document([getattr(s, name) for s in settings], index, "bool", name)
    for section_name, section_type in SECTIONS.items():
        sections = [getattr(s, section_name) for s in settings]
        values: dict[str, Any] = {}
        for f in dataclasses.fields(section_type):
            items = [getattr(section, f.name) for section in sections]
            if f.metadata["kind"] == "stop_words":
                values[f.name] = tuple(dict(pair for table in items for pair in table).items())
            else:
                values[f.name] = _per_document(items, index, f.metadata["kind"], f.name)
        fields[section_name] = replace(sections[0], **values)
    return replace(first, **fields)


def _per_document(items: list, index: np.ndarray, kind: str, name: str) -> Any:
    """``items`` (one per profile) as one value when equal, else as a per-document array."""
    if all(item == items[0] for item in items[1:]):
        return items[0]
    if kind == "bool":
        return np.asarray(items, bool)[index]
    never = -np.inf if name.startswith("min_") else np.inf
    return np.asarray([never if item is None else item for item in items], float)[index]
