"""URL blocklists: domains match the host and its parent domains only; exact URLs; banned words
and sub-words; the file format."""

from __future__ import annotations

import pyarrow as pa
import pytest

from contentx_udf.corpus.quality.urls import UrlBlocklist, parse_entry
from contentx_udf.errors import UserError


def blocklist(tmp_path, *lines: str) -> UrlBlocklist:
    path = tmp_path / "list.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return UrlBlocklist.load([str(path)])


def test_a_domain_blocks_its_subdomains_but_not_lookalikes(tmp_path):
    listed = blocklist(tmp_path, "example.com")
    urls = [
        "https://example.com/",
        "http://news.example.com/a/b?c=d",
        "https://a.b.EXAMPLE.com.:8080/x",
        "https://user:pw@shop.example.com/",
        "https://notexample.com/",
        "https://example.com.evil.org/",
        "https://example.org/example.com",
        None,
    ]
    assert listed.match(pa.array(urls)) == ["domain"] * 4 + [None] * 4


def test_exact_urls(tmp_path):
    listed = blocklist(tmp_path, "url:https://example.org/bad?x=1", "https://example.net/page")
    urls = ["https://example.org/bad?x=1", "https://example.org/bad?x=2", "https://example.net/page"]
    assert listed.match(pa.array(urls)) == ["url", None, "url"]


def test_banned_words_are_whole_url_words(tmp_path):
    listed = blocklist(tmp_path, "word:casino")
    urls = [
        "https://x.com/best-CASINO-2024",
        "https://casino.example/",
        "https://x.com/casinos",
        "https://x.com/",
    ]
    assert listed.match(pa.array(urls)) == ["word", "word", None, None]


def test_banned_subwords_match_inside_words_and_across_separators(tmp_path):
    listed = blocklist(tmp_path, "subword:casino", "subword:bad-word")
    urls = [
        "https://x.com/megacasinos",
        "https://bad.word.example/",
        "https://x.com/badly/wording",
        "https://x.com/",
    ]
    assert listed.match(pa.array(urls)) == ["subword", "subword", None, None]


def test_the_first_rule_in_order_is_reported(tmp_path):
    listed = blocklist(tmp_path, "example.com", "word:news", "subword:exam")
    urls = ["https://news.example.com/", "https://news.example.org/", "https://examples.org/"]
    assert listed.match(pa.array(urls)) == ["domain", "word", "subword"]


def test_file_format(tmp_path):
    listed = blocklist(
        tmp_path,
        "# a comment",
        "",
        "  Example.COM.  ",
        "domain:two.example",
        "URL:https://three.example/x",
        "word:Foo-Bar",
        "subword:baz",
    )
    assert listed.domains == {"example.com", "two.example"}
    assert listed.urls == {"https://three.example/x"}
    assert listed.words == {"foobar"}
    assert listed.subwords == {"baz"}
    assert parse_entry("# comment") == (None, "")


def test_several_files_add_up(tmp_path):
    (tmp_path / "a.txt").write_text("a.example\n")
    (tmp_path / "b.txt").write_text("word:b\n")
    listed = UrlBlocklist.load([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
    assert listed.match(pa.array(["https://x.a.example/", "https://b.example/b"])) == ["domain", "word"]


def test_a_missing_file_is_one_user_error(tmp_path):
    with pytest.raises(UserError, match=r"^--url-blocklist: no such file .*nope\.txt$"):
        UrlBlocklist.load([str(tmp_path / "nope.txt")])


def test_an_empty_entry_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="list.txt:2: empty word entry"):
        blocklist(tmp_path, "example.com", "word:")
