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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

import loralay_build
from loralay_build.blobs import BlobStore
from loralay_build.config import Settings
from loralay_build.corpus.card import render_card
from loralay_build.corpus.contamination import (
    excluded_ids,
    id_keys,
    index_published,
    shared_works,
)
from loralay_build.corpus.dedup import (
    Cluster,
    DedupItem,
    cluster_splits,
    find_clusters,
    keep_published,
    split_key,
)
from loralay_build.corpus.filters import compute_thresholds
from loralay_build.corpus.folder import BUILD_FILE, published_build
from loralay_build.corpus.pages import PAGES_DIR, write_pages
from loralay_build.corpus.publish import Item, PublishedRows, PublishError, publish, remove_stale
from loralay_build.corpus.schema import COLUMNS_KEY, dataset_schema, project
from loralay_build.corpus.split import SPLITS, SplitItem
from loralay_build.corpus.writer import WorkStore, digest
from loralay_build.errors import ConfigError, Deferred, LoralayError, Reason, Reject, TransientError
from loralay_build.http import BodyTooLarge, HttpClient, HttpError, HttpStatusError
from loralay_build.licences import allowed, licence_counts, to_spdx
from loralay_build.parse.backend import backend_module
from loralay_build.progress import batch_progress, progress
from loralay_build.run.executors import check_executor, make_executor
from loralay_build.run.process import ROW_FORMAT, Outcome, Task
from loralay_build.sources import get_source
from loralay_build.sources.base import (
    DiscoveryContext,
    DiscoveryFailure,
    PublishedDataset,
    PublishesMore,
    limited,
)
from loralay_build.state import (
    DISCOVERED,
    FETCHED,
    FILTERED,
    PROCESSED,
    PUBLISHED,
    REJECTED,
    REMOVED,
    RETRY,
    SETTINGS_MARK,
    Row,
    State,
    candidate_hash,
)
from loralay_build.text import leakage_summary
from loralay_build.text.minhash import BANDS, NUM_PERM, ROWS, SHINGLE

log = logging.getLogger(__name__)

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


def work_key_of(blob_sha: str, content_hash: str, processing_hash: str) -> str:
    """The name of a document's work file: what it was made from and how."""
    parts = [blob_sha, content_hash, processing_hash, loralay_build.__version__, ROW_FORMAT]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


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


class Pipeline:
    def __init__(self, request: BuildRequest, state: State) -> None:
        self.req = request
        self.settings = request.settings
        self.state = state
        self.dataset = request.dataset
        self.source = get_source(request.source)
        self.blobs = BlobStore(state.dir / "blobs")
        self.schema = dataset_schema(self.source.columns)
        self.work = WorkStore(state.dir / "work", self.settings.output, self.schema)
        self.client = HttpClient(self.settings.http, trusted_urls=self.settings.source.endpoints())
        self.report = RunReport()
        self.discovery_failures: list[DiscoveryFailure] = []
        self.processing_hash = self.settings.processing_hash()
        self.options = self.settings.source.document_options()
        self.excluded = excluded_ids(self.settings.dedup.exclude)
        self.fetched: set[str] = set()  # blobs stored by this run: known to be intact

    # -- driver -------------------------------------------------------------------------------

    def run(self) -> int:
        """Run every stage; returns the exit code.

        3 (partial) when documents wait for a retry, part of discovery failed, a view's full
        text could not be fetched yet or a view has no rows while the dataset has some: what
        was found is still downloaded, processed and published. Nothing published is a
        failure unless something is still pending (or --allow-empty).
        """
        check_executor(self.settings.run)  # a missing Ray extra fails before the crawl
        self.state.set_mark(self.dataset, SETTINGS_MARK,
                            json.dumps(self.settings.raw, sort_keys=True, default=str))
        self.blobs.clean_staging()
        self.discover()
        self.fetch()
        self.process()
        self.publish()
        self.after_publish()
        if not self.settings.store.keep_downloads:
            self._discard_downloads()
        statuses = self.state.status_counts(self.dataset)
        waiting = statuses.get(RETRY, 0)
        self.report.add("waiting_retry", waiting)
        failed = len(self.discovery_failures) + self.req.listing_failures
        self.report.add("discovery_failed", failed)
        partial = bool(waiting or failed or self.report.counts["views_full_text_waiting"]
                       or self.report.counts["views_empty"])
        if not self.report.counts["published_rows"] and not (partial or self.req.allow_empty):
            raise NothingPublished(
                f"{self.dataset}: no document published ({statuses.get(REJECTED, 0)} rejected, "
                f"reasons in `build-corpus status {self.req.out_root}`); --allow-empty "
                "accepts an empty dataset"
            )
        return EXIT_PARTIAL if partial else EXIT_OK

    def after_publish(self) -> None:
        """The source's own step after the layout dataset is published (PubMed's views)."""
        if isinstance(self.source, PublishesMore):
            self.source.after_publish(PublishedDataset(
                self.req.source, self.dataset, self.req.out_root, self.settings, self.state,
                self.blobs, self.client, self.report.counts))

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
        listed: set[str] = set()
        with ctx.isolated(self.req.source):
            for batch in batch_progress(batches, "discover"):
                # A crawl feeding several datasets (SciELO) yields the others' candidates too:
                # they are stored for those datasets' builds, and counted apart.
                own = [c for c in batch if c.dataset == self.dataset]
                listed.update(c.id for c in own)
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
        # A source that lists its whole input every run (a `local` manifest): what it no
        # longer lists leaves the dataset at this publish, and comes back if listed again.
        whole = getattr(self.source, "lists_whole_input", False)
        if whole and self.req.limit is None and not self.discovery_failures:
            self.report.add("gone", self.state.mark_gone(self.dataset, listed))
        log.info("discovery: %(discovered)d seen, %(new)d new, %(changed)d changed "
                 "(%(discovered_other_datasets)d more for other datasets)",
                 {k: self.report.counts[k] for k in ("discovered", "new", "changed",
                                                      "discovered_other_datasets")})

    # -- download -----------------------------------------------------------------------------

    def fetch(self) -> None:
        # Licence and exclusion rejects are judged again against today's lists: a widened
        # filter admits them without a flag, a narrower one rejects them without a request.
        self.state.requeue(self.dataset, [Reason.LICENCE.value, Reason.EXCLUDED.value])
        statuses = [DISCOVERED, RETRY]
        total = self.state.count(self.dataset, statuses)
        for row in progress(self.state.iter_rows(self.dataset, statuses), total, "download"):
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
        refused = self._refused(cand.id, cand.doi, to_spdx(cand.source, cand.licence))
        if refused:
            self.state.reject(self.dataset, cand.id, *refused)
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
            self.fetched.add(sha)
            self.report.add("downloaded")

    def _refused(self, cid: str, doi: str, spdx: str) -> tuple[Reason, str] | None:
        """Why an exclusion list or the licence filter keeps a candidate out (None: it
        passes). Checked before download, and again at publishing."""
        listed = id_keys(cid, doi) & self.excluded
        if listed:
            return Reason.EXCLUDED, f"listed as {min(listed)}"
        patterns = self.settings.filters.licences
        if not allowed(spdx, patterns):
            return Reason.LICENCE, f"{spdx} not in {', '.join(patterns)}"
        return None

    # -- processing ---------------------------------------------------------------------------

    def work_key(self, row: Row) -> str:
        return work_key_of(row.blob_sha or "", candidate_hash(row.candidate),
                           self.processing_hash)

    def _task(self, row: Row) -> Task:
        assert row.blob_sha is not None
        return Task(
            candidate=row.candidate,
            pdf_path=str(self.blobs.path(row.blob_sha)),
            pdf_sha256=row.blob_sha,
            parse=self.settings.parse,
            match=self.settings.match,
            options=self.options,
            images=self.settings.images if self.settings.images.enabled else None,
        )

    def _todo(self, published: PublishedRows) -> Iterator[tuple[str, str, str]]:
        """(id, work key, blob) of each downloaded document without its current work (a row
        in a published shard counts as one), streamed from the state database."""
        statuses = [FETCHED, PROCESSED, PUBLISHED, FILTERED, REJECTED]
        for ref in self.state.iter_work(self.dataset, statuses):
            if not ref.blob_sha:
                continue
            key = work_key_of(ref.blob_sha, ref.content_hash, self.processing_hash)
            if ref.work_key != key or (ref.status != REJECTED and not self.work.has(key)
                                       and key not in published):
                yield ref.id, key, ref.blob_sha

    def _tasks(self, keys: dict[str, str], published: PublishedRows) -> Iterator[Task]:
        """The tasks of `_todo`, each candidate read when its task is sent; `keys` holds the
        work keys of the documents in flight until `_record` takes them."""
        for cid, key, _ in self._todo(published):
            row = self.state.row(self.dataset, cid)
            if row is not None:
                keys[cid] = key
                yield self._task(row)

    def _fetch_again(self, published: PublishedRows) -> bool:
        """Send documents whose stored file is gone or no longer matches (a `local` PDF
        changed or removed since it was read, or a download not kept) back to download."""
        stale = [cid for cid, _, sha in self._todo(published)
                 if sha not in self.fetched and not self.blobs.intact(sha)]
        for cid in stale:
            log.warning("%s: its stored PDF is gone or changed since it was read; fetching it "
                        "again", cid)
            self.state.set_status(self.dataset, cid, DISCOVERED, blob_sha=None)
        self.report.add("file_changed", len(stale))
        if stale:
            self.fetch()
        return bool(stale)

    def process(self) -> None:
        published = PublishedRows(self.req.out_root / self.dataset)
        self._fetch_again(published)
        total = sum(1 for _ in self._todo(published))
        if not total:
            return
        run = self.settings.run
        executor = make_executor(run, [backend_module(self.settings.parse.backend)])
        pending: list[tuple[str, Outcome]] = []
        keys: dict[str, str] = {}
        flushed = time.monotonic()
        try:
            outcomes = executor.run(self._tasks(keys, published))
            for task, outcome in progress(outcomes, total, "process"):
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
                key = keys.pop(cid)
                if outcome.pages:  # page images: blobs, listed in the document's stats
                    outcome.stats["images"] = [
                        {"page": p.page, "sha256": self.blobs.add_bytes(p.data),
                         "width_px": p.width_px, "height_px": p.height_px,
                         "masked_boxes": p.masked_boxes} for p in outcome.pages]
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
        """Publish every processed document that is kept, in its split.

        Documents still waiting (download deferred or failed for now) take part in the
        chronological assignment without being published, so they keep their place by date:
        a partial build gives the evaluation splits to the documents a complete build would.
        """
        rows = [PublishRow.of(r) for r in
                self.state.iter_rows(self.dataset, [PROCESSED, PUBLISHED, FILTERED])]
        waiting = [PublishRow.of(r) for r in
                   self.state.iter_rows(self.dataset, [DISCOVERED, RETRY, FETCHED])]
        waiting_ids = {r.id for r in waiting}
        stored = {r.id: r.split for r in rows + waiting if r.split}
        out_dir = self.req.out_root / self.dataset
        dropped: dict[str, tuple[Reason, str]] = {}
        held: dict[str, str] = {}  # processed twins of a work whose first appearance waits
        clusters = self._clusters(stored)
        for cluster in clusters or []:  # one representative per work (corpus.dedup)
            for cid in cluster.members[1:]:
                if cid in waiting_ids:
                    continue
                if cluster.representative in waiting_ids:
                    held[cid] = f"waits for {cluster.representative}, the same work"
                else:
                    dropped[cid] = (Reason.DUPLICATE, f"same work as {cluster.representative}")
        first_of_blob: dict[str, str] = {}
        # The smallest id keeps a shared file, unless another copy is published already.
        for row in sorted(rows, key=lambda r: (r.id not in stored, r.id)):
            if row.id in dropped or row.id in held:
                continue
            sha = row.blob_sha or ""
            if sha in first_of_blob:
                dropped[row.id] = (Reason.DUPLICATE, f"same PDF as {first_of_blob[sha]}")
            else:
                first_of_blob[sha] = row.id
        unique = [r for r in rows if r.id not in dropped and r.id not in held]
        thresholds = compute_thresholds(
            [r.n_pages for r in unique],
            [r.summary_words for r in unique],
            self.settings.filters,
        )
        for row in unique:
            verdict = thresholds.verdict(row.n_pages, row.summary_words)
            if verdict:
                dropped[row.id] = verdict
        for row in unique:  # processed under an earlier, wider filter or a shorter list
            refused = self._refused(row.id, row.doi, row.licence)
            if refused:
                dropped[row.id] = refused
        kept = [r for r in unique if r.id not in dropped]
        kept_ids = {r.id for r in kept}
        placed = cluster_splits(
            [
                SplitItem(r.id, r.split_key, r.split, r.preset)
                for r in kept + waiting
            ],
            clusters or [],
            self.settings.split,
            stored,
        )
        splits = {cid: split for cid, split in placed.items() if cid in kept_ids}
        new = {r.id for r in kept if r.status != PUBLISHED}  # not in the band index yet
        shared = shared_works(self.state, self.dataset, splits, new, self.settings.dedup)
        dropped.update(shared.dropped)
        kept = [r for r in kept if r.id not in shared.dropped]
        threshold_values = {
            "max_pages": thresholds.max_pages,
            "min_summary_words": thresholds.min_summary_words,
            "max_pages_percentile": self.settings.filters.max_pages_percentile,
            "min_abstract_percentile": self.settings.filters.min_abstract_percentile,
            "filters_enabled": self.settings.filters.enabled,
            "licences": list(self.settings.filters.licences),
            "min_documents": self.settings.filters.min_documents,
            "percentiles_applied": thresholds.percentiles_applied,
        }
        data_fingerprint = digest([
            sorted((r.id, r.work_key, splits[r.id]) for r in kept),
            threshold_values,
            str(self.schema),
            self.settings.raw.get("output", {}),
            loralay_build.__version__,
        ])
        rejects = sorted(
            [(r.candidate.id, r.reason or "", r.detail or "")
             for r in self.state.iter_rows(self.dataset, [REJECTED])]
            + [(cid, reason.value, detail) for cid, (reason, detail) in dropped.items()]
        )
        dedup = {
            "across": self.settings.dedup.across, "threshold": self.settings.dedup.threshold,
            "minhash": {"permutations": NUM_PERM, "shingle_words": SHINGLE, "bands": BANDS,
                        "rows": ROWS},
            "exclude": len(self.settings.dedup.exclude),
            "shared_works": [{"members": c.members, "similarity": c.similarity}
                             for c in shared.clusters],
        }
        # Reports change with every reject or shared work, shards only with the kept rows.
        fingerprint = digest([data_fingerprint, rejects, dedup])
        listed = None if clusters is None else [  # clusters of downloaded documents
            c for c in clusters if any(m not in waiting_ids for m in c.members)]
        if not kept and not (out_dir / BUILD_FILE).exists():
            # An empty folder would load as garbage (build.json read as data): none is written.
            log.info("%s: no document to publish; %s not written", self.dataset, out_dir)
        else:
            try:
                written = self._write(out_dir, kept, splits, rejects, threshold_values,
                                      (fingerprint, data_fingerprint), dedup, listed)
            except OSError as exc:
                raise PublishError(
                    f"{self.dataset}: cannot write {out_dir} ({exc.strerror or exc}); the "
                    "processed documents are kept: fix the folder and run the command again"
                ) from exc
            self.report.published = written
            self.report.published = True
        # Statuses follow the files: "published" is recorded once the shards are in place.
        with self.state.transaction():
            for row in kept:
                self.state.set_status(self.dataset, row.id, PUBLISHED,
                                      split=splits[row.id], reason=None, detail=None)
            for cid, (reason, detail) in dropped.items():
                log.info("filtered %s: %s (%s)", cid, reason.value, detail)
                self.state.set_status(self.dataset, cid, FILTERED, reason=reason.value,
                                      detail=detail)
            for cid, detail in held.items():
                self.state.set_status(self.dataset, cid, PROCESSED, reason=None, detail=detail)
            index_published(self.state, self.dataset, [r.id for r in kept if r.id in new])
        self.report.add("published_rows", len(kept))
        if not self.settings.store.keep_work:  # the shards in place hold these rows now
            for row in kept:
                self.work.discard(row.work_key or "")

    def _discard_downloads(self) -> None:
        """`[store] keep_downloads = false`: delete the PDFs of documents that are done with
        (their rows are in work files); `process` downloads one again if it needs it."""
        done = self.state.rows(self.dataset, [PUBLISHED, FILTERED, REJECTED])
        count = sum(self.blobs.discard_download(sha)
                    for sha in {r.blob_sha for r in done if r.blob_sha})
        self.report.add("downloads_discarded", count)

    def _clusters(self, stored: dict[str, str]) -> list[Cluster] | None:
        """Near-duplicate clusters among the documents, processed or waiting (corpus.dedup),
        a published member representing its work, for sources whose config sets
        `dedup_threshold`; the others keep the shared-PDF rule alone."""
        threshold = self.settings.source.dedup_threshold
        if threshold is None:
            return None
        return keep_published(find_clusters([
            DedupItem(r.candidate.id, r.candidate.title,
                      r.candidate.abstracts.get(r.candidate.language, ""), r.blob_sha or "",
                      split_key(r.candidate))
            for r in self.state.iter_rows(self.dataset, [PROCESSED, PUBLISHED, FILTERED,
                                                         DISCOVERED, RETRY, FETCHED])
        ], float(threshold)), stored)

    def _write(self, out_dir: Path, kept: list[PublishRow], splits: dict[str, str],
               rejects: list[tuple[str, str, str]], thresholds: dict[str, Any],
               fingerprints: tuple[str, str], dedup: dict[str, Any],
               clusters: list[Cluster] | None) -> bool:
        """Publish through the one publisher (corpus.publish): rows in id order per split,
        each keyed by its work file, so only shards whose documents changed are rewritten.
        Page images (`--page-images`) are written first, beside the set in use, and switched
        by the same card and build.json."""
        items = {split: [Item(r.id, r.work_key or "") for r in kept
                         if splits[r.id] == split] for split in SPLITS}
        previous_pages = published_build(out_dir).get("pages", {}).get("files", [])
        pages = self._pages(out_dir, kept, splits, fingerprints[0], previous_pages)

        def finish(files: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
            for split in ("validation", "test"):
                if kept and not any(f["split"] == split for f in files):
                    log.warning("%s: the %s split is empty (too few documents); it is left out",
                                self.dataset, split)
            build = self._build_record(kept, splits, rejects, thresholds, fingerprints, files)
            build["dedup"] = dedup
            if pages is not None:
                build["pages"] = pages
            if clusters is not None:
                build["duplicate_clusters"] = [
                    {"representative": c.representative, "members": list(c.members),
                     "split": splits.get(c.representative)}
                    for c in clusters
                ]
            return build, render_card(self.dataset, build)

        lines = "".join(
            json.dumps({"id": cid, "reason": reason, "detail": detail}, ensure_ascii=False)
            + "\n"
            for cid, reason, detail in rejects
        )
        published = PublishedRows(out_dir)
        page_files = [] if pages is None else pages["files"]
        try:
            written = publish(out_dir, fingerprints[0], items,
                              lambda group: (self._row(item.key, published) for item in group),
                              self.schema, self.settings.output, finish,
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
        return written

    def _row(self, key: str, published: PublishedRows) -> pa.Table:
        """A document's row: its work file, else (deleted once published) its published row."""
        if self.work.has(key) or key not in published:
            return self.work.read([key])
        return project(published.read(key), self.schema)

    def _pages(self, out_dir: Path, kept: list[PublishRow], splits: dict[str, str],
               fingerprint: str, previous: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The `pages` configuration's shards and settings (None without --page-images):
        shards whose pages are unchanged are kept, the rest written beside them."""
        images = self.settings.images
        if not images.enabled:
            return None
        by_split = {s: [(r.id, r.stats.get("images", [])) for r in kept
                        if splits[r.id] == s] for s in SPLITS}
        files = write_pages(out_dir, fingerprint, by_split, previous, self.blobs, images,
                            self.settings.output)
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

    def _build_record(self, kept: list[PublishRow], splits: dict[str, str],
                      rejects: list[tuple[str, str, str]], thresholds: dict[str, Any],
                      fingerprints: tuple[str, str],
                      files: list[dict[str, Any]]) -> dict[str, Any]:
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
            "dataset": self.dataset,
            "source": self.req.source,
            "fingerprint": fingerprints[0],
            COLUMNS_KEY: self.schema.names,
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
                "removed": self.state.status_counts(self.dataset).get(REMOVED, 0),
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
