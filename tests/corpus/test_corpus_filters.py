"""The quality filters in the corpus job: each document is dropped by the filter it fails and counted
under it (kept + dropped = input), each filter's report shows an example, kept texts carry C4's
line edits and the PII masks with a fresh ``text_hash``, and without ``--filters`` nothing changes."""

from __future__ import annotations

import json

import pytest

from contentx_udf import cli
from contentx_udf.text.language import text_hash

from .tables import table_row, write_table

pytestmark = pytest.mark.spark

PROSE = [
    "The city council met on Tuesday evening to debate the budget for the coming year.",
    "After a long discussion, the members agreed to repair the old bridge over the river before winter.",
    "The mayor said that the work would start in March and that traffic would be diverted for six weeks.",
    "Parents asked the council to keep the library open on Sundays, and the vote was close.",
    "A new bus line will connect the harbour with the station, which should help people who work at night.",
    "Some residents were worried that the rent of the market stalls would rise again this spring.",
    "The council promised to publish the full plan on its website by the end of the month.",
    "Local shops welcomed the decision, because many of their customers come from the villages nearby.",
]
SHORT = [
    "The bridge opens in May.",
    "Buses run every hour.",
    "Tickets cost two euros.",
    "The museum is free.",
    "Parking is near the park.",
    "Shops close at six.",
    "The school has a new roof.",
    "Rain is due on Friday.",
    "The market sells fish.",
    "Our office is on Main St.",
]


def prose(first: int) -> str:
    """The eight sentences from ``first`` on, one per line (the rotations are near duplicates of
    each other, so these tests deduplicate exact copies only)."""
    return "\n".join(PROSE[first:] + PROSE[:first])


#: URL path -> (text, the filter that drops it or None)
DOCUMENTS = {
    "good": (prose(0), None),
    "numbers": (" ".join(str(100 + i) for i in range(80)) + ".", "gopher_quality"),
    "repeated": (
        "\n".join(["The same line about the council budget is here again."] * 12),
        "gopher_repetition",
    ),
    "lorem": (prose(1) + "\nLorem ipsum dolor sit amet, consectetur adipiscing elit.", "c4"),
    "short-lines": ("\n".join(PROSE[:3] + SHORT), "fineweb"),
    "pii": (
        prose(2) + "\nWrite to the desk at news.desk@example.org or reach our server at 8.8.8.8 today.",
        None,
    ),
    "javascript": (prose(3) + "\nPlease enable JavaScript in your browser to see the comments.", None),
}


@pytest.fixture(scope="module")
def filter_table(tmp_path_factory):
    root = tmp_path_factory.mktemp("filters")
    rows = [
        table_row(f"https://news.example/{name}", text, offset=i)
        for i, (name, (text, _)) in enumerate(DOCUMENTS.items())
    ]
    rows.append(
        table_row("https://ads.tracker.example/page", prose(4), offset=50)
    )  # blocked by a parent domain
    rows.append(table_row("https://news.example/unsure", prose(5), offset=51))
    for row in rows:  # the identifier is sure of every text (80 numbers included) but one
        row["language"], row["language_score"] = "en", 0.9
    rows[-1]["language_score"] = 0.4  # below FineWeb's 0.65
    write_table(root / "table", "combined", rows)
    (root / "blocklist.txt").write_text("# domains\ntracker.example\n")
    return root


def test_filters_drop_count_and_show_what_they_remove(filter_table, tmp_path, capsys):
    out = tmp_path / "corpus"
    blocklist = str(filter_table / "blocklist.txt")
    argv = ["corpus", "--input", str(filter_table / "table"), "--output", str(out), "--dedup", "exact",
            "--filters", "fineweb", "--mask-pii", "--url-blocklist", blocklist]  # fmt: skip
    assert cli.main(argv) == 0
    report = json.loads((out / "_report.json").read_text())
    expected = {
        f: 0 for f in ("url", "language_score", "gopher_repetition", "gopher_quality", "c4", "fineweb")
    }
    for _text, dropped_by in DOCUMENTS.values():
        if dropped_by:
            expected[dropped_by] += 1
    expected["url"] = expected["language_score"] = 1
    assert {k: report["dropped"][k] for k in expected} == expected
    assert report["input_rows"] == report["kept"] + sum(report["dropped"].values()) == 9
    assert report["examples"]["url"]["url"] == "https://ads.tracker.example/page"
    assert report["examples"]["c4"]["url"] == "https://news.example/lorem"
    assert report["examples"]["fineweb"]["text"] == DOCUMENTS["short-lines"][0][:200]
    assert {r["rule"] for r in report["dropped_rules"]} >= {
        "url.domain",
        "language_score.min_language_score",
        "c4.lorem_ipsum",
        "fineweb.max_short_line_ratio",
    }
    assert report["pii_masked"] == {"emails": 1, "ips": 1} and report["c4_lines_removed"] == 1
    assert report["filters"]["preset"] == "fineweb" and report["filters"]["mask_pii"] is True
    kept = {r["url"].rsplit("/", 1)[-1]: r for r in spark_rows(out)}
    assert set(kept) == {"good", "pii", "javascript"}
    assert "email@example.com" in kept["pii"]["text"] and "8.8.8.8" not in kept["pii"]["text"]
    assert kept["javascript"]["text"] == prose(3)  # C4 removed the JavaScript line
    for row in kept.values():
        assert row["text_hash"] == text_hash(row["text"]) and row["text_length"] == len(row["text"])
    md = (out / "report.md").read_text()
    assert "| dropped: fineweb | 1 |" in md and "Quality filters: `fineweb`, PII masked" in md
    assert "## What each filter removed (one example)" in md


def test_without_filters_nothing_is_dropped_or_edited(filter_table, tmp_path):
    out = tmp_path / "corpus"
    argv = ["corpus", "--input", str(filter_table / "table"), "--output", str(out), "--dedup", "exact"]
    assert cli.main(argv) == 0
    report = json.loads((out / "_report.json").read_text())
    assert report["kept"] == 9 and report["filters"] == {"preset": "none"}
    assert all(row["text"] == row_text(row["url"]) for row in spark_rows(out))


def row_text(url: str) -> str:
    name = url.rsplit("/", 1)[-1]
    return DOCUMENTS[name][0] if name in DOCUMENTS else prose(4 if "tracker" in url else 5)


def spark_rows(out) -> list[dict]:
    import pyarrow.dataset as ds

    return ds.dataset(str(out / "documents"), format="parquet").to_table().to_pylist()


def test_fineweb2_filters_each_language_with_its_own_settings(tmp_path):
    """German and French UDHR texts, a German one without German stop words, an English one:
    the job drops by each language's profile, and a per-language --filter-set moves French only."""
    import re

    from contentx_udf.corpus.quality.fineweb2 import configs

    from ..conftest import SHARED, shared_or_skip

    def udhr(name: str) -> str:
        text = shared_or_skip(SHARED / "data" / "udhr2" / f"{name}.txt").read_text(encoding="utf-8")
        return "\n".join(line.strip() for line in text.splitlines() if line.strip())

    stop = configs()["deu_Latn"]["stopwords"]
    pattern = r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(stop, key=len, reverse=True))) + r")(?!\w)"
    texts = {
        "de": udhr("deu"),
        "fr": udhr("fra"),
        "de-no-stop-words": re.sub(r"[ \t]+", " ", re.sub(pattern, "", udhr("deu"))),
        "en": prose(0),
    }
    rows = [
        table_row(f"https://udhr.example/{name}", text, offset=i)
        for i, (name, text) in enumerate(texts.items())
    ]
    write_table(tmp_path / "table", "combined", rows)
    out = tmp_path / "corpus"
    argv = ["corpus", "--input", str(tmp_path / "table"), "--output", str(out), "--dedup", "exact",
            "--filters", "fineweb2", "--filter-set", "fineweb2.fra_Latn.new_line_ratio=0.001"]  # fmt: skip
    assert cli.main(argv) == 0
    report = json.loads((out / "_report.json").read_text())
    assert report["filters"]["preset"] == "fineweb2"
    assert report["dropped"]["gopher_quality"] == 1 and report["dropped"]["fineweb"] == 1
    assert {r["rule"] for r in report["dropped_rules"]} == {
        "gopher_quality.min_stop_words",
        "fineweb.max_newline_word_ratio",
    }
    assert {r["url"].rsplit("/", 1)[-1] for r in spark_rows(out)} == {"de", "en"}
