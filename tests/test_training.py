"""Training: gold text aligns to the right blocks, folds keep a site together, and a model trained
here from a few labelled pages separates content from boilerplate on a page it never saw."""

from __future__ import annotations

import re

import numpy as np
import pytest

from contentx_udf.evaluation import GoldPage
from contentx_udf.methods.blocks import page_blocks
from contentx_udf.page.document import Document
from contentx_udf.training import (
    MODE_THRESHOLDS,
    THRESHOLD_GRID,
    block_labels,
    build_rows,
    cross_validate,
    fit,
    grouped_folds,
    mode_result,
    out_of_fold,
    page_group,
    page_rows,
    predicted_text,
    search_mode_thresholds,
    threshold_scores,
)

from .helpers import write_pairs

TOPICS = ["river", "garden", "engine", "library", "harbour", "orchard", "violin", "glacier"]


def synthetic_page(seed: int) -> tuple[str, str]:
    """A page of article paragraphs among navigation, sidebar, share links and footer; and its gold text."""
    rng = np.random.default_rng(seed)
    topic = TOPICS[seed % len(TOPICS)]
    paragraphs = [
        f"The {topic} study {i} found that {rng.integers(10, 99)} of the samples changed over the winter, "
        f"and the team said further measurements of the {topic} would follow in spring."
        for i in range(int(rng.integers(4, 8)))
    ]
    nav = "".join(f"<li><a href='/{k}'>{k.title()}</a></li>" for k in ("news", "sport", "weather", "about"))
    html = (
        f"<html><head><title>{topic.title()} study</title></head><body>"
        f"<header class='masthead'><ul class='menu'>{nav}</ul></header>"
        f"<div class='layout'><article class='story'><h1>{topic.title()} study</h1>"
        + "".join(f"<p>{p}</p>" for p in paragraphs)
        + "</article><aside class='sidebar'><h3>Most read</h3><ul>"
        + "".join(f"<li><a href='/r{k}'>Other story number {k} you may like</a></li>" for k in range(5))
        + "</ul></aside></div>"
        "<div class='share'><a href='#'>Share on Facebook</a> <a href='#'>Tweet</a></div>"
        "<footer class='site-footer'><p>Copyright 2026 Example Media. All rights reserved.</p>"
        "</footer>"
        "</body></html>"
    )
    gold = f"{topic.title()} study\n\n" + "\n\n".join(paragraphs)
    return html, gold


def test_labels_align_gold_text_to_blocks():
    html, gold = synthetic_page(2)  # topic "engine"
    texts = page_blocks(Document.parse(html).dom).texts
    labels = dict(zip(texts, block_labels(texts, gold).tolist(), strict=True))
    assert labels["Engine study"] == 1.0
    assert sum(v == 1.0 for t, v in labels.items() if t.startswith("The engine study")) >= 4
    assert labels["Copyright 2026 Example Media. All rights reserved."] == 0.0
    assert labels["Other story number 2 you may like"] == 0.0
    assert labels["Share on Facebook Tweet"] == 0.0
    # a block half of whose trigrams are in the gold text
    half = block_labels(["alpha beta gamma delta epsilon"], "alpha beta gamma zzz")[0]
    assert half == pytest.approx(1 / 3)


def test_folds_keep_every_group_together():
    groups = ["a", "a", "b", "c", "c", "c", "d", "e", "e", "f"]
    folds = grouped_folds(groups, 3, seed=1)
    assert sorted(np.concatenate(folds).tolist()) == list(range(len(groups)))
    for fold in folds:
        inside = {groups[i] for i in fold}
        assert all(groups[j] not in inside for other in folds if other is not fold for j in other)
    assert [f.tolist() for f in grouped_folds(groups, 3, seed=1)] == [f.tolist() for f in folds]
    with pytest.raises(ValueError):
        grouped_folds(["a", "a"], 2)


def test_page_group_is_the_site():
    assert page_group(GoldPage("1", b"", "", url="https://www.example.org/a/b")) == "example.org"
    assert page_group(GoldPage("2", b"", "", url=None)) == "2"


def test_a_model_trained_here_separates_content_from_boilerplate():
    pytest.importorskip("catboost")
    pages = []
    for seed in range(8):
        html, gold = synthetic_page(seed)
        pages.append(GoldPage(str(seed), html.encode(), gold, url=f"https://site{seed % 4}.example/{seed}"))
    rows = build_rows(pages, processes=1)
    model = fit(rows, seed=0, params={"iterations": 40, "depth": 3})
    html, gold = synthetic_page(13)  # an unseen page (topic "orchard")
    unseen = page_rows(GoldPage("u", html.encode(), gold))
    probability = model.predict(unseen.matrix)
    content = unseen.labels >= 0.5
    assert content.any() and (~content).any()
    assert probability[content].min() > probability[~content].max()
    text = predicted_text(model, unseen)
    assert "further measurements of the orchard" in text and "Copyright" not in text and "Tweet" not in text
    # the same pages and seed give the same model
    again = fit(rows, seed=0, params={"iterations": 40, "depth": 3})
    assert np.array_equal(again.leaf_values, model.leaf_values)
    # cross-validation retrains per fold and returns a text per page
    texts = cross_validate(rows, 2, seed=0, params={"iterations": 20, "depth": 3})["balanced"]
    assert len(texts) == len(rows) and all("study" in t for t in texts)


def known_scores(pages: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Per-page scores along THRESHOLD_GRID with a known trade-off, for two page types: on type 0
    precision climbs from 0.6 to 1.0 as the threshold rises and recall falls from 1.0 to 0.7; on
    type 1 precision climbs only to 0.8 and recall falls to 0.2."""
    t = (THRESHOLD_GRID - THRESHOLD_GRID[0]) / (THRESHOLD_GRID[-1] - THRESHOLD_GRID[0])
    curves = [(0.6 + 0.4 * t, 1.0 - 0.3 * t), (0.6 + 0.2 * t, 1.0 - 0.8 * t)]
    types = np.zeros((pages, 2))
    types[np.arange(pages), np.arange(pages) % 2] = 1.0
    scores = np.zeros((pages, THRESHOLD_GRID.size, 3))
    for i in range(pages):
        precision, recall = curves[i % 2]
        scores[i, :, 0], scores[i, :, 1] = precision, recall
        scores[i, :, 2] = 2 * precision * recall / (precision + recall)
    return scores, types


def test_mode_thresholds_are_the_best_f1_that_meets_the_margin():
    scores, types = known_scores()
    balanced = (0.4, 0.4)
    start = mode_result(scores, types, balanced)
    for goal, column, sign in (("precision", 0, 1), ("recall", 1, -1)):
        chosen, result = search_mode_thresholds(scores, types, balanced, goal, margin=0.03)
        assert np.allclose(result, mode_result(scores, types, chosen))
        assert result[column] >= start[column] + 0.03 - 1e-12
        assert all(sign * (c - b) >= -1e-9 for c, b in zip(chosen, balanced, strict=True))
        # no threshold pair on the search grid does better under the same constraint
        grid = np.arange(0.05, 0.9501, 0.025)
        best = max(
            mode_result(scores, types, (a, b))[2]
            for a in grid
            for b in grid
            if sign * (a - 0.4) >= -1e-9
            and sign * (b - 0.4) >= -1e-9
            and mode_result(scores, types, (a, b))[column] >= start[column] + 0.03
        )
        assert result[2] >= best - 1e-9
    # precision is cheaper on type 0 (recall falls slowly there): the search raises it first
    chosen, _ = search_mode_thresholds(scores, types, balanced, "precision", margin=0.03)
    assert chosen[0] > 0.4 and chosen[0] - 0.4 >= chosen[1] - 0.4
    # an unreachable margin leaves balanced
    chosen, result = search_mode_thresholds(scores, types, balanced, "precision", margin=0.9)
    assert chosen == balanced and np.allclose(result, start)


def listing_page(seed: int) -> tuple[str, str]:
    """A listing of linked product cards (name, price) among the same furniture; and its gold text."""
    items = [f"{TOPICS[(seed + k) % len(TOPICS)].title()} kit model {seed * 10 + k}" for k in range(12)]
    cards = "".join(
        f"<li class='card'><a href='/p/{seed}-{k}'>{name}</a><span class='price'>{9 + k}.99 EUR</span></li>"
        for k, name in enumerate(items)
    )
    html = (
        f"<html><head><title>Kits {seed}</title></head><body><header class='masthead'><ul class='menu'>"
        "<li><a href='/'>Home</a></li><li><a href='/shop'>Shop</a></li></ul></header>"
        f"<main><h1>All kits, page {seed}</h1><ul class='grid'>{cards}</ul></main>"
        "<footer class='site-footer'><p>Copyright 2026 Example Shop.</p></footer></body></html>"
    )
    gold = f"All kits, page {seed}\n" + "\n".join(f"{n} {9 + k}.99 EUR" for k, n in enumerate(items))
    return html, gold


def test_page_types_learned_here_set_each_pages_threshold():
    pytest.importorskip("catboost")
    pages = []
    for seed in range(12):
        html, gold = (synthetic_page if seed % 2 else listing_page)(seed)
        kind = "article" if seed % 2 else "listing"
        pages.append(
            GoldPage(str(seed), html.encode(), gold, url=f"https://s{seed}.example/x", page_type=kind)
        )
    rows = build_rows(pages, processes=1)
    model = fit(rows, seed=0, params={"iterations": 30, "depth": 3})
    types = model.page_types
    assert types is not None and types.classes == ("article", "listing") and types.thresholds == (0.6, 0.45)
    for page, kind in ((synthetic_page(31), "article"), (listing_page(40), "listing")):
        threshold, probabilities = model.page_threshold(
            page_rows(GoldPage("u", page[0].encode(), page[1])).matrix
        )
        assert probabilities[kind] > 0.5, (kind, probabilities)
        assert threshold == pytest.approx(0.6 * probabilities["article"] + 0.45 * probabilities["listing"])
    # a fixed threshold applies to every type; pages of one type train no page-type classifier
    fixed = fit(rows, seed=0, params={"iterations": 10, "depth": 3}, threshold=0.35)
    assert fixed.threshold == 0.35 and fixed.page_types.thresholds == (0.35, 0.35)
    # the modes' thresholds ride along: precision's no lower, recall's no higher than balanced's
    for mode, table in MODE_THRESHOLDS.items():
        assert types.modes[mode] == (table["article"], table["listing"])
        sign = 1 if mode == "precision" else -1
        assert all(sign * (m - b) >= 0 for m, b in zip(types.modes[mode], types.thresholds, strict=True))
    assert fixed.page_types.modes == {}  # one fixed threshold: no modes
    # out-of-fold probabilities: one per page with blocks, from a model that never saw its site
    oof = out_of_fold(rows, 2, seed=0, params={"iterations": 10, "depth": 3})
    assert all(o.probability.shape == r.labels.shape for o, r in zip(oof, rows, strict=True))
    assert all(o.classes == ("article", "listing") and np.isclose(o.page_types.sum(), 1.0) for o in oof)
    scores = threshold_scores(rows, oof, [p.text for p in pages])
    assert scores.shape == (len(rows), THRESHOLD_GRID.size, 3) and scores.min() >= 0 and scores.max() <= 1
    # a stricter page threshold never keeps more words: recall cannot rise along the grid
    assert (np.diff(scores[:, :, 1], axis=1) <= 1e-12).all()
    assert fit(rows[1::2], seed=0, params={"iterations": 10, "depth": 3}).page_types is None


def write_synthetic_gold(directory, seeds) -> None:
    """A gold set in the NAME.html + NAME.txt layout made of synthetic pages."""
    write_pairs(directory, {f"p{seed:02d}": synthetic_page(seed) for seed in seeds})


def test_contentx_train_writes_a_model_that_combined_can_use(tmp_path, capsys):
    pytest.importorskip("catboost")
    from contentx_udf import cli, extract
    from contentx_udf.methods.block_model import BlockModel

    write_synthetic_gold(tmp_path / "gold", range(6))
    out = tmp_path / "model.npz"
    args = ["train", "--gold", str(tmp_path / "gold"), "--out", str(out), "--iterations", "30"]
    assert cli.main(args) == 0
    assert "trained on 6 pages" in capsys.readouterr().out
    model = BlockModel.load(out)
    assert model.info["trained_on"] == ["gold"] and model.info["seed"] == 0 and model.trees == 30
    html, _ = synthetic_page(21)
    result = extract(html, "combined", model=str(out))
    assert result.status == "ok" and "further measurements" in result.text and "Copyright" not in result.text
    # the same command again gives the same model
    assert cli.main([*args[:4], str(tmp_path / "again.npz"), *args[5:]]) == 0
    assert np.array_equal(BlockModel.load(tmp_path / "again.npz").leaf_values, model.leaf_values)


def test_contentx_train_and_folds_user_errors(tmp_path, capsys):
    from contentx_udf import cli

    assert cli.main(["train", "--gold", str(tmp_path / "missing"), "--out", str(tmp_path / "m.npz")]) == 2
    assert "error:" in capsys.readouterr().err
    assert cli.main(["train", "--gold", str(tmp_path), "--out", str(tmp_path / "no" / "m.npz")]) == 2
    assert "no such directory" in capsys.readouterr().err
    write_synthetic_gold(tmp_path / "gold", range(3))
    assert (
        cli.main(["evaluate", "--gold", str(tmp_path / "gold"), "--methods", "cectd-ds", "--folds", "1"]) == 2
    )
    assert "--folds" in capsys.readouterr().err


def test_evaluate_folds_scores_combined_by_cross_validation(tmp_path, capsys):
    pytest.importorskip("catboost")
    from contentx_udf import cli

    write_synthetic_gold(tmp_path / "gold", range(6))
    args = ["evaluate", "--gold", str(tmp_path / "gold"), "--methods", "cectd-ds", "--folds", "2"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "combined (2-fold CV)" in line)
    f1 = [float(x) for x in re.findall(r"\b[01]\.\d{3}\b", row)]
    assert f1 and max(f1) > 0.8  # the boilerplate is easy to tell from the article here
