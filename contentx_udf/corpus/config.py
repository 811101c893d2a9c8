"""The corpus job's configuration: :class:`CorpusConfig` and its flags (pure, no Spark)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..errors import UserError
from ..evaluation import PAGE_TYPES
from ..settings import DEFAULT_METHOD
from .language import parse_languages

DEDUP_MODES = ("none", "exact", "near")
KEEP_MODES = ("first", "longest")
#: Words per shingle of the near-duplicate MinHash (as CCNet / FineWeb use 5-grams).
SHINGLE_WORDS = 5
#: MinHashLSH hash tables: a pair with Jaccard similarity s is a candidate with probability
#: 1 - (1 - s)^T (0.99999 for s = 0.8); candidates are then checked on their exact Jaccard distance.
HASH_TABLES = 8


@dataclass
class CorpusConfig:
    inputs: list[str]
    output: str
    method: str = DEFAULT_METHOD
    languages: tuple[str, ...] | None = None
    min_chars: int = 0
    min_confidence: float | None = None
    page_types: tuple[str, ...] | None = None
    dedup: str = "near"
    near_threshold: float = 0.8
    keep: str = "first"
    overwrite: bool = False


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="build_corpus",
        description="Build a text corpus from extraction tables: filters, exact and near-duplicate "
        "removal, a report.",
    )
    p.add_argument(
        "--input", nargs="+", required=True, metavar="TABLE", help="extraction tables (Parquet dirs)"
    )
    p.add_argument("--output", required=True, metavar="DIR", help="local output directory")
    p.add_argument(
        "--method", default=DEFAULT_METHOD, help=f"extraction method to take (default {DEFAULT_METHOD})"
    )
    p.add_argument("--languages", default=None, help="keep only these languages, e.g. en,de (default: all)")
    p.add_argument(
        "--min-chars", type=int, default=0, help="drop texts shorter than N characters (default 0)"
    )
    p.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        help="drop rows whose scores['content_confidence'] (the combined method's) is below X; "
        "rows without that score pass",
    )
    p.add_argument(
        "--page-types",
        default=None,
        help=f"keep only pages whose most probable type (the combined method's page_type_* scores) is "
        f"one of these, e.g. article,forum; of {','.join(PAGE_TYPES)}; rows without those scores pass",
    )
    p.add_argument("--dedup", choices=DEDUP_MODES, default="near", help="duplicate removal (default near)")
    p.add_argument(
        "--near-threshold",
        type=float,
        default=0.8,
        help="Jaccard similarity of word 5-gram sets at which two texts are near duplicates (default 0.8)",
    )
    p.add_argument(
        "--keep",
        choices=KEEP_MODES,
        default="first",
        help="which document of a duplicate cluster is kept: the first fetched or the longest "
        "(default first)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    return p


def build_config(args: argparse.Namespace) -> CorpusConfig:
    try:
        languages = parse_languages(args.languages)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.min_chars < 0:
        raise UserError(f"--min-chars must be non-negative, got {args.min_chars}")
    if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
        raise UserError(f"--min-confidence must be between 0 and 1, got {args.min_confidence}")
    page_types = None
    if args.page_types is not None:
        page_types = tuple(dict.fromkeys(t.strip().lower() for t in args.page_types.split(",") if t.strip()))
        unknown = [t for t in page_types if t not in PAGE_TYPES]
        if unknown or not page_types:
            raise UserError(
                f"--page-types: unknown page type(s) {unknown or args.page_types!r}; known: "
                f"{', '.join(PAGE_TYPES)}"
            )
    if not 0 < args.near_threshold <= 1:
        raise UserError(f"--near-threshold must be in (0, 1], got {args.near_threshold}")
    return CorpusConfig(
        inputs=list(args.input),
        output=args.output,
        method=args.method,
        languages=languages,
        min_chars=args.min_chars,
        min_confidence=args.min_confidence,
        page_types=page_types,
        dedup=args.dedup,
        near_threshold=args.near_threshold,
        keep=args.keep,
        overwrite=args.overwrite,
    )
