"""The corpus report: ``_report.json``, ``report.md`` and its PNG plots.

The job gathers small aggregates (counts per language, per length bin, per host, per cluster
size, per drop reason, an example per filter) and hands them here as plain dicts; the files are
written through a store (Hadoop's FileSystem: any filesystem the output is on), never with
``open()``.  Plots need matplotlib (the ``report`` extra): without it the report is written with
its tables only and says so.
"""

from __future__ import annotations

import copy
import io
import json
import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Protocol

from .by_language import TOP_LANGUAGES
from .by_language import markdown as by_language_markdown
from .scores import cuts_markdown
from .scores import markdown as scores_markdown


class Store(Protocol):
    """Where the report goes (:data:`contentx_udf.runtime.store.Store`)."""

    def write_text(self, text: str, *parts: str) -> None: ...

    def write_bytes(self, data: bytes, *parts: str) -> None: ...


#: Upper bounds of the text-length histogram's bins (characters); the last bin is open.
LENGTH_BINS = (200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000)


def near_words_line(minhash: dict[str, Any] | None) -> str | None:
    """What ``--against`` can match given the corpus's near-dedup word rule (None: no near dedup)."""
    if not minhash:
        return None
    from .minhash import NO_SPACE_SCRIPTS, SHINGLE_LANGUAGES, words_of

    words = words_of(minhash)
    return (
        f"near-dedup words: {words}; a later --against finds near copies of every text in corpora "
        f"built with {words}, and in corpora built with another word rule (before 2026-11: letters; "
        f"2026-11: segmented-1) of all but texts with {NO_SPACE_SCRIPTS} characters and documents "
        f"labelled {SHINGLE_LANGUAGES}"
    )


def length_bin_labels() -> list[str]:
    labels, low = [], 0
    for high in LENGTH_BINS:
        labels.append(f"{low}-{high - 1}")
        low = high
    labels.append(f"{low}+")
    return labels


def preload_plots() -> None:
    """Import matplotlib's object API and Agg canvas (about half a second of the driver's CPU) in a
    background thread, while the job waits on Spark, so the plots do not wait for it
    (:func:`render_plots` imports them again: a no-op, or a wait on the import under way)."""
    import threading

    def load() -> None:
        try:
            import matplotlib.backends.backend_agg  # noqa: F401
            import matplotlib.figure  # noqa: F401
        except ImportError:
            pass  # no plots: write_report says so

    threading.Thread(target=load, name="contentx-preload-plots", daemon=True).start()


#: The report entries the plots read (all known once the kept documents are counted).
PLOT_ENTRIES = (
    "languages",
    "text_length_histogram",
    "dropped",
    "input_rows",
    "kept",
    "top_hosts",
    "cluster_sizes",
)


#: How many distinct sets of plotted entries keep their plots in a process (:func:`render_plots`)
DRAWN_KEPT = 8
_drawn: OrderedDict[str, tuple[tuple[str, bytes], ...]] = OrderedDict()
_drawn_lock = threading.Lock()


def render_plots(report: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The report's PNG plots, ``(file name, bytes)``, from its :data:`PLOT_ENTRIES`.  matplotlib's
    object API only (no pyplot state), so a background thread may draw them while the job still
    counts (:func:`start_plots`).  Raises ImportError without matplotlib.

    The plots are a function of those entries alone, so a process that builds several corpora (a
    notebook's re-cuts, the test suite's session) draws the same entries once: the last
    :data:`DRAWN_KEPT` distinct ones keep their plots (about half a second of CPU each)."""
    key = json.dumps([report[name] for name in PLOT_ENTRIES], default=str)
    with _drawn_lock:
        drawn = _drawn.get(key)
    if drawn is None:
        drawn = tuple(_draw_plots(report))
        with _drawn_lock:
            _drawn[key] = drawn
            while len(_drawn) > DRAWN_KEPT:
                _drawn.popitem(last=False)
    return list(drawn)


def _draw_plots(report: dict[str, Any]) -> list[tuple[str, bytes]]:
    """:func:`render_plots` without the memory: matplotlib draws each figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    made: list[tuple[str, bytes]] = []

    def figure(width: float, height: float) -> Figure:
        fig = Figure(figsize=(width, height))
        FigureCanvasAgg(fig)
        return fig

    def save(fig: Figure, name: str) -> None:
        fig.tight_layout()
        # tight_layout() leaves matplotlib's inert layout engine on the figure (its class is
        # PlaceholderLayoutEngine), and savefig() lays out any figure that has an engine once more
        # before drawing it. The layout is final here, so the engine is removed: the PNG's bytes
        # are the same, and a report's plots cost 15 % less CPU.
        fig.set_layout_engine(None)
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=90)
        made.append((name, png.getvalue()))

    langs = report["languages"][:25]
    fig = figure(11, 4)
    axes = fig.subplots(1, 2)
    axes[0].bar([x["language"] for x in langs], [x["documents"] for x in langs])
    axes[0].set_title("documents per language")
    axes[1].bar([x["language"] for x in langs], [x["characters"] for x in langs], color="tab:orange")
    axes[1].set_title("characters per language")
    for ax in axes:
        ax.tick_params(axis="x", rotation=60)
    save(fig, "languages.png")

    fig = figure(8, 4)
    ax = fig.subplots()
    hist = report["text_length_histogram"]
    ax.bar(list(hist), list(hist.values()))
    ax.set_title("text length (characters) of kept documents")
    ax.tick_params(axis="x", rotation=45)
    save(fig, "text_length.png")

    fig = figure(8, 3.5)
    ax = fig.subplots()
    ax.barh(list(report["dropped"]), list(report["dropped"].values()), color="tab:red")
    ax.set_title(f"documents dropped (input {report['input_rows']}, kept {report['kept']})")
    ax.invert_yaxis()
    save(fig, "dropped.png")

    hosts = report["top_hosts"][:20]
    fig = figure(8, max(2.5, 0.3 * len(hosts)))
    ax = fig.subplots()
    ax.barh([h["host"] or "(none)" for h in hosts], [h["documents"] for h in hosts])
    ax.set_title("top hosts (kept documents)")
    ax.invert_yaxis()
    save(fig, "hosts.png")

    sizes = report["cluster_sizes"]
    fig = figure(8, 3.5)
    ax = fig.subplots()
    ax.bar([str(k) for k in sizes], list(sizes.values()), color="tab:green")
    ax.set_yscale("log")
    ax.set_title("duplicate-cluster size of kept documents (1 = no duplicate)")
    save(fig, "cluster_sizes.png")
    return made


def start_plots(entries: dict[str, Any]) -> Future:
    """:func:`render_plots` of ``entries`` in a background thread: the job's last counting jobs
    run meanwhile (the driver mostly waits on Spark there), and :func:`write_report` takes the
    result.  ``entries`` are copied, so the caller may go on changing its own."""
    from ..runtime import background

    data = copy.deepcopy({k: entries[k] for k in PLOT_ENTRIES})
    # (an ImportError, no matplotlib, or a plotting error: raised by the future's result())
    return background.start(None, lambda: render_plots(data), "contentx-plots")


def _markdown(report: dict[str, Any]) -> str:
    c = report["config"]
    recut = recut_lines(report)
    out = [
        "# Corpus report: a re-cut" if recut else "# Corpus report",
        "",
        *(line[0].upper() + line[1:] + "  " for line in recut),
        f"Inputs: {', '.join(c['inputs'])}  ",
        f"Method `{c['method']}`, languages {', '.join(c['languages'] or ['all'])}, "
        f"min chars {c['min_chars']}, "
        f"min confidence {c['min_confidence']}, page types {', '.join(c['page_types'] or ['all'])}, "
        f"dedup `{c['dedup']}` (J = {c['near_threshold']}"
        + (f"; MinHash {m['bands']} bands x {m['rows']} rows" if (m := report.get("minhash")) else "")
        + f"), keep `{c['keep']}`  ",
        *([f"Against: {', '.join(c['against'])}  "] if c.get("against") else []),
        f"Quality filters: `{(report.get('filters') or {}).get('preset', 'none')}`"
        + (", PII masked" if (report.get("filters") or {}).get("mask_pii") else "")
        + "  ",
        f"Elapsed {report['elapsed_seconds']} s, {report['records_per_second']} input rows/s",
        "",
        "## Documents",
        "",
        "| | documents |",
        "|---|---:|",
        f"| input rows ({c['method']}) | {report['input_rows']} |",
    ]
    out += [f"| dropped: {k} | {v} |" for k, v in report["dropped"].items()]
    out += [f"| **kept** | **{report['kept']}** |", "", f"Kept characters: {report['kept_characters']}", ""]
    out += tokens_markdown(report)
    if words := near_words_line(report.get("minhash")):
        out += [f"{words[0].upper()}{words[1:]}.  "]
    for note in report.get("notes") or []:
        out += [f"Note: {note}  "]
    if report.get("damaged_files"):
        files = report["damaged_files"]
        rows = sum(d["rows"] or 0 for d in files)
        out += [
            f"Damaged input files left out (--skip-damaged): {len(files)} file(s), at least {rows} row(s):",
            "",
        ]
        out += [
            f"* `{d['path']}`: {d['reason']} ({d['rows'] if d['rows'] is not None else '?'} rows)"
            for d in files
        ]
        out += [""]
    if report.get("pii_masked") and any(report["pii_masked"].values()) or report.get("c4_lines_removed"):
        pii = report.get("pii_masked") or {}
        out += [
            f"Edits of kept texts: {pii.get('emails', 0)} email(s) and {pii.get('ips', 0)} IP address(es) "
            f"masked; {report.get('c4_lines_removed', 0)} line(s) removed by the C4 line filter",
            "",
        ]
    out += _line_dedup_markdown(report.get("line_dedup"))
    out += _final_touches_markdown(report.get("final_touches"))
    if report["plots"]:
        out += [f"![{p}]({p})" for p in report["plots"]] + [""]
    else:
        out += [f"_No plots: {report['plots_note']}_", ""]
    if report.get("examples"):
        out += ["## What each filter removed (one example)", ""]
        out += ["| filter | URL | text (first 200 characters) |", "|---|---|---|"]
        for name, example in report["examples"].items():
            text = (example.get("text") or "").replace("\n", " ").replace("|", "\\|")
            out += [f"| {name} | {example.get('url') or ''} | {text} |"]
        out += [""]
    if report.get("dropped_rules"):
        out += ["## Rules that dropped documents", "", "| filter | rule | documents |", "|---|---|---:|"]
        out += [f"| {r['filter']} | {r['rule']} | {r['documents']} |" for r in report["dropped_rules"]]
        out += [""]
    out += _sensitivity_markdown(report.get("sensitivity"))
    out += cuts_markdown(report.get("quality_cuts"))
    out += scores_markdown(report.get("quality_scores"))
    out += by_language_markdown(report.get("by_language") or [])
    out += ["## Text length", "", "| characters | documents |", "|---|---:|"]
    out += [f"| {k} | {v} |" for k, v in report["text_length_histogram"].items()]
    out += ["", "## Top hosts", "", "| host | documents |", "|---|---:|"]
    out += [f"| {h['host']} | {h['documents']} |" for h in report["top_hosts"]]
    out += ["", "## Duplicate clusters", "", "| cluster size | kept documents |", "|---:|---:|"]
    out += [f"| {k} | {v} |" for k, v in report["cluster_sizes"].items()]
    return "\n".join(out) + "\n"


def tokens_markdown(report: dict[str, Any]) -> list[str]:
    """The report.md section of ``--tokenizer``: the tokenizer, tokens kept and dropped per filter
    and per language."""
    tokenizer = report.get("tokenizer")
    if not tokenizer:
        return []
    out = [
        "## Tokens",
        "",
        f"Tokenizer `{tokenizer['path']}` (SHA-256 `{tokenizer['sha256'][:16]}...`, vocabulary "
        f"{tokenizer['vocab_size']}); a document's count is `{tokenizer['count']}`.",
        "",
        "| | tokens |",
        "|---|---:|",
        f"| input | {report['input_tokens']} |",
        *(f"| dropped: {k} | {v} |" for k, v in report["dropped_tokens"].items() if v),
        f"| **kept** | **{report['kept_tokens']}** |",
        "",
        "| language | documents kept | tokens kept | tokens dropped |",
        "|---|---:|---:|---:|",
    ]
    for r in report.get("by_language", [])[:TOP_LANGUAGES]:
        t = r.get("tokens", {})
        out.append(
            f"| {r['language'] or '(none)'} | {r['kept']} | {t.get('kept', 0)} | "
            f"{sum(t.get('dropped', {}).values())} |"
        )
    return [*out, ""]


def _cell(text: str | None) -> str:
    return (text or "").replace("\n", " ").replace("|", "\\|")


def _sensitivity_markdown(rows: list[dict[str, Any]] | None) -> list[str]:
    """The sensitivity table (``--signals`` and ``select``): documents each rule alone drops at
    thresholds around the chosen one (x1: the chosen threshold, in bold)."""
    if not rows:
        return []
    factors = [p["factor"] for p in rows[0]["points"]]
    out = [
        "## Sensitivity: documents each rule alone drops at thresholds around the chosen one",
        "",
        f"Read from the signals: {rows[0]['documents']} documents the quality filters measured; a rule "
        "counted alone, whatever the other rules decide.",
        "",
        "| filter | rule | " + " | ".join(f"x{f:g}" for f in factors) + " |",
        "|---|---|" + "---:|" * len(factors),
    ]
    for r in rows:
        cells = [
            (
                f"**{p['dropped']}** (at {p['threshold']:g})"
                if p["factor"] == 1
                else f"{p['dropped']} ({p['threshold']:g})"
            )
            for p in r["points"]
        ]
        out.append(f"| {r['filter']} | {r['rule']} | " + " | ".join(cells) + " |")
    return out + [""]


def touches_line(touches: dict[str, Any] | None) -> str | None:
    """One line on FineWeb-2's final touches (``--fix-encoding``, ``--symbol-lines``), or None."""
    if not touches:
        return None
    parts = []
    if touches["fix_encoding"]:
        parts.append(
            f"encoding repaired in {touches['encoding_fixed']} (ftfy run on {touches['sent_to_ftfy']} the "
            "pre-check found suspicious)"
        )
    if touches["symbol_lines"]:
        parts.append(f"symbol lines made paragraph breaks in {touches['symbol_lines_changed']}")
    return (
        f"final touches: {touches['changed']} of {touches['documents']} written documents changed; "
        + "; ".join(parts)
    )


def _final_touches_markdown(touches: dict[str, Any] | None) -> list[str]:
    """The final touches' section: counts and the examples of each change."""
    line = touches_line(touches)
    if line is None:
        return []
    out = ["## Final touches (FineWeb-2's formatters, after dedup)", "", line[0].upper() + line[1:] + ".", ""]
    rows = [
        (kind, e)
        for kind, key in (("encoding", "encoding_examples"), ("symbol lines", "symbol_lines_examples"))
        for e in touches.get(key) or []
    ]
    if rows:
        out += ["| change | URL | before → after |", "|---|---|---|"]
        out += [f"| {kind} | {e['url'] or ''} | {_cell(e['change'])} |" for kind, e in rows]
        out += [""]
    return out


def _line_dedup_markdown(lines: dict[str, Any] | None) -> list[str]:
    """The ``--line-dedup`` section: totals, the hosts that lost most lines, common removed lines."""
    if not lines:
        return []
    out = [
        "## Repeated lines removed (--line-dedup)",
        "",
        f"Scope `{lines['scope']}`: a line of at least {lines['min_chars']} characters (normalised) found in "
        f"at least {lines['min_docs']} documents was removed; {lines['frequent_lines']} such lines.  "
        f"{lines['lines_removed']} line(s), {lines['characters_removed']} characters removed from "
        f"{lines['documents_changed']} document(s); {lines['documents_emptied']} left empty (dropped).",
        "",
    ]
    if lines["top_hosts"]:
        out += ["| host | documents | lines | characters | example |", "|---|---:|---:|---:|---|"]
        out += [
            f"| {h['host']} | {h['documents']} | {h['lines']} | {h['characters']} | {_cell(h['example'])} |"
            for h in lines["top_hosts"]
        ]
        out += [""]
    if lines["examples"]:
        out += ["| first line removed from a document | documents |", "|---|---:|"]
        out += [f"| {_cell(e['line'])} | {e['documents']} |" for e in lines["examples"]]
        out += [""]
    return out


def write_report(report: dict[str, Any], store: Store, plots: Future | None = None) -> dict[str, Any]:
    """Write the plots, ``report.md`` and ``_report.json`` through ``store``; returns the report.
    ``plots``: the plots drawn already (:func:`start_plots`), else they are drawn here."""
    try:
        rendered = plots.result() if plots is not None else render_plots(report)
        for name, png in rendered:
            store.write_bytes(png, "plots", name)
        report["plots"] = [f"plots/{name}" for name, _ in rendered]
        report["plots_note"] = None
    except ImportError:
        report["plots"] = []
        report["plots_note"] = "matplotlib is not installed (pip install 'contentx[report]')"
    store.write_text(_markdown(report), "report.md")
    store.write_text(json.dumps(report, indent=2, default=str), "_report.json")
    return report


def recut_lines(report: dict[str, Any]) -> list[str]:
    """What a re-cut (``contentx select``) is: its source corpus and each setting changed; [] for
    a build."""
    if not report.get("selected_from"):
        return []
    changes = "; ".join(f"`{c}`" for c in report.get("changes") or []) or "nothing (the build's settings)"
    return [
        f"a re-cut of the corpus {report['selected_from']} (contentx select: no filter or MinHash "
        "recomputed)",
        f"changed from the build: {changes}",
    ]


def _title_lines(report: dict[str, Any]) -> list[str]:
    recut = recut_lines(report)
    if not recut:
        return ["contentx corpus summary"]
    return ["contentx select summary", *(f"  {line.replace('`', '')}" for line in recut)]


def summary_lines(report: dict[str, Any]) -> list[str]:
    drops = ", ".join(f"{k} {v}" for k, v in report["dropped"].items() if v) or "none"
    langs = ", ".join(f"{x['language']} {x['documents']}" for x in report["languages"][:8])
    return [
        *_title_lines(report),
        f"  output: {report['output']}",
        f"  input rows ({report['config']['method']}): {report['input_rows']}; dropped: {drops}",
        f"  kept: {report['kept']} documents, {report['kept_characters']} characters"
        + (f", {report['kept_tokens']} tokens" if report.get("tokenizer") else "")
        + "; "
        f"languages: {langs or '-'}",
        *(
            [
                f"  repeated lines ({lines['scope']}, K={lines['min_docs']}, N={lines['min_chars']}): "
                f"{lines['lines_removed']} lines, {lines['characters_removed']} characters removed from "
                f"{lines['documents_changed']} documents"
            ]
            if (lines := report.get("line_dedup"))
            else []
        ),
        *([f"  {touched}"] if (touched := touches_line(report.get("final_touches"))) else []),
        *(f"  note: {note}" for note in report.get("notes") or []),
        *(
            [
                f"  damaged files left out: {len(report['damaged_files'])}"
                f" ({sum(d['rows'] or 0 for d in report['damaged_files'])}+ rows)"
            ]
            if report.get("damaged_files")
            else []
        ),  # fmt: skip
        f"  elapsed: {report['elapsed_seconds']} s, input rows/s: {report['records_per_second']}",
        f"  report: {report['output'].rstrip('/')}/report.md"
        + ("" if report["plots"] else f" (no plots: {report['plots_note']})"),
    ]
