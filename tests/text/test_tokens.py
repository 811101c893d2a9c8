"""Token counts (:mod:`contentx_udf.text.tokens`): the library's own count, nulls kept, the EOS,
a bad file one UserError line, and the Rust thread pool held to one core."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

from contentx_udf.errors import UserError
from contentx_udf.text import tokens

TEXTS = [
    "The council approved the budget for the new bridge on Tuesday.",
    "Der Gemeinderat hat den Haushalt beschlossen.",
    "市议会周二批准了新桥的预算。",
] * 20


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(TEXTS, trainer)
    # a post-processor adding a BOS: the count leaves it out (add_special_tokens=False)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tokenizer.enable_truncation(8)  # switched off for counting: a count is the whole text's
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tokenizer.save(str(path))
    return str(path)


def test_counts_are_the_librarys_own_without_special_tokens(tokenizer_file):
    from tokenizers import Tokenizer

    own = Tokenizer.from_file(tokenizer_file)
    own.no_truncation()
    spec = tokens.load_spec(tokenizer_file)
    counts = tokens.count_tokens(spec, pa.array([*TEXTS, None]))
    expected = [len(own.encode(t, add_special_tokens=False).ids) for t in TEXTS]
    assert counts.to_pylist() == [*expected, None]
    assert max(expected) > 8  # not truncated
    with_eos = tokens.count_tokens(spec, TEXTS[:3], count_eos=True).to_pylist()
    assert with_eos == [n + 1 for n in expected[:3]]
    assert spec.vocab_size == own.get_vocab_size() and len(spec.sha256) == 64


def test_shard_ids_follow_datatrove(tokenizer_file):
    from tokenizers import Tokenizer

    own = Tokenizer.from_file(tokenizer_file)
    own.no_truncation()
    spec = tokens.load_spec(tokenizer_file)
    ids, lengths = tokens.encode_ids(spec, TEXTS[:3], None)  # the tokenizer's own BOS
    assert ids.tolist() == [i for t in TEXTS[:3] for i in own.encode(t).ids]
    assert ids[0] == 0 and lengths.sum() == len(ids)
    eos = tokens.token_id(spec, "</s>")
    ids, lengths = tokens.encode_ids(spec, TEXTS[:2], eos)  # datatrove's "$A <EOS>"
    first = own.encode(TEXTS[0], add_special_tokens=False).ids
    assert ids[: lengths[0]].tolist() == [*first, eos]
    with pytest.raises(UserError, match="not a token"):
        tokens.token_id(spec, "<nope>")
    assert tokens.token_dtype(65536) == "<u2" and tokens.token_dtype(65537) == "<u4"


def test_the_token_counter_extension_is_built(tokenizer_file):
    """The install builds text/_tokcount.pyx (setup.py), the exact byte-level counter; without it
    :func:`tokens.counter_of` gives None and the library encodes every text, some 30 times slower.
    Outside tests/text/test_bytelevel.py, which skips whole when ``_tokcount`` is missing, so a
    failed compile fails here: the module is an extension, it serves this byte-level BPE, and its
    counts are the library's."""
    import importlib
    import importlib.machinery

    from tokenizers import Tokenizer

    module = importlib.import_module("contentx_udf.text._tokcount")  # (an ImportError names what is missing)
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), module.__file__
    spec = tokens.load_spec(tokenizer_file)
    counter = tokens.counter_of(spec)
    assert counter is not None
    texts = pa.array(TEXTS[:3])
    assert not counter.library_rows(texts).any()  # every text counted by the compiled code
    own = Tokenizer.from_file(tokenizer_file)
    own.no_truncation()
    expected = [len(own.encode(t, add_special_tokens=False).ids) for t in TEXTS[:3]]
    assert tokens.count_tokens(spec, texts).to_pylist() == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such file"), ("{", "not a tokenizers tokenizer.json"), ("[]", "not a tokenizers")],
)
def test_a_bad_file_is_one_line(tmp_path, content, message):
    path = tmp_path / "t.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UserError, match=message) as info:
        tokens.load_spec(str(path))
    assert "\n" not in str(info.value)


THREADS = """
import json, os, sys
hold = sys.argv[2] == "hold"
if hold:
    from contentx_udf.text import tokens
    spec = tokens.load_spec(sys.argv[1])
    encode = lambda texts: tokens.count_tokens(spec, texts)
else:
    from tokenizers import Tokenizer
    t = Tokenizer.from_file(sys.argv[1])
    encode = lambda texts: t.encode_batch(texts)
before = len(os.listdir("/proc/self/task"))
for _ in range(2):
    encode(["word " * 50 + str(i) for i in range(400)])
print(json.dumps([before, len(os.listdir("/proc/self/task"))]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_the_rust_pool_is_held_to_the_tasks_core(tokenizer_file):
    """A worker encodes on its own thread: no pool thread appears (the control, the library left
    to itself in a process that sees several cores, starts its pool)."""
    import os

    def threads(mode: str) -> tuple[int, int]:
        env = {
            k: v for k, v in os.environ.items() if k not in ("RAYON_NUM_THREADS", "TOKENIZERS_PARALLELISM")
        }
        out = subprocess.run(
            [sys.executable, "-c", THREADS, tokenizer_file, mode], capture_output=True, text=True, env=env
        )
        assert out.returncode == 0, out.stderr
        return tuple(json.loads(out.stdout))

    before, after = threads("hold")
    assert after == before
    if (os.cpu_count() or 1) > 1:
        before, after = threads("free")
        assert after > before
