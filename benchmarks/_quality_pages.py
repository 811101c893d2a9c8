"""Shared by the quality-classifier benchmarks: the 1,678 real pages of ``../shared/data`` (WCXB dev
and scrapinghub) extracted with ``combined``, cached, and the training sets drawn from WCXB dev
(never from scrapinghub, never from a test split).

Training sets (``training_sets``): WCXB dev's ``combined`` extractions of its **article** pages
are the positives (``__label__hq``), those of its other page types (forum, product, collection,
listing, documentation, service) the negatives (``__label__cc``): a classifier of "reads like an
article" against the rest of the web, in the spirit of DCLM's classifier of instruction-like
text against random crawl text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SHARED = REPO.parent / "shared" / "data"
GOLDS = {"wcxb-dev": SHARED / "wcxb-dev", "scrapinghub": SHARED / "scrapinghub"}
DEFAULT_CACHE = Path("/tmp/contentx-bench/quality-pages.jsonl")


def extracted_pages(cache: Path = DEFAULT_CACHE) -> list[dict]:
    """``{source, id, page_type, text}`` of every page of the two gold sets, its text what
    ``combined`` extracts (empty where it extracts nothing); cached in ``cache`` (JSON lines)."""
    if cache.exists():
        return [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines()]
    from contentx_udf import extract
    from contentx_udf.evaluation import load_gold

    pages = []
    for source, path in GOLDS.items():
        if not path.exists():
            raise SystemExit(f"shared data not present: {path}")
        for page in load_gold(path):
            ex = extract(page.html, "combined", url=page.url)
            text = ex.text if ex.status == "ok" and ex.text else ""
            pages.append({"source": source, "id": page.id, "page_type": page.page_type, "text": text})
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pages), encoding="utf-8")
    tmp.replace(cache)
    return pages


def training_sets(pages: list[dict], directory: Path) -> tuple[Path, Path]:
    """``positive.jsonl`` (WCXB dev articles) and ``negative.jsonl`` (its other page types) in
    ``directory``, one ``{"text": ...}`` per non-empty extraction."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {True: [], False: []}
    for p in pages:
        if p["source"] == "wcxb-dev" and p["text"].strip():
            out[p["page_type"] == "article"].append(json.dumps({"text": p["text"]}, ensure_ascii=False))
    positive, negative = directory / "positive.jsonl", directory / "negative.jsonl"
    positive.write_text("\n".join(out[True]) + "\n", encoding="utf-8")
    negative.write_text("\n".join(out[False]) + "\n", encoding="utf-8")
    return positive, negative
