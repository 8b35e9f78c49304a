"""Writing a publish: the rows through the one publisher (corpus.publish), the page images,
and the build record that build.json and the card are made of."""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from loralay_build.corpus.card import render_card
from loralay_build.corpus.dedup import Cluster
from loralay_build.corpus.encoder import GroupEncoder
from loralay_build.corpus.folder import (
    damaged_files,
    package_versions,
    published_build,
    read_build,
)
from loralay_build.corpus.pages import PAGES_DIR, write_pages
from loralay_build.corpus.publish import (
    Item,
    PublishedRows,
    PublishError,
    Selection,
    Shards,
    remove_stale,
    switch,
    write_shards,
)
from loralay_build.corpus.schema import COLUMNS_KEY, project
from loralay_build.corpus.split import SPLITS, Codes
from loralay_build.corpus.writer import WorkStore
from loralay_build.licences import licence_counts
from loralay_build.run.context import BuildContext, log
from loralay_build.run.encode_pool import PoolEncoder
from loralay_build.run.publish_rows import UNDATED, PlanRows, SplitMap
from loralay_build.run.shard_stamps import record_stamps
from loralay_build.state import FILTERED, PROCESSED, PUBLISHED, REMOVED, State
from loralay_build.text import leakage_summary

# The publisher reads a group's rows in about half the CPU its encoding takes, so three
# encoding processes keep up with it; more would only hold more groups in memory.
ENCODERS = 3

PLANNED = (PROCESSED, PUBLISHED, FILTERED)  # the statuses of the documents a publish places


@dataclass
class KeptStatistics:
    """What the build record and the pages configuration sum over the published rows."""

    leakage: array[float] = field(default_factory=lambda: array("d"))  # 8 bytes a value
    removed: Counter[str] = field(default_factory=Counter)
    methods: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)  # pdf, html or pdf+html
    images: dict[str, list[tuple[str, list[dict[str, Any]]]]] = field(
        default_factory=lambda: {split: [] for split in SPLITS})  # with --page-images
    without_images: list[str] = field(default_factory=list)


def kept_statistics(state: State, dataset: str, images: bool, rows: PlanRows,
                    splits: Codes) -> KeptStatistics:
    """The statistics of the rows `splits` publishes (-1: not published), read from the
    state in one pass beside the rows (both in id order); `images`: with the page images
    of each row (`--page-images`)."""
    out = KeptStatistics()
    kept = np.flatnonzero(splits >= 0)
    published = zip(rows.ids_of(kept), splits[kept].tolist(), strict=True)
    cid_kept, code = next(published, ("", -1))
    for cid, stats in state.iter_stats(dataset, PLANNED):
        while cid_kept and cid_kept < cid:
            cid_kept, code = next(published, ("", -1))
        if cid != cid_kept:
            continue
        split = SPLITS[code]
        out.leakage.extend(stats.get("leakage", []))
        out.methods.update(stats.get("methods", []))
        out.removed.update(stats.get("removed", {}))
        out.formats[stats.get("formats") or "pdf"] += 1
        if images:
            out.images[split].append((cid, stats.get("images", [])))
            if stats.get("images_skipped"):
                out.without_images.append(cid)
    return out


@dataclass(frozen=True)
class PublishRecord:
    """What the reports of a publish say beside the rows: the rejects (rejects.jsonl), the
    thresholds, (fingerprint, data fingerprint), dedup and the listed duplicate clusters
    (None: the source does not cluster)."""

    rejects: list[tuple[str, str, str]]
    thresholds: dict[str, Any]
    fingerprints: tuple[str, str]
    dedup: dict[str, Any]
    clusters: list[Cluster] | None


@dataclass(frozen=True)
class WorkRows:
    """The publisher's rows of a build: each document's work file, else (deleted once
    published, `[store] keep_work = false`) its row in the shard set in place."""

    work: WorkStore
    published: PublishedRows
    schema: pa.Schema

    def tables(self, items: Sequence[Item]) -> Iterator[pa.Table]:
        for item in items:
            if self.work.has(item.key) or item.key not in self.published:
                yield self.work.read([item.key])
            else:
                yield project(self.published.read(item.key), self.schema)


def recent_marks(day: npt.NDArray[np.int32], items: Mapping[str, Selection],
            days: int) -> dict[str, npt.NDArray[np.bool_]] | None:
    """Per split, which items are dated within `days` of the newest published one (the
    publisher packs them apart); None when `days` is 0 or no item is dated."""
    dated = {split: day[group.positions] for split, group in items.items()}
    newest = max((int(d.max()) for d in dated.values() if len(d)), default=int(UNDATED))
    if not days or newest == UNDATED:
        return None
    return {split: d >= newest - days for split, d in dated.items()}


def group_encoder(ctx: BuildContext) -> GroupEncoder:
    """Who encodes the row groups: local processes, as many as the build's workers up to
    ENCODERS, once a publication is large (run.encode_pool), else this process (a Ray
    cluster's driver too)."""
    run = ctx.settings.run
    if run.executor == "local" and run.workers > 1:
        return PoolEncoder(min(run.workers, ENCODERS), run.memory_limit_mb,
                           run.encode_after_groups, ctx.blobs.tmp)
    return GroupEncoder()


def write(ctx: BuildContext, rows: PlanRows, splits: Codes, record: PublishRecord) -> None:
    """Publish through the one publisher (corpus.publish): rows in id order per split,
    each keyed by its work file, so only shards whose documents changed are rewritten.
    Page images (`--page-images`) are written first, beside the set in use, and switched
    by the same card and build.json."""
    out_dir = ctx.out_dir
    items = {split: Selection(rows.item, np.flatnonzero(splits == code))
             for code, split in enumerate(SPLITS)}
    kept = sum(len(group) for group in items.values())
    recent = recent_marks(rows.day, items, ctx.settings.output.recent_days)
    previous_pages = published_build(out_dir).get("pages", {}).get("files", [])
    statistics = cache(lambda: kept_statistics(  # read once, when needed
        ctx.state, ctx.dataset, ctx.settings.images.enabled, rows, splits))
    pages = _pages(ctx, statistics, record.fingerprints[0], previous_pages)
    lines = "".join(
        json.dumps({"id": cid, "reason": reason, "detail": detail}, ensure_ascii=False)
        + "\n"
        for cid, reason, detail in record.rejects
    )
    reader = WorkRows(ctx.work, ctx.published_rows(), ctx.schema)
    page_files = [] if pages is None else pages["files"]
    ctx.stats.shards_repaired += len(damaged_files(out_dir, read_build(out_dir)))
    encoder = group_encoder(ctx)
    try:
        shards = write_shards(out_dir, record.fingerprints[0], items, reader, ctx.schema,
                              ctx.settings.output, recent=recent, encoder=encoder)
        if shards is not None:
            build = _build(ctx, rows, splits, record, shards, statistics(), pages)
            switch(shards, build, render_card(ctx.dataset, build),
                   {"rejects.jsonl": lines.encode()})
    except PublishError:  # the page shards written for the new set go with it
        in_use = {f["name"] for f in previous_pages}
        for entry in page_files:
            if entry["name"] not in in_use:
                (out_dir / entry["name"]).unlink(missing_ok=True)
        raise
    finally:
        encoder.close()
    if pages is not None:  # an unchanged set keeps the page shards its card names
        listed = page_files if shards is not None else previous_pages
        remove_stale(out_dir / PAGES_DIR, [
            {"name": f["name"].removeprefix(f"{PAGES_DIR}/")} for f in listed])
    if shards is not None:
        log.info("published %d documents to %s", kept, out_dir)
    record_stamps(ctx)


def _build(ctx: BuildContext, rows: PlanRows, splits: Codes, record: PublishRecord,
           shards: Shards, statistics: KeptStatistics,
           pages: dict[str, Any] | None) -> dict[str, Any]:
    """build.json of a new shard set (a split left empty is warned about)."""
    kept = bool((splits >= 0).any())
    for split in ("validation", "test"):
        if kept and not any(f["split"] == split for f in shards.files):
            log.warning("%s: the %s split is empty (too few documents); it is left out",
                        ctx.dataset, split)
    build = build_record(ctx, rows, splits, record, shards.files, statistics)
    build["dedup"] = record.dedup
    if pages is not None:
        build["pages"] = pages
    if record.clusters is not None:
        build["duplicate_clusters"] = [
            {"representative": c.representative, "members": list(c.members),
             "split": SplitMap((rows, splits)).get(c.representative)}
            for c in record.clusters
        ]
    return build


def _pages(ctx: BuildContext, statistics: Callable[[], KeptStatistics], fingerprint: str,
           previous: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The `pages` configuration's shards and settings (None without --page-images):
    shards whose pages are unchanged are kept, the rest written beside them."""
    images = ctx.settings.images
    if not images.enabled:
        return None
    kept = statistics()
    files = write_pages(ctx.out_dir, fingerprint, kept.images, previous, ctx.blobs, images,
                        ctx.settings.output)
    return {
        "files": files,
        "dpi": images.dpi, "format": images.format, "color": images.color,
        "gray_levels": images.gray_levels if images.lossless_gray() else None,
        "encoder": {"colour": images.encoder(), "gray": images.encoder(gray=True)},
        "masked": images.mask, "pages_per_document": images.pages or "all",
        "documents_without_images": kept.without_images,
        "renderer": f"pypdfium2 {package_versions()['pypdfium2']}",
    }


def build_record(ctx: BuildContext, rows: PlanRows, splits: Codes,
                 record: PublishRecord, files: list[dict[str, Any]],
                 statistics: KeptStatistics) -> dict[str, Any]:
    """build.json without its dedup, pages and clusters parts (`_build` adds them)."""
    settings, fingerprints = ctx.settings, record.fingerprints
    methods, removed, formats = statistics.methods, statistics.removed, statistics.formats
    kept = splits >= 0
    split_counts = np.bincount(splits[kept], minlength=len(SPLITS)).tolist()
    # A set, not np.unique: numpy 2 imports numpy.ma at its first np.unique (40 ms of CPU).
    languages = {rows.names.values[code] for code in set(rows.language[kept].tolist())}
    languages.discard("")
    return {
        "dataset": ctx.dataset,
        "source": ctx.request.source,
        "fingerprint": fingerprints[0],
        COLUMNS_KEY: ctx.schema.names,
        "data_fingerprint": fingerprints[1],
        "config_hash": settings.config_hash(),
        "processing_hash": ctx.processing_hash,
        "versions": package_versions(),
        "thresholds": record.thresholds,
        "split_ratios": {
            "train": settings.split.train,
            "validation": settings.split.validation,
            "test": settings.split.test,
        },
        "languages": sorted(languages),
        "counts": {
            "splits": dict(zip(SPLITS, split_counts, strict=True)),
            "rejects": dict(sorted(Counter(reason for _, reason, _ in record.rejects).items())),
            "removed": ctx.state.status_counts(ctx.dataset).get(REMOVED, 0),
            "match_methods": dict(sorted(methods.items())),
            "cleaner_removed_words": dict(sorted(removed.items())),
            "formats": dict(sorted(formats.items())),
        },
        "leakage": leakage_summary(statistics.leakage),
        "licences": licence_counts(
            (rows.names.values[licence], SPLITS[split])
            for licence, split in zip(rows.licence[kept].tolist(), splits[kept].tolist(),
                                      strict=True)),
        "files": files,
    }
