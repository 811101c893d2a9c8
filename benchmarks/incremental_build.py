"""An incremental (monthly) corpus build against the corpus of the month before.

    python benchmarks/incremental_build.py [--docs 100000] [--work /tmp/contentx-incremental]

Month 1: ``--docs`` original documents made of real lines (as ``benchmarks/corpus_scale.py`` makes
them), built into corpus 1.  Month 2: ``--docs`` documents of which 30 % repeat month 1 (half exact
copies with other case or spacing, half near copies with one line replaced and a dated line
added) and 70 % are new originals.  Month 2 is built twice, plainly and with ``--against`` corpus
1, one after the other; prints both times, the share of the repeats dropped as ``seen_before``
(goal: at least 99 %), the new documents kept (goal: all), and the time ratio (goal: at most 1.3).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from corpus_scale import BOILERPLATE, line_pool, run_contentx, write_rows  # noqa: E402


def original(rng: random.Random, lines: list[str]) -> str:
    body = [rng.choice(lines) for _ in range(rng.randint(20, 50))]
    for line in BOILERPLATE:
        if rng.random() < 0.3:
            body.insert(rng.randrange(len(body) + 1), line)
    return "\n".join(body)


def repeat(rng: random.Random, text: str, lines: list[str], exact: bool) -> str:
    if exact:
        return text.upper() if rng.random() < 0.5 else text.replace(" ", "  ")
    body = text.split("\n")
    body[rng.randrange(len(body))] = rng.choice(lines)
    body.insert(rng.randrange(len(body) + 1), f"Updated on {rng.randint(1, 28)} July 2024 by the web desk.")
    return "\n".join(body)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-incremental"))
    parser.add_argument("--lines-from", type=Path, default=Path("/tmp/contentx-scale"))
    args = parser.parse_args()
    args.lines_from.mkdir(parents=True, exist_ok=True)
    lines = line_pool(args.lines_from)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    rng = random.Random(1)
    month1 = [original(rng, lines) for _ in range(args.docs)]
    repeats = int(args.docs * 0.3)
    chosen = rng.sample(range(args.docs), repeats)
    month2 = [(repeat(rng, month1[i], lines, exact=k % 2 == 0), "repeat") for k, i in enumerate(chosen)]
    month2 += [(original(rng, lines), "new") for _ in range(args.docs - repeats)]
    rng.shuffle(month2)
    write_rows(args.work / "month1", [(f"https://one.example/{i}", t) for i, t in enumerate(month1)], day=1)
    write_rows(
        args.work / "month2", [(f"https://two.example/{i}", t) for i, (t, _k) in enumerate(month2)], day=2
    )
    new = sum(kind == "new" for _t, kind in month2)

    c1 = run_contentx(args.work / "month1", args.work / "corpus1", args.work / "corpus1.log", [])
    plain = run_contentx(args.work / "month2", args.work / "plain2", args.work / "plain2.log", [])
    incremental = run_contentx(
        args.work / "month2",
        args.work / "corpus2",
        args.work / "corpus2.log",
        ["--against", str(args.work / "corpus1")],
    )
    for name, run in (("month 1", c1), ("month 2 plain", plain), ("month 2 --against month 1", incremental)):
        if run["code"] != 0:
            print(f"{name} failed; log in {args.work}")
            return 1
    report = incremental["report"]
    seen = report["dropped"]["seen_before"]
    import pyarrow.dataset as ds

    kept_urls = set(
        ds.dataset(str(args.work / "corpus2" / "documents")).to_table(columns=["url"])["url"].to_pylist()
    )
    new_urls = {f"https://two.example/{i}" for i, (_t, kind) in enumerate(month2) if kind == "new"}
    new_kept = len(new_urls & kept_urls)
    print(f"month 1: {args.docs} originals, corpus 1 kept {c1['report']['kept']} in {c1['seconds']:.1f} s")
    print(f"month 2: {repeats} repeats of month 1 (half exact, half near), {new} new documents")
    print(f"plain build of month 2: {plain['seconds']:.1f} s, kept {plain['report']['kept']}")
    print(
        f"--against corpus 1: {incremental['seconds']:.1f} s, kept {report['kept']}, seen_before {seen} "
        f"({seen / repeats:.2%} of the repeats), new documents kept {new_kept} of {new}, "
        f"dropped {report['dropped']}"
    )
    ratio = incremental["seconds"] / plain["seconds"]
    print(f"time ratio (incremental / plain): {ratio:.2f}")
    print(
        f"RESULT docs={args.docs} plain_seconds={plain['seconds']:.1f} incremental_seconds="
        f"{incremental['seconds']:.1f} ratio={ratio:.2f} repeats_dropped={seen / repeats:.4f} "
        f"kept={report['kept']} new={new} new_kept={new_kept}"
    )
    (args.work / "result.json").write_text(json.dumps({"ratio": ratio, "seen": seen, "kept": report["kept"]}))
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    sys.exit(main())
