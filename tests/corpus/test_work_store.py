"""The work store: IPC files read back exactly, and a damaged work file stops publishing with
a one-line error instead of a crash or a bad shard."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.config import OutputSettings
from loralay_build.corpus.encoder import encode_group
from loralay_build.corpus.schema import FULL_SCHEMA, dataset_schema, project
from loralay_build.corpus.writer import (
    WorkFileError,
    WorkStore,
    _combined,
    _options,
    rows_table,
    write_shard,
)
from loralay_build.errors import ConfigError
from tests.helpers.cli import run_cli_subprocess, write_toml
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.rows import compact_row, plain_row

SETTINGS = OutputSettings(shard_rows=5, row_group_rows=2)
KEYS = [f"{i:064d}" for i in range(7)]


def _rows() -> list[dict[str, object]]:
    return [(compact_row if i % 2 else plain_row)(i) for i in range(len(KEYS))]


def test_work_files_read_back_as_the_example_schema(tmp_path: Path) -> None:
    work = WorkStore(tmp_path / "work", SETTINGS, FULL_SCHEMA)
    rows = _rows()
    work.put_many(list(zip(KEYS, rows, strict=True)))
    assert all(work.path(k).suffix == ".arrow" and work.path(k).is_file() for k in KEYS)
    table = work.read(KEYS)
    assert table.schema.equals(FULL_SCHEMA, check_metadata=True)
    assert table.equals(rows_table(rows, FULL_SCHEMA))


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "missing":
        path.unlink()
    elif how == "other-schema":  # e.g. left by a version with another example schema
        table = pa.table({"article_id": ["x"]})
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)


@pytest.mark.parametrize("how", ["truncated", "empty", "missing", "other-schema"])
def test_a_damaged_work_file_fails_publishing_by_name(tmp_path: Path, how: str) -> None:
    work = WorkStore(tmp_path / "work", SETTINGS, FULL_SCHEMA)
    work.put_many(list(zip(KEYS, _rows(), strict=True)))
    _damage(work.path(KEYS[3]), how)
    named = work.path(KEYS[3])
    out = tmp_path / "out"
    with pytest.raises(WorkFileError, match=f"work file {named} is unreadable"):
        write_shard(out / "train.parquet", FULL_SCHEMA,
                    [(work.read([key]) for key in KEYS)], SETTINGS, {})
    assert [p.name for p in out.iterdir()] == []  # no partial shard, no temporary file


def test_text_that_is_not_utf8_is_refused_before_the_shard_writer(tmp_path: Path) -> None:
    """IPC reads are not decoded value by value as Parquet's are: the full validation is what
    keeps invalid offsets or text out of the shards."""
    work = WorkStore(tmp_path / "work", SETTINGS, FULL_SCHEMA)
    table = rows_table([plain_row(0)], FULL_SCHEMA)
    words = pa.StringArray.from_buffers(2, pa.py_buffer(b"\0\0\0\0\2\0\0\0\4\0\0\0"),
                                        pa.py_buffer(b"ok\xff\xfe"))
    column = pa.ListArray.from_arrays(pa.array([0, 2], type=pa.int32()), words,
                                      type=FULL_SCHEMA.field("article_words").type)
    bad = table.set_column(1, FULL_SCHEMA.field("article_words"), column)
    work.path(KEYS[0]).parent.mkdir(parents=True)
    with pa.OSFile(str(work.path(KEYS[0])), "wb") as sink, \
            pa.ipc.new_file(sink, FULL_SCHEMA) as writer:
        writer.write_table(bad)
    with pytest.raises(WorkFileError, match="UTF8"):
        work.read(KEYS[:1])


def test_the_build_stops_on_a_damaged_work_file_and_keeps_the_published_set(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 3))
    out = tmp_path / "data"
    config = write_toml(tmp_path / "keep.toml", {"store": {"keep_work": True}})
    args = ("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter", "-q", "--config", str(config))
    assert run_cli_subprocess(*args).returncode == 0
    published = {p.name: p.read_bytes() for p in (out / "local").glob("*.parquet")}
    work = sorted((out / ".loralay" / "work").rglob("*.arrow"))
    assert len(work) == 3
    work[0].write_bytes(work[0].read_bytes()[:100])
    (out / "local" / "build.json").unlink()  # the next run publishes again
    result = run_cli_subprocess(*args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"work file {work[0]} is unreadable" in result.stderr
    assert {p.name: p.read_bytes() for p in (out / "local").glob("*.parquet")} == published
    assert not [p for p in (out / "local").iterdir() if p.name.endswith(".tmp")]
    # As the message says: without the file, its document is processed again.
    work[0].unlink()
    assert run_cli_subprocess(*args).returncode == 0
    assert work[0].is_file()
    assert {p.name: p.read_bytes() for p in (out / "local").glob("*.parquet")} == published


def test_work_files_are_compressed_when_asked_and_read_back_equal(tmp_path: Path) -> None:
    rows = _rows()
    for i, row in enumerate(rows):  # a page of text each, as real rows have
        row["abstract"] = " ".join(f"mot{(i * 7 + k) % 400}" for k in range(3000))
    plain = WorkStore(tmp_path / "plain", OutputSettings(), FULL_SCHEMA)
    packed = WorkStore(tmp_path / "packed", OutputSettings(work_compression="lz4"),
                       FULL_SCHEMA)
    for store in (plain, packed):
        store.put_many(list(zip(KEYS, rows, strict=True)))
    sizes = [sum(s.path(k).stat().st_size for k in KEYS) for s in (plain, packed)]
    assert sizes[1] < 0.8 * sizes[0]  # the default leaves them uncompressed
    assert packed.read(KEYS).equals(plain.read(KEYS))
    # Work files an earlier run left compressed are read by a store that writes them plain.
    assert WorkStore(packed.root, OutputSettings(), FULL_SCHEMA).read(KEYS).equals(
        plain.read(KEYS))
    with pytest.raises(ConfigError, match="work_compression"):
        OutputSettings(work_compression="gzip")


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    work = WorkStore(tmp_path / "work", SETTINGS, FULL_SCHEMA)
    work.path(KEYS[0]).mkdir(parents=True)  # a folder where the file goes: the rename fails
    with pytest.raises(OSError):
        work.put_many([(KEYS[0], plain_row(0))])
    assert [p.name for p in work.path(KEYS[0]).parent.iterdir()] == [work.path(KEYS[0]).name]


def test_a_key_folder_removed_between_batches_is_made_again(tmp_path: Path) -> None:
    work = WorkStore(tmp_path / "work", SETTINGS, FULL_SCHEMA)
    work.put_many([(KEYS[0], plain_row(0))])
    shutil.rmtree(work.path(KEYS[0]).parent)
    work.put_many([(KEYS[1], plain_row(1))])  # the same two-character folder
    assert work.has(KEYS[1]) and not work.has(KEYS[0])
    assert work.read(KEYS[1:2]).equals(rows_table([plain_row(1)], FULL_SCHEMA))


def test_rows_are_projected_to_the_dataset_schema_without_metadata() -> None:
    rows = rows_table([plain_row(0)], FULL_SCHEMA)
    marked = rows.replace_schema_metadata({"made": "elsewhere"})
    assert project(marked, FULL_SCHEMA).schema.metadata is None
    core = dataset_schema(())
    narrowed = project(marked, core)
    assert narrowed.schema.equals(core, check_metadata=True)
    assert narrowed.equals(rows.select(core.names))


def test_a_row_group_is_held_once_while_it_is_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shard writer lets a row group's separate rows go before the group is encoded, as
    one contiguous table: rows of ten-page documents make a group of tens of MB, which the
    build's parent would otherwise hold twice at its peak."""
    rows = rows_table(_rows(), FULL_SCHEMA)
    group = [rows.slice(i, 1) for i in range(rows.num_rows)]
    seen: list[tuple[int, pa.Table, int]] = []

    class Writer(pq.ParquetWriter):  # type: ignore[misc]
        def write_table(self, table: pa.Table, row_group_size: int | None = None) -> None:
            seen.append((len(group), table, cast(int, row_group_size)))
            super().write_table(table, row_group_size)

    monkeypatch.setattr(pq, "ParquetWriter", Writer)
    encode_group(_combined(group), FULL_SCHEMA, _options(SETTINGS))
    [(waiting, table, size)] = seen
    assert waiting == 0 and group == []
    assert table.equals(rows) and size == rows.num_rows
    assert all(column.num_chunks == 1 for column in table.columns)
