"""Agreement of the quality filters with datatrove's, and their cost.

    python benchmarks/filter_agreement.py [--texts /tmp/contentx-filter-agreement/texts.parquet]
                                          [--batch 1000] [--examples 4] [--refresh]

1. Texts: the ``ok`` texts of ``combined`` (the default method) on every page of
   ``../shared/data/wcxb-dev`` and every HTML record of ``../shared/warc/real/*.warc*`` (a
   ``.warc`` whose ``.warc.gz`` is there too is read once; WAT/WET files hold no HTML) and of the
   scale fixture, with their language id.  Cached in ``--texts`` (``--refresh`` extracts again).
2. Agreement: each of our four filters and datatrove's (``GopherRepetitionFilter()``,
   ``GopherQualityFilter()``, ``C4QualityFilter(filter_no_terminal_punct=False)``,
   ``FineWebQualityFilter()``, English defaults) run independently on the same input text (every
   text treated as English, as datatrove's filters are); per filter: documents, share of equal
   keep/drop decisions, drops on each side, and example disagreements with the rule each side
   fired and the reason; the share of C4-edited texts that are identical.  Twice: with our
   default (texts in scripts without spaces skip the word rules) and with
   ``word_rules_without_spaces`` (word rules for every text, as datatrove does).
3. Cost: CPU ms per document of ``apply_filters`` with the ``fineweb`` preset (batches of
   ``--batch`` documents, after one warm-up batch) and of datatrove's four filters run one
   document at a time in the FineWeb pipeline's order (a document stops at its first drop; C4's
   edit feeds FineWeb), on the same texts in the same run.

Needs the ``bench`` extra (datatrove, spaCy); never imported by contentx itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import pickle
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import extract  # noqa: E402
from contentx_udf.corpus.quality.batch import apply_filters  # noqa: E402
from contentx_udf.corpus.quality.c4 import C4Quality  # noqa: E402
from contentx_udf.corpus.quality.fineweb import FineWebQuality  # noqa: E402
from contentx_udf.corpus.quality.gopher import GopherQuality, GopherRepetition  # noqa: E402
from contentx_udf.corpus.quality.settings import PRESETS  # noqa: E402
from contentx_udf.corpus.quality.text import TextBatch  # noqa: E402
from contentx_udf.text.language import detect_language  # noqa: E402
from contentx_udf.warc.reader import iter_warc_rows  # noqa: E402

SHARED = REPO.parent / "shared"
WCXB = SHARED / "data" / "wcxb-dev"
WARCS = SHARED / "warc" / "real"
SCALE = SHARED / "warc" / "fixtures" / "scrapinghub-scale.warc.gz"
CACHE = Path("/tmp/contentx-filter-agreement")
FILTERS = ("gopher_repetition", "gopher_quality", "c4", "fineweb")


# --- texts ----------------------------------------------------------------------------------------


def warc_files() -> list[Path]:
    files = []
    for path in sorted(WARCS.glob("*.warc*")):
        if path.name.endswith((".wat.gz", ".wet.gz")):
            continue
        if path.suffix == ".warc" and path.with_name(path.name + ".gz").exists():
            continue
        files.append(path)
    return files + [SCALE]


def extract_texts(path: Path) -> pa.Table:
    rows = []
    for truth in sorted((WCXB / "ground-truth").glob("*.json")):
        url = json.loads(truth.read_text()).get("url")
        html = gzip.open(WCXB / "html" / f"{truth.stem}.html.gz").read()
        result = extract(html, url=url)
        if result.status == "ok":
            rows.append(("wcxb-dev", truth.stem, url, result.text))
    for warc in warc_files():
        for row in iter_warc_rows(str(warc)):
            if row.status != "ok" or not row.is_html:
                continue
            result = extract(row.payload, url=row.url, content_type=row.http_content_type)
            if result.status == "ok":
                rows.append((warc.name, str(row.warc_record_offset), row.url, result.text))
    languages = [detect_language(text) for *_, text in rows]
    table = pa.table(
        {
            "source": [r[0] for r in rows],
            "name": [r[1] for r in rows],
            "url": [r[2] for r in rows],
            "text": [r[3] for r in rows],
            "language": [lang for lang, _ in languages],
            "language_score": [score for _, score in languages],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table


# --- datatrove --------------------------------------------------------------------------------------


def datatrove_filters():
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    return {
        "gopher_repetition": GopherRepetitionFilter(),
        "gopher_quality": GopherQualityFilter(),
        "c4": C4QualityFilter(filter_no_terminal_punct=False),
        "fineweb": FineWebQualityFilter(),
    }


def datatrove_verdicts(texts: list[str], cache: Path) -> dict:
    """Per filter: (kept, reason, text after the filter) per text, each filter on the input text."""
    from datatrove.data import Document
    from datatrove.utils.text import split_into_words

    if cache.exists():
        return pickle.loads(cache.read_bytes())
    filters = datatrove_filters()
    out = {name: [] for name in FILTERS}
    out["words"] = []
    for i, text in enumerate(texts):
        for name, filter_ in filters.items():
            doc = Document(text=text, id=str(i))
            verdict = filter_.filter(doc)
            kept = verdict is True
            out[name].append((kept, None if kept else verdict[1], doc.text))
        out["words"].append(split_into_words(text))
    cache.write_bytes(pickle.dumps(out))
    return out


def datatrove_pipeline_ms(texts: list[str]) -> np.ndarray:
    """CPU ms of datatrove's four filters in the FineWeb pipeline's order, per document."""
    from datatrove.data import Document

    filters = list(datatrove_filters().values())
    for text in texts[:20]:  # spaCy's first calls build its tables
        filters[1].filter(Document(text=text, id="warm"))
    spent = np.zeros(len(texts))
    for i, text in enumerate(texts):
        started = time.process_time()
        doc = Document(text=text, id=str(i))
        for filter_ in filters:
            if filter_.filter(doc) is not True:
                break
        spent[i] = time.process_time() - started
    return spent * 1000


# --- ours -------------------------------------------------------------------------------------------


def our_verdicts(texts: pa.Array, spaceless_words: bool):
    """Each filter alone on every input text, every text read as English."""
    s = PRESETS["fineweb"]
    batch = TextBatch(texts, pa.array(["en"] * len(texts)), detect_no_space=not spaceless_words)
    everyone = np.ones(batch.n, bool)
    c4 = C4Quality(s.c4).evaluate(batch, everyone)
    verdicts = {
        "gopher_repetition": GopherRepetition(s.gopher_repetition).evaluate(batch, everyone),
        "gopher_quality": GopherQuality(s.gopher_quality).evaluate(batch, everyone),
        "c4": c4.verdicts,
        "fineweb": FineWebQuality(s.fineweb).evaluate(
            batch.texts, batch.word_counts, batch.no_space, everyone
        ),
    }
    return verdicts, c4.texts().to_pylist(), batch


def our_pipeline_ms(table: pa.Table, batch_size: int) -> float:
    """CPU ms per document of ``apply_filters`` (fineweb preset, every text filtered: no
    language-score cut) in batches of ``batch_size``."""
    texts, urls = table.column("text").combine_chunks(), table.column("url").combine_chunks()
    langs, scores = table.column("language").combine_chunks(), table.column("language_score").combine_chunks()
    settings = dataclasses.replace(PRESETS["fineweb"], min_language_score=None)
    apply_filters(texts[:batch_size], urls[:batch_size], langs[:batch_size], scores[:batch_size], settings)
    started = time.process_time()
    for i in range(0, len(texts), batch_size):
        part = slice(i, i + batch_size)
        apply_filters(texts[part], urls[part], langs[part], scores[part], settings)
    return (time.process_time() - started) * 1000 / len(texts)


# --- report -----------------------------------------------------------------------------------------


def why(i: int, ours, batch: TextBatch, spacy_words: list[str]) -> str:
    """A short reason for a disagreement on text ``i``."""
    if batch.no_space[i]:
        return "script without spaces: our word rules are skipped"
    start, end = batch.word_offsets[i], batch.word_offsets[i + 1]
    vocabulary = batch.line_words.vocabulary.to_pylist()
    words = [vocabulary[j] for j in batch.line_words.ids[start:end]]
    if words == spacy_words:
        return "same words as spaCy: a rule differs"
    diff = Counter(words)
    diff.subtract(Counter(spacy_words))
    extra = [w for w, c in diff.items() if c > 0][:3]
    missing = [w for w, c in diff.items() if c < 0][:3]
    return f"words: ours {len(words)}, spaCy {len(spacy_words)} (ours only {extra}, spaCy only {missing})"


def agreement(table: pa.Table, reference: dict, spaceless_words: bool, examples: int) -> dict[str, float]:
    texts = table.column("text").combine_chunks()
    verdicts, c4_texts, batch = our_verdicts(texts, spaceless_words)
    mode = "word rules for every text" if spaceless_words else "default: no word rules without spaces"
    print(f"\n## Agreement ({mode}), {batch.n} texts, {int(batch.no_space.sum())} in scripts without spaces")
    english = np.array([lang == "en" for lang in table.column("language").to_pylist()])
    print(
        f"{'filter':18s} {'docs':>5s} {'agree':>7s} {'ours drop':>9s} {'dt drop':>8s} {'differ':>6s} "
        f"{'en docs':>7s} {'agree en':>8s}"
    )
    shares = {}
    names = table.column("name").to_pylist()
    sources = table.column("source").to_pylist()
    for name in FILTERS:
        ours_kept = verdicts[name].passed
        theirs = reference[name]
        theirs_kept = np.array([kept for kept, _, _ in theirs])
        agree = ours_kept == theirs_kept
        shares[name] = float(agree.mean())
        shares[f"{name}_en"] = float(agree[english].mean())
        print(
            f"{name:18s} {batch.n:5d} {agree.mean():7.2%} {int((~ours_kept).sum()):9d} "
            f"{int((~theirs_kept).sum()):8d} {int((~agree).sum()):6d} {int(english.sum()):7d} "
            f"{agree[english].mean():8.2%}"
        )
        rules = verdicts[name].rule_names()
        for i in np.flatnonzero(~agree)[:examples].tolist():
            reason = why(i, verdicts, batch, reference["words"][i])
            ours_rule, their_rule = rules[i] or "keep", theirs[i][1] or "keep"
            print(f"    {sources[i]}/{names[i]}: ours {ours_rule}, datatrove {their_rule}")
            print(f"        {reason}")
    both = [i for i in range(batch.n) if verdicts["c4"].passed[i] and reference["c4"][i][0]]
    same = sum(c4_texts[i] == reference["c4"][i][2] for i in both)
    shares["c4_text"] = same / max(len(both), 1)
    print(f"C4 edited texts identical: {same}/{len(both)} ({shares['c4_text']:.2%}) of the texts both keep")
    return shares


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--texts", type=Path, default=CACHE / "texts.parquet")
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--examples", type=int, default=4)
    p.add_argument("--refresh", action="store_true", help="extract the texts again")
    args = p.parse_args(argv)

    if args.refresh or not args.texts.exists():
        started = time.time()
        table = extract_texts(args.texts)
        print(f"extracted {table.num_rows} ok texts in {time.time() - started:.0f} s -> {args.texts}")
    table = pq.read_table(args.texts)
    sources = Counter("wcxb-dev" if s == "wcxb-dev" else "warc" for s in table.column("source").to_pylist())
    lengths = np.array([len(t) for t in table.column("text").to_pylist()])
    print(
        f"texts: {table.num_rows} ({sources['wcxb-dev']} wcxb-dev, {sources['warc']} WARC records); "
        f"characters per text: median {int(np.median(lengths))}, mean {int(lengths.mean())}"
    )

    from importlib.metadata import version

    texts = table.column("text").to_pylist()
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    cache = args.texts.with_name(f"datatrove-{version('datatrove')}-{digest}.pkl")
    reference = datatrove_verdicts(texts, cache)
    default = agreement(table, reference, spaceless_words=False, examples=args.examples)
    strict = agreement(table, reference, spaceless_words=True, examples=args.examples)

    print(f"\n## Cost, CPU ms per document ({table.num_rows} texts, mean {int(lengths.mean())} characters)")
    ours = our_pipeline_ms(table, args.batch)
    theirs_each = datatrove_pipeline_ms(texts)
    theirs = float(theirs_each.mean())
    few_kb = (lengths >= 2000) & (lengths < 5000)
    ours_few = our_pipeline_ms(table.filter(pa.array(few_kb)), args.batch)
    theirs_few = float(theirs_each[few_kb].mean())
    rows = (
        ("contentx apply_filters, fineweb preset", ours, ours_few),
        ("datatrove, the same four filters", theirs, theirs_few),
    )
    print(f"{'':40s} {'all texts':>10s} {'per 1,000 chars':>16s} {'2-5 KB texts':>13s}")
    for label, ms, ms_few in rows:
        print(f"{label:40s} {ms:10.3f} {ms * 1000 / lengths.mean():16.3f} {ms_few:13.3f}")
    print(f"(2-5 KB texts: {int(few_kb.sum())}, mean {int(lengths[few_kb].mean())} characters)")
    print(
        "RESULT "
        + " ".join(
            f"{name}={default[name]:.4f}/{strict[name]:.4f}/en:{default[name + '_en']:.4f}"
            for name in FILTERS
        )
        + f" c4_text={default['c4_text']:.4f}/{strict['c4_text']:.4f}"
        + f" ours_ms={ours:.3f} datatrove_ms={theirs:.3f} speedup={theirs / ours:.0f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
