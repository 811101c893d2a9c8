"""The one word splitter of the quality filters, for a whole batch of texts at once.

**What a word is.** datatrove's filters (the reference of FineWeb, Penedo et al. 2024) split text
with spaCy's blank English tokenizer and drop the whitespace tokens
(``datatrove/utils/word_tokenizers.py``: ``SpaCyTokenizer`` + ``strip_strings``).  This module
reproduces that tokenizer's rules without spaCy:

1. The text is cut at every whitespace character (as ``str.split()``); each piece is a *chunk*.
2. Punctuation at the start of a chunk comes off one character at a time (brackets, quotes,
   ``, : ; ! ? # * & _ < >``, ``§ % =``, dashes, currency signs, symbols such as ``©`` or emoji),
   except that a run of two or more dots (``...``) is one word; punctuation at the end comes off
   the same way, together with ``'s``, a final ``.`` (kept on ``U.S.``, ``J.``, ``e.g.``, ``Mr.``
   and the other abbreviations of spaCy's English exceptions) and a unit or currency after a
   number (``10km`` -> ``10`` ``km``).
3. Inside what remains, a hyphen or dash between letters (or a digit and a letter) is its own
   word (``well-known`` -> ``well`` ``-`` ``known``; ``COVID-19`` stays whole), as are ``+ - * ^``
   between digits, ``,`` between letters, ``.`` between a lower-case and an upper-case letter,
   ``: < > = /`` between a letter or digit and a letter, an ellipsis and a symbol.  Apostrophes
   inside a word stay (``O'Neill``, ``rock'n'roll``) except English contractions, which split as
   spaCy splits them (``don't`` -> ``do`` ``n't``, ``I'm`` -> ``I`` ``'m``, ``cannot`` ->
   ``can`` ``not``).
4. A chunk that is a URL or an e-mail address (spaCy's ``URL_MATCH``: optional scheme, optional
   ``user@``, a host with a lower-case TLD, optional port and path) is one word once its leading
   and trailing punctuation is off; numbers (``3.5``, ``1,000``, ``12:30``, ``v1.2.3.4``) are
   one word.

So punctuation marks are words too (``.`` and ``,`` count in "words with a letter"), as in
datatrove; the filters that want only real words drop the *symbol words* (made only of
:data:`PUNCTUATION` characters).  Not reproduced: spaCy's rarer exceptions (``'d`` alone,
``nothin'``, ``+`` before ``=``, an abbreviation glued to the next word); on 1,971 real texts the
words equal spaCy's on 93.5 % and 1,036 of 3.4 million words differ
(``benchmarks/filter_agreement.py``).

**How.** The batch is cut at spaces and dictionary-encoded, so each distinct piece is split once.
Pieces of letters or digits only are one word (the bulk); the common shapes (a word and a final
mark, a hyphenated word, a word in brackets or quotes) are recognised with string kernels; the
rest go through the rules above: RE2 (pyarrow compute) for prefixes and suffixes, Python ``re``
for spaCy's infix and URL patterns (they need lookarounds) on the few cores that hold one.  Every
regex runs on the strings it can change only.

**Scripts without spaces.** Chinese, Japanese, Thai, Lao, Khmer, Burmese and Tibetan do not put
spaces between words, so a "word" here is a whole phrase; :func:`no_space_script` marks those
texts (by the row's language code, or when such characters are at least
``NO_SPACE_SHARE`` of the characters) and the filters skip their word-based rules for them, as
FineWeb-2 does (it would need a segmenter per language).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrays import as_strings, byte_lengths, cut_bytes, ragged_index, split_on, split_whitespace

# --- character classes (RE2 syntax) -----------------------------------------------------------

#: Unicode whitespace (``str.isspace``), as a RE2 class; RE2's ``\s`` is ASCII only.
WHITESPACE = (
    r"[\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}]"
)

#: datatrove's ``PUNCTUATION`` (``datatrove/utils/text.py``): a word made only of these characters
#: (or of its ``TERMINAL_PUNCTUATION``, the sentence-ending marks of every script) is a *symbol word*.
PUNCTUATION = (
    "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»"
    + "".join(map(chr, (x for a, b in ((0, 9), (11, 13), (13, 32), (127, 160)) for x in range(a, b))))
)

#: Sentence-ending marks of every script: datatrove's ``TERMINAL_PUNCTUATION`` (used by FineWeb's
#: "lines ending in punctuation" and by the symbol words).
TERMINAL_PUNCTUATION = frozenset(
    "᪩？⁈𑩂．꩞𑅃﹗𑂾\u1b7d፧𑅂꡶꘎⁉࠾᪨𑊩𑱂᱿𖩮᥅\U00011f43\U00011f44﹒𑈹𑈸።܂؞꛳\U00010f88𑗍𐩖𑙂\u061d꩟᠉\u1b7e"
    "𑗗᰼𑻸؟𑪜꧉𑗉𐽙𖫵𖬷܀꓿᜵𑗏𑁇𑗓𑥄៖𑥆𑗑𑗒꯫۔𐩗\U00010f86꡷\u2e54｡៕߹⸮.𑇅࠹𛲟꫰꤯𐽗᭞𑜼፨𑃁꣏𑇟𖬸𑪛𑜾࠷𝪈?𑃀𑗃！"
    "։꣎॥𑗖᭛᠃!၊𖺘⁇𑗌𑑋𖭄᭟𑅁𑙁⸼꩝𑗋。꧈꫱𑜽𐽖𑂿᙮។꛷\U00010f89៚᥄𑗕𑗎᪪᭚࠽𑇞𑗊𐽘\u2e53𑗔𖩯𑇍𑻷𐽕𑩃।𑗂𑇆𑁈။᱾𑱁꘏܁᜶‼𑈻‽"
    "᪫﹖𑑌𑈼\U00010f87𑗐៙᰻"
)

SYMBOL_CHARACTERS = frozenset(PUNCTUATION) | TERMINAL_PUNCTUATION


def _re2_class(chars: frozenset[str] | str) -> str:
    """A RE2 character class body holding exactly ``chars`` (every one escaped as ``\\x{..}``)."""
    return "".join(f"\\x{{{ord(c):x}}}" for c in sorted(set(chars)))


_NOT_SYMBOL = f"[^{_re2_class(SYMBOL_CHARACTERS)}]"

# spaCy's punctuation lists (spacy/lang/char_classes.py: _punct, _quotes, _currency, _units)
_PUNCT = "…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪"
_QUOTES = "'\"”“`‘´’‚,„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧"
_CURRENCY_CHARS = "$£€¥฿₽﷼₴₠₡₢₣₤₥₦₧₨₩₪₫₭₮₯₰₱₲₳₵₶₷₸₹₺₻₼₾₿"
_UNITS = (
    "km km² km³ m m² m³ dm dm² dm³ cm cm² cm³ mm mm² mm³ ha µm nm yd in ft kg g mg µg t lb oz m/s "
    "km/h kmh mph hPa Pa mbar mb MB kb KB gb GB tb TB T G M K % км км² км³ м м² м³ дм дм² дм³ см см² "
    "см³ мм мм² мм³ нм кг г мг м/с км/ч кПа Па мбар Кб КБ кб Мб МБ мб Гб ГБ гб Тб ТБ тб"
).split()

_SINGLE_PREFIX = _re2_class(frozenset(_PUNCT + _QUOTES + _CURRENCY_CHARS + "§%=—–"))
_SINGLE_SUFFIX = _re2_class(frozenset(_PUNCT + _QUOTES + "—–."))
#: The leading punctuation of a chunk, and the trailing punctuation read on the reversed chunk.
_PREFIX = r"^(?P<p>(?:\.\.+|US\$|C\$|A\$|[" + _SINGLE_PREFIX + r"]|\p{So})*)"
_SUFFIX_REVERSED = r"^(?P<s>(?:\.\.+|[sS]['’]|[" + _SINGLE_SUFFIX + r"]|\p{So})*)"
_SPLIT_PREFIX = (r"(?s)(\.\.+|US\$|C\$|A\$|.)", r"\1 ")
_SPLIT_SUFFIX = (r"(?s)(\.\.+|['’][sS]|.)", r"\1 ")
#: Emoticons that spaCy keeps whole although they are made of prefix/suffix characters.
_EMOTICONS = ("):", ":)", "8)", ":(", "(:", ":]", "[:", ":*", "=)", "(=", ";)", "(;", "''", "’’")


#: spaCy's English infixes (spacy/lang/en/punctuation.py) and URL_MATCH
#: (spacy/lang/tokenizer_exceptions.py), MIT licence, in Python ``re`` (they need lookarounds,
#: which RE2 lacks); run on the few chunks whose core can hold one (:func:`_split_infixes`).
@cache
def _python_patterns(split_hyphens: bool = True) -> tuple[re.Pattern, re.Pattern]:
    """``(infix, url)``, built on first use.  The letter classes hold the Basic Multilingual
    Plane only: Python ``re`` tests larger classes range by range, which is slow.
    ``split_hyphens=False``: without the dashes between letters (spaCy de, es, nl, ...)."""
    lower, upper = _letter_classes()
    letter = r"^\W\d_"
    quotes = re.escape(_QUOTES)
    # every branch starts with the infix itself (its context is looked behind and ahead), so
    # that re skips quickly to the few positions where one can be
    alnum = rf"(?:[{letter}]|[0-9])"
    infix = re.compile(
        r"\.\.+|…"
        r"|[+\-*^](?<=[0-9][+\-*^])(?=[0-9-])"
        rf"|\.(?<=[{lower}{quotes}]\.)(?=[{upper}{quotes}])"
        rf"|,(?<=[{letter}],)(?=[{letter}])"
        + (
            rf"|[-–—~](?<={alnum}[-–—~])(?=[{letter}])"
            rf"|(?:--|——)(?<={alnum}(?:--|——))(?=[{letter}])"
            rf"|---(?<={alnum}---)(?=[{letter}])"
            if split_hyphens
            else ""
        )
        + rf"|[:<>=/](?<={alnum}[:<>=/])(?=[{letter}])"
    )
    url = re.compile(
        # spaCy has (?:\S+(?::\S*)?@)? for the user: quadratic on long chunks with colons
        r"^(?:(?:[\w\+\-\.]{2,})://)?(?:[^\s@]+@)?(?:"
        r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
        r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"
        r"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}"
        r"(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
        r"|(?:(?:[A-Za-z0-9\u00a1-\uffff][A-Za-z0-9\u00a1-\uffff_-]{0,62})?[A-Za-z0-9\u00a1-\uffff]\.)+"
        rf"(?:[{lower}]{{2,63}}))(?::\d{{2,5}})?(?:[/?#]\S*)?$"
    )
    return infix, url


def _letter_classes() -> tuple[str, str]:
    """Python ``re`` class bodies of the lower-case and of the upper-case letters of the Basic
    Multilingual Plane, each with the letters without case (spaCy's ALPHA_LOWER, ALPHA_UPPER)."""
    lower, upper = [], []
    for code in range(0x10000):
        category = unicodedata.category(chr(code))
        if category in ("Ll", "Lo"):
            lower.append(code)
        if category in ("Lu", "Lo"):
            upper.append(code)
    return _ranges(lower), _ranges(upper)


def _ranges(codes: list[int]) -> str:
    parts, start = [], None
    for i, code in enumerate(codes):
        if start is None:
            start = code
        if i + 1 == len(codes) or codes[i + 1] != code + 1:
            parts.append(re.escape(chr(start)) + ("" if start == code else "-" + re.escape(chr(code))))
            start = None
    return "".join(parts)


#: One-word abbreviations ending in a period (spaCy's English tokenizer exceptions).
ABBREVIATIONS = frozenset(
    """a. b. c. d. e. f. g. h. i. j. k. l. m. n. o. p. q. r. s. t. u. v. w. x. y. z. ä. ö. ü.
    a.m. p.m. Mt. Ak. Ala. Apr. Ariz. Ark. Aug. Calif. Colo. Conn. Dec. Del. Feb. Fla. Ga. Ia. Id.
    Ill. Ind. Jan. Jul. Jun. Kan. Kans. Ky. La. Mar. Mass. Mich. Minn. Miss. N.C. N.D. N.H. N.J.
    N.M. N.Y. Neb. Nebr. Nev. Nov. Oct. Okla. Ore. Pa. S.C. Sep. Sept. Tenn. Va. Wash. Wis. Adm.
    Bros. co. Co. Corp. D.C. Dr. e.g. E.g. E.G. Gen. Gov. i.e. I.e. I.E. Inc. Jr. Ltd. Md. Messrs.
    Mo. Mont. Mr. Mrs. Ms. Ph.D. Prof. Rep. Rev. Sen. St. vs. v.s.""".split()
)

#: English contractions as spaCy's exceptions split them (spacy/lang/en/tokenizer_exceptions.py):
#: suffix -> the words it follows; each also lower/title case, with ' or ’ or no apostrophe.
_CONTRACTION_BASES = {
    "n't": "ai are ca could dare did do does had has have is may might must need ought sha should was "
    "were wo would",
    "'m": "i",
    "'ll": "i you he she it we they who what when where why how there that this these those",
    "'d": "i you he she it we they who what when where why how there that this these those",
    "'ve": "i you we they who what when where why how there these those could might must should would",
    "'re": "you we they who what when where why how there these those",
    "'s": "he she it who what when where why how there that this",
}
#: Words spaCy leaves whole although they read as a contraction without its apostrophe.
_NOT_CONTRACTIONS = frozenset("ill its hell shell shed were well whore".split())


def _contractions() -> dict[str, str]:
    """Contraction -> its words separated by a space (``don't`` -> ``do n't``)."""
    table = {}
    for suffix, bases in _CONTRACTION_BASES.items():
        for base in bases.split():
            for orth in (base, base.title()):
                for apostrophe in ("'", "’", ""):
                    tail = suffix.replace("'", apostrophe)
                    if apostrophe == "" and (base + tail) in _NOT_CONTRACTIONS:
                        continue
                    if apostrophe != "" and suffix == "'s":
                        continue  # the 's suffix rule splits these anyway
                    table[orth + tail] = f"{orth} {tail}"
    for word, split in (("cannot", "can not"), ("gonna", "gon na"), ("gotta", "got ta")):
        table[word] = split
        table[word.title()] = (
            split.title().replace(" Not", " not").replace(" Na", " na").replace(" Ta", " ta")
        )
    for hour in range(1, 13):
        for period in ("am", "pm", "a.m.", "p.m."):
            table[f"{hour}{period}"] = f"{hour} {period}"
    return table


_CONTRACTION_TABLE = _contractions()
_CONTRACTION_KEYS = pa.array(list(_CONTRACTION_TABLE), pa.large_string())
_CONTRACTION_WORDS = pa.array(list(_CONTRACTION_TABLE.values()), pa.large_string())
#: Words the infix rules leave whole (spaCy's exceptions): the abbreviations and ``and/or``.
_WHOLE_WORDS = pa.array(sorted(ABBREVIATIONS | {"and/or"}), pa.large_string())
_ABBREVIATIONS_ARRAY = pa.array(sorted(ABBREVIATIONS), pa.large_string())
#: Chunks that always take the full rules (spaCy's exceptions: contractions, abbreviations,
#: emoticons).
_SPECIAL_CHUNKS = pa.array(
    sorted(set(_CONTRACTION_TABLE) | ABBREVIATIONS | {"and/or"} | set(_EMOTICONS)), pa.large_string()
)


@dataclass(frozen=True)
class _Contractions:
    """The English contractions the rules split (``don't`` -> ``do`` ``n't``), or none: spaCy's
    other languages have no such exceptions (German ``im``, French ``dont`` stay whole); and
    whether a dash between letters is a word of its own (``well - known``)."""

    keys: pa.Array
    words: pa.Array
    special_chunks: pa.Array
    split_hyphens: bool = True


_ENGLISH = _Contractions(_CONTRACTION_KEYS, _CONTRACTION_WORDS, _SPECIAL_CHUNKS)
_NONE = _Contractions(
    pa.array([], pa.large_string()),
    pa.array([], pa.large_string()),
    pa.array(sorted(ABBREVIATIONS | {"and/or"} | set(_EMOTICONS)), pa.large_string()),
)
_NONE_KEEPING_HYPHENS = dataclasses.replace(_NONE, split_hyphens=False)
_UNIT_SUFFIX = (
    r"^(.*[0-9])("
    + "|".join(sorted((u.replace("/", r"/") for u in _UNITS), key=len, reverse=True))
    + r"|[+"
    + _re2_class(_CURRENCY_CHARS)
    + r"])$",
    r"\1 \2",
)


# --- scripts without spaces ---------------------------------------------------------------------

#: Language codes (lid.176 labels) of scripts written without spaces between words.
NO_SPACE_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "wuu", "yue", "dz"})
_NO_SPACE_CHARS = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}]"
#: Share of a text's characters in those scripts from which it counts as written without spaces.
NO_SPACE_SHARE = 0.3
_NO_SPACE_LANGUAGE_ARRAY = pa.array(sorted(NO_SPACE_LANGUAGES), pa.large_string())


def no_space_script(texts: pa.Array, languages: pa.Array | None = None) -> np.ndarray:
    """Per text: True when it is written in a script without spaces between words: its language
    code says so, or such characters are at least :data:`NO_SPACE_SHARE` of its characters."""
    texts = as_strings(texts)
    mask = np.zeros(len(texts), bool)
    some = np.flatnonzero(_matches(texts, _NO_SPACE_CHARS))
    if len(some):
        subset = texts.take(some)
        spaceless = pc.count_substring_regex(subset, _NO_SPACE_CHARS).to_numpy(zero_copy_only=False)
        length = pc.utf8_length(subset).to_numpy(zero_copy_only=False)
        mask[some] = spaceless >= NO_SPACE_SHARE * length
    if languages is not None:
        codes = pc.replace_substring_regex(
            pc.utf8_lower(pc.fill_null(as_strings(languages), "")), "[-_].*$", ""
        )
        mask |= _mask(pc.is_in(codes, value_set=_NO_SPACE_LANGUAGE_ARRAY))
    return mask


# --- splitting ------------------------------------------------------------------------------------

#: A chunk that is one word followed by one ASCII mark that always comes off (``word,`` ``2025:``),
#: or a lower-case word or a number followed by a period (``word.``, ``3.``; not an abbreviation).
#: Marks that come off the end of a word one by one when nothing else needs a rule.
_FINAL_MARKS = pa.array(list(",;:!?)]}\"'"), pa.large_string())
#: Brackets and quotes that open / close a wrapped word (``(word)``, ``"word",``).
_OPENING = "([{\"“‘'«"
_CLOSING = ")]}\"”’'»,;:!?"
_WRAPPED_EMOTICON = r"\):|''|’’|^\(8\)|\(:|\(=|\(;|\[:|:\]|;\)|=\)|:\)|:\(|:\*"
_DASHES = "-–—~"
_PREFIX_START = r"^(?:\.\.|US\$|C\$|A\$|[" + _SINGLE_PREFIX + r"]|\p{So})"
_SUFFIX_END = r"(?:[" + _SINGLE_SUFFIX + r"]|\p{So}|['’][sS])$"
#: A core that holds an infix (RE2, no captures: a cheap test before the Python rules), and
#: symbols (category So: ©, °, emoji), each a word of its own.
_INFIX = (
    r"\.\.+|…|[0-9][+\-*^][0-9\-]|[\p{Ll}\p{Lo}"
    + _re2_class(_QUOTES)
    + r"]\.[\p{Lu}\p{Lo}"
    + _re2_class(_QUOTES)
    + r"]|\pL,\pL|[\pL0-9](?:---|--|——|-|–|—|~)\pL|[\pL0-9][:<>=/]\pL"
)
#: The same without the dashes between letters (languages that keep ``Baden-Württemberg`` whole).
_INFIX_KEEPING_HYPHENS = _INFIX.replace(r"|[\pL0-9](?:---|--|——|-|–|—|~)\pL", "")
assert _INFIX_KEEPING_HYPHENS != _INFIX
_SYMBOL_SPLIT = (r"(\p{So})", r" \1 ")
_EMOTICON_CANDIDATE = r" [):(\[\]*=;'’8] [):(\[\]*=;'’] "


def _large(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())


def _mask(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)


def _matches(strings: pa.Array, pattern: str) -> np.ndarray:
    return _mask(pc.match_substring_regex(strings, pattern))


@dataclass(frozen=True)
class _Split:
    """The words of a set of strings: string ``i``'s words are
    ``words.take(index[offsets[i]:offsets[i + 1]])``."""

    words: pa.Array
    index: np.ndarray
    offsets: np.ndarray


def _whole(strings: pa.Array) -> _Split:
    """Every string is one word."""
    n = len(strings)
    return _Split(strings, np.arange(n, dtype=np.int64), np.arange(n + 1, dtype=np.int64))


def _through_distinct(strings: pa.Array, split: Callable[[pa.Array], _Split]) -> _Split:
    """``split`` run once per distinct string, its result shared by the copies."""
    encoded = pc.dictionary_encode(strings)
    ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    inner = split(encoded.dictionary.cast(pa.large_string()))
    counts = np.diff(inner.offsets)[ids]
    index = inner.index[ragged_index(inner.offsets[ids], counts)]
    return _Split(inner.words, index, np.concatenate(([0], np.cumsum(counts))))


def _by_kind(strings: pa.Array, kinds: list[tuple[np.ndarray, Callable[[pa.Array], _Split]]]) -> _Split:
    """Each string split by the function of the first kind whose mask holds it (the masks
    partition the strings)."""
    counts = np.zeros(len(strings), np.int64)
    parts = []
    for mask, split in kinds:
        where = np.flatnonzero(mask)
        if len(where):
            part = split(strings.take(where))
            counts[where] = np.diff(part.offsets)
            parts.append((where, part))
    offsets = np.concatenate(([0], np.cumsum(counts)))
    index = np.empty(int(offsets[-1]), np.int64)
    words, base = [], 0
    for where, part in parts:
        index[ragged_index(offsets[where], counts[where])] = part.index + base
        words.append(part.words)
        base += len(part.words)
    return _Split(pa.concat_arrays(words) if words else pa.array([], pa.large_string()), index, offsets)


def _split_pieces(pieces: pa.Array, c: _Contractions) -> _Split:
    """Distinct space-separated pieces; the few holding other whitespace (a tab, a no-break
    space) are cut there first."""
    spaced = _matches(pieces, WHITESPACE)
    return _by_kind(pieces, [(~spaced, partial(_split_chunks, c=c)), (spaced, partial(_split_spaced, c=c))])


def _split_spaced(pieces: pa.Array, c: _Contractions) -> _Split:
    chunks, offsets = split_whitespace(pieces)
    inner = _through_distinct(chunks, partial(_split_chunks, c=c))
    return _Split(inner.words, inner.index, inner.offsets[offsets])


def _split_chunks(chunks: pa.Array, c: _Contractions) -> _Split:
    """Distinct chunks (no whitespace), by shape: one word (letters or digits: the bulk), a word
    and one final mark, a hyphenated word, a word in brackets or quotes, or the full rules.  The
    shapes are read with string kernels, not regexes: a regex is compiled again on every call."""
    single = _letters_or_digits(chunks)
    special = _mask(pc.is_in(chunks, value_set=c.special_chunks))
    single &= ~special
    rest = ~single & ~special
    mark = _test_where(rest, partial(_word_and_mark, c=c), chunks)
    rest &= ~mark
    hyphenated = _test_where(rest, _hyphenated, chunks)
    rest &= ~hyphenated
    wrapped = _test_where(rest, partial(_wrapped, c=c), chunks)
    rules = rest & ~wrapped | special
    return _by_kind(
        chunks,
        [
            (single, _whole),
            (mark, _split_last_byte),
            (hyphenated, _split_hyphenated if c.split_hyphens else _whole),
            (wrapped, _split_wrapped),
            (rules, partial(_split_by_rules, c=c)),
        ],
    )


def _test_where(where: np.ndarray, test: Callable[[pa.Array], np.ndarray], chunks: pa.Array) -> np.ndarray:
    """``test`` (a per-string test) of the chunks where ``where`` holds, False elsewhere: each shape
    is read only on the chunks no earlier shape took."""
    out = np.zeros(len(chunks), bool)
    index = np.flatnonzero(where)
    if len(index):
        out[index] = test(chunks.take(pa.array(index)))
    return out


def _letters_or_digits(strings: pa.Array) -> np.ndarray:
    return _mask(pc.or_(pc.utf8_is_alpha(strings), pc.utf8_is_decimal(strings)))


def _word_and_mark(chunks: pa.Array, c: _Contractions) -> np.ndarray:
    """``word,`` ``2025:`` (a word and one final mark) or ``word.`` ``3.`` (a lower-case word or a
    number and a period, not an abbreviation); not a contraction (``dont,``)."""
    last = pc.utf8_slice_codeunits(chunks, -1)
    body = pc.utf8_slice_codeunits(chunks, 0, -1)
    plain = _letters_or_digits(body) & ~_mask(pc.is_in(body, value_set=c.keys))
    marked = _mask(pc.is_in(last, value_set=_FINAL_MARKS))
    period = _mask(pc.equal(last, "."))
    lower_end = _mask(pc.utf8_is_lower(pc.utf8_slice_codeunits(body, -1)))
    period &= (lower_end | _mask(pc.utf8_is_decimal(body))) & ~_mask(
        pc.is_in(chunks, value_set=_ABBREVIATIONS_ARRAY)
    )
    return plain & (marked | period)


def _hyphenated(chunks: pa.Array) -> np.ndarray:
    """Letters joined by single hyphens or dashes (``well-known``, ``a—b``, ``x~y``)."""
    joined = chunks
    for dash in _DASHES:
        joined = pc.replace_substring(joined, dash, "")
    has_dash = byte_lengths(joined) < byte_lengths(chunks)
    ends = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(chunks, 0, 1), pc.utf8_slice_codeunits(chunks, -1), _large("")
    )
    doubled = _matches(chunks, "[" + _DASHES + "]{2}")
    return has_dash & ~doubled & _mask(pc.utf8_is_alpha(joined)) & _mask(pc.utf8_is_alpha(ends))


def _split_hyphenated(chunks: pa.Array) -> _Split:
    spaced = chunks
    for dash in _DASHES:
        spaced = pc.replace_substring(spaced, dash, f" {dash} ")
    words, offsets = split_whitespace(spaced)
    return _Split(words.cast(pa.large_string()), np.arange(len(words), dtype=np.int64), offsets)


def _wrapped(chunks: pa.Array, c: _Contractions) -> np.ndarray:
    """A word or number in brackets or quotes, or with two or more closing marks (``(word)``,
    ``"word",``, ``word).``); not holding an emoticon (``(8)``, ``word):``) nor a contraction."""
    opened = pc.utf8_ltrim(chunks, characters=_OPENING)
    core = pc.utf8_rtrim(opened, characters=_CLOSING)
    opening = byte_lengths(chunks) - byte_lengths(opened)
    closing = byte_lengths(opened) - byte_lengths(core)
    out = (opening > 0) | (closing > 1)
    out &= _letters_or_digits(core) & ~_mask(pc.is_in(core, value_set=c.keys))
    if out.any():
        out[out] = ~_matches(chunks.filter(pa.array(out)), _WRAPPED_EMOTICON)
    return out


def _split_wrapped(chunks: pa.Array) -> _Split:
    """Every bracket, quote and mark is a word."""
    opened = pc.utf8_ltrim(chunks, characters=_OPENING)
    core = pc.utf8_rtrim(opened, characters=_CLOSING)
    zero = np.zeros(len(chunks), np.int64)
    pre = cut_bytes(chunks, zero, byte_lengths(opened))
    suf = cut_bytes(opened, byte_lengths(core), zero)
    spaced = pc.binary_join_element_wise(
        pc.replace_substring_regex(pre, "(.)", r"\1 "),
        core,
        pc.replace_substring_regex(suf, "(.)", r" \1"),
        _large(" "),
    )
    words, offsets = split_whitespace(spaced)
    return _Split(words.cast(pa.large_string()), np.arange(len(words), dtype=np.int64), offsets)


def _split_last_byte(chunks: pa.Array) -> _Split:
    """``word,`` -> ``word`` ``,`` (the mark is one ASCII byte)."""
    n = len(chunks)
    zero, one = np.zeros(n, np.int64), np.ones(n, np.int64)
    words = pa.concat_arrays(
        [cut_bytes(chunks, zero, one), cut_bytes(chunks, byte_lengths(chunks) - 1, zero)]
    )
    index = np.empty(2 * n, np.int64)
    index[0::2] = np.arange(n)
    index[1::2] = n + np.arange(n)
    return _Split(words, index, np.arange(0, 2 * n + 1, 2, dtype=np.int64))


def _on_subset(values: pa.Array, where: np.ndarray, transform: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``values`` with ``transform`` applied to the strings where ``where`` holds (only they are read)."""
    if not where.any():
        return values
    index = np.flatnonzero(where)
    changed = transform(values.take(index)).cast(values.type)
    take = np.arange(len(values), dtype=np.int64)
    take[index] = len(values) + np.arange(len(index))
    return pa.concat_arrays([values, changed]).take(take)


def _regex_passes(passes: Sequence[tuple[str, str]]) -> Callable[[pa.Array], pa.Array]:
    def transform(values: pa.Array) -> pa.Array:
        for pattern, replacement in passes:
            values = pc.replace_substring_regex(values, pattern, replacement)
        return values

    return transform


def _spaced(match: re.Match) -> str:
    return f" {match.group(0)} "


def _split_infixes(cores: pa.Array, split_hyphens: bool = True) -> pa.Array:
    """Spaces around spaCy's infixes, except in URLs and e-mail addresses (Python ``re``)."""
    infix, url = _python_patterns(split_hyphens)
    return pa.array(
        [core if "." in core and url.match(core) else infix.sub(_spaced, core) for core in cores.to_pylist()],
        pa.large_string(),
    )


def _join_emoticons(values: pa.Array) -> pa.Array:
    for face in _EMOTICONS:
        values = pc.replace_substring(values, f" {face[0]} {face[1]} ", f" {face} ")
    return values


def _split_by_rules(chunks: pa.Array, c: _Contractions) -> _Split:
    """The rules of the module docstring on chunks that need them (~a quarter of the distinct
    chunks); every regex runs only on the chunks it can change."""
    n = len(chunks)
    zero = np.zeros(n, np.int64)
    # leading and trailing punctuation (the suffix read on the reversed remainder)
    pre_bytes = zero.copy()
    starts = _matches(chunks, _PREFIX_START)
    if starts.any():
        pre = pc.struct_field(pc.extract_regex(chunks.filter(pa.array(starts)), _PREFIX), [0])
        pre_bytes[starts] = byte_lengths(pre)
    rest = cut_bytes(chunks, pre_bytes, zero)
    suf_bytes = zero.copy()
    ends = _matches(rest, _SUFFIX_END)
    if ends.any():
        reversed_rest = pc.utf8_reverse(rest.filter(pa.array(ends)))
        suf_bytes[ends] = byte_lengths(
            pc.struct_field(pc.extract_regex(reversed_rest, _SUFFIX_REVERSED), [0])
        )
    rest_bytes = byte_lengths(rest)
    pre = cut_bytes(chunks, zero, byte_lengths(chunks) - pre_bytes)
    core = cut_bytes(rest, zero, suf_bytes)
    suf = cut_bytes(rest, rest_bytes - suf_bytes, zero)
    # a final "." stays on the core after a lone capital (U.S., J.) or in an abbreviation (Mr., e.g.)
    dot = _mask(pc.starts_with(suf, "."))
    if dot.any():
        with_dot = pc.binary_join_element_wise(core, _large("."), _large(""))
        lone_capital = _mask(pc.utf8_is_upper(pc.utf8_slice_codeunits(core, -1))) & ~_mask(
            pc.utf8_is_upper(pc.utf8_slice_codeunits(core, -2, -1))
        )
        keep = dot & (lone_capital | _mask(pc.is_in(with_dot, value_set=_ABBREVIATIONS_ARRAY)))
        if keep.any():
            core = pc.if_else(pa.array(keep), with_dot, core)
            suf = cut_bytes(suf, keep.astype(np.int64), zero)
    # URLs, e-mail addresses and abbreviations stay whole; the rest is split at infixes
    protected = _mask(pc.is_in(core, value_set=_WHOLE_WORDS))
    symbol = ~protected & _matches(core, r"\p{So}")
    core = _on_subset(core, symbol, _regex_passes([_SYMBOL_SPLIT]))
    infix = ~protected & _matches(core, _INFIX if c.split_hyphens else _INFIX_KEEPING_HYPHENS)
    core = _on_subset(core, infix, partial(_split_infixes, split_hyphens=c.split_hyphens))
    number = ~protected & _matches(core, r"[0-9][^0-9 ]+$")
    core = _on_subset(core, number, _regex_passes([_UNIT_SUFFIX]))
    contraction = pc.index_in(core, value_set=c.keys)
    if contraction.null_count < len(contraction):
        core = pc.if_else(pc.is_valid(contraction), pc.take(c.words, contraction), core)
    pre = _on_subset(pre, _mask(pc.greater(pc.utf8_length(pre), 1)), _regex_passes([_SPLIT_PREFIX]))
    suf = _on_subset(suf, _mask(pc.greater(pc.utf8_length(suf), 1)), _regex_passes([_SPLIT_SUFFIX]))
    spaced = pc.binary_join_element_wise(
        _large(" "), pre, _large(" "), core, _large(" "), suf, _large(" "), _large("")
    )
    spaced = _on_subset(spaced, _matches(spaced, _EMOTICON_CANDIDATE), _join_emoticons)
    words, offsets = split_whitespace(spaced)
    return _Split(words.cast(pa.large_string()), np.arange(len(words), dtype=np.int64), offsets)


@dataclass(frozen=True)
class Words:
    """The words of a batch of texts, as flat arrays.

    ``ids[offsets[i]:offsets[i + 1]]`` are text ``i``'s words in order; equal words have equal
    ids within the batch and ``vocabulary[id]`` is the word.
    """

    offsets: np.ndarray  # int64, n_texts + 1
    ids: np.ndarray  # int64, one per word
    vocabulary: pa.Array  # the distinct words
    chunk_counts: np.ndarray  # int64, per text: whitespace-separated chunks (``len(text.split())``)

    @property
    def counts(self) -> np.ndarray:
        """Words per text."""
        return np.diff(self.offsets)

    @cached_property
    def doc(self) -> np.ndarray:
        """The text index of every word."""
        return np.repeat(np.arange(len(self.offsets) - 1), self.counts)

    @cached_property
    def vocabulary_lengths(self) -> np.ndarray:
        return pc.utf8_length(self.vocabulary).to_numpy(zero_copy_only=False).astype(np.int64)

    @cached_property
    def lengths(self) -> np.ndarray:
        """Characters of every word."""
        return self.vocabulary_lengths[self.ids]

    @cached_property
    def is_symbol(self) -> np.ndarray:
        """Per word: made only of :data:`PUNCTUATION` / :data:`TERMINAL_PUNCTUATION` characters."""
        return ~_matches(self.vocabulary, _NOT_SYMBOL)[self.ids]

    @cached_property
    def has_letter(self) -> np.ndarray:
        """Per word: holds a letter (``str.isalpha`` of one of its characters)."""
        return _matches(self.vocabulary, r"\pL")[self.ids]

    def vocabulary_index(self, words: Sequence[str]) -> np.ndarray:
        """Per word of the batch: its position in ``words``, or -1."""
        index = pc.index_in(self.vocabulary, value_set=pa.array(list(words), pa.large_string()))
        return pc.fill_null(index, -1).to_numpy(zero_copy_only=False).astype(np.int64)[self.ids]


def split_words(texts: Sequence[str] | pa.Array, english: bool = True, split_hyphens: bool = True) -> Words:
    """The words of every text of ``texts`` (strings, no nulls), by the rules of the module
    docstring, and how many whitespace-separated chunks each text has (``len(text.split())``).
    ``english=False``: without the English contractions (spaCy's other languages);
    ``split_hyphens=False``: a dash between letters stays inside the word (spaCy de, es, nl, ...)."""
    texts = as_strings(texts)
    pieces, text_offsets = split_on(texts, " ")
    encoded = pc.dictionary_encode(pieces)
    piece_ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    distinct = encoded.dictionary.cast(pa.large_string())
    rules = _ENGLISH if english else _NONE if split_hyphens else _NONE_KEEPING_HYPHENS
    inner = _split_pieces(distinct, rules)
    counts = np.diff(inner.offsets)[piece_ids]
    index = inner.index[ragged_index(inner.offsets[piece_ids], counts)]
    word_ends = np.concatenate(([0], np.cumsum(counts)))
    # chunks: a piece holds more than one where it has other whitespace (tab, no-break space)
    chunks = np.ones(len(distinct), np.int64)
    spaced = _matches(distinct, WHITESPACE)
    if spaced.any():
        chunks[spaced] = np.diff(split_whitespace(distinct.filter(pa.array(spaced)))[1])
    chunk_ends = np.concatenate(([0], np.cumsum(chunks[piece_ids])))
    vocabulary = pc.dictionary_encode(inner.words)
    word_ids = vocabulary.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return Words(
        offsets=word_ends[text_offsets],
        ids=word_ids[index],
        vocabulary=vocabulary.dictionary,
        chunk_counts=np.diff(chunk_ends[text_offsets]),
    )
