"""What the stages of a build share: the request, the stores, the client and the counters.

Why: a stage (discover, download, process, publish) takes this small context instead of the
whole driver, so each stage is read, tested and changed on its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from loralay_build.blobs import BlobStore
from loralay_build.config import Settings
from loralay_build.corpus.publish import PublishedRows
from loralay_build.corpus.writer import WorkStore
from loralay_build.digests import DigestSet
from loralay_build.http import HttpClient
from loralay_build.run.stats import BuildStats
from loralay_build.source_table import DocumentOptions
from loralay_build.sources.base import Source
from loralay_build.state import State

# Every stage logs under the driver's name: one logger for the lines of a build.
log = logging.getLogger("loralay_build.run.pipeline")


@dataclass
class BuildRequest:
    source: str
    dataset: str
    settings: Settings
    since: str | None = None
    limit: int | None = None
    command: str = ""
    allow_empty: bool = False  # a dataset without rows is a success, not exit 1
    listed: bool = False  # an earlier build of this command listed the crawl (DiscoveryContext)
    listing_failures: int = 0  # parts of that listing that failed: this build is partial too


@dataclass
class BuildContext:
    """One build's request, state, stores, client and counters."""

    request: BuildRequest
    state: State
    source: Source
    blobs: BlobStore
    schema: pa.Schema  # the dataset's columns: the core and its source's own
    work: WorkStore
    client: HttpClient
    processing_hash: str
    options: DocumentOptions  # per-document options, one object for every task
    excluded: frozenset[str]  # ids and DOIs of `[dedup] exclude` (corpus.contamination)
    stats: BuildStats = field(default_factory=BuildStats)
    fetched: DigestSet = field(default_factory=DigestSet)  # blobs stored by this run: intact
    _published: PublishedRows | None = field(default=None, repr=False)

    def published_rows(self) -> PublishedRows:
        """The index of the shard set in place, read from the shards' footers once a build:
        processing and publishing both look rows up in it, and the set changes only when
        publishing switches to the new one, after its last lookup."""
        if self._published is None:
            self._published = PublishedRows(self.out_dir)
        return self._published

    @property
    def settings(self) -> Settings:
        return self.request.settings

    @property
    def dataset(self) -> str:
        return self.request.dataset

    @property
    def out_dir(self) -> Path:
        """The dataset's folder."""
        return self.state.layout.dataset(self.request.dataset)
