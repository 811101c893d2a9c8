"""The dataset card (``README.md``) that ``contentx corpus``, ``select`` and ``export`` write beside
their data (pure: a report in, Markdown out).

Its YAML header is what the Hugging Face Hub and ``datasets.load_dataset(DIR)`` read
(https://huggingface.co/docs/hub/datasets-cards, https://huggingface.co/docs/hub/datasets-manual-configuration):
``configs`` with the ``data_files`` of the one ``train`` split, ``language`` (the ISO 639 codes of the
kept documents), ``size_categories``, ``task_categories: [text-generation]`` and ``pretty_name``.
The body says how the corpus was made, from the report: the inputs, the extraction method, the
filters and their thresholds, the quality models (with their checksums, when the build used any),
the dedup settings, and documents, bytes (characters) and tokens per language.
"""

from __future__ import annotations

import json
from typing import Any

#: The Hub's ``size_categories`` bins (upper bounds, exclusive), as the Hub names them.
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"),
    (100_000_000_000, "10B<n<100B"),
    (1_000_000_000_000, "100B<n<1T"),
)
README = "README.md"


def size_category(documents: int) -> str:
    """The Hub's ``size_categories`` value for ``documents`` rows."""
    return next((label for bound, label in SIZE_CATEGORIES if documents < bound), "n>1T")


def _yaml_string(value: str) -> str:
    """A YAML scalar that is always read back as this string (JSON strings are YAML)."""
    return json.dumps(value, ensure_ascii=False)


def header(data_files: str | None, languages: list[str], documents: int, pretty_name: str) -> str:
    """The card's YAML front matter; ``data_files``: the glob of the ``train`` split (None: no
    ``configs``, e.g. tokenized shards the ``datasets`` library does not read)."""
    lines = ["---", f"pretty_name: {_yaml_string(pretty_name)}"]
    codes = sorted({code for code in languages if code})
    if codes:
        lines += ["language:", *(f"- {_yaml_string(c)}" for c in codes)]
    lines += [
        "size_categories:",
        f"- {size_category(documents)}",
        "task_categories:",
        "- text-generation",
    ]
    if data_files is not None:
        lines += [
            "configs:",
            "- config_name: default",
            "  data_files:",
            "  - split: train",
            f"    path: {_yaml_string(data_files)}",
        ]
    return "\n".join([*lines, "---", ""])


def _filters(report: dict[str, Any]) -> list[str]:
    described = report.get("filters") or {}
    preset = described.get("preset", "none")
    out = [f"Quality filters: preset `{preset}`."]
    for name, section in described.items():
        if isinstance(section, dict) and section.get("enabled", True):
            values = ", ".join(
                f"{k} = {v}"
                for k, v in section.items()
                if k != "enabled" and v is not None and not isinstance(v, dict | list)
            )
            if values:
                out.append(f"- `{name}`: {values}")
        elif not isinstance(section, dict) and name != "preset" and section not in (None, False):
            out.append(f"- `{name}`: {section}")
    return out


def _quality_models(report: dict[str, Any]) -> list[str]:
    models = report.get("quality_models") or (report.get("filters") or {}).get("quality_models") or []
    out = []
    for model in models:
        if isinstance(model, dict):
            name = model.get("name") or model.get("path")
            checksum = model.get("sha256") or model.get("checksum")
            out.append(f"- `{name}`" + (f" (SHA-256 `{checksum}`)" if checksum else ""))
    return ["Quality models:", *out] if out else []


def _record_text(record: dict[str, Any] | None, method: str | None) -> str:
    """One extraction record (:func:`..methods.versions.extraction_record`) in words."""
    if not record:
        return "not recorded (the table was written before contentx recorded it)"
    methods = record.get("methods") or {}
    shown = {method: methods[method]} if method in methods else methods
    parts = []
    for name, entry in shown.items():
        entry = entry or {}
        if entry.get("model"):
            sha = entry.get("model_sha256") or ""
            parts.append(
                f"`{name}` with model {entry['model']} (SHA-256 `{sha}`"
                + (f", mode {entry['mode']}" if entry.get("mode") else "")
                + ")"
            )
        else:
            parts.append(f"`{name}` (rules, no model)")
    return f"contentx {record.get('contentx', '?')}: " + ", ".join(parts)


def _extraction_versions(inputs: list[dict[str, Any]], method: str | None) -> list[str]:
    """The card's lines on what extracted each input table: its batches' records, "not recorded"
    for a table (or batches) written before they were."""
    out = ["Extracted by (method and model version, per input table):", ""]
    for entry in inputs:
        records = entry.get("extraction") or [None]
        text = "; ".join(_record_text(r, method) for r in records)
        out.append(f"- `{entry.get('table')}`: {text}")
    return out


def body(report: dict[str, Any], export: dict[str, Any] | None = None) -> str:
    """The card's Markdown body from a corpus ``report`` (``_report.json``) and, for an export,
    its manifest."""
    c = report.get("config") or {}
    m = report.get("minhash")
    title = report.get("pretty_name") or "contentx corpus"
    out = [
        f"# {title}",
        "",
        "A web text corpus built with contentx from WARC crawls: main-text extraction, language "
        "identification, quality filters, exact and near dedup.",
        "",
        "## Inputs",
        "",
    ]
    inputs = report.get("inputs") or [{"table": t} for t in c.get("inputs", [])]
    for entry in inputs:
        crawls = entry.get("crawls") or []
        warcs = entry.get("warc_files")
        out.append(
            f"- `{entry.get('table')}`"
            + (f": crawls {', '.join(crawls)}" if crawls else "")
            + (f", {warcs} WARC files" if warcs is not None else "")
        )
    if report.get("selected_from"):
        out.append(f"- re-cut (`contentx select`) of `{report['selected_from']}`")
    out += [
        "",
        "## Extraction",
        "",
        f"Method `{c.get('method')}`"
        + f"; languages kept: {', '.join(c.get('languages') or ['all'])}; min characters "
        f"{c.get('min_chars', 0)}; min confidence {c.get('min_confidence')}; page types "
        f"{', '.join(c.get('page_types') or ['all'])}.",
        "",
        *_extraction_versions(inputs, c.get("method")),
        "",
        "## Filters",
        "",
        *_filters(report),
        *_quality_models(report),
        *([f"SQL condition (`--where`): `{report['where']}`"] if report.get("where") else []),
        "",
        "## Deduplication",
        "",
        f"`{c.get('dedup')}` dedup, keeping the `{c.get('keep')}` document of a cluster"
        + (
            f"; near copies: Jaccard >= {c.get('near_threshold')} of word 5-grams, MinHash "
            f"{m['bands']} bands x {m['rows']} rows"
            if m
            else ""
        )
        + (f"; against earlier corpora {', '.join(c['against'])}" if c.get("against") else "")
        + ".",
        "",
        "## Size",
        "",
    ]
    tokenizer = report.get("tokenizer")
    if tokenizer:
        out += [
            f"Tokens counted with `{tokenizer['path']}` (SHA-256 `{tokenizer['sha256']}`): "
            f"`{tokenizer['count']}`.",
            "",
        ]
    out += [
        "| language | documents | bytes (characters) |" + (" tokens |" if tokenizer else ""),
        "|---|---:|---:|" + ("---:|" if tokenizer else ""),
    ]
    for x in report.get("languages", []):
        out.append(
            f"| {x['language'] or '(none)'} | {x['documents']} | {x['characters']} |"
            + (f" {x.get('tokens', 0)} |" if tokenizer else "")
        )
    out.append(
        f"| **all** | **{report.get('kept', 0)}** | **{report.get('kept_characters', 0)}** |"
        + (f" **{report.get('kept_tokens', 0)}** |" if tokenizer else "")
    )
    if export is not None:
        out += ["", "## Files", "", export_text(export)]
    out += ["", f"Built {report.get('finished')}."]
    return "\n".join(out) + "\n"


def export_text(manifest: dict[str, Any]) -> str:
    """The card's paragraph on an export's files."""
    order = (
        f"shuffled with seed {manifest['shuffle_seed']}"
        if manifest.get("shuffle_seed") is not None
        else "in the corpus's order by URL, then text hash"
    )
    text = (
        f"Format `{manifest['format']}`: {len(manifest['shards'])} file(s) under `data/`, "
        f"{manifest['documents']} documents{', ' + str(manifest['tokens']) + ' tokens' if manifest.get('tokens') is not None else ''}, "  # noqa: E501
        f"{order}; each file's documents and tokens are in `_manifest.json`."
    )
    if manifest["format"] == "datatrove":
        text += (
            f" Tokenized shards in datatrove's layout: `NNNNN.ds` (token ids, {manifest['token_bytes']}-byte "
            "little-endian), `NNNNN.ds.index` (uint64 document ends), `NNNNN.ds.metadata`"
            + (f"; `{manifest['eos_token']}` after each document" if manifest.get("eos_token") else "")
            + "."
        )
    return text


def card(report: dict[str, Any], data_files: str | None, export: dict[str, Any] | None = None) -> str:
    """The whole ``README.md``."""
    languages = [x["language"] for x in report.get("languages", []) if x.get("language")]
    documents = export["documents"] if export is not None else report.get("kept", 0)
    name = report.get("pretty_name") or f"contentx corpus {report.get('output', '')}".strip()
    return (
        header(data_files, languages, documents, name) + "\n" + body({**report, "pretty_name": name}, export)
    )
