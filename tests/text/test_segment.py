"""Words of every script (text/segment.py): dictionary words in scripts without spaces, the
language rules of spaced scripts, and near dedup's spaced texts.  Every expected list below is
what datatrove's tokenizer of the language gives for the sentence (spaCy blank(lang), jieba,
SudachiPy, pythainlp, IndicNLP), except where a comment says how and why ours differs."""

from __future__ import annotations

import sys
import threading

import pyarrow as pa
import pytest

from contentx_udf.errors import UserError
from contentx_udf.text import segment
from contentx_udf.text.segment import segmenter_for, spaced_for_minhash, split_words_with


def words_of(text: str, key: str | None) -> list[str]:
    split = split_words_with([text], segmenter_for(key))
    vocabulary = split.vocabulary.to_pylist()
    return [vocabulary[i] for i in split.ids[split.offsets[0] : split.offsets[1]]]


CHINESE = "市议会周二在经过长时间辩论后批准了新预算，争论的焦点是公共交通的费用。"


def test_chinese_is_cut_into_dictionary_words():
    words = words_of(CHINESE, "cmn_Hani")
    # jieba (datatrove's zh) has the same words, except that it keeps 市议会, 长时间 and 公共交通 whole
    for word in ("周二", "在", "经过", "辩论", "后", "批准", "了", "新", "预算", "，", "的", "费用", "。"):
        assert word in words
    assert "".join(words) == CHINESE
    assert max(map(len, words)) <= 3


def test_japanese_particles_are_words():
    text = "市議会は火曜日、公共交通の費用とコーヒーの値段を承認した。"
    words = words_of(text, "jpn_Jpan")
    # SudachiPy (datatrove's ja) gives the same words, with 市 議会, 火曜 日, し た cut finer
    assert words[words.index("公共") :] == [
        "公共", "交通", "の", "費用", "と", "コーヒー", "の", "値段", "を", "承認", "した", "。",
    ]  # fmt: skip
    assert "は" in words


def test_thai_lao_khmer_burmese_are_cut_into_words():
    assert words_of("สภาเมืองอนุมัติงบประมาณใหม่เมื่อวันอังคาร", "tha_Thai") == [
        "สภา",
        "เมือง",
        "อนุมัติ",
        "งบ",
        "ประมาณ",
        "ใหม่",
        "เมื่อ",
        "วัน",
        "อังคาร",
    ]  # fmt: skip  (pythainlp keeps งบประมาณ whole)
    assert words_of("ມະນຸດທຸກຄົນເກີດມາມີກຽດສັກສີ", "lao_Laoo")[:1] == ["ມະນຸດ"]
    assert words_of("មនុស្សទាំងអស់កើតមកមានសេរីភាព", "khm_Khmr") == [
        "មនុស្ស",
        "ទាំងអស់",
        "កើតមក",
        "មាន",
        "សេរីភាព",
    ]  # fmt: skip  (khmer-nltk cuts កើត មក)
    burmese = words_of("လူတိုင်းသည် တူညီလွတ်လပ်သော ဂုဏ်သိက္ခာဖြင့်", "mya_Mymr")
    assert "သည်" in burmese and len(burmese) >= 5


def test_tibetan_is_cut_into_syllables():
    words = words_of("འགྲོ་བ་མིའི་ཐོབ་ཐང་དང་། ཁྱིམ་", "bod_Tibt")
    # botok's stop words of FineWeb-2 (དང་, ། ...) are syllables with their tsheg
    assert words == ["འགྲོ་", "བ་", "མིའི་", "ཐོབ་", "ཐང་", "དང་", "།", "ཁྱིམ་"]


def test_korean_particles_and_endings_are_words():
    text = "모든 사람은 교육을 받을 권리를 가진다. 1948년에 국제연합의 총회가 선언을 채택했다."
    words = words_of(text, "kor_Hang")
    # as Kiwi (datatrove's ko) cuts them: a token is the text of a morpheme, so a syllable
    # contracted from two morphemes is a word twice (가진 진다: 가지 + ㄴ다; 했 했 다: 하 + 었 + 다)
    assert words[:12] == ["모든", "사람", "은", "교육", "을", "받", "을", "권리", "를", "가진", "진다", "."]
    assert words[12:15] == ["1948", "년", "에"]
    assert words[-5:] == ["채택", "했", "했", "다", "."]
    stop = {"의", "다", "이", "는", "에", "을", "한", "년", "하", "은", "를", "했", "고", "에서", "가"}
    assert sum(word in stop for word in words) >= 10
    assert words_of("국가 또는 그리고 서로 정의", "kor_Hang") == ["국가", "또는", "그리고", "서로", "정의"]


def test_korean_contracted_endings_are_kiwis_overlapping_words():
    text = "남녀의 동등한 권리에 대한 신념을 재확인하였으며, 국제적인 조치를 통하여 선포한다."
    assert words_of(text, "kor_Hang") == [
        "남녀", "의", "동등", "한", "한", "권리", "에", "대한", "한", "신념", "을", "재확인", "하", "였",
        "으며", ",", "국제", "적", "인", "인", "조치", "를", "통하", "여", "선포", "한", "한다", ".",
    ]  # fmt: skip
    text = "초등교육은 의무적이어야 하며 자유롭게 보호받을 권리가 있다."
    assert words_of(text, "kor_Hang")[1:] == [
        "은", "의무", "적", "이", "어야", "하", "며", "자유", "롭", "게", "보호", "받", "을", "권리", "가",
        "있", "다", ".",
    ]  # fmt: skip
    # nouns that end like an ending stay whole (금지 참여 언어), as do 1-syllable verbs of 하
    words = words_of("금지된다 참여 언어 속한다", "kor_Hang")
    assert words == ["금지", "된", "된다", "참여", "언어", "속한", "한다"]


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        (
            "fra_Latn",
            "L'homme d'aujourd'hui sait qu'il est libre dont il jouit.",
            "L' homme d' aujourd'hui sait qu' il est libre dont il jouit .",
        ),
        (
            "ita_Latn",
            "Dell'uomo e l'acqua: quest'anno c'è un'altra sfida.",
            "Dell' uomo e l' acqua : quest' anno c' è un' altra sfida .",
        ),
        (
            "cat_Latn",
            "La declaració dels drets al món pel poble.",
            "La declaració d els drets a l món p el poble .",
        ),
        (
            "deu_Latn",
            "Im Jahr 1948 hat die UNO in Baden-Württemberg nichts beschlossen.",
            "Im Jahr 1948 hat die UNO in Baden-Württemberg nichts beschlossen .",
        ),
        (
            "rus_Cyrl",
            "Все люди рождаются свободными и равными в своем достоинстве, и правах.",
            "Все люди рождаются свободными и равными в своем достоинстве , и правах .",
        ),
        (
            "arb_Arab",
            "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق، وقد وهبوا عقلاً",
            "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق ، وقد وهبوا عقلاً",
        ),
        (
            "hin_Deva",
            "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है।",
            "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है ।",
        ),
        # Vietnamese: syllables, as spaCy vi without pyvi (datatrove's pyvi joins tự do, bình đẳng)
        (
            "vie_Latn",
            "Mọi người sinh ra đều được tự do và bình đẳng.",
            "Mọi người sinh ra đều được tự do và bình đẳng .",
        ),
        # English keeps spaCy en's contractions and hyphens
        ("eng_Latn", "I'm sure it's well-known, dont.", "I 'm sure it 's well - known , do nt ."),
        (None, "im Jahr", "i m Jahr"),  # no language: today's splitter (spaCy en)
    ],
)
def test_spaced_languages(key, text, expected):
    assert words_of(text, key) == expected.split(" ")


def test_segmenter_table():
    assert segmenter_for(None) == segmenter_for("eng_Latn") == "spaces"
    assert segmenter_for("deu_Latn") == segmenter_for("de") == "spaces:hyphens"
    assert segmenter_for("rus_Cyrl") == segmenter_for("pol_Latn") == "spaces:plain"
    assert segmenter_for("fra_Latn") == segmenter_for("wln_Latn") == "spaces:fr"
    assert segmenter_for("kor_Hang") == "spaces:ko"
    for key in (
        "cmn_Hani",
        "yue_Hani",
        "jpn_Jpan",
        "tha_Thai",
        "lao_Laoo",
        "khm_Khmr",
        "mya_Mymr",
        "bod_Tibt",
        "zh",
    ):
        assert segmenter_for(key) == "icu"
    with pytest.raises(ValueError, match="unknown segmenter"):
        split_words_with(["x"], "jieba")


def test_rewritten_words_leave_the_vocabulary():
    split = split_words_with(["L'homme et l'homme", "l'eau"], "spaces:fr")
    assert sorted(split.vocabulary.to_pylist()) == sorted(["L'", "l'", "homme", "et", "eau"])
    assert split.counts.tolist() == [5, 2]


def test_chunk_counts_are_whitespace_chunks_of_the_text_as_given():
    texts = [CHINESE + " 第二句话", "L'homme  libre", ""]
    assert split_words_with(texts, "icu").chunk_counts.tolist() == [2, 2, 0]
    assert split_words_with(texts, "spaces:fr").chunk_counts.tolist() == [2, 2, 0]


def test_spaced_for_minhash_spaces_chinese_and_leaves_spaced_scripts_byte_identical():
    latin = "L'homme naît libre — et égal en droits.\tFin  "
    cyrillic = "Все люди рождаются свободными и равными в своем достоинстве."
    texts = pa.array([CHINESE, latin, cyrillic, "", None], pa.large_string())
    out = spaced_for_minhash(texts)
    assert out.to_pylist()[1:] == texts.to_pylist()[1:]
    assert out[0].as_py().split() == words_of(CHINESE, "cmn_Hani")
    assert out[0].as_py().replace(" ", "") == CHINESE
    only_spaced = pa.array([latin, cyrillic])
    assert spaced_for_minhash(only_spaced) is only_spaced


def test_spaced_for_minhash_cuts_runs_at_other_scripts_and_keeps_texts_apart():
    texts = pa.array(["1948年iPhone手机", "世界", "人权 宣言", "𠮷野家で食べた"])
    out = spaced_for_minhash(texts).to_pylist()
    assert out[0] == "1948 年 iPhone 手机"
    assert out[1] == "世界" and out[2] == "人权 宣言"  # no space at a text's start or end, none doubled
    assert out[3].startswith("𠮷 ")  # a character outside the Basic Multilingual Plane


def test_a_missing_icu_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "icu", None)
    monkeypatch.setattr(segment, "_THREAD", threading.local())
    segment._icu.cache_clear()
    segment._no_space_table.cache_clear()
    try:
        with pytest.raises(UserError, match="pyicu-wheels"):
            spaced_for_minhash(pa.array([CHINESE]))
    finally:
        segment._icu.cache_clear()
        segment._no_space_table.cache_clear()


# UDHR article 1 (Vietnamese; French and German Latin with diacritics), decomposed (NFD): every
# accent a combining mark after its letter.  datatrove's tokenizers (spaCy, pyvi) cut at the marks:
# 1,683 "words" for 708 syllables of the UDHR's own NFD Vietnamese text.
VIETNAMESE = (
    "Tất cả mọi người sinh ra đều được tự do và bình đẳng về nhân phẩm và quyền lợi. "
    "Mọi con người đều được tạo hoá ban cho lý trí và lương tâm."
)
LATIN = {
    "fra_Latn": "Tous les êtres humains naissent libres et égaux en dignité et en droits; "
    "doués de raison, ils doivent agir les uns envers les autres dans un esprit de fraternité.",
    "deu_Latn": "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit "
    "Vernunft und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen.",
}


@pytest.mark.parametrize("key, text", [("vie_Latn", VIETNAMESE), *LATIN.items()])
def test_decomposed_text_keeps_its_syllables_whole(key, text):
    """NFD text gets the NFC text's words, each decomposed: a combining mark stays in its word."""
    import unicodedata

    nfd = unicodedata.normalize("NFD", text)
    assert nfd != text and any(unicodedata.combining(c) for c in nfd)
    composed = words_of(text, key)
    decomposed = words_of(nfd, key)
    assert decomposed == [unicodedata.normalize("NFD", w) for w in composed]
    syllables = [w for w in text.replace(".", " ").replace(";", " ").replace(",", " ").split()]
    assert len(composed) == len(syllables) + text.count(".") + text.count(";") + text.count(",")
