"""Every threshold and switch of the quality filters in one place, with FineWeb's values as defaults.

:class:`Settings` holds one frozen section per filter; :data:`PRESETS` are ``fineweb`` (the
FineWeb pipeline, Penedo et al. 2024: Gopher repetition, Gopher quality, C4 without its
terminal-punctuation rule, FineWeb's own rules, language score >= 0.65), ``gopher`` (Rae et al.
2021's two filters), ``c4`` (Raffel et al. 2020's line and page rules, terminal punctuation
included) and ``none``.  The URL blocklist is on when lists are given and PII masking when asked,
whatever the preset.

Overrides, later ones winning: the preset, ``conf/corpus.toml``'s ``[filters]`` table (or
``--filter-config FILE``), ``--filter-set KEY=VALUE`` (any key below, e.g.
``gopher_quality.min_stop_words=off`` switches that rule off, ``c4.enabled=false`` the whole
filter), then the dedicated flags ``--filters``, ``--min-language-score``, ``--url-blocklist``
and ``--mask-pii``.  A threshold set to ``off`` (``none``/``null`` too; in TOML ``false``) is not
applied.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ...errors import UserError
from ...paths import CONF_DIR
from .fineweb2 import CONFIG_KEYS, ENGLISH, STOP_WORDS_FIELD, configs
from .urls import UrlBlocklist

#: The filters in the order they run; their names are the ``drop`` values and the report's keys.
FILTER_ORDER = ("url", "language_score", "gopher_repetition", "gopher_quality", "c4", "fineweb")

#: FineWeb-2's order (``fineweb-2-pipeline.py``): Gopher repetition, FineWeb quality, Gopher
#: quality; C4 is not part of it (last, should it be switched on).
FINEWEB2_ORDER = ("url", "language_score", "gopher_repetition", "fineweb", "gopher_quality", "c4")

#: Gopher's stop words (Rae et al. 2021, §A.1.1), as datatrove's ``GopherQualityFilter`` has them.
ENGLISH_STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")

#: The preset when neither ``--filters`` nor the config names one: no quality filter, so a corpus
#: build keeps what it kept before the filters existed; ``--filters fineweb`` is FineWeb's pipeline.
DEFAULT_PRESET = "none"

#: The corpus jobs' configuration, ``conf/corpus.toml`` (as ``conf/extract.toml`` for the extraction job).
DEFAULT_CONFIG = CONF_DIR / "corpus.toml"


def _ratio(doc: str) -> Any:
    return field(metadata={"kind": "ratio", "doc": doc})


def _number(doc: str, kind: str = "count") -> Any:
    return field(metadata={"kind": kind, "doc": doc})


def _switch(doc: str) -> Any:
    return field(metadata={"kind": "bool", "doc": doc})


@dataclass(frozen=True)
class GopherRepetitionSettings:
    """Gopher repetition (Rae et al. 2021, Table A1; datatrove ``GopherRepetitionFilter``)."""

    enabled: bool = _switch("run the filter")
    dup_para_frac: float | None = _ratio("max share of paragraphs (split at blank lines) that repeat one")
    dup_para_char_frac: float | None = _ratio("max share of characters in repeated paragraphs")
    dup_line_frac: float | None = _ratio("max share of lines that repeat an earlier line")
    dup_line_char_frac: float | None = _ratio("max share of characters in repeated lines")
    top_2_gram_frac: float | None = _ratio("max share of characters in the most frequent word 2-gram")
    top_3_gram_frac: float | None = _ratio("max share of characters in the most frequent word 3-gram")
    top_4_gram_frac: float | None = _ratio("max share of characters in the most frequent word 4-gram")
    dup_5_gram_frac: float | None = _ratio("max share of characters in repeated word 5-grams")
    dup_6_gram_frac: float | None = _ratio("max share of characters in repeated word 6-grams")
    dup_7_gram_frac: float | None = _ratio("max share of characters in repeated word 7-grams")
    dup_8_gram_frac: float | None = _ratio("max share of characters in repeated word 8-grams")
    dup_9_gram_frac: float | None = _ratio("max share of characters in repeated word 9-grams")
    dup_10_gram_frac: float | None = _ratio("max share of characters in repeated word 10-grams")


GOPHER_REPETITION = GopherRepetitionSettings(
    enabled=True,
    dup_para_frac=0.3,
    dup_para_char_frac=0.2,
    dup_line_frac=0.3,
    dup_line_char_frac=0.2,
    top_2_gram_frac=0.20,
    top_3_gram_frac=0.18,
    top_4_gram_frac=0.16,
    dup_5_gram_frac=0.15,
    dup_6_gram_frac=0.14,
    dup_7_gram_frac=0.13,
    dup_8_gram_frac=0.12,
    dup_9_gram_frac=0.11,
    dup_10_gram_frac=0.10,
)


@dataclass(frozen=True)
class GopherQualitySettings:
    """Gopher quality (Rae et al. 2021, §A.1.1; datatrove ``GopherQualityFilter``)."""

    enabled: bool = _switch("run the filter")
    min_words: int | None = _number("min words that are not only punctuation")
    max_words: int | None = _number("max words that are not only punctuation")
    min_mean_word_length: float | None = _number("min mean characters of those words", "length")
    max_mean_word_length: float | None = _number("max mean characters of those words", "length")
    max_hash_word_ratio: float | None = _ratio("max '#' per word")
    max_ellipsis_word_ratio: float | None = _ratio("max ellipses ('...' or '…') per word")
    max_bullet_lines_ratio: float | None = _ratio("max share of lines starting with a bullet ('•' or '-')")
    max_ellipsis_lines_ratio: float | None = _ratio("max share of lines ending in an ellipsis")
    min_alpha_words_ratio: float | None = _ratio("min share of words holding a letter")
    min_stop_words: int | None = _number("min distinct stop words of the text's language (if it has a list)")
    stop_words: tuple[tuple[str, tuple[str, ...]], ...] = field(
        default=(("en", ENGLISH_STOP_WORDS),),
        metadata={"kind": "stop_words", "doc": "stop words per language code"},
    )

    def stop_words_of(self, language: str) -> tuple[str, ...] | None:
        return dict(self.stop_words).get(language)


GOPHER_QUALITY = GopherQualitySettings(
    enabled=True,
    min_words=50,
    max_words=100_000,
    min_mean_word_length=3,
    max_mean_word_length=10,
    max_hash_word_ratio=0.1,
    max_ellipsis_word_ratio=0.1,
    max_bullet_lines_ratio=0.9,
    max_ellipsis_lines_ratio=0.3,
    min_alpha_words_ratio=0.8,
    min_stop_words=2,
)


@dataclass(frozen=True)
class C4Settings:
    """C4 (Raffel et al. 2020, §2.2; tensorflow_datasets ``c4_utils``; datatrove ``C4QualityFilter``).

    The line rules remove lines (the kept lines, stripped and joined by newlines, become the text);
    the page rules drop the document."""

    enabled: bool = _switch("run the filter")
    max_word_length: int | None = _number("remove lines with a whitespace-separated word longer than this")
    min_words_per_line: int | None = _number("remove lines with fewer whitespace-separated words")
    javascript_lines: bool = _switch("remove lines mentioning 'javascript'")
    policy_lines: bool = _switch("remove lines with 'terms of use', 'privacy policy', cookie phrases")
    citations: bool = _switch("remove Wikipedia citation marks ([1], [edit], [citation needed])")
    terminal_punctuation: bool = _switch("remove lines not ending in . ? ! \" ' (or ending in '...')")
    lorem_ipsum: bool = _switch("drop pages containing 'lorem ipsum'")
    curly_bracket: bool = _switch("drop pages containing '{'")
    min_sentences: int | None = _number("drop pages with fewer sentences in their kept lines")


C4 = C4Settings(
    enabled=True,
    max_word_length=1000,
    min_words_per_line=3,
    javascript_lines=True,
    policy_lines=True,
    citations=True,
    terminal_punctuation=True,
    lorem_ipsum=True,
    curly_bracket=True,
    min_sentences=5,
)


@dataclass(frozen=True)
class FineWebSettings:
    """FineWeb's own rules (Penedo et al. 2024; datatrove ``FineWebQualityFilter``)."""

    enabled: bool = _switch("run the filter")
    min_line_punct_ratio: float | None = _ratio("min share of lines ending in terminal punctuation")
    line_punct_exclude_zero: bool = _switch("do not apply min_line_punct_ratio when no line ends so")
    max_short_line_ratio: float | None = _ratio("max share of lines of at most short_line_length chars")
    short_line_length: int = _number("characters of a short line")
    max_dup_line_char_ratio: float | None = _ratio("max share of characters in repeated lines")
    max_newline_word_ratio: float | None = _number("max newlines per word", "length")


FINEWEB = FineWebSettings(
    enabled=True,
    min_line_punct_ratio=0.12,
    line_punct_exclude_zero=False,
    max_short_line_ratio=0.67,
    short_line_length=30,
    max_dup_line_char_ratio=0.01,
    max_newline_word_ratio=0.3,
)

SECTIONS = {
    "gopher_repetition": GopherRepetitionSettings,
    "gopher_quality": GopherQualitySettings,
    "c4": C4Settings,
    "fineweb": FineWebSettings,
}


@dataclass(frozen=True)
class Settings:
    """Every switch and threshold of the filters (see the module docstring)."""

    preset: str = "fineweb"
    min_language_score: float | None = 0.65
    url_blocklist: UrlBlocklist | None = None
    mask_pii: bool = False
    word_rules_without_spaces: bool = False
    #: FineWeb-2's final touches, after dedup on the written texts (:mod:`..formatters`): ftfy's
    #: encoding repair and the ``|`` table lines made paragraph breaks
    fix_encoding: bool = False
    symbol_lines: bool = False
    gopher_repetition: GopherRepetitionSettings = GOPHER_REPETITION
    gopher_quality: GopherQualitySettings = GOPHER_QUALITY
    c4: C4Settings = replace(C4, terminal_punctuation=False)
    fineweb: FineWebSettings = FINEWEB
    #: the filters in the order they run (:data:`FILTER_ORDER` or :data:`FINEWEB2_ORDER`)
    order: tuple[str, ...] = FILTER_ORDER
    #: each document filtered with its language's profile (:mod:`.profiles`; ``fineweb2``)
    language_profiles: bool = False
    #: the keys set over the preset, in order, ``(key, value)``: a language profile replays them
    overrides: tuple[tuple[str, Any], ...] = ()
    #: ``fineweb2.<language key>.<key>`` settings, ``(language key, key, value)``, in order
    language_overrides: tuple[tuple[str, str, Any], ...] = ()


def _off(section):
    return replace(section, enabled=False)


PRESETS: dict[str, Settings] = {
    "fineweb": Settings(),
    #: FineWeb-2's pipeline; every threshold below marked "per language" comes from the document's
    #: language profile (:mod:`.profiles`), these are the values no configuration changes
    "fineweb2": Settings(
        preset="fineweb2",
        min_language_score=None,  # per language
        word_rules_without_spaces=True,  # the language's segmenter gives real words
        fix_encoding=True,  # FTFYFormatter() and SymbolLinesFormatter(["|"], "\n"), after dedup
        symbol_lines=True,
        gopher_repetition=replace(
            GOPHER_REPETITION,  # dup_line_frac and the n-gram fractions per language
            dup_para_frac=None,
            dup_para_char_frac=None,
            dup_line_char_frac=None,
        ),
        gopher_quality=replace(GOPHER_QUALITY, stop_words=()),  # word lengths, alpha, stop words per language
        c4=_off(C4),
        fineweb=replace(FINEWEB, max_short_line_ratio=None, max_dup_line_char_ratio=0.1),  # punct, newlines
        order=FINEWEB2_ORDER,
        language_profiles=True,
    ),
    "gopher": Settings(preset="gopher", min_language_score=None, c4=_off(Settings.c4), fineweb=_off(FINEWEB)),
    "c4": Settings(
        preset="c4",
        min_language_score=None,
        gopher_repetition=_off(GOPHER_REPETITION),
        gopher_quality=_off(GOPHER_QUALITY),
        c4=C4,
        fineweb=_off(FINEWEB),
    ),
    "none": Settings(
        preset="none",
        min_language_score=None,
        gopher_repetition=_off(GOPHER_REPETITION),
        gopher_quality=_off(GOPHER_QUALITY),
        c4=_off(C4),
        fineweb=_off(FINEWEB),
    ),
}

#: Per-language settings of the ``fineweb2`` preset: ``fineweb2.deu_Latn.new_line_ratio=0.2``.
LANGUAGE_PREFIX = "fineweb2."

_TOP_KEYS = {
    "min_language_score": "drop rows whose language_score is below this",
    "mask_pii": "mask e-mail addresses and public IP addresses in kept texts",
    "word_rules_without_spaces": "apply the word rules to scripts without spaces (their 'words' are phrases)",
    "fix_encoding": "repair mojibake, C1 and control characters, HTML entities in the written texts (ftfy)",
    "symbol_lines": "make lines of '|' (table separators) paragraph breaks in the written texts",
}


# -- values ----------------------------------------------------------------------------------------

_OFF_WORDS = {"off", "none", "null"}
_TRUE_WORDS = {"true", "yes", "on", "1"}
_FALSE_WORDS = {"false", "no", "0"}


def _parse(key: str, kind: str, value: Any, nullable: bool) -> Any:
    """``value`` (a string from the command line or a TOML value) checked against ``kind``."""
    if isinstance(value, str):
        text = value.strip().lower()
        if kind == "bool":
            if text in _TRUE_WORDS:
                return True
            if text in _FALSE_WORDS or text in _OFF_WORDS:
                return False
            raise UserError(f"{key}: expected true or false, got {value!r}")
        if nullable and text in _OFF_WORDS:
            return None
        if kind == "stop_words":
            raise UserError(f"{key}: stop words are set per language, e.g. {key}.de=der,die,und")
        try:
            value = float(text)
        except ValueError:
            raise UserError(
                f"{key}: expected a number{' or off' if nullable else ''}, got {value!r}"
            ) from None
    if kind == "bool":
        if not isinstance(value, bool):
            raise UserError(f"{key}: expected true or false, got {value!r}")
        return value
    if value is False and nullable:  # TOML has no null: false switches a threshold off
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise UserError(f"{key}: expected a number{' or off' if nullable else ''}, got {value!r}")
    if kind == "ratio" and not 0 <= value <= 1:
        raise UserError(f"{key}: expected a ratio between 0 and 1, got {value}")
    if value < 0:
        raise UserError(f"{key}: expected a non-negative number, got {value}")
    if kind == "count":
        if value != int(value):
            raise UserError(f"{key}: expected a whole number, got {value}")
        return int(value)
    return float(value)


def _field_info(section_type: type, name: str) -> dataclasses.Field | None:
    return next((f for f in fields(section_type) if f.name == name), None)


def _valid_keys() -> list[str]:
    keys = list(_TOP_KEYS)
    for section, section_type in SECTIONS.items():
        keys += [f"{section}.{f.name}" for f in fields(section_type)]
    return keys


def frozen_value(value: Any) -> Any:
    """``value`` with lists and tables made tuples (hashable: profiles are cached on them)."""
    if isinstance(value, Mapping):
        return tuple((k, frozen_value(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(frozen_value(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    """A value of :func:`frozen_value` back as the table it was (a tuple of pairs -> a dict)."""
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        if all(isinstance(k, str) for k, _ in value):
            return {k: _thawed(v) for k, v in value}
    return value


def _set(settings: Settings, key: str, value: Any) -> Settings:
    """``settings`` with one key set (:func:`assign`), recorded in ``overrides`` (or, for
    ``fineweb2.<language key>.<key>``, in ``language_overrides``)."""
    if key.startswith(LANGUAGE_PREFIX):
        language, name, parsed = language_override(key, value)
        return replace(settings, language_overrides=(*settings.language_overrides, (language, name, parsed)))
    new = assign(settings, key, value)
    return replace(new, overrides=(*settings.overrides, (key, frozen_value(value))))


def assign(settings: Settings, key: str, value: Any) -> Settings:
    """``settings`` with one key (``min_language_score``, ``section.field`` or
    ``gopher_quality.stop_words.<lang>``) set from ``value``."""
    value = _thawed(value)
    if key in _TOP_KEYS:
        kind = "ratio" if key == "min_language_score" else "bool"
        return replace(settings, **{key: _parse(key, kind, value, key == "min_language_score")})
    parts = key.split(".")
    if len(parts) == 3 and parts[:2] == ["gopher_quality", "stop_words"]:
        return _set_stop_words(settings, key, parts[2], value)
    if len(parts) != 2 or parts[0] not in SECTIONS or _field_info(SECTIONS[parts[0]], parts[1]) is None:
        raise UserError(
            f"unknown filter setting {key!r}; valid keys: {', '.join(_valid_keys())}, "
            f"{LANGUAGE_PREFIX}<language key>.<key>"
        )
    section_name, name = parts
    info = _field_info(SECTIONS[section_name], name)
    if info.metadata["kind"] == "stop_words":
        if not isinstance(value, Mapping):
            raise UserError(f"{key}: give stop words per language, e.g. {key}.de=der,die,und")
        for language, words in value.items():
            settings = _set_stop_words(settings, key, language, words)
        return settings
    nullable = "None" in str(info.type)
    section = getattr(settings, section_name)
    new = replace(section, **{name: _parse(key, info.metadata["kind"], value, nullable)})
    return replace(settings, **{section_name: new})


def _set_stop_words(settings: Settings, key: str, language: str, words: Any) -> Settings:
    if isinstance(words, str):
        words = [w.strip() for w in words.split(",")]
    if not isinstance(words, Sequence) or not all(isinstance(w, str) and w.strip() for w in words):
        raise UserError(f"{key}: expected a list of words for language {language!r}, got {words!r}")
    table = dict(settings.gopher_quality.stop_words)
    table[language.strip().lower()] = tuple(w.strip() for w in words)
    quality = replace(settings.gopher_quality, stop_words=tuple(sorted(table.items())))
    return replace(settings, gopher_quality=quality)


def preset(name: str) -> Settings:
    """The preset ``name`` (``fineweb``, ``fineweb2``, ``gopher``, ``c4``, ``none``)."""
    try:
        return PRESETS[name.strip().lower()]
    except KeyError:
        raise UserError(f"unknown filter preset {name!r}; choose one of {', '.join(PRESETS)}") from None


def apply_table(settings: Settings, table: Mapping[str, Any], source: str) -> Settings:
    """``settings`` with the keys of a ``[filters]`` TOML table set (``preset`` is read by the
    caller; ``url_blocklist`` files are loaded)."""
    for key, value in table.items():
        if key in ("preset",):
            continue
        if key == "url_blocklist":
            files = [value] if isinstance(value, str) else value
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise UserError(f"{source}: url_blocklist must be a file name or a list of file names")
            settings = replace(settings, url_blocklist=UrlBlocklist.load(files))
        elif key in SECTIONS:
            if not isinstance(value, Mapping):
                raise UserError(f"{source}: [filters.{key}] must be a table")
            for name, item in value.items():
                settings = _set(settings, f"{key}.{name}", item)
        elif key == LANGUAGE_PREFIX[:-1]:
            if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
                raise UserError(
                    f"{source}: [filters.fineweb2] holds tables such as [filters.fineweb2.deu_Latn]"
                )
            for language, table_ in value.items():
                for name, item in _flatten(table_):
                    settings = _set(settings, f"{LANGUAGE_PREFIX}{language}.{name}", item)
        else:
            settings = _set(settings, key, value)
    return settings


def _flatten(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"gopher_quality": {"min_words": 30}}`` -> ``[("gopher_quality.min_words", 30)]``."""
    out: list[tuple[str, Any]] = []
    for name, value in table.items():
        if isinstance(value, Mapping) and name in SECTIONS:
            out += _flatten(value, f"{prefix}{name}.")
        else:
            out.append((f"{prefix}{name}", value))
    return out


def load_filter_table(path: str | Path | None) -> tuple[dict[str, Any], str]:
    """The ``[filters]`` table of ``path`` (default ``conf/corpus.toml`` when it exists)."""
    if path is None:
        if not DEFAULT_CONFIG.exists():
            return {}, str(DEFAULT_CONFIG)
        path = DEFAULT_CONFIG
    try:
        with open(path, "rb") as fh:
            document = tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"filter config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"filter config file {path} is not valid TOML: {exc}") from None
    table = document.get("filters", {})
    if not isinstance(table, Mapping):
        raise UserError(f"{path}: [filters] must be a table")
    return dict(table), str(path)


# -- per-language keys -------------------------------------------------------------------------------


def language_override(key: str, value: Any) -> tuple[str, str, Any]:
    """``fineweb2.<language key>.<name>=value`` checked: ``(language key, setting key, value)``;
    a config field name becomes its setting key (``new_line_ratio`` ->
    ``fineweb.max_newline_word_ratio``); a bad key or value is a one-line UserError."""
    _, _, rest = key.partition(".")
    language, _, name = rest.partition(".")
    if language not in configs() and language != ENGLISH:
        raise UserError(
            f"{key}: unknown FineWeb-2 language key {language!r}; valid: eng_Latn or the key of a "
            f"FineWeb-2 configuration (iso639-3_Script, e.g. deu_Latn, fra_Latn, cmn_Hani; "
            f"{len(configs())} in contentx_udf/corpus/quality/data/fineweb2.json.gz)"
        )
    if not name:
        raise UserError(f"{key}: expected fineweb2.{language}.<field>=VALUE")
    if name == STOP_WORDS_FIELD:
        words = [w.strip() for w in value.split(",")] if isinstance(value, str) else value
        if not isinstance(words, list | tuple) or not all(isinstance(w, str) and w.strip() for w in words):
            raise UserError(f"{key}: expected a list of words, got {value!r}")
        return language, STOP_WORDS_FIELD, tuple(w.strip() for w in words)
    setting = CONFIG_KEYS.get(name, name)
    if setting.startswith("c4."):
        raise UserError(
            f"{key}: C4 is not part of FineWeb-2's per-language filters; set c4.* for every language"
        )
    try:
        assign(PRESETS["fineweb2"], setting, value)
    except UserError as error:
        if str(error).startswith("unknown filter setting"):
            fields = ", ".join([*CONFIG_KEYS, STOP_WORDS_FIELD])
            raise UserError(
                f"{key}: unknown field {name!r}; valid: {fields}, or any filter setting key "
                "(e.g. gopher_quality.min_words)"
            ) from None
        raise UserError(f"{key}: {error}") from None
    return language, setting, frozen_value(value)


# -- command line ----------------------------------------------------------------------------------


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """The quality filters' flags (for ``contentx corpus``)."""
    group = parser.add_argument_group("quality filters (Gopher, C4, FineWeb, URL, PII)")
    group.add_argument(
        "--filters",
        default=None,
        metavar="PRESET",
        help=f"preset: {' | '.join(PRESETS)} (default {DEFAULT_PRESET}, or the config's [filters] preset)",
    )
    group.add_argument(
        "--min-language-score",
        default=None,
        metavar="X",
        help="drop rows whose language_score is below X, 0-1 (fineweb preset: 0.65; 'off' = none)",
    )
    group.add_argument(
        "--url-blocklist",
        nargs="+",
        default=None,
        metavar="FILE",
        help="drop rows whose URL matches a list: one entry per line, 'domain:', 'url:', 'word:' or "
        "'subword:' prefix (a bare entry is a domain); see contentx_udf/corpus/quality/urls.py",
    )
    group.add_argument(
        "--mask-pii", action="store_true", help="mask e-mail addresses and public IP addresses in kept texts"
    )
    group.add_argument(
        "--fix-encoding",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="repair the written texts' encoding as FineWeb-2 does (ftfy with datatrove's FTFYFormatter "
        "configuration: mojibake, control characters, HTML entities), after dedup (fineweb2 preset: on)",
    )
    group.add_argument(
        "--symbol-lines",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="make runs of lines of '|' (table separators) in the written texts one paragraph break, "
        "as FineWeb-2's SymbolLinesFormatter does, after dedup (fineweb2 preset: on)",
    )
    group.add_argument(
        "--filter-config",
        default=None,
        metavar="FILE",
        help="TOML file whose [filters] table tunes the filters (default conf/corpus.toml)",
    )
    group.add_argument(
        "--filter-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set one threshold or switch, e.g. gopher_quality.min_stop_words=off, c4.enabled=false, "
        "fineweb.max_short_line_ratio=0.7, or one language's under fineweb2: "
        "fineweb2.deu_Latn.new_line_ratio=0.2 (repeatable; keys in conf/corpus.toml)",
    )


def is_active(settings: Settings) -> bool:
    """Whether any filter, the language score, a blocklist or PII masking is on."""
    return (
        settings.min_language_score is not None
        or settings.url_blocklist is not None
        or settings.mask_pii
        or any(getattr(settings, section).enabled for section in SECTIONS)
    )


def filter_settings(args: argparse.Namespace) -> Settings:
    """:class:`Settings` from the flags of :func:`add_filter_arguments`; a bad value is a
    :class:`~contentx_udf.errors.UserError` of one sentence."""
    table, source = load_filter_table(getattr(args, "filter_config", None))
    name = args.filters if getattr(args, "filters", None) else table.get("preset", DEFAULT_PRESET)
    if not isinstance(name, str):
        raise UserError(f"{source}: preset must be one of {', '.join(PRESETS)}")
    settings = apply_table(preset(name), table, source)
    for item in getattr(args, "filter_set", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--filter-set expects KEY=VALUE, got {item!r}")
        settings = _set(settings, key.strip(), value)
    if getattr(args, "min_language_score", None) is not None:
        settings = _set(settings, "min_language_score", args.min_language_score)
    if getattr(args, "url_blocklist", None):
        settings = replace(settings, url_blocklist=UrlBlocklist.load(args.url_blocklist))
    if getattr(args, "mask_pii", False):
        settings = replace(settings, mask_pii=True)
    for flag in ("fix_encoding", "symbol_lines"):
        if getattr(args, flag, None) is not None:
            settings = replace(settings, **{flag: getattr(args, flag)})
    return settings


def describe(settings: Settings) -> dict[str, Any]:
    """The settings as plain data (for the report and logs)."""
    out: dict[str, Any] = {
        "preset": settings.preset,
        "min_language_score": settings.min_language_score,
        "url_blocklist": None if settings.url_blocklist is None else settings.url_blocklist.summary(),
        "mask_pii": settings.mask_pii,
        "word_rules_without_spaces": settings.word_rules_without_spaces,
        "fix_encoding": settings.fix_encoding,
        "symbol_lines": settings.symbol_lines,
        "order": list(settings.order),
        "language_profiles": settings.language_profiles,
        "language_overrides": [
            [language, key, _thawed(value)] for language, key, value in settings.language_overrides
        ],
    }
    for section in SECTIONS:
        values = dataclasses.asdict(getattr(settings, section))
        if "stop_words" in values:
            values["stop_words"] = {lang: list(words) for lang, words in values["stop_words"]}
        out[section] = values
    return out
