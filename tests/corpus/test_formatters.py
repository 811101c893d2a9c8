"""FineWeb-2's final touches (:mod:`contentx_udf.corpus.formatters`): ftfy with datatrove's
configuration behind a pre-check that never skips a text ftfy would change, and the symbol lines."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from ftfy import badness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contentx_udf.corpus import formatters as fm
from contentx_udf.corpus.config import CorpusConfig, build_config, build_parser
from contentx_udf.text.language import text_hash

from .tables import table_row, write_table

BOTH = fm.FormatSettings(fix_encoding=True, symbol_lines=True)


def misread(text: str, encoding: str) -> str:
    return text.encode("utf-8").decode(encoding, errors="replace")


def test_mojibake_is_repaired_and_ordinary_text_is_not_sent():
    texts = [
        misread("It’s the café’s menu — today", "windows-1252"),  # â€™ and Ã©
        misread("المكتبة الرقمية", "windows-1252"),  # Ø§Ù„...
        misread("Grüße aus Köln", "latin-1"),
        "Le café est fermé à cause de la grève — réouverture lundi.",
        "Grüße aus Köln: Straße, Fuß, Maß. It’s “quoted” – 5 €.",
        "中文网页的编码问题：乱码。日本語のテキストです。ภาษาไทย",
        "Москва — столица России. Ψηφιακή βιβλιοθήκη.",
        None,
    ]
    result = fm.format_batch(pa.array(texts), fm.FormatSettings(fix_encoding=True))
    out = result.field("text").to_pylist()
    assert out[:3] == ["It’s the café’s menu — today", "المكتبة الرقمية", "Grüße aus Köln"]
    assert out[3:] == texts[3:]
    assert result.field("sent_to_ftfy").to_pylist() == [True] * 3 + [False] * 5
    assert result.field("encoding_fixed").to_pylist() == [True] * 3 + [False] * 5
    assert result.field("text_hash").to_pylist() == [text_hash(t) for t in out[:3]] + [None] * 5
    assert "→" in result.field("example")[0].as_py()


def test_lines_after_a_tag_keep_their_entities_as_ftfy_does():
    texts = [
        "caf&eacute; Ã©\n<p>x</p>\nth&eacute; Ã©\n",
        "a &amp; b\nplain\nÃ© &amp; <\nend &amp;",
        "Ã©" + "\n" * 3 + "x&amp;y",
    ]
    assert fm.fix_texts(texts) == [fm.fix_text(t) for t in texts]
    assert fm.fix_texts(texts)[0] == "café é\n<p>x</p>\nth&eacute; é\n"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("x\x85y \x96 z", "x…y – z"),  # C1 controls read as Windows-1252
        ("a\x00b\x07c\ufeffd\u206ae", "abcde"),  # control characters, BOM, deprecated format chars
        ("\x1b[1;31mred\x1b[0m text", "red text"),  # terminal escapes
        ("caf&eacute; &amp; th&#xe9; &#8217;", "café & thé ’"),  # entities without '<'
        ("<b>caf&eacute;</b>", "<b>caf&eacute;</b>"),  # in a text holding '<' they stay
        ("It’s “curly”, ﬁne, ＬＯＵＤ", "It’s “curly”, ﬁne, ＬＯＵＤ"),  # no uncurling, ligatures, widths
        ("e\u0301 stays decomposed\r\n", "e\u0301 stays decomposed\r\n"),  # no normalisation or line breaks
    ],
)
def test_ftfy_configuration_is_datatroves(text, expected):
    assert fm.fix_text(text) == expected
    result = fm.format_batch(pa.array([text]), fm.FormatSettings(fix_encoding=True))
    assert result.field("text")[0].as_py() == expected


def test_ftfy_configuration_equals_datatroves_formatter():
    formatters = pytest.importorskip("datatrove.pipeline.formatters")  # the bench extra
    assert formatters.FTFYFormatter().config == fm.ftfy_config()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Name | Age\n| --- |\nAlice | 30", "Name | Age\n| --- |\nAlice | 30"),  # '-' is not a symbol
        ("a\n|\n| |\n|||\nb", "a\n\n\nb"),  # a run of symbol lines: one paragraph break
        ("a\n|\n\n|\nb", "a\n\n\n\n\n\nb"),  # a blank line ends a run
        ("|\t|\nb", "|\t|\nb"),  # a tab is neither a symbol nor a space
        ("| |  |", "\n"),
        ("a\r\nb\rc\x0bd\u2028e\n", "a\nb\nc\nd\ne"),  # str.splitlines() re-joined with \n
        ("\n", ""),
        ("", ""),
        ("plain text", "plain text"),
    ],
)
def test_symbol_lines_as_fineweb2(text, expected):
    assert fm.symbol_lines(text) == expected
    result = fm.format_batch(pa.array([text]), fm.FormatSettings(symbol_lines=True))
    assert result.field("text")[0].as_py() == expected
    assert result.field("symbol_lines")[0].as_py() == (text != expected)


def test_symbol_lines_equal_datatroves_formatter():
    formatters = pytest.importorskip("datatrove.pipeline.formatters")  # the bench extra
    theirs = formatters.SymbolLinesFormatter(symbols_to_remove=["|"], replace_char="\n")
    for text in ("a\n|\n| |\n|||\nb", "a\n|\n\n|\nb", "| |  |", "a\r\nb\x85c\n", "x | y\n |\n"):
        assert fm.symbol_lines(text) == theirs.format(text)


def test_both_in_fineweb2_order_and_hash_of_the_final_text():
    text = misread("Résumé", "windows-1252") + "\n|||\nnext\n"
    result = fm.format_batch(pa.array([text, "untouched"]), BOTH).to_pylist()
    assert result[0]["text"] == "Résumé\n\n\nnext"
    assert result[0]["encoding_fixed"] and result[0]["symbol_lines"]
    assert result[0]["text_hash"] == text_hash("Résumé\n\n\nnext")
    assert result[1] == {
        "text": "untouched",
        "text_hash": None,
        "encoding_fixed": False,
        "symbol_lines": False,
        "sent_to_ftfy": False,
        "example": None,
    }


# -- the pre-check never skips a text ftfy changes ---------------------------------------------------

_SAMPLES = [
    "It’s “quoted” – and the price is 5 € or £3 ½.",
    "Le café est fermé à cause de la grève — réouverture lundi.",
    "Grüße aus Köln: Straße, Fuß, Maß. ©®™ ±µ¶§",
    "Ψηφιακή βιβλιοθήκη της Ελλάδας",
    "Москва — столица России.",
    "المكتبة الرقمية العربية",
    "中文网页的编码问题：乱码。",
    "日本語のテキストです。",
    "Tiếng Việt có dấu.",
    "ภาษาไทยเป็นภาษาที่มีวรรณยุกต์",
    "🙂 emoji ✔ check ★ star • bullet",
]
_ENCODINGS = ("latin-1", "windows-1252", "gbk", "windows-1251", "windows-1250", "mac_roman", "cp437")
_MOJIBAKE = st.builds(
    lambda s, e: s.encode("utf-8").decode(e, errors="replace"),
    st.sampled_from(_SAMPLES),
    st.sampled_from(_ENCODINGS),
)
# characters around the ones ftfy looks at: Latin-1, Windows-1252's, box drawing, Cyrillic, Greek,
# Arabic, CJK, controls, entities and escapes
_ALPHABET = st.one_of(
    st.characters(min_codepoint=0x00, max_codepoint=0x24F),
    st.characters(min_codepoint=0x370, max_codepoint=0x6FF),
    st.characters(min_codepoint=0x2000, max_codepoint=0x2600),
    st.sampled_from(list("ÂÃÎÐØÙàâ€œžŸ\xa0\xad–—´ВГРСΒΓΞΟβā√≈‚Ä&#;<\x1b[")),
    st.characters(min_codepoint=0xFE00, max_codepoint=0xFFFD),
)
_PIECES = st.one_of(
    _MOJIBAKE,
    st.text(_ALPHABET, max_size=12),
    st.sampled_from(_SAMPLES),
    st.sampled_from(["&amp;", "&eacute;", "&#x2019;", "&EACUTE;", "\x1b[0m", "\n", " ", "\r\n", "<p>"]),
)
_TEXTS = st.lists(_PIECES, max_size=8).map("".join)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TEXTS, min_size=1, max_size=8))
def test_precheck_never_skips_a_text_ftfy_changes(texts):
    sent = fm.needs_ftfy(pa.array(texts))
    whole = [fm.fix_text(t) for t in texts]
    for text, flagged, fixed in zip(texts, sent, whole, strict=True):
        if not flagged:
            assert not badness.is_bad(text)
            assert fixed == text
    # ftfy on the flagged lines only, as on the whole texts
    assert fm.fix_texts(texts) == whole
    result = fm.format_batch(pa.array(texts), fm.FormatSettings(fix_encoding=True))
    assert result.field("text").to_pylist() == whole


def test_precheck_is_ftfys_badness_widened():
    """Each kind of sequence ftfy's BADNESS_RE finds is found by the RE2 pattern."""
    for sample in ("Ã©", "â€™", "Ø§Ù„Ù…", "×²", "вЂ", "Ã\xa0", "Â ", "√±", "ā€", "Œ!", "Ç°"):
        assert badness.is_bad(sample) and fm.needs_ftfy(pa.array([sample]))[0], sample


# -- configuration --------------------------------------------------------------------------------


def _config(*args: str) -> CorpusConfig:
    return build_config(build_parser().parse_args(["--input", "in", "--output", "out", *args]))


def test_fineweb2_preset_turns_them_on_and_flags_or_toml_anywhere(tmp_path):
    assert _config().touches == fm.FormatSettings()
    assert _config("--filters", "fineweb2").touches == BOTH
    no_ftfy = _config("--filters", "fineweb2", "--no-fix-encoding")
    assert no_ftfy.touches == fm.FormatSettings(symbol_lines=True)
    assert _config("--fix-encoding").touches == fm.FormatSettings(fix_encoding=True)
    assert _config("--filters", "gopher", "--symbol-lines").touches == fm.FormatSettings(symbol_lines=True)
    assert _config("--filter-set", "symbol_lines=true").touches == fm.FormatSettings(symbol_lines=True)
    toml = tmp_path / "c.toml"
    toml.write_text("[filters]\npreset = 'c4'\nfix_encoding = true\n")
    assert _config("--filter-config", str(toml)).touches == fm.FormatSettings(fix_encoding=True)
    # no quality filter is switched on by them (the first pass stays as it was)
    assert _config("--fix-encoding", "--symbol-lines").quality is None


# -- the corpus job ---------------------------------------------------------------------------------


@pytest.mark.spark
def test_corpus_job_touches_the_written_texts_after_dedup(spark, tmp_path):
    from contentx_udf.corpus import job as corpus_job

    body = "\n".join(f"Sentence {i} of a page about the river bridge and the budget." for i in range(8))
    broken = misread("It’s the café’s menu — ‘fresh’ every day.", "windows-1252") + "\n" + body
    table = "Prices\n| --- |\n|||\n| |\nA | 1\n" + body.replace("page", "table page")
    rows = [
        table_row("https://a.example/broken", broken, offset=1),
        table_row("https://a.example/table", table, offset=2),
        table_row("https://a.example/plain", body.replace("page", "plain page"), offset=3),
        # the same text as the broken page once repaired: dedup ran before, so both are written
        table_row("https://a.example/clean", "It’s the café’s menu — ‘fresh’ every day.\n" + body, offset=4),
    ]
    write_table(tmp_path / "table", "combined", rows)
    config = CorpusConfig(
        inputs=[str(tmp_path / "table")], output=str(tmp_path / "corpus"), dedup="exact", touches=BOTH
    )
    report = corpus_job.run(config, spark)
    docs = {r["url"]: r for r in spark.read.parquet(f"{report['output']}/documents").collect()}
    assert len(docs) == 4
    fixed = docs["https://a.example/broken"]
    assert fixed["text"] == docs["https://a.example/clean"]["text"]
    assert fixed["text_hash"] == text_hash(fixed["text"]) and fixed["text_length"] == len(fixed["text"])
    tabled = docs["https://a.example/table"]
    assert tabled["text"].startswith("Prices\n| --- |\n\n\nA | 1\n")
    assert tabled["text_hash"] == text_hash(tabled["text"]) and tabled["text_length"] == len(tabled["text"])
    plain = docs["https://a.example/plain"]
    assert plain["text"] == rows[2]["text"] and plain["text_hash"] == rows[2]["text_hash"]
    touches = json.loads((tmp_path / "corpus" / "_report.json").read_text())["final_touches"]
    assert {k: touches[k] for k in ("documents", "encoding_fixed", "symbol_lines_changed", "changed")} == {
        "documents": 4,
        "encoding_fixed": 1,
        "symbol_lines_changed": 1,
        "changed": 2,
    }
    assert touches["sent_to_ftfy"] == 1
    assert [e["url"] for e in touches["encoding_examples"]] == ["https://a.example/broken"]
    assert "â€™" in touches["encoding_examples"][0]["change"]
    assert [e["url"] for e in touches["symbol_lines_examples"]] == ["https://a.example/table"]
    md = (tmp_path / "corpus" / "report.md").read_text()
    assert "## Final touches" in md and "2 of 4 written documents changed" in md
