"""Words of every script (text/segment.py): dictionary words in scripts without spaces, the
language rules of spaced scripts, and near dedup's spaced texts."""

from __future__ import annotations

import pyarrow as pa
import pytest

from contentx_udf.text.segment import segmenter_for, spaced_for_minhash, split_words_with


def words_of(text: str, key: str | None) -> list[str]:
    split = split_words_with([text], segmenter_for(key))
    vocabulary = split.vocabulary.to_pylist()
    return [vocabulary[i] for i in split.ids[split.offsets[0] : split.offsets[1]]]


CHINESE = "市议会周二在经过长时间辩论后批准了新预算，争论的焦点是公共交通的费用。"


def test_chinese_is_cut_into_dictionary_words():
    words = words_of(CHINESE, "cmn_Hani")
    assert words[:4] == ["市", "议会", "周二", "在"]
    for word in ("辩论", "批准", "预算", "的", "公共", "交通", "，", "。"):
        assert word in words


def test_spaced_for_minhash_spaces_chinese_and_leaves_spaced_scripts_byte_identical():
    latin = "L'homme naît libre — et égal en droits.\tFin  "
    cyrillic = "Все люди рождаются свободными и равными в своем достоинстве."
    texts = pa.array([CHINESE, latin, cyrillic, "", None], pa.large_string())
    out = spaced_for_minhash(texts)
    assert out[1] == texts[1] and out[2] == texts[2] and out[3] == texts[3] and not out[4].is_valid
    assert out[0].as_py().split() == words_of(CHINESE, "cmn_Hani")
    only_spaced = pa.array([latin, cyrillic])
    assert spaced_for_minhash(only_spaced) is only_spaced


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("fra_Latn", "L'homme d'État qu'il aime", ["L'", "homme", "d'", "État", "qu'", "il", "aime"]),
        ("ita_Latn", "dell'uomo e l'acqua", ["dell'", "uomo", "e", "l'", "acqua"]),
        (
            "deu_Latn",
            "Die Würde des Menschen ist unantastbar.",
            ["Die", "Würde", "des", "Menschen", "ist", "unantastbar", "."],
        ),
    ],
)
def test_spaced_languages(key, text, expected):
    assert words_of(text, key) == expected
