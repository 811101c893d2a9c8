"""Document.parse: hidden elements are removed, except page content a script reveals."""

from __future__ import annotations

from contentx_udf import extract
from contentx_udf.page.document import HIDDEN_CONTENT_MIN_CHARS, Document

from ..conftest import DEVSET

ARTICLE = " ".join(
    f"Sentence {i} of the article explains how the hidden wrapper keeps the page readable." for i in range(12)
)
assert len(ARTICLE) > HIDDEN_CONTENT_MIN_CHARS


def visible_text(html: str) -> str:
    return Document.parse(html).dom.full_text


def test_anti_flicker_wrapper_holding_the_page_is_kept():
    # Next.js-style: body > div#__next > div[style=visibility:hidden] revealed by a script
    html = (
        '<html><body><div id="__next"><div style="visibility:hidden;min-height:100vh">'
        f"<h1>Title</h1><p>{ARTICLE}</p></div></div></body></html>"
    )
    doc = Document.parse(html)
    assert ARTICLE in doc.dom.full_text
    assert doc.notes["kept_hidden_content"] == 1.0
    result = extract(html, method="cectd-ds")
    assert result.status == "ok" and "Sentence 11 of the article" in result.text


def test_hidden_body_holding_the_page_is_kept():
    html = f'<html><body style="visibility: hidden"><p>{ARTICLE}</p></body></html>'
    assert ARTICLE in visible_text(html)


def test_react_streamed_parts_are_kept():
    html = (
        '<html><body><main><template id="B:0"></template><p>Loading...</p></main>'
        '<div hidden id="S:0"><p>Short streamed review text.</p></div>'
        '<script>$RC("B:0","S:0")</script></body></html>'
    )
    assert "Short streamed review text." in visible_text(html)


def test_small_or_deep_hidden_elements_are_still_removed():
    html = (
        f"<html><body><div><p>{ARTICLE}</p>"
        '<div style="display:none"><p>Hidden modal: subscribe now</p></div>'
        "<div><div><div hidden><p>" + "deep hidden text " * 200 + "</p></div></div></div>"
        '</div><div hidden id="modal">Cookie settings</div></body></html>'
    )
    text = visible_text(html)
    assert ARTICLE in text
    assert "subscribe now" not in text
    assert "deep hidden text" not in text  # deeper than HIDDEN_CONTENT_DEPTH
    assert "Cookie settings" not in text


def test_hidden_wrapper_with_little_of_the_page_is_removed():
    hidden = "menu entry " * 60  # over HIDDEN_CONTENT_MIN_CHARS, but a small part of the page
    html = f"<html><body><nav hidden>{hidden}</nav><article><p>{ARTICLE * 3}</p></article></body></html>"
    text = visible_text(html)
    assert "menu entry" not in text and ARTICLE in text


TITLE_PAGES = [
    b"<svg><title>svg t</title></svg><title>real</title>",
    b"<body><p>x</p><title>in  body\n</title>",
    b"<TITLE> up </TITLE><title>second</title>",
    b"<math><title>m</title></math>",
    b"<template><title>tt</title></template><title>after</title>",
    b"<noscript><title>ns</title></noscript>",
    b"<textarea><title>ta</title></textarea><title>z</title>",
    b"<p>no title</p>",
    b"<title></title>",
]


def test_title_is_the_first_title_element_as_a_css_query_finds_it():
    """``Document.title`` (Lexbor's walk by tag name) is the whitespace-collapsed text of the
    element ``css_first("title")`` finds, on SVG/MathML titles, titles in the body, in a template
    or a textarea, upper case, none or empty, and on the scrapinghub pages."""
    from selectolax.lexbor import LexborHTMLParser

    from contentx_udf.evaluation import load_gold

    pages = list(TITLE_PAGES)
    gold = DEVSET
    if gold.exists():
        pages += [p.html for p in load_gold(gold)]
    titled = 0
    for page in pages:
        node = LexborHTMLParser(page).css_first("title")
        want = " ".join(node.text().split()) or None if node is not None else None
        assert Document.parse(page).title == want
        titled += want is not None
    assert titled >= 7
