"""The ``contentx`` command line: ``evaluate``, ``extract``, ``train``, ``run`` (Spark job), ``corpus``.

User errors (missing file, unknown method, bad gold set) print one line on stderr and exit with 2.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import commands
from .errors import UserError

PROG = "contentx"


class _CommandList(argparse.HelpFormatter):
    """``contentx --help``: each command and its help on one line (argparse measures the commands
    one indent short and puts a long name's help on a line of its own)."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        self._action_max_length += 2 if isinstance(action, argparse._SubParsersAction) else 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Web crawls (WARC files) into clean text corpora: `run` extracts the main text "
        "of every page into a Parquet table, `corpus` filters and deduplicates it, `select` re-cuts "
        "a corpus, `export` writes it for training; `extract`, `evaluate` and `train` work on single pages "
        "and gold sets.",
        epilog=f"`{PROG} COMMAND --help` shows a command's options.",
        formatter_class=_CommandList,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="score extraction methods against a gold set",
        description="Score extraction methods against a gold set and print a table "
        "(the full-text baseline is always included).",
    )
    ev.add_argument(
        "--gold", required=True, type=Path, help="scrapinghub or WCXB layout, or a NAME.html+NAME.txt dir"
    )
    ev.add_argument("--methods", default="all", help="comma-separated method names, or 'all' (default)")
    ev.add_argument("--json", dest="json_out", type=Path, metavar="OUT", help="also write results as JSON")
    ev.add_argument("--limit", type=int, metavar="N", help="only the first N pages (sorted by id)")
    ev.add_argument("--bootstrap", type=int, default=0, metavar="N", help="bootstrap resamples for ± std")
    ev.add_argument(
        "--folds",
        type=int,
        metavar="K",
        help="also score `combined` by K-fold cross-validation on this gold set: folds grouped by "
        "domain, the model retrained per fold (needs the `train` extra)",
    )
    ev.add_argument("--seed", type=int, default=0, help="seed of the folds and the models (with --folds)")
    ev.add_argument(
        "--modes",
        default="balanced",
        metavar="LIST",
        help="comma-separated modes of `combined` to score: balanced (default), precision, recall; "
        "each mode but balanced adds a row `combined MODE` (and one to --folds)",
    )

    ex = sub.add_parser(
        "extract",
        help="extract the main text of one saved page",
        description="Extract the main text of a saved page (plain or gzip). "
        "Exit code 1 if the extractor reports an error (not for an empty result: status 'empty').",
    )
    ex.add_argument("file", type=Path, metavar="FILE")
    ex.add_argument("--method", help="method name (default: the library's DEFAULT_METHOD), or full-text")
    ex.add_argument("--json", action="store_true", help="print {method, title, text, scores, status, error}")
    ex.add_argument("--content-type", help="HTTP Content-Type of the page (for the charset)")
    ex.add_argument("--url", help="URL of the page")
    ex.add_argument(
        "--mode",
        help="mode of `combined`: balanced (default), precision (fewer wrong lines, more missed) or recall",
    )

    tr = sub.add_parser(
        "train",
        help="train the combined method's block classifier",
        description="Train the block classifier of the `combined` method on labelled pages (WCXB, "
        "scrapinghub or NAME.html+NAME.txt layout) and write the model file. Needs the `train` "
        "extra (CatBoost). The same gold sets and seed give the same model.",
    )
    tr.add_argument(
        "--gold", required=True, nargs="+", type=Path, metavar="DIR", help="gold sets to train on"
    )
    tr.add_argument("--out", required=True, type=Path, metavar="FILE", help="model file to write (.npz)")
    tr.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    tr.add_argument("--iterations", type=int, help="boosting rounds (default: training.TRAIN_PARAMS)")
    tr.add_argument(
        "--threshold",
        type=float,
        help="one decision threshold for every page (default: per page type; 0.45 without page types)",
    )
    tr.add_argument("--processes", type=int, help="processes computing features (default: cores)")

    sub.add_parser(
        "run",
        help="extract the main text of WARC files into a table",
        add_help=False,
    )
    sub.add_parser(
        "corpus",
        help="filter and deduplicate extraction tables into a corpus",
        add_help=False,
    )
    sub.add_parser(
        "select",
        help="re-cut a corpus built with --signals (no rebuild)",
        add_help=False,
    )
    sub.add_parser(
        "train-quality",
        help="train a fastText quality classifier",
        add_help=False,
    )
    sub.add_parser(
        "export",
        help="write a corpus as Parquet, JSON Lines or datatrove shards",
        add_help=False,
    )
    ja = sub.add_parser(
        "jvm-archive",
        help="write the JVM class archive that starts jobs faster",
        description="Write the driver JVM's class archive (Java's AppCDS) for this Java and Spark: "
        "a small run of every job in one JVM, about a minute; jobs started by contentx map it and "
        "start about 4 s sooner. Kept in $CONTENTX_JVM_ARCHIVE or ~/.cache/contentx/jvm "
        "(CONTENTX_JVM_ARCHIVE=off: never used).",
    )
    ja.add_argument("--if-missing", action="store_true", help="do nothing when this Java and Spark have one")
    return parser


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every ``contentx`` subcommand's parser by name, in the order of ``contentx --help``; the jobs'
    (``run``, ``corpus``, ``select``: :data:`.commands.JOBS`) are their own parsers. The manual's
    command reference is generated from these (``docs/hooks/reference.py``)."""
    sub = next(a for a in _build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: commands.parser_of(name) if name in commands.JOBS else parser
        for name, parser in sub.choices.items()
    }


def _read_page(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise UserError(f"no such file: {path}") from e
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from e
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise UserError(f"{path}: broken gzip data: {e}") from e
    return data


def _cmd_extract(args: argparse.Namespace) -> int:
    from contentx_udf import evaluation

    html = _read_page(args.file)
    if args.method == evaluation.FULL_TEXT:
        text = evaluation.full_text(html)
        out = {
            "method": args.method,
            "title": None,
            "text": text,
            "scores": {},
            "status": "ok",
            "error": None,
        }
    else:
        from contentx_udf import extract

        try:
            method = {} if args.method is None else {"method": args.method}
            mode = {} if args.mode is None else {"mode": args.mode}
            if mode and args.method not in (None, "combined"):
                raise UserError(f"--mode applies to the combined method, not {args.method}")
            res = extract(html, **method, **mode, url=args.url, content_type=args.content_type)
        except ValueError as e:  # the library's "unknown method ...; valid: ..." message
            raise UserError(str(e)) from e
        out = {
            "method": res.method,
            "title": res.title,
            "text": res.text,
            "scores": dict(res.scores or {}),
            "status": res.status,
            "error": res.error,
        }
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        if out["text"]:
            print(out["text"])
        if out["status"] == "empty":
            print(f"{PROG} extract: empty: {out['error']}", file=sys.stderr)
        elif out["status"] != "ok":
            print(f"{PROG} extract: extraction error: {out['error']}", file=sys.stderr)
    return 1 if out["status"] == "error" else 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from contentx_udf import evaluation

    if args.limit is not None and args.limit < 1:
        raise UserError("--limit must be at least 1")
    modes = _modes(args.modes)
    if args.json_out is not None and not args.json_out.resolve().parent.is_dir():
        raise UserError(f"cannot write {args.json_out}: no such directory")
    try:
        methods = evaluation.resolve_methods(args.methods)
        pages = evaluation.load_gold(args.gold)
    except ValueError as e:
        raise UserError(str(e)) from e
    if evaluation.FULL_TEXT not in methods:
        methods.insert(0, evaluation.FULL_TEXT)  # the table always shows the baseline
    if args.limit is not None:
        pages = pages[: args.limit]
    if args.folds is not None and args.folds < 2:
        raise UserError("--folds must be at least 2")
    results = evaluation.evaluate(pages, methods, n_bootstrap=args.bootstrap)
    if "combined" in methods:  # its row is the balanced mode; each other mode adds one
        for mode in (m for m in modes if m != "balanced"):
            runs = evaluation.run_method(pages, "combined", params={"mode": mode})
            results.append(evaluation.score_runs(pages, f"combined {mode}", runs, n_bootstrap=args.bootstrap))
    if args.folds is not None:
        results += _cross_validated(pages, args.folds, args.seed, args.bootstrap, modes)
    print(evaluation.format_table(results), end="")
    if args.json_out is not None:
        payload = {"gold": str(args.gold), "n_pages": len(pages), "results": [r.to_dict() for r in results]}
        try:
            args.json_out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot write {args.json_out}: {e.strerror or e}") from e
    return 0


def _modes(text: str) -> list[str]:
    """The ``--modes`` list, checked (balanced first when named)."""
    from contentx_udf.settings import CHOICES

    valid = CHOICES["combined", "mode"]
    modes = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    unknown = [m for m in modes if m not in valid]
    if not modes or unknown:
        named = ", ".join(unknown) or "(none)"
        raise UserError(f"--modes: unknown mode(s) {named}; valid: {', '.join(valid)}")
    return sorted(modes, key=valid.index)


def _cross_validated(pages, folds: int, seed: int, n_bootstrap: int, modes: list[str]):
    """``combined`` in each of ``modes`` scored by grouped K-fold cross-validation (each page by a
    model that saw no page of its site)."""
    from contentx_udf import training

    def say(line: str) -> None:
        print(f"{PROG} evaluate: {line}", file=sys.stderr, flush=True)

    try:
        return training.cross_validated_result(
            pages,
            folds,
            seed=seed,
            threads=os.cpu_count() or 1,
            progress=say,
            n_bootstrap=n_bootstrap,
            modes=modes,
        )
    except (ValueError, RuntimeError) as e:
        raise UserError(str(e)) from e


def _cmd_train(args: argparse.Namespace) -> int:
    from contentx_udf import training

    if not args.out.resolve().parent.is_dir():
        raise UserError(f"cannot write {args.out}: no such directory")
    if args.iterations is not None and args.iterations < 1:
        raise UserError("--iterations must be at least 1")
    if args.threshold is not None and not 0 < args.threshold < 1:
        raise UserError("--threshold must be between 0 and 1")
    params = {} if args.iterations is None else {"iterations": args.iterations}
    try:
        model = training.train_from_gold(
            args.gold,
            args.out,
            seed=args.seed,
            params=params,
            threshold=args.threshold,
            processes=args.processes,
            progress=lambda line: print(f"{PROG} train: {line}", file=sys.stderr, flush=True),
        )
    except (ValueError, RuntimeError) as e:
        raise UserError(str(e)) from e
    info = model.info
    types = model.page_types
    page_types = f"; page types {', '.join(types.classes)} ({types.trees} trees)" if types else ""
    print(
        f"wrote {args.out}: {model.trees} trees of depth {model.depth}, {len(model.feature_names)} features, "
        f"trained on {info['pages']} pages ({info['blocks']} blocks) of {', '.join(info['trained_on'])}, "
        f"seed {info['seed']}{page_types}"
    )
    return 0


def _cmd_jvm_archive(args: argparse.Namespace) -> int:
    from . import jvm_archive
    from .runtime import class_archive

    if args.if_missing and class_archive.existing() is not None:
        return 0
    where = class_archive.archive_dir()
    print(
        f"{PROG} jvm-archive: writing the driver JVM's class archive for this Java and Spark into "
        f"{where} (about 185 MiB, once; about a minute; CONTENTX_JVM_ARCHIVE=off: never)",
        file=sys.stderr,
    )
    jvm_archive.create()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``contentx`` / ``python -m contentx_udf``; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] and args_list[0] in commands.JOBS:
        # Everything after a job's name belongs to the job, options included: no parsing here
        # (its module is imported on use: `extract` and `evaluate` never load a job).
        return commands.main_of(args_list[0])(args_list[1:])
    parser = _build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # --help (0) or a usage error (2, message already printed)
        return e.code if isinstance(e.code, int) else 2
    try:
        if args.command == "extract":
            return _cmd_extract(args)
        if args.command == "train":
            return _cmd_train(args)
        if args.command == "jvm-archive":
            return _cmd_jvm_archive(args)
        return _cmd_evaluate(args)
    except UserError as e:
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `contentx extract page.html | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
