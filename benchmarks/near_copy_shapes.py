"""Near copies per language and document shape: word 5-gram similarity of near pairs, and the
near copies the corpus job finds.

    python benchmarks/near_copy_shapes.py [--docs 150] [--pairs 2000] [--no-job]
        [--languages eng,deu,fra,rus,kor,cmn_hans,jpn,tha] [--shared ../shared]

Documents are drawn from UDHR translations (``../shared/data/udhr2``, public domain; their
sentences as :func:`multilingual_near_dedup.sentences` cuts them), in shapes a filter may act on
(:data:`SHAPES`): plain prose (12-30 sentences, one a line), a repeated block of lines, a list of
short lines, a phrase repeated within a line, no sentence-final punctuation, headings between
paragraphs, mixed-script lines (Latin words and numbers in every language), punctuation with a
space on each side, and punctuation with none after it.  Each is made the same way in every
language, from the same random draws; a phrase (a list item, a heading, a repeated phrase) is
the first third of its sentence's words in every language (:func:`phrase`).  Each document has
its own copy of the translation's sentences with ``--swap`` (0.3) of their words swapped for
other words of the translation (:class:`multilingual_near_dedup.WordSwapper`): a translation has
only 59-80 sentences, so documents drawn from the sentences as they are shared 40-60 % of their
shingles with their closest other document, and the banding merged some in every language.  A
near copy (:func:`near_copy`) has one line replaced by another sentence of the document's own and
a dated line (``2024-06-DD 10:MM``) inserted, as in ``multilingual_near_dedup.py``.

Prints, per language and shape: the mean exact word 5-gram Jaccard similarity of ``--pairs``
near pairs under near dedup's words (:func:`contentx_udf.corpus.minhash.word_hashes`), its gap
to English's at the same shape, the words per line, and the share of near copies the banding
curve expects at the job's bands (``1 - (1 - J^rows)^bands`` averaged: no MinHash noise); then,
unless ``--no-job``, the corpus job (local Spark, ``--dedup near``, defaults) on ``--docs``
originals and as many near copies per language and shape: near copies found and originals
merged.  The expected shares differ from English's by their sampling error too (about 0.03 at the
steep short-lines shape with 400 pairs, under 0.01 with 2,000).  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import multilingual_near_dedup as mnd  # noqa: E402
from corpus_scale import write_rows  # noqa: E402

from contentx_udf.corpus import minhash as mh  # noqa: E402

LANGUAGES = {"eng": "en", "deu": "de", "fra": "fr", "rus": "ru", "kor": "ko", "cmn_hans": "zh", "jpn": "ja"}
LANGUAGES |= {"cmn_hant": "zh", "tha": "th"}
#: Sentence-final and clause punctuation of the UDHR translations (Latin, CJK, Devanagari, Arabic,
#: Khmer, Burmese).
FINAL = "。！？.!?।॥؟។။"
PUNCT = re.compile(r"\s*([,.;:!?，。、；：！？»«“”()（）])\s*")
#: Word rules compared: today's before this change, and the default.
RULES = ("segmented-1", "segmented")
PUNCT_AFTER = re.compile(r"([,.;:!?，。、；：！？])\s+")


def spaced(pool: list[str]) -> bool:
    """Whether the translation separates its words with spaces (most of its sentences do)."""
    return sum(s.count(" ") for s in pool) > 2 * len(pool)


@cache
def _word_breaks():
    """ICU's word break iterator (root locale: the dictionary chosen by script)."""
    import icu

    return icu.BreakIterator.createWordInstance(icu.Locale.getRoot())


def phrase(sentence: str, rng: random.Random) -> str:
    """The leading third of ``sentence``'s words (ICU's word break, the number rounded up or down
    at random so that it is a third on average), its final punctuation left out: a heading, a
    list item, a repeated phrase.  By words, so that a phrase holds the same share of its sentence
    in every language: a third of the characters cut back to a whole word dropped a long English
    or Korean word where a Japanese phrase dropped a short one (and a Chinese phrase cut inside a
    word kept a piece of it), so the phrases of some languages held more of their sentences."""
    breaks = _word_breaks()
    breaks.setText(sentence)
    ends = [end for end in breaks if breaks.getRuleStatus() >= 100]  # ends of words, not of spaces
    if not ends:
        return sentence.rstrip(FINAL + ",;:，、；： ")
    keep = max(1, int(len(ends) / 3 + rng.random()))
    return sentence[: ends[keep - 1]].rstrip(FINAL + ",;:，、；： ")


def _prose(pool, rng, sp) -> list[str]:
    return rng.sample(pool, rng.randint(12, 30))


def _repeated_block(pool, rng, sp) -> list[str]:
    lines = _prose(pool, rng, sp)
    start = rng.randrange(len(lines) - 3)
    block = lines[start : start + rng.randint(2, 4)]
    at = rng.randrange(start + len(block), len(lines) + 1)
    return lines[:at] + block + lines[at:]


def _short_lines(pool, rng, sp) -> list[str]:
    lines = rng.sample(pool, rng.randint(14, 26))
    cut = rng.randint(4, 8)  # a paragraph or two, then the list
    return lines[:cut] + [phrase(s, rng) for s in lines[cut:]]


def _repeated_phrase(pool, rng, sp) -> list[str]:
    lines = _prose(pool, rng, sp)
    joiner = " " if sp else ""
    for i in rng.sample(range(len(lines)), max(1, len(lines) // 4)):
        piece = phrase(lines[i], rng)
        lines[i] = joiner.join([piece] * rng.randint(2, 3) + [lines[i]])
    return lines


def _no_final_punctuation(pool, rng, sp) -> list[str]:
    return [s.rstrip(FINAL) for s in _prose(pool, rng, sp)]


def _headings(pool, rng, sp) -> list[str]:
    lines = _prose(pool, rng, sp)
    others = [s for s in pool if s not in lines]
    out, i = [], 0
    while i < len(lines):
        out.append(phrase(rng.choice(others), rng))
        step = rng.randint(3, 5)
        out += lines[i : i + step]
        i += step
    return out


def _mixed_script(pool, rng, sp) -> list[str]:
    lines = _prose(pool, rng, sp)
    for i in range(0, len(lines), 2):
        lines[i] = f"Article {rng.randint(1, 30)} (UN 1948, A/RES/217): {lines[i]}"
    return lines


def _spaced_punctuation(pool, rng, sp) -> list[str]:
    return [PUNCT.sub(r" \1 ", s).strip() for s in _prose(pool, rng, sp)]


def _tight_punctuation(pool, rng, sp) -> list[str]:
    return [PUNCT_AFTER.sub(r"\1", s) for s in _prose(pool, rng, sp)]


#: Document shapes: name -> lines of a document from a translation's sentences.
SHAPES: dict[str, Callable[[list[str], random.Random, bool], list[str]]] = {
    "prose": _prose,
    "repeated_block": _repeated_block,
    "short_lines": _short_lines,
    "repeated_phrase": _repeated_phrase,
    "no_final_punct": _no_final_punctuation,
    "headings": _headings,
    "mixed_script": _mixed_script,
    "spaced_punct": _spaced_punctuation,
    "tight_punct": _tight_punctuation,
}


def near_copy(lines: list[str], pool: list[str], rng: random.Random) -> list[str]:
    """One line replaced by a sentence the document does not hold, a dated line inserted (the
    positions drawn as fractions, so that they fall alike in every language)."""
    body = list(lines)
    others = [s for s in pool if s not in body]
    body[int(rng.random() * len(body))] = others[int(rng.random() * len(others))]
    day = 1 + int(rng.random() * 28)
    body.insert(int(rng.random() * (len(body) + 1)), f"2024-06-{day:02d} 10:{day + 10:02d}")
    return body


def pairs(name: str, shape: str, n: int, seed: int, swap: float = mnd.SWAP) -> list[tuple[str, str]]:
    """``n`` (original, near copy) texts of one language and shape.  Document ``i`` draws its shape
    from its own generator and its edit from another, both seeded by ``(seed, shape, i)`` only:
    every language gets documents of the same numbers of lines, edited at the same places.  Each
    document has its own sentences, ``swap`` of their words swapped for other words of the
    translation (:class:`multilingual_near_dedup.WordSwapper`): distinct originals."""
    swapper = mnd.WordSwapper(mnd.sentences(name), swap)
    sp = spaced(mnd.sentences(name))
    out = []
    for i in range(n):
        pool = swapper(random.Random(f"{seed}-{shape}-{i}-words"))
        lines = SHAPES[shape](pool, random.Random(f"{seed}-{shape}-{i}"), sp)
        copy = near_copy(lines, pool, random.Random(f"{seed}-{shape}-{i}-edit"))
        out.append(("\n".join(lines), "\n".join(copy)))
    return out


def shingle_sets(words: mh.Words, language: str, rule: str) -> list[np.ndarray]:
    """Each text's distinct word-shingle hashes (sorted uint64) from its near-dedup ``words``
    under word rule ``rule``, the texts labelled ``language`` (``segmented-2``'s shingle length is
    the language's, ``segmented-1``'s 5 words)."""
    params = mh.MinHashParams(words=mh.WORD_RULES[rule])
    n = len(words.offsets) - 1
    shingles = mh.shingle_hashes(words, mh.shingle_lengths([language] * n, params))
    return [
        np.unique(shingles.hashes[a:b])
        for a, b in zip(shingles.offsets[:-1], shingles.offsets[1:], strict=True)
    ]


def similarity(pairs_: list[tuple[str, str]], language: str) -> tuple[dict[str, np.ndarray], float]:
    """Exact word-shingle Jaccard similarity of each pair under each of :data:`RULES` (their words
    are the same, cut once; their shingle lengths differ), and the mean words per line."""
    words = [mh.word_hashes([pair[side] for pair in pairs_], words=mh.WORDS_SEGMENTED) for side in (0, 1)]
    found = {}
    for rule in RULES:
        a, b = (shingle_sets(w, language, rule) for w in words)
        found[rule] = np.array([mnd.jaccard(x, y) for x, y in zip(a, b, strict=True)])
    lines = sum(x.count("\n") + 1 for x, _ in pairs_)
    return found, len(words[0].hashes) / lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=150, help="originals (and near copies) per cell")
    parser.add_argument("--pairs", type=int, default=2000, help="near pairs per cell for the similarity")
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="UDHR files (no .txt)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--swap",
        type=float,
        default=mnd.SWAP,
        help="share of each document's words swapped for other words of its translation (0: the "
        "UDHR's sentences as they are, which originals share)",
    )
    parser.add_argument("--no-job", action="store_true", help="the similarities only (no Spark)")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared data")
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-near-shapes"))
    args = parser.parse_args()
    mnd.UDHR = args.shared / "data" / "udhr2"
    names = [n for n in args.languages.split(",") if n]
    shapes = [s for s in args.shapes.split(",") if s]
    from contentx_udf.corpus.config import FN_WEIGHT, FP_WEIGHT, NEAR_THRESHOLD

    bands, rows = mh.optimal_bands(NEAR_THRESHOLD, mh.NUM_PERM, FP_WEIGHT, FN_WEIGHT)
    print(
        f"exact word-shingle Jaccard of {args.pairs} near pairs per cell, before (segmented-1: 5 words "
        f"per shingle) -> after (segmented-2: the language's); expected share found at {bands} x {rows}"
    )
    print("\n| language | shape | words per line | Jaccard | - English's | expected found | - English's |")
    print("|---|---|---:|---:|---:|---:|---:|")
    expected: dict[tuple[str, str, str], float] = {}
    mean_j: dict[tuple[str, str, str], float] = {}
    worst: dict[tuple[str, str], float] = {}
    for name in ["eng", *[n for n in names if n != "eng"]]:
        language = LANGUAGES.get(name, name)
        for shape in shapes:
            made = pairs(name, shape, args.pairs, args.seed, args.swap)
            by_rule, per_line = similarity(made, language)
            for rule, j in by_rule.items():
                expected[(name, shape, rule)] = float(mh.candidate_probability(j, bands, rows).mean())
                mean_j[(name, shape, rule)] = float(j.mean())
            gap = {r: expected[(name, shape, r)] - expected[("eng", shape, r)] for r in RULES}
            for r in RULES:
                worst[(name, r)] = max(worst.get((name, r), 0.0), abs(gap[r]))
            print(
                f"| {name} | {shape} | {per_line:.1f} | "
                + " -> ".join(f"{mean_j[(name, shape, r)]:.3f}" for r in RULES)
                + " | "
                + " -> ".join(f"{mean_j[(name, shape, r)] - mean_j[('eng', shape, r)]:+.3f}" for r in RULES)
                + " | "
                + " -> ".join(f"{expected[(name, shape, r)]:.3f}" for r in RULES)
                + " | "
                + " -> ".join(f"{gap[r]:+.3f}" for r in RULES)
                + " |"
            )
    print(
        "\nlargest distance of the expected share from English's over the shapes, before -> after: "
        + ", ".join(
            f"{n} {worst[(n, RULES[0])]:.3f} -> {worst[(n, RULES[1])]:.3f}" for n in names if n != "eng"
        )
    )
    if args.no_job:
        return 0
    from contentx_udf.corpus import job as corpus_job
    from contentx_udf.corpus.config import CorpusConfig
    from contentx_udf.runtime.session import spark_session

    originals, copies, cells = [], [], []
    for name in names:
        for shape in shapes:
            for original, copy in pairs(name, shape, args.docs, args.seed + 1, args.swap):
                originals.append(
                    (f"https://{name}.example/{shape}/{len(originals)}", original, LANGUAGES.get(name, name))
                )
                copies.append(
                    (f"https://{name}.example/{shape}/copy{len(copies)}", copy, LANGUAGES.get(name, name))
                )
                cells.append((name, shape))
    shutil.rmtree(args.work, ignore_errors=True)
    write_rows(args.work / "table", originals + copies)  # originals first: --keep first keeps them
    spark = spark_session("contentx-near-copy-shapes")
    started = time.perf_counter()
    report = corpus_job.run(
        CorpusConfig(inputs=[str(args.work / "table")], output=str(args.work / "corpus")), spark
    )
    kept = {
        r[0]
        for r in spark.read.parquet(str(args.work / "corpus" / "documents"))
        .select("warc_record_offset")
        .collect()
    }
    n = len(originals)
    print(f"\ncorpus job: {2 * n} documents in {time.perf_counter() - started:.0f} s, kept {report['kept']}")
    print("\n| language | shape | near copies found | - English's | expected | originals merged |")
    print("|---|---|---:|---:|---:|---:|")
    tally: dict[tuple[str, str], list[int]] = {}
    for i, cell in enumerate(cells):
        entry = tally.setdefault(cell, [0, 0, 0])
        entry[0] += (n + i) not in kept
        entry[1] += i not in kept
        entry[2] += 1
    summary, gaps = [], {}
    for (name, shape), (found, merged, total) in tally.items():
        share = found / total
        eng = tally[("eng", shape)][0] / tally[("eng", shape)][2] if ("eng", shape) in tally else share
        gaps[name] = min(gaps.get(name, 0.0), share - eng)
        print(
            f"| {name} | {shape} | {share:.3f} | {share - eng:+.3f} | "
            f"{expected[(name, shape, RULES[1])]:.3f} | {merged} |"
        )
        summary.append(f"{name}_{shape}={share:.3f}/{merged}")
    print(
        "\nlargest shortfall of the job's share against English: "
        + ", ".join(f"{k} {v:+.3f}" for k, v in gaps.items())
    )
    print("RESULT " + " ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
