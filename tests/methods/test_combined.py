"""combined: the shipped classifier keeps an article's text and drops the page furniture, reads a
Discourse forum's ``<noscript>`` posts, says ``empty`` when nothing is left, and reports its
confidence and block counts."""

from __future__ import annotations

import numpy as np
import pytest

from contentx_udf import extract, extract_all
from contentx_udf.methods.combined import select_blocks, smooth_by_template

from ..helpers import ARTICLE, NAV
from .test_blocks import discourse_page

ARTICLE_PAGE = (
    "<html><head><title>Council approves the budget</title></head><body>"
    f"<header class='site-header'><nav>{NAV}</nav></header>"
    "<main><article class='post-content'><h1>Council approves the budget</h1>"
    + "".join(f"<p>{p}</p>" for p in ARTICLE)
    + "</article><aside class='sidebar'><h3>Most read</h3><ul>"
    + "".join(f"<li><a href='/r{k}'>Another story number {k}</a></li>" for k in range(6))
    + "</ul></aside></main>"
    "<div class='share'><a href='#'>Share on Facebook</a> <a href='#'>Share on X</a></div>"
    "<footer class='site-footer'><p>Copyright 2026 The Paper. All rights reserved.</p></footer></body></html>"
)


def test_keeps_the_article_and_drops_the_furniture():
    result = extract(ARTICLE_PAGE, "combined")
    assert result.status == "ok", result.error
    lines = result.text.split("\n")
    assert sum(line.startswith("Paragraph ") for line in lines) == len(ARTICLE)
    for boilerplate in ("Section 3", "Another story number 2", "Share on Facebook", "Copyright 2026"):
        assert boilerplate not in result.text
    s = result.scores
    assert 0 < s["blocks_kept"] < s["blocks_total"]
    assert 0.5 <= s["content_confidence"] <= 1.0
    assert s["noscript_view"] == 0.0
    types = {k: v for k, v in s.items() if k.startswith("page_type_")}
    assert len(types) == 7 and abs(sum(types.values()) - 1.0) < 1e-9
    assert max(types, key=types.get) == "page_type_article"


def test_reads_the_noscript_posts_of_a_discourse_forum():
    results = extract_all(discourse_page(), ["combined", "cectd-ds"])
    assert "Post 3" not in results["cectd-ds"].text  # the seeds drop <noscript>
    forum = results["combined"]
    assert forum.status == "ok", forum.error
    assert forum.scores["noscript_view"] == 1.0
    assert sum(line.startswith("Post ") for line in forum.text.split("\n")) == 6
    assert "Powered by Discourse" not in forum.text


def test_nothing_to_extract_is_empty_not_ok():
    for html in ("<html><body><img src='a.png'></body></html>", b"", "<html><body>   </body></html>"):
        result = extract(html, "combined")
        assert result.status == "empty" and result.text == "" and result.error
        assert result.scores["blocks_kept"] == 0


def test_a_heading_goes_with_the_content_after_it():
    probability = np.array([0.1, 0.9, 0.2, 0.1, 0.8])
    heading = np.array([True, False, True, False, False])
    # block 0 precedes kept block 1; block 2 precedes dropped block 3
    assert select_blocks(probability, heading, 0.5, 2).tolist() == [True, True, False, False, True]
    assert select_blocks(probability, heading, 0.5, 0).tolist() == [False, True, False, False, True]


def test_blocks_of_a_template_are_pulled_to_its_mean():
    probability = np.array([0.9, 0.9, 0.3, 0.2, 0.8, 0.6])
    templates = np.array([0, 0, 0, 1, 1, 2])
    words = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 1.0])
    # template 0 (three blocks): word-weighted mean 0.6, each block moved halfway to it;
    # template 1 has two blocks, fewer than three: unchanged, as is the lone block
    smoothed = smooth_by_template(probability, templates, words, 0.5, 3)
    assert smoothed.tolist() == pytest.approx([0.75, 0.75, 0.45, 0.2, 0.8, 0.6])
    pairs = smooth_by_template(probability, templates, words, 0.5, 2)
    assert pairs[3:5].tolist() == pytest.approx([0.35, 0.65])
    assert smooth_by_template(probability, templates, words, 0.0, 3) is probability


def test_precision_keeps_a_subset_of_balanced_and_recall_a_superset():
    modes = ("precision", "balanced", "recall")
    runs = {mode: extract(ARTICLE_PAGE, "combined", mode=mode) for mode in modes}
    assert all(r.status == "ok" for r in runs.values())
    lines = {mode: set(r.text.split("\n")) for mode, r in runs.items()}
    assert lines["precision"] <= lines["balanced"] <= lines["recall"]
    assert sum(line.startswith("Paragraph ") for line in lines["precision"]) == len(ARTICLE)
    with pytest.raises(ValueError, match="must be one of balanced, precision, recall"):
        extract(ARTICLE_PAGE, "combined", mode="fast")


FURNISHED_ARTICLE = (
    "<html><head><title>Council approves the budget</title></head><body>"
    f"<header class='site-header'><nav>{NAV}</nav></header>"
    "<main><article class='post'><h1>Council approves the budget</h1>"
    "<div class='byline'>By <a rel='author' href='/authors/jane'>Jane Doe</a>, City Reporter</div>"
    "<time datetime='2026-03-02'>March 2, 2026</time>"
    "<figure><img src='/council.jpg' alt=''><figcaption>The council chamber on Monday evening. "
    "Photo: John Smith</figcaption></figure>"
    + "".join(f"<p>{p}</p>" for p in ARTICLE[:4])
    + "<div class='newsletter-signup'><h3>Get the morning briefing</h3><p>Sign up for our newsletter "
    "and get the day's top stories in your inbox.</p><form><input type='email' placeholder='Your email'>"
    "<button>Subscribe</button></form></div>"
    + "".join(f"<p>{p}</p>" for p in ARTICLE[4:])
    + "</article><section id='comments' class='comments'><h2>3 comments</h2>"
    + "".join(
        f"<div class='comment' itemprop='comment'><span class='comment-author'>reader{k}</span>"
        f"<p class='comment-body'>I think this is a {w} decision for the town and I hope they follow "
        "through on it.</p></div>"
        for k, w in enumerate(["great", "terrible", "reasonable"])
    )
    + "</section></main><footer class='site-footer'><p>Copyright 2026 The Paper.</p></footer></body></html>"
)


def test_modes_on_an_article_with_caption_byline_newsletter_and_comments():
    modes = ("precision", "balanced", "recall")
    texts = {m: extract(FURNISHED_ARTICLE, "combined", mode=m).text for m in modes}
    for mode, text in texts.items():
        assert sum(line.startswith("Paragraph ") for line in text.split("\n")) == len(ARTICLE), mode
        assert "decision for the town" not in text and "Copyright" not in text, mode  # comments, footer
    for mode in ("precision", "balanced"):
        assert "Photo: John Smith" not in texts[mode] and "Jane Doe" not in texts[mode], mode
    assert "Photo: John Smith" in texts["recall"]  # the recall mode keeps the caption
    lines = {m: set(t.split("\n")) for m, t in texts.items()}
    assert lines["precision"] <= lines["balanced"] <= lines["recall"]


def test_threshold_and_model_parameters():
    strict = extract(ARTICLE_PAGE, "combined", threshold=0.999999)
    loose = extract(ARTICLE_PAGE, "combined", threshold=0.000001)
    assert strict.scores["blocks_kept"] <= loose.scores["blocks_kept"] == loose.scores["blocks_total"]
    missing = extract(ARTICLE_PAGE, "combined", model="/nonexistent/model.npz")
    assert missing.status == "error" and "cannot read block model" in missing.error
    with pytest.raises(ValueError):
        extract(ARTICLE_PAGE, "combined", heading_window=-1)
    with pytest.raises(ValueError, match="at most 1.0"):
        extract(ARTICLE_PAGE, "combined", template_mix=1.5)
    unsmoothed = extract(ARTICLE_PAGE, "combined", template_mix=0.0)
    assert unsmoothed.status == "ok" and unsmoothed.scores["blocks_total"] == strict.scores["blocks_total"]
