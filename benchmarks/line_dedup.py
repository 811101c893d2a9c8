"""``--line-dedup`` on a synthetic crawl with a known answer, and on the shared real WARCs.

    python benchmarks/line_dedup.py --docs 100000 [--work /tmp/contentx-linededup] [--sweep]
    python benchmarks/line_dedup.py --real-only

1. **A table with a known answer** (``--docs N``): :mod:`corpus_scale`'s documents (80 % originals
   of 20-50 lines of real pages' text, each recurring boilerplate line inserted with probability
   0.3; 10 % exact and 10 % near copies), on ``N / 20`` hosts, and per host a footer of 2-4 lines
   of its own (its name, address, a copyright line with the year, a contact line) at the end of
   90 % of its pages.  Every line of every document is labelled: *boilerplate* (the recurring
   lines and the host's footer) or *other*.
2. **The job** (``jobs/build_corpus.py --dedup near``, as ``corpus_scale.py`` runs it) on the table
   without and with ``--line-dedup`` (the defaults, or ``--job-args``), the same run, one after the
   other: prints both times and their ratio.
3. **The answer**: for every kept document, its lines before and after (by URL): the share of its
   boilerplate line occurrences removed (goal >= 95 %) and of its other lines removed (goal
   <= 0.5 %).  ``--sweep`` also prints both shares for several K and N, from the same labelled
   documents with the pure functions of :mod:`contentx_udf.corpus.lines` (no Spark).
4. **Real text** (``--real``/``--real-only``): the shared WARCs (``../shared/warc/real``) through the
   extraction job, then the corpus job with ``--line-dedup --dedup none``: prints the counts, the
   hosts and example lines of the report.

Ends with a ``RESULT`` line.  A benchmark, not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import corpus_scale  # noqa: E402  (the scale benchmark's pool, documents, table writer and runner)

REAL = REPO.parent / "shared" / "warc" / "real"
STREETS = ("Harbour Street", "Mill Lane", "Station Road", "Market Square", "Church Walk", "Bridge Row")


def footer(host: str, rng: random.Random) -> list[str]:
    """2-4 footer lines of one host (its own name, address and copyright)."""
    name = host.split(".")[0].capitalize()
    lines = [
        f"{name} Media Group, {rng.randint(1, 200)} {rng.choice(STREETS)}, registered in England no. "
        f"{rng.randint(10**6, 10**7)}.",
        f"Copyright {rng.randint(2015, 2024)} {name} Media Group. All rights reserved.",
        f"Questions about this page? Write to the {name} editors at editors@{host}.",
        f"{name} is part of the {rng.choice(('Northern', 'Coastal', 'Valley'))} Publishing network of "
        "local sites.",
    ]
    return lines[: rng.randint(2, 4)]


def labelled_documents(n: int, lines: list[str], seed: int = 1):
    """``(url, text, boilerplate)``: corpus_scale's documents on ``n // 20`` hosts, a host footer on
    90 % of the pages; ``boilerplate`` is the set of the document's boilerplate lines."""
    rng = random.Random(seed)
    hosts = max(1, n // 20)
    footers: dict[str, list[str]] = {}
    recurring = {b.lower() for b in corpus_scale.BOILERPLATE}
    for i, (_url, text, _kind) in enumerate(corpus_scale.synthetic_documents(n, lines, seed)):
        host = f"site{rng.randrange(hosts)}.example"
        if host not in footers:
            footers[host] = footer(host, random.Random(f"{seed}-{host}"))
        body = text.split("\n")
        own = footers[host] if rng.random() < 0.9 else []
        boiler = {ln for ln in body if " ".join(ln.split()).lower() in recurring} | set(own)
        yield f"https://{host}/page/{i}", "\n".join(body + own), boiler


def write_labelled(n: int, lines: list[str], table: Path) -> None:
    """Write the table of :func:`labelled_documents`.  The known answer is not kept: it is made
    again, document by document, when the result is scored (a million documents' texts and
    labels would not fit in memory)."""
    corpus_scale.write_rows(table, ((url, text) for url, text, _ in labelled_documents(n, lines)))


def score(labelled, kept: dict[str, str]) -> dict[str, float]:
    """Shares of the kept documents' boilerplate and other line occurrences that were removed;
    ``labelled`` yields ``(url, text before, boilerplate lines)`` (:func:`labelled_documents`)."""
    boiler_total = boiler_removed = other_total = other_removed = 0
    for url, before, boiler in labelled:
        text = kept.get(url)
        if text is None:
            continue
        left = Counter(ln for ln in text.split("\n"))
        for line in before.split("\n"):
            if left[line] > 0:
                left[line] -= 1
                removed = False
            else:
                removed = True
            if line in boiler:
                boiler_total += 1
                boiler_removed += removed
            elif line.strip():
                other_total += 1
                other_removed += removed
    return {
        "boilerplate_removed": boiler_removed / max(boiler_total, 1),
        "other_removed": other_removed / max(other_total, 1),
        "boilerplate_lines": boiler_total,
        "other_lines": other_total,
    }


def sweep(n: int, lines: list[str], ks=(2, 3, 4, 5, 8), ns=(10, 20, 30, 50), chunk: int = 5000) -> None:
    """Both shares for several K and N, with :mod:`.lines` alone, on the documents of every fifth
    host (whole hosts; copies of a page count once by text hash; before any dedup)."""
    import numpy as np
    import pyarrow as pa

    from contentx_udf.corpus.lines import LineSettings, document_keys, remove_lines
    from contentx_udf.text.language import text_hash

    sample = {
        url: (text, boiler)
        for url, text, boiler in labelled_documents(n, lines)
        if int(url.split("/")[2].split(".")[0][4:]) % 5 == 0
    }
    urls = list(sample)
    answer = sample
    doc = np.array([int(text_hash(answer[u][0])[:15], 16) for u in urls], dtype=np.int64)
    chunks = [
        (
            pa.array([answer[u][0] for u in urls[i : i + chunk]]),
            pa.array([u.split("/")[2] for u in urls[i : i + chunk]]),
        )
        for i in range(0, len(urls), chunk)
    ]
    print(f"sweep over {len(urls)} documents (every fifth host), before dedup:")
    print("K  N   boilerplate removed  other removed")
    for n_chars in ns:
        for k in ks:
            settings = LineSettings(min_chars=n_chars, min_docs=k)
            flat, owner = [], []
            for j, (texts, hosts) in enumerate(chunks):
                keys = document_keys(texts, hosts, settings)
                flat.append(keys.values.to_numpy())
                owner.append(
                    np.repeat(doc[j * chunk : j * chunk + len(texts)], np.diff(keys.offsets.to_numpy()))
                )
            pairs = np.unique(np.stack([np.concatenate(flat), np.concatenate(owner)], axis=1), axis=0)
            uniq, counts = np.unique(pairs[:, 0], return_counts=True)
            frequent = np.sort(uniq[counts >= k].view(np.uint64))
            left = []
            for texts, hosts in chunks:
                left += remove_lines(texts, hosts, settings, frequent).text.to_pylist()
            labelled = ((u, text, boiler) for u, (text, boiler) in sample.items())
            result = score(labelled, dict(zip(urls, left, strict=True)))
            print(
                f"{k:<2} {n_chars:<3} {result['boilerplate_removed']:>18.2%}  "
                f"{result['other_removed']:>12.3%}"
            )


def real_warcs(work: Path, job_args: list[str]) -> dict:
    """The shared real WARCs through the extraction job, then the corpus job with --line-dedup."""
    from contentx_udf.runtime.session import spark_session
    from contentx_udf.spark import job as extract_job
    from contentx_udf.spark.config import JobConfig

    table = work / "real-table"
    if not table.exists():
        warcs = sorted(str(p) for p in REAL.iterdir() if p.name.endswith((".warc", ".warc.gz")))
        spark = spark_session("contentx-linededup-real")
        extract_job.run(
            JobConfig(inputs=warcs, output=str(table), progress_seconds=0, overwrite=True), spark=spark
        )
        spark.stop()
    out = work / "real-corpus"
    run = corpus_scale.run_contentx(
        table, out, work / "real-corpus.log", ["--dedup", "none", "--line-dedup", *job_args]
    )
    if run["code"] != 0:
        sys.exit(f"corpus job failed on the real WARCs; log {work}/real-corpus.log")
    report = run["report"]
    lines = report["line_dedup"]
    print(
        f"real WARCs: {report['input_rows']} rows, {report['kept']} kept; line dedup "
        f"(scope {lines['scope']}, K={lines['min_docs']}, N={lines['min_chars']}): "
        f"{lines['frequent_lines']} repeated lines, {lines['lines_removed']} lines and "
        f"{lines['characters_removed']} characters removed "
        f"from {lines['documents_changed']} documents ({lines['documents_emptied']} left empty) of "
        f"{report['input_rows'] - sum(v for k, v in report['dropped'].items() if k != 'line_dedup')} that "
        "passed the column filters"
    )
    for h in lines["top_hosts"]:
        print(f"  host {h['host']}: {h['documents']} documents, {h['lines']} lines, {h['characters']} chars; "
              f"e.g. {h['example']!r}")  # fmt: skip
    for e in lines["examples"]:
        print(f"  first line removed from {e['documents']} document(s): {e['line']!r}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-linededup"))
    parser.add_argument("--keep-tables", action="store_true", help="reuse a table already written in --work")
    parser.add_argument("--job-args", default="", help="extra corpus job arguments for the --line-dedup run")
    parser.add_argument("--sweep", action="store_true", help="also the shares for several K and N (no Spark)")
    parser.add_argument("--real", action="store_true", help="also the shared real WARCs")
    parser.add_argument("--real-only", action="store_true", help="only the shared real WARCs")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    parts = []
    if not args.real_only:
        n = args.docs
        table, written = args.work / f"lines-table-{n}", args.work / f"lines-table-{n}.done"
        pool = corpus_scale.line_pool(args.work)
        if not (args.keep_tables and written.exists()):
            written.unlink(missing_ok=True)
            shutil.rmtree(table, ignore_errors=True)
            started = time.perf_counter()
            write_labelled(n, pool, table)
            written.write_text(json.dumps({"docs": n}))
            print(f"{n} labelled documents written in {time.perf_counter() - started:.0f} s")
        if args.sweep:
            sweep(n, pool)
        runs = {}
        for name, extra in (("without", []), ("with", ["--line-dedup", *args.job_args.split()])):
            run = corpus_scale.run_contentx(
                table, args.work / f"lines-corpus-{name}", args.work / f"lines-corpus-{name}.log", extra
            )
            if run["code"] != 0:
                print(f"corpus job failed ({name} --line-dedup); log {args.work}/lines-corpus-{name}.log")
                return 1
            runs[name] = run
            print(f"{n} docs {name} --line-dedup: {run['seconds']:.1f} s, kept {run['report']['kept']}")
        import pyarrow.parquet as pq

        kept = pq.read_table(
            args.work / "lines-corpus-with" / "documents", columns=["url", "text"]
        ).to_pydict()
        result = score(labelled_documents(n, pool), dict(zip(kept["url"], kept["text"], strict=True)))
        del kept
        lines = runs["with"]["report"]["line_dedup"]
        ratio = runs["with"]["seconds"] / runs["without"]["seconds"]
        print(
            f"line dedup (scope {lines['scope']}, K={lines['min_docs']}, N={lines['min_chars']}): "
            f"{result['boilerplate_removed']:.2%} of {result['boilerplate_lines']} boilerplate line "
            f"occurrences removed (goal >= 95 %), {result['other_removed']:.3%} of {result['other_lines']} "
            f"other lines (goal <= 0.5 %); {lines['lines_removed']} lines removed in all; "
            f"time with / without: {ratio:.2f}"
        )
        parts += [
            f"docs={n}",
            f"boilerplate_removed={result['boilerplate_removed']:.4f}",
            f"other_removed={result['other_removed']:.5f}",
            f"seconds_without={runs['without']['seconds']:.1f}",
            f"seconds_with={runs['with']['seconds']:.1f}",
            f"time_ratio={ratio:.3f}",
        ]
    if args.real or args.real_only:
        report = real_warcs(args.work, args.job_args.split())
        parts += [
            f"real_rows={report['input_rows']}",
            f"real_lines_removed={report['line_dedup']['lines_removed']}",
            f"real_documents_changed={report['line_dedup']['documents_changed']}",
        ]
    print("RESULT " + " ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
