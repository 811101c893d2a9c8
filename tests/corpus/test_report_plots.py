"""The report's plots drawn in a background thread (:func:`start_plots`) while the job counts."""

from __future__ import annotations

from contentx_udf.corpus.report import PLOT_ENTRIES, render_plots, start_plots

ENTRIES = {
    "languages": [
        {"language": "en", "documents": 7, "characters": 900},
        {"language": "de", "documents": 2, "characters": 300},
    ],
    "text_length_histogram": {"0-199": 3, "200-499": 6},
    "dropped": {"gopher_quality": 4, "exact_duplicate": 1},
    "input_rows": 14,
    "kept": 9,
    "top_hosts": [{"host": "a.example", "documents": 5}, {"host": None, "documents": 4}],
    "cluster_sizes": {1: 8, 2: 1},
}


def test_background_plots_are_the_plots_and_read_a_copy():
    entries = {k: (list(v) if isinstance(v, list) else v) for k, v in ENTRIES.items()}
    future = start_plots(entries)
    entries["languages"].clear()  # the job's own dicts may change meanwhile
    drawn = future.result(timeout=60)
    names = [name for name, _ in drawn]
    assert names == ["languages.png", "text_length.png", "dropped.png", "hosts.png", "cluster_sizes.png"]
    assert all(png.startswith(b"\x89PNG") and len(png) > 1000 for _, png in drawn)
    # the same figures as drawn in the foreground from the entries as they were
    assert [len(p) for _, p in drawn] == [len(p) for _, p in render_plots(ENTRIES)]
    assert set(PLOT_ENTRIES) == set(ENTRIES)


def test_the_same_entries_are_drawn_once_and_others_again(monkeypatch):
    """A process building several corpora draws each distinct set of plotted entries once; other
    entries are drawn (and differ), and only the last DRAWN_KEPT sets are kept."""
    import contentx_udf.corpus.report as report

    drawn: list[int] = []
    draw = report._draw_plots

    def counted(entries):
        drawn.append(entries["kept"])
        return draw(entries)

    monkeypatch.setattr(report, "_draw_plots", counted)
    monkeypatch.setattr(report, "_drawn", type(report._drawn)())
    first = render_plots({**ENTRIES, "kept": 1001})
    assert render_plots({**ENTRIES, "kept": 1001}) == first and drawn == [1001]
    other = render_plots({**ENTRIES, "kept": 1002})  # the dropped plot's title names what was kept
    assert drawn == [1001, 1002] and dict(other)["dropped.png"] != dict(first)["dropped.png"]
    assert dict(other)["languages.png"] == dict(first)["languages.png"]
    for kept in range(report.DRAWN_KEPT):
        render_plots({**ENTRIES, "kept": kept})
    assert render_plots({**ENTRIES, "kept": 1001}) == first and drawn[-1] == 1001  # forgotten, drawn again
    assert len(report._drawn) == report.DRAWN_KEPT
