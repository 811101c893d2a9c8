"""The export's files without Spark (:mod:`contentx_udf.corpus.shards`, :mod:`.card`): datatrove's
layout round-tripped with numpy, JSON Lines and Parquet shards with their counts, the card's YAML."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import yaml

from contentx_udf.corpus import card, shards
from contentx_udf.corpus.export import parse_size
from contentx_udf.errors import UserError
from contentx_udf.text import tokens

TEXTS = ["The bridge opens in May.", "Der Rat tagt am Dienstag.", "", "市议会批准了预算。"] * 5


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=280, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(TEXTS, trainer)
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tokenizer.save(str(path))
    return tokens.load_spec(str(path))


def _batches(texts, size=3):
    for start in range(0, len(texts), size):
        chunk = texts[start : start + size]
        yield pa.record_batch(
            [pa.array(chunk), pa.array([str(i) for i in range(len(chunk))])], names=["text", "id"]
        )


def test_a_datatrove_shard_round_trips(spec, tmp_path):
    from tokenizers import Tokenizer

    own = Tokenizer.from_str(spec.json)
    eos = tokens.token_id(spec, "<eos>")
    path = str(tmp_path / "00000.ds")
    documents, written = shards.write_datatrove(
        pafs.LocalFileSystem(), path, _batches(TEXTS), spec, eos, "tok"
    )
    sequences = shards.read_datatrove(
        (tmp_path / "00000.ds").read_bytes(), (tmp_path / "00000.ds.index").read_bytes(), 2
    )
    assert documents == len(TEXTS) == len(sequences)
    assert [s.tolist() for s in sequences] == [
        own.encode(t, add_special_tokens=False).ids + [eos] for t in TEXTS
    ]
    assert written == sum(len(s) for s in sequences) == (tmp_path / "00000.ds").stat().st_size // 2
    assert (tmp_path / "00000.ds.metadata").read_text().splitlines() == [
        "tok|2",
        str(written),
        shards.metric(written),
    ]


def test_jsonl_and_parquet_shards_count_documents_and_tokens(spec, tmp_path):
    fs = pafs.LocalFileSystem()
    documents, counted = shards.write_jsonl(fs, str(tmp_path / "a.jsonl.gz"), _batches(TEXTS), spec)
    rows = shards.read_jsonl((tmp_path / "a.jsonl.gz").read_bytes())
    assert documents == len(rows) == len(TEXTS) and [r["text"] for r in rows] == TEXTS
    assert counted == sum(r["token_count"] for r in rows) and rows[2]["token_count"] == 0
    documents, counted2 = shards.write_parquet(fs, str(tmp_path / "a.parquet"), _batches(TEXTS), spec)
    table = pq.read_table(tmp_path / "a.parquet")
    assert table.column_names == ["text", "id", "token_count"] and counted2 == counted
    assert shards.write_parquet(fs, str(tmp_path / "b.parquet"), _batches(TEXTS))[1] is None


def test_metric_and_sizes():
    assert [shards.metric(n) for n in (0, 12, 999, 1234, 1_234_567)] == [
        "0.00 T",
        "12.0 T",
        "999 T",
        "1.23 kT",
        "1.23 MT",
    ]
    assert (
        parse_size("500MB") == 500 * 1024**2
        and parse_size("2G") == 2 * 1024**3
        and parse_size("1000") == 1000
    )
    with pytest.raises(UserError, match="not a size"):
        parse_size("lots")


def test_the_card_header_is_the_hubs():
    report = {
        "kept": 12_345,
        "languages": [
            {"language": "en", "documents": 10_000, "characters": 5},
            {"language": None, "documents": 2, "characters": 1},
        ],
    }
    text = card.card(report, "data/*.parquet")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["configs"][0]["data_files"] == [{"split": "train", "path": "data/*.parquet"}]
    assert front["language"] == ["en"] and front["size_categories"] == ["10K<n<100K"]
    assert front["task_categories"] == ["text-generation"] and front["pretty_name"]
    assert "configs" not in yaml.safe_load(card.card(report, None).split("---\n")[1])
    assert [card.size_category(n) for n in (0, 999, 1000, 10**6)] == ["n<1K", "n<1K", "1K<n<10K", "1M<n<10M"]
