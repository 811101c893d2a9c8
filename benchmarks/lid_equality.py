"""The compiled language identifier against fastText's own ``predict``, on many real texts.

    python benchmarks/lid_equality.py [--gold DIR ...] [--no-udhr]

Texts: what ``combined`` extracts from the development pages (default: WCXB dev and scrapinghub,
1,678 pages) and the UDHR in the 388 languages of ``../shared/data/udhr2``, each whole, upper
case, cut mid-word and with its spaces made runs of newlines and tabs.  For each text, the
language id and score of :func:`~contentx_udf.text.language.detect_language` (compiled,
``contentx_udf/text/_lid.pyx``) and of ``detect_language_fasttext`` (fasttext-predict), and the
raw float32 score of both models on the same sample (``bits_differing`` counts scores that are
not bit-identical).  Also the CPU per text of both, interleaved.  Prints one RESULT line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import extract  # noqa: E402
from contentx_udf.evaluation import load_gold  # noqa: E402
from contentx_udf.text.language import (  # noqa: E402
    MAX_CHARS,
    _compiled_predictor,
    _mostly_upper,
    _predictor,
    _sample,
    detect_language,
    detect_language_fasttext,
    lid_status,
)

SHARED = REPO.parent / "shared" / "data"
DEFAULT_GOLD = (SHARED / "wcxb-dev", SHARED / "scrapinghub")


def web_texts(golds: list[Path]) -> list[str]:
    texts = []
    for gold in golds:
        for page in load_gold(gold):
            ex = extract(page.html, "combined", url=page.url)
            if ex.status == "ok" and ex.text:
                texts.append(ex.text)
    return texts


def udhr_texts() -> list[str]:
    texts = []
    for path in sorted((SHARED / "udhr2").glob("*.txt")):
        body = path.read_text(encoding="utf-8")
        texts += [body, body.upper(), body[1234:4567], body.replace(" ", "\n \t")[:500]]
    return texts


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gold", type=Path, action="append")
    parser.add_argument("--no-udhr", action="store_true")
    args = parser.parse_args()
    print(f"language id: {lid_status()}")
    web = web_texts(args.gold or list(DEFAULT_GOLD))
    udhr = [] if args.no_udhr else udhr_texts()
    texts = web + udhr
    compiled, codes, normalize = _compiled_predictor(None)
    if compiled is None:
        sys.exit("the compiled language id is off: nothing to compare")
    predict, _ = _predictor(None)
    differing = bits = 0
    cpu = {"compiled": 0.0, "fasttext": 0.0}
    for text in texts:
        t0 = time.process_time()
        ours = detect_language(text)
        t1 = time.process_time()
        theirs = detect_language_fasttext(text)
        cpu["compiled"] += t1 - t0
        cpu["fasttext"] += time.process_time() - t1
        differing += ours != theirs
        sample = _sample(text)
        if sample is not None:
            sample = sample.lower() if normalize and _mostly_upper(sample) else sample
            index, score = compiled.predict(sample)
            ft_score, ft_label = predict(sample + "\n", 1, 0.0, "strict")[0]
            bits += (compiled.labels[index], score) != (ft_label, ft_score)
    n = len(texts)
    ms = {k: 1000 * v / max(n, 1) for k, v in cpu.items()}
    print(
        f"texts {n} (web {len(web)}, UDHR forms {len(udhr)}); differing (code, rounded score): "
        f"{differing}; raw float32 scores or labels differing: {bits}"
    )
    print(
        f"CPU per text: compiled {ms['compiled']:.3f} ms, fastText {ms['fasttext']:.3f} ms "
        f"(samples of at most {MAX_CHARS} characters)"
    )
    print(
        f"RESULT texts={n} differing={differing} bits_differing={bits} "
        f"compiled_ms={ms['compiled']:.3f} fasttext_ms={ms['fasttext']:.3f}"
    )
    return 1 if differing or bits else 0


if __name__ == "__main__":
    raise SystemExit(main())
