"""Reading a gzip WARC in pieces (contentx_udf.warc.split and the reader's ``end``): the pieces of a
file, at any cut points, give exactly the rows and counts of reading it whole."""

from __future__ import annotations

import io
import random
from collections import Counter
from pathlib import Path

import pytest

from contentx_udf.outputs.table import FILES_METHOD
from contentx_udf.spark import worker
from contentx_udf.spark.pieces import chain
from contentx_udf.warc.split import record_start, splittable, starts_warc_member

from .builders import LOCAL_DATA, build_warc, member_offsets, mixed_warc, response, shared

SETTINGS = worker.WorkerSettings(("combined",), {}, 1_048_576, 256)


def _rows_and_counts(sets: list[list[dict]]) -> tuple[list[dict], Counter]:
    """The content rows (timings left out) and the summed counts of the statistics rows."""
    rows, counts = [], Counter()
    for piece in sets:
        for row in piece:
            if row.get("method") == FILES_METHOD:
                for key, value in row["scores"]:
                    if key.startswith(("records.", "rows.", "content_records")):
                        counts[key] += value
            else:
                rows.append({**row, "scores": [kv for kv in row["scores"] or [] if kv[0] != "ms"]})
    return rows, counts


def _pieces(path: str, cuts: list[int]) -> list[list[dict]]:
    bounds = [0, *cuts]
    return [
        list(worker.process_file(path, "f", SETTINGS, start, bounds[k + 1] if k + 1 < len(bounds) else -1))
        for k, start in enumerate(bounds)
    ]


def _chains(sets: list[list[dict]], cuts: list[int]) -> tuple[bool, int]:
    bounds = [0, *cuts]
    stats = [dict(piece[-1]["scores"]) for piece in sets]
    ends = [*cuts, -1]
    return chain([(bounds[k], ends[k], stats[k], sets[k][-1]["error"]) for k in range(len(sets))])


def test_record_start_finds_the_next_member_of_every_offset():
    data = mixed_warc()
    starts = [offset for offset, _length, _type in member_offsets(data)]
    stream = io.BytesIO(data)
    for pos in range(0, len(data), 97):
        expected = next((s for s in starts if s >= pos), None)
        assert record_start(stream, pos, len(data)) == expected
        if expected is not None:  # a limit before it: none
            assert record_start(stream, pos, expected) is None


def test_what_starts_a_member():
    data = mixed_warc()
    assert starts_warc_member(data) and splittable(io.BytesIO(data))
    assert not starts_warc_member(data[1:])
    assert not starts_warc_member(b"\x1f\x8b\x08" + bytes(100))  # a header, no deflate stream
    plain = mixed_warc(gzip_members=False)
    assert not splittable(io.BytesIO(plain))  # uncompressed WARCs are read whole


@pytest.mark.parametrize(
    "rel",
    [
        "real/cc-2024-22__whirlwind.warc.gz",  # Common Crawl: request, response, metadata
        "real/heritrix-2014__ukwa-BL-20140325121225068.warc.gz",
        "real/clipped__resiliparse-clipped.warc.gz",  # cut in a record: an error row
        "fixtures/hostile.warc.gz",
        "fixtures/scrapinghub-scale.warc.gz",
    ],
)
def test_pieces_at_random_cuts_equal_the_whole_file(rel: str):
    path = str(shared(rel))
    whole_rows, whole_counts = _rows_and_counts([list(worker.process_file(path, "f", SETTINGS))])
    size = Path(path).stat().st_size
    rnd = random.Random(rel)
    for _trial in range(4):
        cuts = sorted(rnd.sample(range(1, size), rnd.randint(1, 5)))
        sets = _pieces(path, cuts)
        chains, counted = _chains(sets, cuts)
        assert chains
        rows, counts = _rows_and_counts(sets[:counted])
        assert rows == whole_rows
        assert counts == whole_counts


def test_a_cut_between_a_response_and_its_metadata_applies_the_metadata():
    path = str(LOCAL_DATA / "cc-2024-22__whirlwind.warc.gz")
    spans = member_offsets(Path(path).read_bytes())
    meta = next(offset for offset, _length, kind in spans if kind == "metadata")
    whole, _ = _rows_and_counts([list(worker.process_file(path, "f", SETTINGS))])
    sets = _pieces(path, [meta])  # the metadata record is the second piece's first record
    rows, counts = _rows_and_counts(sets)
    assert rows == whole and whole[0]["content_languages"] is not None
    assert counts["records.metadata"] == 1  # counted once, by the piece it starts in
    assert dict(sets[1][-1]["scores"])["piece.first"] == meta


def test_a_warc_gz_stored_inside_a_payload_is_found_and_the_pieces_do_not_chain(tmp_path):
    noise = random.Random(3).randbytes
    inner = build_warc([response("http://inner.example/", noise(50_000), [("Content-Type", "image/png")])])
    payload = noise(20_000) + inner + noise(20_000)  # incompressible: deflate stores it as it is
    outer = build_warc(
        [
            response("http://a.example/", b"<html><body><p>first page</p></body></html>", rid=1),
            response("http://b.example/x.bin", payload, [("Content-Type", "image/png")], rid=2),
            response("http://c.example/", b"<html><body><p>last page</p></body></html>", rid=3),
        ]
    )
    true_starts = {offset for offset, _length, _type in member_offsets(outer)}
    embedded = outer.find(inner[:64])
    assert embedded > 0
    path = tmp_path / "outer.warc.gz"
    path.write_bytes(outer)
    second = sorted(true_starts)[1]
    cut = second + 1  # after the second record's start: the search meets the stored WARC first
    found = record_start(io.BytesIO(outer), cut, len(outer))
    assert found == embedded and found not in true_starts
    sets = _pieces(str(path), [cut])
    chains, _counted = _chains(sets, [cut])
    assert not chains  # the job reads this file whole again (tests/spark/test_job.py)


@pytest.mark.parametrize(
    "trailing",
    [b"trailing bytes, not a WARC record" * 10, b"\x1f\x8b\x08\x00\x00"],  # (warcio raises; stops silently)
)
def test_bytes_after_the_last_record_are_not_lost_by_a_cut(tmp_path, trailing: bytes):
    data = mixed_warc()
    path = tmp_path / "trailing.warc.gz"
    path.write_bytes(data + trailing)
    whole, _ = _rows_and_counts([list(worker.process_file(str(path), "f", SETTINGS))])
    assert f"corrupt WARC at offset {len(data)}" in (whole[-1]["error"] or "")
    last = max(offset for offset, _length, _type in member_offsets(data))
    for cut in (last + 1, len(data), len(data) + 5):
        sets = _pieces(str(path), [cut])
        chains, counted = _chains(sets, [cut])
        if chains:  # the error row is in the pieces
            assert _rows_and_counts(sets[:counted])[0] == whole
        # (else the job reads the file whole)
        if cut == len(data):  # the second piece holds only the trailing bytes: it cannot chain
            assert not chains
