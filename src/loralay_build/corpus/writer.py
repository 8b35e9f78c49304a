"""Work files (one Arrow IPC file per processed document) and the published Parquet shards.

Work files are only read back and re-encoded into shards, so they skip Parquet's encoding:
Arrow IPC, uncompressed unless configured. Shards are written with pinned options (zstd
level, row-group bounds, page checksums and index) and from rows in a fixed order, so the
same inputs always give the same bytes; each file is renamed into place only once
complete. Which shards to write is decided by `corpus.publish`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa

from loralay_build.blobs import atomic_path, sync_filesystem
from loralay_build.columns import Strings
from loralay_build.config import OutputSettings
from loralay_build.corpus.arrays import buffer_array, to_arrow
from loralay_build.corpus.encoder import GroupEncoder, encode_group
from loralay_build.corpus.rowgroups import GroupWriter, open_source, read_footer
from loralay_build.corpus.schema import project
from loralay_build.corpus.thrift import Struct
from loralay_build.errors import LoralayError
from loralay_build.nfc import nfc_values


def _options(settings: OutputSettings) -> dict[str, Any]:
    """The pinned Parquet writer options: the same inputs always give the same bytes. The page
    index lets a reader (the Hub's viewer) fetch single pages instead of whole row groups."""
    return {
        "compression": "zstd",
        "compression_level": settings.zstd_level,
        "write_page_checksum": True,
        "data_page_version": "2.0",
        "use_dictionary": False,
        # Min/max of the ids only: rows are in id order, so `inspect` reads the one row group
        # whose range holds an id instead of scanning the shards.
        "write_statistics": ["article_id"],
        "write_page_index": True,
        "use_content_defined_chunking": settings.content_defined_chunking,
    }


@dataclass(frozen=True)
class GroupCopy:
    """`count` row groups of a published shard from group `first`, copied as they are."""

    path: Path
    first: int
    count: int


Segment = GroupCopy | Iterable[pa.Table]


def write_shard(path: Path, schema: pa.Schema, segments: Iterable[Segment],
                settings: OutputSettings, metadata: dict[bytes, bytes],
                encoder: GroupEncoder | None = None) -> None:
    """Write the rows of `segments` (in order) as one Parquet file, atomically.

    A segment is copied from a published shard, or made of the rows of its tables: a row
    group ends before it would pass `row_group_bytes` uncompressed bytes (a single larger
    row is a group of its own) or at the segment's end. Each row group is encoded by a
    writer of its own (`encoder`: in this process unless given), so its bytes depend on its
    rows alone and a shard rewritten around it can copy it (`corpus.rowgroups`).
    """
    options = _options(settings)
    pieces = _pieces(segments, settings.row_group_bytes)
    with atomic_path(path) as tmp, tmp.open("wb") as handle, ExitStack() as opened:
        out = GroupWriter(handle, _empty_footer(schema.with_metadata(metadata), options))
        sources: dict[Path, tuple[BinaryIO, Struct]] = {}  # each footer decoded once
        for piece in (encoder or GroupEncoder()).encode(pieces, schema, options):
            if isinstance(piece, GroupCopy):
                if piece.path not in sources:
                    sources[piece.path] = opened.enter_context(open_source(piece.path))
                out.copy(*sources[piece.path], piece.first, piece.count)
            else:
                buffer = io.BytesIO(piece)
                out.copy(buffer, read_footer(buffer))
        out.close()


def _pieces(segments: Iterable[Segment], max_bytes: int) -> Iterator[GroupCopy | pa.Table]:
    """The segments in order as copies and as row groups to encode, each group's rows one
    contiguous table."""
    for segment in segments:
        if isinstance(segment, GroupCopy):
            yield segment
        else:
            yield from _groups(segment, max_bytes)


def _groups(tables: Iterable[pa.Table], max_bytes: int) -> Iterator[pa.Table]:
    """The rows of `tables` as row groups of at most `max_bytes` (a larger row alone).

    The rows of a group are combined into one contiguous table, so its bytes depend on the
    rows alone, not on how they came chunked; the separate rows are let go before the table
    is encoded, so the group is held once, not twice, beside the encoder's buffers.
    """
    group: list[pa.Table] = []
    size = 0
    for table in tables:
        rows = [table] if table.num_rows == 1 else (  # a work file's row as it is
            table.slice(index, 1) for index in range(table.num_rows))
        for row in rows:
            if group and size + row.nbytes > max_bytes:
                yield _combined(group)
                size = 0
            group.append(row)
            size += row.nbytes
    if group:
        yield _combined(group)


def _combined(group: list[pa.Table]) -> pa.Table:
    """The rows of `group` as one contiguous table; `group` is emptied."""
    table = pa.concat_tables(group).combine_chunks()
    group.clear()
    return table


def _empty_footer(schema: pa.Schema, options: dict[str, Any]) -> Struct:
    """The footer pyarrow writes for a file of `schema` without rows: a shard's footer, but
    for its row groups. (The empty table is made without pyarrow's Python converter, which
    would import pandas.)"""
    return read_footer(io.BytesIO(encode_group(pa.Table.from_batches([], schema=schema), schema,
                                               options)))


def _column(value: Any, field: pa.Field) -> pa.Array:
    """A one-row Arrow array of the field; compact columns are wrapped without a per-word step."""
    if isinstance(value, Strings):
        count = len(value)
        inner: pa.Array = pa.StringArray.from_buffers(
            count, pa.py_buffer(value.offsets), pa.py_buffer(value.data)
        )
    elif isinstance(value, np.ndarray):
        count = len(value)
        item = field.type.value_type
        # From the raw buffer: no conversion element by element.
        flat = buffer_array(value.reshape(-1), getattr(item, "value_type", item))
        inner = pa.FixedSizeListArray.from_arrays(flat, item.list_size) if value.ndim == 2 else flat
    else:
        return to_arrow([value], field.type)
    offsets = buffer_array(np.array([0, count], dtype=np.int32), pa.int32())
    return pa.ListArray.from_arrays(offsets, inner, type=field.type)


def _check_declared(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> None:
    """A value for a column the dataset does not have means its source fills a column it
    does not declare (`Source.columns`): an error, rather than data silently left out."""
    for name in sorted({name for row in rows for name in row} - set(schema.names)):
        if any(row.get(name) not in (None, "", []) for row in rows):
            raise ValueError(f"rows fill the column {name!r}, which their source does not "
                             "declare")


def rows_table(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Example rows (plain values, `Strings` or numpy columns) as one table of the dataset's
    `schema`.

    A column of plain values is converted in one call for all rows, not one per row: most
    columns are scalars, and each conversion call costs more than its one value.
    """
    _check_declared(rows, schema)
    columns = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        if any(isinstance(v, (Strings, np.ndarray)) for v in values):
            columns.append(pa.concat_arrays([_column(v, field) for v in values]))
        else:
            columns.append(to_arrow(values, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


class WorkFileError(LoralayError):
    """A work file that publishing needs is missing or unreadable."""


def _ipc_file(table: pa.Table, compression: str) -> pa.Buffer:
    """One row as the bytes of an Arrow IPC file (the file format: its footer makes a cut
    file fail), made in memory so that the file is then one write instead of one a buffer.

    Not compressed by default (`[output] work_compression`): the file lives only until its row
    is published. On real rows lz4 makes it 30 % smaller for about 0.04 ms of the parent's
    CPU per page written and read back, about half of the work store's cost; zstd 55 % for
    0.2 ms. Buffers are compressed on this thread: a row's buffers are small, and handing them
    to Arrow's pool cost more CPU than compressing them (the bytes are the same).
    """
    codec = None if compression == "none" else pa.Codec(compression)
    options = pa.ipc.IpcWriteOptions(compression=codec, use_threads=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _read_ipc(path: Path, schema: pa.Schema) -> pa.Table:
    """A work file, read in one call, as a row of `schema` (corpus.schema.project). Not
    memory-mapped: that is no cheaper here, and a mapped file cut short by anyone would kill
    the process (SIGBUS).
    Fully validated: corrupt offsets or text fail here rather than in the shard writer.
    Decompressed on this thread, as it was written (see _ipc_file)."""
    options = pa.ipc.IpcReadOptions(use_threads=False)
    table = project(pa.ipc.open_file(pa.py_buffer(path.read_bytes()), options=options).read_all(),
                    schema)
    table.validate(full=True)
    return table


def _write_new(path: Path, data: pa.Buffer) -> None:
    """Write `data` as the file `path`, making its folder when missing (a folder per key
    prefix: made once, so asked for only when the write finds none)."""
    try:
        handle = path.open("wb")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("wb")
    with handle:
        handle.write(data)


class WorkStore:
    """Processed examples of one dataset (rows of its `schema`), one Arrow IPC file each,
    named by the work key."""

    def __init__(self, root: Path, settings: OutputSettings, schema: pa.Schema) -> None:
        self.root = root
        self.settings = settings
        self.schema = schema

    def _name(self, key: str) -> str:
        """The work file's path as text: `has` is asked of every document on every run, and
        joining text costs a fifth of building a Path."""
        return os.path.join(self.root, key[:2], f"{key}.arrow")

    def path(self, key: str) -> Path:
        return Path(self._name(key))

    def has(self, key: str) -> bool:
        return os.path.isfile(self._name(key))

    def _read_row(self, key: str) -> pa.Table:
        path = self.path(key)
        try:
            return _read_ipc(path, self.schema)
        except (OSError, pa.ArrowException) as exc:
            raise WorkFileError(f"work file {path} is unreadable: {exc} (delete it and run "
                                "again: its document is then processed again)") from exc

    def discard(self, key: str) -> None:
        """Delete the work file of `key` (its row is published: `[store] keep_work`)."""
        self.path(key).unlink(missing_ok=True)

    def put(self, key: str, row: dict[str, Any]) -> None:
        self.put_many([(key, row)])

    def put_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Write a batch of rows, then make the whole batch durable with one sync.

        Each file is renamed into place complete, so a reader never sees a partial one; the
        caller records the batch as done only after this returns, so a crash before the sync
        leaves at most files that nothing refers to yet, rewritten by the next run.
        """
        if not items:
            return
        table = rows_table([row for _, row in items], self.schema)
        for index, (key, _) in enumerate(items):
            path = self.path(key)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            data = _ipc_file(table.slice(index, 1), self.settings.work_compression)
            try:
                _write_new(tmp, data)
                os.replace(tmp, path)
            except BaseException:  # renamed into place, it is gone: only a failure leaves it
                tmp.unlink(missing_ok=True)
                raise
        self.root.mkdir(parents=True, exist_ok=True)
        sync_filesystem(self.root)

    def read(self, keys: Sequence[str]) -> pa.Table:
        tables = [self._read_row(k) for k in keys]
        if not tables:
            return self.schema.empty_table()
        return pa.concat_tables(tables)


def dict_rows_table(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """In-memory rows of plain values (derived views) as one table of `schema`, every text
    in NFC."""
    return pa.Table.from_arrays([to_arrow([nfc_values(row.get(f.name)) for row in rows], f.type)
                                 for f in schema], schema=schema)


def digest(value: Any) -> str:
    """A fingerprint of published content (JSON-serialisable, key order ignored)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def digest_each(values: Iterable[Any]) -> str:
    """A fingerprint of a long sequence, fed one element at a time: no JSON text of the
    whole sequence is ever held."""
    hashed = hashlib.sha256()
    for value in values:
        hashed.update(json.dumps(value, sort_keys=True, default=str).encode() + b"\n")
    return hashed.hexdigest()
