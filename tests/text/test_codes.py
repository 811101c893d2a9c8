"""Language labels -> FineWeb-2 keys: macrolanguages, lid.176's Wikipedia codes, GlotLID labels,
and the script of a label with several taken from the text."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from contentx_udf.text.codes import LID_KEYS, dominant_scripts, key_candidates, language_keys
from contentx_udf.text.language import LANGUAGES


def keys(codes, texts):
    return language_keys(pa.array(codes, pa.string()), pa.array(texts, pa.string())).to_pylist()


def test_serbian_takes_the_script_of_its_text():
    cyrillic = "Сва људска бића рађају се слободна и једнака у достојанству и правима."
    latin = "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima."
    assert keys(["sr", "sr"], [cyrillic, latin]) == ["srp_Cyrl", "srp_Latn"]


def test_the_script_is_the_one_most_letters_are_in():
    # a Latin-script Serbian text quoting a Cyrillic word is still Latin
    mostly_latin = "Sva ljudska bića rađaju se slobodna (слободна) i jednaka u dostojanstvu."
    assert keys(["sr"], [mostly_latin]) == ["srp_Latn"]
    # no letter of either script: the label's usual key
    assert keys(["sr", "hi"], ["12345 !!!", "2024"]) == ["srp_Cyrl", "hin_Deva"]
    assert keys(["hi"], ["Sabhi manushyon ko gaurav aur adhikaron ke mamle mein"]) == ["hin_Latn"]


def test_chinese_and_other_macrolanguages_go_to_the_configured_member():
    texts = ["人人生而自由，在尊严和权利上一律平等。"] + ["2024"] * 8  # no letters: the usual script
    codes = ["zh", "ar", "fa", "ms", "sw", "et", "lv", "no", "mn"]
    assert keys(codes, texts) == [
        "cmn_Hani",
        "arb_Arab",
        "fas_Arab",
        "zsm_Latn",
        "swh_Latn",
        "ekk_Latn",
        "lvs_Latn",
        "nob_Latn",
        "khk_Cyrl",
    ]
    # Traditional characters are Han too
    assert keys(["zh"], ["人人生而自由，在尊嚴和權利上一律平等。"]) == ["cmn_Hani"]


def test_lid_wikipedia_codes_keep_their_meaning():
    # lid.176's "als" is Alemannic (Wikipedia), Tosk Albanian is "sq"
    assert keys(["als", "sq", "yue", "de"], ["Grüezi mitenand", "Të gjithë njerëzit", "人人", "Alle"]) == [
        "gsw_Latn",
        "als_Latn",
        "yue_Hani",
        "deu_Latn",
    ]


def test_glotlid_labels_are_their_own_key_and_unknown_labels_have_none():
    got = keys(["__label__deu_Latn", "srp_Latn", None, "xx", "en", "DE"], ["a", "b", "c", "d", "e", "f"])
    assert got == ["deu_Latn", "srp_Latn", None, None, "eng_Latn", "deu_Latn"]
    assert key_candidates("pt-BR") == ("por_Latn",)


def test_every_lid_label_has_keys_the_usual_first():
    assert set(LID_KEYS) == set(LANGUAGES)
    for code, candidates in LID_KEYS.items():
        assert candidates and len(set(candidates)) == len(candidates), code
        assert len({key.split("_")[1] for key in candidates}) == len(candidates), code


def test_dominant_scripts_per_text():
    texts = pa.array(["abc где", "где ab", "", "abc где"])
    assert dominant_scripts(texts, ("Latn", "Cyrl"), usual_share=0.5).tolist() == [
        0,
        1,
        -1,
        0,
    ]  # a tie: first
    # the usual script keeps a text while it holds 15 % of the letters
    mixed = pa.array(
        ["حقوق الإنسان " + "human rights " * 3, "حق " + "human rights for all " * 4, "human rights"]
    )
    assert dominant_scripts(mixed, ("Arab", "Latn")).tolist() == [0, 1, 1]


def test_arabic_with_english_lines_keeps_the_arabic_profile():
    text = "لكل إنسان حق\nEveryone has the right to life, liberty and security of person."
    assert keys(["ar", "ar"], [text, "Kul insan lahu al-haqq fi al-hayat"]) == ["arb_Arab", "arb_Latn"]
    assert np.array_equal(dominant_scripts(pa.array([], pa.string()), ("Latn",)), [])
