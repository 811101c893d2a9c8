"""CETD (Sun, Song & Liao, SIGIR 2011): formulas against the paper's worked example, the array
algorithms against plain recursive versions, extraction on hand-built pages, degenerate input."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from contentx_udf import extract
from contentx_udf.methods.cetd import (
    composite_text_density,
    density_sum,
    extract_by_density_sum,
    nearest_block,
    node_counts,
    smooth_with_siblings,
    subtree_argmax,
    text_density,
)
from contentx_udf.page.document import TAG_IDS, Document

from ..helpers import ARTICLE, NAV, assert_not_failed, element_indices

CETD_METHODS = ("cetd-ds", "cectd-s", "cectd-ds")

# Example 1 of the paper (§3.1), with the article body shortened so that the counts are those of
# Example 2: headline 46 characters, body 24 + a 15-character link = 39.
EXAMPLE_1 = (
    '<html><body><div class="main"><div class="article">'
    '<div class="articleHeadline">South Korea to Hold Artillery Drills on Island</div>'
    '<div class="articleBody">The announcement came as <a>Bill Richardson</a></div>'
    "</div></div></body></html>"
)


# --- formulas: §3.2 Example 2 and Def. 2 -----------------------------------------------------


def test_text_density_reproduces_example_2():
    # Example 2: main 85/4, article 85/3, headline 46/1, body 39/1, <a> 15/(0 -> 1).
    chars = np.array([85, 85, 46, 39, 15])
    tags = np.array([4, 3, 1, 1, 0])
    assert text_density(chars, tags) == pytest.approx([21.25, 28.33, 46, 39, 15], abs=0.005)


def test_node_counts_of_example_1_give_example_2():
    dom = Document.parse(EXAMPLE_1).dom
    counts = node_counts(dom)
    main, article, headline, body = element_indices(dom, "div")
    (link,) = element_indices(dom, "a")
    nodes = [main, article, headline, body, link]
    assert counts.chars[nodes].tolist() == [85, 85, 46, 39, 15]
    assert counts.tags[nodes].tolist() == [4, 3, 0, 1, 0]
    density = text_density(counts.chars, counts.tags)
    assert density[nodes] == pytest.approx([21.25, 28.33, 46, 39, 15], abs=0.005)
    assert counts.link_chars[nodes].tolist() == [15, 15, 0, 15, 15]
    assert counts.link_tags[[main, article, body]].tolist() == [1, 1, 1]


def test_composite_text_density_matches_definition_2():
    # articleBody of Example 1: C = 39, T = 1, LC = 15, LT = 1; LC_b / C_b = 15 / 85.
    c, t, lc, lt, ratio = 39.0, 1.0, 15.0, 1.0, 15 / 85
    base = math.log(c / (c - lc) * lc + ratio * c + math.e)
    expected = c / t * math.log(c / lc * t / lt, base)
    got = composite_text_density(np.array([c]), np.array([t]), np.array([lc]), np.array([lt]), ratio)
    assert got[0] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(
        39 * math.log(2.6) / math.log(math.log(24.375 + 6.882 + math.e)), rel=1e-3
    )


def test_composite_text_density_edge_cases():
    ratio = 0.3
    # only hyperlinks: C = LC, T = LT -> log(1) = 0 ("a node's density will be zero")
    only_links = composite_text_density(
        np.array([40.0]), np.array([4.0]), np.array([40.0]), np.array([4.0]), ratio
    )
    assert only_links[0] == 0.0
    # no characters -> 0, no nan; zero denominators are set to 1
    empty = composite_text_density(np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([0.0]), ratio)
    assert empty[0] == 0.0
    plain = composite_text_density(np.array([100.0]), np.array([0.0]), np.array([0.0]), np.array([0.0]), 0.0)
    assert plain[0] == pytest.approx(100 * math.log(100) / math.log(math.log(1 + math.e)))
    # more links with the same text lowers the density
    few, many = composite_text_density(
        np.array([200.0, 200.0]), np.array([4.0, 4.0]), np.array([20.0, 120.0]), np.array([1.0, 3.0]), ratio
    )
    assert few > many > 0


def test_link_only_elements_count_as_link_tags():
    html = "<body><ul><li><a>one</a></li><li><a>two</a></li><li>three <a>x</a></li></ul></body>"
    dom = Document.parse(html).dom
    (ul,) = element_indices(dom, "ul")
    with_rule = node_counts(dom, link_only_elements_as_links=True)
    without = node_counts(dom, link_only_elements_as_links=False)
    # 3 <a> + the two <li> that hold nothing but a link (the third has its own text)
    assert with_rule.link_tags[ul] == 5
    assert without.link_tags[ul] == 3
    assert with_rule.tags[ul] == 6


def _reference_link_tags(dom, link_ids: set[int]) -> list[int]:
    """CountLinkTag of the reference code (textdensity.cpp), recursive, on DomArrays."""
    kids: dict[int, list[int]] = {i: [] for i in range(dom.size)}
    for i in range(1, dom.size):
        kids[int(dom.parent[i])].append(i)
    elements = [i for i in range(dom.size) if not dom.is_text[i]]
    char: dict[int, int] = {}
    tag: dict[int, int] = {}
    lchar: dict[int, int] = {}
    ltag: dict[int, int] = {}

    def count(e: int, in_link: bool) -> None:
        is_link = int(dom.tag_id[e]) in link_ids
        el_kids = [k for k in kids[e] if not dom.is_text[k]]
        for k in el_kids:
            count(k, in_link or is_link)
        char[e] = sum(int(dom.text_len[k]) for k in kids[e] if dom.is_text[k]) + sum(char[k] for k in el_kids)
        tag[e] = sum(tag[k] + 1 for k in el_kids)
        if is_link:
            lchar[e], ltag[e] = char[e], tag[e]
            return
        lchar[e] = sum(lchar[k] for k in el_kids) + (
            sum(int(dom.text_len[k]) for k in kids[e] if dom.is_text[k]) if in_link else 0
        )
        total = 0
        for k in el_kids:
            total += ltag[k]
            if int(dom.tag_id[k]) in link_ids:
                total += 1
            elif ltag[k] == tag[k] and char[k] == lchar[k] and ltag[k] != 0:
                total += 1
        ltag[e] = total

    count(0, False)
    return [ltag[e] for e in elements]


def _random_page(rng: random.Random, n: int) -> str:
    parts, stack = ["<html><body>"], []
    for _ in range(n):
        r = rng.random()
        if r < 0.3 and len(stack) < 8:
            tag = rng.choice(["div", "ul", "li", "p", "span"])
            parts.append(f"<{tag}>")
            stack.append(tag)
        elif r < 0.5 and stack:
            parts.append(f"</{stack.pop()}>")
        elif r < 0.65:
            parts.append(f"<a href=x>{'w' * rng.randrange(0, 6)}</a>")
        elif r < 0.72:
            parts.append("<img>" if rng.random() < 0.5 else "<br>")
        else:
            parts.append("t" * rng.randrange(1, 9) + " ")
    parts.extend(f"</{t}>" for t in reversed(stack))
    return "".join(parts) + "</body></html>"


def test_link_tags_match_the_recursive_reference_code():
    rng = random.Random(11)
    link_ids = {TAG_IDS["a"], TAG_IDS["button"], TAG_IDS["select"]}
    for _ in range(150):
        dom = Document.parse(_random_page(rng, rng.randrange(5, 60))).dom
        counts = node_counts(dom, link_only_elements_as_links=True)
        elements = ~dom.is_text
        assert counts.link_tags[elements].astype(int).tolist() == _reference_link_tags(dom, link_ids)


# --- DensitySum and the array forms of the tree walks ----------------------------------------


def test_density_sum_adds_children_and_loose_text():
    html = "<body><div><p>aaaaaaaaaa</p>loose text<p>bbbbb <b>cc</b></p></div></body>"
    dom = Document.parse(html).dom
    counts = node_counts(dom)
    density = text_density(counts.chars, counts.tags)
    (div,) = element_indices(dom, "div")
    p1, p2 = element_indices(dom, "p")
    assert density[p1] == 10 and density[p2] == 7  # 7 characters, 1 tag
    with_loose = density_sum(dom, density, counts.is_element, loose_text_in_sum=True)
    without = density_sum(dom, density, counts.is_element, loose_text_in_sum=False)
    assert with_loose[div] == pytest.approx(10 + 10 + 7)  # "loose text" = 10 characters, T = 0 -> 1
    assert without[div] == pytest.approx(10 + 7)
    assert with_loose[p1] == density[p1]  # a text-only element keeps its own density


def test_subtree_argmax_matches_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(40):
        dom = Document.parse(_random_page(random.Random(int(rng.integers(1 << 30))), 80)).dom
        values = rng.integers(0, 6, dom.size).astype(float)  # many ties
        values[dom.is_text] = -np.inf
        nodes = np.arange(dom.size)
        floor = float(rng.choice([-np.inf, 2.0, 4.0]))
        got = subtree_argmax(dom, values, nodes, floor)
        for i in range(dom.size):
            sub = values[i : dom.end[i]]
            best = i + int(np.argmax(sub))
            expected = best if np.isfinite(sub.max()) and sub.max() >= floor else -1
            assert got[i] == expected


def test_nearest_block_and_sibling_smoothing():
    html = "<body><div><p>x <b><i>y</i></b></p><span>z</span></div></body>"
    dom = Document.parse(html).dom
    up = nearest_block(dom)
    (div,) = element_indices(dom, "div")
    (p,) = element_indices(dom, "p")
    (i_el,) = element_indices(dom, "i")
    (span,) = element_indices(dom, "span")
    assert up[i_el] == p and up[span] == div and up[0] == 0
    density = np.zeros(dom.size)
    density[p], density[span] = 8.0, 4.0
    smoothed = smooth_with_siblings(dom, density, 0.5)
    assert smoothed[p] == pytest.approx((8 + 0.5 * 4) / 1.5)
    assert smoothed[span] == pytest.approx((4 + 0.5 * 8) / 1.5)
    assert smoothed[div] == density[div]


def test_threshold_is_the_minimum_density_on_the_path():
    # §4.2: the threshold is the smallest density between the max-DensitySum node and <body>
    html = (
        "<body><div>" + "<a>l</a>" * 30 + "<div><p>" + "x" * 300 + "</p><p>" + "y" * 300 + "</p></div></div>"
        "<p>" + "z" * 50 + "</p></body>"
    )
    dom = Document.parse(html).dom
    counts = node_counts(dom)
    density = text_density(counts.chars, counts.tags)
    sums = density_sum(dom, density, counts.is_element)
    sel = extract_by_density_sum(dom, density, sums, counts.is_element, lambda_=1.0)
    outer, inner = element_indices(dom, "div")
    assert sel.target == inner
    assert sel.threshold == pytest.approx(min(density[0], density[outer], density[inner]))
    half = extract_by_density_sum(dom, density, sums, counts.is_element, lambda_=0.5)
    assert half.threshold == pytest.approx(sel.threshold / 2)


# --- hand-built pages ------------------------------------------------------------------------

FOOTER = (
    '<div class="footer"><a href="/about">About us</a> | <a href="/contact">Contact</a> | '
    '<a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of use</a></div>'
)
SIDEBAR = (
    '<div class="related"><h3>Related</h3>'
    + "".join(f'<p><a href="/r{i}">Related story number {i} headline</a></p>' for i in range(6))
    + "</div>"
)


def news_page(inline_link: bool = True) -> str:
    paragraphs = [f"<p>{t}</p>" for t in ARTICLE]
    if inline_link:
        paragraphs[2] = f'<p>{ARTICLE[2]} See <a href="/budget">the budget document</a> online.</p>'
    return (
        "<html><head><title>t</title></head><body>"
        f'<div class="header">{NAV}</div>'
        '<div class="wrap"><div class="article"><h1>Council approves budget</h1>'
        + "".join(paragraphs)
        + f"</div>{SIDEBAR}</div>{FOOTER}</body></html>"
    )


@pytest.mark.parametrize("method", CETD_METHODS)
def test_news_page_keeps_article_and_drops_boilerplate(method):
    result = extract(news_page(), method)
    assert result.status == "ok", result.error
    for text in ARTICLE:
        assert text in result.text
    for noise in ("Section 3", "Related story number 2"):
        assert noise not in result.text
    if method != "cectd-s":
        assert "Privacy policy" not in result.text and "Terms of use" not in result.text


def test_smoothing_lifts_a_noisy_sibling():
    # §4.2: with data smoothing "some noisy nodes may be retained because of text density
    # increase": the footer next to the dense article wrapper passes the threshold.
    assert "Privacy policy" in extract(news_page(), "cectd-s").text
    assert "Privacy policy" not in extract(news_page(), "cectd-s", sibling_weight=0.0).text


@pytest.mark.parametrize("method", ["cetd-ds", "cectd-ds"])
def test_paper_settings_still_work(method):
    paper = {"block_min_sum_ratio": 0.0, "prune_ratio": 0.0, "loose_text_in_sum": False}
    result = extract(news_page(), method, **paper)
    assert result.status == "ok"
    assert all(text in result.text for text in ARTICLE)
    assert "Privacy policy" not in result.text


def test_inline_links_of_content_paragraphs_are_kept():
    result = extract(news_page(), "cectd-ds")
    assert "the budget document" in result.text
    # CECTD-S: only with the inline-follows-block improvement (a link's own density is 0)
    assert "the budget document" in extract(news_page(), "cectd-s").text
    assert "the budget document" not in extract(news_page(), "cectd-s", inline_follows_block=False).text


def test_two_separated_content_blocks():
    # §4.2 "multiple content blocks": the article is split by a link box
    first = "".join(f"<p>{t}</p>" for t in ARTICLE[:4])
    second = "".join(f"<p>{t}</p>" for t in ARTICLE[4:])
    html = (
        f'<html><body>{NAV}<div class="part1">{first}</div><div class="box">{NAV}</div>'
        f'<div class="part2">{second}</div>{FOOTER}</body></html>'
    )
    both = extract(html, "cectd-ds")
    assert all(t in both.text for t in ARTICLE) and both.scores["blocks"] >= 2
    assert "Privacy policy" not in both.text
    single = extract(html, "cectd-ds", multiple_blocks=False)
    assert single.scores["blocks"] == 1
    assert sum(t in single.text for t in ARTICLE) == 4


def test_low_density_block_in_the_content_root_is_pruned():
    box = '<div class="share">' + "".join(f'<a href="/x{i}">Share {i}</a> ' for i in range(8)) + "</div>"
    body = "".join(f"<p>{t}</p>" for t in ARTICLE[:4]) + box + "".join(f"<p>{t}</p>" for t in ARTICLE[4:])
    html = f"<html><body>{NAV}<div class=article>{body}</div>{FOOTER}</body></html>"
    pruned = extract(html, "cectd-ds")
    assert all(t in pruned.text for t in ARTICLE)
    assert "Share 3" not in pruned.text and pruned.scores["pruned_blocks"] >= 1
    kept = extract(html, "cectd-ds", prune_ratio=0.0)
    assert "Share 3" in kept.text


def test_scores_carry_the_method_figures():
    result = extract(news_page(), "cectd-ds")
    for key in ("threshold", "body_density", "max_density_sum", "target_density", "blocks"):
        assert key in result.scores
    assert result.scores["threshold"] <= result.scores["body_density"]
    assert result.scores["max_density_sum"] > 0


# --- degenerate input ------------------------------------------------------------------------

DEGENERATE = [
    "",
    b"",
    "<html></html>",
    "<html><body></body></html>",
    "just some text without any tags",
    "<p>one line</p>",
    "<html><body><a href=x>only a link</a></body></html>",
    "<html><body><img><br><hr></body></html>",
    "<html><body>" + "<div>" * 3000 + "deep text" + "</div>" * 3000 + "</body></html>",
    b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe<<>>",
]


@pytest.mark.parametrize("method", CETD_METHODS)
@pytest.mark.parametrize("html", DEGENERATE)
def test_degenerate_pages_do_not_raise(method, html):
    assert_not_failed(extract(html, method))


@pytest.mark.parametrize("method", CETD_METHODS)
def test_text_only_and_deep_pages_keep_their_text(method):
    assert extract("just some text without any tags", method).text == "just some text without any tags"
    deep = "<html><body>" + "<div>" * 3000 + "<p>deep text</p>" + "</div>" * 3000 + "</body></html>"
    assert "deep text" in extract(deep, method).text


@pytest.mark.parametrize("method", CETD_METHODS)
def test_large_flat_page_is_extracted_without_a_hang(method):
    """20,000 paragraphs: the text is found, within a generous time limit (a hang would give a
    ``timeout`` row).  Its speed, under 2 s, is measured by benchmarks/large_page.py."""
    html = (
        "<html><body>" + NAV + "".join(f"<p>{ARTICLE[i % 8]}</p>" for i in range(20_000)) + "</body></html>"
    )
    result = extract(html, method, time_limit=120)
    assert result.status == "ok", result.error
    assert ARTICLE[3] in result.text


def test_cectd_s_keeps_a_page_that_is_all_content():
    """No element is denser than <body>: the whole page is content, not nothing."""
    html = "<html><body>" + "".join(
        f"<p>Paragraph {i} says something with plenty of words in it.</p>" for i in range(12)
    )
    result = extract(html + "</body></html>", "cectd-s")
    assert result.status == "ok"
    assert "Paragraph 0 says" in result.text and "Paragraph 11 says" in result.text
    assert result.scores["whole_page"] == 1.0
