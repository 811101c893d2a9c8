"""The corpus report per language: documents in, kept, dropped by each filter and by dedup, and the
language profile (FineWeb-2 key) and fallback the quality filters used.

One Spark aggregation counts the documents by ``(language, profile, fallback, reason)``, where
``reason`` is the first filter a document failed (the ``drop`` column of the job's first pass), else
its dedup outcome (``exact_duplicate``, ``near_duplicate``, ``seen_before``), else ``kept``; only
those counts reach the driver, where :func:`per_language` folds them into one record per language.
A duplicate counts under its own language (the document dropped), not its cluster's kept one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: The reason of a document that passed every filter and dedup.
KEPT = "kept"
#: Languages listed in report.md (all of them are in _report.json).
TOP_LANGUAGES = 30


def reason_counts(dropped, outcomes, tokens: bool = False):
    """``(language, profile, fallback, reason, documents[, tokens])`` rows.  ``dropped``: the first
    pass's rows a filter dropped (``drop`` not null); ``outcomes``: the rows that passed, with their
    dedup ``outcome`` (:func:`.dedup.document_outcomes`).  Both need ``language``, ``profile`` and
    ``fallback`` (and ``token_count`` with ``tokens``: its sums)."""
    from pyspark.sql import functions as F

    keys = ["language", "profile", "fallback", *(["token_count"] if tokens else [])]
    rows = dropped.select(*keys, F.col("drop").alias("reason")).unionByName(
        outcomes.select(*keys, F.col("outcome").alias("reason"))
    )
    sums = [F.sum("token_count").alias("tokens")] if tokens else []
    return rows.groupBy(*keys[:3], "reason").agg(F.count("*").alias("documents"), *sums)


def per_language(rows: Iterable[Any], reasons: Iterable[str], characters: dict[Any, int]) -> list[dict]:
    """One record per language, most documents first: ``language`` (None: no language, e.g. a
    failed extraction), ``documents`` (in), ``kept``, ``kept_characters``, ``dropped`` (every name
    of ``reasons`` and any other reason found, in that order) and ``profiles``: the profiles the
    quality filters used for its documents, ``{profile, fallback, documents}`` (empty without
    language profiles).  ``rows``: :func:`reason_counts`' rows; ``characters``: kept characters
    per language."""
    names = [r for r in reasons if r != KEPT]
    records: dict[Any, dict[str, Any]] = {}
    profiles: dict[Any, dict[tuple, int]] = {}
    for row in rows:
        language, reason, count = row["language"], row["reason"], int(row["documents"])
        record = records.setdefault(
            language,
            {"language": language, "documents": 0, "kept": 0, "dropped": dict.fromkeys(names, 0)},
        )
        record["documents"] += count
        if reason == KEPT:
            record["kept"] += count
        else:
            record["dropped"][reason] = record["dropped"].get(reason, 0) + count
        if "tokens" in row:  # --tokenizer: the same counts in tokens
            tokens = int(row["tokens"] or 0)
            counted = record.setdefault("tokens", {"in": 0, "kept": 0, "dropped": dict.fromkeys(names, 0)})
            counted["in"] += tokens
            if reason == KEPT:
                counted["kept"] += tokens
            else:
                counted["dropped"][reason] = counted["dropped"].get(reason, 0) + tokens
        if row["profile"] is not None or row["fallback"] is not None:
            key = (row["profile"], row["fallback"])
            by_profile = profiles.setdefault(language, {})
            by_profile[key] = by_profile.get(key, 0) + count
    out = []
    for language, record in records.items():
        record["kept_characters"] = int(characters.get(language, 0))
        used = sorted(profiles.get(language, {}).items(), key=lambda kv: (-kv[1], str(kv[0])))
        record["profiles"] = [{"profile": p, "fallback": f, "documents": n} for (p, f), n in used]
        out.append(record)
    return sorted(out, key=lambda r: (-r["documents"], r["language"] is None, r["language"] or ""))


def token_totals(
    records: list[dict], languages: list[dict], spec, count_eos: bool, rewritten: bool = False
) -> dict[str, Any]:
    """The report's token entries (``--tokenizer``): the tokenizer (``spec``, a
    :class:`..text.tokens.TokenizerSpec`), ``input_tokens``, ``kept_tokens`` and ``dropped_tokens``
    (per filter and dedup outcome), summed over :func:`per_language`'s ``records``.  The kept tokens
    per language must equal the documents' own sums (``languages``, counted over the written
    documents): ``RuntimeError`` if not.  ``rewritten``: the written texts were changed after the
    pass (FineWeb-2's final touches) and counted again: the records' kept tokens become the
    documents' own, their ``in`` the kept plus the dropped."""
    dropped: dict[str, int] = {}
    for record in records:
        for reason, tokens in record.get("tokens", {}).get("dropped", {}).items():
            dropped[reason] = dropped.get(reason, 0) + tokens
    written = {x["language"]: x.get("tokens", 0) for x in languages}
    if rewritten:
        for r in records:
            if "tokens" in r:
                r["tokens"]["kept"] = written.get(r["language"], 0)
                r["tokens"]["in"] = r["tokens"]["kept"] + sum(r["tokens"]["dropped"].values())
    kept = {r["language"]: r.get("tokens", {}).get("kept", 0) for r in records}
    if {k: v for k, v in kept.items() if v} != {k: v for k, v in written.items() if v}:
        raise RuntimeError(f"kept tokens per language do not add up: {kept} vs the documents' {written}")
    return {
        "tokenizer": spec.describe(count_eos),
        "input_tokens": sum(r.get("tokens", {}).get("in", 0) for r in records),
        "kept_tokens": sum(written.values()),
        "dropped_tokens": dropped,
    }


def check_totals(records: list[dict], input_rows: int, kept: int, dropped: dict[str, int]) -> None:
    """The per-language counts add up to the report's totals (raises ``RuntimeError`` if not)."""
    sums: dict[str, int] = {}
    for record in records:
        for reason, count in record["dropped"].items():
            sums[reason] = sums.get(reason, 0) + count
    totals = (sum(r["documents"] for r in records), sum(r["kept"] for r in records))
    nonzero = {k: v for k, v in dropped.items() if v}
    if totals != (input_rows, kept) or {k: v for k, v in sums.items() if v} != nonzero:
        raise RuntimeError(
            f"per-language counts do not add up: {totals} vs ({input_rows}, {kept}); {sums} vs {dropped}"
        )


def profile_text(profiles: list[dict]) -> str:
    """``deu_Latn``; ``eng_Latn (fallback: english)``; ``srp_Cyrl 5, srp_Latn 2``; ``-`` for none."""
    if not profiles:
        return "-"

    def one(p: dict) -> str:
        name = p["profile"] or "?"
        return f"{name} (fallback: {p['fallback']})" if p["fallback"] else name

    if len(profiles) == 1:
        return one(profiles[0])
    return ", ".join(f"{one(p)} {p['documents']}" for p in profiles)


def markdown(records: list[dict], top: int = TOP_LANGUAGES) -> list[str]:
    """The report.md section: the ``top`` languages by documents in, the rest summed in one line."""
    if not records:
        return []
    out = [
        "## Per language",
        "",
        "Documents in, kept and dropped (by the first filter failed, or by dedup), and the language "
        "profile the quality filters used (the FineWeb-2 configuration, and why another one when "
        f"the language has none).  The top {top} languages by documents in; all of them are in "
        "`_report.json` (`by_language`).",
        "",
        "| language | profile | in | kept | kept characters | dropped |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in records[:top]:
        drops = ", ".join(f"{k} {v}" for k, v in r["dropped"].items() if v) or "-"
        out.append(
            f"| {r['language'] or '(none)'} | {profile_text(r['profiles'])} | {r['documents']} | "
            f"{r['kept']} | {r['kept_characters']} | {drops} |"
        )
    rest = records[top:]
    if rest:
        out.append(
            f"| {len(rest)} more | | {sum(r['documents'] for r in rest)} | {sum(r['kept'] for r in rest)} "
            f"| {sum(r['kept_characters'] for r in rest)} | |"
        )
    fallbacks = sorted({p["fallback"] for r in records for p in r["profiles"] if p["fallback"]})
    if fallbacks:
        from .quality.profiles import FALLBACK_REASONS

        out += ["", "Fallbacks: " + "; ".join(f"`{f}`: {FALLBACK_REASONS.get(f, f)}" for f in fallbacks)]
    return out + [""]
