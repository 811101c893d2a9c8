"""Agreement of the ``fineweb2`` filters with datatrove's FineWeb-2 chain, per language, and cost.

    python benchmarks/multilingual_agreement.py [--docs 300] [--seed 26] [--batch 1000]
                                                [--examples 3] [--json FILE] [--refresh-web]

Peer: FineWeb-2's filtering step as ``fineweb-2-pipeline.py`` (huggingface/fineweb-2) builds it
from a language's ``configs/{key}.yml`` (read here from ``../shared/data/fineweb2-configs``):
``LambdaFilter(language_score >= config)``, ``GopherRepetitionFilter(language=key,
dup_para_frac=0, dup_line_char_frac=0, dup_para_char_frac=0, dup_line_frac, top_n_grams,
dup_n_grams)``, ``FineWebQualityFilter(language=key, short_line_thr=999,
char_duplicates_ratio=0.1, line_punct_thr, new_line_ratio)``, ``GopherQualityFilter(language=key,
max/min_avg_word_length, stop_words, max_non_alpha_words_ratio, min_stop_words=2)``, no C4; each
filter's ``filter(doc)`` called on datatrove ``Document`` objects, so the words are those of
datatrove's tokenizer for the key (spaCy, jieba, SudachiPy, pythainlp, Kiwi, IndicNLP).
Ours: ``apply_filters(texts, None, codes, scores, preset("fineweb2"))`` in batches.

Both sides get the same language code and score per document (``detect_language``, lid.176, run
once); datatrove runs the configuration of the code's key (:data:`LANGUAGES`), ours maps the code
itself (``text/codes.py``; a document whose profile is another key is a cause of its own).

Documents:

* ``udhr``: for each of the 20 languages, ``--docs`` documents made from the Universal Declaration
  of Human Rights (``../shared/data/udhr2``, public domain): a run of 5-40 lines, edited by one
  of :data:`VARIANTS` (repeated lines, repeated n-grams, stop words removed, punctuation removed,
  lists, bullets, ellipses, numbers, hashes, another language mixed in ...) so that every rule
  of the chain fires on some documents; in NFC; seeded, so the same on every run; shuffled, so
  that batches mix languages.
* ``web``: the ``ok`` texts of ``combined`` on the HTML records of ``../shared/warc/real`` and on
  ``../shared/data/scrapinghub``, those whose language is one of the 20 (cached in ``--web``).

A document whose detected language is not one of the 20 is left out (counted).

Printed: agreement (same keep/drop decision; same first failing filter; same first rule) per
language, per filter (each filter alone on every document), per source and kind of document;
documents kept on each side; the documents whose words are identical, and the words only one
side has, per language; how often each rule fired on each side; every disagreement classified
by cause (our profile is not the key; else the first filter whose verdicts differ, with
datatrove's filter run again on *our* words: when it then decides as ours, the cause is the
words, else the rule) with examples; CPU ms per document of both chains (``time.process_time``,
tokenizers and profiles loaded first) and of our ``fineweb2`` preset against our ``fineweb``
preset on English and multilingual texts (language score off on both, so every document reaches
the text filters).

Needs the ``bench`` extra (datatrove and its tokenizers; Kiwi needs ``kiwipiepy<0.22``, whose
model package still holds the ``sbg`` model datatrove asks for); datatrove is imported lazily,
so the document maker imports without it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf.corpus.quality.batch import apply_filters  # noqa: E402
from contentx_udf.corpus.quality.settings import ENGLISH_STOP_WORDS, Settings, apply_table, preset  # noqa: E402
from contentx_udf.text.language import detect_language  # noqa: E402
from contentx_udf.text.segment import segmenter_for, split_words_with  # noqa: E402

SHARED = REPO.parent / "shared"
UDHR = SHARED / "data" / "udhr2"
CONFIGS = SHARED / "data" / "fineweb2-configs"
WARCS = SHARED / "warc" / "real"
SCRAPINGHUB = SHARED / "data" / "scrapinghub"
CACHE = Path("/tmp/contentx-multilingual-agreement")

#: lid.176 code -> (UDHR translations, FineWeb-2 key).
LANGUAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "de": (("deu",), "deu_Latn"),
    "fr": (("fra",), "fra_Latn"),
    "es": (("spa",), "spa_Latn"),
    "it": (("ita",), "ita_Latn"),
    "pt": (("por_PT", "por_BR"), "por_Latn"),
    "nl": (("nld",), "nld_Latn"),
    "pl": (("pol",), "pol_Latn"),
    "ru": (("rus",), "rus_Cyrl"),
    "uk": (("ukr",), "ukr_Cyrl"),
    "cs": (("ces",), "ces_Latn"),
    "tr": (("tur",), "tur_Latn"),
    "ar": (("arb",), "arb_Arab"),
    "fa": (("pes_1", "pes_2"), "fas_Arab"),
    "hi": (("hin",), "hin_Deva"),
    "vi": (("vie",), "vie_Latn"),
    "id": (("ind",), "ind_Latn"),
    "zh": (("cmn_hans",), "cmn_Hani"),
    "ja": (("jpn",), "jpn_Jpan"),
    "ko": (("kor",), "kor_Hang"),
    "th": (("tha",), "tha_Thai"),
}
#: Languages written without spaces between words (edits cut them by characters).
UNSPACED = frozenset({"zh", "ja", "th"})
#: The filters of the chain, in FineWeb-2's order.
CHAIN = ("language_score", "gopher_repetition", "fineweb", "gopher_quality")
TEXT_FILTERS = CHAIN[1:]


# --- documents ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    source: str  # "udhr" or the WARC / data set name
    name: str  # "deu#17", a WARC offset, a page id
    variant: str  # the edit (udhr) or "web"
    text: str


@cache
def udhr_lines(stem: str) -> tuple[str, ...]:
    """The non-empty lines of a UDHR translation, stripped, in NFC (``vie`` and ``pes`` are
    partly decomposed; web text is composed, and datatrove's Vietnamese tokenizer would cut every
    combining mark off as a word)."""
    text = unicodedata.normalize("NFC", (UDHR / f"{stem}.txt").read_text(encoding="utf-8"))
    return tuple(line.strip() for line in text.splitlines() if line.strip())


@cache
def config(key: str) -> dict:
    import yaml

    return yaml.safe_load((CONFIGS / f"{key}.yml").read_text(encoding="utf-8"))


def run(rng: random.Random, lines: tuple[str, ...], low: int, high: int) -> list[str]:
    """``low``-``high`` consecutive lines from a random start (wrapping around)."""
    start, k = rng.randrange(len(lines)), rng.randint(low, high)
    return [lines[(start + j) % len(lines)] for j in range(k)]


def _tokens(line: str, unspaced: bool, rng: random.Random) -> list[str]:
    """A line's pieces: space-separated words, or chunks of 1-4 characters of an unspaced script
    (a combining mark stays with the character before it: Thai vowel and tone marks)."""
    if not unspaced:
        return line.split(" ")
    pieces, i = [], 0
    while i < len(line):
        end = min(len(line), i + rng.randint(1, 4))
        while end < len(line) and unicodedata.category(line[end]).startswith("M"):
            end += 1
        pieces.append(line[i:end])
        i = end
    return pieces


def _clusters(line: str) -> list[str]:
    """Each character with the combining marks after it."""
    out: list[str] = []
    for ch in line:
        if out and unicodedata.category(ch).startswith("M"):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _join(tokens: list[str], unspaced: bool) -> str:
    return ("" if unspaced else " ").join(tokens)


_END_PUNCT = ".!?。！？;:,\"'”»"


@dataclass
class Ctx:
    rng: random.Random
    code: str
    unspaced: bool
    other: tuple[str, ...]  # lines of another language (English, or Russian for English)

    def toks(self, line: str) -> list[str]:
        return _tokens(line, self.unspaced, self.rng)

    def join(self, tokens: list[str]) -> str:
        return _join(tokens, self.unspaced)


def _mixed_language(lines: list[str], c: Ctx) -> list[str]:
    foreign = run(c.rng, c.other, max(1, len(lines) // 3), max(2, 2 * len(lines)))
    out = lines + foreign
    c.rng.shuffle(out)
    return out


def _dup_lines(lines: list[str], c: Ctx) -> list[str]:
    out = list(lines)
    for line in c.rng.sample(lines, c.rng.randint(1, max(1, len(lines) // 2))):
        for _ in range(c.rng.randint(1, 3)):
            out.insert(c.rng.randrange(len(out) + 1), line)
    return out


def _dup_one_line(lines: list[str], c: Ctx) -> list[str]:
    out = list(lines)
    out.insert(c.rng.randrange(len(out) + 1), c.rng.choice(lines))
    return out


def _top_ngram(lines: list[str], c: Ctx) -> list[str]:
    tokens = c.toks(max(lines, key=len))
    i = c.rng.randrange(max(1, len(tokens) - 1))
    pair = c.join(tokens[i : i + 2])
    out = list(lines)
    out.insert(c.rng.randrange(len(out) + 1), " ".join([pair] * c.rng.randint(4, 40)) + ".")
    return out


def _dup_ngram(lines: list[str], c: Ctx) -> list[str]:
    tokens = c.toks(max(lines, key=len))
    k = min(len(tokens), c.rng.randint(6, 16))
    i = c.rng.randrange(max(1, len(tokens) - k + 1))
    span = tokens[i : i + k]
    out = list(lines)
    for _ in range(c.rng.randint(1, 5)):
        j = c.rng.randrange(len(out))
        target = c.toks(out[j])
        at = c.rng.randrange(len(target) + 1)
        out[j] = c.join(target[:at] + span + target[at:])
    return out


def _no_punct(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.6, 0.85, 1.0))
    return [line.rstrip(_END_PUNCT) if c.rng.random() < share else line for line in lines]


def _trailing_space(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.5, 0.9, 1.0))
    return [line + " " if c.rng.random() < share else line for line in lines]


def _as_list(lines: list[str], c: Ctx) -> list[str]:
    out = []
    for line in lines:
        tokens = c.toks(line)
        i = 0
        while i < len(tokens):
            k = c.rng.randint(1, 4 if not c.unspaced else 3)
            out.append(c.join(tokens[i : i + k]))
            i += k
    return out


def _no_stop_words(lines: list[str], c: Ctx) -> list[str]:
    stop = ENGLISH_STOP_WORDS if c.code == "en" else config(LANGUAGES[c.code][1])["stopwords"]
    keep = c.rng.choice((0.0, 0.0, 0.02, 0.1))
    out = []
    for line in lines:
        if c.unspaced:
            for word in stop:
                if c.rng.random() >= keep:
                    line = line.replace(word, "")
            out.append(line)
        else:
            out.append(" ".join(t for t in line.split(" ") if t not in stop or c.rng.random() < keep))
    return out


def _numbers(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.15, 0.25, 0.4, 0.6))
    out = []
    for line in lines:
        tokens = c.toks(line)
        out.append(
            " ".join(str(c.rng.randint(1, 99_999)) if c.rng.random() < share else t for t in tokens)
            if not c.unspaced
            else "".join(f" {c.rng.randint(1, 9999)} " if c.rng.random() < share else t for t in tokens)
        )
    return out


def _hashes(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.05, 0.12, 0.3))
    return [c.join(["#" + t if c.rng.random() < share else t for t in c.toks(line)]) for line in lines]


def _ellipsis(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.2, 0.4, 0.8))
    mark = c.rng.choice(("...", "…"))
    return [line.rstrip(_END_PUNCT) + mark if c.rng.random() < share else line for line in lines]


def _bullets(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.8, 0.95, 1.0))
    mark = c.rng.choice(("• ", "- ", "-", "•"))
    return [mark + line if c.rng.random() < share else line for line in lines]


def _long_words(lines: list[str], c: Ctx) -> list[str]:
    group = c.rng.randint(2, 5)
    out = []
    for line in lines:
        tokens = line.split(" ")
        out.append(" ".join("".join(tokens[i : i + group]) for i in range(0, len(tokens), group)))
    return out


def _short_words(lines: list[str], c: Ctx) -> list[str]:
    share = c.rng.choice((0.3, 0.6, 0.9))
    if c.unspaced:
        return [" ".join(_clusters(line)) if c.rng.random() < share else line for line in lines]
    return [
        " ".join(t[: c.rng.randint(1, 2)] if c.rng.random() < share else t for t in line.split(" "))
        for line in lines
    ]


Edit = Callable[[list[str], Ctx], list[str]]
#: name -> (weight, edit or None, lines of the run); "blank_lines" joins lines with blank lines.
VARIANTS: dict[str, tuple[int, Edit | None, tuple[int, int]]] = {
    "clean": (28, None, (5, 40)),
    "short": (5, None, (1, 3)),
    "mixed_language": (6, _mixed_language, (5, 20)),
    "dup_lines": (6, _dup_lines, (5, 30)),
    "dup_one_line": (5, _dup_one_line, (5, 40)),
    "top_ngram": (5, _top_ngram, (5, 25)),
    "dup_ngram": (5, _dup_ngram, (5, 30)),
    "no_punct": (6, _no_punct, (5, 40)),
    "trailing_space": (3, _trailing_space, (5, 40)),
    "list": (5, _as_list, (3, 12)),
    "blank_lines": (3, None, (5, 40)),
    "no_stop_words": (7, _no_stop_words, (5, 25)),
    "numbers": (4, _numbers, (5, 30)),
    "hashes": (3, _hashes, (5, 30)),
    "ellipsis": (4, _ellipsis, (5, 30)),
    "bullets": (3, _bullets, (5, 30)),
    "long_words": (3, _long_words, (5, 30)),
    "short_words": (3, _short_words, (5, 30)),
    "two_edits": (5, None, (5, 40)),
}
_EDITS = [name for name, (_, edit, _) in VARIANTS.items() if edit is not None]


def make_documents(code: str, n: int, seed: int, stems: tuple[str, ...] | None = None) -> list[Doc]:
    """``n`` documents of language ``code`` from its UDHR translations (deterministic per seed)."""
    stems = stems or LANGUAGES[code][0]
    rng = random.Random(f"{seed}:{code}")
    other = udhr_lines("rus" if code == "en" else "eng")
    ctx = Ctx(rng, code, code in UNSPACED, other)
    names = list(VARIANTS)
    weights = [VARIANTS[v][0] for v in names]
    docs = []
    for i in range(n):
        stem = stems[i % len(stems)]
        variant = rng.choices(names, weights)[0]
        _, edit, (low, high) = VARIANTS[variant]
        lines = run(rng, udhr_lines(stem), low, high)
        if variant == "two_edits":
            for name in rng.sample(_EDITS, 2):
                lines = VARIANTS[name][1](lines, ctx) or lines
        elif edit is not None and not (variant == "long_words" and ctx.unspaced):
            lines = edit(lines, ctx) or lines
        text = ("\n\n" if variant == "blank_lines" else "\n").join(lines)
        docs.append(Doc("udhr", f"{stem}#{i}", variant, text))
    return docs


def web_documents(path: Path, refresh: bool) -> list[Doc]:
    """The ``ok`` texts of the default method on the shared WARCs' HTML records and on
    scrapinghub (cached in ``path``)."""
    if path.exists() and not refresh:
        table = pq.read_table(path)
        return [
            Doc(*row) for row in zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True)
        ]
    from contentx_udf import extract
    from contentx_udf.warc.reader import iter_warc_rows

    docs = []
    for warc in sorted(WARCS.glob("*.warc*")):
        if warc.name.endswith((".wat.gz", ".wet.gz")):
            continue
        if warc.suffix == ".warc" and warc.with_name(warc.name + ".gz").exists():
            continue
        for row in iter_warc_rows(str(warc)):
            if row.status != "ok" or not row.is_html:
                continue
            result = extract(row.payload, url=row.url, content_type=row.http_content_type)
            if result.status == "ok" and result.text:
                docs.append(Doc(warc.name, str(row.warc_record_offset), "web", result.text))
    truth = json.loads((SCRAPINGHUB / "ground-truth.json").read_text())
    for page, meta in sorted(truth.items()):
        html = SCRAPINGHUB / "html" / f"{page}.html.gz"
        if html.exists():
            result = extract(gzip.open(html).read(), url=meta.get("url"))
            if result.status == "ok" and result.text:
                docs.append(Doc("scrapinghub", page[:12], "web", result.text))
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ("source", "name", "variant", "text")
    pq.write_table(pa.table({c: [getattr(d, c) for d in docs] for c in columns}), path)
    return docs


# --- datatrove ------------------------------------------------------------------------------------------


def _above(doc, threshold: float) -> bool:
    return doc.metadata["language_score"] >= threshold


def datatrove_chain(key: str, language=None) -> dict:
    """FineWeb-2's filters for ``key`` as ``fineweb-2-pipeline.py`` builds them (``language``:
    another word tokenizer, for the diagnosis)."""
    from datatrove.pipeline.filters import (
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        LambdaFilter,
    )

    cfg = config(key)
    language = key if language is None else language
    return {
        "language_score": LambdaFilter(filter_function=partial(_above, threshold=cfg["language_score"])),
        "gopher_repetition": GopherRepetitionFilter(
            language=language,
            dup_para_frac=0,
            dup_line_char_frac=0,
            dup_para_char_frac=0,
            dup_line_frac=cfg["dup_line_frac"],
            top_n_grams=cfg["top_n_grams"],
            dup_n_grams=cfg["dup_n_grams"],
        ),
        "fineweb": FineWebQualityFilter(
            language=language,
            short_line_thr=999,
            char_duplicates_ratio=0.1,
            line_punct_thr=cfg["line_punct_thr"],
            new_line_ratio=cfg["new_line_ratio"],
        ),
        "gopher_quality": GopherQualityFilter(
            language=language,
            max_avg_word_length=cfg["max_avg_word_length"],
            min_avg_word_length=cfg["min_avg_word_length"],
            stop_words=cfg["stopwords"],
            max_non_alpha_words_ratio=cfg["max_non_alpha_words_ratio"],
            min_stop_words=2,
        ),
    }


#: datatrove's reasons -> our rule names.
DT_RULES = {
    "dup_line_frac": "gopher_repetition.dup_line_frac",
    "line_punct_ratio": "fineweb.min_line_punct_ratio",
    "short_line_ratio": "fineweb.max_short_line_ratio",
    "char_dup_ratio": "fineweb.max_dup_line_char_ratio",
    "list_ratio": "fineweb.max_newline_word_ratio",
    "gopher_short_doc": "gopher_quality.min_words",
    "gopher_long_doc": "gopher_quality.max_words",
    "gopher_below_avg_threshold": "gopher_quality.min_mean_word_length",
    "gopher_above_avg_threshold": "gopher_quality.max_mean_word_length",
    "gopher_too_many_hashes": "gopher_quality.max_hash_word_ratio",
    "gopher_too_many_ellipsis": "gopher_quality.max_ellipsis_word_ratio",
    "gopher_too_many_bullets": "gopher_quality.max_bullet_lines_ratio",
    "gopher_too_many_end_ellipsis": "gopher_quality.max_ellipsis_lines_ratio",
    "gopher_below_alpha_threshold": "gopher_quality.min_alpha_words_ratio",
    "gopher_enough_stop_words": "gopher_quality.min_stop_words",
}


def dt_rule(filter_name: str, verdict) -> str | None:
    """Our name of a datatrove verdict (None: kept)."""
    if verdict is True:
        return None
    if filter_name == "language_score":
        return "language_score.min_language_score"
    reason = verdict[1] if isinstance(verdict, tuple) else "?"
    if reason in DT_RULES:
        return DT_RULES[reason]
    if reason == "empty":
        return f"{filter_name}.empty"
    match = re.fullmatch(r"top_(\d+)_gram|duplicated_(\d+)_n_grams", reason)
    if match:
        top, dup = match.groups()
        return f"gopher_repetition.top_{top}_gram_frac" if top else f"gopher_repetition.dup_{dup}_gram_frac"
    return f"{filter_name}.{reason}"


def run_datatrove(texts: list[str], keys: list[str], scores: list[float]):
    """Every filter's verdict per document (our rule names, None = kept), the words of every
    document, and the CPU ms of the chain per document (stopping at the first drop, as the
    pipeline does)."""
    from datatrove.data import Document
    from datatrove.utils.text import split_into_words
    from datatrove.utils.word_tokenizers import load_word_tokenizer

    chains = {key: datatrove_chain(key) for key in sorted(set(keys))}
    for key in chains:  # load every tokenizer (and its dictionaries) before timing
        load_word_tokenizer(key).word_tokenize(texts[keys.index(key)])
    verdicts = {name: [None] * len(texts) for name in CHAIN}
    words = [None] * len(texts)
    spent = np.zeros(len(texts))
    for i, (text, key, score) in enumerate(zip(texts, keys, scores, strict=True)):
        chain = chains[key]
        started = time.process_time()
        doc = Document(text=text, id=str(i), metadata={"language_score": score})
        stop = len(CHAIN)
        for j, name in enumerate(CHAIN):
            rule = dt_rule(name, chain[name].filter(doc))
            verdicts[name][i] = rule
            if rule is not None:
                stop = j
                break
        spent[i] = time.process_time() - started
        for name in CHAIN[stop + 1 :]:  # the other filters alone (not timed)
            verdicts[name][i] = dt_rule(name, chain[name].filter(Document(text=text, id=str(i))))
        words[i] = split_into_words(text, key)  # cached by datatrove when a filter cut them
    return verdicts, words, spent * 1000


def our_words(text: str, key: str) -> list[str]:
    """Our words of a text for ``key`` (line by line, as the filters cut them)."""
    words = split_words_with(pa.array(text.split("\n"), pa.large_string()), segmenter_for(key))
    vocabulary = words.vocabulary.to_pylist()
    return [vocabulary[i] for i in words.ids.tolist()]


def our_words_all(texts: list[str], keys: list[str]) -> list[list[str]]:
    """Our words of every text (each language's texts split in one call)."""
    out: list[list[str]] = [[] for _ in texts]
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        by_key[key].append(i)
    for key, members in by_key.items():
        lines = [text.split("\n") for text in (texts[i] for i in members)]
        words = split_words_with(
            pa.array([x for ls in lines for x in ls], pa.large_string()), segmenter_for(key)
        )
        vocabulary = words.vocabulary.to_pylist()
        line = 0
        for i, ls in zip(members, lines, strict=True):
            start, end = words.offsets[line], words.offsets[line + len(ls)]
            out[i] = [vocabulary[j] for j in words.ids[start:end].tolist()]
            line += len(ls)
    return out


def datatrove_with_our_words(text: str, key: str, filter_name: str, score: float) -> str | None:
    """datatrove's filter ``filter_name`` of ``key`` on ``text`` with our words instead of its
    tokenizer's (the diagnosis of a disagreement)."""
    from datatrove.data import Document
    from datatrove.utils.word_tokenizers import WordTokenizer

    class Ours(WordTokenizer):
        def word_tokenize(self, text: str) -> list[str]:
            return our_words(text, key)

        def sent_tokenize(self, text: str) -> list[str]:
            return [text]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return [(0, len(text))]

    chain = datatrove_chain(key, language=Ours())
    doc = Document(text=text, id="diagnosis", metadata={"language_score": score})
    return dt_rule(filter_name, chain[filter_name].filter(doc))


def datatrove_words(text: str, key: str) -> list[str]:
    from datatrove.utils.text import split_into_words

    return split_into_words(text, key)


# --- ours -----------------------------------------------------------------------------------------------


def with_table(name: str, table: dict) -> Settings:
    return apply_table(preset(name), table, "multilingual_agreement")


def only(filter_name: str) -> Settings:
    """The fineweb2 preset with one text filter on (language score off)."""
    table: dict = {"min_language_score": False}
    for other in TEXT_FILTERS:
        if other != filter_name:
            table[other] = {"enabled": False}
    return with_table("fineweb2", table)


def run_ours(texts: pa.Array, codes: pa.Array, scores: pa.Array, settings: Settings, batch: int):
    """Per document: the first rule failed (None = kept) and profile; CPU ms per document."""
    apply_filters(texts[:batch], None, codes[:batch], scores[:batch], settings)  # warm-up: profiles, ICU
    rules, profiles = [], []
    started = time.process_time()
    for i in range(0, len(texts), batch):
        out = apply_filters(texts[i : i + batch], None, codes[i : i + batch], scores[i : i + batch], settings)
        rules += out.rule.to_pylist()
        profiles += out.profile.to_pylist()
    ms = (time.process_time() - started) * 1000 / max(len(texts), 1)
    return rules, profiles, ms


# --- report ---------------------------------------------------------------------------------------------


def first_of(verdicts: dict[str, list], i: int) -> str | None:
    """The first rule of the chain a document fails (from every filter's verdict)."""
    return next((verdicts[name][i] for name in CHAIN if verdicts[name][i] is not None), None)


def filter_of(rule: str | None) -> str:
    return "keep" if rule is None else rule.split(".")[0]


def pct(x: float) -> str:
    return f"{100 * x:6.2f}"


def table(title: str, rows: list[tuple], header: tuple) -> None:
    print(f"\n## {title}")
    widths = [max(len(str(r[j])) for r in [header, *rows]) for j in range(len(header))]
    for row in [header, *rows]:
        print(
            "  ".join(
                str(v).rjust(w) if j else str(v).ljust(w)
                for j, (v, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def word_diff(ours: list[str], theirs: list[str]) -> str:
    diff = Counter(ours)
    diff.subtract(Counter(theirs))
    extra = [w for w, c in diff.most_common() if c > 0][:4]
    missing = [w for w, c in sorted(diff.items(), key=lambda x: x[1]) if c < 0][:4]
    return f"words ours {len(ours)} / datatrove {len(theirs)}; ours only {extra}, datatrove only {missing}"


def diagnose(
    i: int, doc: Doc, code: str, key: str, profile: str, score: float, ours: dict, theirs: dict
) -> tuple[str, str]:
    """(cause, detail) of a disagreement on document ``i``: our profile is not the language's
    key; or the first filter of the chain whose verdicts (each filter alone) differ, and whether
    datatrove's filter agrees with ours when given our words."""
    if profile != key:
        return (
            f"profile: ours {profile} for the code {code!r} (dominant script), datatrove {key}",
            f"ours {first_of(ours, i)}, datatrove {first_of(theirs, i)}",
        )
    culprit = next((f for f in CHAIN if ours[f][i] != theirs[f][i]), None)
    if culprit is None:
        return "order: same verdicts per filter, different chain", ""
    our_rule, their_rule = ours[culprit][i] or "keep", theirs[culprit][i] or "keep"
    if culprit == "language_score":
        return "language_score: threshold", f"score {score}, threshold {config(key)['language_score']}"
    with_ours = datatrove_with_our_words(doc.text, key, culprit, score) or "keep"
    ow, dw = our_words(doc.text, key), datatrove_words(doc.text, key)
    if with_ours == our_rule and ow != dw:
        kind = "words (segmenter)"
        detail = word_diff(ow, dw)
        if "min_stop_words" in (our_rule, their_rule) or their_rule.endswith("min_stop_words"):
            stop = set(config(key)["stopwords"])
            detail = (
                f"stop words found: ours {sorted(stop & set(ow))}, datatrove {sorted(stop & set(dw))}; "
                + detail
            )
    else:
        kind = "rule (same decision not reached with our words)" if ow != dw else "rule (same words)"
        detail = f"datatrove with our words: {with_ours}; " + word_diff(ow, dw)
    return f"{culprit}: {kind}: ours {our_rule} / datatrove {their_rule}", detail


@dataclass
class Comparison:
    """Both sides' verdicts on the same documents (index ``i`` everywhere)."""

    docs: list[Doc]
    codes: list[str]
    scores: list[float]
    keys: list[str]  # the benchmark's FineWeb-2 key (datatrove's configuration and tokenizer)
    profiles: list[str]  # the profile our filters used
    ours: dict[str, list]  # filter -> rule per document, each filter alone (None: passed)
    theirs: dict[str, list]
    our_first: list[str | None]  # the first rule failed in the chain (None: kept)
    dt_first: list[str | None]
    our_words: list[list[str]]
    dt_words: list[list[str]]
    our_ms: float
    dt_ms: np.ndarray

    def __post_init__(self) -> None:
        self.n = len(self.docs)
        self.texts = [d.text for d in self.docs]
        self.kept_o = np.array([r is None for r in self.our_first])
        self.kept_t = np.array([r is None for r in self.dt_first])
        self.same_decision = self.kept_o == self.kept_t
        pairs = list(zip(self.our_first, self.dt_first, strict=True))
        self.same_filter = np.array([filter_of(a) == filter_of(b) for a, b in pairs])
        self.same_rule = np.array([a == b for a, b in pairs])
        self.same_words = np.array([a == b for a, b in zip(self.our_words, self.dt_words, strict=True)])
        self.n_words_o = np.array([len(w) for w in self.our_words])
        self.n_words_t = np.array([len(w) for w in self.dt_words])

    def arrays(self, mask: np.ndarray | None = None) -> tuple[pa.Array, pa.Array, pa.Array]:
        texts, codes, scores = (
            pa.array(self.texts, pa.large_string()),
            pa.array(self.codes),
            pa.array(self.scores),
        )
        if mask is None:
            return texts, codes, scores
        sel = pa.array(mask)
        return texts.filter(sel), codes.filter(sel), scores.filter(sel)


def select_documents(docs: list[Doc], web: list[Doc], wanted: list[str]):
    """The documents whose detected language is one of ``wanted``, with their code and score;
    and what was left out (printed)."""
    detected = [detect_language(d.text) for d in docs + web]
    chosen = [
        (d, code, float(score))
        for d, (code, score) in zip(docs + web, detected, strict=True)
        if code in wanted
    ]
    outside = Counter(
        (d.source == "udhr", code)
        for d, (code, _) in zip(docs + web, detected, strict=True)
        if code not in wanted
    )
    udhr_outside = sum(v for (is_udhr, _), v in outside.items() if is_udhr)
    n_web = sum(d.source != "udhr" for d, _, _ in chosen)
    print(
        f"documents: {len(chosen)} ({len(chosen) - n_web} UDHR, {n_web} web of {len(web)} extracted); "
        f"left out, detected outside the {len(wanted)} languages: {udhr_outside} UDHR "
        f"({', '.join(f'{c}:{v}' for (u, c), v in outside.most_common(8) if u)}), "
        f"{sum(outside.values()) - udhr_outside} web"
    )
    english_web = [d for d, (code, _) in zip(web, detected[len(docs) :], strict=True) if code == "en"]
    return chosen, english_web


def compare(chosen: list[tuple[Doc, str, float]], batch: int) -> Comparison:
    """Run both sides on the chosen documents."""
    from importlib.metadata import version

    docs = [d for d, _, _ in chosen]
    codes = [c for _, c, _ in chosen]
    scores = [s for _, _, s in chosen]
    keys = [LANGUAGES[c][1] for c in codes]
    texts = [d.text for d in docs]
    print(
        f"datatrove {version('datatrove')}; running FineWeb-2's chain on {len(docs)} documents ...",
        flush=True,
    )
    started = time.time()
    theirs, dt_words, dt_ms = run_datatrove(texts, keys, scores)
    print(f"  datatrove done in {time.time() - started:.0f} s", flush=True)

    t_arr, c_arr, s_arr = pa.array(texts, pa.large_string()), pa.array(codes), pa.array(scores)
    chain_rules, profiles, our_ms = run_ours(t_arr, c_arr, s_arr, preset("fineweb2"), batch)
    ours = {"language_score": [r if r == "language_score.min_language_score" else None for r in chain_rules]}
    for name in TEXT_FILTERS:
        ours[name] = run_ours(t_arr, c_arr, s_arr, only(name), batch)[0]
    wrong = Counter((k, p) for k, p in zip(keys, profiles, strict=True) if k != p)
    if wrong:
        print(
            f"note: our profile is not the language's key for {sum(wrong.values())} documents: {dict(wrong)}"
        )
    return Comparison(
        docs=docs,
        codes=codes,
        scores=scores,
        keys=keys,
        profiles=profiles,
        ours=ours,
        theirs=theirs,
        our_first=chain_rules,
        dt_first=[first_of(theirs, i) for i in range(len(docs))],
        our_words=our_words_all(texts, keys),
        dt_words=dt_words,
        our_ms=our_ms,
        dt_ms=dt_ms,
    )


def report_languages(c: Comparison, wanted: list[str], batch: int) -> dict:
    out, rows = {}, []
    code_arr = np.array(c.codes)
    for code in [*wanted, "all"]:
        m = np.ones(c.n, bool) if code == "all" else code_arr == code
        if not m.any():
            continue
        # ours per language: its documents alone, in their own batches
        ms = c.our_ms if code == "all" else run_ours(*c.arrays(m), preset("fineweb2"), batch)[2]
        r = out[code] = {
            "docs": int(m.sum()),
            "decision": float(c.same_decision[m].mean()),
            "first_filter": float(c.same_filter[m].mean()),
            "first_rule": float(c.same_rule[m].mean()),
            "kept_ours": int(c.kept_o[m].sum()),
            "kept_datatrove": int(c.kept_t[m].sum()),
            "datatrove_ms": float(c.dt_ms[m].mean()),
            "ours_ms": ms,
            "same_words": float(c.same_words[m].mean()),
            "words_ratio": float(c.n_words_o[m].sum() / max(c.n_words_t[m].sum(), 1)),
        }
        rows.append(
            (
                code if code == "all" else f"{code} {LANGUAGES[code][1]}",
                r["docs"],
                pct(r["decision"]),
                pct(r["first_filter"]),
                pct(r["first_rule"]),
                r["kept_ours"],
                r["kept_datatrove"],
                f"{r['datatrove_ms']:.2f}",
                f"{ms:.3f}",
                f"{r['datatrove_ms'] / ms:.0f}x",
                pct(r["same_words"]),
                f"{r['words_ratio']:.3f}",
            )
        )
    header = ("language", "docs", "decision%", "filter%", "rule%", "kept ours", "kept dt")
    header += ("dt ms", "ours ms", "dt/ours", "same words%", "words ours/dt")
    table(
        "Agreement per language (decision: same keep/drop; filter / rule: same first failure; CPU ms per "
        "document; documents whose words are identical; words ours / datatrove's)",
        rows,
        header,
    )
    return out


def report_words(c: Comparison, wanted: list[str]) -> dict:
    """Per language: the words found by one side only, most frequent first (over all documents)."""
    print(
        "\n## Words one side only has, per language (count over all documents; the segmenters' differences)"
    )
    out = {}
    for code in wanted:
        diff: Counter = Counter()
        for i in (i for i, k in enumerate(c.codes) if k == code):
            diff.update(c.our_words[i])
            diff.subtract(c.dt_words[i])
        ours_only = [(w, k) for w, k in diff.most_common() if k > 0][:6]
        theirs_only = sorted(((w, -k) for w, k in diff.items() if k < 0), key=lambda x: -x[1])[:6]
        out[code] = {"ours_only": ours_only, "datatrove_only": theirs_only}
        if ours_only or theirs_only:
            print(f"{code}: ours {' '.join(f'{w!r}:{k}' for w, k in ours_only)}")
            print(f"    datatrove {' '.join(f'{w!r}:{k}' for w, k in theirs_only)}")
    return out


def report_groups(c: Comparison) -> None:
    """Agreement per source and per kind of document."""
    rows = []
    sources = np.array(["udhr" if d.source == "udhr" else "web" for d in c.docs])
    for source in ("udhr", "web"):
        m = sources == source
        if m.any():
            rows.append(
                (
                    source,
                    int(m.sum()),
                    pct(c.same_decision[m].mean()),
                    pct(c.same_filter[m].mean()),
                    int(c.kept_o[m].sum()),
                    int(c.kept_t[m].sum()),
                )
            )
    table("Agreement per source", rows, ("source", "docs", "decision%", "filter%", "kept ours", "kept dt"))
    rows = []
    variants = np.array([d.variant for d in c.docs])
    for variant in [*VARIANTS, "web"]:
        m = variants == variant
        if m.any():
            top = Counter(c.dt_first[i] or "keep" for i in np.flatnonzero(m)).most_common(2)
            rows.append(
                (
                    variant,
                    int(m.sum()),
                    pct(c.same_decision[m].mean()),
                    int(c.kept_o[m].sum()),
                    int(c.kept_t[m].sum()),
                    ", ".join(f"{r} {k}" for r, k in top),
                )
            )
    table(
        "Per document kind",
        rows,
        ("kind", "docs", "decision%", "kept ours", "kept dt", "datatrove's top verdicts"),
    )


def report_filters(c: Comparison) -> tuple[dict, dict]:
    """Agreement per filter (each alone) and how often each rule fired on each side."""
    filters, rows = {}, []
    for name in CHAIN:
        o = np.array([r is None for r in c.ours[name]])
        t = np.array([r is None for r in c.theirs[name]])
        filters[name] = {
            "agree": float((o == t).mean()),
            "drop_ours": int((~o).sum()),
            "drop_datatrove": int((~t).sum()),
        }
        rows.append((name, c.n, pct((o == t).mean()), int((~o).sum()), int((~t).sum()), int((o != t).sum())))
    table(
        "Agreement per filter (each filter alone on every document)",
        rows,
        ("filter", "docs", "agree%", "drop ours", "drop dt", "differ"),
    )
    first_o, first_t = Counter(c.our_first), Counter(c.dt_first)
    alone_o = Counter(r for name in CHAIN for r in c.ours[name] if r)
    alone_t = Counter(r for name in CHAIN for r in c.theirs[name] if r)
    rules, rows = {}, []
    for rule in sorted((set(alone_o) | set(alone_t) | set(first_o) | set(first_t)) - {None}):
        both = sum(1 for a, b in zip(c.our_first, c.dt_first, strict=True) if a == b == rule)
        rules[rule] = {
            "first_ours": first_o[rule],
            "first_datatrove": first_t[rule],
            "first_both": both,
            "alone_ours": alone_o[rule],
            "alone_datatrove": alone_t[rule],
        }
        rows.append((rule, first_o[rule], first_t[rule], both, alone_o[rule], alone_t[rule]))
    table(
        "Rules fired (first failure in the chain; fired with each filter alone)",
        rows,
        ("rule", "first ours", "first dt", "first both", "alone ours", "alone dt"),
    )
    return filters, rules


def report_causes(c: Comparison, examples: int) -> dict:
    """Every document whose decision or first failing filter differs, grouped by cause."""
    differ = np.flatnonzero(~c.same_decision | ~c.same_filter)
    causes: dict[str, list] = defaultdict(list)
    for i in differ.tolist():
        cause, detail = diagnose(
            i, c.docs[i], c.codes[i], c.keys[i], c.profiles[i], c.scores[i], c.ours, c.theirs
        )
        causes[cause].append((i, detail))
    print(f"\n## Disagreements by cause ({len(differ)} documents differ in decision or first filter)")
    out = {}
    for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        langs = Counter(c.codes[i] for i, _ in items)
        decisions = sum(1 for i, _ in items if not c.same_decision[i])
        print(f"\n{len(items):4d} ({decisions} decisions) {cause}")
        print(f"      languages: {', '.join(f'{k} {v}' for k, v in langs.most_common())}")
        shown = []
        for i, detail in items[:examples]:
            d = c.docs[i]
            print(
                f"    - {d.source}/{d.name} [{c.codes[i]}, {d.variant}] "
                f"ours {c.our_first[i]}, datatrove {c.dt_first[i]}"
            )
            print(f"        {detail[:400]}")
            print(f"        text: {d.text[:100].replace(chr(10), ' | ')}")
            shown.append(
                {
                    "doc": f"{d.source}/{d.name}",
                    "language": c.codes[i],
                    "variant": d.variant,
                    "ours": c.our_first[i],
                    "datatrove": c.dt_first[i],
                    "detail": detail,
                }
            )
        out[cause] = {
            "count": len(items),
            "decisions": decisions,
            "languages": dict(langs),
            "examples": shown,
        }
    return out


def report_cost(c: Comparison, english: list[str], batch: int) -> dict:
    """Both chains' CPU ms per document, and our fineweb2 preset against our fineweb preset."""
    dt_mean = float(c.dt_ms.mean())
    length = int(np.mean([len(t) for t in c.texts]))
    print(f"\n## Cost, CPU ms per document ({c.n} documents, mean {length} characters)")
    print(f"contentx apply_filters, fineweb2 preset (batches of {batch}): {c.our_ms:.3f}")
    print(f"datatrove FineWeb-2 chain, one document at a time:          {dt_mean:.3f}")
    print(f"datatrove / ours: {dt_mean / c.our_ms:.1f}x")
    out = {"ours_ms": c.our_ms, "datatrove_ms": dt_mean, "ratio": dt_mean / c.our_ms, "presets": {}}
    detected = [detect_language(t) for t in english]
    sets = (
        (
            f"English ({len(english)})",
            english,
            [k or "en" for k, _ in detected],
            [s or 0.0 for _, s in detected],
        ),
        (f"multilingual ({c.n})", c.texts, c.codes, c.scores),
    )
    rows = []
    for label, texts, codes, scores in sets:
        arrays = pa.array(texts, pa.large_string()), pa.array(codes), pa.array(scores)
        costs: dict[str, float] = {}
        for name in ("fineweb", "fineweb2", "fineweb", "fineweb2"):  # alternated, the best of two
            ms = run_ours(*arrays, with_table(name, {"min_language_score": False}), batch)[2]
            costs[name] = min(costs.get(name, np.inf), ms)
        out["presets"][label] = costs
        rows.append(
            (
                label,
                f"{costs['fineweb']:.3f}",
                f"{costs['fineweb2']:.3f}",
                f"{costs['fineweb2'] / costs['fineweb']:.2f}x",
            )
        )
    table(
        "Our presets, CPU ms per document (language score off on both; best of two alternated runs)",
        rows,
        ("texts", "fineweb", "fineweb2", "fineweb2 / fineweb"),
    )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=300, help="UDHR documents per language")
    p.add_argument("--seed", type=int, default=26)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--examples", type=int, default=3)
    p.add_argument("--languages", default=",".join(LANGUAGES), help="codes, comma-separated")
    p.add_argument("--web", type=Path, default=CACHE / "web.parquet")
    p.add_argument("--refresh-web", action="store_true")
    p.add_argument("--no-web", action="store_true")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    wanted = [c.strip() for c in args.languages.split(",") if c.strip()]
    wall = time.time()

    docs = [d for code in wanted for d in make_documents(code, args.docs, args.seed)]
    web = [] if args.no_web else web_documents(args.web, args.refresh_web)
    chosen, english_web = select_documents(docs, web, wanted)
    random.Random(args.seed).shuffle(chosen)  # batches mix languages, as a crawl's do
    c = compare(chosen, args.batch)
    results = {"documents": c.n, "languages": report_languages(c, wanted, args.batch)}
    results["words"] = report_words(c, wanted)
    report_groups(c)
    results["filters"], results["rules"] = report_filters(c)
    results["causes"] = report_causes(c, args.examples)
    english = [d.text for d in make_documents("en", args.docs * 2, args.seed, stems=("eng",))]
    results["cost"] = report_cost(c, english + [d.text for d in english_web], args.batch)

    overall = results["languages"]["all"]
    low = [k for k, r in results["languages"].items() if k != "all" and r["decision"] < 0.97]
    cost = results["cost"]
    print(
        f"\nRESULT decision={overall['decision']:.4f} first_filter={overall['first_filter']:.4f} "
        f"languages_below_97={','.join(low) or 'none'} ours_ms={cost['ours_ms']:.3f} "
        f"datatrove_ms={cost['datatrove_ms']:.3f} speedup={cost['ratio']:.1f}x wall={time.time() - wall:.0f}s"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
