"""Parquet files assembled from whole row groups, each copied as bytes from another file.

Two things make a shard's row group worth copying instead of encoding. pyarrow's
content-defined chunking carries its state from one row group into the next, so a row
removed early in a shard changed the pages of every later group; a group encoded by a writer
of its own (a file of one group) has bytes that depend on its rows alone. And a rewritten
shard's unchanged groups then need no decoding and encoding at all: their bytes are copied,
and only the offsets that the footer and the page index hold are moved.

A file here is written as pyarrow writes one: the magic, the row groups' column chunks,
every column index, every offset index, the footer (taken from a file pyarrow wrote with the
same schema, metadata and options, with the row groups put in), its length and the magic.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from loralay_build.corpus.thrift import (
    STRUCT,
    Struct,
    ThriftError,
    ThriftList,
    Value,
    read_struct,
    write_struct,
)

MAGIC = b"PAR1"
COPY_BYTES = 1 << 20  # bytes held while a row group is copied

# Field ids of parquet.thrift (FileMetaData, RowGroup, ColumnChunk, ColumnMetaData,
# OffsetIndex, PageLocation).
FILE_NUM_ROWS, FILE_ROW_GROUPS, FILE_ENCRYPTION = 3, 4, 8
GROUP_COLUMNS, GROUP_NUM_ROWS, GROUP_FILE_OFFSET, GROUP_ORDINAL = 1, 3, 5, 7
CHUNK_FILE_OFFSET, CHUNK_META = 2, 3
CHUNK_OFFSET_INDEX, CHUNK_OFFSET_INDEX_LENGTH = 4, 5
CHUNK_COLUMN_INDEX, CHUNK_COLUMN_INDEX_LENGTH = 6, 7
CHUNK_ENCRYPTED = (8, 9)
META_COMPRESSED_SIZE, META_BLOOM_FILTER = 7, 14
META_PAGE_OFFSETS = (9, 10, 11)  # data, index and dictionary page
INDEX_PAGE_LOCATIONS, LOCATION_OFFSET = 1, 1


class ParquetLayoutError(ValueError):
    """A file whose row groups cannot be copied: damaged, encrypted, or laid out otherwise
    than as one contiguous run of column chunks per group."""


def read_footer(handle: BinaryIO) -> Struct:
    """A Parquet file's footer (FileMetaData)."""
    size = handle.seek(0, io.SEEK_END)
    if size < 12:
        raise ParquetLayoutError("too short for a Parquet file")
    handle.seek(size - 8)
    tail = handle.read(8)
    length = int.from_bytes(tail[:4], "little")
    if tail[4:] != MAGIC or length > size - 12:
        raise ParquetLayoutError("no Parquet footer at the end")
    handle.seek(size - 8 - length)
    try:
        meta, end = read_struct(handle.read(length))
    except ThriftError as exc:
        raise ParquetLayoutError(f"damaged footer: {exc}") from exc
    if end != length or meta.get(FILE_ENCRYPTION) is not None:
        raise ParquetLayoutError("a footer this writer does not copy")
    return meta


def _items(struct: Struct, fid: int) -> list[Struct]:
    value = struct.get(fid)
    if not isinstance(value, ThriftList) or not all(isinstance(v, Struct) for v in value.items):
        raise ParquetLayoutError(f"field {fid} is not a list of structures")
    return [item for item in value.items if isinstance(item, Struct)]


def _int(struct: Struct, fid: int) -> int:
    value = struct.get(fid)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParquetLayoutError(f"field {fid} is not an integer")
    return value


def row_groups(meta: Struct) -> list[Struct]:
    return _items(meta, FILE_ROW_GROUPS)


def _chunk_start(meta: Struct) -> int:
    return min(value for fid in META_PAGE_OFFSETS
               if isinstance(value := meta.get(fid), int) and value > 0)


def _span(group: Struct) -> tuple[int, int]:
    """Where a row group's column chunks lie: (start, size), one contiguous run."""
    runs = sorted((_chunk_start(meta), _int(meta, META_COMPRESSED_SIZE))
                  for chunk in _items(group, GROUP_COLUMNS)
                  if isinstance(meta := chunk.get(CHUNK_META), Struct))
    for (start, size), (after, _) in itertools.pairwise(runs):
        if start + size != after:
            raise ParquetLayoutError("a row group's column chunks are not contiguous")
    return runs[0][0], runs[-1][0] + runs[-1][1] - runs[0][0]


def _read(handle: BinaryIO, at: int, size: int) -> bytes:
    handle.seek(at)
    data = handle.read(size)
    if len(data) != size:
        raise ParquetLayoutError("file cut short")
    return data


@dataclass
class _Copied:
    """A row group written to the new file: its footer entry, and its page index entries
    (column index bytes, offset index structure; None for a column without)."""

    group: Struct
    column_indexes: list[bytes | None] = field(default_factory=list)
    offset_indexes: list[Struct | None] = field(default_factory=list)


class GroupWriter:
    """Writes a Parquet file whose row groups are copied, whole, from other files."""

    def __init__(self, out: BinaryIO, template: Struct) -> None:
        """`template`: the footer pyarrow wrote for the same schema, metadata and options
        (its row groups are replaced)."""
        self.out, self.template = out, template
        self.groups: list[_Copied] = []
        self.position = out.write(MAGIC)

    def copy(self, source: BinaryIO, meta: Struct, first: int = 0,
             count: int | None = None) -> None:
        """Append `count` row groups of `source` (all from `first` when None); `meta` is
        the source's footer."""
        groups = row_groups(meta)
        for group in groups[first : len(groups) if count is None else first + count]:
            self._copy_group(source, group)

    def _copy_group(self, source: BinaryIO, group: Struct) -> None:
        """Copy one row group; its footer entry is copied too, with the offsets moved (the
        source's footer stays as read, so a group can be copied again)."""
        start, size = _span(group)
        delta = self.position - start
        chunks: list[Value] = []
        copied = _Copied(Struct(list(group.fields)))
        for read in _items(group, GROUP_COLUMNS):
            chunk, meta = Struct(list(read.fields)), read.get(CHUNK_META)
            if not isinstance(meta, Struct) or any(chunk.get(f) is not None
                                                   for f in CHUNK_ENCRYPTED):
                raise ParquetLayoutError("an encrypted or external column chunk")
            if meta.get(META_BLOOM_FILTER) is not None:
                raise ParquetLayoutError("bloom filters are not copied")
            meta = Struct(list(meta.fields))
            for fid in META_PAGE_OFFSETS:
                if isinstance(offset := meta.get(fid), int) and offset > 0:
                    meta.set(fid, offset + delta)
            chunk.set(CHUNK_META, meta)
            if (offset := chunk.get(CHUNK_FILE_OFFSET)) is not None and offset != 0:
                chunk.set(CHUNK_FILE_OFFSET, _int(chunk, CHUNK_FILE_OFFSET) + delta)
            copied.column_indexes.append(
                None if chunk.get(CHUNK_COLUMN_INDEX) is None else _read(
                    source, _int(chunk, CHUNK_COLUMN_INDEX),
                    _int(chunk, CHUNK_COLUMN_INDEX_LENGTH)))
            copied.offset_indexes.append(
                None if chunk.get(CHUNK_OFFSET_INDEX) is None else self._moved_index(
                    source, chunk, delta))
            chunks.append(chunk)
        group = copied.group
        group.set(GROUP_COLUMNS, ThriftList(STRUCT, chunks))
        if group.get(GROUP_FILE_OFFSET) is not None:
            group.set(GROUP_FILE_OFFSET, _int(group, GROUP_FILE_OFFSET) + delta)
        if group.get(GROUP_ORDINAL) is not None:
            group.set(GROUP_ORDINAL, len(self.groups))
        source.seek(start)
        left = size
        while left:
            data = source.read(min(left, COPY_BYTES))
            if not data:
                raise ParquetLayoutError("file cut short")
            self.out.write(data)
            left -= len(data)
        self.position += size
        self.groups.append(copied)

    @staticmethod
    def _moved_index(source: BinaryIO, chunk: Struct, delta: int) -> Struct:
        """A column chunk's offset index with its pages' offsets moved by `delta`."""
        data = _read(source, _int(chunk, CHUNK_OFFSET_INDEX),
                     _int(chunk, CHUNK_OFFSET_INDEX_LENGTH))
        try:
            index, _ = read_struct(data)
        except ThriftError as exc:
            raise ParquetLayoutError(f"damaged offset index: {exc}") from exc
        for location in _items(index, INDEX_PAGE_LOCATIONS):
            location.set(LOCATION_OFFSET, _int(location, LOCATION_OFFSET) + delta)
        return index

    def close(self) -> None:
        """Write the page index and the footer."""
        for copied in self.groups:
            for chunk, data in zip(_items(copied.group, GROUP_COLUMNS), copied.column_indexes,
                                   strict=True):
                if data is not None:
                    chunk.set(CHUNK_COLUMN_INDEX, self.position)
                    self.position += self.out.write(data)
        for copied in self.groups:
            for chunk, index in zip(_items(copied.group, GROUP_COLUMNS),
                                    copied.offset_indexes, strict=True):
                if index is not None:
                    data = write_struct(index)
                    chunk.set(CHUNK_OFFSET_INDEX, self.position)
                    chunk.set(CHUNK_OFFSET_INDEX_LENGTH, len(data))
                    self.position += self.out.write(data)
        footer = Struct(list(self.template.fields))
        footer.set(FILE_NUM_ROWS, sum(_int(c.group, GROUP_NUM_ROWS) for c in self.groups))
        footer.set(FILE_ROW_GROUPS, ThriftList(STRUCT, [c.group for c in self.groups]))
        data = write_struct(footer)
        self.out.write(data + len(data).to_bytes(4, "little") + MAGIC)


@contextmanager
def open_source(path: Path) -> Iterator[tuple[BinaryIO, Struct]]:
    """A Parquet file open for copying its row groups, with its footer."""
    with path.open("rb") as handle:
        yield handle, read_footer(handle)

