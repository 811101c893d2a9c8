"""The corpus job's configuration: :class:`CorpusConfig` and its flags (pure, no Spark)."""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import dataclass, field

from ..errors import UserError
from ..runtime.console import add_verbose_flag
from ..settings import DEFAULT_METHOD, PAGE_TYPES
from ..text.language import parse_languages
from .formatters import FormatSettings
from .lines import MIN_CHARS, MIN_DOCS, SCOPES, LineSettings
from .minhash import NUM_PERM, WORD_RULES, MinHashParams, optimal_bands
from .quality.settings import DEFAULT_CONFIG, Settings, add_filter_arguments, filter_settings, is_active
from .scores import add_arguments as add_model_arguments
from .scores import model_options

DEDUP_MODES = ("none", "exact", "near")
KEEP_MODES = ("first", "longest")
#: Jaccard similarity from which two texts are near duplicates (the ``--near-threshold`` default).
NEAR_THRESHOLD = 0.8
#: Weights of the false-positive and false-negative areas when ``(bands, rows)`` is chosen for the
#: threshold, as datasketch's ``MinHashLSH`` weighs them (its defaults are 0.5 / 0.5).  A missed near
#: copy stays in the corpus, while a false candidate only joins texts that still share most of their
#: 5-grams (pairs of real pages below 0.5 almost never share a band), so misses weigh 0.9: for 0.8
#: and 112 hashes this picks 12 bands of 9 rows, close to FineWeb's 14 x 8 (README "Near duplicates").
FP_WEIGHT = 0.1
FN_WEIGHT = 0.9


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
    near_threshold: float = NEAR_THRESHOLD
    keep: str = "first"
    overwrite: bool = False
    #: earlier corpora: documents duplicating theirs are dropped as ``seen_before``
    against: list[str] = field(default_factory=list)
    #: leave out damaged Parquet files of the input tables (counted in the report)
    skip_damaged: bool = False
    #: MinHash: hashes per signature, and bands x rows (None: chosen for the threshold)
    num_perm: int = NUM_PERM
    bands: int | None = None
    rows: int | None = None
    #: keep a near-duplicate edge only when the two signatures agree on >= threshold of their hashes
    verify_edges: bool = False
    #: near dedup's words (:data:`.minhash.WORD_RULES`): ``segmented`` cuts scripts without spaces
    #: into dictionary words and sizes the shingles of Chinese, Japanese, Thai and Korean documents
    #: (``segmented-1``: 5 words for all); ``letters`` is the rule of corpora built before (runs of
    #: letters)
    near_words: str = "segmented"
    #: the quality filters (:mod:`.quality.settings`); None: none is on
    quality: Settings | None = None
    #: FineWeb-2's final touches on the written texts (:mod:`.formatters`; the filter settings'
    #: ``fix_encoding`` and ``symbol_lines``, on in the ``fineweb2`` preset)
    touches: FormatSettings = field(default_factory=FormatSettings)
    #: repeated lines across the crawl (:mod:`.lines`): removed before the quality filters
    line_dedup: bool = False
    line_dedup_scope: str = "host"
    line_dedup_min_docs: int = MIN_DOCS
    line_dedup_min_chars: int = MIN_CHARS
    #: write DIR/signals/ (every document's quality measures) and DIR/texts/ for ``contentx select``
    signals: bool = False
    #: ``--quality-model``: model name -> path (:mod:`.scores`), with ``--quality-label`` (name ->
    #: label; default :data:`.scores.DEFAULT_LABEL`) and ``--quality-min`` (name -> lowest score kept)
    quality_models: dict[str, str] = field(default_factory=dict)
    quality_labels: dict[str, str] = field(default_factory=dict)
    quality_min: dict[str, float] = field(default_factory=dict)
    #: ``--tokenizer``: a tokenizer.json; every document's ``token_count`` (:mod:`..text.tokens`)
    tokenizer: str | None = None
    #: ``--count-eos``: one more token per document (the end-of-document token)
    count_eos: bool = False
    #: the command line this configuration came from (:func:`config_from_argv`), kept with the
    #: signals so that ``contentx select`` rebuilds the same configuration with its changes
    argv: tuple[str, ...] = ()

    def lines(self) -> LineSettings | None:
        """The line dedup settings, or None when ``--line-dedup`` is off."""
        if not self.line_dedup:
            return None
        return LineSettings(
            min_chars=self.line_dedup_min_chars,
            min_docs=self.line_dedup_min_docs,
            scope=self.line_dedup_scope,
        )

    def minhash(self) -> MinHashParams:
        """The MinHash parameters of near dedup: ``--bands``/``--rows`` when given, else the
        ``(bands, rows)`` that :func:`optimal_bands` picks for the threshold."""
        words = WORD_RULES[self.near_words]
        if self.bands is not None and self.rows is not None:
            num_perm = max(self.num_perm, self.bands * self.rows)
            return MinHashParams(bands=self.bands, rows=self.rows, num_perm=num_perm, words=words)
        bands, rows = optimal_bands(self.near_threshold, self.num_perm, FP_WEIGHT, FN_WEIGHT)
        return MinHashParams(bands=bands, rows=rows, num_perm=self.num_perm, words=words)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="contentx corpus",
        description="Build a text corpus from extraction tables: filters, exact and near-duplicate "
        "removal, a report.",
    )
    p.add_argument(
        "--input", nargs="+", required=True, metavar="TABLE", help="extraction tables (Parquet dirs)"
    )
    p.add_argument(
        "--output", required=True, metavar="DIR", help="output directory (any Hadoop filesystem URI)"
    )
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
        default=NEAR_THRESHOLD,
        help="Jaccard similarity of word 5-gram sets at which two texts are near duplicates "
        f"(default {NEAR_THRESHOLD})",
    )
    p.add_argument(
        "--keep",
        choices=KEEP_MODES,
        default="first",
        help="which document of a duplicate cluster is kept: the first fetched or the longest "
        "(default first)",
    )
    p.add_argument(
        "--num-perm", type=int, default=NUM_PERM, help=f"MinHash hashes per document (default {NUM_PERM})"
    )
    p.add_argument(
        "--bands",
        type=int,
        default=None,
        help="LSH bands (with --rows; default: chosen for --near-threshold as datasketch does)",
    )
    p.add_argument("--rows", type=int, default=None, help="MinHash hashes per band (with --bands)")
    p.add_argument(
        "--verify-edges",
        action="store_true",
        help="keep a near-duplicate link only when the two signatures estimate a Jaccard similarity "
        "of at least --near-threshold",
    )
    p.add_argument(
        "--near-words",
        choices=tuple(WORD_RULES),
        default="segmented",
        help="near dedup's words: segmented (default; Chinese, Japanese, Thai, Lao, Khmer, Burmese "
        "and Tibetan cut into dictionary words, and Chinese, Japanese, Thai and Korean documents' "
        "shingles of as many words as span five English words), segmented-1 (the same words, 5-word "
        "shingles for all: the rule of corpora built in 2026-11) or letters (runs of letters and "
        "digits, the rule of corpora built before 2026-11: their near copies in those scripts match "
        "again)",
    )
    p.add_argument(
        "--against",
        nargs="+",
        default=[],
        metavar="CORPUS",
        help="earlier corpora: documents that duplicate theirs (exactly or nearly) are dropped as "
        "seen_before",
    )
    p.add_argument(
        "--skip-damaged",
        action="store_true",
        help="leave out damaged Parquet files of the input tables (counted in the report)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output written by contentx (a folder holding other files is refused)",
    )
    p.add_argument(
        "--signals",
        action="store_true",
        help="also write DIR/signals/ (every document's quality measures, its first failed filter, "
        "its near-duplicate cluster) and DIR/texts/ (every filtered document's text), so that "
        "`contentx select` re-cuts the corpus without recomputing (docs/curation.md)",
    )
    add_token_arguments(p)
    lines = p.add_argument_group("repeated lines across the crawl")
    lines.add_argument(
        "--line-dedup",
        action="store_true",
        help="remove lines (normalised: lowercase, digits as 0, whitespace left out) that occur in at least "
        "K distinct documents of the same host (or of the whole input), before the quality filters",
    )
    lines.add_argument(
        "--line-dedup-scope",
        choices=SCOPES,
        default=None,
        help="count a line's documents per host or over the whole input (default host, or the "
        "config's [line_dedup] scope)",
    )
    lines.add_argument(
        "--line-dedup-min-docs",
        type=int,
        default=None,
        metavar="K",
        help=f"remove a line found in at least K distinct documents (default {MIN_DOCS})",
    )
    lines.add_argument(
        "--line-dedup-min-chars",
        type=int,
        default=None,
        metavar="N",
        help=f"only lines of at least N normalised characters count (default {MIN_CHARS})",
    )
    add_filter_arguments(p)
    add_verbose_flag(p)
    add_model_arguments(p)
    return p


def add_token_arguments(p: argparse.ArgumentParser) -> None:
    """``--tokenizer`` and ``--count-eos`` (``contentx corpus`` and ``contentx select``)."""
    group = p.add_argument_group("token counts")
    group.add_argument(
        "--tokenizer",
        default=None,
        metavar="FILE",
        help="a Hugging Face tokenizers tokenizer.json: every document gets token_count = "
        "len(tokenizer.encode(text, add_special_tokens=False).ids), totalled per language, filter "
        "and bucket in the report (default: the config's [tokens] tokenizer; none)",
    )
    group.add_argument(
        "--count-eos",
        action="store_true",
        default=None,
        help="count one more token per document (the end-of-document token a trainer appends)",
    )


def load_table(path: str | None, name: str, keys: tuple[str, ...]) -> dict:
    """The ``[name]`` table of ``path`` (``--filter-config``; default ``conf/corpus.toml``)."""
    path = path or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh).get(name, {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # the filters' loader reports an unreadable file in one line
    if not isinstance(table, dict):
        raise UserError(f"{path}: [{name}] must be a table")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise UserError(f"{path}: unknown key(s) in [{name}]: {', '.join(unknown)}")
    return table


def token_options(args: argparse.Namespace) -> dict:
    """``tokenizer`` and ``count_eos``: the flag, else the config file's ``[tokens]``; the
    tokenizer file is read and checked here, on the driver, before any Spark work."""
    table = load_table(getattr(args, "filter_config", None), "tokens", ("tokenizer", "count_eos"))
    tokenizer = getattr(args, "tokenizer", None) or table.get("tokenizer") or None
    count_eos = getattr(args, "count_eos", None)
    count_eos = table.get("count_eos", False) if count_eos is None else count_eos
    if not isinstance(count_eos, bool):
        raise UserError(f"[tokens] count_eos must be true or false, got {count_eos!r}")
    if tokenizer is not None:
        if not isinstance(tokenizer, str):
            raise UserError(f"[tokens] tokenizer must be a file name, got {tokenizer!r}")
        from ..text.tokens import load_spec

        load_spec(tokenizer)
    elif count_eos:
        raise UserError("--count-eos counts tokens: it needs --tokenizer")
    return {"tokenizer": tokenizer, "count_eos": bool(count_eos)}


def load_config_table(path: str | None, name: str) -> dict:
    """The ``[name]`` table of ``path`` (``--filter-config``; default ``conf/corpus.toml``)."""
    path = path or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh).get(name, {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # the filters' loader reports an unreadable file in one line


def load_line_table(path: str | None) -> dict:
    """The ``[line_dedup]`` table of ``path`` (``--filter-config``; default ``conf/corpus.toml``)."""
    table = load_config_table(path, "line_dedup")
    if not isinstance(table, dict):
        raise UserError(f"{path}: [line_dedup] must be a table")
    unknown = sorted(set(table) - {"scope", "min_docs", "min_chars"})
    if unknown:
        raise UserError(f"{path}: unknown key(s) in [line_dedup]: {', '.join(unknown)}")
    return table


def line_options(args: argparse.Namespace) -> dict:
    """The ``line_dedup_*`` fields: the flag, else the config file's ``[line_dedup]``, else the default."""
    table = load_line_table(getattr(args, "filter_config", None))

    def pick(flag: str, key: str, default):
        value = getattr(args, flag, None)
        return value if value is not None else table.get(key, default)

    scope = pick("line_dedup_scope", "scope", "host")
    min_docs = pick("line_dedup_min_docs", "min_docs", MIN_DOCS)
    min_chars = pick("line_dedup_min_chars", "min_chars", MIN_CHARS)
    if scope not in SCOPES:
        raise UserError(f"--line-dedup-scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    if not isinstance(min_docs, int) or min_docs < 2:
        raise UserError(f"--line-dedup-min-docs must be an integer of at least 2, got {min_docs!r}")
    if not isinstance(min_chars, int) or min_chars < 1:
        raise UserError(f"--line-dedup-min-chars must be an integer of at least 1, got {min_chars!r}")
    return {
        "line_dedup": bool(getattr(args, "line_dedup", False)),
        "line_dedup_scope": scope,
        "line_dedup_min_docs": min_docs,
        "line_dedup_min_chars": min_chars,
    }


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
    if args.against and args.dedup == "none":
        raise UserError("--against compares documents with earlier corpora: it needs --dedup exact or near")
    if (args.bands is None) != (args.rows is None):
        raise UserError("--bands and --rows go together")
    for name in ("num_perm", "bands", "rows"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.bands is not None and args.bands * args.rows > 1024:
        raise UserError(f"--bands x --rows must be at most 1024, got {args.bands * args.rows}")
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
        against=list(args.against),
        skip_damaged=args.skip_damaged,
        num_perm=args.num_perm,
        bands=args.bands,
        rows=args.rows,
        verify_edges=args.verify_edges,
        near_words=args.near_words,
        quality=quality if is_active(quality := filter_settings(args)) else None,
        touches=FormatSettings(fix_encoding=quality.fix_encoding, symbol_lines=quality.symbol_lines),
        signals=getattr(args, "signals", False),
        **line_options(args),
        **model_options(
            args,
            load_config_table(getattr(args, "filter_config", None), "quality_models"),
            getattr(args, "filter_config", None) or str(DEFAULT_CONFIG),
        ),
        **token_options(args),
    )


def config_from_argv(argv) -> CorpusConfig:
    """The configuration of a ``contentx corpus`` command line (kept in ``argv``)."""
    config = build_config(build_parser().parse_args(list(argv)))
    config.argv = tuple(argv)
    return config
