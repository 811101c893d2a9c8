"""Block features: one finite row per block with the columns FEATURE_NAMES names, the same row for
the same page, and the signals read where they should be (links, enclosing tags, class/id keywords,
CETD's selection, neighbours)."""

from __future__ import annotations

import numpy as np
import pytest

from contentx_udf.methods.block_features import (
    FEATURE_NAMES,
    KEYWORD_GROUPS,
    WINDOW_OFFSETS,
    block_features,
    smooth_gaussian,
    token_bits,
)
from contentx_udf.page.document import Document

from ..helpers import ARTICLE, NAV

PAGE = (
    "<html><head><title>Council approves the budget</title>"
    '<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle"}</script>'
    "</head><body>"
    f"<header class='site-header'><nav>{NAV}</nav></header>"
    "<main><article class='post-content'><h1>Council approves the budget</h1>"
    + "".join(f"<p>{p}</p>" for p in ARTICLE)
    + "</article>"
    "<section id='comments'><p>Great article, thanks!</p></section></main>"
    "<footer><p>Copyright 2026 The Paper</p></footer></body></html>"
)


@pytest.fixture(scope="module")
def features():
    return block_features(Document.parse(PAGE))


def row_of(features, text: str) -> dict[str, float]:
    i = next(i for i, t in enumerate(features.blocks.texts) if t.startswith(text))
    return dict(zip(FEATURE_NAMES, features.matrix[i].tolist(), strict=True))


def test_one_finite_row_per_block(features):
    assert features.matrix.shape == (features.blocks.size, len(FEATURE_NAMES))
    assert features.blocks.size == 12 + 1 + 8 + 2
    assert np.isfinite(features.matrix).all()
    assert len(set(FEATURE_NAMES)) == len(FEATURE_NAMES)


def test_same_page_same_features(features):
    again = block_features(Document.parse(PAGE))
    assert again.blocks.texts == features.blocks.texts
    assert np.array_equal(again.matrix, features.matrix)


def test_links_tags_and_keywords_are_read_at_the_block(features):
    nav = row_of(features, "Section 3")
    para = row_of(features, "Paragraph 2")
    comment = row_of(features, "Great article")
    footer = row_of(features, "Copyright")
    assert nav["link_ratio"] == 1.0 and para["link_ratio"] == 0.0
    assert nav["in_nav"] == 1 and nav["in_li"] == 1 and nav["kw_header_above"] == 1
    assert para["in_article"] == 1 and para["in_main"] == 1 and para["tag_p"] == 1
    assert para["kw_content_above"] == 1 and para["kw_content_near"] == 1
    assert comment["kw_comment_above"] == 1 and comment["in_article"] == 0
    assert footer["in_footer"] == 1
    assert row_of(features, "Council approves")["heading"] == 1
    assert row_of(features, "Council approves")["title_overlap"] == 1.0
    assert para["ld_newsarticle"] == 1 and para["ld_product"] == 0


def test_seed_signals_favour_the_article(features):
    para = row_of(features, "Paragraph 2")
    nav = row_of(features, "Section 3")
    assert para["in_cectd"] == 1.0 and nav["in_cectd"] == 0.0
    assert para["ttr"] > nav["ttr"] and para["ctd"] > nav["ctd"]
    assert para["sentence_ends"] >= 1 and para["log_chars"] > nav["log_chars"]


def test_neighbour_columns_are_the_neighbours_values(features):
    m = features.matrix
    col = {n: i for i, n in enumerate(FEATURE_NAMES)}
    for offset in WINDOW_OFFSETS:
        shifted = m[:, col[f"log_chars@{offset:+d}"]]
        for i in range(m.shape[0]):
            j = i + offset
            expected = m[j, col["log_chars"]] if 0 <= j < m.shape[0] else 0.0
            assert shifted[i] == expected


def test_keyword_tokens():
    group = {g: 1 << i for i, g in enumerate(KEYWORD_GROUPS)}
    assert token_bits("comments") & group["comment"]
    assert token_bits("ad") & group["ad"] and not token_bits("header") & group["ad"]
    assert not token_bits("read") & group["ad"]
    assert token_bits("navbar") & group["nav"]
    assert token_bits("") == 0


def test_smooth_gaussian_keeps_constants_and_length():
    assert np.allclose(smooth_gaussian(np.full(7, 3.0), 2.0), 3.0)
    assert smooth_gaussian(np.arange(3.0), 5.0).shape == (3,)
    spike = smooth_gaussian(np.array([0, 0, 0, 9.0, 0, 0, 0]), 1.0)
    assert spike.argmax() == 3 and spike[3] < 9.0


def test_empty_and_hostile_pages_give_valid_rows():
    assert block_features(Document.parse("<html><body></body></html>")).matrix.shape == (
        0,
        len(FEATURE_NAMES),
    )
    deep = "<div class='c'>" * 3000 + "deep text" + "</div>" * 3000
    f = block_features(Document.parse(deep))
    assert f.blocks.texts == ["deep text"] and np.isfinite(f.matrix).all()
    one_line = "<p>" + "word " * 200_000 + "</p>"
    f = block_features(Document.parse(one_line))
    assert f.matrix.shape[0] == 1 and np.isfinite(f.matrix).all()


def test_repeated_structure_and_repeated_text():
    cards = "".join(
        f"<div class='card'><h3>Product {i}</h3><p class='price'>Add to cart</p></div>" for i in range(6)
    )
    page = (
        "<html><body><div class='grid'>" + cards + "</div>"
        "<div class='intro'><p>" + ARTICLE[0] + "</p></div><div class='other'><p>Lonely note</p></div>"
        "</body></html>"
    )
    features = block_features(Document.parse(page))
    card_title = row_of(features, "Product 2")
    price = row_of(features, "Add to cart")
    para = row_of(features, "Paragraph 0")
    # six sibling <div class='card'>: the card is the parent of the heading
    assert card_title["repeat_parent"] == pytest.approx(np.log1p(6))
    assert card_title["repeat_owner"] == pytest.approx(np.log1p(1))  # one <h3> per card
    assert para["repeat_parent"] == pytest.approx(np.log1p(1))  # the intro and the other div differ
    assert price["text_repeats"] == pytest.approx(np.log(6)) and card_title["text_repeats"] == 0.0


def test_blocks_of_one_template_share_its_number():
    items = "".join(f"<li class='result'><a href='/r{i}'>Result {i}</a></li>" for i in range(4))
    page = (
        "<html><body><ul class='results'>" + items + "<li class='ad'>Sponsored result</li></ul>"
        "<ol class='results'><li class='result'>Other list</li></ol>"
        "<div class='post'><p>First post</p></div><div class='post'><p>Second post</p></div>"
        "<div class='note'><p>A note</p></div></body></html>"
    )
    features = block_features(Document.parse(page))
    texts, templates = features.blocks.texts, features.templates.tolist()
    template = dict(zip(texts, templates, strict=True))
    assert len(templates) == features.blocks.size
    assert sorted(set(templates)) == list(range(len(set(templates))))
    assert len({template[f"Result {i}"] for i in range(4)}) == 1
    assert template["Sponsored result"] != template["Result 0"]  # another class
    assert template["Other list"] != template["Result 0"]  # <ol>, not <ul>
    assert template["First post"] == template["Second post"] != template["A note"]
