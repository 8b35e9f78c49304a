"""Parquet files: one-row work files per processed document, and the published shards.

Shards are written with pinned options (zstd level, row-group size, page checksums) and from
rows in a fixed order, so the same inputs always give the same bytes; each file is renamed
into place only once complete.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.blobs import atomic_path
from loralay_build.config import OutputSettings
from loralay_build.corpus.schema import EXAMPLE_SCHEMA


def _write_table(table: pa.Table, path: Path, settings: OutputSettings) -> None:
    """Write a table atomically with the pinned writer options."""
    with atomic_path(path) as tmp:
        if table.num_rows == 0:
            # No row group at all: `datasets` refuses a row group of 0 rows (batch size 0),
            # and an empty split must still load.
            pq.ParquetWriter(tmp, table.schema, compression="zstd").close()
            return
        pq.write_table(
            table.combine_chunks(),
            tmp,
            compression="zstd",
            compression_level=settings.zstd_level,
            row_group_size=settings.row_group_rows,
            write_page_checksum=True,
            data_page_version="2.0",
            use_dictionary=False,
            write_statistics=False,
        )


class WorkStore:
    """Processed examples, one Parquet file each, named by the work key."""

    def __init__(self, root: Path, settings: OutputSettings) -> None:
        self.root = root
        self.settings = settings

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.parquet"

    def put(self, key: str, row: dict[str, Any]) -> None:
        table = pa.Table.from_pylist([row], schema=EXAMPLE_SCHEMA)
        _write_table(table, self.path(key), self.settings)

    def read(self, keys: Sequence[str]) -> pa.Table:
        tables = [pq.read_table(self.path(k), schema=EXAMPLE_SCHEMA) for k in keys]
        if not tables:
            return EXAMPLE_SCHEMA.empty_table()
        return pa.concat_tables(tables)


@dataclass(frozen=True)
class ShardFile:
    name: str
    split: str
    rows: int
    bytes: int
    sha256: str


def shard_name(split: str, generation: str, index: int, count: int) -> str:
    """Shard file name; the generation keeps a new shard set from overwriting the old one."""
    return f"{split}-{generation}-{index:05d}-of-{count:05d}.parquet"


def _write_shards(out_dir: Path, split: str, generation: str, n_rows: int,
                  table: Callable[[int, int], pa.Table], settings: OutputSettings,
                  ) -> list[ShardFile]:
    """Write rows [0, n_rows) of one split as numbered shards; `table(a, b)` gives rows a..b.

    An empty split gets no file: `datasets` cannot read a shard without rows.
    """
    per_shard = max(1, settings.shard_rows)
    count = -(-n_rows // per_shard)
    files = []
    for index in range(count):
        start, stop = index * per_shard, min(n_rows, (index + 1) * per_shard)
        path = out_dir / shard_name(split, generation, index, count)
        _write_table(table(start, stop), path, settings)
        data = path.read_bytes()
        files.append(
            ShardFile(path.name, split, stop - start, len(data), hashlib.sha256(data).hexdigest())
        )
    return files


def write_split(out_dir: Path, split: str, generation: str, keys: Sequence[str],
                work: WorkStore, settings: OutputSettings) -> list[ShardFile]:
    """One split of processed documents (work-store keys, in the given order)."""
    return _write_shards(out_dir, split, generation, len(keys),
                         lambda a, b: work.read(keys[a:b]), settings)


def write_rows(out_dir: Path, split: str, generation: str, rows: Sequence[dict[str, Any]],
               schema: pa.Schema, settings: OutputSettings) -> list[ShardFile]:
    """One split of in-memory rows (derived views)."""
    return _write_shards(out_dir, split, generation, len(rows),
                         lambda a, b: pa.Table.from_pylist(list(rows[a:b]), schema=schema),
                         settings)


def remove_stale(out_dir: Path, files: list[dict[str, Any]]) -> None:
    """Delete shards of earlier builds and temporary files of interrupted writes."""
    names = {f["name"] for f in files}
    for stale in [*out_dir.glob("*-of-*.parquet"), *out_dir.glob(".*.tmp")]:
        if stale.name not in names:
            stale.unlink()


def digest(value: Any) -> str:
    """A fingerprint of published content (JSON-serialisable, key order ignored)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
