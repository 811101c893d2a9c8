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
