"""apply_filters: the filters in datatrove's order on a batch, C4's edits before FineWeb, PII on
kept documents only, a defined answer for every input, bounded work on pathological texts."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pyarrow as pa
import pytest

from contentx_udf.corpus.quality.batch import apply_filters
from contentx_udf.corpus.quality.settings import FILTER_ORDER, PRESETS
from contentx_udf.corpus.quality.urls import UrlBlocklist

FINEWEB = PRESETS["fineweb"]

ARTICLE = "\n".join(
    [
        "The city council approved the new budget on Tuesday after a long debate.",
        "Most of the discussion was about the cost of public transport and the old bridge.",
        "Several members said that the repairs should have been made years ago.",
        "The mayor told reporters that the decision was difficult but necessary.",
        "Schools and hospitals will get more money than last year, with a focus on staff.",
        "Critics argued that the plan does not do enough for small businesses in the centre.",
        "A public meeting about the bridge is planned for next month at the town hall.",
        "Residents can send their questions to the council before the meeting starts.",
    ]
)


def run(texts, urls=None, languages=None, scores=None, settings=FINEWEB):
    n = len(texts)
    urls = urls or [f"https://site{i}.example/page" for i in range(n)]
    languages = languages or ["en"] * n
    scores = scores or [0.95] * n
    return apply_filters(texts, urls, languages, scores, settings)


def test_a_good_article_is_kept_unchanged():
    result = run([ARTICLE])
    assert result.drop.to_pylist() == [None] and result.rule.to_pylist() == [None]
    assert result.text.to_pylist() == [ARTICLE]
    assert result.changed.tolist() == [False]
    assert result.c4_lines_removed.tolist() == [0]


def test_filters_run_in_order_and_report_the_first_failure(tmp_path):
    (tmp_path / "block.txt").write_text("blocked.example\n")
    settings = dataclasses.replace(FINEWEB, url_blocklist=UrlBlocklist.load([str(tmp_path / "block.txt")]))
    texts = [ARTICLE, ARTICLE, "hello world", "word " * 60, ARTICLE + "\nvar x = { a: 1 };"]
    urls = ["https://news.blocked.example/a", "https://ok.example/1", "https://ok.example/2"]
    urls += ["https://ok.example/3", "https://ok.example/4"]
    scores = [0.2, 0.2, 0.9, 0.9, 0.9]
    result = run(texts, urls=urls, scores=scores, settings=settings)
    assert result.drop.to_pylist() == [
        "url",
        "language_score",
        "gopher_repetition",
        "gopher_repetition",
        "c4",
    ]
    assert result.rule.to_pylist() == [
        "url.domain",
        "language_score.min_language_score",
        "gopher_repetition.top_2_gram_frac",
        "gopher_repetition.top_2_gram_frac",
        "c4.curly_bracket",
    ]
    assert set(result.drop.to_pylist()) - {None} <= set(FILTER_ORDER)


def test_c4_edits_the_text_before_fineweb_reads_it():
    # the menu lines (fewer than 3 words) would make FineWeb drop the page for its short lines;
    # C4 removes them first, as in datatrove's pipeline
    menu = "\n".join(["Home", "About us", "Contact", "Login", "Shop", "Blog", "Help", "Jobs", "Press"])
    menu += "\n" + "\n".join(
        ["News", "Sport", "Weather", "Culture", "Travel", "Food", "Music", "Film", "Art", "Cart", "Sign in"]
    )
    text = menu + "\n" + ARTICLE + "\nWe use cookies to improve your experience on this site."
    result = run([text])
    assert result.drop.to_pylist() == [None]
    assert result.text.to_pylist() == [ARTICLE]
    assert result.changed.tolist() == [True]
    assert result.c4_lines_removed.tolist() == [21]
    # without C4, FineWeb sees the menu
    no_c4 = dataclasses.replace(FINEWEB, c4=dataclasses.replace(FINEWEB.c4, enabled=False))
    assert run([text], settings=no_c4).rule.to_pylist() == ["fineweb.max_short_line_ratio"]


def test_pii_is_masked_on_kept_documents_only():
    settings = dataclasses.replace(FINEWEB, mask_pii=True)
    kept = ARTICLE + "\nWrite to the council at info@council.example.org or visit 8.8.8.8 today."
    dropped = "Write to info@council.example.org now"
    result = run([kept, dropped], settings=settings)
    assert result.drop.to_pylist() == [None, "gopher_repetition"]
    assert result.text.to_pylist()[0].endswith("council at email@example.com or visit 0.0.0.0 today.")
    assert result.text.to_pylist()[1] == dropped
    assert result.emails_masked.tolist() == [1, 0] and result.ips_masked.tolist() == [1, 0]
    assert result.changed.tolist() == [True, False]


CHINESE = "\n".join(
    [
        "市议会周二在经过长时间辩论后批准了新预算，争论的焦点是公共交通的费用以及河上旧桥的维修。",
        "议员们表示，新的预算将优先考虑学校和医院的建设，并为教师和护士提供更多的资金。",
        "市长在会后对记者说，这是一个艰难但必要的决定，因为旧桥已经有五十多年的历史了。",
        "批评者认为，该计划对市中心的小企业帮助不够，他们希望在下个月的公开会议上提出这个问题。",
        "居民可以在会议开始前把问题寄给市议会，会议将在市政厅举行，欢迎所有人参加。",
    ]
)
JAPANESE = "\n".join(
    [
        "市議会は火曜日、公共交通の費用と川に架かる古い橋の修理をめぐる長い議論の末、新しい予算を承認した。",
        "議員たちは、新しい予算では学校と病院の建設が優先され、教師と看護師により多くの資金が回ると述べた。",
        "市長は会議の後、記者団に対し、古い橋は五十年以上前のものなので、難しいが必要な決定だったと語った。",
        "批判的な人々は、この計画は中心部の小さな商店への支援が足りないと主張し、来月の公開会議で訴える考えだ。",
        "住民は会議が始まる前に質問を市議会に送ることができ、会議は市庁舎で開かれ、誰でも参加できる。",
    ]
)


def test_chinese_and_japanese_are_not_dropped_by_the_word_rules():
    result = run([CHINESE, JAPANESE], languages=["zh", "ja"])
    assert result.drop.to_pylist() == [None, None]
    assert result.text.to_pylist() == [CHINESE, JAPANESE]
    # read as English words (datatrove's English filters), a line is one word: the pair of the
    # first two lines is the "most frequent 2-gram", over 20 % of the text
    strict = dataclasses.replace(FINEWEB, word_rules_without_spaces=True)
    assert run([CHINESE, JAPANESE], languages=["zh", "ja"], settings=strict).rule.to_pylist() == [
        "gopher_repetition.top_2_gram_frac",
        "gopher_repetition.top_2_gram_frac",
    ]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\n", "!!! ??? ...", "word", "#", "{", "\u00a0"])
def test_every_degenerate_text_gets_a_defined_answer(text):
    result = run([text])
    assert result.drop.to_pylist()[0] in FILTER_ORDER
    assert result.text.to_pylist() == [text]


def test_the_none_preset_keeps_everything():
    texts = ["", "word", ARTICLE + "\n{"]
    result = run(texts, scores=[None, 0.1, 0.1], settings=PRESETS["none"])
    assert result.drop.to_pylist() == [None, None, None]
    assert result.text.to_pylist() == texts


def test_a_missing_language_score_fails_the_minimum():
    assert run([ARTICLE], scores=[None]).drop.to_pylist() == ["language_score"]


def test_inputs_may_be_arrow_arrays_and_the_result_converts_to_arrow():
    result = apply_filters(
        pa.chunked_array([[ARTICLE], ["hello world"]]),
        pa.array(["https://a.example/", "https://b.example/"]),
        pa.array(["en", "en"]).dictionary_encode(),
        pa.array([0.9, 0.9]),
        FINEWEB,
    )
    batch = result.to_arrow()
    assert batch.schema.names == [
        "drop",
        "rule",
        "text",
        "changed",
        "emails_masked",
        "ips_masked",
        "c4_lines_removed",
        "profile",
        "fallback",
    ]
    assert batch.column("drop").to_pylist() == [None, "gopher_repetition"]
    assert batch.column("profile").null_count == 2  # only the fineweb2 preset has language profiles
    assert result.kept.tolist() == [True, False]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="texts must not be null"):
        apply_filters(["a", None], None, None, None, FINEWEB)
    with pytest.raises(ValueError, match="urls has 1 values for 2 texts"):
        apply_filters(["a", "b"], ["u"], None, None, FINEWEB)


@pytest.mark.parametrize(
    "make",
    [
        lambda: (ARTICLE + "\n") * 7_000,  # 5 MB of text
        lambda: "x" * 1_000_000,  # one 1 MB line, one word
        lambda: " ".join(["word"] * 1_000_000),  # one million repeated words
        lambda: "\n".join(f"line {i} " + "abc " * 20 for i in range(60_000)),  # many lines
        lambda: "x:" * 300_000 + "a.b",  # one chunk a URL pattern could backtrack on
        lambda: " ".join(f"k{i}:v{i}.x,y-z" for i in range(200_000)),  # many distinct odd chunks
    ],
)
def test_pathological_texts_are_bounded(make):
    text = make()
    started = time.process_time()
    result = run([text, ARTICLE])
    assert time.process_time() - started < 20
    assert result.drop.to_pylist()[0] in FILTER_ORDER
    assert result.drop.to_pylist()[1] is None


def test_a_batch_gives_the_same_answers_as_one_document_at_a_time():
    texts = [ARTICLE, "hello world", CHINESE, "", ARTICLE + "\nlorem ipsum dolor sit amet", ARTICLE * 3]
    together = run(texts)
    alone = [run([t]) for t in texts]
    assert together.rule.to_pylist() == [a.rule.to_pylist()[0] for a in alone]
    assert together.text.to_pylist() == [a.text.to_pylist()[0] for a in alone]
    assert np.array_equal(together.c4_lines_removed, [a.c4_lines_removed[0] for a in alone])
