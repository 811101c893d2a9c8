"""The compiled byte-level counter (:mod:`contentx_udf.text.bytelevel`) against ``tokenizers``
itself: the pre-token splits on code points of every class, and counts and ids on generated text
(Unicode, white-space runs, CJK, emoji, contractions, added tokens), for BPE and WordLevel models,
with and without a prefix space; tokenizers it does not serve go to the library."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("tokenizers")
_tokcount = pytest.importorskip("contentx_udf.text._tokcount")

from contentx_udf.text import bytelevel, tokens  # noqa: E402

CORPUS = [
    "The council's budget wasn't approved; they'll vote again on Tuesday (3 p.m.).",
    "Der Gemeinderat hat den Haushalt beschlossen — 1.250.000 €.",
    "市议会周二批准了新桥的预算。東京都の予算。서울시 예산안.",
    "Emoji 👍🏽 and flags 🇫🇷, tabs\tand\n\nnewlines   with   runs.",
    "Ελληνικά, русский, עברית, العربية, हिन्दी, ไทย.",
] * 30


def _tokenizer(tmp_path, prefix: bool, model: str = "bpe"):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    if model == "bpe":
        tokenizer = Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<|endoftext|>", "<pad>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
    else:
        tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
        trainer = trainers.WordLevelTrainer(vocab_size=200, special_tokens=["<unk>", "<|endoftext|>"])
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix)
    tokenizer.train_from_iterator(CORPUS, trainer)
    path = tmp_path / f"{model}-{prefix}.json"
    tokenizer.save(str(path))
    return tokens.load_spec(str(path))


@pytest.fixture(scope="module", params=[(False, "bpe"), (True, "bpe"), (False, "wordlevel")])
def spec(request, tmp_path_factory):
    return _tokenizer(tmp_path_factory.mktemp("bl"), *request.param)


def _library(spec, texts, special=False):
    from tokenizers import Tokenizer

    own = Tokenizer.from_str(spec.json)
    return [e.ids for e in own.encode_batch(texts, add_special_tokens=special)]


def _splits(text: str) -> list[str]:
    data = text.encode("utf-8")
    ends = _tokcount.split_offsets(data, bytelevel.classes())
    return [bytelevel.byte_level(data[s:e]) for s, e in zip([0, *ends[:-1]], ends, strict=True)]


def test_splits_equal_the_librarys_on_code_points_of_every_class():
    """Every code point of the BMP that Python's Unicode assigns (and the newer letters and numbers
    the library knows), each between a letter, a digit and punctuation, split as the library splits
    (tools/bytelevel_classes.py --all checks all 1,112,064)."""
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    points = [
        c for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) != "Cn"
    ]
    points += [c for first, last, _ in bytelevel.NEWER_UNICODE for c in range(first, last + 1)]
    points += list(range(0x1F300, 0x1FAFF))  # emoji
    for k in range(0, len(points), 30_000):
        text = "".join(f"a{chr(c)}1{chr(c)}!\n" for c in points[k : k + 30_000])
        assert _splits(text) == [p for p, _ in pre.pre_tokenize_str(text)]
    assert bytelevel.library_agrees()


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            list(" \t\n\r\x0b\x0c\u00a0\u2028\u3000'sStmdrevl0123!?.,-😀👍🏽中文日本語한국어éñ\u0301")
        ),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(
        st.one_of(TEXT, st.sampled_from(["", " ", "  x", "'s", "a<|endoftext|>b", " 've'll"])), max_size=8
    )
)
def test_counts_and_ids_equal_the_librarys_on_any_text(spec, texts):
    counter = tokens.counter_of(spec)
    assert counter is not None
    expected = _library(spec, texts)
    got = tokens.count_tokens(spec, pa.array(texts, type=pa.string()))
    assert got.to_pylist() == [len(e) for e in expected]
    ids, lengths = tokens.encode_ids(spec, texts, 7)
    assert lengths.tolist() == [len(e) + 1 for e in expected]
    assert ids.tolist() == [i for e in expected for i in (*e, 7)]


def test_real_sentences_nulls_and_slices(spec):
    texts = pa.array([*CORPUS[:5], None, "<|endoftext|> in the middle <|endoftext|>"] * 3)
    sliced = texts.slice(2, 12)
    values = sliced.to_pylist()
    expected = [
        None if t is None else len(e)
        for t, e in zip(values, _library(spec, [t or "" for t in values]), strict=True)
    ]
    assert tokens.count_tokens(spec, sliced).to_pylist() == expected
    assert tokens.count_tokens(spec, pa.chunked_array([sliced, sliced])).to_pylist() == expected * 2


def test_the_cache_is_bounded_and_stays_exact(spec):
    counter = bytelevel.ByteLevelCounter(tokens.tokenizer_of(spec), bytelevel.served(spec.json))
    counter.cache.max_entries = 50
    texts = pa.array(CORPUS[:5])
    todo = np.ones(5, dtype=bool)
    first = counter.counts(texts, todo)
    assert counter.cache.size > 50
    again = counter.counts(texts, todo)  # emptied before this batch, then filled again
    assert again.tolist() == first.tolist() == [len(e) for e in _library(spec, CORPUS[:5])]


def test_tokenizers_it_does_not_serve_go_to_the_library(tmp_path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300))
    path = tmp_path / "lower.json"
    tokenizer.save(str(path))
    spec = tokens.load_spec(str(path))
    assert bytelevel.served(spec.json) is None and tokens.counter_of(spec) is None
    assert tokens.count_tokens(spec, CORPUS[:5]).to_pylist() == [len(e) for e in _library(spec, CORPUS[:5])]
    whitespace = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    whitespace.pre_tokenizer = pre_tokenizers.Whitespace()
    assert bytelevel.served(whitespace.to_str()) is None
