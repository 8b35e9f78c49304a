"""The publishing stage, in named steps: plan (the documents and the splits they hold),
one document per work, filters, splits, shared works with the other datasets, the record
(fingerprints, rejects, dedup), the write and switch (run.publish_write), then the statuses.

Documents still waiting (download deferred or failed for now) take part in the
chronological assignment without being published, so they keep their place by date: a
partial build gives the evaluation splits to the documents a complete build would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import loralay_build
from loralay_build.corpus.contamination import Verdict, index_published, shared_works
from loralay_build.corpus.dedup import (
    Cluster,
    DedupItem,
    cluster_splits,
    find_clusters,
    keep_published,
    split_key,
)
from loralay_build.corpus.filters import Thresholds, compute_thresholds
from loralay_build.corpus.folder import BUILD_FILE
from loralay_build.corpus.publish import PublishError
from loralay_build.corpus.split import SplitItem
from loralay_build.corpus.writer import digest, digest_each
from loralay_build.errors import Reason
from loralay_build.run.context import BuildContext, log
from loralay_build.run.download import refused
from loralay_build.run.publish_write import PLANNED, PublishRecord, PublishRow, write
from loralay_build.state import DISCOVERED, FETCHED, FILTERED, PROCESSED, PUBLISHED, REJECTED, RETRY
from loralay_build.text.minhash import BANDS, NUM_PERM, ROWS, SHINGLE

PLAN_PAGE = 100  # rows read at a time for the plan: each holds its metadata until reduced


@dataclass
class Plan:
    """The documents of a publish: processed ones, waiting ones, the splits they already
    hold, and the near-duplicate clusters among them (None: the source does not cluster)."""

    rows: list[PublishRow]
    waiting: list[PublishRow]
    stored: dict[str, str]
    clusters: list[Cluster] | None
    refused: dict[str, tuple[Reason, str]]  # processed rows an exclusion list now keeps out

    @property
    def waiting_ids(self) -> set[str]:
        return {r.id for r in self.waiting}


@dataclass
class Decisions:
    """What publishing decided: the rows kept and their splits, the rows dropped (with why)
    and the processed twins held back for a work whose first appearance waits."""

    kept: list[PublishRow]
    splits: dict[str, str]
    dropped: dict[str, tuple[Reason, str]]
    held: dict[str, str]


def publish(ctx: BuildContext) -> None:
    """Publish every processed document that is kept, in its split."""
    plan = _plan(ctx)
    decided, thresholds, shared = _decide(ctx, plan)
    record = _record(ctx, plan, decided, thresholds, shared)
    _write_dataset(ctx, decided, record)
    _set_statuses(ctx, decided)
    ctx.stats.published_rows = len(decided.kept)
    if not ctx.settings.store.keep_work:  # the shards in place hold these rows now
        for row in decided.kept:
            ctx.work.discard(row.work_key or "")


def _plan(ctx: BuildContext) -> Plan:
    rows = []
    refusals = {}
    for state_row in ctx.state.iter_rows(ctx.dataset, PLANNED, page=PLAN_PAGE):
        row = PublishRow.of(state_row)
        rows.append(row)
        refusal = refused(ctx, row.id, state_row.candidate.doi, row.licence)
        if refusal:
            refusals[row.id] = refusal
    waiting = [PublishRow.of(r) for r in
               ctx.state.iter_rows(ctx.dataset, [DISCOVERED, RETRY, FETCHED], page=PLAN_PAGE)]
    stored = {r.id: r.split for r in rows + waiting if r.split}
    return Plan(rows, waiting, stored, _clusters(ctx, stored), refusals)


def _decide(ctx: BuildContext, plan: Plan) -> tuple[Decisions, Thresholds, Verdict]:
    """One document per work, the filters, the splits, then the works shared with the
    other datasets."""
    dropped, held = _one_per_work(ctx, plan)
    unique = [r for r in plan.rows if r.id not in dropped and r.id not in held]
    thresholds = _filter(ctx, plan, unique, dropped)
    kept = [r for r in unique if r.id not in dropped]
    splits = _place(ctx, plan, kept)
    new = {r.id for r in kept if r.status != PUBLISHED}  # not in the band index yet
    shared = shared_works(ctx.state, ctx.dataset, splits, new, ctx.settings.dedup)
    dropped.update(shared.dropped)
    kept = [r for r in kept if r.id not in shared.dropped]
    for cid in shared.dropped:
        splits.pop(cid, None)
    return Decisions(kept, splits, dropped, held), thresholds, shared


def _one_per_work(ctx: BuildContext,
                  plan: Plan) -> tuple[dict[str, tuple[Reason, str]], dict[str, str]]:
    """One representative per work (corpus.dedup), then one document per shared file."""
    waiting_ids = plan.waiting_ids
    dropped: dict[str, tuple[Reason, str]] = {}
    held: dict[str, str] = {}  # processed twins of a work whose first appearance waits
    for cluster in plan.clusters or []:
        for cid in cluster.members[1:]:
            if cid in waiting_ids:
                continue
            if cluster.representative in waiting_ids:
                held[cid] = f"waits for {cluster.representative}, the same work"
            else:
                dropped[cid] = (Reason.DUPLICATE, f"same work as {cluster.representative}")
    # The first copy of a shared file keeps it: one already published, else the smallest id.
    blob, first = None, ""
    for sha, cid in ctx.state.shared_blobs(ctx.dataset, PLANNED):
        if cid in dropped or cid in held:
            continue
        if sha != blob:
            blob, first = sha, cid
        else:
            dropped[cid] = (Reason.DUPLICATE, f"same PDF as {first}")
    return dropped, held


def _filter(ctx: BuildContext, plan: Plan, unique: list[PublishRow],
            dropped: dict[str, tuple[Reason, str]]) -> Thresholds:
    """The page and summary thresholds, and the lists (drops added to `dropped`)."""
    thresholds = compute_thresholds(
        [r.n_pages for r in unique],
        [r.summary_words for r in unique],
        ctx.settings.filters,
    )
    for row in unique:
        verdict = thresholds.verdict(row.n_pages, row.summary_words)
        if verdict:
            dropped[row.id] = verdict
    for row in unique:  # processed under an earlier, wider filter or a shorter list
        refusal = plan.refused.get(row.id)
        if refusal:
            dropped[row.id] = refusal
    return thresholds


def _place(ctx: BuildContext, plan: Plan, kept: list[PublishRow]) -> dict[str, str]:
    """The split of each kept document, the waiting ones keeping their place by date."""
    kept_ids = {r.id for r in kept}
    placed = cluster_splits(
        [
            SplitItem(r.id, r.split_key, r.split, r.preset)
            for r in kept + plan.waiting
        ],
        plan.clusters or [],
        ctx.settings.split,
        plan.stored,
    )
    return {cid: split for cid, split in placed.items() if cid in kept_ids}


def _record(ctx: BuildContext, plan: Plan, decided: Decisions, thresholds: Thresholds,
            shared: Verdict) -> PublishRecord:
    """What the reports say: thresholds, rejects, dedup and the fingerprints."""
    settings, kept, splits = ctx.settings, decided.kept, decided.splits
    threshold_values = {
        "max_pages": thresholds.max_pages,
        "min_summary_words": thresholds.min_summary_words,
        "max_pages_percentile": settings.filters.max_pages_percentile,
        "min_abstract_percentile": settings.filters.min_abstract_percentile,
        "filters_enabled": settings.filters.enabled,
        "licences": list(settings.filters.licences),
        "min_documents": settings.filters.min_documents,
        "percentiles_applied": thresholds.percentiles_applied,
    }
    data_fingerprint = digest([
        digest_each((r.id, r.work_key, splits[r.id]) for r in kept),  # kept is in id order
        threshold_values,
        str(ctx.schema),
        settings.raw.get("output", {}),
        loralay_build.__version__,
    ])
    rejects = sorted(
        [(r.candidate.id, r.reason or "", r.detail or "")
         for r in ctx.state.iter_rows(ctx.dataset, [REJECTED])]
        + [(cid, reason.value, detail) for cid, (reason, detail) in decided.dropped.items()]
    )
    dedup: dict[str, Any] = {
        "across": settings.dedup.across, "threshold": settings.dedup.threshold,
        "minhash": {"permutations": NUM_PERM, "shingle_words": SHINGLE, "bands": BANDS,
                    "rows": ROWS},
        "exclude": len(settings.dedup.exclude),
        "shared_works": [{"members": c.members, "similarity": c.similarity}
                         for c in shared.clusters],
    }
    # Reports change with every reject or shared work, shards only with the kept rows.
    fingerprint = digest([data_fingerprint, rejects, dedup])
    waiting_ids = plan.waiting_ids
    listed = None if plan.clusters is None else [  # clusters of downloaded documents
        c for c in plan.clusters if any(m not in waiting_ids for m in c.members)]
    return PublishRecord(rejects, threshold_values, (fingerprint, data_fingerprint), dedup,
                         listed)


def _write_dataset(ctx: BuildContext, decided: Decisions, record: PublishRecord) -> None:
    out_dir = ctx.out_dir
    if not decided.kept and not (out_dir / BUILD_FILE).exists():
        # An empty folder would load as garbage (build.json read as data): none is written.
        log.info("%s: no document to publish; %s not written", ctx.dataset, out_dir)
        return
    try:
        write(ctx, decided.kept, decided.splits, record)
    except OSError as exc:
        raise PublishError(
            f"{ctx.dataset}: cannot write {out_dir} ({exc.strerror or exc}); the "
            "processed documents are kept: fix the folder and run the command again"
        ) from exc


def _set_statuses(ctx: BuildContext, decided: Decisions) -> None:
    """Statuses follow the files: "published" is recorded once the shards are in place."""
    state, dataset = ctx.state, ctx.dataset
    with state.transaction():
        for row in decided.kept:
            state.set_status(dataset, row.id, PUBLISHED,
                             split=decided.splits[row.id], reason=None, detail=None)
        for cid, (reason, detail) in decided.dropped.items():
            log.info("filtered %s: %s (%s)", cid, reason.value, detail)
            state.set_status(dataset, cid, FILTERED, reason=reason.value,
                             detail=detail)
        for cid, detail in decided.held.items():
            state.set_status(dataset, cid, PROCESSED, reason=None, detail=detail)
        # Documents published for the first time join the band index (corpus.workindex).
        index_published(state, dataset, [r.id for r in decided.kept if r.status != PUBLISHED])


def _clusters(ctx: BuildContext, stored: dict[str, str]) -> list[Cluster] | None:
    """Near-duplicate clusters among the documents, processed or waiting (corpus.dedup),
    a published member representing its work, for sources whose config sets
    `dedup_threshold`; the others keep the shared-PDF rule alone."""
    threshold = ctx.settings.source.dedup_threshold
    if threshold is None:
        return None
    return keep_published(find_clusters([
        DedupItem(r.candidate.id, r.candidate.title,
                  r.candidate.abstracts.get(r.candidate.language, ""), r.blob_sha or "",
                  split_key(r.candidate))
        for r in ctx.state.iter_rows(ctx.dataset, [PROCESSED, PUBLISHED, FILTERED,
                                                   DISCOVERED, RETRY, FETCHED])
    ], float(threshold)), stored)
