"""Near dedup across scripts: near copies found per language, with near dedup's words before and now.

    python benchmarks/multilingual_near_dedup.py [--docs 200] [--copies 200] [--pairs 2000]
        [--languages eng,cmn_hans,...] [--work /tmp/contentx-multilingual]

1. **Sentences** of UDHR translations (``../shared/data/udhr2``, public domain): lines cut after
   ``. ! ?`` (before whitespace) and after ``。！？।॥؟។။``; Thai and Lao, which end no sentence
   with a mark, by line; headings (pieces shorter than 0.3 x the translation's median) left out.
   About 60-80 sentences per language.
2. **Documents**, for each language and size (12-30 and 3-6 sentences): ``--docs`` originals, each
   its number of sentences drawn at random from its own copy of the translation's sentences, with
   ``--swap`` (0.3) of their words swapped for other words of the translation
   (:class:`WordSwapper`: distinct documents), in random order, one per line;
   and ``--copies`` near copies, each of another original, as ``corpus_scale.py`` makes them: one
   sentence replaced by a sentence of another part of the text (one the original does not hold)
   and a dated line inserted (``2024-06-DD 10:MM``: five words, the same in every language).
   Originals are fetched before every copy, so ``--keep first`` keeps them.
3. **The corpus job** (in this process, local Spark, ``--dedup near`` with its default 12 x 9
   bands for 0.8) on one extraction table of all of them, twice: ``--near-words segmented-1`` (the
   rule before: scripts without spaces cut into dictionary words, every shingle 5 words; before
   it, ``letters`` made a whole clause of Chinese or Japanese one "word") and ``--near-words
   segmented`` (``segmented-2``: the shingles of Chinese, Japanese, Thai and Korean documents of
   as many words as span about five English words).

Prints, per language and size, before (``segmented-1``) -> after (``segmented``): the near copies
found (not kept: dropped as near duplicates of their original); the share the banding curve
expects from the exact word 5-gram Jaccard similarity ``J`` of ``--pairs`` further near pairs made
the same way (``1 - (1 - J^9)^12`` averaged, no Spark: the same figure without the MinHash and
small-sample noise); and the originals wrongly merged (not kept), beside the number the curve
expects from every pair of originals (the sum of their candidate probabilities).  With ``--swap
0`` (the sentences as they are, as before 2026-12-05) originals of 12-30 of the 60-80 sentences
of a translation share about 40 % of their 5-grams with their closest other original, where
12 x 9 joins about one pair in a hundred; with the default 0.3 at most about 8 %.  A benchmark,
not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus_scale import write_rows  # noqa: E402

from contentx_udf.corpus.minhash import candidate_probability  # noqa: E402

UDHR = REPO.parent / "shared" / "data" / "udhr2"
#: UDHR file -> the language code the table gives its documents.
LANGUAGES = {
    "eng": "en",
    "deu": "de",
    "fra": "fr",
    "rus": "ru",
    "arb": "ar",
    "hin": "hi",
    "kor": "ko",
    "cmn_hans": "zh",
    "jpn": "ja",
    "tha": "th",
    "lao": "lo",
    "khm": "km",
    "mya": "my",
}
BY_LINE = {"tha", "lao"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？।॥؟។။])\s*")
SIZES = {"12-30": (12, 30), "3-6": (3, 6)}
#: The word rules compared (before -> after): ``segmented-1`` (every document's shingles 5 words)
#: and the default ``segmented`` (``segmented-2``: Chinese, Japanese, Thai and Korean documents'
#: shingles of their language's length).
RULES = ("segmented-1", "segmented")
#: Share of each document's words swapped for other words of its translation (:class:`WordSwapper`).
SWAP = 0.3


def sentences(name: str) -> list[str]:
    """The sentences of one UDHR translation (see the module doc), distinct, in order."""
    lines = [ln.strip() for ln in (UDHR / f"{name}.txt").read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln]
    if name in BY_LINE:
        pieces = lines
    else:
        pieces = [p.strip() for ln in lines for p in SENTENCE_END.split(ln) if p.strip()]
    floor = 0.3 * statistics.median(len(p) for p in pieces)
    return list(dict.fromkeys(p for p in pieces if len(p) >= floor))


class WordSwapper:
    """Distinct documents from one translation: each document's own copy of the sentences, with
    ``share`` of their words (ICU's word break: letters, ideographs, kana, numbers) swapped for
    words drawn from the whole translation (by their frequency there), the rest of each sentence
    (punctuation, spaces) as it is.  A translation has only 60-80 sentences, so documents of 12-30
    of them drawn from it share about a third of their sentences, and any original had another
    at a word 5-gram Jaccard similarity of 0.4-0.6 (a pair the 12 x 9 banding joins about once in
    a hundred): not distinct documents.  With 30 % of the words swapped, a shingle of ``k``
    words survives in both of two documents with probability ``0.7^(2k)``, and the closest other
    original is at 0.02-0.08 in English, Korean, Chinese and Thai.  A document and its near copy
    share its sentences as they are: the similarity of a near pair is unchanged in kind (its lines
    hold as many words as before)."""

    def __init__(self, pool: list[str], share: float = SWAP) -> None:
        import icu

        iterator = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
        tokens, word, bounds = [], [], [0]
        for sentence in pool:
            iterator.setText(sentence)
            start = iterator.first()
            for end in iterator:
                tokens.append(sentence[start:end])
                word.append(iterator.getRuleStatus() >= 100)  # UBRK_WORD_NUMBER and above
                start = end
            bounds.append(len(tokens))
        self.tokens = np.array(tokens, dtype=object)
        self.words = np.flatnonzero(word)
        self.bounds = bounds
        self.share = share

    def __call__(self, rng: random.Random) -> list[str]:
        """One document's sentences (the pool's order), its swaps drawn from ``rng``."""
        if not self.share:
            return ["".join(self.tokens[a:b]) for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]
        draw = np.random.default_rng(rng.getrandbits(64))
        out = self.tokens.copy()
        swapped = self.words[draw.random(len(self.words)) < self.share]
        out[swapped] = self.tokens[self.words[draw.integers(len(self.words), size=len(swapped))]]
        return ["".join(out[a:b]) for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]


def documents(
    name: str, size: tuple[int, int], originals: int, copies: int, rng: random.Random, swap: float = SWAP
):
    """``(originals, near)``: texts, and ``(text, index of its original)`` pairs; each original from
    its own sentences (:class:`WordSwapper`), its near copy's new sentence one of them."""
    swapper = WordSwapper(sentences(name), swap)
    made, pools = [], []
    for _ in range(originals):
        pools.append(swapper(rng))
        made.append(rng.sample(pools[-1], rng.randint(*size)))
    near = []
    for source in rng.sample(range(originals), min(copies, originals)):
        body = list(made[source])
        others = [s for s in pools[source] if s not in body]
        body[rng.randrange(len(body))] = rng.choice(others)
        day = rng.randint(1, 28)
        body.insert(rng.randrange(len(body) + 1), f"2024-06-{day:02d} 10:{day + 10:02d}")
        near.append(("\n".join(body), source))
    return ["\n".join(m) for m in made], near


def shingle_arrays(texts: list[str], rule: str, language: str | None = None) -> list[np.ndarray]:
    """Each text's distinct word-shingle hashes (sorted uint64) under word rule ``rule``, the texts
    labelled ``language`` (under ``segmented-2`` their shingles are the language's length)."""
    from contentx_udf.corpus import minhash as mh

    params = mh.MinHashParams(words=mh.WORD_RULES[rule])
    lengths = mh.shingle_lengths(None if language is None else [language] * len(texts), params)
    shingles = mh.shingle_hashes(mh.word_hashes(texts, words=params.words), lengths)
    return [
        np.unique(shingles.hashes[a:b])
        for a, b in zip(shingles.offsets[:-1], shingles.offsets[1:], strict=True)
    ]


def jaccard(x: np.ndarray, y: np.ndarray) -> float:
    union = len(np.union1d(x, y))
    return len(np.intersect1d(x, y, assume_unique=True)) / union if union else 1.0


def expected_found(
    pairs: list[tuple[str, str]], rule: str, bands: int, rows: int, language: str | None = None
) -> float:
    """The mean over ``pairs`` of the banding curve at their exact word-shingle Jaccard similarity."""
    a = shingle_arrays([x for x, _ in pairs], rule, language)
    b = shingle_arrays([y for _, y in pairs], rule, language)
    similarity = np.array([jaccard(x, y) for x, y in zip(a, b, strict=True)])
    return float(candidate_probability(similarity, bands, rows).mean())


def shared_shingles(sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, shared)``: every pair ``i < j`` of the sets that share a shingle, and how many they
    share (the sets' hashes sorted together, then each run of equal hashes read at every distance:
    no texts x shingles matrix, whose columns grow with every distinct document)."""
    hashes = np.concatenate(sets) if sets else np.zeros(0, np.uint64)
    owner = np.repeat(np.arange(len(sets)), [len(x) for x in sets])
    order = np.argsort(hashes, kind="stable")
    hashes, owner = hashes[order], owner[order]
    firsts, seconds = [], []
    distance = 1
    while distance < len(hashes):
        same = np.flatnonzero(hashes[distance:] == hashes[:-distance])
        if not len(same):
            break
        firsts.append(owner[same])
        seconds.append(owner[same + distance])
        distance += 1
    if not firsts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    low, high = np.minimum(a, b), np.maximum(a, b)
    keys, shared = np.unique(low * len(sets) + high, return_counts=True)
    return keys // len(sets), keys % len(sets), shared


def cross_family(
    texts: list[str], family: list[int], rule: str, bands: int, rows: int, language: str | None = None
):
    """``(expected, closest)`` over the pairs of ``texts`` of different families (an original and
    its near copy are one family): the sum of their candidate probabilities, the number of links
    between families the banding is expected to make (each merges an original away), and each
    text's highest exact Jaccard similarity with a text of another family."""
    sets = shingle_arrays(texts, rule, language)
    i, j, shared = shared_shingles(sets)
    sizes = np.array([len(x) for x in sets])
    families = np.asarray(family)
    other = families[i] != families[j]
    i, j, shared = i[other], j[other], shared[other]
    similarity = shared / np.maximum(sizes[i] + sizes[j] - shared, 1)
    expected = float(candidate_probability(similarity, bands, rows).sum())
    closest = np.zeros(len(sets))
    np.maximum.at(closest, i, similarity)
    np.maximum.at(closest, j, similarity)
    return expected, closest


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=200, help="originals per language and size")
    parser.add_argument("--copies", type=int, default=200, help="near copies per language and size")
    parser.add_argument(
        "--pairs",
        type=int,
        default=2000,
        help="further near pairs per language and size for the expected share",
    )
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="UDHR files (no .txt)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--swap",
        type=float,
        default=SWAP,
        help="share of each original's words swapped for other words of its translation (0: the "
        "UDHR's sentences as they are, which originals share)",
    )
    parser.add_argument(
        "--verify-edges",
        action="store_true",
        help="the corpus job's --verify-edges: a band link is kept only when the two signatures "
        "estimate a Jaccard similarity of at least the near threshold",
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared data")
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-multilingual"))
    args = parser.parse_args()
    global UDHR
    UDHR = args.shared / "data" / "udhr2"
    names = [n for n in args.languages.split(",") if n]
    missing = [n for n in names if not (UDHR / f"{n}.txt").exists()]
    if missing:
        sys.exit(f"no UDHR translation {', '.join(missing)} in {UDHR}")
    from contentx_udf.corpus import job as corpus_job
    from contentx_udf.corpus.config import CorpusConfig
    from contentx_udf.runtime.session import spark_session

    rng = random.Random(args.seed)
    rows: list[tuple[str, str, str]] = []  # (url, text, language): originals first, then copies
    kinds: list[tuple[str, str, str]] = []  # (name, size, "original" | "near") of each row
    copies: list[tuple[str, str, str]] = []
    copy_kinds: list[tuple[str, str, str]] = []
    cells: dict[tuple[str, str], tuple[list[str], list[int], list[int]]] = {}  # texts, families, rows
    for name in names:
        language = LANGUAGES.get(name, name)
        for label, size in SIZES.items():
            originals, near = documents(name, size, args.docs, args.copies, rng, args.swap)
            for text in originals:
                rows.append((f"https://{name}.example/{label}/{len(rows)}", text, language))
                kinds.append((name, label, "original"))
            for text, _ in near:
                copies.append((f"https://{name}.example/{label}/copy{len(copies)}", text, language))
                copy_kinds.append((name, label, "near"))
            cells[(name, label)] = (
                originals + [text for text, _ in near],
                list(range(len(originals))) + [source for _, source in near],
                # rows of the originals; copies as -1 - their index among all copies (placed later)
                list(range(len(rows) - len(originals), len(rows)))
                + [-1 - (len(copies) - len(near) + j) for j in range(len(near))],
            )
    for _texts, _families, where in cells.values():  # the copies' rows: after all originals
        where[:] = [w if w >= 0 else len(rows) - 1 - w for w in where]
    rows += copies
    kinds += copy_kinds
    shutil.rmtree(args.work, ignore_errors=True)
    table = args.work / "table"
    write_rows(table, rows)
    print(
        f"{len(rows)} documents: {len(names)} languages x {len(SIZES)} sizes x ({args.docs} originals + "
        f"{args.copies} near copies); sentences per language: "
        + ", ".join(f"{n} {len(sentences(n))}" for n in names)
    )
    spark = spark_session("contentx-multilingual-near-dedup")
    results: dict[str, dict] = {}
    for rule in RULES:
        out = args.work / f"corpus-{rule}"
        started = time.perf_counter()
        config = CorpusConfig(
            inputs=[str(table)], output=str(out), near_words=rule, verify_edges=args.verify_edges
        )
        report = corpus_job.run(config, spark)
        seconds = time.perf_counter() - started
        kept = {
            r[0] for r in spark.read.parquet(str(out / "documents")).select("warc_record_offset").collect()
        }
        tally: dict[tuple[str, str, str], list[int]] = {}
        for i, key in enumerate(kinds):
            tally.setdefault(key, [0, 0])[0] += i not in kept  # not kept: merged
            tally[key][1] += 1
        results[rule] = {"tally": tally, "report": report, "seconds": seconds, "kept": kept}
        print(f"--near-words {rule}: {seconds:.1f} s, kept {report['kept']}, dropped {report['dropped']}")
    bands, rows_per_band = (results["segmented"]["report"]["minhash"][k] for k in ("bands", "rows"))
    print(
        f"\nbefore (--near-words segmented-1) -> after (segmented), {bands} x {rows_per_band} bands: near "
        f"copies found; expected by the curve from {args.pairs} further pairs; originals merged "
        "(expected: links between an original or copy and another original or its copy)\n"
    )
    print("| language | size | near copies found | expected | originals merged (expected) |")
    print("|---|---|---|---|---|")
    summary = []
    closest_of_merged: dict[str, list[float]] = {rule: [] for rule in RULES}
    spare = random.Random(args.seed + 1)
    for name in names:
        for label, size in SIZES.items():
            originals, near = documents(name, size, args.pairs, args.pairs, spare, args.swap)
            pairs = [(originals[source], text) for text, source in near]
            found, expected, merged = [], [], []
            for rule in RULES:
                tally = results[rule]["tally"]
                hits, n_near = tally[(name, label, "near")]
                lost = tally[(name, label, "original")][0]
                found.append(f"{hits / n_near:.3f}")
                language = LANGUAGES.get(name, name)
                expected.append(f"{expected_found(pairs, rule, bands, rows_per_band, language):.3f}")
                texts, families, where = cells[(name, label)]
                chance, closest = cross_family(texts, families, rule, bands, rows_per_band, language)
                kept = results[rule]["kept"]
                closest_of_merged[rule] += [
                    float(closest[j])
                    for j, row in enumerate(where)
                    if kinds[row][2] == "original" and row not in kept
                ]
                merged.append(f"{lost} ({chance:.1f})")
                summary.append(f"{name}_{label}_{rule}={hits / n_near:.3f}/{expected[-1]}/{lost}")
            print(
                f"| {name} | {label} | "
                + " | ".join(" -> ".join(x) for x in (found, expected, merged))
                + " |"
            )
    for rule, values in closest_of_merged.items():
        if values:
            print(
                f"{rule}: {len(values)} originals merged; exact Jaccard with their closest document of "
                f"another original: median {statistics.median(values):.2f}, max {max(values):.2f}"
            )
    print("\nRESULT " + " ".join(summary))
    (args.work / "result.json").write_text(
        json.dumps({rule: {"|".join(k): v for k, v in r["tally"].items()} for rule, r in results.items()})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
