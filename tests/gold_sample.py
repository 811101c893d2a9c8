"""A sample of a WCXB gold set loaded without reading the rest of it (tests that score or compare a
fixed sample of WCXB dev: reading all 1,497 pages to keep 100 or 150 cost about 1.2 CPU-s each)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from contentx_udf.evaluation import GoldPage, load_gold


def wcxb_sample(root: Path, pick: Callable[[list[str]], list[str]]) -> list[GoldPage]:
    """What ``pick(load_gold(root))`` gives for a ``pick`` that chooses by position (a slice, a
    seeded ``random.sample``): ``pick`` gets the page ids in :func:`load_gold`'s order, and the pages
    it chooses are read, in its order, by :func:`load_gold` itself from a directory that links only
    their files (and ``metadata.json``)."""
    ids = [path.stem for path in sorted((root / "ground-truth").glob("*.json"))]  # (load_gold's order)
    chosen = pick(ids)
    with tempfile.TemporaryDirectory(prefix="wcxb-sample-") as tmp:
        sample = Path(tmp)
        for folder in ("ground-truth", "html"):
            (sample / folder).mkdir()
        if (root / "metadata.json").exists():
            os.symlink(root / "metadata.json", sample / "metadata.json")
        for page_id in chosen:
            os.symlink(root / "ground-truth" / f"{page_id}.json", sample / "ground-truth" / f"{page_id}.json")
            os.symlink(root / "html" / f"{page_id}.html.gz", sample / "html" / f"{page_id}.html.gz")
        pages = {page.id: page for page in load_gold(sample)}
    return [pages[page_id] for page_id in chosen]
