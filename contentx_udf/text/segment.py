"""Word segmentation for every script: one entry point, a rule per language.

API shared by the filters (``corpus/quality``) and near dedup (``corpus/minhash``):

* :func:`segmenter_for` -- the segmenter name of a FineWeb-2 language key (``iso639-3_Script``,
  e.g. ``deu_Latn``, ``cmn_Hani``) or None (today's splitter);
* :func:`split_words_with` -- the words of a batch of strings by one segmenter, as
  :class:`~contentx_udf.text.words.Words`;
* :func:`spaced_for_minhash` -- texts with a space inserted between the dictionary words of runs
  in scripts written without spaces, so that near dedup's byte-level word split sees words.

**Reference.** datatrove's per-language word tokenizers
(``datatrove/utils/word_tokenizers.py``, ``assets/tokenizer_assignment.csv``), which FineWeb-2's
thresholds and stop words were computed with: spaCy ``blank(lang)`` for most languages, jieba
(zh), SudachiPy (ja), pythainlp (th), Kiwi (ko), pyvi (vi), khmer-nltk, laonlp, pyidaungsu,
botok (bo), IndicNLP.  Here one table, :data:`SEGMENTERS` (key -> name: :func:`segmenter_for`):

* **Spaced scripts**: :func:`.words.split_words` (spaCy's blank English rules), with English
  contractions only for English (``spaces``; spaCy's other languages keep German ``im`` and
  French ``dont`` whole: ``spaces:plain``), with a dash between letters inside the word where
  that language's spaCy keeps it (``spaces:hyphens``: de, es, pt, nl, ...), then the language's
  :class:`Rewrite` rules, applied once per distinct word of the batch: French, Italian and
  Catalan elisions (``l'homme`` -> ``l'`` ``homme``; FineWeb-2's French stop words hold ``l'``
  and ``d'``), Korean particles and endings (its stop words are Kiwi's morphemes).
* **Scripts without spaces** (``icu``): runs of Han, kana, Thai, Lao, Khmer and Myanmar
  characters are cut into words by ICU's word BreakIterator (its dictionaries: CJK, Thai, Lao,
  Khmer, Burmese; PyPI ``pyicu-wheels``), one iterator over the concatenated runs of the batch; a
  space is inserted at every boundary and the spaced text goes through :func:`.words.split_words`.
  Tibetan (no ICU dictionary) is cut into syllables after every tsheg (``་``), botok's unit.

Agreement with the reference and cost: ``benchmarks/segment_agreement.py`` (README, "Words for
every script").

``chunk_counts`` stays ``len(text.split())`` of the original text (C4 counts ``line.split()``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UserError
from .arrays import as_strings, ragged_index, replace_at, split_on, split_whitespace, string_offsets
from .words import Words, split_words

#: Today's splitter: spaCy's blank English tokenizer rules (:mod:`.words`).
DEFAULT = "spaces"

#: Characters of the scripts written without spaces between words (RE2), and the marks used
#: inside their words although their script property is Common (prolonged sound mark, voicing
#: marks, iteration marks).
NO_SPACE_CLASS = (
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}"
    r"\x{3005}\x{303B}\x{309B}\x{309C}\x{30FC}\x{FF70}\x{FF9E}\x{FF9F}]"
)
_TIBETAN = r"\p{Tibetan}"
#: Code points of whitespace (``str.isspace``): no space is added beside them.
_WHITESPACE_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], np.uint32)
#: Tibetan: a syllable ends at its tsheg; shad and other marks are words of their own.
_TIBETAN_PASSES = (
    (r"([\x{0F0B}\x{0F0C}])(\p{Tibetan})", r"\1 \2"),
    (r"([\x{0F04}-\x{0F0A}\x{0F0D}-\x{0F14}])", r" \1 "),
)


@dataclass(frozen=True)
class Rewrite:
    """A rewrite of single words into several: words matching ``pattern`` (RE2) become the
    space-separated pieces of ``replacement`` (``\\1`` ...)."""

    pattern: str
    replacement: str
    exempt: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Segmenter:
    """How one language cuts words: the spaced-script rules of :func:`.words.split_words` (with
    English contractions or not; a dash between letters a word of its own or not), after ICU's
    spaces in runs of scripts without spaces (``no_space``), then ``rewrites`` of single words,
    in order."""

    name: str
    english: bool = False
    split_hyphens: bool = True
    no_space: bool = False
    rewrites: tuple[Rewrite, ...] = ()


_ELISION = r"^((?:{})['’])(\pL.*)$"


def _hangul_with_final(final: int) -> str:
    """The Hangul syllables whose final consonant (jongseong) has index ``final`` (4: ᆫ), as one
    string: ``0xAC00 + (initial * 21 + vowel) * 28 + final`` (Unicode's Hangul composition)."""
    return "".join(chr(0xAC00 + syllable * 28 + final) for syllable in range(19 * 21))


#: Korean, after Kiwi (datatrove's ``KiwiTokenizer``: a token is ``text[start:end]`` of a
#: morpheme, so a syllable contracted from two morphemes is a word twice: ``동등한`` -> ``동등``
#: ``한`` ``한``, ``선포한다`` -> ``선포`` ``한`` ``한다``, ``가진다`` -> ``가진`` ``진다``, ``했다`` ->
#: ``했`` ``했`` ``다``).  FineWeb-2's Korean stop words are these morphemes, and its thresholds
#: (``min_words``, ``max_newline_word_ratio``) count them.  The rules, in order, on every
#: distinct word (:data:`KOREAN`):
#:
#: 1. a number from its counter (``1948년`` -> ``1948`` ``년``), words joined by ``·``;
#: 2. the verbs 받다 and 당하다 after a noun (``교육받을`` -> ``교육 받을``), the adjective
#:    suffixes 롭다 and 스럽다 (``자유롭게`` -> ``자유 롭 게``, ``자유로운`` -> ``자유 로운 운``);
#: 3. ``한다 된다`` alone -> ``한 한다``; the verbs of 하 that Kiwi keeps whole (one syllable + 하,
#:    아니하: :data:`KOREAN_HA_VERB`; ``대한`` -> ``대한 한``, ``속한다`` -> ``속한 한다``, ``위하여``
#:    -> ``위하 여``); ``없이`` after a noun;
#: 4. ``한다 된다`` after a noun (``선포한다`` -> ``선포 한 한다``), ``-ᆫ다`` after another verb stem
#:    (:data:`KOREAN_N_DA`): the stem with its last syllable, and that syllable with 다 (``가진다``
#:    -> ``가진 진다``);
#: 5. the past: ``했 됐`` twice (``채택했다`` -> ``채택 했 했 다``), ``하였 되었`` cut, ``왔 졌 ...``
#:    twice (:data:`KOREAN_PAST`), ``었 았`` cut;
#: 6. particles and endings after a stem (:data:`KOREAN_PARTICLES`, :data:`KOREAN_BARE_ENDINGS`:
#:    ``권리를`` -> ``권리 를``), two particles (``에서는`` -> ``에서 는``), 하/되 or the copula 이
#:    before an ending (:data:`KOREAN_ENDINGS`, :data:`KOREAN_COPULA_ENDINGS`: ``증진하는`` ->
#:    ``증진 하 는``, ``기반이다`` -> ``기반 이 다``);
#: 7. a final ``한 할 된 될`` (하/되 + ᆫ/ᆯ) twice after a stem of two syllables or more
#:    (``동등한`` -> ``동등 한 한``);
#: 8. the suffix ``-적`` after two syllables (``필수적`` -> ``필수 적``, ``국제적인`` -> ``국제 적 인
#:    인``); 9. the plural ``들``; 10. the two-syllable words of 하/되/있/없/이/아니/받/않 + an
#:    ending (``있다`` -> ``있 다``).
#:
#: Words that only end like a particle (:data:`KOREAN_WHOLE`) and the pieces of earlier rules
#: that are morphemes (:data:`KOREAN_PIECES`) are exempt.  Left to Kiwi's dictionary: compound
#: nouns (``국제연합`` -> ``국제 연합``) and the stems of native verbs (``누릴`` -> ``누릴 릴``).
KOREAN_PARTICLES = (
    "으로부터|으로서|으로써|에게서|로부터|으로|에서|에게|로서|로써|부터|까지|처럼|보다|"
    "이나|이라|의|에|를|을|은|는|과|와|이|가|도|로|만"
)
KOREAN_ENDINGS = "여야|어야|면서|도록|거나|지만|므로|으며|으면|는다|어서|다|여|고|며|는|어|게|지|기|야|면"
#: The endings also cut after a stem that is not 하/되 (not 지 기 여 어, which end many nouns:
#: 금지, 시기, 참여, 언어).
KOREAN_BARE_ENDINGS = "여야|어야|면서|도록|거나|지만|므로|으며|으면|는다|어서|다|고|며|는|게|야|면"
#: Particles before another (``에는`` -> ``에 는``, ``으로부터의`` -> ``으로부터 의``).
KOREAN_PARTICLES_BEFORE = "으로부터|로부터|으로서|에서|에게|으로|로서|까지|부터|과|와|에|로"
#: Endings after the copula 이 (``기반이다`` -> ``기반 이 다``, ``것이라고`` -> ``것 이 라고``).
KOREAN_COPULA_ENDINGS = "어야|라고|라는|라도|지만|므로|다|며|고|면|라"
#: Past tense syllables contracted from a stem and 었 (오+었 왔, 지+었 졌 ...): twice.
KOREAN_PAST = "왔|졌|봤|줬|켰|혔|렸|겼|쳤|웠"
#: Verbs of 하 that Kiwi keeps whole: one syllable + 하 (대하다, 위하다, 의하다, 속하다 ...), 아니하다.
KOREAN_HA_VERB = r"\p{Hangul}|아니"
#: ``-ᆫ다`` after a verb stem: the syllables with the final ᆫ but 는 (``는다`` is an ending) and
#: 한/된 (하다/되다 after a noun: rule 4).
KOREAN_N_DA = "".join(c for c in _hangul_with_final(4) if c not in "는한된")
#: Words that end like a particle or an ending but are one word (conjunctions, adverbs, nouns).
KOREAN_WHOLE = frozenset(
    "또는 그리고 그러나 그러므로 하지만 그런데 또한 보다 없이 같이 함께 국가 인도 나이 사이 아이 오직 모두 "
    "다만 특히 이미 아직 다시 매우 가장 가지 마치 비록 만약 이제 여기 거기 저기 누구 무엇 어디 "
    "제한 권한 기한 무한 최소한 최대한 유한 역할 분할 이하 지하 영하 산하 천하 상하 전하 각하 폐하 "
    "관계없이 상관없이 끊임없이 어김없이 틀림없이 빠짐없이 예외없이 차별없이 "
    "스스로 서로 진실로 자유로이 나라 자라 정의 동의 회의 합의 주의 의의 결의 논의 협의 민주주의 "
    "결과 효과 성과 통과 초과 경과 부과 사과 학과 "
    "평가 증가 추가 참가 허가 휴가 작가 전문가 대가 물가 주가".split()
)
#: Pieces of the earlier rules that the later ones keep whole.
KOREAN_PIECES = frozenset(
    [s + "다" for s in KOREAN_N_DA]
    + ["아니하", "아니한", "아니할"]
    + "으며 으면 으로 으로서 으로써 으로부터 는다 여야 어야 면서 도록 거나 어서 한다 된다".split()
)
_KO_EXEMPT = KOREAN_WHOLE | KOREAN_PIECES
KOREAN = (
    Rewrite(r"^([0-9]+)(\p{Hangul}+)$", r"\1 \2"),
    Rewrite(r"^(\p{Hangul}+)·(\p{Hangul}+)$", r"\1 · \2"),
    Rewrite(r"^(\p{Hangul}{2,}?)(받|당하|당한|당할|당했)(\p{Hangul}*)$", r"\1 \2\3", exempt=KOREAN_WHOLE),
    Rewrite(r"^(\p{Hangul}{2,}?)(롭|스럽)(\p{Hangul}+)$", r"\1 \2 \3", exempt=KOREAN_WHOLE),
    Rewrite(r"^(\p{Hangul}{2,}?)(로|스러)운$", r"\1 \2운 운", exempt=KOREAN_WHOLE),
    Rewrite(r"^(한|된)(다)$", r"\1 \1\2"),
    Rewrite(rf"^({KOREAN_HA_VERB})(한|할)$", r"\1\2 \2", exempt=_KO_EXEMPT),
    Rewrite(rf"^({KOREAN_HA_VERB})(한)(다)$", r"\1\2 \2\3", exempt=_KO_EXEMPT),
    Rewrite(rf"^({KOREAN_HA_VERB})하(\p{{Hangul}}+)$", r"\1하 \2", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}{2,}?)(없이)$", r"\1 \2", exempt=KOREAN_WHOLE),
    Rewrite(r"^(\p{Hangul}{2,}?)(한|된)(다)$", r"\1 \2 \2\3", exempt=_KO_EXEMPT),
    Rewrite(rf"^(\p{{Hangul}}*)([{KOREAN_N_DA}])다$", r"\1\2 \2다", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}*?)(했|됐)(\p{Hangul}+)$", r"\1 \2 \2 \3", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}*?)(하|되)(였|었)(\p{Hangul}+)$", r"\1 \2 \3 \4", exempt=_KO_EXEMPT),
    Rewrite(rf"^(\p{{Hangul}}*?)({KOREAN_PAST})(\p{{Hangul}}+)$", r"\1\2 \2 \3", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}+?)(었|았)(\p{Hangul}+)$", r"\1 \2 \3", exempt=_KO_EXEMPT),
    Rewrite(
        rf"^(\p{{Hangul}}+?)(?:(하|되)({KOREAN_ENDINGS})|(이)({KOREAN_COPULA_ENDINGS})"
        rf"|({KOREAN_PARTICLES_BEFORE})(는|도|의|만)|({KOREAN_PARTICLES}|{KOREAN_BARE_ENDINGS}))$",
        r"\1 \2 \3 \4 \5 \6 \7 \8",
        exempt=_KO_EXEMPT,
    ),
    Rewrite(r"^(\p{Hangul}{2,}?)(한|할|된|될)$", r"\1 \2 \2", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}{2,}?)적인$", r"\1 적 인 인", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}{2,}?)적(\p{Hangul}*)$", r"\1 적 \2", exempt=_KO_EXEMPT),
    Rewrite(r"^(\p{Hangul}+)(들)$", r"\1 \2"),
    Rewrite(r"^(하|되|있|없|이|아니|받|않)(다|여|고|며|는|어|게|지|기|야|면|라)$", r"\1 \2"),
)


#: Every segmenter (name -> rules).
SEGMENTERS: dict[str, Segmenter] = {
    s.name: s
    for s in (
        # spaCy's blank English rules: datatrove's tokenizer of English (and of None)
        Segmenter("spaces", english=True),
        # spaCy blank(lang) of the other spaced languages: no English contractions
        Segmenter("spaces:plain"),
        # spaCy de, es, pt, nl, sv, da, nb, fi, hu, ro, el, sr keep Baden-Württemberg whole
        Segmenter("spaces:hyphens", split_hyphens=False),
        # spaCy fr / it / ca split an elided article or pronoun from the next word
        Segmenter(
            "spaces:fr",
            rewrites=(
                Rewrite("(?i)" + _ELISION.format("l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|presqu"), r"\1 \2"),
            ),
        ),
        Segmenter("spaces:it", rewrites=(Rewrite(_ELISION.format(r"\pL+?"), r"\1 \2"),)),
        Segmenter(
            "spaces:ca",
            split_hyphens=False,
            rewrites=(
                Rewrite("(?i)" + _ELISION.format("l|d|m|n|s|t"), r"\1 \2"),
                # spaCy ca's exceptions: del -> d el, als -> a ls, pels -> p els
                Rewrite(r"^(d|a|p)(el|els|l|ls)$", r"\1 \2"),
            ),
        ),
        Segmenter("spaces:ko", rewrites=KOREAN),
        # dictionary words of ICU in runs of Han, kana, Thai, Lao, Khmer, Myanmar; Tibetan syllables
        Segmenter("icu", no_space=True),
    )
}
ICU = "icu"

#: ISO 639-3 code (FineWeb-2 key without script) -> segmenter, where not ``spaces:plain``: the
#: languages datatrove's tokenizer_assignment.csv gives spaCy en, fr, it, ca, and those whose
#: spaCy keeps hyphenated words whole (de, es, pt, nl, sv, da, nb, fi, hu, ro, el, sr).
SEGMENTER_OF_LANGUAGE = {
    **dict.fromkeys(("eng", "frr", "fry", "sco", "stq"), "spaces"),
    **dict.fromkeys(("fra", "frp", "fur", "lld", "nrf", "nrm", "pcd", "roh", "wln"), "spaces:fr"),
    **dict.fromkeys(("ita", "nap", "scn"), "spaces:it"),
    "cat": "spaces:ca",
    "kor": "spaces:ko",
    **dict.fromkeys(
        """bar deu gsw hrx swg arg ast cos ext lad mwl oci sdc spa srd por gos lim nds nld pdt vls zea
        swe dan nno nob nor fin fit fkv krl liv lud olo vep vot hun ron rup ell pnt bos ckm cnr hbs
        srp""".split(),
        "spaces:hyphens",
    ),
}
#: Script (FineWeb-2 key's second part) -> segmenter, before the language.
SEGMENTER_OF_SCRIPT = {
    **dict.fromkeys(
        ("Hani", "Hans", "Hant", "Jpan", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"), ICU
    ),
    "Hang": "spaces:ko",
    "Kore": "spaces:ko",
}
#: Two-letter codes (lid.176 labels) accepted as keys.
_TWO_LETTER = {
    "en": "eng", "fr": "fra", "it": "ita", "ca": "cat", "ko": "kor", "de": "deu", "es": "spa",
    "pt": "por", "nl": "nld", "sv": "swe", "da": "dan", "no": "nor", "nb": "nob", "nn": "nno",
    "fi": "fin", "hu": "hun", "ro": "ron", "el": "ell", "sr": "srp", "bs": "bos", "sh": "hbs",
    **dict.fromkeys(("zh", "ja", "th", "lo", "km", "my", "bo", "wuu", "yue", "dz"), "icu"),
}  # fmt: skip


#: Near dedup's shingles: words of a language per English word of the same text, where it is far
#: from 1: near dedup's words of the whole UDHR translation over English's (``udhr2``: Korean
#: 0.68, Chinese 0.92 simplified and 0.85 traditional, Japanese 1.24, Thai 1.33; German 0.94 and
#: French 1.16 keep 5 as every spaced script does).  A near copy's edit (a line replaced, a dated
#: line inserted) changes the shingles touching it: the line's words plus ``shingle_words - 1`` on
#: each side, plus the dated line's five.  Those fixed terms weigh more where a line holds fewer
#: words, so at the same edit a Korean pair (long words: stem and particles) or a Chinese one
#: (dictionary words of two characters) was less similar than an English one, and a Thai or
#: Japanese one (ICU's short words) more; a shingle of ``round(5 x ratio)`` words spans about as
#: much text as five English words (:func:`shingle_words_for`: Korean 3, Chinese 4, Japanese 6,
#: Thai 7).  Languages not listed keep ``shingle_words`` (bit-identical bands); Korean, a spaced
#: script, is listed on purpose: its near-copy rate over its bands (docs/corpus.md, issue 45).
WORDS_PER_ENGLISH_WORD = {"zho": 0.88, "cmn": 0.88, "jpn": 1.24, "tha": 1.33, "kor": 0.68}
_TWO_LETTER_SHINGLES = {"zh": "zho", "ja": "jpn", "th": "tha", "ko": "kor"}


def shingle_words_for(key: str | None, base: int) -> int:
    """Words per near-dedup shingle for a document of language ``key`` (a lid.176 code such as
    ``zh``, a FineWeb-2 key such as ``cmn_Hani``, or None) when English's shingle is ``base``
    words: ``round(base x`` :data:`WORDS_PER_ENGLISH_WORD` ``)``, at least 2; ``base`` for the
    languages not listed."""
    if not key:
        return base
    language = key.partition("_")[0].lower()
    ratio = WORDS_PER_ENGLISH_WORD.get(_TWO_LETTER_SHINGLES.get(language, language))
    return base if ratio is None else max(2, round(base * ratio))


def segmenter_for(key: str | None) -> str:
    """The segmenter name of a FineWeb-2 language key (``deu_Latn``, ``cmn_Hani``), of a bare
    language code (``deu``, ``de``) or of None (today's splitter, :data:`DEFAULT`)."""
    if not key:
        return DEFAULT
    language, _, script = key.partition("_")
    language = _TWO_LETTER.get(language.lower(), language.lower())
    if language == ICU:
        return ICU
    return SEGMENTER_OF_SCRIPT.get(script) or SEGMENTER_OF_LANGUAGE.get(language, "spaces:plain")


def split_words_with(texts: Sequence[str] | pa.Array, segmenter: str = DEFAULT) -> Words:
    """The words of every string of ``texts`` (no nulls) by ``segmenter``; ``chunk_counts`` is
    always ``len(text.split())`` of the text as given."""
    if segmenter not in SEGMENTERS:
        raise ValueError(f"unknown segmenter {segmenter!r}; known: {', '.join(SEGMENTERS)}")
    rules = SEGMENTERS[segmenter]
    texts = as_strings(texts)
    if rules.no_space:
        words = split_words(
            spaced_for_minhash(texts), english=rules.english, split_hyphens=rules.split_hyphens
        )
        chunks = np.diff(split_whitespace(texts)[1]) if len(texts) else np.zeros(0, np.int64)
        words = Words(words.offsets, words.ids, words.vocabulary, chunks.astype(np.int64))
    else:
        words = split_words(texts, english=rules.english, split_hyphens=rules.split_hyphens)
    return _rewrite_all(words, rules.rewrites) if rules.rewrites else words


def _rewrite_all(words: Words, rewrites: Sequence[Rewrite]) -> Words:
    """``words`` after every rewrite in order: the rewrites run on the vocabulary alone (each
    distinct word as a text of one word), then the words of the batch are expanded once."""
    n = len(words.vocabulary)
    pieces = Words(
        np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64), words.vocabulary, np.ones(n, np.int64)
    )
    for rewrite in rewrites:
        pieces = _rewrite(pieces, rewrite)
    if len(pieces.ids) == n and np.array_equal(pieces.ids, np.arange(n)):
        return words
    counts = np.diff(pieces.offsets)[words.ids]
    ids = pieces.ids[ragged_index(pieces.offsets[:-1][words.ids], counts)]
    ends = np.concatenate(([0], np.cumsum(counts)))
    return Words(ends[words.offsets], ids, pieces.vocabulary, words.chunk_counts)


def _rewrite(words: Words, rewrite: Rewrite) -> Words:
    """``words`` with every word matching ``rewrite.pattern`` replaced by the pieces of its
    replacement: once per distinct word, then the word ids are expanded."""
    vocabulary = words.vocabulary.cast(pa.large_string())
    hit = pc.match_substring_regex(vocabulary, rewrite.pattern).to_numpy(zero_copy_only=False)
    if rewrite.exempt and hit.any():
        hit &= ~pc.is_in(vocabulary, value_set=pa.array(sorted(rewrite.exempt), pa.large_string())).to_numpy(
            zero_copy_only=False
        )
    if not hit.any():
        return words
    where = np.flatnonzero(hit)
    spaced = pc.replace_substring_regex(vocabulary.take(where), rewrite.pattern, rewrite.replacement)
    pieces, piece_offsets = split_on(spaced, " ")
    # every vocabulary entry -> its run of entries in `vocabulary + pieces`
    n = len(vocabulary)
    counts = np.ones(n, np.int64)
    counts[where] = np.diff(piece_offsets)
    starts = np.arange(n, dtype=np.int64)
    starts[where] = n + piece_offsets[:-1]
    entries = pc.dictionary_encode(pa.concat_arrays([vocabulary, pieces.cast(pa.large_string())]))
    entry_ids = entries.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    word_counts = counts[words.ids]
    ids = entry_ids[ragged_index(starts[words.ids], word_counts)]
    ends = np.concatenate(([0], np.cumsum(word_counts)))
    # the vocabulary keeps only the words still used (a rewritten word may be gone)
    used = np.zeros(len(entries.dictionary), bool)
    used[ids] = True
    remap = np.cumsum(used) - 1
    vocabulary = entries.dictionary.filter(pa.array(used))
    return Words(ends[words.offsets], remap[ids], vocabulary, words.chunk_counts)


# --- scripts without spaces ---------------------------------------------------------------------


def spaced_for_minhash(texts: pa.Array) -> pa.Array:
    """``texts`` with a space at every word boundary inside runs of Han, kana, Thai, Lao, Khmer,
    Myanmar and Tibetan characters, and where such a run meets other characters; texts without
    those characters come back unchanged (byte-identical; one regex test per batch)."""
    strings = as_strings(texts)
    if len(strings) == 0:
        return texts
    some = pc.match_substring_regex(pc.fill_null(strings, ""), NO_SPACE_CLASS)
    index = np.flatnonzero(some.to_numpy(zero_copy_only=False))
    if len(index) == 0:
        return texts
    subset = strings.take(index)
    tibetan = pc.match_substring_regex(subset, _TIBETAN).to_numpy(zero_copy_only=False)
    spaced = _insert_spaces(subset, _boundaries(subset))
    if tibetan.any():
        where = np.flatnonzero(tibetan)
        cut = spaced.take(where)
        for pattern, replacement in _TIBETAN_PASSES:
            cut = pc.replace_substring_regex(cut, pattern, replacement)
        spaced = replace_at(spaced, where, cut)
    out = replace_at(strings, index, spaced)
    return out.cast(texts.type) if out.type != texts.type else out


#: :data:`NO_SPACE_CLASS` without Tibetan, as an ICU set (the characters ICU cuts).
_ICU_RUN_SET = (
    r"[[:Han:][:Hiragana:][:Katakana:][:Thai:][:Lao:][:Khmer:][:Myanmar:]"
    r"\u3005\u303B\u309B\u309C\u30FC\uFF70\uFF9E\uFF9F]"
)


@cache
def _no_space_table() -> np.ndarray:
    """Per code point: is it a character of a run cut by ICU (:data:`_ICU_RUN_SET`)."""
    icu = _icu()
    chars = icu.UnicodeSet(_ICU_RUN_SET)
    table = np.zeros(0x110000, bool)
    for first, last in chars.ranges():
        table[ord(first) : ord(last) + 1] = True
    return table


@cache
def _icu():
    """PyICU (PyPI ``pyicu-wheels``), imported on first use."""
    try:
        import icu
    except ImportError as exc:
        raise UserError(
            "word segmentation of Chinese, Japanese, Thai, Lao, Khmer and Burmese needs ICU: "
            "pip install pyicu-wheels"
        ) from exc
    return icu


_THREAD = threading.local()


def _icu_word_iterator():
    """ICU's word BreakIterator (root locale: the dictionary is chosen by script), one per thread
    (an iterator holds its text)."""
    iterator = getattr(_THREAD, "iterator", None)
    if iterator is None:
        icu = _icu()
        iterator = _THREAD.iterator = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
    return iterator


def _boundaries(strings: pa.Array) -> np.ndarray:
    """Byte positions (into the strings' data, from the first string's start) where a space goes:
    ICU's word boundaries inside runs of :func:`_no_space_table` characters, and the edges of
    those runs inside a text; sorted, distinct."""
    offsets, data = string_offsets(strings)
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    codes = np.frombuffer(data.tobytes().decode("utf-8").encode("utf-32-le"), np.uint32)
    starts_byte = np.flatnonzero((data & 0xC0) != 0x80)  # byte position of every code point
    table = _no_space_table()
    inside = table[codes]
    # runs: maximal stretches of those characters, never crossing the start of a text
    text_start = np.zeros(len(codes) + 1, bool)
    text_start[np.searchsorted(starts_byte, offsets[:-1])] = True
    text_start[len(codes)] = True
    before = np.concatenate(([False], inside[:-1])) & ~text_start[:-1]
    after = np.concatenate((inside[1:], [False])) & ~text_start[1:]
    runs_lo = np.flatnonzero(inside & ~before)
    runs_hi = np.flatnonzero(inside & ~after) + 1
    edge = text_start
    # run edges inside a text (not at its start or end)
    lo = runs_lo[~edge[runs_lo]]
    hi = runs_hi[~edge[runs_hi]]
    positions = [lo[~np.isin(codes[lo - 1], _WHITESPACE_CODES)], hi[~np.isin(codes[hi], _WHITESPACE_CODES)]]
    if len(runs_lo):
        positions.append(_icu_internal(codes, runs_lo, runs_hi))
    marked = np.zeros(len(codes), bool)  # (np.unique is slower: it hashes)
    for where in positions:
        marked[where] = True
    return starts_byte[np.flatnonzero(marked)]


def _icu_internal(codes: np.ndarray, runs_lo: np.ndarray, runs_hi: np.ndarray) -> np.ndarray:
    """Code point positions of ICU's word boundaries strictly inside the runs: one iterator over
    the runs joined by newlines."""
    lengths = runs_hi - runs_lo
    # the joined text: run, "\n", run, "\n", ...
    total = int(lengths.sum()) + len(lengths)
    origin = np.full(total, -1, np.int64)  # joined position -> code point index
    joined_starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    placed = ragged_index(joined_starts, lengths)
    origin[placed] = ragged_index(runs_lo, lengths)
    joined = np.full(total, 0x0A, np.uint32)
    joined[placed] = codes[origin[placed]]
    text = joined.tobytes().decode("utf-32-le")
    iterator = _icu_word_iterator()
    iterator.setText(text)
    utf16 = np.array(list(iterator), np.int64)
    # UTF-16 offsets -> code point positions of the joined text
    units = np.where(joined >= 0x10000, 2, 1)
    unit_starts = np.concatenate(([0], np.cumsum(units)))
    position = np.searchsorted(unit_starts, utf16)
    position = position[(position > 0) & (position < total)]
    # a boundary strictly inside a run: both neighbours are run characters
    inner = (origin[position - 1] >= 0) & (origin[position] >= 0)
    return origin[position[inner]]


def _insert_spaces(strings: pa.Array, positions: np.ndarray) -> pa.Array:
    """``strings`` with one space inserted before each byte position (into the data from the
    first string's start; never a string's first or last position)."""
    offsets, data = string_offsets(strings)
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    new_data = np.insert(data, positions, np.uint8(0x20))
    shift = np.searchsorted(positions, offsets, side="left")
    new_offsets = (offsets + shift).astype(np.int64)
    return pa.Array.from_buffers(
        pa.large_string(), len(strings), [None, pa.py_buffer(new_offsets), pa.py_buffer(new_data.tobytes())]
    )
