"""Shards assembled from row groups copied as bytes: the footer and page index read and
written back exactly, every offset moved to where its bytes went, and a rewritten shard
whose runs did not change holding their bytes, equal to a shard written afresh."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.config import OutputSettings
from loralay_build.corpus.compact import compact_dataset
from loralay_build.corpus.publish import DictRows, Item, runs_of, switch, write_shards
from loralay_build.corpus.rowgroups import (
    GroupWriter,
    ParquetLayoutError,
    read_footer,
    row_groups,
)
from loralay_build.corpus.thrift import (
    BINARY,
    BOOL_TRUE,
    BYTE,
    DOUBLE,
    I16,
    I32,
    I64,
    LIST,
    SET,
    STRUCT,
    Struct,
    ThriftError,
    ThriftList,
    read_struct,
    read_struct_python,
    write_struct,
)
from loralay_build.corpus.writer import GroupCopy, _options, write_shard
from loralay_build.native import native_module

SCHEMA = pa.schema([pa.field("article_id", pa.string()),
                    pa.field("article_words", pa.list_(pa.string())),
                    pa.field("article_bboxes", pa.list_(pa.list_(pa.int32(), 4)))])
SETTINGS = OutputSettings(shard_rows=1000, rows_per_file=1000, row_group_rows=4)


def _rows(count: int, version: str = "") -> dict[str, dict[str, object]]:
    return {f"d{i:04d}": {"article_id": f"d{i:04d}",
                          "article_words": [f"w{i}-{j}{version}" for j in range(300 + i % 7)],
                          "article_bboxes": [[j, i, j + 5, i + 9] for j in range(300 + i % 7)]}
            for i in range(count)}


def _table(rows: dict[str, dict[str, object]]) -> pa.Table:
    return pa.Table.from_pylist(list(rows.values()), schema=SCHEMA)


def _chunks(group: Struct) -> list[Struct]:
    """A row group's column chunks."""
    chunks = group.get(1)
    assert isinstance(chunks, ThriftList)
    assert all(isinstance(chunk, Struct) for chunk in chunks.items)
    return [chunk for chunk in chunks.items if isinstance(chunk, Struct)]


def _page_headers_at_every_location(path: Path) -> int:
    """Check that each offset index names a page header where it says, of the size it says;
    returns the pages seen."""
    data = path.read_bytes()
    pages = 0
    for group in row_groups(read_footer(io.BytesIO(data))):
        for chunk in _chunks(group):
            at, length = chunk.get(4), chunk.get(5)
            assert isinstance(at, int) and isinstance(length, int)
            index, end = read_struct(data, at)
            assert end == at + length
            locations = index.get(1)
            assert isinstance(locations, ThriftList)
            for location in locations.items:
                assert isinstance(location, Struct)
                offset, size = location.get(1), location.get(2)
                assert isinstance(offset, int) and isinstance(size, int)
                header, body = read_struct(data, offset)
                assert header.get(3) == offset + size - body  # compressed size after it
                pages += 1
    return pages


def test_footers_and_page_indexes_read_and_write_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    pq.write_table(_table(_rows(9)), path, row_group_size=4, **_options(SETTINGS))
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer, end = read_struct(data, len(data) - 8 - length)
    assert end == len(data) - 8
    assert write_struct(footer) == data[len(data) - 8 - length : -8]
    for group in row_groups(footer):
        for chunk in _chunks(group):
            for at_field, length_field in ((4, 5), (6, 7)):
                at, size = chunk.get(at_field), chunk.get(length_field)
                if isinstance(at, int) and isinstance(size, int):
                    index, _ = read_struct(data, at)
                    assert write_struct(index) == data[at : at + size]


STRUCTURES = st.recursive(
    st.one_of(st.integers(-(2**63), 2**63 - 1).map(lambda v: (I64, v)),
              st.integers(-(2**31), 2**31 - 1).map(lambda v: (I32, v)),
              st.binary(max_size=40).map(lambda v: (BINARY, v))),
    lambda inner: st.one_of(
        st.lists(inner, max_size=20).map(
            lambda fields: (STRUCT, Struct([(fid * 7 + 1, kind, value)
                                            for fid, (kind, value) in enumerate(fields)]))),
        st.lists(st.integers(-(2**31), 2**31 - 1), max_size=20).map(
            lambda values: (LIST, ThriftList(I32, list(values))))),
    max_leaves=30)


@settings(max_examples=60, deadline=None)
@given(STRUCTURES)
def test_any_structure_reads_back_as_written(value: tuple[int, object]) -> None:
    kind, inner = value
    struct = Struct([(1, kind, inner)])  # type: ignore[list-item]
    data = write_struct(struct)
    again, end = read_struct(data)
    assert end == len(data) and again == struct and write_struct(again) == data


NATIVE = native_module()
needs_core = pytest.mark.skipif(NATIVE is None, reason="the compiled core is not built")


def _read_both(data: bytes, at: int) -> tuple[object, object]:
    """The compiled core's answer (None when it leaves the bytes to Python) and Python's
    (its structure and end, or the error it raises)."""
    assert NATIVE is not None
    native = NATIVE.thrift_struct(data, at, Struct, ThriftList)
    try:
        python: object = read_struct_python(data, at)
    except ThriftError as exc:
        python = exc
    return native, python


@needs_core
@settings(max_examples=60, deadline=None)
@given(STRUCTURES)
def test_the_core_reads_any_structure_as_python_does(value: tuple[int, object]) -> None:
    """With every wire type: booleans as fields and in lists, bytes, doubles, sets."""
    kind, inner = value
    data = write_struct(Struct([
        (1, kind, inner),  # type: ignore[list-item]
        (40, BOOL_TRUE, True), (41, BOOL_TRUE, False), (42, BYTE, 200),
        (43, DOUBLE, b"\x00\x01\x02\x03\x04\x05\x06\x07"), (44, I16, -300),
        (45, LIST, ThriftList(BOOL_TRUE, [True, False, True])),
        (46, SET, ThriftList(BINARY, [b"x", b""])),
    ]))
    native, python = _read_both(data, 0)
    assert native is not None and native == python


@needs_core
@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=80), st.integers(0, 80))
def test_the_core_leaves_to_python_what_it_does_not_read_alike(data: bytes, at: int) -> None:
    """Any bytes: the same structure and end, or None where Python decodes or refuses."""
    native, python = _read_both(data, min(at, len(data)))
    assert native is None or native == python
    if isinstance(python, ThriftError):
        assert native is None


@needs_core
def test_the_core_declines_varints_beyond_64_bits_and_deep_nesting() -> None:
    """Python decodes both; the core leaves them to it."""
    wide = bytes([0x16]) + bytes([0xFF] * 9) + bytes([0x7F]) + bytes([0])  # an i64 of 70 bits
    deep = bytes([0x1C]) * 80 + bytes(81)  # structures nested 80 deep
    for data in (wide, deep):
        native, python = _read_both(data, 0)
        assert native is None and isinstance(python, tuple)
        assert read_struct(data) == python


def test_one_group_written_alone_is_what_pyarrow_writes(tmp_path: Path) -> None:
    table = _table(_rows(6))
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    metadata = {b"k": b"v"}
    write_shard(ours, SCHEMA, [[table]], SETTINGS, metadata)
    with pq.ParquetWriter(theirs, SCHEMA.with_metadata(metadata), **_options(SETTINGS)) as out:
        out.write_table(table, table.num_rows)
    assert ours.read_bytes() == theirs.read_bytes()


def test_copied_groups_read_as_their_rows_with_offsets_moved(tmp_path: Path) -> None:
    table = _table(_rows(12))
    first = tmp_path / "first.parquet"
    write_shard(first, SCHEMA, [[table.slice(0, 5)], [table.slice(5, 4)], [table.slice(9)]],
                SETTINGS, {})
    mixed = tmp_path / "mixed.parquet"
    write_shard(mixed, SCHEMA, [[table.slice(9)], GroupCopy(first, 1, 1), [table.slice(0, 2)],
                                GroupCopy(first, 0, 1)], SETTINGS, {b"k": b"v"})
    shard = pq.ParquetFile(mixed, page_checksum_verification=True)
    expected = pa.concat_tables([table.slice(9), table.slice(5, 4), table.slice(0, 2),
                                 table.slice(0, 5)])
    assert shard.read().replace_schema_metadata(None).equals(expected)
    assert shard.metadata.metadata[b"k"] == b"v"
    assert [shard.metadata.row_group(i).num_rows for i in range(4)] == [3, 4, 2, 5]
    stats = shard.metadata.row_group(1).column(0).statistics
    assert (stats.min, stats.max) == ("d0005", "d0008")
    assert _page_headers_at_every_location(mixed) >= 4 * 3


def test_a_file_that_is_not_parquet_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    for data in (b"", b"PAR1" + b"x" * 40, b"PAR1" + b"\x00" * 20 + (4).to_bytes(4, "little")
                 + b"PAR1"):
        path.write_bytes(data)
        with pytest.raises(ParquetLayoutError), path.open("rb") as handle:
            GroupWriter(io.BytesIO(), Struct([])).copy(handle, read_footer(handle))


def test_runs_are_cut_by_ids_so_a_removal_changes_only_its_run() -> None:
    items = [Item(f"d{i:05d}", "k") for i in range(2000)]
    runs = [tuple(run) for run in runs_of(items, 32)]
    assert 32 * 0.7 < len(items) / len(runs) < 32 * 1.3  # runs average the setting
    assert max(len(run) for run in runs) <= 4 * 32
    gone = items[:700] + items[701:]
    after = [tuple(run) for run in runs_of(gone, 32)]
    assert len(set(after) - set(runs)) == 1


def _publish(folder: Path, rows: dict[str, dict[str, object]], version: str) -> list[Path]:
    items = {"train": [Item(cid, f"{cid}:{version if cid == 'd0017' else ''}")
                       for cid in rows], "validation": [], "test": []}
    shards = write_shards(folder, version, items, DictRows(rows, SCHEMA), SCHEMA, SETTINGS)
    assert shards is not None
    switch(shards, {"fingerprint": version, "files": shards.files}, "---\n---\n")
    return [folder / f["name"] for f in shards.files]


def _copied(caplog: pytest.LogCaptureFixture) -> int:
    """The rows the last publication copied in their row groups, as it logged them."""
    [copied] = [int(r.getMessage().split(": ")[1].split()[0]) for r in caplog.records
                if "copied in their row groups" in r.getMessage()]
    return copied


def _group_bytes(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out = []
    for group in row_groups(read_footer(io.BytesIO(data))):
        starts = []
        for chunk in _chunks(group):
            meta = chunk.get(3)
            assert isinstance(meta, Struct)
            start, size = meta.get(9), meta.get(7)
            assert isinstance(start, int) and isinstance(size, int)
            starts.append((start, size))
        out.append(data[min(s for s, _ in starts) : max(s + n for s, n in starts)])
    return out


def test_a_rewritten_shard_copies_its_unchanged_runs_and_equals_a_fresh_write(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """One row changes and one goes: the shard is rewritten, every run without them keeps
    its bytes (copied, not encoded again), and the shard is byte for byte the one a
    publication from nothing writes for the same rows."""
    rows = _rows(60)
    [before] = _publish(tmp_path / "data", rows, "v1")
    old_groups = _group_bytes(before)
    del rows["d0040"]
    rows["d0017"] = _rows(60, "changed")["d0017"]
    caplog.set_level(logging.INFO, logger="loralay_build.corpus.publish")
    [after] = _publish(tmp_path / "data", rows, "v2")
    assert len(rows) - 2 * 4 * SETTINGS.row_group_rows <= _copied(caplog) < len(rows)
    new_groups = _group_bytes(after)
    kept = set(old_groups) & set(new_groups)
    assert len(kept) >= len(new_groups) - 2  # only the runs of the two rows differ
    assert len(kept) < len(new_groups)
    [fresh] = _publish(tmp_path / "fresh", rows, "v2")
    assert fresh.read_bytes() == after.read_bytes()
    read = pq.read_table(after, page_checksum_verification=True)
    assert read.column("article_id").to_pylist() == sorted(rows)
    _page_headers_at_every_location(after)


def test_compact_copies_the_runs_it_keeps_and_reads_only_the_others(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = _rows(60)
    [before] = _publish(tmp_path, rows, "v1")
    fmt = pq.read_metadata(before).metadata[b"loralay.format"]
    caplog.set_level(logging.INFO, logger="loralay_build.corpus.publish")
    assert compact_dataset(tmp_path, 25) == 3
    assert _copied(caplog) > 25
    shards = sorted(tmp_path.glob("train-*.parquet"))
    assert [pq.read_metadata(path).num_rows for path in shards] == [25, 25, 10]
    read = pa.concat_tables(pq.read_table(path) for path in shards)
    assert read.column("article_id").to_pylist() == sorted(rows)
    assert pq.read_metadata(shards[0]).metadata[b"loralay.format"] == fmt  # builds keep them
