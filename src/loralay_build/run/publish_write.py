"""Writing a publish: the rows through the one publisher (corpus.publish), the page images,
and the build record that build.json and the card are made of."""

from __future__ import annotations

import json
import platform
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

import loralay_build
from loralay_build.corpus.card import render_card
from loralay_build.corpus.dedup import Cluster, split_key
from loralay_build.corpus.folder import published_build
from loralay_build.corpus.pages import PAGES_DIR, write_pages
from loralay_build.corpus.publish import Item, PublishedRows, PublishError, publish, remove_stale
from loralay_build.corpus.schema import COLUMNS_KEY, project
from loralay_build.corpus.split import SPLITS
from loralay_build.licences import licence_counts, to_spdx
from loralay_build.run.context import BuildContext, log
from loralay_build.state import REMOVED, Row
from loralay_build.text import leakage_summary


@dataclass(frozen=True, slots=True)
class PublishRow:
    """What publishing needs of a processed candidate. Its other metadata (the other
    abstracts, extra fields) is dropped as each row is read and its statistics are kept as
    their JSON text, so the plan of a large corpus stays small."""

    id: str
    status: str
    blob_sha: str | None
    work_key: str | None
    split: str | None
    n_pages: int
    summary_words: int
    stats_json: str
    language: str
    split_key: str
    preset: str | None  # split imposed by the source
    licence: str  # SPDX
    doi: str

    @classmethod
    def of(cls, row: Row) -> PublishRow:
        cand = row.candidate
        preset = cand.extra.get("split")
        stats = {k: v for k, v in row.stats.items() if k != "minhash"}  # read when compared
        return cls(cand.id, row.status, row.blob_sha, row.work_key, row.split,
                   int(stats.get("n_pages", 0)), int(stats.get("summary_words", 0)),
                   json.dumps(stats), cand.language, split_key(cand),
                   None if preset is None else str(preset), to_spdx(cand.source, cand.licence),
                   cand.doi)

    @property
    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = json.loads(self.stats_json)
        return stats


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


def write(ctx: BuildContext, kept: list[PublishRow], splits: dict[str, str],
          record: PublishRecord) -> None:
    """Publish through the one publisher (corpus.publish): rows in id order per split,
    each keyed by its work file, so only shards whose documents changed are rewritten.
    Page images (`--page-images`) are written first, beside the set in use, and switched
    by the same card and build.json."""
    out_dir = ctx.out_dir
    rejects, fingerprints, clusters = record.rejects, record.fingerprints, record.clusters
    items = {split: [Item(r.id, r.work_key or "") for r in kept
                     if splits[r.id] == split] for split in SPLITS}
    previous_pages = published_build(out_dir).get("pages", {}).get("files", [])
    pages = _pages(ctx, kept, splits, fingerprints[0], previous_pages)

    def finish(files: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
        for split in ("validation", "test"):
            if kept and not any(f["split"] == split for f in files):
                log.warning("%s: the %s split is empty (too few documents); it is left out",
                            ctx.dataset, split)
        build = build_record(ctx, kept, splits, record, files)
        build["dedup"] = record.dedup
        if pages is not None:
            build["pages"] = pages
        if clusters is not None:
            build["duplicate_clusters"] = [
                {"representative": c.representative, "members": list(c.members),
                 "split": splits.get(c.representative)}
                for c in clusters
            ]
        return build, render_card(ctx.dataset, build)

    lines = "".join(
        json.dumps({"id": cid, "reason": reason, "detail": detail}, ensure_ascii=False)
        + "\n"
        for cid, reason, detail in rejects
    )
    published = PublishedRows(out_dir)
    page_files = [] if pages is None else pages["files"]
    try:
        written = publish(out_dir, fingerprints[0], items,
                          lambda group: (_row(ctx, item.key, published) for item in group),
                          ctx.schema, ctx.settings.output, finish,
                          {"rejects.jsonl": lines.encode()})
    except PublishError:  # the page shards written for the new set go with it
        in_use = {f["name"] for f in previous_pages}
        for entry in page_files:
            if entry["name"] not in in_use:
                (out_dir / entry["name"]).unlink(missing_ok=True)
        raise
    if pages is not None:
        remove_stale(out_dir / PAGES_DIR, [
            {"name": f["name"].removeprefix(f"{PAGES_DIR}/")} for f in page_files])
    if written:
        log.info("published %d documents to %s", len(kept), out_dir)


def _row(ctx: BuildContext, key: str, published: PublishedRows) -> pa.Table:
    """A document's row: its work file, else (deleted once published) its published row."""
    if ctx.work.has(key) or key not in published:
        return ctx.work.read([key])
    return project(published.read(key), ctx.schema)


def _pages(ctx: BuildContext, kept: list[PublishRow], splits: dict[str, str],
           fingerprint: str, previous: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The `pages` configuration's shards and settings (None without --page-images):
    shards whose pages are unchanged are kept, the rest written beside them."""
    images = ctx.settings.images
    if not images.enabled:
        return None
    by_split = {s: [(r.id, r.stats.get("images", [])) for r in kept
                    if splits[r.id] == s] for s in SPLITS}
    files = write_pages(ctx.out_dir, fingerprint, by_split, previous, ctx.blobs, images,
                        ctx.settings.output)
    return {
        "files": files,
        "dpi": images.dpi, "format": images.format, "color": images.color,
        "gray_levels": images.gray_levels if images.lossless_gray() else None,
        "encoder": {"colour": images.encoder(), "gray": images.encoder(gray=True)},
        "masked": images.mask, "pages_per_document": images.pages or "all",
        "documents_without_images": sorted(
            r.id for r in kept if r.stats.get("images_skipped")),
        "renderer": f"pypdfium2 {_versions()['pypdfium2']}",
    }


def build_record(ctx: BuildContext, kept: list[PublishRow], splits: dict[str, str],
                 record: PublishRecord, files: list[dict[str, Any]]) -> dict[str, Any]:
    """build.json without its dedup, pages and clusters parts (`write` adds them)."""
    settings, fingerprints = ctx.settings, record.fingerprints
    leakage: list[float] = []
    removed: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    formats: Counter[str] = Counter()  # pdf, html or pdf+html (a bundle's parts)
    for row in kept:
        stats = row.stats
        leakage += stats.get("leakage", [])
        methods.update(stats.get("methods", []))
        removed.update(stats.get("removed", {}))
        formats[stats.get("formats") or "pdf"] += 1
    languages = {r.language for r in kept if r.language}
    return {
        "dataset": ctx.dataset,
        "source": ctx.request.source,
        "fingerprint": fingerprints[0],
        COLUMNS_KEY: ctx.schema.names,
        "data_fingerprint": fingerprints[1],
        "config_hash": settings.config_hash(),
        "processing_hash": ctx.processing_hash,
        "versions": _versions(),
        "thresholds": record.thresholds,
        "split_ratios": {
            "train": settings.split.train,
            "validation": settings.split.validation,
            "test": settings.split.test,
        },
        "languages": sorted(languages),
        "counts": {
            "splits": {s: sum(1 for v in splits.values() if v == s) for s in SPLITS},
            "rejects": dict(sorted(Counter(reason for _, reason, _ in record.rejects).items())),
            "removed": ctx.state.status_counts(ctx.dataset).get(REMOVED, 0),
            "match_methods": dict(sorted(methods.items())),
            "cleaner_removed_words": dict(sorted(removed.items())),
            "formats": dict(sorted(formats.items())),
        },
        "leakage": leakage_summary(leakage),
        "licences": licence_counts(
            (r.licence, splits[r.id])
            for r in kept),
        "files": files,
    }


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"loralay_build": loralay_build.__version__, "python": platform.python_version()}
    for package in ("pyarrow", "pypdfium2", "pdfplumber", "pdfminer.six", "edlib", "pycld2"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "absent"
    return out
