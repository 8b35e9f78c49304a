"""The build driver: discover -> fetch -> process -> publish, resumable at every step.

Every step reads what to do from the state database and records each result as soon as it is
durable, so a run killed at any point is resumed by running the same command again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import loralay_build
from loralay_build.blobs import BlobStore, atomic_write_bytes
from loralay_build.config import Settings
from loralay_build.corpus.card import render_card
from loralay_build.corpus.dedup import (
    Cluster,
    DedupItem,
    cluster_splits,
    find_clusters,
    split_key,
)
from loralay_build.corpus.filters import compute_thresholds
from loralay_build.corpus.folder import BUILD_FILE, published_build
from loralay_build.corpus.schema import EXAMPLE_SCHEMA
from loralay_build.corpus.split import SPLITS, SplitItem
from loralay_build.corpus.writer import WorkStore, digest, remove_stale, write_split
from loralay_build.errors import ConfigError, Deferred, LoralayError, Reason, Reject, TransientError
from loralay_build.http import BodyTooLarge, HttpClient, HttpError, HttpStatusError
from loralay_build.parse.backend import backend_module
from loralay_build.progress import batch_progress, progress
from loralay_build.run.executors import check_executor, make_executor
from loralay_build.run.process import Outcome, Task
from loralay_build.run.views import publish_views
from loralay_build.sources import get_source
from loralay_build.sources.base import DiscoveryContext, DiscoveryFailure, limited
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
    candidate_hash,
)
from loralay_build.text import leakage_summary

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_PARTIAL, EXIT_LOCKED = 0, 1, 2, 3, 75
EXIT_INTERRUPTED = 130
DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class NothingPublished(LoralayError):
    """The build ended with a dataset without rows (exit 1, so cron and CI notice)."""


class PublishFailed(LoralayError):
    """The dataset folder could not be written (exit 1, one line; the work is kept)."""


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


@dataclass
class BuildRequest:
    source: str
    dataset: str
    out_root: Path
    settings: Settings
    since: str | None = None
    limit: int | None = None
    command: str = ""
    allow_empty: bool = False  # a dataset without rows is a success, not exit 1
    listed: bool = False  # an earlier build of this command listed the crawl (DiscoveryContext)
    listing_failures: int = 0  # parts of that listing that failed: this build is partial too


@dataclass
class RunReport:
    counts: Counter[str] = field(default_factory=Counter)
    published: bool = False

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] += n


class Pipeline:
    def __init__(self, request: BuildRequest, state: State) -> None:
        self.req = request
        self.settings = request.settings
        self.state = state
        self.dataset = request.dataset
        self.source = get_source(request.source)
        self.blobs = BlobStore(state.dir / "blobs")
        self.work = WorkStore(state.dir / "work", self.settings.output)
        endpoints = [
            v for k, v in self.settings.source.items() if k.endswith("_url") and isinstance(v, str)
        ]
        self.client = HttpClient(self.settings.http, trusted_urls=endpoints)
        self.report = RunReport()
        self.discovery_failures: list[DiscoveryFailure] = []
        self.processing_hash = self.settings.processing_hash()

    # -- driver -------------------------------------------------------------------------------

    def run(self) -> int:
        """Run every stage; returns the exit code.

        3 (partial) when documents wait for a retry, part of discovery failed or a view's full
        text could not be fetched yet: what was found is still downloaded, processed and
        published. Nothing published is a failure unless something is still pending (or
        --allow-empty).
        """
        check_executor(self.settings.run)  # a missing Ray extra fails before the crawl
        self.blobs.clean_staging()
        self.discover()
        self.fetch()
        self.process()
        self.publish()
        publish_views(self)
        statuses = self.state.status_counts(self.dataset)
        waiting = statuses.get(RETRY, 0)
        self.report.add("waiting_retry", waiting)
        failed = len(self.discovery_failures) + self.req.listing_failures
        self.report.add("discovery_failed", failed)
        partial = bool(waiting or failed or self.report.counts["views_full_text_waiting"])
        if not self.report.counts["published_rows"] and not (partial or self.req.allow_empty):
            raise NothingPublished(
                f"{self.dataset}: no document published ({statuses.get(REJECTED, 0)} rejected, "
                f"reasons in `build-corpus status {self.req.out_root}`); --allow-empty "
                "accepts an empty dataset"
            )
        return EXIT_PARTIAL if partial else EXIT_OK

    # -- discovery ----------------------------------------------------------------------------

    def discover(self) -> None:
        ctx = DiscoveryContext(
            client=self.client,
            config=self.settings.source,
            state=self.state,
            dataset=self.dataset,
            since=self.req.since,
            failures=self.discovery_failures,
            listed=self.req.listed,
        )
        batches = limited(self.source.discover(ctx), self.req.limit)
        with ctx.isolated(self.req.source):
            for batch in batch_progress(batches, "discover"):
                # A crawl feeding several datasets (SciELO) yields the others' candidates too:
                # they are stored for those datasets' builds, and counted apart.
                own = [c for c in batch if c.dataset == self.dataset]
                others = [c for c in batch if c.dataset != self.dataset]
                for other in {c.dataset for c in others}:
                    self.state.claim(other, self.req.source)
                new, changed = self.state.upsert(own)
                self.report.add("discovered", len(own))
                self.report.add("new", new)
                self.report.add("changed", changed)
                if others:
                    self.state.upsert(others)
                    self.report.add("discovered_other_datasets", len(others))
        log.info("discovery: %(discovered)d seen, %(new)d new, %(changed)d changed "
                 "(%(discovered_other_datasets)d more for other datasets)",
                 {k: self.report.counts[k] for k in ("discovered", "new", "changed",
                                                      "discovered_other_datasets")})

    # -- download -----------------------------------------------------------------------------

    def fetch(self) -> None:
        rows = self.state.rows(self.dataset, [DISCOVERED, RETRY])
        for row in progress(rows, len(rows), "download"):
            self._fetch_one(row)

    def _fetch_one(self, row: Row) -> None:
        cand = row.candidate
        if not cand.abstracts.get(cand.language, "").strip():
            others = ", ".join(sorted(cand.abstracts))
            detail = (f"abstracts only in {others}, none in the declared language "
                      f"{cand.language or '(none declared)'}" if others else
                      f"no {cand.language or 'main-language'} abstract in the record")
            self.state.reject(self.dataset, cand.id, Reason.ABSTRACT_MISSING_IN_METADATA, detail)
            return
        if not cand.file_url:
            self.state.reject(self.dataset, cand.id, Reason.UNAVAILABLE,
                              "the record has no file")
            return
        try:
            sha = self.source.fetch(cand, self.client, self.blobs)
        except Reject as exc:
            self.state.reject(self.dataset, cand.id, exc.reason, exc.detail)
        except Deferred as exc:  # the server's own schedule: waits without using an attempt
            self.state.set_status(self.dataset, cand.id, RETRY, reason=None,
                                  detail=str(exc)[:500])
            self.report.add("download_deferred")
        except TransientError as exc:
            attempts = row.attempts + 1
            if attempts >= self.settings.run.max_attempts:
                self.state.reject(self.dataset, cand.id, Reason.UNAVAILABLE,
                                  f"{exc} (after {attempts} runs)", attempts=attempts)
            else:
                self.state.set_status(self.dataset, cand.id, RETRY, reason=None,
                                      detail=str(exc)[:500], attempts=attempts)
            self.report.add("download_failed")
        except BodyTooLarge as exc:
            self.state.reject(self.dataset, cand.id, Reason.TOO_LARGE, str(exc))
        except HttpStatusError as exc:
            self.state.reject(self.dataset, cand.id, Reason.UNAVAILABLE, str(exc))
        except HttpError as exc:  # refused redirect, scheme or host
            self.state.reject(self.dataset, cand.id, Reason.UNAVAILABLE, f"refused: {exc}")
        else:
            self.state.set_status(self.dataset, cand.id, FETCHED, blob_sha=sha, reason=None,
                                  detail=None)
            self.report.add("downloaded")

    # -- processing ---------------------------------------------------------------------------

    def work_key(self, row: Row) -> str:
        parts = [row.blob_sha or "", candidate_hash(row.candidate), self.processing_hash,
                 loralay_build.__version__]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def _task(self, row: Row) -> Task:
        src = self.settings.source
        assert row.blob_sha is not None
        return Task(
            candidate=row.candidate,
            pdf_path=str(self.blobs.path(row.blob_sha)),
            pdf_sha256=row.blob_sha,
            parse=self.settings.parse,
            match=self.settings.match,
            cleaners=tuple(src.get("cleaners", ())),
            abstract_format=str(src.get("abstract_format", self.source.abstract_format)),
            language_check=str(src.get("language_check", "none")),
            summary_separate=str(src.get("summary", "in_document")) == "separate",
            min_reference_ratio=float(src.get("min_reference_ratio", 0.0)),
        )

    def process(self) -> None:
        rows = self.state.rows(self.dataset, [FETCHED, PROCESSED, PUBLISHED, FILTERED, REJECTED])
        keys = {row.candidate.id: self.work_key(row) for row in rows if row.blob_sha}
        todo = [row for row in rows if row.candidate.id in keys
                and (row.work_key != keys[row.candidate.id]
                     or (row.status != REJECTED and not self.work.has(keys[row.candidate.id])))]
        if not todo:
            return
        run = self.settings.run
        executor = make_executor(run, [backend_module(self.settings.parse.backend)])
        pending: list[tuple[str, Outcome]] = []
        flushed = time.monotonic()
        try:
            outcomes = executor.run(self._task(row) for row in todo)
            for task, outcome in progress(outcomes, len(todo), "process"):
                pending.append((task.candidate.id, outcome))
                if (len(pending) >= run.commit_batch
                        or time.monotonic() - flushed >= run.commit_seconds):
                    self._record(pending, keys)
                    pending, flushed = [], time.monotonic()
        finally:
            try:
                self._record(pending, keys)
            finally:
                executor.close()

    def _record(self, outcomes: list[tuple[str, Outcome]], keys: dict[str, str]) -> None:
        """Store a batch of outcomes: work files made durable first, then one state commit."""
        if not outcomes:
            return
        self.work.put_many([(keys[cid], o.row) for cid, o in outcomes if o.row is not None])
        with self.state.transaction():
            for cid, outcome in outcomes:
                key = keys[cid]
                if outcome.row is not None:
                    self.state.set_status(self.dataset, cid, PROCESSED, work_key=key,
                                          stats=outcome.stats, reason=None, detail=None)
                    self.report.add("processed")
                else:
                    assert outcome.reason is not None
                    self.state.reject(self.dataset, cid, outcome.reason, outcome.detail,
                                      work_key=key)
                    self.report.add(f"rejected_{outcome.reason.value}")

    # -- publishing ---------------------------------------------------------------------------

    def publish(self) -> None:
        rows = self.state.rows(self.dataset, [PROCESSED, PUBLISHED, FILTERED])
        out_dir = self.req.out_root / self.dataset
        dropped: dict[str, tuple[Reason, str]] = {}
        clusters = self._clusters(rows)
        for cluster in clusters or []:  # one representative per work (corpus.dedup)
            for cid in cluster.members[1:]:
                dropped[cid] = (Reason.DUPLICATE, f"same work as {cluster.representative}")
        first_of_blob: dict[str, str] = {}
        for row in rows:  # sorted by id: the smallest id keeps a shared file
            if row.candidate.id in dropped:
                continue
            sha = row.blob_sha or ""
            if sha in first_of_blob:
                dropped[row.candidate.id] = (Reason.DUPLICATE, f"same PDF as {first_of_blob[sha]}")
            else:
                first_of_blob[sha] = row.candidate.id
        unique = [r for r in rows if r.candidate.id not in dropped]
        thresholds = compute_thresholds(
            [r.stats.get("n_pages", 0) for r in unique],
            [r.stats.get("summary_words", 0) for r in unique],
            self.settings.filters,
        )
        for row in unique:
            verdict = thresholds.verdict(row.stats.get("n_pages", 0),
                                         row.stats.get("summary_words", 0))
            if verdict:
                dropped[row.candidate.id] = verdict
        kept = [r for r in unique if r.candidate.id not in dropped]
        splits = cluster_splits(
            [
                SplitItem(r.candidate.id, split_key(r.candidate), r.split,
                          r.candidate.extra.get("split"))
                for r in kept
            ],
            clusters or [],
            self.settings.split,
        )
        threshold_values = {
            "max_pages": thresholds.max_pages,
            "min_summary_words": thresholds.min_summary_words,
            "max_pages_percentile": self.settings.filters.max_pages_percentile,
            "min_abstract_percentile": self.settings.filters.min_abstract_percentile,
            "filters_enabled": self.settings.filters.enabled,
            "min_documents": self.settings.filters.min_documents,
            "percentiles_applied": thresholds.percentiles_applied,
        }
        data_fingerprint = digest([
            sorted((r.candidate.id, r.work_key, splits[r.candidate.id]) for r in kept),
            threshold_values,
            str(EXAMPLE_SCHEMA),
            self.settings.raw.get("output", {}),
            loralay_build.__version__,
        ])
        rejects = sorted(
            [(r.candidate.id, r.reason or "", r.detail or "")
             for r in self.state.rows(self.dataset, [REJECTED])]
            + [(cid, reason.value, detail) for cid, (reason, detail) in dropped.items()]
        )
        # Reports change with every reject, shards only with the kept rows.
        fingerprint = digest([data_fingerprint, rejects])
        previous = published_build(out_dir)
        if not kept and not (out_dir / BUILD_FILE).exists():
            # An empty folder would load as garbage (build.json read as data): none is written.
            log.info("%s: no document to publish; %s not written", self.dataset, out_dir)
        elif previous.get("fingerprint") == fingerprint:
            log.info("%s is up to date", out_dir)
            remove_stale(out_dir, previous["files"])  # left by a run stopped after the switch
        else:
            reuse = previous.get("data_fingerprint") == data_fingerprint
            try:
                self._write(out_dir, kept, splits, rejects, threshold_values,
                            (fingerprint, data_fingerprint), previous["files"] if reuse else None,
                            clusters)
            except OSError as exc:
                raise PublishFailed(
                    f"{self.dataset}: cannot write {out_dir} ({exc.strerror or exc}); the "
                    "processed documents are kept: fix the folder and run the command again"
                ) from exc
            self.report.published = True
        # Statuses follow the files: "published" is recorded once the shards are in place.
        with self.state.transaction():
            for row in kept:
                self.state.set_status(self.dataset, row.candidate.id, PUBLISHED,
                                      split=splits[row.candidate.id], reason=None, detail=None)
            for cid, (reason, detail) in dropped.items():
                log.info("filtered %s: %s (%s)", cid, reason.value, detail)
                self.state.set_status(self.dataset, cid, FILTERED, reason=reason.value,
                                      detail=detail)
        self.report.add("published_rows", len(kept))

    def _clusters(self, rows: list[Row]) -> list[Cluster] | None:
        """Near-duplicate clusters among the processed documents (corpus.dedup), for sources
        whose config sets `dedup_threshold`; the others keep the shared-PDF rule alone."""
        threshold = self.settings.source.get("dedup_threshold")
        if threshold is None:
            return None
        return find_clusters([
            DedupItem(r.candidate.id, r.candidate.title,
                      r.candidate.abstracts.get(r.candidate.language, ""), r.blob_sha or "",
                      split_key(r.candidate))
            for r in rows
        ], float(threshold))

    def _write(self, out_dir: Path, kept: list[Row], splits: dict[str, str],
               rejects: list[tuple[str, str, str]], thresholds: dict[str, Any],
               fingerprints: tuple[str, str], reuse: list[dict[str, Any]] | None,
               clusters: list[Cluster] | None = None) -> None:
        """Publish beside the old set, then switch: new shards under new names, the card (what
        `datasets` reads) then build.json (what `verify` reads) replaced atomically, and only
        then the old shards removed. A crash at any point leaves a complete set in use."""
        out_dir.mkdir(parents=True, exist_ok=True)
        if reuse is not None:
            files = reuse
        else:
            generation = fingerprints[1][:8]
            written = []
            for split in SPLITS:
                keys = [r.work_key or "" for r in kept if splits[r.candidate.id] == split]
                written += write_split(out_dir, split, generation, keys, self.work,
                                       self.settings.output)
            files = [f.__dict__ for f in written]
        for split in ("validation", "test"):
            if kept and not any(f["split"] == split for f in files):
                log.warning("%s: the %s split is empty (too few documents); it is left out",
                            self.dataset, split)
        lines = "".join(
            json.dumps({"id": cid, "reason": reason, "detail": detail}, ensure_ascii=False)
            + "\n"
            for cid, reason, detail in rejects
        )
        atomic_write_bytes(out_dir / "rejects.jsonl", lines.encode())
        build = self._build_record(kept, splits, rejects, thresholds, fingerprints, files)
        if clusters is not None:
            build["duplicate_clusters"] = [
                {"representative": c.representative, "members": list(c.members),
                 "split": splits.get(c.representative)}
                for c in clusters
            ]
        atomic_write_bytes(out_dir / "README.md", render_card(self.dataset, build).encode())
        atomic_write_bytes(out_dir / BUILD_FILE,
                           (json.dumps(build, indent=2, sort_keys=True) + "\n").encode())
        remove_stale(out_dir, files)
        log.info("published %d documents to %s", len(kept), out_dir)

    def _build_record(self, kept: list[Row], splits: dict[str, str],
                      rejects: list[tuple[str, str, str]], thresholds: dict[str, Any],
                      fingerprints: tuple[str, str],
                      files: list[dict[str, Any]]) -> dict[str, Any]:
        leakage: list[float] = []
        removed: Counter[str] = Counter()
        methods: Counter[str] = Counter()
        formats: Counter[str] = Counter()  # pdf, html or pdf+html (a bundle's parts)
        for row in kept:
            leakage += row.stats.get("leakage", [])
            methods.update(row.stats.get("methods", []))
            removed.update(row.stats.get("removed", {}))
            formats[row.stats.get("formats") or "pdf"] += 1
        languages = {r.candidate.language for r in kept if r.candidate.language}
        return {
            "dataset": self.dataset,
            "source": self.req.source,
            "fingerprint": fingerprints[0],
            "data_fingerprint": fingerprints[1],
            "config_hash": self.settings.config_hash(),
            "processing_hash": self.processing_hash,
            "versions": _versions(),
            "thresholds": thresholds,
            "split_ratios": {
                "train": self.settings.split.train,
                "validation": self.settings.split.validation,
                "test": self.settings.split.test,
            },
            "languages": sorted(languages),
            "counts": {
                "splits": {s: sum(1 for v in splits.values() if v == s) for s in SPLITS},
                "rejects": dict(sorted(Counter(reason for _, reason, _ in rejects).items())),
                "match_methods": dict(sorted(methods.items())),
                "cleaner_removed_words": dict(sorted(removed.items())),
                "formats": dict(sorted(formats.items())),
            },
            "leakage": leakage_summary(leakage),
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
