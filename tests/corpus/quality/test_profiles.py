"""The fineweb2 preset: FineWeb-2's configurations packed unchanged, one profile per language
(thresholds, stop words, segmenter, fallback), per-language overrides, FineWeb-2's filter order,
and its decisions on real texts (UDHR translations made into documents)."""

from __future__ import annotations

import argparse
import itertools
import re
from pathlib import Path

import pytest

from contentx_udf.corpus.quality.batch import apply_filters
from contentx_udf.corpus.quality.fineweb2 import configs, median_config
from contentx_udf.corpus.quality.profiles import FALLBACK_REASONS, profile_for, resolve
from contentx_udf.corpus.quality.settings import (
    ENGLISH_STOP_WORDS,
    FINEWEB2_ORDER,
    PRESETS,
    Settings,
    add_filter_arguments,
    filter_settings,
)
from contentx_udf.errors import UserError
from contentx_udf.text.codes import LID_KEYS
from contentx_udf.text.segment import segmenter_for

from ...conftest import SHARED, shared_or_skip

FINEWEB2 = PRESETS["fineweb2"]
CONFIG_DIR = SHARED / "data" / "fineweb2-configs"
UDHR = SHARED / "data" / "udhr2"


def parse(*argv: str, config: Path | None = None) -> Settings:
    parser = argparse.ArgumentParser()
    add_filter_arguments(parser)
    args = parser.parse_args(
        ["--filters", "fineweb2", *argv] + ([] if config is None else ["--filter-config", str(config)])
    )
    return filter_settings(args)


def udhr(name: str) -> str:
    """The UDHR in one language as a document: its non-blank lines, stripped."""
    text = shared_or_skip(UDHR / f"{name}.txt").read_text(encoding="utf-8")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def without_words(text: str, words) -> str:
    """``text`` without the given words (whole words, as written)."""
    pattern = r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + r")(?!\w)"
    return re.sub(r"[ \t]+", " ", re.sub(pattern, "", text))


# -- the data ----------------------------------------------------------------------------------------


def test_the_packed_configurations_equal_the_yaml_files():
    yaml = pytest.importorskip("yaml")
    files = sorted(shared_or_skip(CONFIG_DIR).glob("*.yml"))
    assert len(files) == len(configs()) == 1929
    for path in files:
        with open(path, encoding="utf-8") as fh:
            assert configs()[path.stem] == yaml.safe_load(fh), path.name


def test_every_key_a_lid_label_can_mean_has_a_configuration_but_english():
    keys = {key for candidates in LID_KEYS.values() for key in candidates}
    assert keys - set(configs()) == {"eng_Latn"}


# -- profiles ----------------------------------------------------------------------------------------


def test_a_configured_language_gets_its_own_thresholds_stop_words_and_segmenter():
    config = configs()["deu_Latn"]
    profile = profile_for(FINEWEB2, "deu_Latn")
    s = profile.settings
    assert (profile.key, profile.fallback, profile.segmenter) == ("deu_Latn", None, segmenter_for("deu_Latn"))
    assert s.min_language_score == config["language_score"]
    assert s.gopher_repetition.dup_line_frac == config["dup_line_frac"]
    assert s.gopher_repetition.top_2_gram_frac == dict(config["top_n_grams"])[2]
    assert s.gopher_repetition.dup_10_gram_frac == dict(config["dup_n_grams"])[10]
    assert s.fineweb.max_newline_word_ratio == config["new_line_ratio"]
    assert s.fineweb.min_line_punct_ratio == config["line_punct_thr"]
    assert s.gopher_quality.min_alpha_words_ratio == config["max_non_alpha_words_ratio"]
    assert s.gopher_quality.max_mean_word_length == config["max_avg_word_length"]
    assert config["min_avg_word_length"] == 0 and s.gopher_quality.min_mean_word_length is None  # 0 is off
    assert s.gopher_quality.stop_words_of("deu_Latn") == tuple(config["stopwords"])
    # what FineWeb-2 sets for every language
    assert s.gopher_quality.min_stop_words == 2 and s.gopher_quality.min_words == 50
    assert s.gopher_repetition.dup_para_frac is None and s.gopher_repetition.dup_line_char_frac is None
    assert s.fineweb.max_short_line_ratio is None and s.fineweb.max_dup_line_char_ratio == 0.1
    assert not s.c4.enabled and s.word_rules_without_spaces and s.order == FINEWEB2_ORDER


def test_languages_without_a_configuration_fall_back_and_say_why():
    english = profile_for(FINEWEB2, "eng_Latn")
    assert english.fallback == "english" and english.settings.min_language_score == 0.65
    assert english.settings.gopher_quality.stop_words_of("eng_Latn") == ENGLISH_STOP_WORDS
    assert english.settings.fineweb.max_short_line_ratio == PRESETS["fineweb"].fineweb.max_short_line_ratio
    assert resolve("rus_Latn") == ("rus_Cyrl", "other_script")
    unknown = profile_for(FINEWEB2, "qqq_Latn")
    assert (unknown.key, unknown.fallback) == ("qqq_Latn", "no_config")
    assert unknown.settings.gopher_quality.stop_words == ()  # no stop-word rule
    assert unknown.settings.fineweb.max_newline_word_ratio == median_config()["new_line_ratio"]
    assert resolve(None) == ("und", "no_language")
    assert {"english", "other_script", "no_config", "no_language"} == set(FALLBACK_REASONS)


def test_the_fallback_is_in_the_output():
    text = udhr("eng")
    result = apply_filters([text, text, text], None, ["en", None, "__label__qqq_Latn"], [0.9] * 3, FINEWEB2)
    assert result.profile.to_pylist() == ["eng_Latn", "und", "qqq_Latn"]
    assert result.fallback.to_pylist() == ["english", "no_language", "no_config"]
    assert result.to_arrow().column("fallback").to_pylist() == ["english", "no_language", "no_config"]
    alone = apply_filters([text], None, None, [0.9], FINEWEB2)  # no labels: English
    assert alone.profile.to_pylist() == ["eng_Latn"] and alone.fallback.to_pylist() == ["english"]


# -- decisions -----------------------------------------------------------------------------------------


def test_fineweb2_keeps_real_prose_in_its_language():
    names = ["deu", "fra", "spa", "rus", "srp_cyrl", "srp_latn"]
    result = apply_filters(
        [udhr(n) for n in names], None, ["de", "fr", "es", "ru", "sr", "sr"], [0.95] * 6, FINEWEB2
    )
    assert result.drop.to_pylist() == [None] * 6
    assert result.profile.to_pylist() == [
        "deu_Latn",
        "fra_Latn",
        "spa_Latn",
        "rus_Cyrl",
        "srp_Cyrl",
        "srp_Latn",
    ]


def test_a_german_text_without_german_stop_words_is_dropped_a_french_one_kept():
    german = without_words(udhr("deu"), configs()["deu_Latn"]["stopwords"])
    french = udhr("fra")
    result = apply_filters([german, french], None, ["de", "fr"], [0.95, 0.95], FINEWEB2)
    assert result.rule.to_pylist() == ["gopher_quality.min_stop_words", None]
    # the same German text under FineWeb (English stop words only for "en") is not judged so
    assert apply_filters([german], None, ["de"], [0.95], PRESETS["fineweb"]).rule.to_pylist() != [
        "gopher_quality.min_stop_words"
    ]


def test_the_language_score_threshold_is_the_languages():
    german, french = udhr("deu"), udhr("fra")
    between = (configs()["deu_Latn"]["language_score"] + configs()["fra_Latn"]["language_score"]) / 2
    low, high = sorted([configs()["deu_Latn"]["language_score"], configs()["fra_Latn"]["language_score"]])
    assert low < between < high
    result = apply_filters([german, french], None, ["de", "fr"], [between, between], FINEWEB2)
    dropped = [d == "language_score" for d in result.drop.to_pylist()]
    assert dropped == [
        configs()["deu_Latn"]["language_score"] > between,
        configs()["fra_Latn"]["language_score"] > between,
    ]


def test_a_per_language_override_changes_that_language_only():
    texts, codes = [udhr("deu"), udhr("fra")], ["de", "fr"]
    assert apply_filters(texts, None, codes, [0.95] * 2, parse()).drop.to_pylist() == [None, None]
    strict = parse("--filter-set", "fineweb2.deu_Latn.new_line_ratio=0.001")
    assert strict.language_overrides == (("deu_Latn", "fineweb.max_newline_word_ratio", "0.001"),)
    result = apply_filters(texts, None, codes, [0.95] * 2, strict)
    assert result.rule.to_pylist() == ["fineweb.max_newline_word_ratio", None]
    # stop words of one language
    words = parse("--filter-set", "fineweb2.deu_Latn.stopwords=Xylophon,Zeppelin")
    assert profile_for(words, "deu_Latn").settings.gopher_quality.stop_words_of("deu_Latn") == (
        "Xylophon",
        "Zeppelin",
    )
    result = apply_filters(texts, None, codes, [0.95] * 2, words)
    assert result.rule.to_pylist() == ["gopher_quality.min_stop_words", None]


def test_a_global_override_applies_to_every_language():
    settings = parse("--filter-set", "fineweb.max_newline_word_ratio=0.001")
    result = apply_filters([udhr("deu"), udhr("fra")], None, ["de", "fr"], [0.95] * 2, settings)
    assert result.rule.to_pylist() == ["fineweb.max_newline_word_ratio"] * 2
    off = parse("--min-language-score", "off")
    assert apply_filters([udhr("deu")], None, ["de"], [0.01], off).drop.to_pylist() == [None]


def test_drops_follow_fineweb2s_order():
    """A text failing FineWeb quality and Gopher quality is FineWeb's under fineweb2 (FineWeb
    quality runs first) and Gopher quality's under fineweb."""
    german = without_words(udhr("deu"), configs()["deu_Latn"]["stopwords"])
    settings = parse("--filter-set", "fineweb2.deu_Latn.new_line_ratio=0.001")
    assert apply_filters([german], None, ["de"], [0.95], settings).drop.to_pylist() == ["fineweb"]
    settings = parse("--filter-set", "fineweb2.deu_Latn.fineweb.enabled=false")
    assert apply_filters([german], None, ["de"], [0.95], settings).drop.to_pylist() == ["gopher_quality"]


def test_per_language_tables_in_the_config_file(tmp_path):
    config = tmp_path / "corpus.toml"
    config.write_text(
        '[filters]\npreset = "fineweb2"\n\n[filters.fineweb2.deu_Latn]\nnew_line_ratio = 0.2\n'
        'stopwords = ["der", "die", "und"]\n\n[filters.fineweb2.deu_Latn.gopher_quality]\nmin_words = 30\n'
    )
    settings = parse(config=config)
    s = profile_for(settings, "deu_Latn").settings
    assert s.fineweb.max_newline_word_ratio == 0.2 and s.gopher_quality.min_words == 30
    assert s.gopher_quality.stop_words_of("deu_Latn") == ("der", "die", "und")
    french = profile_for(settings, "fra_Latn").settings
    assert french.fineweb.max_newline_word_ratio == configs()["fra_Latn"]["new_line_ratio"]
    # the command line wins over the file
    settings = parse("--filter-set", "fineweb2.deu_Latn.new_line_ratio=0.3", config=config)
    assert profile_for(settings, "deu_Latn").settings.fineweb.max_newline_word_ratio == 0.3


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            "fineweb2.xxx_Latn.new_line_ratio=0.2",
            "fineweb2.xxx_Latn.new_line_ratio: unknown FineWeb-2 language key 'xxx_Latn'; valid: eng_Latn or",
        ),
        (
            "fineweb2.deu_Latn.newline_ratio=0.2",
            "fineweb2.deu_Latn.newline_ratio: unknown field 'newline_ratio'; valid: language_score, ",
        ),
        (
            "fineweb2.deu_Latn.new_line_ratio=lots",
            "fineweb2.deu_Latn.new_line_ratio: fineweb.max_newline_word_ratio: expected a number",
        ),
        ("fineweb2.deu_Latn=0.2", "fineweb2.deu_Latn: expected fineweb2.deu_Latn.<field>=VALUE"),
    ],
)
def test_a_bad_language_key_or_field_is_one_clear_user_error(item, message):
    with pytest.raises(UserError) as caught:
        parse("--filter-set", item)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text


def test_a_mixed_batch_decides_as_each_document_alone():
    """The filters run once per segmenter over documents of many languages, every threshold
    per document: the decisions are those of each document filtered alone."""
    names = ["deu", "fra", "spa", "rus", "srp_cyrl", "srp_latn", "hin", "arb", "eng", "ita", "pol", "tur"]
    codes = ["de", "fr", "es", "ru", "sr", "sr", "hi", "ar", "en", "it", "pl", "tr"]
    texts = [udhr(n) for n in names]
    texts += [
        without_words(udhr("deu"), configs()["deu_Latn"]["stopwords"]),
        "\n".join(udhr("fra").splitlines()[:3]),
    ]
    codes += ["de", "fr"]
    settings = parse(
        "--filter-set",
        "fineweb2.spa_Latn.new_line_ratio=0.001",
        "--filter-set",
        "fineweb2.fra_Latn.fineweb.enabled=off",
    )
    together = apply_filters(texts, None, codes, [0.95] * len(texts), settings)
    alone = [apply_filters([t], None, [c], [0.95], settings) for t, c in zip(texts, codes, strict=True)]
    assert together.rule.to_pylist() == [a.rule.to_pylist()[0] for a in alone]
    assert together.profile.to_pylist() == [a.profile.to_pylist()[0] for a in alone]
    assert together.rule.to_pylist()[2] == "fineweb.max_newline_word_ratio"  # Spanish only
    assert together.drop.to_pylist()[-1] == "gopher_quality"  # French skips FineWeb quality
    assert len(set(together.rule.to_pylist())) >= 4  # kept, and dropped by different rules


def test_the_shipped_configs_fineweb2_example_works(tmp_path):
    from contentx_udf.corpus.quality.settings import DEFAULT_CONFIG

    lines = DEFAULT_CONFIG.read_text(encoding="utf-8").splitlines()
    start = lines.index("# [filters.fineweb2.deu_Latn]")
    block = itertools.takewhile(lambda line: line.startswith("# "), lines[start:])  # the comment block
    example = "\n".join(line[2:] for line in block)
    config = tmp_path / "corpus.toml"
    config.write_text('[filters]\npreset = "fineweb2"\n' + example + "\n")
    s = profile_for(parse(config=config), "deu_Latn").settings
    assert s.fineweb.max_newline_word_ratio == 0.2 and s.gopher_quality.min_words == 30
    assert s.gopher_quality.stop_words_of("deu_Latn") == ("der", "die", "und")
