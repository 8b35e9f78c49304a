"""Parquet files: one-row work files per processed document, and the published shards.

Shards are written with pinned options (zstd level, row-group size, page checksums) and from
rows in a fixed order, so the same inputs always give the same bytes; each file is renamed
into place only once complete.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
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


def shard_name(split: str, index: int, count: int) -> str:
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def write_split(
    out_dir: Path, split: str, keys: Sequence[str], work: WorkStore, settings: OutputSettings
) -> list[ShardFile]:
    """Write one split's rows (in the given order) as numbered shards.

    An empty validation or test split gets no file: `datasets.load_dataset` fails on a split
    whose files hold no rows, and a small corpus may have none. Train always gets a file.
    """
    if not keys and split != "train":
        return []
    per_shard = max(1, settings.shard_rows)
    count = max(1, -(-len(keys) // per_shard))
    files = []
    for index in range(count):
        chunk = keys[index * per_shard : (index + 1) * per_shard]
        path = out_dir / shard_name(split, index, count)
        _write_table(work.read(chunk), path, settings)
        data = path.read_bytes()
        files.append(
            ShardFile(path.name, split, len(chunk), len(data), hashlib.sha256(data).hexdigest())
        )
    return files
