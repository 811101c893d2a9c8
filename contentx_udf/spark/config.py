"""The job's configuration: :class:`JobConfig`, the TOML defaults, the command-line flags."""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..paths import CONF_DIR
from ..runtime.console import add_verbose_flag
from ..runtime.store import is_remote
from ..settings import CHOICES, DEFAULT_METHOD, METHODS, resolve_params

#: Default payload cut, as Common Crawl's own (it truncates payloads at 1 MiB).
DEFAULT_MAX_HTML_BYTES = 1_048_576


#: The extraction job's driver JVM only plans, schedules and gathers one statistics row per input
#: file (the Python workers read, extract and write): C1 only and the serial collector spare the
#: C2 compiler's and G1's threads, which took the two cores' time from the workers (docs/performance.md).
DEFAULT_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


#: :attr:`JobConfig.min_piece_bytes` (conf/extract.toml ``min_piece_bytes``).
DEFAULT_MIN_PIECE_BYTES = 1 << 20


@dataclass
class JobConfig:
    inputs: list[str]
    output: str
    methods: tuple[str, ...] = (DEFAULT_METHOD,)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    input_base_url: str | None = None
    resume: bool = False
    overwrite: bool = False
    num_partitions: int | None = None
    max_html_bytes: int = DEFAULT_MAX_HTML_BYTES
    files_per_batch: int = 0  # 0: all files in one batch
    rows_per_batch: int = 256  # Arrow batch size yielded by the workers
    worker_memory_mb: int = 2048  # address-space cap of each Python worker (0 = none)
    show_rows: int = 3
    writer: str = "auto"  # "arrow", "spark" or "auto" (arrow for local outputs)
    progress_seconds: int = 10  # driver prints "files done/total" this often (0 = never)
    #: fastText language-id model file on the driver (None: the bundled lid.176); shipped to the
    #: executors by the job (:func:`.job.ship_lid_model`)
    lid_model: str | None = None
    #: JVM options of the driver when the job launches it (local runs: the driver JVM is the
    #: executor too); see conf/extract.toml [job] driver_java_options
    driver_java_options: str = DEFAULT_DRIVER_JAVA_OPTIONS
    #: local gzip WARCs are cut into pieces of at least this many bytes where the task plan
    #: needs it to keep every core busy (:func:`.inputs.plan_tasks`); 0: every file is read whole
    min_piece_bytes: int = DEFAULT_MIN_PIECE_BYTES
    #: Spark's own console output (warnings, stage bars) shown (:mod:`.console`)
    verbose: bool = False


def parse_methods(value: str | Sequence[str]) -> tuple[str, ...]:
    names = [m.strip() for m in (value.split(",") if isinstance(value, str) else value) if m.strip()]
    if names == ["all"]:
        return METHODS
    if not names:
        raise UserError(f"no method given; valid methods: {', '.join(METHODS)} (or 'all')")
    for m in names:
        if m not in METHODS:
            raise UserError(f"unknown method {m!r}; valid methods: {', '.join(METHODS)} (or 'all')")
    return tuple(dict.fromkeys(names))


def load_toml(path: str | None) -> dict[str, Any]:
    if path is None:
        default = CONF_DIR / "extract.toml"
        if not default.exists():
            return {}
        path = str(default)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"config file {path} is not valid TOML: {exc}") from None


_CONFIG_KEYS = {
    "methods",
    "max_html_bytes",
    "num_partitions",
    "files_per_batch",
    "rows_per_batch",
    "input_base_url",
    "show_rows",
    "worker_memory_mb",
    "writer",
    "progress_seconds",
    "lid_model",
    "driver_java_options",
    "min_piece_bytes",
}

#: Who writes the Parquet files: the Python workers with pyarrow (local outputs), or
#: Spark's own writer (any Hadoop filesystem: HDFS, s3a, ...).
WRITERS = ("auto", "arrow", "spark")


def build_config(args: argparse.Namespace) -> JobConfig:
    """Config file values are defaults; command-line flags override them."""
    toml = load_toml(args.config)
    job = toml.get("job", {})
    if not isinstance(job, dict):
        raise UserError("config: [job] must be a table")
    unknown = set(job) - _CONFIG_KEYS
    if unknown:
        raise UserError(
            f"config: unknown key(s) in [job]: {', '.join(sorted(unknown))}; valid: "
            + ", ".join(sorted(_CONFIG_KEYS))
        )

    def pick(name: str, default: Any) -> Any:
        value = getattr(args, name, None)
        return value if value is not None else job.get(name, default)

    def positive_int(name: str, value: Any, allow_zero: bool = True) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
            raise UserError(
                f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}"
            )
        return value

    methods = parse_methods(pick("methods", DEFAULT_METHOD))
    params_table = toml.get("params", {})
    if not isinstance(params_table, dict):
        raise UserError("config: [params] must be a table of [params.<method>] tables")
    params: dict[str, dict[str, Any]] = {}
    for method, overrides in params_table.items():
        if method not in METHODS:
            raise UserError(f"config: [params.{method}]: unknown method; valid methods: {', '.join(METHODS)}")
        try:
            resolve_params(method, overrides)
        except ValueError as exc:
            raise UserError(f"config: {exc}") from None
        params[method] = dict(overrides)
    mode = getattr(args, "combined_mode", None)
    if mode is not None:
        params["combined"] = {**params.get("combined", {}), "mode": mode}
    if "combined" in methods or mode is not None:
        _check_combined(params.get("combined"))
    num_partitions = pick("num_partitions", None)
    if num_partitions is not None:
        positive_int("--num-partitions", num_partitions, allow_zero=False)
    if not args.input:
        raise UserError("no input given: pass --input PATH (files, directories, globs or a .paths listing)")
    if args.resume and args.overwrite:
        raise UserError("--resume and --overwrite exclude each other")
    writer = pick("writer", "auto")
    if writer not in WRITERS:
        raise UserError(f"--writer must be one of {', '.join(WRITERS)}, got {writer!r}")
    if writer == "arrow" and is_remote(args.output):
        raise UserError(
            f"--writer arrow writes local paths only; use --writer spark (or auto) for {args.output}"
        )
    lid_model = pick("lid_model", None) or None  # "" in the config file: the bundled model
    if lid_model is not None:
        check_lid_model(lid_model)
    return JobConfig(
        inputs=list(args.input),
        output=args.output,
        methods=methods,
        params=params,
        input_base_url=pick("input_base_url", None),
        resume=args.resume,
        overwrite=args.overwrite,
        num_partitions=num_partitions,
        max_html_bytes=positive_int("--max-html-bytes", pick("max_html_bytes", DEFAULT_MAX_HTML_BYTES)),
        files_per_batch=positive_int("--files-per-batch", pick("files_per_batch", 0)),
        rows_per_batch=positive_int("rows_per_batch", pick("rows_per_batch", 256), allow_zero=False),
        show_rows=positive_int("--show-rows", pick("show_rows", 3)),
        worker_memory_mb=positive_int("worker_memory_mb", job.get("worker_memory_mb", 2048)),
        writer=writer,
        progress_seconds=positive_int("--progress-seconds", pick("progress_seconds", 10)),
        lid_model=lid_model,
        driver_java_options=_java_options(job),
        min_piece_bytes=positive_int("min_piece_bytes", job.get("min_piece_bytes", DEFAULT_MIN_PIECE_BYTES)),
        verbose=bool(getattr(args, "verbose", False)),
    )


def configured_java_options(path: str | None = None) -> str:
    """The driver JVM options of the config file ``path`` (None: conf/extract.toml), as the job reads them."""
    return _java_options(load_toml(path).get("job", {}))


def _java_options(job: dict[str, Any]) -> str:
    """The ``[job]`` table's ``driver_java_options`` (default :data:`DEFAULT_DRIVER_JAVA_OPTIONS`)."""
    value = job.get("driver_java_options", DEFAULT_DRIVER_JAVA_OPTIONS)
    if not isinstance(value, str):
        raise UserError(f"driver_java_options must be a string of JVM options, got {value!r}")
    return value


def check_lid_model(path: Any) -> None:
    """A ``--lid-model`` that is not a readable fastText model file is one line (before any task)."""
    from ..text.language import check_model

    if not isinstance(path, str):
        raise UserError(f"lid_model must be a file path, got {path!r}")
    try:
        check_model(path)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _check_combined(overrides: dict[str, Any] | None) -> None:
    """``combined``'s parameters and its model (readable, with thresholds for the mode), checked
    before any task starts: one line instead of an error row per page."""
    from ..methods.combined import model_for

    try:
        model_for(resolve_params("combined", overrides))
    except ValueError as exc:
        raise UserError(f"combined: {exc}") from None


def output_writer(config: JobConfig) -> str:
    """``arrow`` or ``spark``: ``auto`` picks the workers' pyarrow writer for local outputs."""
    if config.writer == "auto":
        return "spark" if is_remote(config.output) else "arrow"
    return config.writer


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="contentx run",
        description="Extract the main text of the HTML pages in WARC files into a Parquet table.",
    )
    p.add_argument(
        "--input",
        required=True,
        nargs="+",
        metavar="PATH",
        help="WARC files, directories, globs, URLs (https://, s3a://) or a warc.paths[.gz] listing",
    )
    p.add_argument(
        "--input-base-url",
        default=None,
        help="prefix for the relative paths of a .paths listing (e.g. https://data.commoncrawl.org/)",
    )
    p.add_argument("--output", required=True, metavar="DIR", help="output directory of the Parquet table")
    p.add_argument(
        "--methods",
        default=None,
        help=f"comma-separated methods or 'all' (default: {DEFAULT_METHOD}); valid: {', '.join(METHODS)}",
    )
    p.add_argument("--config", default=None, help="job configuration (TOML; default conf/extract.toml)")
    p.add_argument(
        "--combined-mode",
        default=None,
        metavar="MODE",
        help=f"mode of combined ({' | '.join(CHOICES['combined', 'mode'])}; default balanced): precision "
        "keeps fewer wrong lines, as pretraining corpora want; overrides [params.combined] mode",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="add only the inputs not yet in an output written by contentx "
        "(a folder holding other files is refused)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output written by contentx (a folder holding other files is refused)",
    )
    p.add_argument(
        "--num-partitions",
        type=int,
        default=None,
        help="Spark tasks (default: small files packed up to spark.sql.files.maxPartitionBytes, "
        "at least two tasks per core)",
    )
    p.add_argument(
        "--max-html-bytes",
        type=int,
        default=None,
        help=f"cut HTML payloads at this size (default {DEFAULT_MAX_HTML_BYTES}; 0 = no cut)",
    )
    p.add_argument(
        "--files-per-batch",
        type=int,
        default=None,
        help="commit the output every N input files (default: all in one batch)",
    )
    p.add_argument("--show-rows", type=int, default=None, help="rows printed after the summary (default 3)")
    p.add_argument(
        "--progress-seconds",
        type=int,
        default=None,
        help="while a batch runs, print the files and records done, the rate and the time left every "
        "N seconds when stderr is not a terminal (on a terminal: one line, updated every second); "
        "default 10; 0 = never",
    )
    p.add_argument(
        "--lid-model",
        default=None,
        metavar="FILE",
        help="fastText language-id model on the driver, shipped to the executors (default: the "
        "bundled lid.176), e.g. GlotLID's model.bin: its labels without __label__ (deu_Latn) "
        "become the language column",
    )
    p.add_argument(
        "--writer",
        default=None,
        choices=WRITERS,
        help="who writes the Parquet files: the Python workers with pyarrow (arrow; local outputs), "
        "Spark (spark; any Hadoop filesystem) or auto (default: arrow for local outputs)",
    )
    add_verbose_flag(p)
    return p
