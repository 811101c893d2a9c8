"""Blocks: every run of visible text between block boundaries is one block, in document order, with
its nearest block-level owner; whitespace-only runs are no blocks; the ``<noscript>`` crawler view
is classified only when it clearly holds the page's text."""

from __future__ import annotations

from contentx_udf.methods.blocks import content_document, noscript_html, page_blocks
from contentx_udf.page.document import TAG_IDS, Document

PAGE = (
    "<html><head><title>T</title></head><body>"
    "<div id='top'><h1>The headline</h1>\n  <p>First <b>bold</b> paragraph with <a href='/x'>a link</a>.</p>"
    "<ul><li>one</li>\n<li>two</li></ul>  <div>   </div>tail text</div>"
    "</body></html>"
)


def test_blocks_are_the_text_runs_in_order_with_their_owner():
    doc = Document.parse(PAGE)
    blocks = page_blocks(doc.dom)
    assert blocks.texts == ["The headline", "First bold paragraph with a link.", "one", "two", "tail text"]
    owner_tags = [int(doc.dom.tag_id[i]) for i in blocks.owner]
    assert owner_tags == [TAG_IDS[t] for t in ("h1", "p", "li", "li", "div")]
    # every text node of a block points at it; whitespace between blocks points nowhere
    dom = doc.dom
    for b, first in enumerate(blocks.first_node.tolist()):
        ordinal = int((dom.text_nodes == first).nonzero()[0][0])
        assert blocks.text_block[ordinal] == b
    whitespace = [i for i, t in enumerate(dom.text_list) if not t.strip()]
    assert whitespace and all(blocks.text_block[i] == -1 for i in whitespace)


def test_a_page_without_text_has_no_blocks():
    for html in ("<html><body><img src=x><div> \n </div></body></html>", "", "<p></p>"):
        blocks = page_blocks(Document.parse(html).dom)
        assert blocks.size == 0 and blocks.first_node.size == 0


def discourse_page(posts: int = 6) -> str:
    body = "".join(
        f"<div class='post'><p>Post {i}: I tried the new release on my laptop and the import step now "
        f"finishes in half the time, but the settings page still forgets the proxy after a restart.</p></div>"
        for i in range(posts)
    )
    return (
        "<html><head><title>Forum thread</title></head><body>"
        "<header><nav><a href='/'>Home</a> <a href='/latest'>Latest</a></nav></header>"
        "<div id='app'></div><script>boot()</script>"
        f"<noscript><div id='topic'><h1>Proxy settings lost</h1>{body}</div></noscript>"
        "<footer>Powered by Discourse</footer></body></html>"
    )


def test_noscript_view_replaces_a_body_without_text():
    doc = Document.parse(discourse_page())
    assert "Post 3" not in doc.dom.full_text  # every method drops <noscript>
    assert "Post 3" in noscript_html(doc.html)
    view, used = content_document(doc)
    assert used
    texts = page_blocks(view.dom).texts
    assert texts[0] == "Proxy settings lost" and sum(t.startswith("Post ") for t in texts) == 6
    assert view.title == "Forum thread"


def test_noscript_view_is_not_used_when_the_body_has_the_text():
    article = "".join(f"<p>{'Visible words in the article body. ' * 12}</p>" for _ in range(6))
    noscript = "<noscript><img src='pixel.gif'> Please enable JavaScript.</noscript>"
    html = f"<html><body>{article}{noscript}</body></html>"
    doc = Document.parse(html)
    assert content_document(doc) == (doc, False)
    # a long noscript beside an even longer body is not used either
    html = f"<html><body>{article * 3}<noscript>{article}</noscript></body></html>"
    doc = Document.parse(html)
    assert content_document(doc)[1] is False


def test_noscript_holding_styles_is_not_a_crawler_view():
    # WordPress plugins put <style> rules in <noscript> (WCXB dev 0218, 0283): long once the tags
    # are stripped, but nothing a crawler would read; the body keeps its blocks
    article = "".join(f"<p>{'Visible words in the article body. ' * 6}</p>" for _ in range(3))
    rules = "".join(f".card-{i} .wrapper{{opacity:1!important;visibility:visible}}" for i in range(60))
    html = f"<html><head><noscript><style>{rules}</style></noscript></head><body>{article}</body></html>"
    doc = Document.parse(html)
    assert len(rules) > 2 * doc.visible_chars  # the regex estimate alone would pick the noscript
    view, from_noscript = content_document(doc)
    assert from_noscript is False and view is doc
    assert page_blocks(view.dom).size == 3
