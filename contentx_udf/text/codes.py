"""Language labels -> FineWeb-2 language keys (``iso639-3_Script``), for a whole batch at once.

FineWeb-2 (Penedo et al. 2025; ``huggingface/fineweb-2``, ``configs/{iso639-3}_{Script}.yml``)
names a language by its ISO 639-3 code and its ISO 15924 script, as GlotLID labels it.  The corpus
job's identifier is fastText's lid.176 (:mod:`.language`), whose labels are ISO 639-1 codes where
one exists, else Wikipedia codes.  :data:`LID_KEYS` maps each of its 176 labels to the FineWeb-2
keys it can mean, the usual one first:

* a macrolanguage goes to the member FineWeb-2 has a configuration for: ``zh`` -> ``cmn_Hani``,
  ``ar`` -> ``arb_Arab``, ``fa`` -> ``fas_Arab`` (FineWeb-2 has no ``pes``/``prs``), ``ms`` ->
  ``zsm_Latn``, ``sw`` -> ``swh_Latn``, ``et`` -> ``ekk_Latn``, ``lv`` -> ``lvs_Latn``, ``no`` ->
  ``nob_Latn``, ``sq`` -> ``als_Latn`` (Tosk Albanian), ``az`` -> ``azj_Latn``, ``mn`` ->
  ``khk_Cyrl``, ``ne`` -> ``npi_Deva``, ``uz`` -> ``uzn_Latn``, ``ku`` -> ``kmr_Latn``, ``ps`` ->
  ``pbt_Arab``, ``mg`` -> ``plt_Latn``, ``qu`` -> ``quz_Latn``, ``gn`` -> ``gug_Latn``, ``yi`` ->
  ``ydd_Hebr``, ``tl`` -> ``fil_Latn`` (no ``tgl``), ``bh`` -> ``bho_Deva``, ``sh`` -> ``hrv_Latn``
  (``srp_Cyrl`` in Cyrillic);
* lid.176's Wikipedia codes keep their Wikipedia meaning: ``als`` is Alemannic (``gsw_Latn``), not
  Tosk Albanian (``als_Latn``, which is ``sq``);
* ``en`` -> ``eng_Latn``, for which FineWeb-2 has no configuration (FineWeb covers English).

A label with several keys (``sr``: ``srp_Cyrl``/``srp_Latn``; ``hi``: ``hin_Deva``/``hin_Latn``;
``pa``, ``uz``, ``ku``, ``tk``, ``ug``, ...) takes the script most of the text's letters are in
(:func:`dominant_scripts`, over its first :data:`SCRIPT_SAMPLE_CHARS` characters), the first key
when none of them is.  A GlotLID label (``__label__deu_Latn`` or ``deu_Latn``) is its own key.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrays import as_strings

#: lid.176 label -> the FineWeb-2 keys it can mean, the one taken by default first.
LID_KEYS: dict[str, tuple[str, ...]] = {
    "af": ("afr_Latn",),
    "als": ("gsw_Latn",),
    "am": ("amh_Ethi",),
    "an": ("arg_Latn",),
    "ar": ("arb_Arab", "arb_Latn"),
    "arz": ("arz_Arab",),
    "as": ("asm_Beng", "asm_Latn"),
    "ast": ("ast_Latn",),
    "av": ("ava_Cyrl",),
    "az": ("azj_Latn", "azj_Cyrl"),
    "azb": ("azb_Arab",),
    "ba": ("bak_Cyrl",),
    "bar": ("bar_Latn",),
    "bcl": ("bcl_Latn",),
    "be": ("bel_Cyrl",),
    "bg": ("bul_Cyrl",),
    "bh": ("bho_Deva",),
    "bn": ("ben_Beng", "ben_Latn"),
    "bo": ("bod_Tibt",),
    "bpy": ("bpy_Beng",),
    "br": ("bre_Latn",),
    "bs": ("bos_Latn",),
    "bxr": ("bxr_Cyrl",),
    "ca": ("cat_Latn",),
    "cbk": ("cbk_Latn",),
    "ce": ("che_Cyrl",),
    "ceb": ("ceb_Latn",),
    "ckb": ("ckb_Arab",),
    "co": ("cos_Latn",),
    "cs": ("ces_Latn",),
    "cv": ("chv_Cyrl",),
    "cy": ("cym_Latn",),
    "da": ("dan_Latn",),
    "de": ("deu_Latn",),
    "diq": ("diq_Latn",),
    "dsb": ("dsb_Latn",),
    "dty": ("dty_Deva",),
    "dv": ("div_Thaa",),
    "el": ("ell_Grek",),
    "eml": ("eml_Latn",),
    "en": ("eng_Latn",),
    "eo": ("epo_Latn",),
    "es": ("spa_Latn",),
    "et": ("ekk_Latn",),
    "eu": ("eus_Latn",),
    "fa": ("fas_Arab",),
    "fi": ("fin_Latn",),
    "fr": ("fra_Latn",),
    "frr": ("frr_Latn",),
    "fy": ("fry_Latn",),
    "ga": ("gle_Latn",),
    "gd": ("gla_Latn",),
    "gl": ("glg_Latn",),
    "gn": ("gug_Latn",),
    "gom": ("gom_Deva", "gom_Latn"),
    "gu": ("guj_Gujr", "guj_Latn"),
    "gv": ("glv_Latn",),
    "he": ("heb_Hebr",),
    "hi": ("hin_Deva", "hin_Latn"),
    "hif": ("hif_Latn",),
    "hr": ("hrv_Latn",),
    "hsb": ("hsb_Latn",),
    "ht": ("hat_Latn",),
    "hu": ("hun_Latn",),
    "hy": ("hye_Armn",),
    "ia": ("ina_Latn",),
    "id": ("ind_Latn",),
    "ie": ("ile_Latn",),
    "ilo": ("ilo_Latn",),
    "io": ("ido_Latn",),
    "is": ("isl_Latn",),
    "it": ("ita_Latn",),
    "ja": ("jpn_Jpan",),
    "jbo": ("jbo_Latn",),
    "jv": ("jav_Latn",),
    "ka": ("kat_Geor",),
    "kk": ("kaz_Cyrl",),
    "km": ("khm_Khmr",),
    "kn": ("kan_Knda", "kan_Latn"),
    "ko": ("kor_Hang",),
    "krc": ("krc_Cyrl",),
    "ku": ("kmr_Latn", "kmr_Cyrl"),
    "kv": ("kpv_Cyrl",),
    "kw": ("cor_Latn",),
    "ky": ("kir_Cyrl",),
    "la": ("lat_Latn",),
    "lb": ("ltz_Latn",),
    "lez": ("lez_Cyrl",),
    "li": ("lim_Latn",),
    "lmo": ("lmo_Latn",),
    "lo": ("lao_Laoo",),
    "lrc": ("lrc_Arab",),
    "lt": ("lit_Latn",),
    "lv": ("lvs_Latn",),
    "mai": ("mai_Deva",),
    "mg": ("plt_Latn",),
    "mhr": ("mhr_Cyrl",),
    "min": ("min_Latn", "min_Arab"),
    "mk": ("mkd_Cyrl",),
    "ml": ("mal_Mlym", "mal_Latn"),
    "mn": ("khk_Cyrl",),
    "mr": ("mar_Deva", "mar_Latn"),
    "mrj": ("mrj_Cyrl",),
    "ms": ("zsm_Latn", "zsm_Arab"),
    "mt": ("mlt_Latn",),
    "mwl": ("mwl_Latn",),
    "my": ("mya_Mymr",),
    "myv": ("myv_Cyrl",),
    "mzn": ("mzn_Arab",),
    "nah": ("nah_Latn",),
    "nap": ("nap_Latn",),
    "nds": ("nds_Latn",),
    "ne": ("npi_Deva", "npi_Latn"),
    "new": ("new_Deva",),
    "nl": ("nld_Latn",),
    "nn": ("nno_Latn",),
    "no": ("nob_Latn",),
    "oc": ("oci_Latn",),
    "or": ("ory_Orya", "ory_Latn"),
    "os": ("oss_Cyrl",),
    "pa": ("pan_Guru", "pan_Latn"),
    "pam": ("pam_Latn",),
    "pfl": ("pfl_Latn",),
    "pl": ("pol_Latn",),
    "pms": ("pms_Latn",),
    "pnb": ("pnb_Arab",),
    "ps": ("pbt_Arab",),
    "pt": ("por_Latn",),
    "qu": ("quz_Latn",),
    "rm": ("roh_Latn",),
    "ro": ("ron_Latn", "ron_Cyrl"),
    "ru": ("rus_Cyrl",),
    "rue": ("rue_Cyrl",),
    "sa": ("san_Deva", "san_Latn"),
    "sah": ("sah_Cyrl",),
    "sc": ("srd_Latn",),
    "scn": ("scn_Latn",),
    "sco": ("sco_Latn",),
    "sd": ("snd_Arab", "snd_Latn", "snd_Deva"),
    "sh": ("hrv_Latn", "srp_Cyrl"),
    "si": ("sin_Sinh",),
    "sk": ("slk_Latn",),
    "sl": ("slv_Latn",),
    "so": ("som_Latn",),
    "sq": ("als_Latn",),
    "sr": ("srp_Cyrl", "srp_Latn"),
    "su": ("sun_Latn",),
    "sv": ("swe_Latn",),
    "sw": ("swh_Latn",),
    "ta": ("tam_Taml", "tam_Latn"),
    "te": ("tel_Telu", "tel_Latn"),
    "tg": ("tgk_Cyrl",),
    "th": ("tha_Thai",),
    "tk": ("tuk_Latn", "tuk_Cyrl", "tuk_Arab"),
    "tl": ("fil_Latn",),
    "tr": ("tur_Latn",),
    "tt": ("tat_Cyrl", "tat_Latn"),
    "tyv": ("tyv_Cyrl",),
    "ug": ("uig_Arab", "uig_Latn", "uig_Cyrl"),
    "uk": ("ukr_Cyrl",),
    "ur": ("urd_Arab", "urd_Latn"),
    "uz": ("uzn_Latn", "uzn_Cyrl"),
    "vec": ("vec_Latn",),
    "vep": ("vep_Latn",),
    "vi": ("vie_Latn",),
    "vls": ("vls_Latn",),
    "vo": ("vol_Latn",),
    "wa": ("wln_Latn",),
    "war": ("war_Latn",),
    "wuu": ("wuu_Hani",),
    "xal": ("xal_Cyrl",),
    "xmf": ("xmf_Geor",),
    "yi": ("ydd_Hebr",),
    "yo": ("yor_Latn",),
    "yue": ("yue_Hani",),
    "zh": ("cmn_Hani",),
}

#: ISO 15924 script code -> its RE2 character class (``Jpan`` is Han and kana).
SCRIPT_CLASSES: dict[str, str] = {
    "Latn": r"\p{Latin}",
    "Cyrl": r"\p{Cyrillic}",
    "Arab": r"\p{Arabic}",
    "Deva": r"\p{Devanagari}",
    "Beng": r"\p{Bengali}",
    "Guru": r"\p{Gurmukhi}",
    "Gujr": r"\p{Gujarati}",
    "Knda": r"\p{Kannada}",
    "Mlym": r"\p{Malayalam}",
    "Orya": r"\p{Oriya}",
    "Taml": r"\p{Tamil}",
    "Telu": r"\p{Telugu}",
    "Sinh": r"\p{Sinhala}",
    "Hani": r"\p{Han}",
    "Jpan": r"[\p{Han}\p{Hiragana}\p{Katakana}]",
    "Hang": r"\p{Hangul}",
    "Grek": r"\p{Greek}",
    "Hebr": r"\p{Hebrew}",
    "Armn": r"\p{Armenian}",
    "Geor": r"\p{Georgian}",
    "Ethi": r"\p{Ethiopic}",
    "Thai": r"\p{Thai}",
    "Laoo": r"\p{Lao}",
    "Khmr": r"\p{Khmer}",
    "Mymr": r"\p{Myanmar}",
    "Tibt": r"\p{Tibetan}",
    "Thaa": r"\p{Thaana}",
}

#: Characters of a text read to find its script (its start decides as well as the whole).
SCRIPT_SAMPLE_CHARS = 2000
#: The usual key's script keeps a text while it holds at least this share of its letters in the
#: label's scripts (see the module docstring).
USUAL_SCRIPT_SHARE = 0.15

_KEY = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")
_LABEL_PREFIX = "__label__"


def dominant_scripts(
    texts: pa.Array, scripts: tuple[str, ...], usual_share: float = USUAL_SCRIPT_SHARE
) -> np.ndarray:
    """Per text: the index in ``scripts`` of its script, read over its first
    :data:`SCRIPT_SAMPLE_CHARS` characters: 0 (the usual script) while it holds at least
    ``usual_share`` of the letters in ``scripts``, else the script most of them are in (the first
    on a tie); -1 when none is there."""
    texts = as_strings(texts)
    if len(texts) == 0:
        return np.zeros(0, np.int64)
    sample = pc.utf8_slice_codeunits(pc.fill_null(texts, ""), 0, SCRIPT_SAMPLE_CHARS)
    counts = np.stack(
        [
            pc.count_substring_regex(sample, SCRIPT_CLASSES[script]).to_numpy(zero_copy_only=False)
            for script in scripts
        ],
        axis=1,
    )
    best = counts.argmax(axis=1).astype(np.int64)
    total = counts.sum(axis=1)
    best[counts[:, 0] >= usual_share * total] = 0
    best[total == 0] = -1
    return best


def key_candidates(label: str | None) -> tuple[str, ...]:
    """The FineWeb-2 keys a label can mean (a GlotLID label: itself; unknown: none)."""
    if label is None:
        return ()
    label = label.strip()
    if label.startswith(_LABEL_PREFIX):
        label = label[len(_LABEL_PREFIX) :]
    if _KEY.match(label):
        return (label,)
    return LID_KEYS.get(label.lower().replace("-", "_").split("_")[0], ())


def language_keys(codes: pa.Array, texts: pa.Array) -> pa.Array:
    """Per document: the FineWeb-2 key (``deu_Latn``) of its language label (lid.176 or GlotLID)
    and, for a label with several scripts, of its text's dominant script; null for a null or
    unknown label.  One pass per distinct label, never per document."""
    codes = as_strings(codes)
    texts = as_strings(texts)
    if len(codes) != len(texts):
        raise ValueError(f"language_keys: {len(codes)} codes for {len(texts)} texts")
    encoded = pc.dictionary_encode(codes)
    labels = encoded.dictionary.to_pylist()
    code_index = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    keys: list[str] = []
    out = np.full(len(codes), -1, np.int64)
    for label_index, label in enumerate(labels):
        candidates = key_candidates(label)
        if not candidates:
            continue
        docs = np.flatnonzero(code_index == label_index)
        first = len(keys)
        keys.extend(candidates)
        if len(candidates) == 1:
            out[docs] = first
            continue
        scripts = tuple(key.split("_")[1] for key in candidates)
        best = dominant_scripts(texts.take(docs), scripts)
        out[docs] = first + np.maximum(best, 0)
    dictionary = pa.array(keys + [None], pa.string())
    return dictionary.take(pa.array(np.where(out < 0, len(keys), out)))
