"""The build driver: discover -> fetch -> process -> publish, resumable at every step.

Every step reads what to do from the state database and records each result as soon as it is
durable, so a run killed at any point is resumed by running the same command again. Each
stage is a module taking the build's context (run.context): run.discover, run.download,
run.process_stage, run.publish_stage.
"""

from __future__ import annotations

import json
import re

from loralay_build.blobs import BlobStore
from loralay_build.corpus.contamination import excluded_ids
from loralay_build.corpus.schema import dataset_schema
from loralay_build.corpus.writer import WorkStore
from loralay_build.errors import ConfigError, LoralayError
from loralay_build.http import HttpClient
from loralay_build.run.context import BuildContext, BuildRequest
from loralay_build.run.discover import discover
from loralay_build.run.download import fetch
from loralay_build.run.executors import check_executor
from loralay_build.run.process_stage import process
from loralay_build.run.publish_stage import publish
from loralay_build.run.stats import BuildStats
from loralay_build.sources import get_source
from loralay_build.sources.base import PublishedDataset, PublishesMore
from loralay_build.sources.views.publish import publish_row_views
from loralay_build.state import (
    FILTERED,
    PUBLISHED,
    REJECTED,
    RETRY,
    SETTINGS_MARK,
    State,
)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_PARTIAL, EXIT_LOCKED = 0, 1, 2, 3, 75
EXIT_INTERRUPTED = 130
DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class NothingPublished(LoralayError):
    """The build ended with a dataset without rows (exit 1, so cron and CI notice)."""


def check_dataset_name(name: str) -> str:
    """Return `name` if it is a safe single folder name under the output root.

    The dataset name becomes `OUT/NAME`, so `..`, separators, NUL, a leading dot (the state
    folder is `.loralay`) or an over-long name could write outside the output folder.
    """
    if not DATASET_NAME.fullmatch(name):
        raise ConfigError(
            f"invalid dataset name {name!r}: use 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


class Pipeline:
    def __init__(self, request: BuildRequest, state: State) -> None:
        settings = request.settings
        source = get_source(request.source)
        schema = dataset_schema(source.columns)
        self.ctx = BuildContext(
            request=request,
            state=state,
            source=source,
            blobs=BlobStore(state.layout.blobs),
            schema=schema,
            work=WorkStore(state.layout.work, settings.output, schema),
            client=HttpClient(settings.http, trusted_urls=settings.source.endpoints()),
            processing_hash=settings.processing_hash(),
            options=settings.source.document_options(),
            excluded=excluded_ids(settings.dedup.exclude),
        )

    @property
    def stats(self) -> BuildStats:
        return self.ctx.stats

    # -- driver -------------------------------------------------------------------------------

    def run(self) -> int:
        """Run every stage; returns the exit code.

        3 (partial) when documents wait for a retry, part of discovery failed, a view's full
        text could not be fetched yet or a view has no rows while the dataset has some: what
        was found is still downloaded, processed and published. Nothing published is a
        failure unless something is still pending (or --allow-empty).
        """
        ctx, req, stats = self.ctx, self.ctx.request, self.ctx.stats
        check_executor(ctx.settings.run)  # a missing Ray extra fails before the crawl
        ctx.state.set_mark(ctx.dataset, SETTINGS_MARK,
                           json.dumps(ctx.settings.raw, sort_keys=True, default=str))
        ctx.blobs.clean_staging()
        self.discover()
        self.fetch()
        self.process()
        self.publish()
        self.after_publish()
        if not ctx.settings.store.keep_downloads:
            self._discard_downloads()
        statuses = ctx.state.status_counts(ctx.dataset)
        waiting = statuses.get(RETRY, 0)
        stats.waiting_retry = waiting
        failed = len(stats.discover.failures) + req.listing_failures
        stats.discovery_failed = failed
        partial = bool(waiting or failed or stats.after_publish["views_full_text_waiting"]
                       or stats.after_publish["views_empty"])
        if not stats.published_rows and not (partial or req.allow_empty):
            raise NothingPublished(
                f"{ctx.dataset}: no document published ({statuses.get(REJECTED, 0)} rejected, "
                f"reasons in `build-corpus status {ctx.state.layout.root}`); --allow-empty "
                "accepts an empty dataset"
            )
        return EXIT_PARTIAL if partial else EXIT_OK

    def discover(self) -> None:
        discover(self.ctx)

    def fetch(self) -> None:
        fetch(self.ctx)

    def process(self) -> None:
        process(self.ctx)

    def publish(self) -> None:
        publish(self.ctx)

    def after_publish(self) -> None:
        """The steps after the layout dataset is published: the source's own (PubMed's
        views), then the views made from the published rows (`[source] views`)."""
        ctx = self.ctx
        published = PublishedDataset(ctx.dataset, ctx.settings, ctx.state, ctx.blobs,
                                     ctx.client, ctx.stats.after_publish)
        if isinstance(ctx.source, PublishesMore):
            ctx.source.after_publish(published)
        publish_row_views(published, ctx.source)

    def _discard_downloads(self) -> None:
        """`[store] keep_downloads = false`: delete the PDFs of documents that are done with
        (their rows are in work files); `process` downloads one again if it needs it."""
        ctx = self.ctx
        done = ctx.state.rows(ctx.dataset, [PUBLISHED, FILTERED, REJECTED])
        count = sum(ctx.blobs.discard_download(sha)
                    for sha in {r.blob_sha for r in done if r.blob_sha})
        ctx.stats.downloads_discarded = count
