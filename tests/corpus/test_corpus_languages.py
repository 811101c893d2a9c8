"""The corpus report per language: a two-language table (English, German, and a failed extraction
without a language) where each document is built to be dropped by one filter or by dedup; the
report's per-language counts are exactly those drops, with the FineWeb-2 profile (and English's
fallback) the quality filters used, and report.md lists the top languages only."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from contentx_udf import cli
from contentx_udf.corpus.by_language import TOP_LANGUAGES, markdown, per_language

from .tables import table_row, write_table
from .test_corpus_filters import DOCUMENTS, prose

GERMAN = [
    "Der Gemeinderat hat am Dienstag nach langer Debatte "
    "den neuen Haushalt für das kommende Jahr beschlossen.",
    "Umstritten waren vor allem die Kosten für den Nahverkehr "
    "und die Sanierung der alten Brücke über den Fluss.",
    "Die Bürgermeisterin sagte, dass die Arbeiten im März "
    "beginnen und der Verkehr sechs Wochen lang umgeleitet wird.",
    "Viele Eltern baten den Rat, die Bibliothek auch am "
    "Sonntag zu öffnen, und die Abstimmung war sehr knapp.",
    "Eine neue Buslinie soll den Hafen mit dem Bahnhof "
    "verbinden, was vor allem den Menschen in der Nachtschicht hilft.",
    "Einige Anwohner befürchten, dass die Miete für die "
    "Stände auf dem Markt in diesem Frühjahr wieder steigt.",
    "Der Rat hat versprochen, den ganzen Plan bis "
    "zum Ende des Monats auf seiner Webseite zu veröffentlichen.",
    "Die Geschäfte in der Stadt begrüßten die Entscheidung, weil "
    "viele ihrer Kunden aus den Dörfern in der Nähe kommen.",
]


def german(first: int) -> str:
    return "\n".join(GERMAN[first:] + GERMAN[:first])


#: (name, language, score, text, what drops it: a filter, "exact_duplicate" or None = kept);
#: the copies are fetched later than their originals (--keep first keeps the original)
DOCS = [
    ("en-good", "en", 0.9, prose(0), None),
    ("en-other", "en", 0.9, prose(2), None),
    ("en-copy", "en", 0.9, prose(0), "exact_duplicate"),
    ("en-repeated", "en", 0.9, DOCUMENTS["repeated"][0], "gopher_repetition"),
    ("en-short-lines", "en", 0.9, DOCUMENTS["short-lines"][0], "fineweb"),
    ("en-unsure", "en", 0.4, prose(5), "language_score"),  # below English's 0.65
    ("de-gut", "de", 0.95, german(0), None),
    ("de-anders", "de", 0.95, german(3), None),
    ("de-kopie", "de", 0.95, german(0), "exact_duplicate"),
    (
        "de-wiederholt",
        "de",
        0.95,
        "\n".join(["Die gleiche Zeile über den Haushalt steht hier wieder."] * 12),
        "gopher_repetition",
    ),  # fmt: skip
    ("de-kurz", "de", 0.95, "Kontakt und Impressum.", "min_chars"),
]


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory):
    root = tmp_path_factory.mktemp("languages")
    rows = []
    for i, (name, language, score, text, _) in enumerate(DOCS):
        row = table_row(f"https://news.example/{name}", text, day=1 + i, offset=i)
        row["language"], row["language_score"] = language, score
        rows.append(row)
    rows.append(table_row("https://news.example/broken", None, status="error", offset=99))
    write_table(root / "table", "combined", rows)
    return root / "table"


@pytest.mark.spark
def test_per_language_counts_are_what_each_filter_dropped(spark, two_languages, tmp_path):
    out = tmp_path / "corpus"
    argv = ["corpus", "--input", str(two_languages), "--output", str(out), "--dedup", "exact",
            "--filters", "fineweb2", "--min-chars", "50"]  # fmt: skip
    assert cli.main(argv) == 0
    report = json.loads((out / "_report.json").read_text())
    records = {r["language"]: r for r in report["by_language"]}
    assert set(records) == {"en", "de", None}
    for language in ("en", "de"):
        docs = [d for d in DOCS if d[1] == language]
        record = records[language]
        expected = Counter(reason for *_, reason in docs if reason)
        assert record["documents"] == len(docs)
        assert record["kept"] == sum(1 for *_, reason in docs if reason is None)
        assert {k: v for k, v in record["dropped"].items() if v} == expected
        assert record["documents"] == record["kept"] + sum(record["dropped"].values())
    assert records[None]["documents"] == 1 and records[None]["dropped"]["status"] == 1
    # the profile of every document that reached the quality filters (not the one cut by --min-chars)
    assert records["de"]["profiles"] == [{"profile": "deu_Latn", "fallback": None, "documents": 4}]
    assert records["en"]["profiles"] == [{"profile": "eng_Latn", "fallback": "english", "documents": 6}]
    assert records[None]["profiles"] == []
    # per language adds up to the report's totals, and kept characters to the kept documents'
    for reason, count in report["dropped"].items():
        assert sum(r["dropped"].get(reason, 0) for r in records.values()) == count
    assert sum(r["kept"] for r in records.values()) == report["kept"] == 4
    assert {r["language"]: r["characters"] for r in report["languages"]} == {
        language: records[language]["kept_characters"] for language in ("en", "de")
    }
    assert [r["language"] for r in report["by_language"]] == ["en", "de", None]  # most documents first
    md = (out / "report.md").read_text()
    assert "## Per language" in md
    assert "| en | eng_Latn (fallback: english) | 6 | 2 |" in md
    assert "| de | deu_Latn | 5 | 2 |" in md
    assert "min_chars 1, gopher_repetition 1, exact_duplicate 1 |" in md
    assert "`english`: FineWeb's English settings" in md


def test_report_md_lists_the_top_languages_and_sums_the_rest():
    rows = [
        {"language": f"l{i:02d}", "profile": None, "fallback": None, "reason": reason, "documents": n}
        for i in range(TOP_LANGUAGES + 10)
        for reason, n in (("kept", 100 - i), ("c4", 1))
    ]
    records = per_language(rows, ["status", "c4", "exact_duplicate", "kept"], {"l00": 1234})
    assert len(records) == TOP_LANGUAGES + 10
    assert records[0] == {
        "language": "l00",
        "documents": 101,
        "kept": 100,
        "dropped": {"status": 0, "c4": 1, "exact_duplicate": 0},
        "kept_characters": 1234,
        "profiles": [],
    }
    lines = markdown(records)
    table = [line for line in lines if line.startswith("| l") and line[3].isdigit()]
    assert len(table) == TOP_LANGUAGES and table[-1].startswith(f"| l{TOP_LANGUAGES - 1:02d} |")
    rest = records[TOP_LANGUAGES:]
    documents, kept = sum(r["documents"] for r in rest), sum(r["kept"] for r in rest)
    assert f"| 10 more | | {documents} | {kept} | 0 | |" in lines
