"""What every source provides: discovery of candidates, and how a candidate's file is fetched."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

from loralay_build.blobs import BlobStore
from loralay_build.config import Settings
from loralay_build.corpus.columns import Column
from loralay_build.errors import ConfigError, LoralayError
from loralay_build.http import HttpClient, describe
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.command import SourceCommand
from loralay_build.sources.views.row_view import RowView
from loralay_build.state import State
from loralay_build.views.schema import ViewLayout

T = TypeVar("T")
C = TypeVar("C", bound=SourceConfig)
log = logging.getLogger(__name__)
QUERY_STRING = re.compile(r"(\w+://[^\s?#()\[\]]+)(\?[^\s()\[\]]*)")
LONG_QUERY = 200  # characters of a query string an error line still quotes


def _short_query(found: re.Match[str]) -> str:
    """A URL with a short query as it is; a long one (a SPARQL query fills kilobytes) cut to
    its endpoint, the whole request going to the -v log."""
    endpoint, query = found.groups()
    return endpoint + query if len(query) <= LONG_QUERY else f"{endpoint}?… (-v shows the query)"


@dataclass(frozen=True)
class DiscoveryFailure:
    """One part of a discovery pass (a collection, a venue, a set) that failed."""

    scope: str
    message: str


@dataclass
class DiscoveryContext:
    """What discovery may use: the client, the source's configuration, and its marks."""

    client: HttpClient
    config: SourceConfig
    state: State
    dataset: str
    since: str | None = None  # YYYY-MM-DD from --since; overrides the stored high-water mark
    failures: list[DiscoveryFailure] = field(default_factory=list)
    # An earlier build of the same command listed this crawl for every dataset it feeds
    # (EUR-Lex languages, SciELO languages): the listing is not asked again in this run.
    listed: bool = False

    @contextmanager
    def isolated(self, scope: str) -> Iterator[None]:
        """Run one part of discovery; its failure is recorded and the other parts go on.

        A configuration error is the user's to fix and still stops the run.
        """
        try:
            yield
        except ConfigError:
            raise
        except LoralayError as exc:
            self.failures.append(DiscoveryFailure(scope, describe(exc)))
            log.error("%s: discovery of %s failed: %s", self.dataset, scope,
                      QUERY_STRING.sub(_short_query, describe(exc)))
            log.info("%s: the failed request of %s: %s", self.dataset, scope, describe(exc))

    def settings(self, cls: type[C]) -> C:
        """The source's configuration as its own dataclass."""
        if not isinstance(self.config, cls):
            raise TypeError(f"{self.dataset}: [source] is a {type(self.config).__name__}, "
                            f"not a {cls.__name__}")
        return self.config

    def get_mark(self, key: str) -> str | None:
        return self.state.get_mark(self.dataset, key)

    def set_mark(self, key: str, value: str) -> None:
        self.state.set_mark(self.dataset, key, value)


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Group a stream into lists of `size` (the last one may be shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def limited(batches: Iterator[list[Candidate]], limit: int | None) -> Iterator[list[Candidate]]:
    """At most `limit` candidates from a source's batches, then close the source.

    Closing stops the source at its current `yield`: a source stopped early never runs the
    code after its loop, so a partial pass never moves its high-water mark.
    """
    if limit is None:
        yield from batches
        return
    seen = 0
    try:
        for batch in batches:
            batch = batch[: limit - seen]
            seen += len(batch)
            if batch:
                yield batch
            if seen >= limit:
                return
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


class Source(Protocol):
    """A source module: `discover` yields candidates page by page; `fetch` stores the file."""

    name: str
    config_class: type[SourceConfig]  # its `[source]` keys, values in configs/<name>.toml
    command: SourceCommand  # its `build-corpus <name>` options
    # Its own columns, declared once (name, Arrow type, card prose); its candidates fill them
    # through `extra["columns"]`, and the schema and card read them (corpus.columns).
    declares: tuple[Column, ...]
    # The columns beyond the core that its rows fill (corpus.schema.source_columns): its own
    # and the optional shared ones (`doi`); its datasets publish those and the core, no
    # column that would always be null.
    columns: tuple[str, ...]
    card_notes: str  # the "Source notes" of its datasets' cards ("" for none)
    licences: LicenceMapping  # its licence spellings beyond the shared recogniser
    demos: tuple[str, ...]  # the datasets `build-corpus demo` builds of it, from its fake
    # Its own cleaners, by the name a `cleaners` key uses (parse.clean.CLEANERS).
    cleaners: tuple[tuple[str, Cleaner], ...]
    views: tuple[ViewLayout, ...]  # the views built from its published rows (after_publish)
    # Which of its candidates' fields say where the file is, not what it is: moving it
    # re-processes nothing (identity.py).
    identity: Identity

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        """Yield batches of candidates; each batch is committed before the next is asked for.

        A source advances its high-water mark only once a whole pass has been committed.
        """
        ...

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        """Store the candidate's document in the blob store and return its sha256."""
        ...


@runtime_checkable
class ChecksInput(Protocol):
    """A source that reads files the user names (a manifest, id lists): they are read and
    checked with the other options, before the build creates anything under `--out`."""

    def check_input(self, config: SourceConfig) -> None:
        """Raise ConfigError, naming the file and line, when an input cannot be used."""
        ...


@dataclass
class PublishedDataset:
    """What a step after publishing may use: the dataset just published, the state (whose
    layout says where its siblings go), the stores and client of the build, and the run's
    counters (a step adds to them; `views_full_text_waiting` and `views_empty` make the run
    partial)."""

    dataset: str
    settings: Settings
    state: State
    blobs: BlobStore
    client: HttpClient
    counts: Counter[str]


@runtime_checkable
class PublishesMore(Protocol):
    """A source that publishes more from a dataset once its layout dataset is published
    (PubMed's views). The pipeline calls it after every publish, removals included."""

    def after_publish(self, ctx: PublishedDataset) -> None: ...


@runtime_checkable
class MakesRowViews(Protocol):
    """A source with views of its own made row by row from its published rows (OpenReview's
    SciTLDR), written beside those of every source (`sources.views.publish`)."""

    row_views: dict[str, RowView]
