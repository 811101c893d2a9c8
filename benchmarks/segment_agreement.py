"""Words of every script: agreement of ``text/segment.py`` with datatrove's word tokenizers, and cost.

    python benchmarks/segment_agreement.py [--languages fra_Latn,cmn_Hani] [--lines-per-doc 10]
                                           [--repeat 3] [--examples 0]

Texts: the Universal Declaration of Human Rights (``../shared/data/udhr2``) in each language,
NFC-normalised (the Vietnamese file is decomposed, unlike web text); every non-empty line is
one text for agreement.  Reference: ``datatrove.utils.word_tokenizers.load_word_tokenizer(key)``
(the tokenizer FineWeb-2's thresholds and stop words were computed with: spaCy ``blank(lang)``,
jieba via spaCy zh, SudachiPy via spaCy ja, pythainlp newmm-safe, Kiwi, pyvi via spaCy vi,
IndicNLP, khmer-nltk, laonlp, pyidaungsu, botok).  Kiwi: datatrove asks for the ``sbg`` model,
which kiwipiepy-model no longer ships (since 0.22); ``cong`` (Kiwi's default) is used.

Per language, ours (:func:`segmenter_for`) and today's splitter (``spaces``) against the
reference:

* ``same``: share of lines whose word lists are identical;
* ``F1``: boundary F1 (every word's start and end offset in the line; micro over the lines);
* ``stop``: FineWeb-2's stop words of the language (``../shared/data/fineweb2-configs``) found
  among the words, ours / reference (summed over the lines; Gopher's ``min_stop_words`` counts
  them);
* ``len``: mean length of the non-symbol words, ours / reference (Gopher's average word length);
* ``ms/doc``: CPU time per document of ``--batch-docs`` documents of ``--lines-per-doc``
  lines drawn at random: ours one call for the batch, the reference one document at a time;
  best of ``--repeat``, in the same run.  (The documents share UDHR's vocabulary, which favours
  our once-per-distinct-chunk work on spaced scripts; ICU's work is per character.)

Needs the ``bench`` extra; never imported by contentx itself.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf.text.segment import DEFAULT, segmenter_for, split_words_with  # noqa: E402
from contentx_udf.text.words import SYMBOL_CHARACTERS  # noqa: E402

SHARED = REPO.parent / "shared"
UDHR = SHARED / "data" / "udhr2"
CONFIGS = SHARED / "data" / "fineweb2-configs"

#: FineWeb-2 key -> UDHR file.
LANGUAGES = {
    "deu_Latn": "deu",
    "fra_Latn": "fra",
    "spa_Latn": "spa",
    "ita_Latn": "ita",
    "cat_Latn": "cat",
    "por_Latn": "por_PT",
    "nld_Latn": "nld",
    "pol_Latn": "pol",
    "rus_Cyrl": "rus",
    "ukr_Cyrl": "ukr",
    "ces_Latn": "ces",
    "tur_Latn": "tur",
    "arb_Arab": "arb",
    "fas_Arab": "pes_1",
    "hin_Deva": "hin",
    "vie_Latn": "vie",
    "ind_Latn": "ind",
    "cmn_Hani": "cmn_hans",
    "jpn_Jpan": "jpn",
    "kor_Hang": "kor",
    "tha_Thai": "tha",
    "lao_Laoo": "lao",
    "khm_Khmr": "khm",
    "mya_Mymr": "mya",
    "bod_Tibt": "bod",
}


def reference_tokenizer(key: str):
    from datatrove.utils import word_tokenizers

    if key.startswith("kor_"):
        return word_tokenizers.KiwiTokenizer(model_type="cong")
    return word_tokenizers.load_word_tokenizer(key)


def stop_words(key: str) -> frozenset[str]:
    path = CONFIGS / f"{key}.yml"
    if not path.exists():
        return frozenset()
    return frozenset(yaml.safe_load(path.read_text()).get("stopwords") or ())


def boundaries(text: str, words: list[str]) -> set[int]:
    """The start and end offsets of every word, found left to right (words not found are skipped)."""
    out, position = set(), 0
    for word in words:
        found = text.find(word, position)
        if found < 0:
            continue
        out.update((found, found + len(word)))
        position = found + len(word)
    return out


def word_lists(texts: list[str], segmenter: str) -> list[list[str]]:
    split = split_words_with(texts, segmenter)
    vocabulary = np.array(split.vocabulary.to_pylist(), dtype=object)
    words = vocabulary[split.ids]
    return [list(words[a:b]) for a, b in zip(split.offsets[:-1], split.offsets[1:], strict=True)]


def is_symbol(word: str) -> bool:
    return all(c in SYMBOL_CHARACTERS for c in word)


def compare(lines: list[str], ours: list[list[str]], ref: list[list[str]], stops: frozenset[str]) -> dict:
    same = sum(a == b for a, b in zip(ours, ref, strict=True)) / len(lines)
    hit = ours_n = ref_n = 0
    for text, a, b in zip(lines, ours, ref, strict=True):
        ba, bb = boundaries(text, a), boundaries(text, b)
        hit += len(ba & bb)
        ours_n += len(ba)
        ref_n += len(bb)
    f1 = 2 * hit / (ours_n + ref_n) if ours_n + ref_n else 1.0
    stop = [sum(w in stops for ws in lists for w in ws) for lists in (ours, ref)]
    length = [
        np.mean([len(w) for ws in lists for w in ws if not is_symbol(w)] or [0.0]) for lists in (ours, ref)
    ]
    words = [sum(map(len, lists)) for lists in (ours, ref)]
    return {"same": same, "f1": f1, "stop": stop, "len": length, "words": words}


def cpu_ms(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--lines-per-doc", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--batch-docs", type=int, default=200, help="documents of --lines-per-doc random lines, for speed"
    )
    parser.add_argument("--examples", type=int, default=0, help="differing lines shown per language")
    args = parser.parse_args(argv)

    print(
        "| language | ours | datatrove | words ours/ref | same ours (today) | F1 ours (today) "
        "| stop words ours/ref (today) | avg len ours/ref | ms/doc ours | ms/doc datatrove |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in args.languages.split(","):
        path = UDHR / f"{LANGUAGES[key]}.txt"
        text = unicodedata.normalize("NFC", path.read_text(encoding="utf-8"))
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        segmenter = segmenter_for(key)
        rng = random.Random(0)
        docs = ["\n".join(rng.choices(lines, k=args.lines_per_doc)) for _ in range(args.batch_docs)]
        split_words_with(docs, segmenter)  # warm-up (ICU, tables)
        ours_ms = cpu_ms(lambda docs=docs, s=segmenter: split_words_with(docs, s), args.repeat) / len(docs)
        try:
            tokenizer = reference_tokenizer(key)
            ref = [tokenizer.word_tokenize(line) for line in lines]
        except Exception as exc:  # botok fetches its dictionary from the network; pyidaungsu is not in bench
            reason = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
            print(f"| {key} | {segmenter} | unavailable: {reason} | | | | | | {ours_ms:.3f} | |", flush=True)
            continue
        ours = word_lists(lines, segmenter)
        today = word_lists(lines, DEFAULT)
        stops = stop_words(key)
        ours_m, today_m = compare(lines, ours, ref, stops), compare(lines, today, ref, stops)
        ref_ms = cpu_ms(lambda docs=docs, t=tokenizer: [t.word_tokenize(d) for d in docs], args.repeat) / len(
            docs
        )
        name = type(tokenizer).__name__
        name += f" {getattr(tokenizer, 'language', '') or ''}".rstrip()
        print(
            f"| {key} | {segmenter} | {name} | {ours_m['words'][0]}/{ours_m['words'][1]} "
            f"| {ours_m['same']:.1%} ({today_m['same']:.1%}) | {ours_m['f1']:.3f} ({today_m['f1']:.3f}) "
            f"| {ours_m['stop'][0]}/{ours_m['stop'][1]} ({today_m['stop'][0]}) "
            f"| {ours_m['len'][0]:.2f}/{ours_m['len'][1]:.2f} | {ours_ms:.3f} | {ref_ms:.3f} |",
            flush=True,
        )
        shown = 0
        for a, b in zip(ours, ref, strict=True):
            if shown >= args.examples:
                break
            if a != b:
                print(f"    ours: {a}\n    ref:  {b}")
                shown += 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
