"""Repacking a dataset's shards full, on request (`build-corpus compact`).

Incremental publishing adds a small shard per split and run, and many small files slow every
reader. Compaction rewrites the rows, in their published order, into full shards through the
one publisher (the same atomic switch). It reads the rows from the shards themselves, so it
needs neither the state nor the work files, and it keeps the build's fingerprint: the rows do
not change, so the next build finds the dataset up to date.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.corpus.card import with_data_files
from loralay_build.corpus.folder import published_build
from loralay_build.corpus.publish import (
    CARD_FILE,
    Item,
    PublishedRows,
    named_schema,
    output_settings,
    shard_items,
    switch,
    write_shards,
)
from loralay_build.corpus.split import SPLITS
from loralay_build.errors import LoralayError


class CompactError(LoralayError):
    """The folder holds no intact build whose shards record their rows."""


class _ByKey:
    """The published rows handed to the publisher by their content keys (a run the
    publisher copies as it is is never read), each checked against the item it is asked
    for."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.rows = PublishedRows(folder)

    def tables(self, items: Sequence[Item]) -> Iterator[pa.Table]:
        for item in items:
            row = self.rows.read(item.key)
            if str(row.column(0)[0].as_py()) != item.id:
                raise CompactError(f"{self.folder}: a shard's rows differ from what it records")
            yield row


def needs_compaction(files: list[dict[str, Any]], shard_rows: int) -> bool:
    """Whether some split has another number of shards than full ones of `shard_rows` make
    (more: partial shards; fewer: larger ones, split on request)."""
    for split in SPLITS:
        rows = [f["rows"] for f in files if f["split"] == split]
        if len(rows) != -(-sum(rows) // shard_rows):
            return True
    return False


def compact_dataset(folder: Path, shard_rows: int) -> int:
    """Repack `folder` into shards of `shard_rows` rows; returns the shards written (0 when
    it is already compact)."""
    build = published_build(folder)
    if not build.get("files"):
        raise CompactError(f"{folder}: no complete published build to compact")
    files = sorted(build["files"], key=lambda f: SPLITS.index(f["split"]))  # stable
    if not needs_compaction(files, shard_rows):
        return 0
    found = [shard_items(folder / f["name"]) for f in files]
    formats = {f[0] for f in found if f is not None}
    if None in found or len(formats) != 1:
        raise CompactError(f"{folder}: its shards do not all record their rows in one format "
                           "(written by an earlier version?); run its build command first")
    splits: dict[str, list[Item]] = {split: [] for split in SPLITS}
    for entry, record in zip(files, found, strict=True):
        assert record is not None
        splits[entry["split"]] += record[1]
    schema = named_schema(pq.read_schema(folder / files[0]["name"]).remove_metadata())
    card = (folder / CARD_FILE).read_text()
    # Shards of exactly `shard_rows`, as asked: the next build merges them again if they
    # break its file rule.
    settings = replace(output_settings(formats.pop(), shard_rows), rows_per_file=1)
    shards = write_shards(folder, build["fingerprint"], splits, _ByKey(folder), schema,
                          settings, repack=True)
    assert shards is not None, "a repack always writes"
    switch(shards, {**build, "files": shards.files}, with_data_files(card, shards.files, build))
    return sum(-(-len(items) // shard_rows) for items in splits.values())
