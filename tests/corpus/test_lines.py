"""Repeated lines across a crawl (contentx_udf/corpus/lines.py): keys, counting and removal on
hand-made pages, without Spark (the aggregation is simulated by counting keys per document)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from contentx_udf.corpus import lines as lines_module
from contentx_udf.corpus.lines import (
    MIN_CHARS,
    LineSettings,
    document_keys,
    line_keys,
    normalised_lines,
    remove_lines,
    string_hashes,
)
from contentx_udf.text.language import text_hash

from ..conftest import SHARED, shared_or_skip
from .tables import article

UDHR = SHARED / "data" / "udhr2"
FOOTER = "Copyright 2024 Riverside Gazette. All rights reserved. Contact the newsroom."
SHARED_LINE = "Subscribe to our newsletter for the week's best stories, free every Friday."


def page(seed: int, *extra: str) -> str:
    return "\n".join([*article(seed, sentences=6), *extra])


def frequent_keys(texts, hosts, settings: LineSettings) -> np.ndarray:
    """What the job's aggregation finds: keys in at least ``min_docs`` distinct documents (by text
    hash), as a sorted uint64 array."""
    keys = document_keys(pa.array(texts), pa.array(hosts), settings)
    seen: dict[int, set[str]] = {}
    for text, row in zip(texts, keys.to_pylist(), strict=True):
        for key in row:
            seen.setdefault(key, set()).add(text_hash(text))
    found = [k for k, docs in seen.items() if len(docs) >= settings.min_docs]
    return np.sort(np.array(found, dtype=np.int64).view(np.uint64))


def dedup(texts, hosts, settings):
    return remove_lines(pa.array(texts), pa.array(hosts), settings, frequent_keys(texts, hosts, settings))


def test_a_footer_on_three_pages_of_a_host_is_removed_at_3_and_kept_at_4():
    texts = [page(1, FOOTER), page(2, FOOTER), page(3, f"  {FOOTER.upper()} "), page(4)]
    hosts = ["gazette.example"] * 4
    at3 = dedup(texts, hosts, LineSettings(min_docs=3))
    assert at3.lines.tolist() == [1, 1, 1, 0]
    assert all(FOOTER.lower() not in t.lower() for t in at3.text.to_pylist())
    assert at3.text.to_pylist()[:3] == ["\n".join(article(s, sentences=6)) for s in (1, 2, 3)]
    assert at3.text.to_pylist()[3] == texts[3]
    assert at3.example.to_pylist()[0] == FOOTER[:80]
    assert at3.chars.tolist()[0] == len(FOOTER) + 1  # the line and its newline
    at4 = dedup(texts, hosts, LineSettings(min_docs=4))
    assert at4.lines.tolist() == [0, 0, 0, 0]
    assert at4.text.to_pylist() == texts
    assert not at4.changed.any()


def test_a_line_on_two_hosts_counts_globally_but_not_per_host():
    texts = [page(1, SHARED_LINE), page(2, SHARED_LINE), page(3, SHARED_LINE), page(4, SHARED_LINE)]
    hosts = ["a.example", "a.example", "b.example", "b.example"]
    per_host = dedup(texts, hosts, LineSettings(min_docs=3, scope="host"))
    assert per_host.lines.tolist() == [0, 0, 0, 0]
    overall = dedup(texts, hosts, LineSettings(min_docs=3, scope="global"))
    assert overall.lines.tolist() == [1, 1, 1, 1]
    assert all(SHARED_LINE not in t for t in overall.text.to_pylist())


def test_short_lines_are_never_removed():
    short = "Read more about this"  # 20 characters
    texts = [page(s, short, FOOTER) for s in range(5)]
    result = dedup(texts, ["x.example"] * 5, LineSettings(min_docs=2, min_chars=30))
    assert result.lines.tolist() == [1] * 5
    assert all(t.endswith(short) for t in result.text.to_pylist())
    longer = dedup(texts, ["x.example"] * 5, LineSettings(min_docs=2, min_chars=len(FOOTER) + 1))
    assert longer.lines.tolist() == [0] * 5


def test_copies_of_one_page_count_once_and_a_repeat_inside_a_page_once():
    texts = [page(1, FOOTER, FOOTER), page(1, FOOTER, FOOTER), page(1, FOOTER, FOOTER), page(2, FOOTER)]
    result = dedup(texts, ["x.example"] * 4, LineSettings(min_docs=3))
    assert result.lines.tolist() == [0, 0, 0, 0]  # two distinct texts hold the footer
    result = dedup([*texts, page(3, FOOTER)], ["x.example"] * 5, LineSettings(min_docs=3))
    assert result.lines.tolist() == [2, 2, 2, 1, 1]


def test_digits_case_and_spacing_are_normalised():
    lines = normalised_lines(pa.array(["  Updated  3 May\t2024 \nOK", None]))
    assert lines.to_pylist() == [["updated0may0000", "ok"], [""]]
    texts = pa.array(["Ünïcode  Line one\n\nTwo\tthree 42\r\n", "ünïcode line ONE\nlast", None, ""])
    keys = line_keys(texts, None, LineSettings(scope="global", min_chars=7))
    assert keys.keys.tolist() == string_hashes(normalised_lines(texts).flatten()).tolist()
    assert keys.keys[0] == keys.keys[4]  # case and spacing
    assert keys.counted.tolist() == [True, False, True, False, True, False, False, False]
    assert keys.offsets.tolist() == [0, 4, 6, 7, 8]
    texts = [page(s, f"Updated on {s} May 2024 at 10:{s:02d} by the web desk.") for s in range(3)]
    result = dedup(texts, ["x.example"] * 3, LineSettings(min_docs=3))
    assert result.lines.tolist() == [1, 1, 1]


def test_the_text_hash_of_the_text_left_is_new():
    texts = [page(s, FOOTER) for s in range(3)]
    result = dedup(texts, ["x.example"] * 3, LineSettings(min_docs=3))
    new = result.text.to_pylist()
    assert [text_hash(t) for t in new] != [text_hash(t) for t in texts]
    assert [len(t) for t in new] == [len(t) - len(FOOTER) - 1 for t in texts]


def test_listed_keys_remove_the_same_lines_as_the_frequent_set():
    texts = [page(s, FOOTER, SHARED_LINE) for s in range(4)] + [page(9, SHARED_LINE)]
    hosts = ["x.example"] * 4 + ["y.example"]
    settings = LineSettings(min_docs=3)
    frequent = frequent_keys(texts, hosts, settings)
    keys = document_keys(pa.array(texts), pa.array(hosts), settings)
    wanted = set(frequent.view(np.int64).tolist())
    listed = pa.array(
        [[k for k in row if k in wanted] for row in keys.to_pylist()],
        type=pa.list_(pa.int64()),
    )
    a = remove_lines(pa.array(texts), pa.array(hosts), settings, frequent)
    b = remove_lines(pa.array(texts), pa.array(hosts), settings, listed=listed)
    assert a.text.to_pylist() == b.text.to_pylist()
    assert a.lines.tolist() == b.lines.tolist() == [2, 2, 2, 2, 0]


def test_string_hashes_are_equal_for_equal_strings_only():
    strings = pa.array(["abc", "abd", "abc", "", "cba", "ab"])
    h = string_hashes(strings)
    assert h[0] == h[2]
    assert len(set(h.tolist())) == 5
    assert (string_hashes(pa.array(["zz", "abc"]))[1]) == h[0]  # independent of the position


def test_defaults_come_from_the_config_file_and_flags_override_it(tmp_path):
    import pytest

    from contentx_udf.corpus.config import build_config, build_parser
    from contentx_udf.errors import UserError

    conf = tmp_path / "corpus.toml"
    conf.write_text('[line_dedup]\nscope = "global"\nmin_docs = 5\n')
    base = ["--input", "t", "--output", "o", "--line-dedup", "--filter-config", str(conf)]
    config = build_config(build_parser().parse_args(base))
    assert config.lines() == LineSettings(min_chars=MIN_CHARS, min_docs=5, scope="global")
    config = build_config(build_parser().parse_args([*base, "--line-dedup-min-docs", "4"]))
    assert config.lines().min_docs == 4
    conf.write_text("[line_dedup]\nmin_doc = 5\n")
    with pytest.raises(UserError, match="unknown key"):
        build_config(build_parser().parse_args(base))


def test_keys_of_a_batch_larger_than_a_hashing_chunk_equal_the_keys_of_its_normalised_lines():
    # about 150 kB: the prefix sum of the line hashes runs over several chunks
    texts = [
        "\n".join([*article(s, sentences=30), f"Ünïcödé\tLINE {s}\x0b\x0cend\r", "", "日本語のテキスト 12"])
        for s in range(60)
    ]
    texts = pa.array([*texts, None, "", "\n \n"])
    settings = LineSettings(scope="global", min_chars=12)
    keys = line_keys(texts, None, settings)
    normalised = normalised_lines(texts).flatten()
    assert sum(len(t or "") for t in texts.to_pylist()) > 2 * 65536
    # each line hashed on its own (one short chunk): the reference
    assert keys.keys.tolist() == [int(string_hashes(pa.array([ln]))[0]) for ln in normalised.to_pylist()]
    assert keys.counted.tolist() == [len(ln) >= 12 for ln in normalised.to_pylist()]


def udhr_pages() -> tuple[list[str | None], list[str | None]]:
    """Real text in many scripts (UDHR translations), cut into pages of 40 lines on a few hosts,
    each host's pages with a footer (digits, case and spacing varied) and a shared line; plus the
    odd ones: null, empty, blank lines only, a trailing newline, CRLF lines, a page all footer."""
    files = sorted(shared_or_skip(UDHR).glob("*.txt"))[:120]
    texts: list[str | None] = []
    hosts: list[str | None] = []
    for i, path in enumerate(files):
        lines = path.read_text(encoding="utf-8").split("\n")
        for j in range(0, min(len(lines), 120), 40):
            host = f"site{i % 7}.example"
            extra = [f"  {FOOTER.replace('2024', str(2000 + j)).upper() if j % 80 else FOOTER}\t"]
            if i % 3 == 0:
                extra.append(SHARED_LINE)
            texts.append("\n".join([*lines[j : j + 40], *extra]))
            hosts.append(host if i % 11 else None)
    texts += [None, "", "\n\n", FOOTER + "\n", f"{FOOTER}\r\n{SHARED_LINE}\r\n", f"{FOOTER}\n{SHARED_LINE}"]
    texts.append(SHARED_LINE)
    hosts += ["site0.example"] * 7
    return texts, hosts


@pytest.mark.skipif(lines_module.compiled_status() != "compiled", reason="the compiled passes are not built")
@pytest.mark.parametrize("scope", ["host", "global"])
def test_compiled_keys_and_removal_equal_the_numpy_code_on_real_text(scope):
    texts, hosts = udhr_pages()
    settings = LineSettings(scope=scope, min_docs=3)
    batch, host_batch = pa.array(texts, pa.string()), pa.array(hosts, pa.string())
    compiled = line_keys(batch, host_batch, settings)
    reference = line_keys(batch, host_batch, settings, compiled=False)
    assert compiled.keys.tolist() == reference.keys.tolist()
    assert compiled.counted.tolist() == reference.counted.tolist()
    assert compiled.parents.tolist() == reference.parents.tolist()
    assert compiled.offsets.tolist() == reference.offsets.tolist()
    frequent = frequent_keys(texts, hosts, settings)
    fast = remove_lines(batch, host_batch, settings, frequent)
    slow = remove_lines(batch, host_batch, settings, frequent, compiled=False)
    assert 20 < int(slow.changed.sum()) < len(texts)  # most pages lose their footer, not all
    assert slow.text.to_pylist()[-4] == ""  # a page all footer: emptied
    assert fast.text.to_pylist() == slow.text.to_pylist()
    assert fast.changed.tolist() == slow.changed.tolist()
    assert fast.lines.tolist() == slow.lines.tolist()
    assert fast.chars.tolist() == slow.chars.tolist()
    assert fast.example.to_pylist() == slow.example.to_pylist()
    # and a slice of the batch (an Arrow offset not at 0)
    part = remove_lines(batch[5:60], host_batch[5:60], settings, frequent)
    assert part.text.to_pylist() == slow.text.to_pylist()[5:60]
    assert part.chars.tolist() == slow.chars.tolist()[5:60]


def test_the_line_extension_is_built():
    """The install builds corpus/_lines.pyx (setup.py): the numpy code is for machines without a compiler."""
    if os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("compiled passes turned off by CONTENTX_PURE_PYTHON")
    assert lines_module.compiled_status() == "compiled"


def reference_frequent(keys, docs, min_docs: int) -> set[int]:
    """Keys of at least ``min_docs`` distinct documents, by Python sets (what countDistinct gives)."""
    seen: dict[int, set[int]] = {}
    for key, doc in zip(keys.tolist(), docs.tolist(), strict=True):
        seen.setdefault(key, set()).add(doc)
    return {k for k, d in seen.items() if len(d) >= min_docs}


def test_parts_cut_to_min_docs_documents_per_key_find_the_same_frequent_keys():
    # the (key, doc) pairs of the UDHR pages, each page also copied (same doc id) into another part
    texts, hosts = udhr_pages()
    settings = LineSettings(min_docs=3)
    listed = document_keys(pa.array(texts, pa.string()), pa.array(hosts, pa.string()), settings)
    doc_ids = np.array([hash(t) % 1000 for t in texts], dtype=np.int64)  # some ids shared: copies
    keys = listed.values.to_numpy().view(np.uint64)
    docs = np.repeat(doc_ids, np.diff(listed.offsets.to_numpy()))
    expected = reference_frequent(keys, docs, 3)
    assert 5 < len(expected) < len(set(keys.tolist()))
    rng = np.random.default_rng(7)
    part = rng.integers(0, 4, len(keys))
    copies = rng.random(len(keys)) < 0.3  # a third of the pairs seen again in another part
    keys = np.concatenate((keys, keys[copies]))
    docs = np.concatenate((docs, docs[copies]))
    part = np.concatenate((part, (part[copies] + 1) % 4))
    cut = [lines_module.few_documents(keys[part == p], docs[part == p], 3) for p in range(4)]
    for k, d in cut:
        assert np.all(k[1:] >= k[:-1])  # sorted by key
        assert len(set(zip(k.tolist(), d.tolist(), strict=True))) == len(k)  # distinct pairs
        assert np.max(np.unique(k, return_counts=True)[1]) <= 3
    together = np.concatenate([k for k, _ in cut]), np.concatenate([d for _, d in cut])
    found = lines_module.frequent_keys(*together, 3)
    assert set(found.tolist()) == expected
    assert np.all(found[1:] > found[:-1])
