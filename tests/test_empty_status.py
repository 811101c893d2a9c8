"""A page from which a method extracts nothing gets ``status = "empty"`` with a reason, for every method,
never ``ok`` with an empty text (issue 10, item 7; decided once in ``core._run``)."""

from __future__ import annotations

import pytest

from contentx_udf import METHODS, extract, extract_all
from contentx_udf.core import EMPTY_ERROR, EMPTY_PAGE_ERROR

from .helpers import ARTICLE, NAV, assert_not_failed

#: The seed methods (the papers' extractors); all drop ``<noscript>`` with the other invisible elements.
SEED_METHODS = tuple(m for m in METHODS if m != "combined")

NO_TEXT = "<html><body><img src=x></body></html>"

_POSTS = "".join(
    f'<div class="topic-body crawler-post" itemprop="comment"><div class="post" itemprop="text">'
    f"<p>Post {i}: since the upgrade last night the backup job fails with a permission error on the "
    f"mounted share; the log says the service user lacks write access, although nothing changed in "
    f"the configuration and rolling the package back did not help either. Any idea what to check?</p>"
    f"</div></div>"
    for i in range(8)
)
#: A Discourse topic as crawled: the visible body is the JavaScript app's loading splash, and the whole
#: crawler view (header, navigation, the topic and its posts) sits only in ``<noscript>``
#: (WCXB dev 0501-0512 are such pages).
DISCOURSE = (
    "<!DOCTYPE html><html><head><title>Backup fails after upgrade - Support - Example Forum</title>"
    "<script>window.app = {};</script></head><body>"
    '<section id="d-splash"><style>#d-splash { display: grid; }</style>'
    '<div class="preloader-image">' + '<div class="dots"></div>' * 5 + "</div>"
    "<script>document.body.classList.add('splash')</script></section>"
    "<noscript>"
    '<header class="d-header"><a href="/">Example Forum</a> <a href="/login">Log In</a></header>'
    '<nav class="crawler-nav"><ul><li><a href="/">Home</a></li><li><a href="/categories">Categories</a>'
    '</li><li><a href="/guidelines">Guidelines</a></li></ul></nav>'
    '<div id="main-outlet"><h1>Backup fails after upgrade</h1>' + _POSTS + "</div>"
    "<footer><p>Powered by Discourse, best viewed with JavaScript enabled</p></footer>"
    "</noscript></body></html>"
)


def test_seed_methods_are_registered():
    assert set(SEED_METHODS) <= set(METHODS)


def test_a_page_without_text_is_empty_for_every_method():
    results = extract_all(NO_TEXT, METHODS)
    assert set(results) == set(METHODS)
    for method, r in results.items():
        assert r.status == "empty", (method, r.status, r.error)
        assert r.text == "" and r.error == EMPTY_PAGE_ERROR, method
        assert r.scores["content_ratio"] == 0.0 and r.scores["ms"] >= 0.0


@pytest.mark.parametrize("method", METHODS)
def test_extract_alone_agrees(method):
    r = extract(NO_TEXT.encode(), method, content_type="text/html")
    assert (r.status, r.text, r.error) == ("empty", "", EMPTY_PAGE_ERROR)


def test_noscript_only_forum_page_is_empty_for_the_seed_methods():
    results = extract_all(DISCOURSE, SEED_METHODS)
    for method, r in results.items():
        assert r.status == "empty", (method, r.status, r.text[:80])
        assert r.text == "" and r.error == EMPTY_PAGE_ERROR, method
        assert r.title == "Backup fails after upgrade - Support - Example Forum"


def test_visible_text_that_a_method_drops_is_empty_with_the_plain_reason():
    # a tiny page: the CCB family keeps none of a single short paragraph
    r = extract("<html><body><p>one short line</p></body></html>", "ccb")
    assert (r.status, r.text, r.error) == ("empty", "", EMPTY_ERROR)


def test_a_page_with_content_is_ok_for_the_seed_methods():
    html = "<html><body>" + NAV + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</body></html>"
    for method, r in extract_all(html, SEED_METHODS).items():
        assert r.status == "ok" and r.error is None, (method, r.error)
        assert r.text.strip(), method


@pytest.mark.parametrize("html", ["", b"", "<html></html>", "   ", NO_TEXT, DISCOURSE, "just text"])
def test_ok_if_and_only_if_there_is_text(html):
    for r in extract_all(html, METHODS).values():
        assert_not_failed(r)
