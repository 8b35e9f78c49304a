"""Recent documents are packed apart, in smaller shards, so the revisions that cluster on
them rewrite few rows; the file rule holds through nights of growth and revisions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.config import OutputSettings
from loralay_build.corpus.folder import read_build
from loralay_build.corpus.publish import (
    DictRows,
    Item,
    Selection,
    file_limit,
    switch,
    write_shards,
)
from loralay_build.run.publish_rows import UNDATED, published_day
from loralay_build.run.publish_write import recent_marks

SCHEMA = pa.schema([("id", pa.string())])
SETTINGS = OutputSettings(shard_rows=32, rows_per_file=25)


def _publish(folder: Path, keys: dict[str, int], recent: set[str] | None,
             run: int) -> int:
    """Publish `keys` (id to version) as one train split; the rows written."""
    items = [Item(cid, f"{cid}.{version}") for cid, version in sorted(keys.items())]
    masks = None if recent is None else {
        "train": np.array([item.id in recent for item in items], dtype=bool)}
    rows = DictRows({cid: {"id": cid} for cid in keys}, SCHEMA)
    shards = write_shards(folder, f"run {run}", {"train": items}, rows, SCHEMA, SETTINGS,
                          recent=masks)
    assert shards is not None
    switch(shards, {"fingerprint": f"run {run}", "files": shards.files}, "card\n")
    return shards.rows


def _shard_ids(folder: Path) -> list[set[str]]:
    return [set(pq.read_table(folder / f["name"])["id"].to_pylist())
            for f in read_build(folder)["files"]]


def test_recent_items_are_packed_apart_in_smaller_shards(tmp_path: Path) -> None:
    keys = {f"doc{k:04d}": 0 for k in range(400)}
    recent = {f"doc{k:04d}" for k in range(360, 400)}
    _publish(tmp_path, keys, recent, 0)
    shards = _shard_ids(tmp_path)
    assert len(shards) <= file_limit(400, SETTINGS.rows_per_file)
    young = [ids for ids in shards if ids & recent]
    assert all(ids <= recent for ids in young), "a shard mixes recent and old items"
    assert set().union(*young) == recent
    # 360 old items take 12 shards of 32, and the 40 recent ones the 4 left of 16 allowed.
    assert sorted(len(ids) for ids in young) == [10, 10, 10, 10]
    assert sorted(len(ids) for ids in shards if not ids & recent) == [8] + [32] * 11
    revised = {**keys, "doc0390": 1}
    assert _publish(tmp_path, revised, recent, 1) == 10  # one recent shard, not a full one


def test_nights_of_growth_keep_the_file_rule_and_write_less_than_one_tier(
        tmp_path: Path) -> None:
    """Ids unrelated to dates (as in a source whose ids are not chronological, or a corpus of
    several sources): each night 8 new documents and 4 revisions among the recent ones.
    Packed apart, the recent documents' revisions leave the old shards alone; in one tier
    nearly every shard holds a recent document. Every night keeps the file rule."""
    written = {}
    for tiered in (True, False):
        folder = tmp_path / str(tiered)
        rng = np.random.default_rng(0)
        ids = [f"doc{k:06d}" for k in rng.permutation(10**6)[:560].tolist()]
        keys = dict.fromkeys(ids[:400], 0)
        recent = set(ids[360:400])
        _publish(folder, keys, recent if tiered else None, 0)
        written[tiered] = 0
        for night in range(1, 21):
            new = ids[392 + 8 * night : 400 + 8 * night]
            keys |= dict.fromkeys(new, 0)
            recent |= set(new)
            for cid in rng.choice(sorted(recent), 4, replace=False).tolist():
                keys[cid] += 1
            written[tiered] += _publish(folder, keys, recent if tiered else None, night)
            assert len(_shard_ids(folder)) <= file_limit(len(keys), SETTINGS.rows_per_file)
            assert set().union(*_shard_ids(folder)) == set(keys)
    assert written[True] < 0.85 * written[False], written


def _item(at: int) -> Item:
    return Item(f"doc{at}", "")


def test_a_build_marks_as_recent_the_items_dated_within_recent_days_of_the_newest() -> None:
    dates = ["2020", "2023-07", "2024-05-31", "2024-06-01", "", "2024-02-30"]
    day = np.array([published_day(d) for d in dates], dtype=np.int32)
    assert day[0] == published_day("2020-01-01") and day[1] == published_day("2023-07-01")
    assert day[4] == day[5] == UNDATED
    items = {"train": Selection(_item, np.array([0, 1, 4, 5])),
             "test": Selection(_item, np.array([2, 3]))}
    marks = recent_marks(day, items, 365)
    assert marks is not None
    assert marks["train"].tolist() == [False, True, False, False]
    assert marks["test"].tolist() == [True, True]
    assert recent_marks(day, items, 0) is None
    assert recent_marks(day[[4, 5]], {"train": Selection(_item, np.array([0, 1]))}, 365) is None
