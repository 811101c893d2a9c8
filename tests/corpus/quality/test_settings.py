"""Presets, the TOML table and the command-line flags of the quality filters; a bad value is one
clear UserError sentence."""

from __future__ import annotations

import argparse
import dataclasses
import tomllib

import pytest

from contentx_udf.corpus.quality.settings import (
    DEFAULT_CONFIG,
    ENGLISH_STOP_WORDS,
    PRESETS,
    SECTIONS,
    Settings,
    add_filter_arguments,
    describe,
    filter_settings,
    is_active,
)
from contentx_udf.errors import UserError


def parse(*argv: str, config=None) -> Settings:
    parser = argparse.ArgumentParser()
    add_filter_arguments(parser)
    args = parser.parse_args([*argv] + ([] if config is None else ["--filter-config", str(config)]))
    return filter_settings(args)


def test_no_filter_by_default_and_fineweb_has_its_thresholds():
    assert parse() == PRESETS["none"] and not is_active(parse())  # a build keeps what it kept before
    s = parse("--filters", "fineweb")
    assert s == PRESETS["fineweb"] and is_active(s)
    assert s.min_language_score == 0.65 and not s.mask_pii and s.url_blocklist is None
    assert s.gopher_repetition.enabled and s.gopher_quality.enabled and s.c4.enabled and s.fineweb.enabled
    assert s.c4.terminal_punctuation is False  # FineWeb: filter_no_terminal_punct=False
    assert s.gopher_quality.stop_words_of("en") == ENGLISH_STOP_WORDS
    assert (s.gopher_repetition.dup_line_frac, s.gopher_repetition.top_2_gram_frac) == (0.3, 0.2)
    assert (s.gopher_repetition.dup_5_gram_frac, s.gopher_repetition.dup_10_gram_frac) == (0.15, 0.1)
    assert (s.gopher_quality.min_words, s.gopher_quality.max_words) == (50, 100_000)
    assert (s.c4.min_words_per_line, s.c4.max_word_length, s.c4.min_sentences) == (3, 1000, 5)
    assert (s.fineweb.min_line_punct_ratio, s.fineweb.max_short_line_ratio) == (0.12, 0.67)
    assert (s.fineweb.max_dup_line_char_ratio, s.fineweb.max_newline_word_ratio) == (0.01, 0.3)


def test_presets():
    gopher, c4, none = parse("--filters", "gopher"), parse("--filters", "C4"), parse("--filters", "none")
    assert gopher.gopher_quality.enabled and not gopher.c4.enabled and not gopher.fineweb.enabled
    assert c4.c4.enabled and c4.c4.terminal_punctuation and not c4.gopher_quality.enabled
    assert not any(getattr(none, name).enabled for name in SECTIONS)
    assert none.min_language_score is None


def test_filter_set_tunes_or_switches_off_any_rule():
    s = parse(
        "--filter-set",
        "gopher_quality.min_stop_words=off",
        "--filter-set",
        "fineweb.max_short_line_ratio=0.7",
        "--filter-set",
        "c4.enabled=false",
        "--filter-set",
        "gopher_repetition.dup_7_gram_frac=0.2",
        "--filter-set",
        "gopher_quality.stop_words.de=der, die ,und",
        "--filter-set",
        "min_language_score=off",
    )
    assert s.gopher_quality.min_stop_words is None
    assert s.fineweb.max_short_line_ratio == 0.7
    assert not s.c4.enabled
    assert s.gopher_repetition.dup_7_gram_frac == 0.2
    assert s.gopher_quality.stop_words_of("de") == ("der", "die", "und")
    assert s.min_language_score is None


def test_dedicated_flags():
    s = parse("--min-language-score", "0.5", "--mask-pii")
    assert s.min_language_score == 0.5 and s.mask_pii


def test_toml_table_overrides_the_preset_and_flags_override_the_table(tmp_path):
    blocklist = tmp_path / "block.txt"
    blocklist.write_text("example.com\n")
    config = tmp_path / "corpus.toml"
    config.write_text(
        f"""
[filters]
preset = "gopher"
mask_pii = true
url_blocklist = ["{blocklist}"]

[filters.gopher_quality]
min_words = 20
max_mean_word_length = false
stop_words = {{ fr = ["le", "la", "et"] }}

[filters.fineweb]
enabled = true
"""
    )
    s = parse(config=config)
    assert s.preset == "gopher" and s.mask_pii and s.url_blocklist.domains == {"example.com"}
    assert s.gopher_quality.min_words == 20 and s.gopher_quality.max_mean_word_length is None
    assert s.gopher_quality.stop_words_of("fr") == ("le", "la", "et")
    assert s.fineweb.enabled and not s.c4.enabled
    s = parse("--filters", "fineweb", "--filter-set", "gopher_quality.min_words=30", config=config)
    assert s.preset == "fineweb" and s.c4.enabled and s.gopher_quality.min_words == 30


def test_the_shipped_config_documents_every_key_and_changes_nothing():
    text = DEFAULT_CONFIG.read_text()
    table = tomllib.loads(text)["filters"]
    assert all(value == {} for value in table.values())  # every key commented out: the preset decides
    for name, section in SECTIONS.items():
        assert f"[filters.{name}]" in text
        for f in dataclasses.fields(section):
            assert f"# {f.name} = " in text, f"{name}.{f.name} is not documented"
    for key in ("min_language_score", "mask_pii", "word_rules_without_spaces", "url_blocklist", "preset"):
        assert f"# {key} = " in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--filters", "refinedweb"],
            "unknown filter preset 'refinedweb'; choose one of fineweb, fineweb2, gopher, c4, none",
        ),
        (["--min-language-score", "high"], "min_language_score: expected a number or off, got 'high'"),
        (["--min-language-score", "1.5"], "min_language_score: expected a ratio between 0 and 1, got 1.5"),
        (
            ["--filter-set", "gopher_quality.min_words=-3"],
            "gopher_quality.min_words: expected a non-negative",
        ),
        (
            ["--filter-set", "gopher_quality.min_words=2.5"],
            "gopher_quality.min_words: expected a whole number",
        ),
        (
            ["--filter-set", "fineweb.max_short_line_ratio=2"],
            "fineweb.max_short_line_ratio: expected a ratio",
        ),
        (["--filter-set", "c4.enabled=maybe"], "c4.enabled: expected true or false, got 'maybe'"),
        (
            ["--filter-set", "fineweb.short_line_length=off"],
            "fineweb.short_line_length: expected a number, got",
        ),
        (["--filter-set", "gopher.min_words=3"], "unknown filter setting 'gopher.min_words'; valid keys: "),
        (["--filter-set", "min_words"], "--filter-set expects KEY=VALUE, got 'min_words'"),
        (["--url-blocklist", "/nonexistent/list.txt"], "--url-blocklist: no such file /nonexistent/list.txt"),
    ],
)
def test_a_bad_value_is_one_clear_user_error(argv, message):
    with pytest.raises(UserError) as caught:
        parse(*argv)
    text = str(caught.value)
    assert text.startswith(message)
    assert "\n" not in text and "Traceback" not in text


def test_bad_config_files(tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text("[filters\n")
    with pytest.raises(UserError, match="is not valid TOML"):
        parse(config=broken)
    with pytest.raises(UserError, match="filter config file not found"):
        parse(config=tmp_path / "missing.toml")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[filters]\nc4 = 3\n")
    with pytest.raises(UserError, match=r"\[filters.c4\] must be a table"):
        parse(config=wrong)


def test_describe_is_plain_data():
    described = describe(parse("--filters", "gopher"))
    assert described["preset"] == "gopher"
    assert described["gopher_quality"]["stop_words"] == {"en": list(ENGLISH_STOP_WORDS)}
    assert described["c4"]["enabled"] is False


@pytest.mark.parametrize(
    ("changes", "causes"),
    [
        # a preset changes settings the user never named (here c4.enabled): only the preset is said
        (["--filters", "gopher"], "--filters gopher would change"),
        (["--filters", "gopher", "--where", "gq_real_words < 400"], "--filters gopher would change"),
        (["--filter-set", "c4.policy_lines=false"], "--filter-set c4.policy_lines=false would change"),
        # each changed setting by the change that made it, in the user's order
        (
            ["--filter-set", "c4.policy_lines=false", "--filters", "gopher"],
            "--filters gopher, --filter-set c4.policy_lines=false would change",
        ),
    ],
)
def test_a_recut_the_signals_cannot_give_names_only_what_the_user_changed(changes, causes):
    """``contentx select`` over a ``--filters fineweb`` build (Spark-free: the build's command
    line and the re-cut's flags, as the job reads them): the one line names the user's own
    flags as typed, and no setting the user did not name."""
    from contentx_udf.corpus import select

    args = select.build_parser().parse_args(["--from", "A", "--output", "B", *changes])
    build = ["--input", "table", "--output", "A", "--filters", "fineweb", "--signals"]
    built, wanted = select.configs(build, args)
    with pytest.raises(UserError) as caught:
        select.check(built, wanted, select.asked(args))
    message = str(caught.value)
    assert message.startswith(causes), message
    assert message.endswith(
        "would change what the build's signals measured or the text itself; rebuild with "
        + ("them instead" if ", " in causes else "it instead")
    )
    assert "c4.enabled" not in message and "(" not in message
    assert "--where" not in message  # (a change the signals can give is not a cause)
