"""The publishing stage, in named steps: plan (the documents and the splits they hold),
one document per work, filters, splits, shared works with the other datasets, the record
(fingerprints, rejects, dedup), the write and switch (run.publish_write), then the statuses.

Documents still waiting (download deferred or failed for now) take part in the
chronological assignment without being published, so they keep their place by date: a
partial build gives the evaluation splits to the documents a complete build would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

import loralay_build
from loralay_build.config import FilterSettings, SplitSettings
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
from loralay_build.corpus.split import SPLITS, Codes, SplitColumns
from loralay_build.corpus.writer import digest, digest_each
from loralay_build.errors import Reason
from loralay_build.licences import to_spdx
from loralay_build.run.context import BuildContext, log
from loralay_build.run.download import refused
from loralay_build.run.publish_rows import Names, PlanRows, SplitMap
from loralay_build.run.publish_write import PLANNED, PublishRecord, write
from loralay_build.state import (
    DISCOVERED,
    FETCHED,
    FILTERED,
    PROCESSED,
    PUBLISHED,
    REJECTED,
    RETRY,
    Row,
    State,
)
from loralay_build.text.minhash import BANDS, NUM_PERM, ROWS, SHINGLE

PLAN_PAGE = 100  # rows read at a time for the plan: each holds its metadata until reduced


@dataclass
class Plan:
    """The documents of a publish: processed ones, waiting ones, and the near-duplicate
    clusters among them (None: the source does not cluster)."""

    rows: PlanRows
    waiting: PlanRows
    clusters: list[Cluster] | None
    refused: dict[str, tuple[Reason, str]]  # processed rows an exclusion list now keeps out

    @property
    def stored(self) -> SplitMap:
        """The splits earlier builds gave."""
        return SplitMap((self.rows, self.rows.split), (self.waiting, self.waiting.split))


@dataclass
class Decisions:
    """What publishing decided: the split of each planned row (-1: not published), the rows
    dropped (with why) and the processed twins held back for a work whose first appearance
    waits."""

    rows: PlanRows
    splits: Codes
    dropped: dict[str, tuple[Reason, str]]
    held: dict[str, str]

    @property
    def kept(self) -> npt.NDArray[np.intp]:
        """Positions of the published rows, in id order."""
        return np.flatnonzero(self.splits >= 0)

    @property
    def split_map(self) -> SplitMap:
        return SplitMap((self.rows, self.splits))


def publish(ctx: BuildContext) -> None:
    """Publish every processed document that is kept, in its split."""
    plan = _plan(ctx)
    decided, thresholds, shared = _decide(ctx, plan)
    record = _record(ctx, plan, decided, thresholds, shared)
    _write_dataset(ctx, decided, record)
    _set_statuses(ctx.state, ctx.dataset, decided)
    kept = decided.kept
    ctx.stats.published_rows = len(kept)
    if not ctx.settings.store.keep_work:  # the shards in place hold these rows now
        for at in kept.tolist():
            ctx.work.discard(decided.rows.work_key(at))


def _plan(ctx: BuildContext) -> Plan:
    names = Names()
    refusals = {}

    def refuse(state_row: Row) -> None:
        refusal = refused(ctx, state_row.candidate.id, state_row.candidate.doi,
                          to_spdx(state_row.candidate.source, state_row.candidate.licence))
        if refusal:
            refusals[state_row.candidate.id] = refusal

    def read(statuses: Sequence[str], each: Callable[[Row], None] = lambda row: None,
             ) -> PlanRows:
        return PlanRows.read(ctx.state.iter_rows(ctx.dataset, statuses, page=PLAN_PAGE),
                             ctx.state.count(ctx.dataset, statuses), names, each)

    rows = read(PLANNED, refuse)
    waiting = read([DISCOVERED, RETRY, FETCHED])
    plan = Plan(rows, waiting, None, refusals)
    plan.clusters = _clusters(ctx.state, ctx.dataset, ctx.settings.source.dedup_threshold,
                              plan.stored)
    return plan


def _decide(ctx: BuildContext, plan: Plan) -> tuple[Decisions, Thresholds, Verdict]:
    """One document per work, the filters, the splits, then the works shared with the
    other datasets."""
    rows = plan.rows
    dropped, held = _one_per_work(ctx.state, ctx.dataset, plan)
    unique = ~_marked(rows, [*dropped, *held])
    thresholds = _filter(ctx.settings.filters, plan, unique, dropped)
    kept = unique & ~_marked(rows, dropped)
    splits = _place(ctx.settings.split, plan, kept)
    decided = Decisions(rows, splits, dropped, held)
    new = rows.unpublished_ids(kept)
    shared = shared_works(ctx.state, ctx.dataset, decided.split_map, new, ctx.settings.dedup)
    dropped.update(shared.dropped)
    splits[_marked(rows, shared.dropped)] = -1
    return decided, thresholds, shared


def _marked(rows: PlanRows, ids: Iterable[str]) -> npt.NDArray[np.bool_]:
    """Where the rows are among `ids` (a few, looked up one by one)."""
    mask = np.zeros(len(rows), dtype=bool)
    for cid in ids:
        at = rows.find(cid)
        if at is not None:
            mask[at] = True
    return mask


def _one_per_work(state: State, dataset: str,
                  plan: Plan) -> tuple[dict[str, tuple[Reason, str]], dict[str, str]]:
    """One representative per work (corpus.dedup), then one document per shared file."""
    def waits(cid: str) -> bool:
        return plan.waiting.find(cid) is not None

    dropped: dict[str, tuple[Reason, str]] = {}
    held: dict[str, str] = {}  # processed twins of a work whose first appearance waits
    for cluster in plan.clusters or []:
        for cid in cluster.members[1:]:
            if waits(cid):
                continue
            if waits(cluster.representative):
                held[cid] = f"waits for {cluster.representative}, the same work"
            else:
                dropped[cid] = (Reason.DUPLICATE, f"same work as {cluster.representative}")
    # The first copy of a shared file keeps it: one already published, else the smallest id.
    blob, first = None, ""
    for sha, cid in state.shared_blobs(dataset, PLANNED):
        if cid in dropped or cid in held:
            continue
        if sha != blob:
            blob, first = sha, cid
        else:
            dropped[cid] = (Reason.DUPLICATE, f"same PDF as {first}")
    return dropped, held


def _filter(filters: FilterSettings, plan: Plan, unique: npt.NDArray[np.bool_],
            dropped: dict[str, tuple[Reason, str]]) -> Thresholds:
    """The page and summary thresholds, and the lists (drops added to `dropped`)."""
    rows = plan.rows
    pages, words = rows.n_pages[unique], rows.summary_words[unique]
    thresholds = compute_thresholds(pages.tolist(), words.tolist(), filters)
    outside = np.zeros(len(rows), dtype=bool)
    if thresholds.max_pages is not None:
        outside |= rows.n_pages > thresholds.max_pages
    if thresholds.min_summary_words is not None:
        outside |= rows.summary_words < thresholds.min_summary_words
    positions = np.flatnonzero(unique & outside)
    for at, cid in zip(positions.tolist(), rows.ids_of(positions), strict=True):
        verdict = thresholds.verdict(int(rows.n_pages[at]), int(rows.summary_words[at]))
        assert verdict is not None
        dropped[cid] = verdict
    for cid, refusal in plan.refused.items():  # processed under a wider filter or a shorter list
        found = rows.find(cid)
        if found is not None and unique[found]:
            dropped[cid] = refusal
    return thresholds


def _place(split: SplitSettings, plan: Plan, kept: npt.NDArray[np.bool_]) -> Codes:
    """The split of each row (-1 where not kept), the waiting ones keeping their place by
    date."""
    positions = np.flatnonzero(kept)
    ranked = plan.rows.splitting(positions)
    waiting = plan.waiting.splitting(np.arange(len(plan.waiting)))
    placed = cluster_splits(
        SplitColumns(pa.concat_arrays([ranked.ids, waiting.ids]),
                     pa.concat_arrays([ranked.published, waiting.published]),
                     np.concatenate([ranked.current, waiting.current]),
                     np.concatenate([ranked.preset, waiting.preset])),
        plan.clusters or [], split, plan.stored)
    splits = np.full(len(plan.rows), -1, dtype=np.int8)
    splits[positions] = placed[: len(positions)]
    return splits


def _record(ctx: BuildContext, plan: Plan, decided: Decisions, thresholds: Thresholds,
            shared: Verdict) -> PublishRecord:
    """What the reports say: thresholds, rejects, dedup and the fingerprints."""
    settings, rows = ctx.settings, decided.rows
    kept = decided.kept
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
        digest_each((cid, rows.work_key(at) or None, SPLITS[decided.splits[at]])
                    for at, cid in zip(kept.tolist(), rows.ids_of(kept), strict=True)),
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
    listed = None if plan.clusters is None else [  # clusters of downloaded documents
        c for c in plan.clusters if any(plan.waiting.find(m) is None for m in c.members)]
    return PublishRecord(rejects, threshold_values, (fingerprint, data_fingerprint), dedup,
                         listed)


def _write_dataset(ctx: BuildContext, decided: Decisions, record: PublishRecord) -> None:
    out_dir = ctx.out_dir
    if not len(decided.kept) and not (out_dir / BUILD_FILE).exists():
        # An empty folder would load as garbage (build.json read as data): none is written.
        log.info("%s: no document to publish; %s not written", ctx.dataset, out_dir)
        return
    try:
        write(ctx, decided.rows, decided.splits, record)
    except OSError as exc:
        raise PublishError(
            f"{ctx.dataset}: cannot write {out_dir} ({exc.strerror or exc}); the "
            "processed documents are kept: fix the folder and run the command again"
        ) from exc


def _set_statuses(state: State, dataset: str, decided: Decisions) -> None:
    """Statuses follow the files: "published" is recorded once the shards are in place."""
    rows, kept = decided.rows, decided.kept
    with state.transaction():
        for at, cid in zip(kept.tolist(), rows.ids_of(kept), strict=True):
            state.set_status(dataset, cid, PUBLISHED,
                             split=SPLITS[decided.splits[at]], reason=None, detail=None)
        for cid, (reason, detail) in decided.dropped.items():
            log.info("filtered %s: %s (%s)", cid, reason.value, detail)
            state.set_status(dataset, cid, FILTERED, reason=reason.value,
                             detail=detail)
        for cid, detail in decided.held.items():
            state.set_status(dataset, cid, PROCESSED, reason=None, detail=detail)
        # Documents published for the first time join the band index (corpus.workindex).
        index_published(state, dataset, rows.unpublished_ids(decided.splits >= 0))


def _clusters(state: State, dataset: str, threshold: float | None,
              stored: Mapping[str, str]) -> list[Cluster] | None:
    """Near-duplicate clusters among the documents, processed or waiting (corpus.dedup),
    a published member representing its work, for sources whose config sets
    `dedup_threshold`; the others keep the shared-PDF rule alone."""
    if threshold is None:
        return None
    return keep_published(find_clusters([
        DedupItem(r.candidate.id, r.candidate.title,
                  r.candidate.abstracts.get(r.candidate.language, ""), r.blob_sha or "",
                  split_key(r.candidate))
        for r in state.iter_rows(dataset, [PROCESSED, PUBLISHED, FILTERED,
                                           DISCOVERED, RETRY, FETCHED])
    ], float(threshold)), stored)
