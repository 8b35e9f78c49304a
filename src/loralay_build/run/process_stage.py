"""The processing stage: each downloaded document without its current work file sent to the
executor (run.process does the work), its outcome recorded as a work file and a status."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import loralay_build
from loralay_build.corpus.publish import PublishedRows
from loralay_build.errors import Reason
from loralay_build.licences import to_spdx
from loralay_build.parse.backend import backend_module
from loralay_build.parse.clean import CLEANERS
from loralay_build.progress import progress
from loralay_build.run.context import BuildContext, log
from loralay_build.run.download import fetch
from loralay_build.run.executors import make_executor
from loralay_build.run.shard_stamps import remove_written_over
from loralay_build.run.task import ROW_FORMAT, Outcome, Task
from loralay_build.state import (
    DISCOVERED,
    FETCHED,
    FILTERED,
    PROCESSED,
    PUBLISHED,
    REJECTED,
    Row,
)


def work_key_of(blob_sha: str, content_hash: str, processing_hash: str) -> str:
    """The name of a document's work file: what it was made from and how."""
    parts = [blob_sha, content_hash, processing_hash, loralay_build.__version__, ROW_FORMAT]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def read_by_ocr(key: str) -> str:
    """The work key of a row some of whose pages OCR read: the same document read without
    OCR has other content (pages without text), so its published row must be replaced."""
    return hashlib.sha256(f"{key}\x1focr".encode()).hexdigest()


def _task(ctx: BuildContext, row: Row) -> Task:
    settings = ctx.settings
    assert row.blob_sha is not None
    return Task(
        candidate=row.candidate,
        pdf_path=str(ctx.blobs.path(row.blob_sha)),
        pdf_sha256=row.blob_sha,
        parse=settings.parse,
        match=settings.match,
        options=ctx.options,
        images=settings.images if settings.images.enabled else None,
        ocr=settings.ocr,
        licence=to_spdx(row.candidate.source, row.candidate.licence),
        cleaners={name: CLEANERS[name] for name in ctx.options.cleaners},
    )


def _todo(ctx: BuildContext, published: PublishedRows) -> Iterator[tuple[str, str, str]]:
    """(id, work key, blob) of each downloaded document without its current work (a row
    in a published shard counts as one), streamed from the state database."""
    statuses = [FETCHED, PROCESSED, PUBLISHED, FILTERED, REJECTED]
    for ref in ctx.state.iter_work(ctx.dataset, statuses):
        if not ref.blob_sha:
            continue
        key = work_key_of(ref.blob_sha, ref.content_hash, ctx.processing_hash)
        stored = ref.work_key or ""
        current = stored == key or stored == read_by_ocr(key)
        if not current or (ref.status != REJECTED and stored not in published
                           and not ctx.work.has(stored)):
            yield ref.id, key, ref.blob_sha


def _tasks(ctx: BuildContext, keys: dict[str, str], published: PublishedRows) -> Iterator[Task]:
    """The tasks of `_todo`, each candidate read when its task is sent; `keys` holds the
    work keys of the documents in flight until `_record` takes them."""
    for cid, key, _ in _todo(ctx, published):
        row = ctx.state.row(ctx.dataset, cid)
        if row is not None:
            keys[cid] = key
            yield _task(ctx, row)


def _fetch_again(ctx: BuildContext, published: PublishedRows) -> bool:
    """Send documents whose stored file is gone or no longer matches (a `local` PDF
    changed or removed since it was read, or a download not kept) back to download."""
    stale = [cid for cid, _, sha in _todo(ctx, published)
             if bytes.fromhex(sha) not in ctx.fetched and not ctx.blobs.intact(sha)]
    for cid in stale:
        log.warning("%s: its stored PDF is gone or changed since it was read; fetching it "
                    "again", cid)
        ctx.state.set_status(ctx.dataset, cid, DISCOVERED, blob_sha=None)
    stats = ctx.stats.process
    stats.file_changed = (stats.file_changed or 0) + len(stale)
    if stale:
        fetch(ctx)
    return bool(stale)


def process(ctx: BuildContext) -> None:
    remove_written_over(ctx)  # before the published rows are read
    if ctx.settings.ocr.enabled:  # what an earlier run without --ocr could not read
        again = ctx.state.requeue(ctx.dataset, [Reason.NEEDS_OCR.value])
        again += ctx.state.reread_without_text(ctx.dataset)
        if again:
            log.info("%s: %d document(s) waiting for OCR queued again", ctx.dataset, again)
    published = ctx.published_rows()
    _fetch_again(ctx, published)
    total = sum(1 for _ in _todo(ctx, published))
    if not total:
        return
    run = ctx.settings.run
    executor = make_executor(run, [backend_module(ctx.settings.parse.backend)])
    pending: list[tuple[str, Outcome]] = []
    keys: dict[str, str] = {}
    flushed = time.monotonic()
    try:
        outcomes = executor.run(_tasks(ctx, keys, published))
        for task, outcome in progress(outcomes, total, "process"):
            pending.append((task.candidate.id, outcome))
            if (len(pending) >= run.commit_batch
                    or time.monotonic() - flushed >= run.commit_seconds):
                _record(ctx, pending, keys)
                pending, flushed = [], time.monotonic()
    finally:
        try:
            _record(ctx, pending, keys)
        finally:
            executor.close()


def _record(ctx: BuildContext, outcomes: list[tuple[str, Outcome]],
            keys: dict[str, str]) -> None:
    """Store a batch of outcomes: work files made durable first, then one state commit."""
    if not outcomes:
        return
    state, dataset, stats = ctx.state, ctx.dataset, ctx.stats.process
    for cid, outcome in outcomes:
        if outcome.row is not None and outcome.stats.get("ocr_pages"):
            keys[cid] = read_by_ocr(keys[cid])
    ctx.work.put_many([(keys[cid], o.row) for cid, o in outcomes if o.row is not None])
    # page images: blobs (one sync for the batch), listed in their document's stats
    shas = iter(ctx.blobs.add_many([p.data for _, o in outcomes for p in o.pages]))
    with state.transaction():
        for cid, outcome in outcomes:
            key = keys.pop(cid)
            if outcome.pages:
                outcome.stats["images"] = [
                    {"page": p.page, "sha256": next(shas), "width_px": p.width_px,
                     "height_px": p.height_px, "masked_boxes": p.masked_boxes}
                    for p in outcome.pages]
            if outcome.row is not None:
                state.set_status(dataset, cid, PROCESSED, work_key=key,
                                 stats=outcome.stats, reason=None, detail=None)
                stats.processed += 1
            else:
                assert outcome.reason is not None
                kept = {"stats": outcome.stats} if outcome.stats else {}
                state.reject(dataset, cid, outcome.reason, outcome.detail, work_key=key,
                             **kept)
                stats.rejected[outcome.reason.value] += 1
