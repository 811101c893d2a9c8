"""The compiled language identifier (contentx_udf/text/_lid.pyx) gives fastText's own codes and
bit-identical float32 scores on real texts in hundreds of languages, on web texts extracted by
``combined``, and on the tokeniser's edge cases; the model file reader and the fallback."""

from __future__ import annotations

import pytest

from contentx_udf import extract
from contentx_udf.evaluation import load_gold
from contentx_udf.text import fasttext_file, language
from contentx_udf.text.language import (
    _mostly_upper,
    _predictor,
    _sample,
    bundled_model,
    detect_language,
    detect_language_fasttext,
    lid_status,
)

from ..conftest import SHARED, shared_or_skip

_lid = pytest.importorskip("contentx_udf.text._lid", reason="compiled language id not built")


@pytest.fixture(scope="module")
def predictor():
    return _lid.Predictor(fasttext_file.read_model(bundled_model()))


def _fasttext(sample: str) -> tuple[str, float]:
    predict, _ = _predictor(None)
    score, label = predict(sample + "\n", 1, 0.0, "strict")[0]
    return label, score


def _compiled(predictor, sample: str) -> tuple[str, float]:
    index, score = predictor.predict(sample)
    return predictor.labels[index], score


def _udhr_samples() -> list[str]:
    """Every stored UDHR translation whole, upper case (then lowercased as the identifier does),
    cut mid-word, and its first lines."""
    samples = []
    for path in sorted(shared_or_skip(SHARED / "data" / "udhr2").glob("*.txt")):
        body = path.read_text(encoding="utf-8")
        for text in (body, body.upper(), body[1234:4567], body[:300]):
            sample = _sample(text)
            if sample is not None:
                samples.append(sample.lower() if _mostly_upper(sample) else sample)
    return samples


def test_raw_scores_are_fastTexts_bit_for_bit_on_the_udhr(predictor):
    samples = _udhr_samples()
    assert len(samples) > 1400
    ours = [_compiled(predictor, s) for s in samples]
    assert ours == [_fasttext(s) for s in samples]
    assert len({label for label, _ in ours}) > 100  # (many labels and tree paths compared)


def test_codes_and_scores_equal_fastTexts_on_combined_web_texts():
    pages = load_gold(shared_or_skip(SHARED / "data" / "scrapinghub"))
    texts = [extract(p.html, "combined", url=p.url).text for p in pages]
    texts = [t for t in texts if t]
    assert len(texts) > 150
    assert [detect_language(t) for t in texts] == [detect_language_fasttext(t) for t in texts]


@pytest.mark.parametrize(
    "sample",
    [
        "a",
        "é",
        "the </s> end is not the end",  # fastText stops the line at an end-of-sentence token
        "</s>",
        "__label__de Das ist ein deutscher Satz __label__fr",  # label tokens add nothing
        "__label__unknown token __label__",
        "words\x00split\x00at\x00nul bytes",
        "tab\tand\rcarriage\x0bvertical\x0cform feed",
        "x" * 5000,
        "日本語の文章です。" * 300,
        "Ünïcödé ñ ß ø 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u200b zero width",
        "   leading and trailing   ",
        "in de la and",  # words of the dictionary (their own rows and their n-grams)
    ],
)
def test_tokeniser_edge_cases_match_fastText(predictor, sample):
    assert _compiled(predictor, sample) == _fasttext(sample)


def test_the_cache_of_unknown_tokens_changes_no_score_when_warm_or_reset():
    """Unknown tokens' n-gram rows are kept per predictor (``_lid.WordCache``): a token seen again
    adds the same rows in the same order, and a full cache starts over; the scores stay fastText's
    bit for bit, first time, second time and across the resets."""
    fresh = _lid.Predictor(fasttext_file.read_model(bundled_model()))
    lines = [
        " ".join(f"w{k:05d}x{'ab'[k % 2]}ö" for k in range(start, start + 500)) + " the Mädchen, (etc.)"
        for start in range(0, 45_000, 500)
    ]
    first = [_compiled(fresh, line) for line in lines]
    entries, resets = fresh.cache_state
    assert resets >= 1 and entries > 0  # 45,000 distinct tokens overflow its 32,768 entries
    assert first == [_fasttext(line) for line in lines]
    assert [_compiled(fresh, line) for line in reversed(lines)] == first[::-1]
    long_token = "y" * 65 + "ß"  # (longer than 64 bytes: not cached)
    assert _compiled(fresh, f"{long_token} {long_token}") == _fasttext(f"{long_token} {long_token}")


def test_a_text_with_a_lone_surrogate_takes_fastTexts_path():
    text = "Ein ganz normaler deutscher Satz \ud800 mit einem kaputten Zeichen darin."
    try:
        expected = detect_language_fasttext(text)
    except Exception as exc:  # noqa: BLE001 (whatever fastText's binding raises)
        with pytest.raises(type(exc)):
            detect_language(text)
    else:
        assert detect_language(text) == expected


def test_status_and_the_pure_python_switch(monkeypatch):
    assert lid_status() == "compiled"
    monkeypatch.setenv("CONTENTX_PURE_PYTHON", "1")
    predictor, why = language._load_compiled(None)
    assert predictor is None and "CONTENTX_PURE_PYTHON" in why


def test_model_reader_reads_lid176_and_refuses_other_files(tmp_path):
    model = fasttext_file.read_model(bundled_model())
    assert (model.nlabels, model.dim, model.minn, model.maxn) == (176, 16, 2, 4)
    assert model.loss == fasttext_file.LOSS_HS and model.word_ngrams == 1
    assert len(model.words) == model.nwords + model.nlabels
    assert all(w.startswith(b"__label__") for w in model.words[model.nwords :])
    assert model.input.codes.size == model.input.rows * model.input.nsubq
    assert model.output.shape == (176, 16)
    page = tmp_path / "page.html"
    page.write_text("<html>not a model</html>")
    with pytest.raises(ValueError, match="not a fastText binary model"):
        fasttext_file.read_args(page)


def test_huffman_tree_reaches_every_label_once():
    counts = fasttext_file.read_model(bundled_model()).counts[-176:]
    left, right = _lid.huffman_tree(counts)
    seen, stack = [], [2 * 176 - 2]
    while stack:
        node = stack.pop()
        if left[node] == -1:
            seen.append(node)
        else:
            stack += [left[node], right[node]]
    assert sorted(seen) == list(range(176))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "One  Two\tThree\nFour\u00a0five\u2003six\u3000seven\x1cEight\x85nine\u2028ten ",
        "Ünïcödé ÉTÉ ß 😀 𝔘𝔫𝔦 日本語 \u200b zero width stays",
        "mixed\r\n\r\nlines\x0b\x0cand\x00nul",
    ],
)
def test_collapsed_utf8_is_the_python_join_of_split(text):
    assert _lid.collapsed_utf8(text) == " ".join(text.split()).encode("utf-8")
    assert _lid.collapsed_utf8("a \ud800 b") is None  # (encode refuses a lone surrogate)


def test_lowercasing_commutes_with_the_whitespace_split_over_all_of_unicode():
    """What the one-pass ``lowered_collapsed_utf8`` relies on: no whitespace character has a
    lowercase mapping, no other character lowercases to whitespace, and no lowercase takes more
    than 4 UTF-8 bytes (its buffer)."""
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        lowered = char.lower()
        if char.isspace():
            assert lowered == char
        else:
            assert not any(c.isspace() for c in lowered)
        assert len(lowered.encode("utf-8")) <= 4


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "One  Two\tThree\nFour\u00a0five\u2003SIX\u3000seven\x1cEight\x85nine\u2028ten ",
        "Ünïcödé ÉTÉ ß 😀 𝔘𝔫𝔦 日本語 \u200b ZERO width \U00010400\U00010401 ǅ Ω K Å",
        "İSTANBUL İ ı I",  # (U+0130 lowercases to two code points)
        "MIXED\r\n\r\nLines\x0b\x0cand\x00NUL",
    ],
)
def test_lowered_collapsed_utf8_is_the_python_join_of_the_lowered_split(text):
    assert _lid.lowered_collapsed_utf8(text) == " ".join(text.lower().split()).encode("utf-8")


@pytest.mark.parametrize("text", ["ΟΔΟΣ ΣΟΦΙΑΣ", "a \ud800 b"])
def test_lowered_collapsed_utf8_leaves_the_context_dependent_sigma_and_surrogates_to_python(text):
    assert _lid.lowered_collapsed_utf8(text) is None  # text_hash then lowers in Python
    if "\ud800" not in text:
        import hashlib

        normal = " ".join(text.lower().split()).encode("utf-8")
        assert "ς" in text.lower()  # (the final sigma)
        assert language.text_hash(text) == hashlib.blake2b(normal, digest_size=16).hexdigest()


def test_text_hash_equals_the_python_normalisation_on_real_texts():
    import hashlib

    texts = [p.read_text(encoding="utf-8") for p in sorted((SHARED / "data" / "udhr2").glob("*.txt"))]
    texts = [t for t in texts if t] or pytest.skip("no UDHR texts")
    for text in texts + [t.upper() for t in texts[:50]] + [t.title() for t in texts[50:100]]:
        normal = " ".join(text.lower().split()).encode("utf-8")
        assert language.text_hash(text) == hashlib.blake2b(normal, digest_size=16).hexdigest()
        assert _lid.lowered_collapsed_utf8(text) in (normal, None)


def test_one_pass_detect_equals_the_sample_then_predict(predictor):
    texts = [p.read_text(encoding="utf-8") for p in sorted((SHARED / "data" / "udhr2").glob("*.txt"))]
    texts = [t for t in texts if t] or pytest.skip("no UDHR texts")
    texts += ["1234 5678 !!!", "ÉTÉ À PARIS, AVEC DES AMIS", "ABCDE", "Hello WORLD THIS IS LOUD"]
    for text in texts:
        sample = _sample(text)
        found = predictor.detect(text, language.MAX_CHARS, True)
        if sample is None:
            assert found is None
        elif _mostly_upper(sample):
            assert found == (-2, 0.0)  # (lowercased by the Python path)
        else:
            assert found == predictor.predict(sample)
