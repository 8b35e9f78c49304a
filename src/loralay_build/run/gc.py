"""`build-corpus gc OUT`: delete blobs and work files that nothing refers to any more.

Changed and vanished documents leave their old PDF and work file behind, and incremental
runs never delete them (a run cannot know whether another dataset of the root shares them).
A blob is kept while a candidate of any dataset, or a PubMed view's full-text index, names
it; a work file while a candidate names it as its current work or a published shard lists it
among its rows (what `verify` compares against). Every dataset's lock is held meanwhile, so
no build runs and nothing pending is lost.
"""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from loralay_build.blobs import SHA256_HEX
from loralay_build.corpus.folder import datasets_under, read_build
from loralay_build.corpus.publish import shard_items
from loralay_build.state import State


@dataclass(frozen=True)
class Collected:
    blobs: int
    work_files: int
    bytes: int


def _view_blobs(path: Path) -> set[str]:
    """The blobs the PubMed views' full-text index names (sources.pubmed.publish_views)."""
    if not path.is_file():
        return set()
    db = sqlite3.connect(path)
    try:
        return {str(r[0]) for r in db.execute("SELECT sha FROM jats")}
    finally:
        db.close()


def _published_keys(root: Path) -> set[str]:
    keys: set[str] = set()
    for folder in datasets_under(root):
        for entry in read_build(folder).get("files", []):
            found = shard_items(folder / entry["name"])
            if found is not None:
                keys.update(item.key for item in found[1])
    return keys


def collect(state: State) -> Collected:
    """Delete what nothing refers to; the caller holds no lock, this takes them all."""
    with ExitStack() as locks:
        for dataset in state.datasets():
            locks.enter_context(state.lock(dataset))
        blobs, work = state.references()
        layout = state.layout
        blobs |= _view_blobs(layout.views_index)
        work |= _published_keys(layout.root)
        count_blobs = count_work = size = 0
        for path in layout.blobs.glob("??/*"):
            if SHA256_HEX.fullmatch(path.name) and path.name not in blobs:
                size += path.lstat().st_size
                path.unlink()
                count_blobs += 1
        for path in layout.work.glob("??/*"):
            if path.stem not in work and path.suffix == ".arrow":
                size += path.stat().st_size
                path.unlink()
                count_work += 1
    return Collected(count_blobs, count_work, size)
