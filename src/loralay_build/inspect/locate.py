"""Find the document `inspect` draws: its published row or its record in the build state,
the id as the user wrote it resolved, and the settings the dataset was built with.

A dataset with nothing published has no folder yet; its rejects are in the state beside
where the folder would be, and can be drawn too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from loralay_build.config import Settings
from loralay_build.corpus.folder import SHARD_GLOB, read_build
from loralay_build.ids import UnknownId, resolve_id
from loralay_build.layout import OutputLayout
from loralay_build.sources import load_settings, settings_from_raw
from loralay_build.state import FILTERED, REJECTED, SETTINGS_MARK, Row, State


class UnknownDocument(LookupError):
    """The id is neither in the published shards nor among the dataset's rejects."""


class UnknownDataset(LookupError):
    """The folder is no dataset, published or with a build state that knows it."""


@dataclass
class Located:
    """One document of a dataset as `inspect` needs it."""

    article_id: str  # as published (`<source>:<id>`)
    source: str
    settings: Settings  # the dataset's build settings, the defaults when none are recorded
    settings_recorded: bool
    row: dict[str, Any] | None = None  # the published row
    build: dict[str, Any] = field(default_factory=dict)  # the dataset's build.json
    record: Row | None = None  # the state's record (None without a state)
    rejected: str = ""  # "status as reason: detail" for a document not published

    @property
    def pdf_sha256(self) -> str | None:
        if self.row is not None:
            return str(self.row["pdf_sha256"]) if self.row["pdf_sha256"] else None
        return self.record.blob_sha if self.record else None

    def given_file(self) -> Path | None:
        """The file on disk a reject's record names (a manifest's PDF), when it is there:
        what to draw of a document rejected before its file was stored."""
        url = self.record.candidate.file_url if self.record else ""
        if not url or "://" in url:
            return None
        path = Path(url)
        return path if path.is_file() else None


def _may_hold(shard: pq.ParquetFile, group: int, article_id: str) -> bool:
    """Whether a row group's id range (written at publish) can hold `article_id`; True
    when the shard has no statistics (written by an earlier version)."""
    column = shard.metadata.row_group(group).column(0)
    stats = column.statistics if column.path_in_schema == "article_id" else None
    if stats is None or not stats.has_min_max:
        return True
    return bool(stats.min <= article_id <= stats.max)


def find_row(dataset_dir: Path, article_id: str) -> dict[str, Any] | None:
    """The published row of `article_id` (None when it is not published).

    Row groups whose id range excludes it are skipped; of the others only the id column is
    read, then the one row group holding the document, so memory follows one row group.
    """
    for path in sorted(dataset_dir.glob(SHARD_GLOB)):
        with pq.ParquetFile(path) as shard:
            for group in range(shard.num_row_groups):
                if not _may_hold(shard, group, article_id):
                    continue
                ids = shard.read_row_group(group, columns=["article_id"]).column("article_id")
                found = pc.index(ids, article_id).as_py()
                if found >= 0:
                    table = shard.read_row_group(group).slice(found, 1)
                    row: dict[str, Any] = table.to_pylist()[0]
                    return row
    return None


def locate(dataset_dir: Path, given_id: str) -> Located:
    """The document `given_id` names in the dataset at `dataset_dir` (published or not).

    Raises UnknownDataset, UnknownDocument, or `ids.AmbiguousId` when the id names two
    documents."""
    layout = OutputLayout.of_dataset(dataset_dir)
    state = State(layout.root) if layout.has_state() else None
    try:
        build = read_build(dataset_dir)
        source = str(build.get("source") or "") or (
            state.source_of(dataset_dir.name) if state is not None else None)
        if source is None:
            raise UnknownDataset(str(dataset_dir))
        published: dict[str, dict[str, Any] | None] = {}

        def exists(article_id: str) -> bool:
            published[article_id] = find_row(dataset_dir, article_id)
            if published[article_id] is not None:
                return True
            return state is not None and state.row(dataset_dir.name, article_id) is not None

        try:
            article_id = resolve_id(given_id, [source], exists)
        except UnknownId:
            raise UnknownDocument(given_id) from None
        record = state.row(dataset_dir.name, article_id) if state is not None else None
        raw = state.get_mark(dataset_dir.name, SETTINGS_MARK) if state is not None else None
    finally:
        if state is not None:
            state.close()
    if raw is not None:
        settings, recorded = settings_from_raw(source, json.loads(raw)), True
    else:
        settings, recorded = load_settings(source), False
    located = Located(article_id, source, settings, recorded, published.get(article_id),
                      build, record)
    if located.row is None and record is not None and record.status in (REJECTED, FILTERED):
        located.rejected = f"{record.status} as {record.reason}: {record.detail or ''}" \
            .rstrip(": ")
    elif located.row is None:
        raise UnknownDocument(given_id)  # in the state, but neither published nor dropped
    return located
